"""`ascenv fleet audit` and `fleet lock` over real sshd nodes (tests/fleet/conftest.py): four
identical A2 nodes, one A2 on other CANNs, one whose sshd is not there."""

from __future__ import annotations

import json

import pytest

from ascenv import errors
from tests.cli_helpers import run_cli

pytestmark = pytest.mark.slow

SAME = ["a2-1", "a2-2", "a2-3", "a2-4"]


def _left_on(node) -> list[str]:
    """What the audit left in the node's HOME and TMPDIR (both empty before it)."""
    return sorted(str(p) for d in (node.home, node.tmp) for p in d.rglob("*"))


@pytest.fixture(scope="module")
def audited(fleet, tmp_path_factory):
    out = tmp_path_factory.mktemp("audit") / "results"
    code, stdout, stderr = run_cli(
        ["fleet", "audit", "-i", str(fleet.inventory), "-o", str(out), "--format", "json"], fleet.controller_env
    )
    assert stdout.strip(), stderr
    return code, json.loads(stdout), stderr, out


def test_the_drifted_node_is_named_with_its_layers_and_the_unreachable_reported(audited):
    code, doc, stderr, out = audited
    nodes = {n["host"]: n for n in doc["nodes"]}
    assert code == errors.EXIT_NODES_FAILED == 11, stderr
    assert sorted(nodes) == sorted([*SAME, "a2-oldcann", "down"])
    assert all(nodes[h]["status"] == "ok" and nodes[h]["differs_in"] == [] for h in SAME)
    assert nodes["a2-oldcann"]["status"] == "drift"
    assert "cann" in nodes["a2-oldcann"]["differs_in"]
    assert nodes["down"]["status"] == "unreachable" and nodes["down"]["message"]
    assert doc["schema"] == 1
    reference = [g for g in doc["groups"] if g["reference"]]
    assert [sorted(g["nodes"]) for g in reference] == [SAME]
    assert [g["nodes"] for g in doc["groups"] if not g["reference"]] == [["a2-oldcann"]]
    # one folder per inventory host (plain names are kept), and the play's hosts as the playbook saw them;
    # the snapshot of each reached one, readable by ascenv diff
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == sorted([*SAME, "a2-oldcann", "down"])
    assert sorted(json.loads((out / ".ascenv-hosts.json").read_text())) == sorted([*SAME, "a2-oldcann", "down"])
    assert json.loads((out / "a2-1" / "snapshot.json").read_text())["root"].endswith("root")
    assert not (out / "down" / "snapshot.json").exists()
    for host in SAME:  # told as each result arrives, with what it says: no "done" for a node never reached
        assert f"{host}: ok" in stderr
    assert "down: unreachable (" in " ".join(stderr.split()) and "down: done" not in stderr


def test_nothing_is_left_on_any_node(fleet, audited):
    for name in [*SAME, "a2-oldcann"]:
        assert _left_on(fleet.nodes[name]) == [], name


def test_with_a_cluster_lock_each_node_gets_its_verdict(fleet, tmp_path):
    lock = tmp_path / "cluster.lock"
    code, _, stderr = run_cli(
        ["fleet", "lock", "-i", str(fleet.inventory), "--limit", "a2-*", "-o", str(lock)], fleet.controller_env
    )
    assert code == 0, stderr
    assert "input-hash" in lock.read_text()
    out = tmp_path / "results"
    code, stdout, stderr = run_cli(
        ["fleet", "audit", "-i", str(fleet.inventory), "--lock", str(lock), "-o", str(out), "--format", "json"],
        fleet.controller_env,
    )
    nodes = {n["host"]: n for n in json.loads(stdout)["nodes"]}
    assert code == errors.EXIT_NODES_FAILED, stderr
    assert {h: nodes[h]["status"] for h in SAME} == dict.fromkeys(SAME, "ok")
    assert nodes["a2-oldcann"]["status"] == "drift" and "cann" in nodes["a2-oldcann"]["differs_in"]
    assert nodes["a2-oldcann"]["message"].startswith("cann")
    # the node ran `lock --check` itself too: its result is kept beside its snapshot
    assert json.loads((out / "a2-oldcann" / "check.json").read_text())["in_sync"] is False
    assert json.loads((out / "a2-1" / "check.json").read_text())["in_sync"] is True


