"""ascenv.fsutil.write_atomic and atomic_path: all or nothing, the mode asked for, no temp file left."""

from __future__ import annotations

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
