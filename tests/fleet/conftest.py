"""One set of sshd nodes for the whole fleet suite (started once: each node costs an sshd and a
fixture host), and the controller-side environment that points Ansible into tmp paths."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fixture_hosts import build_host
from tests.fleet.sshnodes import Node, client_key, free_port, ssh_config, sshd_available, start_node, stop_node

PY37 = Path("/root/.pyenv/versions/3.7.16/bin/python3.7")
# the tools Ansible's shell commands and the node step use, for a node whose PATH has nothing else
_TOOLS = ("sh", "mkdir", "rmdir", "rm", "chmod", "cat", "echo", "ls", "mv", "sleep", "uname", "env", "timeout")


@dataclass
class Fleet:
    base: Path
    nodes: dict  # host -> Node (the unreachable one has no sshd)
    controller_env: dict
    inventory: Path


def _inventory(path: Path, nodes: dict, key: Path, config: Path, names: list[str]) -> Path:
    lines = ["[ascend]"]
    for name in names:
        n = nodes[name]
        lines.append(
            f"{name} ansible_host=127.0.0.1 ansible_port={n.port} ascenv_root={n.root}"
            f" ascenv_remote_tmp={n.home}/.ascenv-fleet-tmp"
        )
    lines += [
        "",
        "[ascend:vars]",
        "ansible_user=root",
        f"ansible_ssh_private_key_file={key}",
        f"ansible_ssh_common_args='-F {config}'",
        "",
    ]
    path.write_text("\n".join(lines))
    return path


def _controller_env(base: Path) -> dict:
    home = base / "ah"
    home.mkdir(exist_ok=True)
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "ANSIBLE_HOME": str(home),
        "ANSIBLE_LOCAL_TEMP": str(home / "tmp"),
        "ANSIBLE_REMOTE_TEMP": "~/.ascenv-fleet-tmp",
        "ANSIBLE_CONFIG": str(base / "ansible.cfg"),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_HOST_KEY_CHECKING": "false",
        "ANSIBLE_SSH_ARGS": "-o ControlMaster=auto -o ControlPersist=3s",
        "ANSIBLE_SSH_CONTROL_PATH_DIR": str(home / "cp"),
        "ANSIBLE_TIMEOUT": "5",
    }
    (base / "ansible.cfg").write_text("[defaults]\ninterpreter_python = auto_silent\n")
    return env


def make_node_tree(base: Path, name: str, host: str) -> tuple[Path, dict]:
    built = build_host(host, base / "hosts" / name)
    return built.root, dict(built.environ)


def need_sshd() -> None:
    """Skip where the nodes cannot run (fail in CI, where they must)."""
    why = sshd_available()
    if why:
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)


@pytest.fixture(scope="session")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    need_sshd()
    base = tmp_path_factory.mktemp("fleet")
    key = client_key(base)
    config = ssh_config(base, key)
    nodes: dict = {}
    try:
        for i in range(1, 5):
            root, env = make_node_tree(base, f"a2-{i}", "a2-cann800")
            nodes[f"a2-{i}"] = start_node(base, f"a2-{i}", root, env, key)
        root, env = make_node_tree(base, "a2-oldcann", "two-canns-dangling-latest")
        nodes["a2-oldcann"] = start_node(base, "a2-oldcann", root, env, key)
        down = base / "down"
        (down / "home").mkdir(parents=True)
        (down / "tmp").mkdir()
        nodes["down"] = Node("down", free_port(), down / "home", down / "tmp", down, {})  # nothing listens
        if PY37.exists():
            root, env = make_node_tree(base, "py37", "a2-cann800")
            only = base / "py37-bin"
            only.mkdir()
            for tool in _TOOLS:
                found = shutil.which(tool)
                if found:
                    (only / tool).symlink_to(found)
            (only / "python3").symlink_to(PY37)
            (only / "python3.7").symlink_to(PY37)
            env["PATH"] = f"{base / 'hosts' / 'py37' / 'a2-cann800' / 'bin'}:{only}"
            nodes["py37"] = start_node(base, "py37", root, env, key)
        names = ["a2-1", "a2-2", "a2-3", "a2-4", "a2-oldcann", "down"]
        env = _controller_env(base)
        inventory = _inventory(base / "hosts.ini", nodes, key, config, names)
        if "py37" in nodes:
            _inventory(base / "py37.ini", nodes, key, config, ["a2-1", "py37"])
        yield Fleet(base, nodes, env, inventory)
    finally:
        for node in nodes.values():
            stop_node(node)
