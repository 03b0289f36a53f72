"""`ascenv triage` end to end: formats, exit codes, --from/--root, bad input; `ascenv explain CODE`."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from ascenv.snapshot_io import snapshot_to_json
from tests.cli_helpers import run_cli
from tests.fixture_hosts import build_host, write_tilelang_checkout
from tests.triage.machines import machine

ERRORS = Path(__file__).parent.parent / "data" / "corpus" / "errors"
LABELLED = Path(__file__).parent.parent / "data" / "triage"
DCMI_LOG = ERRORS / "dcmi_-8020_device_used_-9005_drvRetCode87_507899_container.txt"
NNAL_LOG = LABELLED / "torch_npu_atb_libtbe_adapter_undefined-symbol_NNAL-version-mismatch_Ascend-pytorch-issue99.txt"


def triage_root(host_name: str, tmp_path, *extra: str):
    host = build_host(host_name, tmp_path)
    argv = ["triage", *extra, "--root", str(host.root), "--python", sys.executable]
    return run_cli(argv, host.environ)


def saved(snapshot, tmp_path) -> str:
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(snapshot_to_json(snapshot)))
    return str(path)


def test_json_on_the_faulty_container(tmp_path):
    code, out, err = triage_root("container-no-devices", tmp_path, str(DCMI_LOG), "--format", "json")
    assert code == 1, err
    data = json.loads(out)
    assert data["schema"] == 1 and data["exit_code"] == 1 and data["checked"] is True and data["recognised"] is True
    first = data["causes"][0]
    assert set(first) >= {"cause", "layer", "lines", "checks", "confirmed", "fix"}
    assert first["cause"] == "device_busy" and first["confirmed"] is True and first["layer"] == "npu"
    assert "ASC-NPU-SMI" in first["checks"]
    assert any("ret is -8020" in line["text"] for line in first["lines"])
    assert {s["id"] for s in data["signatures"]} >= {"dcmi-device-used", "dcmi-board-type", "driver-no-device"}
    assert data["findings"] == []


def test_exit_0_when_the_machine_confirms_nothing(tmp_path):
    code, out, _ = triage_root("a2-cann800", tmp_path, str(DCMI_LOG), "--format", "json")
    data = json.loads(out)
    assert code == 0 and not any(c["confirmed"] for c in data["causes"])
    busy = next(c for c in data["causes"] if c["cause"] == "device_busy")
    assert busy["confirmed"] is False  # npu-smi answers on this host


def test_from_snapshot(tmp_path):
    snapshot = saved(machine("torch_npu_cann", tmp_path / "m"), tmp_path)
    code, out, err = run_cli(["triage", str(NNAL_LOG), "--from", snapshot, "--format", "json"], {})
    assert code == 1, err
    first = json.loads(out)["causes"][0]
    assert first["cause"] == "torch_npu_cann_mismatch" and first["confirmed"] is True
    assert any(e.startswith("ASC-TORCH-CANN: torch_npu 2.7.1 with CANN 9.0.0") for e in first["evidence"])


def test_human_names_the_confirming_check_and_the_fix(tmp_path):
    snapshot = saved(machine("torch_npu_cann", tmp_path / "m"), tmp_path)
    code, out, _ = run_cli(["triage", str(NNAL_LOG), "--from", snapshot], {})
    assert code == 1
    assert (
        "1. torch_npu_cann_mismatch — NNAL (ATB) release does not match torch_npu  (cann)  "
        "confirmed by ASC-TORCH-CANN" in out
    )
    assert "fix:     install the torch_npu release validated with this CANN (and the NNAL of the same CANN" in out
    assert "1 cause confirmed on the machine of snapshot" in out


def test_markdown(tmp_path):
    snapshot = saved(machine(None, tmp_path / "m"), tmp_path)
    code, out, _ = run_cli(["triage", str(NNAL_LOG), "--from", snapshot, "--format", "markdown"], {})
    assert code == 0
    assert out.startswith("### ascenv triage: ")
    assert "| 1 | torch_npu_cann_mismatch (NNAL (ATB) release does not match torch_npu) | cann | ✅ ruled out |" in out
    assert "version mismatch between NNAL and torch_npu" in out


def test_markdown_of_a_log_no_signature_knows_fences_its_last_error(tmp_path):
    # the quoted line may hold backticks (a FAQ's markdown): a code span would break, a fence does not
    log = tmp_path / "faq.log"
    log.write_text("**Symptom**: `RuntimeError: tp_size exceeds num_key_value_heads`\n")
    snapshot = saved(machine(None, tmp_path / "m"), tmp_path)
    code, out, _ = run_cli(["triage", str(log), "--from", snapshot, "--format", "markdown"], {})
    assert code == 0
    assert "ranked `other` (the program's own error)" in out
    quoted = "**Symptom**: `RuntimeError: tp_size exceeds num_key_value_heads`"
    assert f"Its last error (line 1):\n\n```\n{quoted}\n```" in out


def test_no_signature_reports_the_doctor_errors(tmp_path):
    log = tmp_path / "ok.log"
    log.write_text("INFO 04-23 09:25:10 [__init__.py:44] plugin ascend loaded.\nValueError: bad --tp-size\n")
    code, out, _ = triage_root("two-canns-dangling-latest", tmp_path, str(log), "--format", "json")
    data = json.loads(out)
    # no signature: ranked `other`, the program's own last error quoted, nothing to confirm
    [unrecognised] = data["causes"]
    assert data["recognised"] is False
    assert unrecognised["cause"] == "other" and unrecognised["signatures"] == [] and data["signatures"] == []
    assert unrecognised["lines"] == [{"text": "ValueError: bad --tp-size", "count": 1, "line": 2}]
    assert unrecognised["confirmed"] is None and unrecognised["verdicts"] == []
    assert {f["id"] for f in data["findings"]} >= {"ASC-ENV-SOURCED", "ASC-CANN-LINK"}
    assert code == 1  # the doctor finds errors
    code, out, _ = triage_root("nonroot-home", tmp_path / "b", str(log))
    assert code == 0
    assert "no error of the Ascend stack recognised in this log: ranked other" in out
    assert "none: the doctor finds nothing wrong" in out
    assert "last error: ValueError: bad --tp-size (line 2)" in out


def test_stdin(tmp_path, monkeypatch):
    snapshot = saved(machine(None, tmp_path / "m"), tmp_path)

    class Stdin:
        buffer = open(DCMI_LOG, "rb")  # closed below

        @staticmethod
        def isatty() -> bool:
            return False

    monkeypatch.setattr(sys, "stdin", Stdin)
    try:
        code, out, _ = run_cli(["triage", "-", "--from", snapshot, "--format", "json"], {})
    finally:
        Stdin.buffer.close()
    assert code == 0 and json.loads(out)["causes"][0]["cause"] == "device_busy"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["triage", "missing.log", "--from", "SNAP"], "missing.log: no such file"),
        (["triage", ".", "--from", "SNAP"], ". is a directory, not a log file"),
        (["triage", "x.log", "--from", "SNAP", "--root", "/tmp"], "--from and --root both name the machine"),
    ],
)
def test_bad_input_is_exit_2(tmp_path, argv, message):
    snapshot = saved(machine(None, tmp_path / "m"), tmp_path)
    argv = [snapshot if a == "SNAP" else a for a in argv]
    code, out, err = run_cli(argv, {}, cwd=tmp_path)
    assert code == 2 and message in err and "Traceback" not in err


def test_empty_log(tmp_path):
    snapshot = saved(machine(None, tmp_path / "m"), tmp_path)
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    code, out, _ = run_cli(["triage", str(empty), "--from", snapshot, "--format", "json"], {})
    data = json.loads(out)
    assert code == 0 and data["input"] == {"bytes": 0, "lines": 0, "binary": False} and data["causes"] == []


def test_binary_log_said_so(tmp_path):
    snapshot = saved(machine(None, tmp_path / "m"), tmp_path)
    blob = tmp_path / "core"
    blob.write_bytes(bytes(range(256)) * 4000)
    code, out, _ = run_cli(["triage", str(blob), "--from", snapshot], {})
    assert code == 0 and "(binary data: scanned as text)" in out


def test_repeated_errors_are_one_quoted_line(tmp_path):
    snapshot = saved(machine(None, tmp_path / "m"), tmp_path)
    log = tmp_path / "loop.log"
    line = "[rank{}]: EL0004: Failed to allocate memory.\n"
    log.write_text("".join(line.format(i % 8) for i in range(20_000)))
    code, out, _ = run_cli(["triage", str(log), "--from", snapshot], {})
    assert out.count("EL0004") == 1
    assert "log:     EL0004: Failed to allocate memory. (×20000, first at line 1)" in out


def test_explain_error_code():
    code, out, _ = run_cli(["explain", "ez1001"], {})
    assert code == 0
    assert out.startswith("EZ1001  (kernels) aclnn could not read binary_info_config.json")
    assert "kernels_missing" in out and "https://github.com/vllm-project/vllm-ascend/issues/573" in out
    code, out, _ = run_cli(["explain", "507899", "--format", "json"], {})
    data = json.loads(out)
    assert code == 0 and data["code"] == "507899" and data["signatures"][0]["causes"][0]["cause"] == "device_busy"


def test_explain_check_ids_unchanged():
    code, out, _ = run_cli(["explain", "ASC-NPU-SMI"], {})
    assert code == 0 and out.startswith("ASC-NPU-SMI  (npu)")
    code, _, err = run_cli(["explain", "EZ4242"], {})
    assert code == 2 and "EZ4242 is not an error code triage's table knows" in err


def test_both_faults_of_the_container_confirmed_in_order(tmp_path):
    snapshot = saved(machine("container", tmp_path / "m"), tmp_path)
    _, out, _ = run_cli(["triage", str(DCMI_LOG), "--from", snapshot, "--format", "json"], {})
    causes = json.loads(out)["causes"]
    assert [(c["cause"], c["confirmed"]) for c in causes][:2] == [("device_busy", True), ("container_no_device", True)]


def test_missing_log_fails_before_the_probe(tmp_path):
    calls = []

    def run(argv, **kwargs):
        calls.append(argv)
        raise AssertionError("probed")

    import io

    from ascenv import cli
    from ascenv.commands._common import Context
    from ascenv.output import Output

    err = io.StringIO()
    ctx = Context(
        environ={}, out=Output("human", stdout=io.StringIO(), stderr=err, color=False), run=run, cwd=str(tmp_path)
    )
    assert cli.main(["triage", "nope.log"], ctx=ctx) == 2 and not calls
    assert "nope.log: no such file" in err.getvalue()


def test_stdin_terminal_is_a_usage_error(monkeypatch):
    class Terminal:
        @staticmethod
        def isatty() -> bool:
            return True

    monkeypatch.setattr(sys, "stdin", Terminal)
    code, _, err = run_cli(["triage", "--from", "x.json"], {})
    assert code == 2 and "no log given" in err


@pytest.mark.parametrize("content", [""])
def test_an_empty_log_is_called_empty_not_a_healthy_stack(tmp_path, content):
    log = tmp_path / "empty.log"
    log.write_text(content)
    code, out, _ = triage_root("nonroot-home", tmp_path, str(log))
    said = " ".join(out.split())
    assert code == 0 and "the log is empty: nothing to triage" in said and "2>&1" in said
    assert "nothing wrong" not in said


def test_no_signature_on_a_machine_without_a_stack_says_there_is_nothing_to_judge(tmp_path):
    log = tmp_path / "ok.log"
    log.write_text("INFO plugin loaded\nall good\n")
    empty = tmp_path / "empty-root"
    empty.mkdir()
    bare = tmp_path / "bare-root"
    (bare / "usr" / "local" / "Ascend").mkdir(parents=True)  # the directory, nothing installed in it
    for argv in (["--root", str(empty)], ["--root", str(bare)]):
        code, out, err = run_cli(["triage", str(log), *argv], {"PATH": os.environ.get("PATH", "")}, tmp_path)
        said = " ".join(out.split())
        assert code == 0, err
        assert "has no Ascend stack to judge" in said and "--from SNAPSHOT" in said, said
        assert "nothing wrong" not in said


def test_a_context_line_is_shown_with_the_cause_it_raised(tmp_path):
    # a JIT front-end's frame (jit-frontend, a boost signature) raises "built for another CANN"
    # for a kernel fault it does not itself quote: both outputs say which line raised it
    log, empty = tmp_path / "jit.log", tmp_path / "empty-root"
    empty.mkdir()
    log.write_text(
        '  File "/opt/py/site-packages/triton/backends/ascend/compiler.py", line 9, in make_npubin\n'
        "[ERROR] RUNTIME: aicore exception on stream 2, error code 507015\n",
        encoding="utf-8",
    )
    code, out, _ = run_cli(["triage", str(log), "--root", str(empty), "--format", "json"], {})
    top = json.loads(out)["causes"][0]
    assert top["cause"] == "framework_build_mismatch", top
    assert [g["line"] for g in top["context"]] == [1] and [g["line"] for g in top["lines"]] == [2]
    code, out, _ = run_cli(["triage", str(log), "--root", str(empty)], {})
    assert "context: File" in out and "compiler.py" in out
    # without the front-end the kernel's own fault is first and no cause lists a context line
    log.write_text("[ERROR] RUNTIME: aicore exception on stream 2, error code 507015\n", encoding="utf-8")
    causes = json.loads(run_cli(["triage", str(log), "--root", str(empty), "--format", "json"], {})[1])["causes"]
    assert causes[0]["cause"] == "other" and all(c["context"] == [] for c in causes)


TILELANG_LOG = next(LABELLED.glob("tilelang-ascend_RuntimeError-SUSPECT-REMOTE-ERROR*.txt"))


def test_a_jit_checkout_on_the_users_pythonpath_decides_the_tilelang_log(tmp_path):
    # the user's PYTHONPATH names the checkout inside --root, as tilelang-ascend's install script sets it
    host = build_host("a3-cann850", tmp_path)
    environ = {**host.environ, "PYTHONPATH": write_tilelang_checkout(Path(host.root))}
    argv = ["triage", str(TILELANG_LOG), "--root", str(host.root), "--python", sys.executable, "--format", "json"]
    code, out, err = run_cli(argv, environ)
    first = json.loads(out)["causes"][0]
    assert (first["cause"], first["confirmed"]) == ("framework_build_mismatch", True), err
    (verdict,) = [v for v in first["verdicts"] if v["check"] == "ASC-STACK-JIT"]
    assert verdict["verdict"] == "confirmed" and "tilelang 0.1.4 lacks what CANN 8.5.0 needs" in verdict["reason"]
    # the snapshot a user sends records what was read, and decides the same elsewhere
    argv = ["snapshot", "--root", str(host.root), "--python", sys.executable, "-o", "-"]
    code, snapshot, err = run_cli(argv, environ)
    path = tmp_path / "snap.json"
    path.write_text(snapshot)
    code, out, _ = run_cli(["triage", str(TILELANG_LOG), "--from", str(path), "--format", "json"], {})
    assert json.loads(out)["causes"][0]["confirmed"] is True
