"""The rollout's node step (node_main ``_rollout``) run as the node runs it, ``python3 bundle.pyz``,
without Ansible: the bundle built by rollout_run.node_payload, a node root of the a2-cann800
fixture, the package made by makeself (tests/package/pkgbuild.py). Both actions are idempotent."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ascenv import store
from ascenv.fleet import rollout, rollout_run
from ascenv.fleet.bundle import build_bundle
from tests.fixture_hosts import build_host
from tests.package.pkgbuild import INSTALL_SH, needs_makeself, stored_npu_build, vendor_tree
from tests.package.test_deploy import tree

pytestmark = [pytest.mark.slow, needs_makeself]

OLD, NEW, BROKEN = "a" * 64, "b" * 64, "c" * 64
# an installer that fails after merging the build into the live vendor tree
FAILS_HALFWAY = INSTALL_SH.replace('echo "SUCCESS"', 'echo "disk full" >&2; exit 1')
OPP = "/opt/opp"


@pytest.fixture
def node(tmp_path):
    host = build_host("a2-cann800", tmp_path / "host")
    st = store.Store(tmp_path / "store")
    entries = {}
    for key, kernel, script in ((OLD, b"v1", INSTALL_SH), (NEW, b"v2", INSTALL_SH), (BROKEN, b"v3", FAILS_HALFWAY)):
        entries[key] = stored_npu_build(st, key, tmp_path / f"pkg-{key[0]}", script, arch="x86_64", kernel=kernel)
    home = tmp_path / "home"
    home.mkdir()
    env = {**host.environ, "HOME": str(home), "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
    env["ASCEND_CUSTOM_OPP_PATH"] = f"{OPP}/vendors/customize"
    return tmp_path, host.root, env, entries


def step(tmp_path: Path, root: Path, env: dict, entry: store.Entry, action: str) -> dict:
    journal = rollout.new_journal("add_custom", entry.key, ["customize"], [("n1",)])
    work = tmp_path / f"work-{action}"
    work.mkdir(exist_ok=True)
    bundle = build_bundle(work / "b.pyz", None, rollout_run.node_payload(work, action, journal, entry, False))
    done = subprocess.run(
        [sys.executable, str(bundle), "--root", str(root), "--install-path", OPP],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    envelope = json.loads(done.stdout.strip().splitlines()[-1])
    assert sorted(p.name for p in work.iterdir()) == ["b.pyz", "rollout.json"]  # its extraction is gone
    return envelope["rollout"]


def test_apply_twice_installs_once_and_keeps_the_vendor_from_before(node):
    tmp_path, root, env, entries = node
    real = root / OPP.lstrip("/")
    assert step(tmp_path, root, env, entries[OLD], "apply")["installed"] is True
    before = tree(real / "vendors" / "customize")
    first = step(tmp_path, root, env, entries[NEW], "apply")
    assert first["live_before"] == {"customize": OLD} and first["live_after"] == {"customize": NEW}
    assert rollout.judge_apply("n1", True, "", first, NEW).state == rollout.VERIFIED
    again = step(tmp_path, root, env, entries[NEW], "apply")
    assert again["installed"] is False and again["live_after"] == {"customize": NEW}
    assert tree(real / ".ascenv-previous" / "customize") == before  # not the build itself


def test_rollback_twice_puts_back_the_previous_once(node):
    tmp_path, root, env, entries = node
    real = root / OPP.lstrip("/")
    step(tmp_path, root, env, entries[OLD], "apply")
    before = tree(real / "vendors" / "customize")
    step(tmp_path, root, env, entries[NEW], "apply")
    first = step(tmp_path, root, env, entries[NEW], "rollback")
    assert first["rolled_back"] == ["customize"] and tree(real / "vendors" / "customize") == before
    again = step(tmp_path, root, env, entries[NEW], "rollback")  # a rerun must not swap the build back in
    assert again["rolled_back"] == [] and tree(real / "vendors" / "customize") == before
    assert rollout.judge_rollback("n1", True, "", again, NEW).state == rollout.ROLLED_BACK


def test_a_shadowing_vendor_first_in_the_search_order_is_reported_and_judged_failed(node):
    tmp_path, root, env, entries = node
    vendor_tree(root / "opt/shadow/vendors/other", name="other", arch="x86_64")
    env = {**env, "ASCEND_CUSTOM_OPP_PATH": f"/opt/shadow/vendors/other:{OPP}/vendors/customize"}
    report = step(tmp_path, root, env, entries[NEW], "apply")
    outcome = rollout.judge_apply("n1", True, "", report, NEW)
    assert outcome.state == rollout.FAILED and "AddCustom resolves to vendor other" in outcome.message


def test_a_vendor_the_node_environment_does_not_name_is_checked_as_its_set_env_would_make_it(node):
    tmp_path, root, env, entries = node
    env = {k: v for k, v in env.items() if k != "ASCEND_CUSTOM_OPP_PATH"}
    report = step(tmp_path, root, env, entries[NEW], "apply")
    assert report["op_check"]["set_env_assumed"] == [f"{OPP}/vendors/customize"]
    gate = rollout.judge_op_check(report["op_check"], report["vendor_paths"], ())
    assert gate.status == rollout.PASS and "set_env.bash" in gate.detail


def test_an_installer_failing_halfway_leaves_the_vendor_from_before_not_a_merge(node):
    tmp_path, root, env, entries = node
    real = root / OPP.lstrip("/")
    step(tmp_path, root, env, entries[OLD], "apply")
    step(tmp_path, root, env, entries[NEW], "apply")
    before, kept = tree(real / "vendors" / "customize"), tree(real / ".ascenv-previous" / "customize")
    report = step(tmp_path, root, env, entries[BROKEN], "apply")
    assert report["restored"] == ["customize"] and "disk full" in report["error"]
    assert tree(real / "vendors" / "customize") == before  # NEW's tree, whole, not with v3's kernels merged in
    outcome = rollout.judge_apply("n1", True, "", report, BROKEN)
    assert (
        outcome.state == rollout.FAILED
        and outcome.build is None
        and "the vendor from before is back" in outcome.message
    )
    # ascenv install put it back itself: the keep is the one from before, a hand rollback brings back OLD
    assert tree(real / ".ascenv-previous" / "customize") == kept
