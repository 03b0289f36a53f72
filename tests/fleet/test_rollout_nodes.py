"""`ascenv fleet rollout` over real sshd nodes on loopback (tests/fleet/sshnodes.py): every node
has a root of its own (a fixture host's CANN 8.0 A2 tree) holding its own install path, where
the previous build of add_custom is installed before each test. Packages are made by Debian's
makeself in the msopgen layout (tests/package/pkgbuild.py); the builds are in a store on the
controller. s3 has a second vendor, ``other``, first in its ASCEND_CUSTOM_OPP_PATH, providing
AddCustom too: op check's gate fails there. ``down`` has no sshd. Run one test at a time."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from ascenv import errors, store
from tests.cli_helpers import run_cli
from tests.fixture_hosts import running
from tests.fleet.conftest import _controller_env, make_node_tree, need_sshd
from tests.fleet.sshnodes import Node, client_key, free_port, ssh_config, start_node, stop_node
from tests.package.pkgbuild import INSTALL_SH, needs_makeself, stored_npu_build, vendor_tree
from tests.package.test_deploy import REPO, tree

pytestmark = [pytest.mark.slow, needs_makeself]

OLD, NEW, SLOW = "a" * 64, "b" * 64, "c" * 64
OPP = "/opt/opp"  # the install path inside each node's root
CLEAN = ["n1", "n2", "n3", "n4"]


@dataclass
class Rig:
    base: Path
    ctl: Path  # the controller's working folder (its store in .ascenv/store)
    env: dict
    nodes: dict
    key: Path
    config: Path
    entries: dict  # key -> store.Entry


def _install_path(node: Node) -> str:
    return node.extra.get("install_path", OPP)


def _real(node: Node) -> Path:
    return node.root / _install_path(node).lstrip("/")


def _stored(rig_base: Path, st: store.Store, key: str, install_sh: str = INSTALL_SH, **vendor: object) -> store.Entry:
    return stored_npu_build(st, key, rig_base / f"pkg-{key[0]}", install_sh, arch="x86_64", **vendor)


@pytest.fixture(scope="module")
def rig(tmp_path_factory):
    need_sshd()
    base = tmp_path_factory.mktemp("rollout")
    key = client_key(base)
    config = ssh_config(base, key)
    ctl = base / "ctl"
    ctl.mkdir()
    st = store.Store(ctl / ".ascenv" / "store")
    entries = {
        OLD: _stored(base, st, OLD, kernel=b"kernel-v1"),
        NEW: _stored(base, st, NEW, kernel=b"kernel-v2", op_types=("AddCustom", "SubCustom")),
        # an install that takes a while: the controller is killed while it runs
        SLOW: _stored(base, st, SLOW, install_sh="#!/bin/sh\nsleep 4\n" + INSTALL_SH.split("\n", 1)[1], kernel=b"v3"),
    }
    nodes: dict = {}
    try:
        for name in [*CLEAN, "s3"]:
            root, env = make_node_tree(base, name, "a2-cann800")
            install_path = "/srv/opp-4" if name == "n4" else OPP  # n4's comes from its host variable
            env["ASCEND_CUSTOM_OPP_PATH"] = f"{install_path}/vendors/customize"
            if name == "s3":
                vendor_tree(root / "opt/shadow/vendors/other", name="other", arch="x86_64")
                env["ASCEND_CUSTOM_OPP_PATH"] = "/opt/shadow/vendors/other:" + env["ASCEND_CUSTOM_OPP_PATH"]
            nodes[name] = start_node(base, name, root, env, key)
            nodes[name].extra["install_path"] = install_path
        down = base / "down"
        (down / "home").mkdir(parents=True)
        (down / "tmp").mkdir()
        nodes["down"] = Node("down", free_port(), down / "home", down / "tmp", down, {})
        env = _controller_env(base)
        env["PYTHONPATH"] = str(REPO)  # the controller subprocess of the kill test imports this checkout
        yield Rig(base, ctl, env, nodes, key, config, entries)
    finally:
        for node in nodes.values():
            stop_node(node)


def _inventory(rig: Rig, names: list[str]) -> Path:
    lines = ["[ascend]"]
    for name in names:
        n = rig.nodes[name]
        line = f"{name} ansible_host=127.0.0.1 ansible_port={n.port} ascenv_root={n.root}"
        line += f" ascenv_remote_tmp={n.home}/.ascenv-fleet-tmp"
        if name == "n4":
            line += " ascenv_install_path=/srv/opp-4"
        lines.append(line)
    lines += ["", "[ascend:vars]", "ansible_user=root", f"ansible_ssh_private_key_file={rig.key}"]
    lines += [f"ansible_ssh_common_args='-F {rig.config}'", ""]
    path = rig.base / f"{'-'.join(names)}.ini"
    path.write_text("\n".join(lines))
    return path


def _digest(path: Path) -> str:
    """sha256 over every entry below ``path`` (bytes, modes, links, directories)."""
    return hashlib.sha256(repr(sorted(tree(path).items())).encode()).hexdigest() if path.exists() else "absent"


@pytest.fixture
def prepared(rig):
    """Each node's install path holds the OLD build only, installed by `ascenv install`; the
    controller's journals and results of earlier tests are gone. The live vendor's digest per node."""
    shutil.rmtree(rig.ctl / "ascenv-fleet-rollout", ignore_errors=True)
    before = {}
    for name, node in rig.nodes.items():
        if name == "down":
            continue
        shutil.rmtree(_real(node), ignore_errors=True)
        code, _, err = run_cli(
            ["install", "add_custom", "--key", OLD, "--install-path", str(_real(node))], rig.env, cwd=rig.ctl
        )
        assert code == 0, err
        shutil.rmtree(_real(node) / ".ascenv-previous")  # nothing kept yet: as on a node before its first rollout
        before[name] = _digest(_real(node) / "vendors" / "customize")
    return before


def _rollout(rig: Rig, names: list[str], *argv: str) -> tuple[int, dict, str]:
    inventory = _inventory(rig, names)
    code, stdout, stderr = run_cli(
        ["fleet", "rollout", "add_custom", "-i", str(inventory), "--install-path", OPP, *argv, "--format", "json"],
        rig.env,
        cwd=rig.ctl,
    )
    assert stdout.strip(), stderr
    return code, json.loads(stdout), stderr


def _states(doc: dict) -> dict:
    return {n["host"]: (n["state"], (n["build"] or "")[:1]) for n in doc["nodes"]}


def _live_key(node: Node) -> str:
    text = (_real(node) / "vendors" / "customize" / "ascenv-manifest.toml").read_text()
    return next(line.split('"')[1] for line in text.splitlines() if line.startswith("key = "))


def _left_on(node: Node) -> list[str]:
    """What a rollout left on the node: anything in its HOME and TMPDIR, and in its install path
    anything but the live vendor and its .ascenv-previous (with the install lock)."""
    left = [str(p) for d in (node.home, node.tmp) for p in d.rglob("*")]
    real = _real(node)
    allowed = {"vendors", "vendors/customize", ".ascenv-previous", ".ascenv-previous/.lock"}
    allowed |= {".ascenv-previous/customize"}
    for p in real.rglob("*"):
        rel = str(p.relative_to(real))
        if rel not in allowed and not rel.startswith(("vendors/customize/", ".ascenv-previous/customize/")):
            left.append(rel)
    return left


def test_a_good_build_reaches_every_node_wave_by_wave(rig, prepared):
    code, doc, stderr = _rollout(rig, CLEAN, "--build", NEW, "--canary", "1", "--waves", "50%,100%")
    assert code == 0, stderr
    assert doc["phase"] == "done" and doc["waves"] == [["n1"], ["n2"], ["n3", "n4"]]
    assert _states(doc) == dict.fromkeys(CLEAN, ("verified", "b"))
    # wave by wave: each wave started after the one before it reported
    order = [stderr.index(f"wave {i}/3") for i in (1, 2, 3)]
    assert order == sorted(order) and stderr.index("n1: done") < order[1] < stderr.index("n2: done") < order[2]
    for name in CLEAN:
        node = rig.nodes[name]
        assert _live_key(node) == NEW
        assert _digest(_real(node) / ".ascenv-previous" / "customize") == prepared[name]  # the previous, kept
        assert _left_on(node) == [], name
        gates = {g["name"]: g for g in next(n for n in doc["nodes"] if n["host"] == name)["gates"]}
        assert gates["op-check"]["status"] == "pass"
        # the nodes' python3 has no numpy: the gate says so (exit 4 of ascenv test), never a pass
        assert gates["test"]["status"] == "not-checkable" and "needs numpy" in gates["test"]["detail"]
    assert (rig.ctl / "ascenv-fleet-rollout" / f"add_custom-{NEW[:12]}.json").is_file()
    # the same command again: nothing to do, nothing installed again (the previous vendor stays OLD's)
    code, again, stderr = _rollout(rig, CLEAN, "--build", NEW, "--canary", "1", "--waves", "50%,100%")
    assert code == 0 and again["phase"] == "done" and "wave 1/3" not in stderr, stderr
    assert _digest(_real(rig.nodes["n1"]) / ".ascenv-previous" / "customize") == prepared["n1"]


def test_a_gate_failing_on_the_second_wave_rolls_back_every_node_that_got_it(rig, prepared):
    names = ["n1", "n2", "s3", "n4"]
    code, doc, stderr = _rollout(rig, names, "--build", NEW, "--canary", "1", "--waves", "75%,100%")
    assert code == errors.EXIT_FINDINGS, stderr
    assert doc["waves"] == [["n1"], ["n2", "s3"], ["n4"]] and doc["phase"] == "rolled-back"
    states = _states(doc)
    assert states == {
        "n1": ("rolled-back", ""),
        "n2": ("rolled-back", ""),
        "s3": ("rolled-back", ""),
        "n4": ("pending", ""),
    }
    s3 = next(n for n in doc["nodes"] if n["host"] == "s3")
    assert "AddCustom resolves to vendor other (/opt/shadow/vendors/other)" in s3["message"]
    for name in names:  # the previous vendor, byte for byte, on every node that got the build; n4 never did
        node = rig.nodes[name]
        assert _digest(_real(node) / "vendors" / "customize") == prepared[name], name
        assert _live_key(node) == OLD and _left_on(node) == [], name
    assert not (_real(rig.nodes["n4"]) / ".ascenv-previous").exists()
    # --status shows the journal, changes nothing
    code, status, _ = _rollout(rig, names, "--build", NEW, "--status")
    assert code == errors.EXIT_FINDINGS and status["nodes"] == doc["nodes"]


def test_no_rollback_holds_the_failed_wave_for_inspection(rig, prepared):
    code, doc, stderr = _rollout(rig, ["n1", "s3"], "--build", NEW, "--canary", "1", "--no-rollback")
    assert code == errors.EXIT_FINDINGS and doc["phase"] == "held", stderr
    assert _states(doc) == {"n1": ("verified", "b"), "s3": ("failed", "b")}
    assert _live_key(rig.nodes["s3"]) == NEW and _live_key(rig.nodes["n1"]) == NEW


def test_a_required_test_gate_the_nodes_cannot_run_fails_the_canary_and_rolls_it_back(rig, prepared):
    code, doc, stderr = _rollout(rig, ["n1", "n2"], "--build", NEW, "--gate", "test")
    assert code == errors.EXIT_FINDINGS, stderr
    assert _states(doc) == {"n1": ("rolled-back", ""), "n2": ("pending", "")}
    assert "required by --gate test, not checkable" in doc["nodes"][0]["message"]
    assert _digest(_real(rig.nodes["n1"]) / "vendors" / "customize") == prepared["n1"]


def test_an_unreachable_node_stops_the_wave_and_leaves_the_others_consistent(rig, prepared):
    names = ["n1", "down", "n2", "n3"]
    code, doc, stderr = _rollout(rig, names, "--build", NEW, "--canary", "1", "--waves", "75%,100%")
    assert code == errors.EXIT_NODES_FAILED, stderr
    assert doc["phase"] == "stopped" and doc["waves"] == [["n1"], ["down", "n2"], ["n3"]]
    assert _states(doc) == {
        "n1": ("verified", "b"),
        "down": ("unreachable", ""),
        "n2": ("verified", "b"),
        "n3": ("pending", ""),
    }
    assert "down" in stderr and "rerun the same command" in stderr
    assert _live_key(rig.nodes["n2"]) == NEW and _live_key(rig.nodes["n3"]) == OLD
    # a rerun retries the unreached node only, and stops there again
    code, again, stderr = _rollout(rig, names, "--build", NEW, "--canary", "1", "--waves", "75%,100%")
    assert code == errors.EXIT_NODES_FAILED and "wave 2/3: down\n" in stderr and "wave 3/3" not in stderr, stderr
    assert _states(again) == _states(doc)
    # fleet audit names the build each node's vendor is at; the node left at the old build is drift
    out = rig.base / "audit-after-stop"
    code, stdout, stderr = run_cli(
        ["fleet", "audit", "-i", str(_inventory(rig, ["n1", "n2", "n3"])), "-o", str(out), "--format", "json"],
        rig.env,
        cwd=rig.ctl,
    )
    audited = {n["host"]: n for n in json.loads(stdout)["nodes"]}
    assert code == errors.EXIT_FINDINGS, stderr
    assert audited["n1"]["vendor_builds"] == audited["n2"]["vendor_builds"] == [f"customize: build {NEW[:12]}"]
    assert audited["n3"]["vendor_builds"] == [f"customize: build {OLD[:12]}"]
    assert audited["n3"]["status"] == "drift" and audited["n3"]["differs_in"] == ["vendors"]
    assert audited["n1"]["status"] == audited["n2"]["status"] == "ok"


def _leftover_controller_processes(home: str) -> list[int]:
    """Processes of the killed controller's run that outlived it (Ansible's, found by its HOME)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"HOME={home}".encode() in environ and any(v.startswith(b"ASCENV_FLEET_RUN=") for v in environ):
            found.append(int(entry.name))
    return found


