"""ascenv.fsutil: read_input reads only small regular files; write_atomic and atomic_path are all or
nothing, keep links and devices, honour the umask, and leave no temp file (signals included)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

from ascenv import fsutil


def test_writes_bytes_and_text_with_the_mode(tmp_path: Path) -> None:
    fsutil.write_atomic(tmp_path / "a.bin", b"\x00\xff")
    fsutil.write_atomic(str(tmp_path / "b.txt"), "é\n", mode=0o600)
    assert (tmp_path / "a.bin").read_bytes() == b"\x00\xff"
    assert (tmp_path / "b.txt").read_bytes() == b"\xc3\xa9\n"
    assert (tmp_path / "a.bin").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "b.txt").stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.bin", "b.txt"]


def test_replaces_and_fsyncs_before_the_rename(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "lock"
    target.write_text("old")
    seen = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        seen.append((os.fstat(fd).st_size, target.read_text()))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    fsutil.write_atomic(target, "newer")
    assert seen == [(5, "old")]  # the temp file was complete and synced while the target was still old
    assert target.read_text() == "newer"


@pytest.mark.parametrize("failure", [KeyboardInterrupt, OSError(28, "No space left on device")])
def test_a_failure_leaves_the_old_file_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure
) -> None:
    target = tmp_path / "pins.toml"
    target.write_text("old")

    def fail(fd: int) -> None:
        raise failure

    monkeypatch.setattr(os, "fsync", fail)
    with pytest.raises(type(failure) if isinstance(failure, BaseException) else failure):
        fsutil.write_atomic(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["pins.toml"]


def test_a_missing_directory_is_an_oserror(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        fsutil.write_atomic(tmp_path / "no" / "x", b"")


def test_atomic_path_renames_what_the_block_wrote_or_removes_it(tmp_path: Path) -> None:
    target = tmp_path / "image.tar"
    with fsutil.atomic_path(target, mode=0o600) as tmp:
        Path(tmp).write_bytes(b"archive")
        assert not target.exists() and Path(tmp).parent == tmp_path
    assert target.read_bytes() == b"archive" and target.stat().st_mode & 0o777 == 0o600
    with pytest.raises(KeyboardInterrupt):
        with fsutil.atomic_path(target) as tmp:
            Path(tmp).write_bytes(b"half")
            raise KeyboardInterrupt
    assert target.read_bytes() == b"archive"
    assert [p.name for p in tmp_path.iterdir()] == ["image.tar"]


# --- read_input: only a regular file, bounded, never blocking ---------------------------------------


def no_hang(work, seconds: float = 10.0):
    """Run ``work`` on a thread: a reader that blocks on a FIFO fails the test instead of hanging it."""
    import threading

    outcome: dict = {}

    def target() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            outcome["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still blocked after {seconds} s"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def special_file(tmp_path: Path, kind: str) -> str:
    """A path to a FIFO, a socket, a character device, a directory or a big sparse file."""
    import socket

    path = tmp_path / kind
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
        sock.close()
    elif kind == "dev-zero":
        return "/dev/zero"
    elif kind == "dev-null":
        return "/dev/null"
    elif kind == "directory":
        path.mkdir()
    elif kind == "sparse":
        with open(path, "wb") as fh:
            fh.truncate(2 << 30)
    elif kind == "link-to-fifo":
        os.mkfifo(tmp_path / "real-fifo")
        path.symlink_to(tmp_path / "real-fifo")
    return str(path)


SPECIAL = {
    "fifo": "is a FIFO (named pipe), not a file",
    "socket": "is a socket, not a file",
    "dev-zero": "is a character device, not a file",
    "dev-null": "is a character device, not a file",
    "directory": "is a directory, not a file",
    "link-to-fifo": "is a FIFO (named pipe), not a file",
    "sparse": "is larger than 16 MiB",
}


@pytest.mark.parametrize("kind", sorted(SPECIAL))
def test_read_input_refuses_what_is_not_a_small_regular_file(tmp_path: Path, kind: str) -> None:
    path = special_file(tmp_path, kind)
    with pytest.raises(fsutil.InputError) as err:
        no_hang(lambda: fsutil.read_input(path, what="snapshot", shown="snap.json", hint="write one"))
    assert err.value.exit_code == 2
    assert err.value.message.startswith("snapshot snap.json ") and SPECIAL[kind] in err.value.message


def test_read_input_reads_a_file_and_a_symlink_to_one(tmp_path: Path) -> None:
    (tmp_path / "lock").write_bytes(b"lock-version")
    (tmp_path / "link").symlink_to("lock")
    assert fsutil.read_input(tmp_path / "link", what="lock") == b"lock-version"
    with pytest.raises(fsutil.InputError, match=r"^cannot read lock missing: No such file or directory$"):
        fsutil.read_input(tmp_path / "nothing", what="lock", shown="missing")
    with pytest.raises(fsutil.InputError, match="larger than 1 MiB"):
        (tmp_path / "big").write_bytes(b"x" * ((1 << 20) + 1))
        fsutil.read_input(tmp_path / "big", what="lock", limit=1 << 20)


# --- where atomic writes go: symlinks, devices, FIFOs ------------------------------------------------


def test_a_symlinked_target_is_written_through_and_stays_a_link(tmp_path: Path) -> None:
    (tmp_path / "real.lock").write_text("old")
    (tmp_path / "link.lock").symlink_to("real.lock")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "chain.lock").symlink_to("../link.lock")
    fsutil.write_atomic(tmp_path / "sub" / "chain.lock", "new")
    assert (tmp_path / "link.lock").is_symlink() and (tmp_path / "sub" / "chain.lock").is_symlink()
    assert (tmp_path / "real.lock").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.lock", "real.lock", "sub"]
    (tmp_path / "dangling.lock").symlink_to("made.lock")
    fsutil.write_atomic(tmp_path / "dangling.lock", "made")  # like `> dangling.lock` in a shell
    assert (tmp_path / "dangling.lock").is_symlink() and (tmp_path / "made.lock").read_text() == "made"


def test_a_stdout_link_writes_to_the_stream_and_is_not_replaced(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    fakedev = tmp_path / "fakedev"
    fakedev.mkdir()
    (fakedev / "stdout").symlink_to(f"/proc/self/fd/{write_end}")  # what /dev/stdout is
    try:
        fsutil.write_atomic(fakedev / "stdout", "lock text\n")
        os.close(write_end)
        with os.fdopen(read_end, "rb") as fh:
            assert fh.read() == b"lock text\n"
    finally:
        with contextlib.suppress(OSError):
            os.close(write_end)
    assert (fakedev / "stdout").is_symlink()
    assert [p.name for p in fakedev.iterdir()] == ["stdout"]  # no temp file left in "/dev"


def test_a_fifo_or_char_device_target_is_written_into_not_replaced(tmp_path: Path) -> None:
    import stat
    import threading

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    no_hang(lambda: fsutil.write_atomic(fifo, b"bundle"))
    reader.join(10)
    assert received == [b"bundle"] and stat.S_ISFIFO(os.lstat(fifo).st_mode)
    (tmp_path / "null").symlink_to("/dev/null")
    with fsutil.atomic_path(tmp_path / "null") as tmp:
        Path(tmp).write_bytes(b"discarded")
    assert (tmp_path / "null").is_symlink() and stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "null"]


@pytest.mark.parametrize(
    ("umask", "mode", "expected"), [(0o077, 0o644, 0o600), (0o027, 0o644, 0o640), (0, 0o644, 0o644)]
)
def test_the_mode_is_narrowed_by_the_umask(tmp_path: Path, umask: int, mode: int, expected: int) -> None:
    old = os.umask(umask)
    try:
        fsutil.write_atomic(tmp_path / "lock", "x", mode=mode)
        with fsutil.atomic_path(tmp_path / "bundle", mode=mode) as tmp:
            Path(tmp).write_bytes(b"x")
    finally:
        os.umask(old)
    assert (tmp_path / "lock").stat().st_mode & 0o777 == expected
    assert (tmp_path / "bundle").stat().st_mode & 0o777 == expected


def test_the_umask_is_read_without_changing_it() -> None:
    old = os.umask(0o027)
    try:
        assert fsutil.current_umask() == 0o027 and fsutil.current_umask() == 0o027
    finally:
        os.umask(old)


_WRITER = """
import os, sys, time
from ascenv import fsutil
def slow_fsync(fd):
    print("writing", flush=True)
    time.sleep(30)
