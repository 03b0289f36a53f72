"""probe_npu against a fake ``npu-smi`` on PATH that prints recorded captures."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import pytest

from ascenv import proc
from ascenv.probe.npu import probe_npu
from tests.conftest import CORPUS, load_capture
from tests.fixture_hosts import all_gone, pids_in

INFO = CORPUS / "npu_smi" / "910b4_atlas800IA2_25.0.rc1.1_8npu_noproc_blog-800IA2-driver-install.txt"
CHIP_MAP = CORPUS / "other_cmds" / "npu-smi_info_-m_910b4_atlas800IA2_blog.txt"  # same machine as INFO
BOARD = CORPUS / "npu_smi" / "from_ascend_deployer_5.txt"
BUSY = CORPUS / "errors" / "container_-8020_then_collect_env_drvRet87_507899_unknowsoctype_vllm-ascend-issue632.txt"


def fake_npu_smi(tmp_path: Path, cases: str, captures: Optional[dict[str, Path]] = None) -> tuple[str, Path]:
    """A directory holding an ``npu-smi`` shell script; returns (PATH string, call log)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, source in (captures or {}).items():
        (tmp_path / name).write_text(load_capture(source))
    log = tmp_path / "calls"
    script = bin_dir / "npu-smi"
    script.write_text(f'#!/bin/sh\nD="{tmp_path}"\necho "$*" >> "$D/calls"\ncase "$*" in\n{cases}\nesac\n')
    script.chmod(0o755)
    return str(bin_dir), log


RECORDED = """
"info") cat "$D/info" ;;
"info -m") cat "$D/map" ;;
"info -t board -i 7") echo "Invalid card id."; echo "Error parameter of -i"; exit 1 ;;
"info -t board -i "*) cat "$D/board" ;;
*) echo "Command or option is not found."; exit 1 ;;
"""


def test_recorded_machine(tmp_path: Path) -> None:
    path, log = fake_npu_smi(tmp_path, RECORDED, {"info": INFO, "map": CHIP_MAP, "board": BOARD})
    info = probe_npu(proc.run, path)
    assert info.source == f"{path}/npu-smi info"
    assert (info.npu_smi_version, info.driver_version, info.layout) == ("25.0.rc1.1", "25.0.rc1.1", "F3")
    assert [c.npu for c in info.chips] == list(range(8))
    assert {c.name for c in info.chips} == {"910B4"}
    assert [e.logic_id for e in info.chip_map if e.name == "Ascend 910B4"] == list(range(8))
    # the recorded board answer for NPUs 0..6; NPU 7's query fails and is recorded, not fatal
    assert [b.npu for b in info.boards] == list(range(7))
    assert {(b.software_version, b.firmware_version, b.compatibility) for b in info.boards} == {
        ("24.1.0.b062", "7.5.0.2.220", "OK")
    }
    assert [(e.kind, e.code, e.source) for e in info.errors] == [
        ("invalid-argument", "Invalid card id", f"{path}/npu-smi info -t board -i 7")
    ]
    assert log.read_text().splitlines() == ["info", "info -m"] + [f"info -t board -i {n}" for n in range(8)]


def test_device_busy_stops_after_the_first_query(tmp_path: Path) -> None:
    # the two npu-smi lines of vllm-ascend#632, then a non-zero exit
    busy = "\n".join(load_capture(BUSY).splitlines()[1:3])
    path, log = fake_npu_smi(tmp_path, f'*) printf "%s\\n" "{busy}"; exit 255 ;;')
    info = probe_npu(proc.run, path)
    assert info.chips == () and info.boards == () and info.chip_map == ()
    assert [(e.kind, e.code) for e in info.errors] == [("device-busy", "-8020")]
    assert info.errors[0].message == "dcmi model initialized failed, because the device is used. ret is -8020"
    assert log.read_text().splitlines() == ["info"]


def test_hanging_npu_smi_times_out(tmp_path: Path) -> None:
    path, log = fake_npu_smi(tmp_path, "*) exec sleep 30 ;;")
    start = time.monotonic()
    info = probe_npu(proc.run, path, timeout=0.5)
    assert time.monotonic() - start < 10
    assert [e.kind for e in info.errors] == ["timeout"]
    assert "did not answer within" in info.errors[0].message
    assert log.read_text().splitlines() == ["info"]


def test_missing_npu_smi(tmp_path: Path) -> None:
    info = probe_npu(proc.run, str(tmp_path))
    assert info.chips == ()
    (error,) = info.errors
    assert (error.probe, error.kind) == ("npu-smi", "not-found")
    assert "not on PATH" in error.message
    assert "-v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi" in error.message


def test_unknown_failure_is_described(tmp_path: Path) -> None:
    path, _ = fake_npu_smi(tmp_path, '*) echo "something odd"; exit 3 ;;')
    (error,) = probe_npu(proc.run, path).errors
    assert error.kind == "exit-status"
    assert "exited 3" in error.message and "something odd" in error.message


