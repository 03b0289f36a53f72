"""`ascenv fleet audit` over an inventory written to hurt (the December adversarial test, F1-F5):
hostile host names, remote tmps that are shared or hold shell, a node that hangs, one that answers
deeply nested JSON. One audit over the fleet's sshd nodes (tests/fleet/conftest.py), several
inventory hosts per node; every test below reads that one run."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

import psutil
import pytest

from ascenv import errors
from ascenv.fleet import playbook
from ascenv.fleet.results import host_key
from tests.cli_helpers import run_cli

pytestmark = pytest.mark.slow

RUN = "feedfacecafe"  # the run id of the audit below, so a directory of that name can be there before
OK_HOSTS = ["good1", "rack1/node2", "../../../escaped_host", "a/b"]


def tree_hash(top: Path) -> str:
    """Names, types, modes and contents below ``top`` (symlinks not followed)."""
    digest = hashlib.sha256()
    for directory, dirs, files in sorted(os.walk(top)):
        dirs.sort()
        for name in sorted(dirs + files):
            path = Path(directory) / name
            info = path.lstat()
            digest.update(f"{path.relative_to(top)}\0{info.st_mode:o}\0".encode())
            if path.is_file() and not path.is_symlink():
                digest.update(path.read_bytes())
    return digest.hexdigest()


def _script(path: Path, body: str) -> str:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"


@pytest.fixture(scope="module")
def hostile(fleet, tmp_path_factory):
    t = tmp_path_factory.mktemp("hostile")
    nodes = [fleet.nodes[n] for n in ("a2-1", "a2-2", "a2-3", "a2-4")]
    shared = t / "shared_tmp"  # F1: a /tmp-like directory holding other users' files
    (shared / "other_users_job").mkdir(parents=True)
    (shared / "other_users_job" / "data.bin").write_bytes(os.urandom(4096))
    (shared / "keep.txt").write_text("precious\n")
    (shared / "ascenv-left-by-someone").mkdir()  # named like ours, not ours
    empty = t / "empty_tmp"  # there before, empty: not ours either, so never removed
    empty.mkdir()
    adopt = t / "adopt_tmp"  # this run's very directory names, made before it: never adopted
    for i in range(20):
        (adopt / f"ascenv-{RUN}-{i}").mkdir(parents=True)
        (adopt / f"ascenv-{RUN}-{i}" / "canary").write_text(str(i))
    home = nodes[2].home  # remote tmp = the node user's $HOME itself
    (home / "notes.txt").write_text("the user's own\n")
    inj = t / "INJ"
    deep = t / "deep.json"
    deep.write_text('{"ascenv_node":1,"snapshot":' + "[" * 100_000 + "]" * 100_000 + "}\n")
    hang = _script(t / "hang.sh", f"echo $$ > {t}/hang.pid\nexec sleep 300\n")
    # ignores SIGTERM (a background child inherits that): only timeout's -k SIGKILL ends both
    stubborn = _script(t / "stubborn.sh", f"trap '' TERM\nsleep 300 &\necho $$ $! > {t}/stubborn.pid\nwait\nwait\n")
    answer_deep = _script(t / "deep.sh", f"cat {deep}\n")
    hosts = {
        "good1": (nodes[0], {"ascenv_remote_tmp": str(empty)}),
        "rack1/node2": (nodes[1], {"ascenv_remote_tmp": str(shared)}),
        "../../../escaped_host": (nodes[2], {"ascenv_remote_tmp": "~"}),
        "a/b": (nodes[3], {}),
        "-rf": (nodes[0], {"ascenv_remote_tmp": f"{t}/rt;touch {inj}1"}),
        "n$(touch INJ2)": (nodes[1], {"ascenv_remote_tmp": f"{t}/rt$(touch {inj}3)"}),
        "nœud-ü": (nodes[2], {"ascenv_remote_tmp": f"{t}/it's a dir"}),
        "a?b": (nodes[3], {"ascenv_remote_tmp": f"{t}/rt\ntouch {inj}4"}),
        "adopt": (nodes[0], {"ascenv_remote_tmp": str(adopt)}),
        "hang": (nodes[1], {"ascenv_python": hang, "ascenv_node_timeout": 2}),
        "stubborn": (nodes[2], {"ascenv_python": stubborn, "ascenv_node_timeout": 2}),
        # a remote tmp this run makes (two hosts on one node share no default one: see the last test)
        "deep": (nodes[3], {"ascenv_python": answer_deep, "ascenv_remote_tmp": f"{t}/made/by/the_run"}),
        "py-inject": (nodes[0], {"ascenv_python": f"python3;touch {inj}5"}),
        "root-inject": (nodes[1], {"ascenv_root": f"$(touch {inj}6)", "ascenv_remote_tmp": f"{t}/ri_tmp"}),
    }
    inventory = {
        "all": {
            "vars": {
                "ansible_host": "127.0.0.1",
                "ansible_user": "root",
                "ansible_ssh_private_key_file": str(fleet.base / "id_ed25519"),
                "ansible_ssh_common_args": f"-F {fleet.base / 'ssh_config'}",
            },
            "hosts": {
                name: {"ansible_port": node.port, "ascenv_root": str(node.root), **extra}
                for name, (node, extra) in hosts.items()
            },
        }
    }
    path = t / "hostile.yml"
    path.write_text(json.dumps(inventory))  # JSON is YAML
    before = {"shared": tree_hash(shared), "adopt": tree_hash(adopt), "home": tree_hash(home)}
    out = t / "out" / "results in {{ 7 * 7 }}"  # -o is data too: a space, a template
    out.parent.mkdir()
    fake_uuid = types.SimpleNamespace(uuid4=lambda: types.SimpleNamespace(hex=RUN + "0" * 20))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(playbook, "uuid", fake_uuid)
        code, stdout, stderr = run_cli(
            ["fleet", "audit", "-i", str(path), "-o", str(out), "--format", "json", "--forks", "16"],
            fleet.controller_env,
        )
    assert stdout.strip(), stderr
    nodes_doc = {n["host"]: n for n in json.loads(stdout)["nodes"]}
    return types.SimpleNamespace(
        t=t, code=code, nodes=nodes_doc, stderr=stderr, out=out, hosts=hosts, before=before, shared=shared,
        empty=empty, adopt=adopt, home=home, inj=inj,
    )  # fmt: skip


def test_every_host_gets_a_verdict_under_its_own_name_and_the_audit_exits_11(hostile):
    assert hostile.code == errors.EXIT_NODES_FAILED, hostile.stderr
    assert sorted(hostile.nodes) == sorted(hostile.hosts)
    assert {h: hostile.nodes[h]["status"] for h in OK_HOSTS} == dict.fromkeys(OK_HOSTS, "ok"), hostile.nodes
    failed = sorted(h for h, n in hostile.nodes.items() if n["status"] == "failed")
    assert failed == sorted(set(hostile.hosts) - set(OK_HOSTS)), hostile.nodes


def test_results_stay_inside_o_one_folder_per_host(hostile):
    """F2: `rack1/node2` was left unread and `../../../escaped_host` written outside -o."""
    folders = sorted(p.name for p in hostile.out.iterdir() if p.is_dir())
    assert folders == sorted(host_key(h) for h in hostile.hosts)
    assert sorted(p.name for p in hostile.out.parent.iterdir()) == ["results in {{ 7 * 7 }}"]
    # -o is t/out/results…: ../../../escaped_host was t/../escaped_host
    assert not (hostile.t.parent / "escaped_host").exists() and not (hostile.t / "escaped_host").exists()
    for host in OK_HOSTS:
        snapshot = json.loads((hostile.out / host_key(host) / "snapshot.json").read_text())
        assert snapshot["root"].endswith("root")
        assert json.loads((hostile.out / host_key(host) / "result.json").read_text())["host"] == host


def test_a_shared_remote_tmp_keeps_every_file_of_others(hostile):
    """F1: ascenv_remote_tmp set to a /tmp-like directory was removed whole on every node."""
    assert tree_hash(hostile.shared) == hostile.before["shared"]
    assert (hostile.shared / "keep.txt").read_text() == "precious\n"


def test_a_remote_tmp_that_is_the_users_home_keeps_the_home(hostile):
    assert tree_hash(hostile.home) == hostile.before["home"]
    assert (hostile.home / "notes.txt").read_text() == "the user's own\n"


def test_a_remote_tmp_that_was_there_empty_is_left_there(hostile):
    assert hostile.empty.is_dir() and list(hostile.empty.iterdir()) == []


def test_a_run_directory_that_exists_already_is_never_adopted_nor_removed(hostile):
    assert tree_hash(hostile.adopt) == hostile.before["adopt"]
    message = hostile.nodes["adopt"]["message"]
    assert "no directory of its own" in message and f"ascenv-{RUN}-" in message and "File exists" in message


@pytest.mark.parametrize("host", ["-rf", "n$(touch INJ2)", "nœud-ü", "a?b"])
def test_a_remote_tmp_that_needs_quoting_is_refused_and_runs_nothing(hostile, host):
    """F1: `ascenv_remote_tmp="…;touch …"` ran the touch on the node (and Ansible's mkdir evaluates
    it too); spaces, quotes and newlines Ansible's own commands would split."""
    assert "ascenv_remote_tmp" in hostile.nodes[host]["message"], hostile.nodes[host]
    assert sorted(p.name for p in hostile.t.iterdir() if p.name.startswith(("INJ", "rt", "it"))) == []
    assert not (hostile.t / "out" / "INJ2").exists() and not Path("INJ2").exists()