def test_only_reachable_matching_nodes_exit_0_and_one_drift_exits_1(fleet, tmp_path):
    limit = ["--limit", "a2-1,a2-2"]
    code, stdout, stderr = run_cli(
        ["fleet", "audit", "-i", str(fleet.inventory), *limit, "-o", str(tmp_path / "a"), "--forks", "1"],
        fleet.controller_env,
    )
    assert code == 0, stdout + stderr
    assert "all 2 nodes have the identical stack" in stdout
    code, stdout, stderr = run_cli(
        ["fleet", "audit", "-i", str(fleet.inventory), "--limit", "a2-1,a2-2,a2-oldcann", "-o", str(tmp_path / "b")],
        fleet.controller_env,
    )
    assert code == errors.EXIT_FINDINGS, stdout + stderr
    assert "outlier (1 node): a2-oldcann" in stdout
    assert "drift       a2-oldcann in" in stdout


def test_fleet_lock_refuses_a_split_fleet_naming_the_groups(fleet, tmp_path):
    lock = tmp_path / "cluster.lock"
    code, _, stderr = run_cli(
        ["fleet", "lock", "-i", str(fleet.inventory), "--limit", "a2-1,a2-oldcann", "-o", str(lock)],
        fleet.controller_env,
    )
    assert code == errors.EXIT_FINDINGS
    assert "no stack is shared by more than half" in stderr and "a2-1" in stderr and "a2-oldcann" in stderr
    assert not lock.exists()


def test_a_node_whose_only_python_is_3_7_is_audited(fleet, tmp_path):
    """The same machine as a2-1, but python3 on its PATH is 3.7 and nothing newer: the probe runs
    on 3.7, and the cluster lock (taken from the A2 nodes) is checked on the controller. The
    nodes' machines are fixture roots (--root): the Python judged there is the one read from the
    root's files (#23: never the interpreter running the probe), so the two nodes are one stack."""
    if "py37" not in fleet.nodes:
        pytest.skip("no Python 3.7 at /root/.pyenv/versions/3.7.16")
    lock = tmp_path / "cluster.lock"
    code, _, stderr = run_cli(
        ["fleet", "lock", "-i", str(fleet.inventory), "--limit", "a2-*", "-o", str(lock)], fleet.controller_env
    )
    assert code == 0, stderr
    out = tmp_path / "r"
    code, stdout, stderr = run_cli(
        ["fleet", "audit", "-i", str(fleet.base / "py37.ini"), "--lock", str(lock), "-o", str(out), "--format", "json"],
        fleet.controller_env,
    )
    nodes = {n["host"]: n for n in json.loads(stdout)["nodes"]}
    assert nodes["a2-1"]["status"] == "ok", stderr
    assert nodes["py37"]["status"] == "ok" and nodes["py37"]["differs_in"] == [], nodes["py37"]
    assert code == errors.EXIT_OK, stderr
    # the probe ran on the node's 3.7 (its envelope says so), and read the same machine as a2-1
    assert "3.7.16" in (out / "py37" / "result.json").read_text()
    old, new = (
        json.loads((out / host / "snapshot.json").read_text().replace(f"/hosts/{host}/", "/hosts/node/"))
        for host in ("py37", "a2-1")
    )
    assert len(old["npu"]["chips"]) == len(new["npu"]["chips"]) == 8
    for layer in ("host", "npu", "driver", "firmware", "cann", "devices", "vendors"):  # env: its PATH differs
        assert old[layer] == new[layer], layer
    assert old["python"]["version"] == new["python"]["version"] and old["python"]["from_files"]
    assert not (out / "py37" / "check.json").exists()  # no `lock --check` on 3.7: the controller's verdict
    assert (out / "a2-1" / "check.json").exists()
    assert _left_on(fleet.nodes["py37"]) == []


def test_a_missing_inventory_is_exit_2(fleet, tmp_path):
    code, _, stderr = run_cli(["fleet", "audit", "-i", str(tmp_path / "nope.ini")], fleet.controller_env)
    assert code == errors.EXIT_USAGE and "does not exist" in stderr
