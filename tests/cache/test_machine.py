"""cache.machine.busy_paths: what running processes hold, read from /proc."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from ascenv.cache.machine import busy_paths

HOLD = """
import os, sys, time
f = open(sys.argv[1], "rb")
d = os.open(sys.argv[2], os.O_RDONLY | os.O_DIRECTORY)
g = open(sys.argv[3], "rb")
os.unlink(sys.argv[3])  # held open: "PATH (deleted)"
print("ready", flush=True)
time.sleep(60)
"""


@pytest.fixture
def holder(tmp_path):
    """A process whose working directory is cwd/, holding kept.o, the directory dir/ and the
    deleted gone.o open."""
    for name in ("cwd", "dir"):
        (tmp_path / name).mkdir()
    (tmp_path / "kept.o").write_bytes(b"k")
    (tmp_path / "gone.o").write_bytes(b"g")
    child = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path / "kept.o"), str(tmp_path / "dir"), str(tmp_path / "gone.o")],
        cwd=tmp_path / "cwd",
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout.readline().strip() == "ready"
        yield child.pid, tmp_path
    finally:
        child.kill()
        child.wait()
        child.stdout.close()


NOBODY = 2**22 + 1  # above pid_max's default: no process is ours, so the holder (our child) counts


def test_open_files_directories_deleted_files_and_the_working_directory_are_busy(holder):
    pid, tmp = holder
    held = {path for path, p in busy_paths(os.getuid(), ours=NOBODY) if p == pid}
    assert str(tmp / "cwd") in held
    assert str(tmp / "kept.o") in held
    assert str(tmp / "dir") in held, "an open directory is in use too (psutil's open_files left it out)"
    assert f"{tmp / 'gone.o'} (deleted)" in held
    assert not any(p.startswith(("pipe:", "socket:")) for p in held)


def test_only_the_callers_processes_unless_everyones_or_named(holder):
    pid, tmp = holder
    other = os.getuid() + 4242
    assert pid not in {p for _, p in busy_paths(other, ours=NOBODY)}
    assert pid in {p for _, p in busy_paths(other, [pid], ours=NOBODY)}  # an NPU process, whoever runs it
    assert pid in {p for _, p in busy_paths(None, ours=NOBODY)}


def test_clean_cache_itself_and_its_forked_workers_are_no_users(holder):
    """The scan's workers hold the cache's directories open while the facts are gathered: were
    they users, every cache would be skipped as "in use" by clean-cache itself."""
    pid, tmp = holder
    assert pid not in {p for _, p in busy_paths(None)}  # a child of this process (ours by default)
    assert pid not in {p for _, p in busy_paths(None, [pid], ours=os.getpid())}
    assert os.getpid() not in {p for _, p in busy_paths(None)}


def test_a_process_that_ended_is_skipped():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    time.sleep(0.01)
    assert child.pid not in {p for _, p in busy_paths(None, [child.pid], ours=NOBODY)}