@pytest.mark.parametrize("host", ["py-inject", "root-inject"])
def test_other_inventory_values_reach_the_shell_quoted(hostile, host):
    """The whole value is one word: a program named `python3;touch …`, a root named `$(touch …)`."""
    assert hostile.nodes[host]["status"] == "failed"
    assert (
        f"{hostile.inj}5'" in hostile.nodes[host]["message"]
        or f"$(touch {hostile.inj}6)" in hostile.nodes[host]["message"]
    )
    assert sorted(p.name for p in hostile.t.iterdir() if p.name.startswith("INJ")) == []


@pytest.mark.parametrize("host", ["hang", "stubborn"])
def test_a_node_past_its_timeout_leaves_nothing_running_there(hostile, host):
    """F5: 25 hung steps stayed on the nodes after a 50-node audit."""
    assert "timed out after 2 s" in hostile.nodes[host]["message"], hostile.nodes[host]
    pids = [int(p) for p in (hostile.t / f"{host}.pid").read_text().split()]
    assert [pid for pid in pids if _alive(pid)] == []


def test_a_node_answering_deeply_nested_json_fails_alone(hostile):
    """F3: one such node made the whole audit exit 3 with no verdict for any node."""
    assert hostile.nodes["deep"]["message"] == "unreadable result: JSON nested too deep"


