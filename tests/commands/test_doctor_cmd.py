"""`ascenv doctor` end to end on the fixture machines: findings, exit codes, formats."""

from __future__ import annotations

import io
import json
import sys

import pytest

from ascenv import cli
from ascenv.output import Output
from tests.fixture_hosts import build_host


def run_cli(argv, environ):
    out, err = io.StringIO(), io.StringIO()
    ctx = cli.Context(environ=environ, out=Output(stdout=out, stderr=err, interactive=False, color=False))
    code = cli.main(argv, ctx=ctx)
    return code, out.getvalue(), err.getvalue()


def doctor_json(name, tmp_path, *extra):
    host = build_host(name, tmp_path)
    environ = dict(host.environ, HOME=host.home or "/root")
    code, out, err = run_cli(["doctor", "--root", str(host.root), "--python", sys.executable, "--format", "json", *extra], environ)
    return code, json.loads(out)


def ids(report, severity):
    return sorted({f["id"] for f in report["findings"] if f["severity"] == severity})


def test_a2_server_has_no_error(tmp_path):
    code, report = doctor_json("a2-cann800", tmp_path)
    assert ids(report, "error") == []
    assert code == 0 and report["exit_code"] == 0 and report["schema"] == 1
    assert report["snapshot"]["npu"]["driver_version"] == "25.0.rc1.1"


def test_dangling_latest_and_unsourced_env_fail(tmp_path):
    code, report = doctor_json("two-canns-dangling-latest", tmp_path)
    assert {"ASC-CANN-LINK", "ASC-ENV-SOURCED"} <= set(ids(report, "error"))
    assert code == 1
    fix = next(f["fix"] for f in report["findings"] if f["id"] == "ASC-ENV-SOURCED")
    assert fix.startswith("source /usr/local/Ascend/ascend-toolkit/") and fix.endswith("set_env.sh")


def test_container_without_devices_names_the_device_flags(tmp_path):
    code, report = doctor_json("container-no-devices", tmp_path)
    assert code == 1
    nodes = next(f for f in report["findings"] if f["id"] == "ASC-DEV-NODES")
    assert "--device /dev/davinci_manager" in nodes["fix"]
    smi = next(f for f in report["findings"] if f["id"] == "ASC-NPU-SMI")
    assert "-8020" in smi["title"]


def test_cpu_dev_box_is_fine_without_npu(tmp_path):
    code, report = doctor_json("nonroot-home", tmp_path)
    assert "ASC-NPU-SMI" in ids(report, "info")
    assert code == 0


def test_strict_fails_on_warnings(tmp_path):
    code, report = doctor_json("a2-cann800", tmp_path, "--strict")
    assert code == (1 if ids(report, "warn") else 0)


def test_saved_snapshot_rechecks_offline_with_same_findings(tmp_path):
    host = build_host("two-canns-dangling-latest", tmp_path)
    environ = dict(host.environ, HOME="/root")
    saved = tmp_path / "snap.json"
    code, _, _ = run_cli(["snapshot", "--root", str(host.root), "--python", sys.executable, "-o", str(saved), "--format", "json"], environ)
    assert code == 0
    live_code, live = doctor_json("two-canns-dangling-latest", tmp_path / "again")
    code, out, _ = run_cli(["doctor", "--from", str(saved), "--format", "json"], {})
    offline = json.loads(out)
    assert code == live_code == 1
    assert [(f["id"], f["severity"]) for f in offline["findings"]] == [(f["id"], f["severity"]) for f in live["findings"]]


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "cannot read snapshot"),
        ("{not json", "is not a JSON snapshot"),
        ('{"schema": 1, "npu": {"chips": [{"npu": "zero"}]}}', "npu.chips[0].npu: expected integer"),
        ('{"schema": 7}', "schema 7 is not supported"),
    ],
)
def test_bad_snapshot_is_a_clear_error_exit_2(tmp_path, content, message):
    path = tmp_path / "snap.json"
    if content is not None:
        path.write_text(content)
    code, out, err = run_cli(["doctor", "--from", str(path)], {})
    assert code == 2 and message in err and "Traceback" not in err


def test_human_and_markdown_reports(tmp_path):
    host = build_host("two-canns-dangling-latest", tmp_path)
    environ = dict(host.environ, HOME="/root")
    code, out, _ = run_cli(["doctor", "--root", str(host.root), "--python", sys.executable], environ)
    assert code == 1 and "fix:" in out and "error(s)" in out and "ASC-CANN-LINK" in out
    code, out, _ = run_cli(["doctor", "--root", str(host.root), "--python", sys.executable, "--format", "markdown"], environ)
    assert out.startswith("### ascenv doctor") and "| ❌ | cann |" in out
