"""CI outputs of `lock --check`, `op check` and `bench compare` (JUnit, read back with junitparser
as CI systems read it), `bench history --format benchmark-action`, and the GitHub Action and
pre-commit hook definitions at the repository root."""

from __future__ import annotations

import json
import os
import random
from dataclasses import replace
from pathlib import Path

import junitparser
import pytest
import yaml
from lock_samples import a2, with_package

from ascenv import cli
from ascenv.bench.store import BenchStore
from ascenv.snapshot_io import snapshot_to_json
from ascenv.store import Store
from tests.benchcmd.test_compare import noisy, stored_run
from tests.benchcmd.test_history import fixture_runs
from tests.cli_helpers import run_cli
from tests.package.pkgbuild import vendor_tree
from tests.package.test_visibility import OPP, machine

REPO = Path(__file__).resolve().parents[2]
ENV = {"PATH": "/usr/bin:/bin"}


def suite_of(text: str) -> junitparser.TestSuite:
    xml = junitparser.JUnitXml.fromstring(text)
    suites = list(xml) if isinstance(xml, junitparser.JUnitXml) else [xml]
    assert len(suites) == 1
    return suites[0]


def failures(suite: junitparser.TestSuite) -> dict[str, junitparser.Failure]:
    return {c.name: c.result[0] for c in suite if c.result and isinstance(c.result[0], junitparser.Failure)}


# --- lock --check --------------------------------------------------------------------------------


def lock_check(tmp_path: Path, snap, *extra: str) -> tuple[int, junitparser.TestSuite]:
    (tmp_path / "a2.json").write_text(json.dumps(snapshot_to_json(a2())))
    assert run_cli(["lock", "--from", "a2.json"], {}, tmp_path)[0] == 0
    (tmp_path / "now.json").write_text(json.dumps(snapshot_to_json(snap)))
    code, out, err = run_cli(["lock", "--check", "--from", "now.json", "--format", "junit", *extra], {}, tmp_path)
    return code, suite_of(out)


def test_lock_check_junit_in_sync_has_a_passing_case_per_locked_item(tmp_path):
    code, suite = lock_check(tmp_path, a2())
    assert code == 0 and suite.failures == 0 and suite.tests > 10
    assert suite.name == "ascenv lock --check ascenv.lock"
    assert any(c.name == "driver version" and c.system_out == "in sync: 25.0.rc1.1" for c in suite)


def test_lock_check_junit_fails_the_drifted_item_with_the_fix(tmp_path):
    snap = a2()
    code, suite = lock_check(tmp_path, replace(snap, driver=replace(snap.driver, version="25.2.0")))
    (tmp_path / "again").mkdir()
    _, synced = lock_check(tmp_path / "again", a2())
    assert code == 1 and suite.failures == 1 and suite.tests == synced.tests
    (failure,) = failures(suite).values()
    assert failure.message == "make driver version 25.0.rc1.1 again, or accept the change: ascenv lock -o ascenv.lock"
    assert failure.text == "error: changed: locked 25.0.rc1.1, this machine 25.2.0"


def test_lock_check_junit_a_warning_passes_unless_strict(tmp_path):
    code, suite = lock_check(tmp_path, with_package(a2(), "torch_npu", "2.8.1"))
    assert code == 0 and suite.failures == 0
    case = next(c for c in suite if c.name == "packages torch-npu")
    assert case.system_out == "warn: changed: locked 2.8.0, this machine 2.8.1"
    code, suite = lock_check(tmp_path, with_package(a2(), "torch_npu", "2.8.1"), "--strict")
    assert code == 1 and list(failures(suite)) == ["packages torch-npu"]


def test_junit_without_check_is_refused(tmp_path):
    code, _, err = run_cli(["lock", "--format", "junit"], {}, tmp_path)
    assert code == 2 and "--format junit reports a check" in err


# --- op check --------------------------------------------------------------------------------------