def test_sigkill_of_the_controller_mid_wave_then_a_rerun_ends_consistent(rig, prepared):
    inventory = _inventory(rig, CLEAN)
    argv = [sys.executable, "-m", "ascenv", "fleet", "rollout", "add_custom", "--build", SLOW, "-i", str(inventory)]
    argv += ["--install-path", OPP, "--canary", "1"]
    journal = rig.ctl / "ascenv-fleet-rollout" / f"add_custom-{SLOW[:12]}.json"
    log = rig.base / "killed-controller.log"
    with open(log, "wb") as stderr:
        controller = subprocess.Popen(
            argv, cwd=rig.ctl, env=rig.env, stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True
        )
    try:
        end = time.monotonic() + 240
        while time.monotonic() < end and controller.poll() is None:
            doc = json.loads(journal.read_text()) if journal.exists() else {}
            if doc.get("wave") == 1 and doc.get("phase") == "rolling-out":
                break
            time.sleep(0.2)
        assert controller.poll() is None, log.read_text()
        time.sleep(3)  # the wave's nodes are in their (4 s) install
        controller.kill()
        controller.wait()
    finally:
        if controller.poll() is None:
            controller.kill()
            controller.wait()
    killed = json.loads(journal.read_text())
    assert killed["phase"] == "rolling-out" and killed["wave"] == 1
    assert [n["state"] for n in killed["nodes"] if n["wave"] == 1] == ["pending"] * 3
    cut = killed["runs"][-1]  # the killed step's run: its folders are ascenv-<cut>-<host index>
    # Whether the cut step's own folder outlives it depends on when the kill lands; a folder of
    # that run is made sure of on each node of the wave (index 7: no host of the 3-host play has
    # it), with the mark of a run that made the remote tmp, as a cut step leaves it. n2 also has
    # a look-alike of another run (a concurrent audit's), which no sweep may touch.
    for name in CLEAN[1:]:
        left = rig.nodes[name].home / ".ascenv-fleet-tmp" / f"ascenv-{cut}-7"
        (left / "ansible-tmp-1-2").mkdir(parents=True)
        (left / "ansible-tmp-1-2" / "ascenv-node.pyz").write_bytes(b"PK")
        (left / ".ascenv-made-tmp").touch()
    foreign = rig.nodes["n2"].home / ".ascenv-fleet-tmp" / "ascenv-ffffffffffff-0"
    foreign.mkdir()
    (foreign / "keep").write_text("not ours")
    code, doc, stderr = _rollout(rig, CLEAN, "--build", SLOW, "--canary", "1")
    assert code == 0, stderr
    assert "continuing the rollout" in stderr and "wave 1/2" not in stderr
    assert _states(doc) == dict.fromkeys(CLEAN, ("verified", "c"))
    # the rerun ended what the killed controller's playbook run left on the controller, and each
    # node of the cut wave removed that run's folders once a step still running there had ended
    leftovers = _leftover_controller_processes(rig.env["HOME"])
    assert not [pid for pid in leftovers if running(pid)], leftovers
    swept = {n["host"]: n["swept"] for n in doc["nodes"]}
    assert swept["n1"] == [], swept
    for name in CLEAN[1:]:
        assert f"ascenv-{cut}-7" in swept[name] and all(s.startswith(f"ascenv-{cut}-") for s in swept[name]), swept
    assert (foreign / "keep").read_text() == "not ours"
    shutil.rmtree(foreign)
    for name in CLEAN:  # the build once, the previous vendor kept is the one from before the rollout
        node = rig.nodes[name]
        assert _live_key(node) == SLOW
        assert _digest(_real(node) / ".ascenv-previous" / "customize") == prepared[name], name
        tmp = node.home / ".ascenv-fleet-tmp"
        if name == "n2":  # the remote tmp held the foreign folder at the end of the run: it stays, empty
            assert tmp.is_dir() and not any(tmp.iterdir())
            tmp.rmdir()
        assert _left_on(node) == [], name  # nothing but the vendor and its .ascenv-previous


