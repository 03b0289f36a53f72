"""`ascenv check` end to end on fixture machines: the project's constraints with the doctor's
checks, exit codes, JSON, JUnit (read back with junitparser, as CI reads it), the job summary and
the emitted guard; and `doctor --format junit`."""

from __future__ import annotations

import json
import sys

import junitparser
import pytest

from tests.cli_helpers import run_cli
from tests.fixture_hosts import build_host

PYPROJECT = """\
[project]
name = "fla-npu"

[tool.ascenv]
cann = ">=8.5.0"
torch_npu = "~=2.8"
socs = ["ascend910b"]
"""


def project(tmp_path, text=PYPROJECT, name="pyproject.toml"):
    directory = tmp_path / "project"
    directory.mkdir(exist_ok=True)
    (directory / name).write_text(text)
    return directory


def check(host_name, tmp_path, *extra, text=PYPROJECT, environ=None):
    host = build_host(host_name, tmp_path)
    env = dict(host.environ, HOME=host.home or "/root", **(environ or {}))
    where = ["--root", str(host.root), "--python", sys.executable]
    return run_cli(["check", str(project(tmp_path, text)), *where, *extra], env, cwd=tmp_path)


def test_the_vllm_image_fails_the_projects_cann_range_with_the_doctors_findings(tmp_path):
    code, out, err = check("vllm-ascend-v0.12.0rc1", tmp_path, "--format", "json")
    report = json.loads(out)
    assert code == 1 and report["exit_code"] == 1
    by_id = {f["id"]: f for f in report["findings"]}
    assert by_id["ASC-REQ-CANN"]["severity"] == "error"
    assert by_id["ASC-REQ-CANN"]["title"] == "fla-npu needs CANN >=8.5.0, found 8.3.RC2"
    assert by_id["ASC-REQ-TORCH_NPU"]["severity"] == "ok" and by_id["ASC-REQ-SOC"]["severity"] == "ok"
    assert "ASC-TORCH-CANN" in by_id and "ASC-ENV-SOURCED" in by_id  # the doctor's checks ran too
    assert report["summary"]["error"] == sum(1 for f in report["findings"] if f["severity"] == "error")


def test_an_a3_host_meets_the_range_but_not_the_socs(tmp_path):
    code, out, _ = check("a3-cann850", tmp_path, "--format", "json")
    by_id = {f["id"]: f for f in json.loads(out)["findings"]}
    assert by_id["ASC-REQ-CANN"]["severity"] == "ok"
    assert by_id["ASC-REQ-SOC"]["severity"] == "error" and code == 1


def test_a_host_inside_every_range_exits_0(tmp_path):
    text = '[tool.ascenv]\ncann = "==8.0.*"\nsocs = ["ascend910b"]\n'
    code, out, _ = check("a2-cann800", tmp_path, text=text)
    assert code == 0, out
    assert "ascenv check" in out and "CANN 8.0.0 is within ==8.0.*" in out


def test_check_of_a_saved_snapshot_gives_the_same_verdicts(tmp_path):
    host = build_host("vllm-ascend-v0.11.0", tmp_path)
    env = dict(host.environ, HOME="/root")
    code, _, _ = run_cli(
        ["snapshot", "--root", str(host.root), "--python", sys.executable, "-o", "host.json"], env, cwd=tmp_path
    )
    assert code == 0
    project(tmp_path)
    code, out, _ = run_cli(["check", "project", "--from", "host.json", "--format", "json"], {}, cwd=tmp_path)
    failing = {
        f["id"] for f in json.loads(out)["findings"] if f["id"].startswith("ASC-REQ") and f["severity"] == "error"
    }
    assert code == 1 and failing == {"ASC-REQ-CANN", "ASC-REQ-TORCH_NPU"}


@pytest.mark.parametrize(
    "text, message",
    [
        ('[tool.ascenv]\ncann = "8.5"\n', "project/pyproject.toml: tool.ascenv.cann: '8.5' is not <operator><version>"),
        ('[tool.ascenv]\ncan = ">=8.5.0"\n', "project/pyproject.toml: tool.ascenv.can: unknown key; perhaps you meant"),
        ("[project]\nname = 'x'\n", "project: no ascenv.toml, and no [tool.ascenv] table in a pyproject.toml"),
    ],
)
def test_a_bad_constraints_file_is_exit_2_with_the_key_path(tmp_path, text, message):
    project(tmp_path, text)
    code, out, err = run_cli(["check", "project", "--format", "json"], {}, cwd=tmp_path)
    assert code == 2 and out == ""
    assert message in err and "Traceback" not in err


def junit_report(out):
    xml = junitparser.JUnitXml.fromstring(out)
    suites = list(xml) if isinstance(xml, junitparser.JUnitXml) else [xml]
    assert len(suites) == 1
    return suites[0]


