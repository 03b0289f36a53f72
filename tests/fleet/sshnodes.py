"""Test nodes that are real sshd logins on 127.0.0.1: each node has its own sshd (host key,
config, authorized_keys in a temporary directory), and its login environment is a fixture host's
(PATH with the recorded npu-smi first, the ASCEND_* variables, a HOME of its own) through the
``environment=`` option of authorized_keys (sshd(8), AUTHORIZED_KEYS FILE FORMAT), which
``PermitUserEnvironment yes`` allows. Nothing under /etc/ssh or the real ~/.ssh is read or written:
sshd runs with ``-f`` and the client with ``-F``."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"
SSH_KEYGEN = shutil.which("ssh-keygen") or "/usr/bin/ssh-keygen"


def sshd_available() -> Optional[str]:
    """Why the nodes cannot run here (None when they can)."""
    if not os.path.exists(SSHD):
        return "openssh-server is not installed (no sshd)"
    if os.geteuid() != 0:
        return "the test nodes' sshd logs in as root: run the tests as root"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Node:
    name: str
    port: int
    home: Path  # the node's $HOME (where Ansible's ~ goes)
    tmp: Path  # the node's $TMPDIR
    root: Path  # the --root tree the snapshot reads
    environ: dict
    process: Optional[subprocess.Popen] = None
    extra: dict = field(default_factory=dict)


def _quote_env(name: str, value: str) -> str:
    assert '"' not in value and "\n" not in value
    return f'environment="{name}={value}"'


def client_key(base: Path) -> Path:
    key = base / "id_ed25519"
    if not key.exists():
        subprocess.run([SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    return key


def start_node(base: Path, name: str, root: Path, environ: dict, key: Path) -> Node:
    """An sshd on a free loopback port whose logins get ``environ`` (plus HOME and TMPDIR of their own)."""
    d = base / name
    (d / "home").mkdir(parents=True, exist_ok=True)
    (d / "tmp").mkdir(exist_ok=True)
    host_key = d / "host_ed25519"
    subprocess.run([SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-f", str(host_key)], check=True)
    env = {**environ, "HOME": str(d / "home"), "TMPDIR": str(d / "tmp")}
    options = ",".join(_quote_env(k, v) for k, v in env.items())
    (d / "authorized_keys").write_text(f"{options} {Path(str(key) + '.pub').read_text()}")
    port = free_port()
    (d / "sshd_config").write_text(
        "\n".join(
            [
                f"Port {port}",
                "ListenAddress 127.0.0.1",
                f"HostKey {host_key}",
                f"AuthorizedKeysFile {d / 'authorized_keys'}",
                f"PidFile {d / 'sshd.pid'}",
                "PermitRootLogin prohibit-password",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "UsePAM no",
                "StrictModes no",  # the files live under /tmp, which is world-writable
                "PermitUserEnvironment yes",
                "Subsystem sftp internal-sftp",
                "MaxStartups 100",
                "MaxSessions 100",
                "LogLevel ERROR",
                "",
            ]
        )
    )
    os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation directory
    with open(d / "sshd.log", "w") as log:  # the daemon keeps its own copy of the descriptor
        process = subprocess.Popen(
            [SSHD, "-D", "-e", "-f", str(d / "sshd_config")], stdout=log, stderr=log, start_new_session=True
        )
    end = time.monotonic() + 10
    while time.monotonic() < end:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        if process.poll() is not None:
            raise RuntimeError(f"sshd of {name} exited: {(d / 'sshd.log').read_text()}")
        time.sleep(0.05)
    return Node(name, port, d / "home", d / "tmp", root, env, process)


def stop_node(node: Node) -> None:
    if node.process is None:
        return
    try:
        os.killpg(node.process.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    node.process.wait(10)
    node.process = None


def ssh_config(base: Path, key: Path) -> Path:
    """A client config of the tests' own: no ~/.ssh/config, no known_hosts of the user's."""
    path = base / "ssh_config"
    path.write_text(
        "\n".join(
            [
                "Host *",
                f"  IdentityFile {key}",
                "  IdentitiesOnly yes",
                f"  UserKnownHostsFile {base / 'known_hosts'}",
                "  StrictHostKeyChecking no",
                "  LogLevel ERROR",
                "  BatchMode yes",
                "  ConnectTimeout 5",
                "",
            ]
        )
    )
    return path


def fixture_nodes(base: Path, count: int, key: Path, host: str = "a2-cann800") -> dict:
    """``count`` nodes n0, n1, ... each with a root of its own, a copy of the fixture ``host``
    (tests/fixture_hosts.py), for the benchmarks."""
    from tests.fixture_hosts import build_host

    nodes = {}
    try:
        for i in range(count):
            built = build_host(host, base / "hosts" / f"n{i}")
            nodes[f"n{i}"] = start_node(base, f"n{i}", built.root, dict(built.environ), key)
    except BaseException:
        for node in nodes.values():
            stop_node(node)
        raise
    return nodes
