"""The probe against hostile helpers, end to end: an npu-smi or a target Python that floods its
output, hangs per NPU, forks daemons, or is running when ascenv is interrupted.

Memory is the child's max RSS (``getrusage(RUSAGE_CHILDREN)`` of a wrapper that runs one
``ascenv snapshot``, so no other test's children count); every process a fake started is checked
by pid afterwards.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ascenv.probe.npu as npu_probe
import ascenv.probe.python as python_probe
from ascenv.probe.fs import Root
from ascenv.probe.snapshot import collect
from tests.fixture_hosts import (
    all_gone,
    build_host,
    daemon_then,
    flooding_program,
    hang_after_info,
    hanging_program,
    pids_in,
    write_script,
)

GIB = 1 << 30
# The wrapper caps the address space: without a bound on captured output, the run fails with
# MemoryError instead of taking the machine's memory (the shared test machine must survive today's code).
_MEASURE = """
import json, resource, subprocess, sys
limit = int(sys.argv[1])
def cap():
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
done = subprocess.run(sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=cap)
print(json.dumps({"code": done.returncode, "maxrss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
                  "stderr": done.stderr.decode()[-2000:]}))
"""


def ascenv_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "ascenv", *args]


def measured_snapshot(host_root: Path, bin_dir: Path, tmp_path: Path, python: str = sys.executable) -> dict:
    """``ascenv snapshot -o snap.json`` with ``bin_dir`` first on PATH, in a child capped at 2 GiB;
    the wrapper's report, with the snapshot's JSON as "snapshot" (None when none was written)."""
    argv = ascenv_argv("snapshot", "--root", str(host_root), "--python", python, "-o", "snap.json")
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(2 * GIB), *argv], env=env, cwd=tmp_path, capture_output=True, timeout=300
    )
    result = json.loads(out.stdout)
    written = tmp_path / "snap.json"
    result["snapshot"] = json.loads(written.read_text()) if written.exists() else None
    return result


# A snapshot of a fixture machine with a well-behaved npu-smi stays under this; today's unbounded
# capture needed 1.9 GB for a 30 MB flood on stderr.
RSS_BOUND_KIB = 200 * 1024


@pytest.mark.parametrize(
    "stream, size",
    [("stdout", 1 * GIB), ("stderr", 300_000_000)],  # the report's floods: gigabytes, and 300 MB of errors
)
def test_flooding_npu_smi_is_read_in_bounded_memory(tmp_path, stream, size):
    host = build_host("a2-cann800", tmp_path)
    flooding_program(tmp_path / "flood" / "npu-smi", size, stream)
    result = measured_snapshot(host.root, tmp_path / "flood", tmp_path)
    assert result["code"] == 0, result["stderr"]
    assert result["maxrss_kib"] < RSS_BOUND_KIB
    errors = result["snapshot"]["npu"]["errors"]
    assert {"kind": "truncated", "stream": stream} == {
        "kind": errors[-1]["kind"],
        "stream": "stderr" if "on stderr" in errors[-1]["message"] else "stdout",
    }


def test_flooding_target_python_is_read_in_bounded_memory(tmp_path):
    host = build_host("a2-cann800", tmp_path)
    python = flooding_program(tmp_path / "python3", 400_000_000, line="x" * 200, status=0)
    result = measured_snapshot(host.root, host.bin, tmp_path, python=str(python))
    assert result["code"] == 0, result["stderr"]
    assert result["maxrss_kib"] < RSS_BOUND_KIB
    (error,) = result["snapshot"]["python"]["errors"]
    assert error["kind"] == "too-large"


@pytest.mark.parametrize("name", ["a2-cann800", "a3-cann850"])
def test_npu_smi_hung_after_info_costs_one_timeout(tmp_path, monkeypatch, name):
    """The report's M6 reproducer: `info` answers with the machine's table, every other query hangs
    (8 NPUs: 135 s with 15 s timeouts). Here with 1 s timeouts: one of them, not nine."""
    host = build_host(name, tmp_path)
    pids = tmp_path / "pids"
    hang_after_info(tmp_path / "hang" / "npu-smi", host.bin / "npu-smi", pids)
    monkeypatch.setattr(npu_probe, "TIMEOUT", 1.0)
    environ = dict(host.environ, PATH=f"{tmp_path / 'hang'}:{host.environ['PATH']}", HOME="/root")
    start = time.monotonic()
    snap = collect(Root(host.root), environ, python=sys.executable)
    assert time.monotonic() - start < 6  # nine timeouts would be 9 s
    assert snap.npu.chips and [e.kind for e in snap.npu.errors] == ["timeout", "skipped"]
    assert pids_in(pids) and all_gone(pids_in(pids))


def test_the_whole_probe_has_one_deadline(tmp_path, monkeypatch):
    """npu-smi and the target Python both hang: the probe ends at its deadline, not at the sum
    (or the larger) of their own timeouts."""
    host = build_host("a2-cann800", tmp_path)
    pids = tmp_path / "pids"
    hanging_program(tmp_path / "hang" / "npu-smi", pids)
    python = hanging_program(tmp_path / "python3", pids)
    monkeypatch.setattr(npu_probe, "TIMEOUT", 60.0)
    monkeypatch.setattr(python_probe, "TIMEOUT", 60.0)
    environ = dict(host.environ, PATH=f"{tmp_path / 'hang'}:{host.environ['PATH']}", HOME="/root")
    start = time.monotonic()
    snap = collect(Root(host.root), environ, python=str(python), budget=1.5)
    assert time.monotonic() - start < 5
    assert [e.kind for e in snap.npu.errors] == ["timeout"]
    assert [e.kind for e in snap.python.errors] == ["timeout"]
    assert len(pids_in(pids)) == 4 and all_gone(pids_in(pids))


def test_a_forking_npu_smi_neither_slows_the_probe_nor_leaves_daemons(tmp_path):
    """The report's daemon variant: every call starts a sleep that keeps the pipes open, then
    answers normally (150 s and 10 sleeps left behind)."""
    host = build_host("a2-cann800", tmp_path)
    pids = tmp_path / "pids"
    daemon_then(tmp_path / "fork" / "npu-smi", pids, f'exec "{host.bin / "npu-smi"}" "$@"')
    environ = dict(host.environ, PATH=f"{tmp_path / 'fork'}:{host.environ['PATH']}", HOME="/root")
    plain = collect(Root(host.root), dict(host.environ, HOME="/root"), python=sys.executable)
    start = time.monotonic()
    snap = collect(Root(host.root), environ, python=sys.executable)
    assert time.monotonic() - start < 10
    # the same answers as without the daemons (the fixture records no board query: those fail)
    assert snap.npu.chips == plain.npu.chips and len(snap.npu.chip_map) == len(plain.npu.chip_map) > 0
    assert [e.kind for e in snap.npu.errors] == [e.kind for e in plain.npu.errors] == ["exit-status"] * 8
    assert len(pids_in(pids)) == 10 and all_gone(pids_in(pids))


# --- signals while the probe's helpers run ---------------------------------------------------------


def _start_doctor(tmp_path: Path, *, hang_npu_smi: bool) -> tuple[subprocess.Popen, Path]:
    host = build_host("a2-cann800", tmp_path)
    pids = tmp_path / "pids"
    bin_dir = host.bin
    if hang_npu_smi:
        bin_dir = tmp_path / "hang"
        hanging_program(bin_dir / "npu-smi", pids)
    python = hanging_program(tmp_path / "hang.sh", pids)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", PYTHONDONTWRITEBYTECODE="1")
    # its own session, as a supervisor starts it: the signal goes to ascenv alone, not to a group
    child = subprocess.Popen(
        ascenv_argv("doctor", "--root", str(host.root), "--python", str(python)),
        env=env,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    expected = 4 if hang_npu_smi else 2
    deadline = time.monotonic() + 30
    while len(pids_in(pids)) < expected and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(pids_in(pids)) == expected, "the fake helpers did not start"
    return child, pids


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("hang_npu_smi", [True, False], ids=["npu-smi-and-python-hang", "python-hangs"])
def test_a_signal_during_the_probe_exits_130_at_once_and_leaves_nothing(tmp_path, signum, hang_npu_smi):
    child, pids = _start_doctor(tmp_path, hang_npu_smi=hang_npu_smi)
    start = time.monotonic()
    os.kill(child.pid, signum)
    try:
        _, stderr = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    # was 18.7 s (the probe thread waited out its 20 s timeout); generous for a loaded CI machine
    assert time.monotonic() - start < 10
    assert child.returncode == 130 and b"interrupted" in stderr
    assert all_gone(pids_in(pids))


def test_sigterm_handling_is_restored_after_the_probe(tmp_path):
    host = build_host("nonroot-home", tmp_path)
    before = signal.getsignal(signal.SIGTERM)
    collect(
        Root(host.root), dict(host.environ, HOME="/home/dev"), python=str(write_script(tmp_path / "py", "exit 1\n"))
    )
    assert signal.getsignal(signal.SIGTERM) is before


# --- what held before, kept: a hang costs its own timeout once; odd output becomes findings -------


def test_a_hung_npu_smi_costs_its_timeout_once(tmp_path, monkeypatch):
    host = build_host("a2-cann800", tmp_path)
    hanging_program(tmp_path / "hang" / "npu-smi", tmp_path / "pids")
    monkeypatch.setattr(npu_probe, "TIMEOUT", 1.0)
    environ = dict(host.environ, PATH=f"{tmp_path / 'hang'}:{host.environ['PATH']}", HOME="/root")
    start = time.monotonic()
    snap = collect(Root(host.root), environ, python=sys.executable)
    assert 1.0 <= time.monotonic() - start < 4
    assert [e.kind for e in snap.npu.errors] == ["timeout"]  # `info` hung: nothing else was asked
    assert snap.python.errors == () and snap.python.version  # the other helper is not affected


def test_a_hung_target_python_costs_its_timeout_alongside_npu_smi(tmp_path, monkeypatch):
    host = build_host("a2-cann800", tmp_path)
    python = hanging_program(tmp_path / "python3", tmp_path / "pids")
    monkeypatch.setattr(python_probe, "TIMEOUT", 1.5)
    start = time.monotonic()
    snap = collect(Root(host.root), dict(host.environ, HOME="/root"), python=str(python))
    assert 1.5 <= time.monotonic() - start < 4.5
    assert [e.kind for e in snap.python.errors] == ["timeout"]
    assert len(snap.npu.chips) == 8


def test_binary_output_becomes_findings_not_failures(tmp_path):
    host = build_host("a2-cann800", tmp_path)
    noise = "printf '\\000\\377\\033[2J\\001binary\\376\\n'"
    write_script(tmp_path / "odd" / "npu-smi", f"{noise}\nhead -c 100000 /dev/urandom\n")
    python = write_script(tmp_path / "python3", f"{noise}\nhead -c 100000 /dev/urandom\n")
    environ = dict(host.environ, PATH=f"{tmp_path / 'odd'}:{host.environ['PATH']}", HOME="/root")
    snap = collect(Root(host.root), environ, python=str(python))
    assert snap.errors == ()  # no probe crashed
    assert snap.npu.chips == () and [e.kind for e in snap.npu.errors] == ["parse"]
    assert [e.kind for e in snap.python.errors] == ["parse"]