def test_no_run_directory_is_left_on_any_node(fleet, hostile):
    """The run's directory is removed, and the remote tmp too when this run made it (and it is
    empty: rmdir). Two hosts of one node that both make the same remote tmp at once may leave it,
    empty: each removes only what it made."""
    for name in ("a2-1", "a2-2", "a2-3", "a2-4"):
        node = fleet.nodes[name]
        assert not (node.home / ".ascenv-fleet-tmp").exists(), name
    assert not (hostile.t / "ri_tmp").exists()
    assert sorted(p.name for p in (hostile.t / "made").rglob("*")) == ["by"]  # mkdir -p's parents stay
    left = [p for top in (hostile.shared, hostile.empty, hostile.home) for p in top.glob(f"ascenv-{RUN}*")]
    assert left == []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["TERM", "HUP"])
def test_a_termination_signal_during_an_audit_ends_ansible_playbook_and_removes_the_bundle(fleet, tmp_path, signum):
    """F4: `kill -TERM` (2 hung nodes) gave exit 143; three ansible-playbook processes ran on until
    the node timeout and /tmp/ascenv-fleet-XXXX/ascenv-node.pyz stayed. SIGHUP (a closed terminal)
    is the same."""
    node = fleet.nodes["a2-1"]
    pids = tmp_path / "hang.pids"
    hang = _script(tmp_path / "hang.sh", f"echo $$ >> {pids}\nexec sleep 300\n")
    common = (
        f"ansible_host=127.0.0.1 ansible_port={node.port} ascenv_python={hang} ascenv_node_timeout=120"
        f" ascenv_remote_tmp={tmp_path}/rt ansible_user=root ansible_ssh_private_key_file={fleet.base / 'id_ed25519'}"
        f" ansible_ssh_common_args='-F {fleet.base / 'ssh_config'}'"
    )
    inventory = tmp_path / "hang.ini"
    inventory.write_text(f"hung1 {common}\nhung2 {common}\n")
    tmpdir = tmp_path / "tmp dir"  # the controller's TMPDIR: where the bundle is built (a space: data)
    tmpdir.mkdir()
    env = {**fleet.controller_env, "TMPDIR": str(tmpdir), "PYTHONPATH": str(Path(__file__).parents[2])}
    argv = [sys.executable, "-m", "ascenv", "fleet", "audit", "-i", str(inventory), "-o", str(tmp_path / "out")]
    child = subprocess.Popen(argv, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while child.poll() is None and time.monotonic() < deadline:
            if pids.exists() and len(pids.read_text().split()) == 2:
                break
            time.sleep(0.1)
        assert pids.exists(), child.communicate(timeout=5) if child.poll() is not None else "the step never ran"
        started = _started_by(tmpdir)  # ansible-playbook, its workers (sessions of their own), their ssh
        assert any("ansible-playbook" in " ".join(p.info["cmdline"][:2]) for p in started), started
        assert list(tmpdir.glob("ascenv-fleet-*"))
        child.send_signal(signum)
        _, stderr = child.communicate(timeout=60)
        assert child.returncode == errors.EXIT_INTERRUPTED, stderr
        assert b"interrupted" in stderr and b"Traceback" not in stderr
        psutil.wait_procs(started, timeout=10)
        assert _started_by(tmpdir) == []
        assert list(tmpdir.iterdir()) == []
    finally:
        if child.poll() is None:
            child.kill()
        for pid in pids.read_text().split() if pids.exists() else ():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)  # the node's side: ended by its own timeout (120 s) else


