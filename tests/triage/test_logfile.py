"""Inputs that never end are refused or bounded (T2), and prefix stripping is linear (T1)."""

from __future__ import annotations

import io
import os
import threading
import time

import pytest

from ascenv import errors
from ascenv.triage import Bounded, load, open_log, scan
from ascenv.triage.scan import clean_line
from tests.cli_helpers import run_cli


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/null"])
def test_a_device_is_refused_at_once(device):
    if not os.path.exists(device):
        pytest.skip(f"no {device}")
    started = time.monotonic()
    code, _, err = run_cli(["triage", device, "--from", "nothing.json"], {})
    assert code == 2 and "is a character device, not a log file" in err and "Traceback" not in err
    assert time.monotonic() - started < 30


def test_fifo_without_a_writer_fails_instead_of_hanging(tmp_path):
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    started = time.monotonic()
    with pytest.raises(errors.InputError, match="no process wrote to this FIFO within 0.3 s"):
        open_log(str(fifo), "log.fifo", writer_wait=0.3)
    assert time.monotonic() - started < 20  # generous: a loaded 2-core machine


@pytest.mark.parametrize("late", [0.0, 0.2])
def test_fifo_with_a_writer_is_read_whole(tmp_path, late):
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    payload = b"EL0004: Failed to allocate memory.\n" * 5000 + b"done\n"

    def write() -> None:
        time.sleep(late)
        with open(fifo, "wb") as sink:
            sink.write(payload)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        with open_log(str(fifo), "log.fifo", writer_wait=20) as stream:
            data = b""
            while chunk := stream.read(4096):
                data += chunk
    finally:
        writer.join()
    assert data == payload


@pytest.mark.parametrize("limit, size", [(10, 11), (1000, 5000), (1 << 20, (1 << 20) + 1)])
def test_bounded_reader_refuses_past_its_limit(limit, size):
    stream = Bounded(io.BytesIO(b"x" * size), limit, "big.log")
    with pytest.raises(errors.InputError, match=f"longer than {limit} bytes"):
        while stream.read(4096):
            pass


def test_bounded_reader_passes_what_fits(tmp_path):
    log = tmp_path / "ok.log"
    log.write_bytes(b"EZ3002 no kernel\n" * 100)
    with open_log(str(log), "ok.log", max_bytes=1700) as stream:
        result = scan(stream, load())
    assert result.bytes_read == 1700 and result.hits


def test_nested_prefixes_still_stripped():
    assert clean_line(b"[rank0]: (RayWorker pid=1) ERROR 04-18 08:22:17 engine.py:400] E   EZ3002 x") == "EZ3002 x"
    assert clean_line(b"Error:   [2025-01-01 10:00:00.123+08:00]   [rank3]: boom") == "boom"


def test_prefix_stripping_is_linear_in_the_line():
    # T1: a 64 KiB line of "E  E  E ..." (21,000 prefixes to strip) costs about 8 times what an
    # eighth of it costs (linear), not 64 times (quadratic: it was 0.28 s, 1000x a plain line).
    # Measured against its own eighth, not against a plain line: a plain line is now not even
    # searched for colours, and its cost no longer hides a slow one.
    hostile = (b"E  " * 21000) + b"EZ3002"
    eighth = (b"E  " * 2625) + b"EZ3002"

    def cost(line: bytes) -> float:
        started = time.perf_counter()
        for _ in range(5):
            clean_line(line)
        return time.perf_counter() - started

    assert clean_line(hostile) == "EZ3002" and clean_line(eighth) == "EZ3002"
    assert cost(hostile) < 3 * 8 * max(cost(eighth), 1e-4)


def test_stdin_from_a_device_is_refused(monkeypatch):
    import sys

    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    with open("/dev/zero", "rb") as zero:

        class Stdin:
            buffer = zero

            @staticmethod
            def isatty() -> bool:
                return False

            @staticmethod
            def fileno() -> int:
                return zero.fileno()

        monkeypatch.setattr(sys, "stdin", Stdin)
        code, _, err = run_cli(["triage", "-", "--from", "nothing.json"], {})
    assert code == 2 and "stdin is a character device, not a log file" in err
