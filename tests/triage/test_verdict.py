"""Honest confirmation (issue #24): every check answers confirmed / ruled out / not checkable with
its reason; a machine without CANN or an NPU rules nothing out that needs them, and the interpreter
running ascenv is never evidence about the user's stack."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import sys
from pathlib import Path

import pytest

from ascenv import compat, model
from ascenv.probe.fs import Root
from ascenv.probe.snapshot import collect
from ascenv.triage import is_own_interpreter, triage
from ascenv.triage.verdict import NOT_CHECKABLE, RULED_OUT, describe, needs
from tests.cli_helpers import run_cli
from tests.triage.machines import machine, python_info

LABELLED = Path(__file__).parent.parent / "data" / "triage"
# one log per kind of check: NNAL/torch_npu (python + CANN), container (devices), numpy 2 (package)
LOGS = (
    "torch_npu_atb_libtbe_adapter_undefined-symbol_NNAL-version-mismatch_Ascend-pytorch-issue99.txt",
    "torch_npu_libascend_hal.so-missing_docker-run-without-driver-mounts_vllm-ascend-issue1440.txt",
    "torch_npu_npu_init_AclSetCompileopt_500001_numpy2_vllm-ascend-pr472.txt",
    "paddle_custom_device_Fail-to-open-library_libatb.so-missing_Paddle-issue65797.txt",
)


def _own_python(numpy: str = "2.0.2") -> model.PythonInfo:
    """The interpreter running these tests, with numpy 2 in its own site-packages."""
    site = os.path.join(sys.prefix, "lib", "site-packages")
    return model.PythonInfo(
        executable=sys.executable,
        version="3.11.7",
        distributions=(model.Distribution("numpy", numpy, site), model.Distribution("torch", "2.1.0", site)),
    )


def _verdicts(data: dict) -> list[dict]:
    return [v for c in data["causes"] for v in c["verdicts"]]


def _needs_stack(check: str) -> bool:
    from ascenv.checks import load_checks

    if check.startswith("package:"):
        return True
    return bool(set(needs(check, load_checks()[check].layer)) & {"cann", "ascend", "driver", "python"})


@pytest.mark.parametrize("name", LOGS)
def test_empty_root_rules_nothing_out(name, tmp_path):
    empty = tmp_path / "root"
    empty.mkdir()
    argv = ["triage", str(LABELLED / name), "--root", str(empty), "--python", sys.executable, "--format", "json"]
    code, out, err = run_cli(argv, {"PATH": os.environ.get("PATH", "")})
    assert code == 0, err
    data = json.loads(out)
    verdicts = _verdicts(data)
    assert verdicts, data["causes"]
    assert not [v for v in verdicts if v["verdict"] == RULED_OUT and _needs_stack(v["check"])]
    assert all(v["verdict"] == NOT_CHECKABLE and v["reason"] for v in verdicts)
    assert all(c["confirmed"] is None for c in data["causes"])
    assert data["machine"]["cann"] == [] and data["machine"]["ascend"] is False
    cann = [v for v in verdicts if not v["check"].startswith(("package:", "ASC-PY-", "ASC-TORCH-P"))]
    for v in cann:
        assert "has no CANN" in v["reason"] and "ascenv triage LOG --from SNAPSHOT" in v["reason"], v


def test_empty_root_human_and_markdown_say_not_checkable(tmp_path):
    empty = tmp_path / "root"
    empty.mkdir()
    log = str(LABELLED / LOGS[0])
    argv = ["triage", log, "--root", str(empty), "--python", sys.executable]
    _, out, _ = run_cli(argv, {"PATH": os.environ.get("PATH", "")})
    assert f"judged on the root {empty}: no CANN, no NPU or Ascend driver" in out
    assert "ruled out" not in out and "✓" not in out
    assert "not checkable: this machine has no CANN — run `ascenv triage LOG --from SNAPSHOT`" in out
    _, md, _ = run_cli([*argv, "--format", "markdown"], {"PATH": os.environ.get("PATH", "")})
    assert "✅" not in md and "ruled out" not in md
    assert "❔ not checkable: this machine has no CANN" in md


@pytest.mark.live_host
@pytest.mark.skipif(os.path.exists("/usr/local/Ascend"), reason="this machine has CANN: nothing to show")
@pytest.mark.parametrize("name", LOGS)
def test_this_machine_without_cann_rules_nothing_out(name):
    # the machine running the tests, as `ascenv triage LOG` probes it (read only)
    snapshot = collect(Root("/"), {"PATH": os.environ.get("PATH", "")}, python=sys.executable)
    if snapshot.cann.installs or snapshot.npu.chips:
        pytest.skip("this machine has an Ascend stack")
    result = triage(io.BytesIO(_payload(LABELLED / name)), snapshot, judged="this machine")
    verdicts = [v for c in result.causes for v in c.verdicts]
    assert verdicts and all(v.verdict == NOT_CHECKABLE for v in verdicts), verdicts
    assert not any(c.confirmed is not None for c in result.causes)
    assert result.machine is not None and result.machine.python is None  # ascenv's own interpreter


@pytest.mark.parametrize("numpy", ["2.0.2", "2.3.1", "1.26.4"])
def test_numpy_of_ascenvs_own_interpreter_is_no_evidence(numpy, tmp_path):
    healthy = machine(None, tmp_path)
    own = dataclasses.replace(healthy, python=_own_python(numpy))
    result = triage(io.BytesIO(_payload(LABELLED / LOGS[2])), own, judged="this machine")
    numpy2 = next(c for c in result.causes if (c.detail or "").startswith("numpy2"))
    assert numpy2.confirmed is None and not numpy2.evidence
    (verdict,) = numpy2.verdicts
    assert verdict.verdict == NOT_CHECKABLE and "interpreter running ascenv" in verdict.reason
    # the same numpy in the user's Python decides it
    theirs = dataclasses.replace(healthy, python=python_info(numpy=numpy))
    decided = triage(io.BytesIO(_payload(LABELLED / LOGS[2])), theirs)
    numpy2 = next(c for c in decided.causes if (c.detail or "").startswith("numpy2"))
    assert numpy2.confirmed is numpy.startswith("2.")


def test_own_interpreter_is_recognised_by_its_directory_or_its_site_packages():
    assert is_own_interpreter(_own_python())
    bindir = os.path.dirname(os.path.abspath(sys.executable))
    assert is_own_interpreter(model.PythonInfo(executable=os.path.join(bindir, "python3")))
    in_prefix = model.Distribution("numpy", "2.0.2", os.path.join(sys.prefix, "lib", "python3", "site-packages"))
    assert is_own_interpreter(model.PythonInfo(executable="/opt/elsewhere/bin/python3", distributions=(in_prefix,)))
    assert not is_own_interpreter(python_info())
    assert not is_own_interpreter(model.PythonInfo())


def test_checks_that_can_look_still_confirm_and_rule_out(tmp_path):
    name = LOGS[0]
    faulty = triage(io.BytesIO(_payload(LABELLED / name)), machine("torch_npu_cann", tmp_path / "a"), compat.load())
    assert faulty.causes[0].confirmed is True
    assert any(v.check == "ASC-TORCH-CANN" and v.verdict == "confirmed" for v in faulty.causes[0].verdicts)
    healthy = triage(io.BytesIO(_payload(LABELLED / name)), machine(None, tmp_path / "b"), compat.load())
    mismatch = next(c for c in healthy.causes if c.cause == "torch_npu_cann_mismatch")
    assert mismatch.confirmed is False and all(v.verdict == RULED_OUT for v in mismatch.verdicts)


def test_machine_description_names_what_is_missing(tmp_path):
    snap = machine(None, tmp_path)
    m = describe(snap, "x", own_python=False)
    assert m.cann and m.ascend and m.python == "/usr/bin/python3" and m.missing(("cann", "python")) is None
    bare = describe(model.Snapshot(), "y", own_python=False)
    assert not bare.ascend and "has no CANN" in (bare.missing(("cann",)) or "")
    assert "could not be read" in (bare.missing(("python",)) or "")


def _payload(path: Path) -> bytes:
    lines = path.read_bytes().splitlines(keepends=True)
    while lines and lines[0].startswith(b"#"):
        lines.pop(0)
    return b"".join(lines)


def test_report_md_copies_the_not_checkable_verdicts(tmp_path):
    # report --log on a root without CANN: report.md says "not checkable" with the reason, never "ruled out"
    from ascenv import report

    empty = tmp_path / "root"
    empty.mkdir()
    (tmp_path / "run.log").write_bytes(_payload(LABELLED / LOGS[0]))
    argv = ["report", "--root", str(empty), "--python", sys.executable, "-o", "r.tar.gz", "--log", "run.log"]
    code, _, err = run_cli(argv, {"PATH": os.environ.get("PATH", ""), "SOURCE_DATE_EPOCH": "1764547200"}, tmp_path)
    assert code == 0, err
    bundle, _ = report.read_bundle((tmp_path / "r.tar.gz").read_bytes(), "r.tar.gz")
    text = bundle["report.md"].decode()
    assert "not checkable: this machine has no CANN" in text and "ruled out" not in text
    triaged = json.loads(bundle["triage.json"])
    assert all(v["verdict"] == NOT_CHECKABLE for c in triaged["causes"] for v in c["verdicts"])


def test_the_base_interpreter_of_ascenvs_venv_is_the_users():
    # pipx / a venv is built on the system Python, whose own site-packages may hold the user's stack
    base_bin = os.path.dirname(os.path.realpath(sys.executable))
    if base_bin == os.path.dirname(os.path.abspath(sys.executable)):
        pytest.skip("ascenv runs in no virtual environment here")
    site = model.Distribution("torch_npu", "2.1.0.post10", "/usr/lib/python3/dist-packages")
    assert not is_own_interpreter(model.PythonInfo(executable=os.path.join(base_bin, "python3"), distributions=(site,)))


def test_a_snapshot_without_cann_is_named_as_such(tmp_path):
    from ascenv.snapshot_io import snapshot_to_json

    bare = model.Snapshot(python=python_info())
    path = tmp_path / "laptop.json"
    path.write_text(json.dumps(snapshot_to_json(bare)))
    code, out, _ = run_cli(["triage", str(LABELLED / LOGS[0]), "--from", str(path), "--format", "json"], {})
    data = json.loads(out)
    assert code == 0 and data["machine"]["label"] == f"the machine of snapshot {path}"
    reasons = [v["reason"] for c in data["causes"] for v in c["verdicts"]]
    assert reasons and all(r.startswith("the snapshot's machine has no CANN") for r in reasons)


@pytest.mark.parametrize("numpy", ["2.0.2", "2.3.1"])
def test_the_users_numpy_on_a_machine_without_the_stack_decides_nothing(numpy):
    # a laptop with the user's own Python (not ascenv's) and numpy 2, no CANN, driver or NPU: the
    # failing program ran elsewhere
    laptop = model.Snapshot(python=python_info(numpy=numpy))
    result = triage(io.BytesIO(_payload(LABELLED / LOGS[2])), laptop, judged="this machine")
    numpy2 = next(c for c in result.causes if (c.detail or "").startswith("numpy2"))
    (verdict,) = numpy2.verdicts
    assert verdict.verdict == NOT_CHECKABLE and "has no CANN, NPU or Ascend driver" in verdict.reason
    assert numpy2.confirmed is None and not numpy2.evidence


@pytest.mark.live_host
@pytest.mark.skipif(os.path.exists("/usr/local/Ascend"), reason="this machine has CANN: nothing to show")
@pytest.mark.parametrize("name", LOGS)
def test_this_machine_from_the_command_line_decides_nothing(name):
    # `ascenv triage LOG` with no --root and no --python: this machine and the python3 on its PATH
    env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "")}
    code, out, err = run_cli(["triage", str(LABELLED / name), "--format", "json"], env)
    data = json.loads(out)
    if data["machine"]["ascend"]:
        pytest.skip("this machine has an Ascend stack")
    assert code == 0, err
    assert data["machine"]["label"].startswith("this machine")
    verdicts = _verdicts(data)
    assert verdicts and all(v["verdict"] == NOT_CHECKABLE and v["reason"] for v in verdicts), verdicts
    assert all(c["confirmed"] is None for c in data["causes"])
    _, human, _ = run_cli(["triage", str(LABELLED / name)], env)
    assert "judged on this machine: no CANN, no NPU or Ascend driver" in human
    assert "ruled out" not in human and "confirmed by" not in human


def test_a_fix_suggester_is_shown_never_judged(tmp_path):
    # ASC-DRIVER-CANN lists the CANN releases a driver allows: on CANN 8.5.0 with driver 24.1.0 it
    # said "ruled out: driver 24.1.0 allows CANN 8.2.RC1 … 8.0.0" beside ASC-CANN-DRIVER's
    # "confirmed: below minimum", a listing read as a test that passed
    from ascenv.checks import load_checks

    registry = load_checks()
    assert {c for c, info in registry.items() if info.suggests} == {"ASC-DRIVER-CANN", "ASC-TORCH-SUGGEST"}
    log = "[ERROR] RUNTIME(1234,python):2026-11-30-08:00:00.000.000 aclrtSetDevice failed, ErrCode=507033\n"
    result = triage(io.BytesIO(log.encode()), machine("driver_cann", tmp_path), compat.load())
    cause = next(c for c in result.causes if c.cause == "driver_cann_mismatch")
    assert "ASC-DRIVER-CANN" in cause.checks  # still listed for the user to run
    assert [(v.check, v.verdict) for v in cause.verdicts][:1] == [("ASC-CANN-DRIVER", "confirmed")]
    assert all(v.check not in ("ASC-DRIVER-CANN", "ASC-TORCH-SUGGEST") for c in result.causes for v in c.verdicts)


# --- a JIT front-end's kernels: which CANN they were built for (ASC-STACK-JIT) -----------------------
# Logs of a kernel fault that name no front-end, as the tilelang-ascend#334 log does: the machine
# decides whether its JIT front-end was made for the installed CANN. Variants the corpus does not
# hold: another fault code, a hang, a build of the JIT's launcher, a vLLM prefix and colours.
JIT_LOGS = {
    "aicore": (
        "\x1b[31m(EngineCore_DP0 pid=5120)\x1b[0m ERROR 01-14 09:38:40 [core.py:710] RuntimeError: "
        "ACL_ERROR_RT_AICORE_EXCEPTION: aicore exception, error code is 507015\n"
    ),
    "timeout": "[ERROR] RUNTIME(4043,python):2026-01-14-09:38:40 aicore execution times out, error code is 507014\n",
    "launcher": (
        "编译内核启动器失败:\n/root/.tilelang/cache/tmp/launcher.cpp:5:10: fatal error: "
        "experiment/runtime/runtime/rt.h: No such file or directory\n"
    ),
}


def _top(log: str, snapshot: model.Snapshot):
    result = triage(io.BytesIO(log.encode()), snapshot, compat.load())
    return result.causes[0], next(c for c in result.causes if c.cause == "framework_build_mismatch")


@pytest.mark.parametrize("kind", sorted(JIT_LOGS))
def test_a_jit_front_end_made_for_an_older_cann_confirms_its_kernels_fault(kind, tmp_path):
    top, _ = _top(JIT_LOGS[kind], machine("jit_frontend", tmp_path))
    assert (top.cause, top.confirmed) == ("framework_build_mismatch", True), top.detail
    (verdict,) = [v for v in top.verdicts if v.check == "ASC-STACK-JIT"]
    assert verdict.reason.startswith("tilelang 0.1.4 lacks what CANN 8.5.0 needs of it")


@pytest.mark.parametrize("kind", sorted(JIT_LOGS))
def test_a_jit_front_end_with_the_changes_rules_its_cann_out(kind, tmp_path):
    top, built = _top(JIT_LOGS[kind], machine("jit_frontend", tmp_path, jit_changes=("pr334", "pr346")))
    assert built.confirmed is False and top.cause != "framework_build_mismatch"
    assert [v.verdict for v in built.verdicts if v.check == "ASC-STACK-JIT"] == [RULED_OUT]


def test_without_a_jit_front_end_or_cann_the_build_is_not_checkable(tmp_path):
    # the healthy A2 host has CANN but no front-end; an empty root has neither
    _, built = _top(JIT_LOGS["aicore"], machine(None, tmp_path / "a2"))
    (verdict,) = [v for v in built.verdicts if v.check == "ASC-STACK-JIT"]
    assert verdict.verdict == NOT_CHECKABLE and "no JIT front-end whose sources ascenv reads" in verdict.reason
    (tmp_path / "empty").mkdir()
    empty = collect(Root(str(tmp_path / "empty")), {}, python=sys.executable, sought=compat.load().jit_strings)
    _, built = _top(JIT_LOGS["aicore"], empty)
    (verdict,) = [v for v in built.verdicts if v.check == "ASC-STACK-JIT"]
    assert verdict.verdict == NOT_CHECKABLE and "has no CANN" in verdict.reason


def test_a_front_end_of_ascenvs_own_interpreter_is_no_evidence(tmp_path):
    own = _own_python()
    site = own.distributions[0].location
    part = model.StackPart("tilelang", "0.1.4", f"{site}/tilelang", "METADATA", sought=("bishengir",), found=())
    snap = dataclasses.replace(machine("jit_frontend", tmp_path), python=own)
    assert describe(snap, "this machine", own_python=False).jit == ("tilelang",)
    assert describe(dataclasses.replace(snap, stack=(part,)), "this machine", own_python=True).jit == ()
    assert describe(dataclasses.replace(snap, stack=(part,)), "this machine", own_python=False).jit == ("tilelang",)


def test_only_the_build_of_cann_s_moved_runtime_header_is_judged_by_the_jit_front_end(tmp_path):
    # another CANN header missing from an application's build says nothing of the JIT front-end's
    # sources: its "written for another CANN" is not confirmed by an outdated checkout on the machine
    snapshot = machine("jit_frontend", tmp_path)
    for header in ("acl/acl.h", "aclnnop/aclnn_add.h", "hccl/hccl.h"):
        log = f"/src/app/main.cpp:3:10: fatal error: {header}: No such file or directory\n"
        _, built = _top(log, snapshot)
        assert built.confirmed is not True and "ASC-STACK-JIT" not in [v.check for v in built.verdicts], header
    # without a machine, rt.h's message is first CANN's environment not set, the old layout second
    result = triage(
        io.BytesIO("编译失败：fatal error: runtime/runtime/rt.h: 没有那个文件或目录\n".encode()), None, compat.load()
    )
    assert [c.cause for c in result.causes[:2]] == ["env_not_sourced", "framework_build_mismatch"]