def _started_by(tmpdir: Path) -> list[psutil.Process]:
    """The processes of the audit run with ``TMPDIR=tmpdir`` (they all inherit its environment)."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        try:
            environ = process.environ()
        except (psutil.Error, OSError):
            continue
        if environ.get("TMPDIR") == str(tmpdir) and playbook.RUN_MARK in environ:
            found.append(process)
    return found


def test_two_audits_at_once_on_the_same_nodes_each_keep_their_own_directory(fleet, tmp_path):
    """Each run makes ascenv-<run>-<n> of its own and removes only that: neither run removes the
    other's files in the shared remote tmp, and both get every verdict."""
    env = {**fleet.controller_env, "PYTHONPATH": str(Path(__file__).parents[2])}
    children = [
        subprocess.Popen(
            [sys.executable, "-m", "ascenv", "fleet", "audit", "-i", str(fleet.inventory), "--limit", "a2-1,a2-2"]
            + ["-o", str(tmp_path / f"out{i}"), "--format", "json"],
            env=env,
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for i in range(2)
    ]
    for child in children:
        stdout, stderr = child.communicate(timeout=600)
        assert child.returncode == 0, stderr
        assert {n["status"] for n in json.loads(stdout)["nodes"]} == {"ok"}
    for name in ("a2-1", "a2-2"):
        tmp = fleet.nodes[name].home / ".ascenv-fleet-tmp"
        # removed by the run that made it, unless the other one's directory was in it then: empty
        assert not tmp.exists() or list(tmp.iterdir()) == [], name