fsutil.os.fsync = slow_fsync
try:
    fsutil.write_atomic(sys.argv[1], "new")
except KeyboardInterrupt as exc:
    print(type(exc).__name__, exc, flush=True)
    sys.exit(130)
"""


@pytest.mark.parametrize("signum", ["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_signal_during_the_write_leaves_no_temp_file(tmp_path: Path, signum: str) -> None:
    import signal
    import subprocess
    import sys

    target = tmp_path / "snap.json"
    target.write_text("old")
    source = str(Path(fsutil.__file__).parents[1])  # the ascenv under test, not another install
    environ = dict(os.environ, PYTHONPATH=source)
    child = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(target)], stdout=subprocess.PIPE, text=True, cwd=tmp_path, env=environ
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == "writing\n"
        child.send_signal(getattr(signal, signum))
        out, _ = child.communicate(timeout=20)
    finally:
        child.kill()
    assert child.returncode == 130
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["snap.json"]


# --- every command that reads a file the user names goes through read_input -------------------------


def _readers(bad: str) -> dict:
    return {
        "doctor --from": ["doctor", "--from", bad],
        "lock --check": ["lock", "--check", bad, "--from", "good.json"],
        "lock --from": ["lock", "--from", bad, "-o", "new.lock"],
        "diff snapshot/lock": ["diff", bad, "good.lock"],
        "diff second input": ["diff", "good.json", bad],
        "report --from": ["report", "--from", bad, "-o", "r.tar.gz"],
        "report --lock": ["report", "--from", "good.json", "--lock", bad, "-o", "r.tar.gz"],
    }


@pytest.fixture
def good_inputs(tmp_path: Path) -> Path:
    import json

    from lock_samples import a2

    from ascenv import lockfile
    from ascenv.snapshot_io import snapshot_to_json

    (tmp_path / "good.json").write_text(json.dumps(snapshot_to_json(a2())))
    (tmp_path / "good.lock").write_text(lockfile.dumps_lock(lockfile.lock_from_snapshot(a2(), generator_version="0")))
    return tmp_path


@pytest.mark.parametrize("reader", sorted(_readers("")))
@pytest.mark.parametrize("kind", ["fifo", "socket", "dev-zero", "directory", "sparse"])
def test_every_reader_refuses_special_and_huge_files(good_inputs: Path, reader: str, kind: str) -> None:
    from tests.cli_helpers import run_cli

    bad = special_file(good_inputs, kind)
    if reader == "diff snapshot/lock" and kind == "fifo":
        os.rename(bad, good_inputs / "x.tar.gz")  # a FIFO named as a bundle is refused before the bundle reader
        bad = "x.tar.gz"
    argv = _readers(bad)[reader]
    code, out, err = no_hang(lambda: run_cli(argv, {"SOURCE_DATE_EPOCH": "0"}, good_inputs))
    assert code == 2, err
    assert ("not a file" in err or "larger than 16 MiB" in err) and "unexpected" not in err
    assert not (good_inputs / "r.tar.gz").exists() and not (good_inputs / "new.lock").exists()


def test_concurrent_writers_never_tear_the_file_or_leave_temp_files(tmp_path: Path) -> None:
    import threading

    target = tmp_path / "same.lock"
    small, large = b"s" * 15_000, b"L" * 425_000  # the sizes of a lock and of a big fleet lock
    seen: set = set()
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            with contextlib.suppress(FileNotFoundError):
                seen.add(target.read_bytes())

    def write(data: bytes) -> None:
        for _ in range(30):
            fsutil.write_atomic(target, data)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    writers = [threading.Thread(target=write, args=(d,)) for d in (small, large)]
    for w in writers:
        w.start()
    for w in writers:
        w.join(60)
    stop.set()
    reader.join(10)
    assert seen <= {small, large} and target.read_bytes() in (small, large)
    assert [p.name for p in tmp_path.iterdir()] == ["same.lock"]