def test_the_bench_gate_fails_a_node_it_cannot_check_unless_allowed(rig, prepared):
    """--fail-over asks for the bench gate. add_custom's shipped recipe has no npu benchmark: exit 2
    before any node is touched. With a project whose npu target has one: a node with no baseline
    cannot check the gate, which fails the canary (rolled back); with a baseline but no NPU the
    benchmark cannot run (bench run's own reason), which --allow-unchecked-bench lets pass, said as
    not checkable."""
    from ascenv.bench.fingerprint import Fingerprint
    from ascenv.bench.records import Record
    from ascenv.bench.store import BenchStore, new_run

    inventory = str(_inventory(rig, ["n1", "n2"]))
    argv = ["fleet", "rollout", "add_custom", "--build", NEW, "-i", inventory, "--install-path", OPP]
    argv += ["--fail-over", "5%"]
    code, stdout, stderr = run_cli(argv, rig.env, cwd=rig.ctl)
    assert code == errors.EXIT_USAGE and "declares no npu benchmarks" in stderr and "--allow-unchecked-bench" in stderr
    assert not (rig.ctl / "ascenv-fleet-rollout").exists() and _live_key(rig.nodes["n1"]) == OLD
    project = rig.ctl / "add_custom"
    project.mkdir()
    recipe = (REPO / "kernels" / "add_custom" / "kernel.toml").read_text()
    recipe += (
        '\n[[targets.npu.benchmarks]]\nname = "app"\nargv = ["{out}/app", "{shape}"]\n'
        'measures = "aclnnAddCustom on the NPU"\nshapes = ["16384"]\n'
    )
    (project / "kernel.toml").write_text(recipe)
    bench = BenchStore(store.Store(rig.nodes["n1"].home / ".ascenv" / "store"))
    try:
        code, doc, stderr = _rollout(rig, ["n1", "n2"], "--build", NEW, "--fail-over", "5%")
        assert code == errors.EXIT_FINDINGS and doc["phase"] == "rolled-back", stderr
        assert _states(doc) == {"n1": ("rolled-back", ""), "n2": ("pending", "")}
        gate = next(g for g in doc["nodes"][0]["gates"] if g["name"] == "bench")
        assert gate["status"] == "fail"
        assert gate["detail"].startswith("required by --fail-over, not checkable: no npu baseline of add_custom")
        assert _live_key(rig.nodes["n1"]) == OLD
        # a baseline in n1's own store (where `ascenv bench baseline set` in its home keeps it)
        launches = (10.0, 10.2, 9.9, 10.1)
        record = Record("AddCustom", "16384", None, None, "AI_VECTOR_CORE", 4, launches, 10.05, 9.9, 10.2)
        run = new_run(
            op="add_custom", target="npu", tool="msprof op", created="2026-12-01T09:00:00.000000Z", source="x",
            files=(), skipped_rows=0, fingerprint=Fingerprint(target="npu"), records=(record,),
        )  # fmt: skip
        bench.write(run)
        bench.set_baseline(bench.resolve(run.id, "add_custom"))
        argv2 = ("--build", NEW, "--fail-over", "5%", "--allow-unchecked-bench", "--journal", "bench.json")
        code, doc, stderr = _rollout(rig, ["n1"], *argv2)
        assert code == 0 and _states(doc) == {"n1": ("verified", "b")}, stderr
        gate = next(g for g in doc["nodes"][0]["gates"] if g["name"] == "bench")
        assert gate["status"] == "not-checkable", gate
        said = "the new build's NPU benchmark did not run: no NPU here: no /dev/davinci<N> device node"
        assert gate["detail"] == said
    finally:
        shutil.rmtree(project)
        shutil.rmtree(rig.nodes["n1"].home / ".ascenv", ignore_errors=True)