def test_junit_has_one_case_per_finding_and_failures_carry_the_fix(tmp_path):
    code, out, _ = check("vllm-ascend-v0.12.0rc1", tmp_path, "--format", "junit")
    _, report, _ = check("vllm-ascend-v0.12.0rc1", tmp_path / "again", "--format", "json")
    findings = json.loads(report)["findings"]
    suite = junit_report(out)
    cases = list(suite)
    assert suite.name == "ascenv check" and code == 1
    assert suite.tests == len(cases) == len(findings)
    errors = [f for f in findings if f["severity"] == "error"]
    assert suite.failures == len(errors) and suite.errors == 0
    assert suite.skipped == sum(1 for f in findings if f["severity"] == "info")
    failed = {c.name: c.result[0] for c in cases if c.result and isinstance(c.result[0], junitparser.Failure)}
    cann = failed["ASC-REQ-CANN: fla-npu needs CANN >=8.5.0, found 8.3.RC2"]
    assert cann.message == "install CANN >=8.5.0 and source its set_env.sh"
    assert "found: CANN 8.3.RC2 (/usr/local/Ascend/ascend-toolkit/8.3.RC2/" in cann.text
    assert {c.classname for c in cases} >= {"ascenv.check.cann", "ascenv.check.torch_npu", "ascenv.check.npu"}
    assert sorted(failed) == sorted(f"{f['id']}: {f['title']}" for f in errors)


def test_doctor_junit_fails_warnings_only_under_strict(tmp_path):
    host = build_host("vllm-ascend-v0.12.0rc1", tmp_path)  # npu-smi answers only in part: a warning
    env = dict(host.environ, HOME="/root")
    argv = ["doctor", "--root", str(host.root), "--python", sys.executable, "--format", "junit"]
    code, out, _ = run_cli(argv, env)
    plain = junit_report(out)
    code_strict, out_strict, _ = run_cli([*argv, "--strict"], env)
    strict = junit_report(out_strict)
    assert plain.name == "ascenv doctor" and plain.tests == strict.tests
    assert (code, plain.failures) == (0, 0)
    assert code_strict == 1 and strict.failures >= 1
    warned = next(c for c in strict if c.name.startswith("ASC-NPU-SMI"))
    assert isinstance(warned.result[0], junitparser.Failure) and warned.result[0].message.startswith("run the failing")


def test_junit_shows_control_characters_from_the_machine_and_stays_xml(tmp_path):
    text = '[project]\nname = "evil\\u001b]0;x\\u0007"\n[tool.ascenv]\ntorch = ">=9"\n'
    code, out, _ = check("a2-cann800", tmp_path, "--format", "junit", text=text)
    case = next(c for c in junit_report(out) if c.name.startswith("ASC-REQ-TORCH"))
    assert "evil\\x1b]0;x\\x07 needs torch >=9" in case.name and code == 1


def test_summary_appends_markdown_to_the_github_step_summary(tmp_path):
    summary = tmp_path / "step-summary.md"
    summary.write_text("earlier step\n")
    code, out, _ = check("vllm-ascend-v0.12.0rc1", tmp_path, "--summary", environ={"GITHUB_STEP_SUMMARY": str(summary)})
    written = summary.read_text()
    assert code == 1 and written.startswith("earlier step\n### ascenv check\n")
    assert "| ❌ | cann | fla-npu needs CANN >=8.5.0, found 8.3.RC2 (`ASC-REQ-CANN`) |" in written
    assert "ascenv check" in out  # the report itself still goes to stdout


def test_summary_without_a_file_outside_github_actions_is_exit_2(tmp_path):
    code, _, err = check("a2-cann800", tmp_path, "--summary")
    assert code == 2 and "--summary without FILE needs $GITHUB_STEP_SUMMARY" in err


def test_emit_guard_writes_the_module_and_judges_nothing(tmp_path):
    project(tmp_path)
    code, out, err = run_cli(["check", "project", "--emit-guard", "project/guard.py"], {}, cwd=tmp_path)
    source = (tmp_path / "project" / "guard.py").read_text()
    assert code == 0 and out == "" and "wrote project/guard.py" in err
    assert source.startswith("# Generated by `ascenv check --emit-guard` from 'project/pyproject.toml'")
    assert source.rstrip().endswith(
        "RANGES = {'cann': '>=8.5.0', 'torch_npu': '~=2.8'}\nrequire(who='fla-npu', **RANGES)"
    )
    compile(source, "guard.py", "exec")


def test_a_file_name_cannot_put_code_into_the_guard(tmp_path):
    hostile = tmp_path / "p\nraise SystemExit('injected')"
    hostile.mkdir()
    (hostile / "ascenv.toml").write_text('python = ">=3"\n')
    code, _, err = run_cli(["check", hostile.name, "--emit-guard", "g.py"], {}, cwd=tmp_path)
    assert code == 0, err
    namespace: dict = {}
    exec(compile((tmp_path / "g.py").read_text(), "g.py", "exec"), namespace)  # passes: Python >=3
    assert "StackMismatch" in namespace


def test_doctor_summary_to_a_named_file_and_an_unwritable_one(tmp_path):
    host = build_host("a2-cann800", tmp_path)
    argv = ["doctor", "--root", str(host.root), "--python", sys.executable, "--format", "json", "--summary"]
    code, out, _ = run_cli([*argv, "summary.md"], dict(host.environ, HOME="/root"), cwd=tmp_path)
    assert code == json.loads(out)["exit_code"] == 0
    assert (tmp_path / "summary.md").read_text().startswith("### ascenv doctor\n")
    code, out, err = run_cli([*argv, "missing/summary.md"], dict(host.environ, HOME="/root"), cwd=tmp_path)
    assert (code, out) == (2, "") and "cannot write missing/summary.md" in err