def test_sub_query_timeouts_are_recorded(tmp_path: Path) -> None:
    cases = '"info") cat "$D/info" ;;\n*) exec sleep 30 ;;'
    path, log = fake_npu_smi(
        tmp_path, cases, {"info": CORPUS / "npu_smi" / "910b4-1_25.2.2_2npu_VLLMWorker_TP_vllm-ascend-issue5606.txt"}
    )
    info = probe_npu(proc.run, path, timeout=0.3)
    assert len(info.chips) == 2 and len(info.processes) == 2
    # info -m hangs: the board queries go through the same driver, they are skipped, not waited for
    assert [e.kind for e in info.errors] == ["timeout", "skipped"]
    assert info.errors[1].message == (
        f"not run after a query timed out: {path}/npu-smi info -t board -i 0, {path}/npu-smi info -t board -i 1"
    )
    assert log.read_text().splitlines() == ["info", "info -m"]


EIGHT_NPUS = {"info": INFO, "map": CHIP_MAP, "board": BOARD}


@pytest.mark.parametrize(
    "hangs, calls",
    [
        ('"info -m")', ["info", "info -m"]),  # the chip map hangs
        ('"info -t board -i 0")', ["info", "info -m", "info -t board -i 0"]),  # the first board
        ('"info -t board -i 5")', ["info", "info -m"] + [f"info -t board -i {n}" for n in range(6)]),
    ],
)
def test_one_hung_query_costs_one_timeout_not_one_per_npu(tmp_path: Path, hangs: str, calls: list) -> None:
    path, log = fake_npu_smi(tmp_path, f"{hangs} exec sleep 30 ;;\n{RECORDED}", EIGHT_NPUS)
    start = time.monotonic()
    info = probe_npu(proc.run, path, timeout=1.0)
    assert time.monotonic() - start < 4  # today: one timeout per remaining NPU (8 x 1 s)
    assert len(info.chips) == 8
    assert [e.kind for e in info.errors].count("timeout") == 1 and info.errors[-1].kind == "skipped"
    assert log.read_text().splitlines() == calls


def test_slow_queries_share_one_deadline(tmp_path: Path) -> None:
    # every query answers, each after 0.4 s: ten of them would take 4 s, the budget is 1.5 s
    slow = RECORDED.replace(") cat", ") sleep 0.4; cat")
    path, log = fake_npu_smi(tmp_path, slow, EIGHT_NPUS)
    start = time.monotonic()
    info = probe_npu(proc.run, path, timeout=15.0, deadline=proc.Deadline(1.5))
    assert time.monotonic() - start < 2.5
    assert len(info.chips) == 8  # what answered in time is kept
    assert info.errors[-1].kind == "skipped" and "npu-smi info -t board -i 7" in info.errors[-1].message
    assert len(log.read_text().splitlines()) < 10


def test_an_expired_deadline_runs_nothing(tmp_path: Path) -> None:
    path, log = fake_npu_smi(tmp_path, RECORDED, EIGHT_NPUS)
    info = probe_npu(proc.run, path, deadline=proc.Deadline(0))
    assert [e.kind for e in info.errors] == ["skipped"] and not log.exists()


def test_a_hung_query_leaves_no_process_behind(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    path, _ = fake_npu_smi(tmp_path, f'*) sleep 100000 & echo "$$ $!" >> "{pids}"; wait ;;')
    info = probe_npu(proc.run, path, timeout=0.5)
    assert [e.kind for e in info.errors] == ["timeout"]
    assert len(pids_in(pids)) == 2 and all_gone(pids_in(pids))


@pytest.mark.parametrize("stream", ["", ">&2"])
def test_flooded_output_is_cut_and_said_to_be(tmp_path: Path, stream: str) -> None:
    # the real table, then far more than any npu-smi prints (on stdout, or the loader's stderr)
    cases = f'"info") cat "$D/info"; yes "garbage line" | head -c 30000000 {stream} ;;\n{RECORDED}'
    path, _ = fake_npu_smi(tmp_path, cases, EIGHT_NPUS)
    info = probe_npu(proc.run, path)
    assert len(info.chips) == 8  # the head is real data and is kept
    (cut,) = [e for e in info.errors if e.kind == "truncated"]
    stream_name = "stderr" if stream else "stdout"
    assert cut.message == (
        f"{path}/npu-smi info printed more than {proc.OUTPUT_LIMIT >> 20} MiB on {stream_name}: only the first "
        f"{proc.OUTPUT_LIMIT >> 20} MiB were read, the rest of what it said is unknown"
    )
    assert cut.source == f"{path}/npu-smi info"


def test_flooded_error_output_is_still_recognised(tmp_path: Path) -> None:
    busy = "\n".join(load_capture(BUSY).splitlines()[1:3])
    path, log = fake_npu_smi(tmp_path, f'*) printf "%s\\n" "{busy}"; yes "{busy}" | head -c 30000000; exit 255 ;;')
    info = probe_npu(proc.run, path)
    assert [(e.kind, e.code) for e in info.errors] == [("device-busy", "-8020"), ("truncated", None)]
    assert log.read_text().splitlines() == ["info"]


@pytest.mark.parametrize("signal_name", ["SEGV", "ABRT"])
def test_a_crash_is_named_by_its_signal(tmp_path: Path, signal_name: str) -> None:
    path, _ = fake_npu_smi(tmp_path, f"*) kill -{signal_name} $$ ;;")
    (error,) = probe_npu(proc.run, path).errors
    assert error.kind == "exit-status"
    assert f"killed by SIG{signal_name}" in error.message and "exited -" not in error.message