def test_op_check_junit_has_the_findings_and_one_case_per_optype(tmp_path):
    root = machine(tmp_path)
    vendor_tree(root / OPP.lstrip("/") / "vendors" / "customize")
    argv = ["op", "check", "--root", str(root), "--soc", "ascend910b", "--arch", "aarch64", "--format", "junit"]
    environ = {"PATH": os.environ.get("PATH", ""), "ASCEND_OPP_PATH": OPP}
    code, out, _ = run_cli(argv, environ, tmp_path)
    suite = suite_of(out)
    assert code == 0 and suite.failures == 0
    optype = next(c for c in suite if c.classname == "ascenv.op.optype")
    assert optype.name == "AddCustom from customize" and optype.system_out == "ATC yes, runtime yes, aclnn yes"
    # the vendor tree named as an install root: ASC-VENDOR-PKGROOT fails, with its fix as message
    code, out, _ = run_cli(argv, {**environ, "ASCEND_CUSTOM_OPP_PATH": "/usr/local/Ascend/ascend-toolkit/latest/opp"})
    suite = suite_of(out)
    failed = failures(suite)
    assert code == 1 and suite.failures == len(failed) >= 1
    pkgroot = next(f for name, f in failed.items() if name.startswith("ASC-VENDOR-PKGROOT"))
    assert pkgroot.message.startswith("replace /usr/local/Ascend/ascend-toolkit/latest/opp with")


# --- bench compare and the benchmark-action export -------------------------------------------------------


def test_bench_compare_junit_fails_the_slower_shape(tmp_path):
    rng = random.Random(7)
    base = noisy(rng, 100)
    a = stored_run(tmp_path, base, "2026-12-01T09:00:00.000000Z")
    same = stored_run(tmp_path, list(base), "2026-12-01T09:10:00.000000Z")
    slow = stored_run(tmp_path, [x * 1.3 for x in base], "2026-12-01T09:20:00.000000Z")
    argv = ["bench", "compare", "--store", str(tmp_path), "--format", "junit"]
    code, out, _ = run_cli([*argv, a.id, same.id], ENV)
    suite = suite_of(out)
    assert code == 0 and (suite.tests, suite.failures) == (1, 0)
    assert next(iter(suite)).system_out.startswith("same: ")
    code, out, _ = run_cli([*argv, a.id, slow.id], ENV)
    suite = suite_of(out)
    assert code == 1 and (suite.tests, suite.failures) == (1, 1)
    ((name, failure),) = failures(suite).items()
    assert name == "add_custom n=1024001"
    assert failure.message.startswith("slower by 3") and f"ascenv bench baseline set {slow.id}" in failure.message
    assert failure.text.startswith("slower: +3")


def test_bench_history_exports_the_newest_run_for_github_action_benchmark(tmp_path):
    bench = BenchStore(Store(tmp_path))
    runs = fixture_runs(tmp_path / "src")
    for run in runs:
        bench.write(run)
    code, out, err = run_cli(["bench", "history", "mm", "--store", str(tmp_path), "--format", "benchmark-action"], ENV)
    entries = json.loads(out)
    newest = runs[0]
    assert code == 0, err
    assert len(entries) == len(newest.records) > 1
    # customSmallerIsBetter: name, unit and a numeric value required; range and extra strings
    assert all(set(e) == {"name", "unit", "value", "range", "extra"} for e in entries)
    assert all(isinstance(e["value"], float) and e["unit"] == "us" and e["range"].startswith("± ") for e in entries)
    assert sorted(e["value"] for e in entries) == sorted(r.duration_us for r in newest.records)
    assert all(e["extra"].startswith(f"run {newest.id}; build key3") for e in entries)


# --- action.yml and .pre-commit-hooks.yaml ------------------------------------------------------------


def commands() -> set[str]:
    return {spec.name for spec in cli.command_specs()}


def test_action_yml_is_a_composite_action_running_ascenv_check():
    action = yaml.safe_load((REPO / "action.yml").read_text())
    assert {"name", "description", "inputs", "runs"} <= set(action)
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    assert all("shell" in s for s in steps if "run" in s)  # composite run steps must name their shell
    script = "\n".join(s.get("run", "") for s in steps)
    assert "ascenv check" in script and "check" in commands()
    assert "${{" not in script  # inputs reach the scripts through env only (no script injection)
    # every ${{ inputs.X }} used is declared, and every input is used
    passed = " ".join(str(v) for s in steps for v in s.get("env", {}).values())
    used = {part.split("}}")[0].strip() for part in passed.split("${{ inputs.")[1:]}
    assert used == set(action["inputs"])


@pytest.mark.parametrize("field", ["id", "name", "entry", "language"])
def test_pre_commit_hooks_have_the_required_fields_and_run_ascenv_check(field):
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert isinstance(hooks, list) and hooks
    for hook in hooks:
        assert hook[field]
        entry = hook["entry"].split()
        assert entry[0] == "ascenv" and entry[1] in commands()
