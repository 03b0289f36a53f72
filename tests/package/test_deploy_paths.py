"""The install path and the keep directory as found on disk: a full disk while keeping (I6), an
install path that is a file or lies below one (I7), a planted .ascenv-previous symlink (I8), and
what runs killed midway left behind (I9). Each ends in exit 2 or is cleaned up, never exit 3."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ascenv import errors, fsutil
from ascenv.package import deploy
from tests.package.pkgbuild import vendor_tree
from tests.package.test_deploy import REPO, tree


def installed(tmp_path: Path) -> Path:
    root = tmp_path / "opp"
    vendor_tree(root / deploy.KEEP_DIR / "customize", kernel=b"kernel-v1")
    vendor_tree(root / "vendors" / "customize", op_types=("AddCustom", "SubCustom"), kernel=b"kernel-v2")
    return root


def keep_names(root: Path) -> list[str]:
    return sorted(p.name for p in (root / deploy.KEEP_DIR).iterdir())


# --- I6: no space while keeping --------------------------------------------------------------------


def failing_copy(after: int, code: int):  # type: ignore[no-untyped-def]
    """shutil.copy2 that fails with ``code`` once ``after`` files were copied."""
    real = deploy.shutil.copy2
    copied = []

    def copy(src: str, dst: object, **kwargs: object) -> object:
        if len(copied) >= after:
            raise OSError(code, os.strerror(code), str(dst))
        copied.append(src)
        return real(src, dst, **kwargs)  # type: ignore[arg-type]

    return copy


@pytest.mark.parametrize(("after", "code"), [(0, errno.ENOSPC), (5, errno.ENOSPC), (3, errno.EDQUOT)])
def test_no_space_while_keeping_is_exit_2_and_the_partial_copy_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, after: int, code: int
) -> None:
    root = installed(tmp_path)
    before = tree(root)
    monkeypatch.setattr(deploy.shutil, "copy2", failing_copy(after, code))
    with pytest.raises(errors.UsageError, match="no space to keep the previous vendor customize") as caught:
        with deploy.replacing(root, ["customize"]):
            raise AssertionError("the installer must not run")
    assert caught.value.exit_code == errors.EXIT_USAGE and len(caught.value.message) < 1000
    lock = root / deploy.KEEP_DIR / deploy.LOCK_FILE
    assert tree(root) == {**before, f"{deploy.KEEP_DIR}/{deploy.LOCK_FILE}": (b"", lock.stat().st_mode)}
    assert keep_names(root) == [deploy.LOCK_FILE, "customize"]  # no .customize.partial left


def test_a_failing_mkdir_while_keeping_is_exit_2_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = installed(tmp_path)
    real = os.mkdir

    def mkdir(path: object, *args: object, **kwargs: object) -> None:
        if ".customize.partial/" in os.fspath(path):  # type: ignore[arg-type]
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)
        real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "mkdir", mkdir)
    with pytest.raises(errors.UsageError, match="no space"):
        deploy.keep_previous(root, ["customize"])
    monkeypatch.undo()
    assert keep_names(root) == ["customize"]


@contextlib.contextmanager
def small_tmpfs(directory: Path, size: str) -> Iterator[Path]:
    directory.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(directory)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield directory
    finally:
        subprocess.run(["umount", "-l", str(directory)], check=True)


def fill(directory: Path, leave: int) -> None:
    """Fill the file system of ``directory`` but ``leave`` bytes."""
    free = os.statvfs(directory).f_bavail * os.statvfs(directory).f_frsize
    with open(directory / "filler", "wb") as fh:
        with contextlib.suppress(OSError):
            fh.write(b"\0" * max(0, free - leave))


@pytest.mark.parametrize("leave", [0, 12 << 10])
def test_a_really_full_disk_while_keeping_is_exit_2(tmp_path: Path, leave: int) -> None:
    with small_tmpfs(tmp_path / "fs", "512k") as fs:
        root = fs / "opp"
        vendor_tree(root / "vendors" / "customize")
        fill(fs, leave)
        live = tree(root / "vendors")
        with pytest.raises(errors.UsageError, match="no space to keep the previous vendor customize"):
            deploy.keep_previous(root, ["customize"])
        assert keep_names(root) == []  # the partial copy is gone
        assert tree(root / "vendors") == live


def test_no_space_for_the_rollback_journal_is_exit_2_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = installed(tmp_path)
    deploy.rollback(root, "customize")  # the lock file exists from now on
    before = tree(root)

    def full(path: object, data: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(deploy, "write_atomic", full)
    with pytest.raises(errors.UsageError, match="cannot write the rollback journal .nothing was changed."):
        deploy.rollback(root, "customize")
    assert tree(root) == before


# --- I7: an install path that is not a directory ------------------------------------------------


def test_an_install_path_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "opp").write_text("not a directory")
    for create in (True, False):
        with pytest.raises(errors.UsageError, match="is a regular file, not a directory"):
            deploy.prepare_root(tmp_path / "opp", create=create)
    with pytest.raises(errors.UsageError, match="is a regular file, not a directory"):
        deploy.rollback(tmp_path / "opp", "customize")


@pytest.mark.parametrize("below", ["sub", "sub/deeper/still"])
def test_an_install_path_below_a_file_is_refused_naming_the_file(tmp_path: Path, below: str) -> None:
    (tmp_path / "file").write_text("x")
    for create in (True, False):
        with pytest.raises(errors.UsageError, match=f"goes through {tmp_path / 'file'}, which is a regular file"):
            deploy.prepare_root(tmp_path / "file" / below, create=create)


def test_an_install_path_that_is_a_fifo_is_refused(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "opp")
    with pytest.raises(errors.UsageError, match="is a FIFO"):
        deploy.prepare_root(tmp_path / "opp", create=True)


def test_an_absent_install_path_is_created_for_an_install_only(tmp_path: Path) -> None:
    assert deploy.prepare_root(tmp_path / "a" / "b", create=False) is False and not (tmp_path / "a").exists()
    with pytest.raises(errors.UsageError, match="no previous customize vendor is kept"):
        deploy.rollback(tmp_path / "a" / "b", "customize")
    assert not (tmp_path / "a").exists()
    assert deploy.prepare_root(tmp_path / "a" / "b", create=True) is True and (tmp_path / "a" / "b").is_dir()


@pytest.mark.parametrize("code", [errno.EROFS, errno.EACCES])
def test_an_install_path_where_nothing_can_be_written_is_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    """A read-only or foreign install path: exit 2 naming it, as `lock -o` does (X4's kind)."""
    root = tmp_path / "opp"
    vendor_tree(root / "vendors" / "customize")
    real = os.mkdir

    def mkdir(path: object, *args: object, **kwargs: object) -> None:
        if os.fspath(path).endswith(deploy.KEEP_DIR):  # type: ignore[arg-type]
            raise OSError(code, os.strerror(code), path)
        real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "mkdir", mkdir)
    with pytest.raises(errors.UsageError, match=f"cannot create {root / deploy.KEEP_DIR}: .*{os.strerror(code)}"):
        with deploy.replacing(root, ["customize"]):
            raise AssertionError("the installer must not run")


# --- I8: a planted .ascenv-previous --------------------------------------------------------------


def planted_link(tmp_path: Path) -> tuple[Path, Path]:
    """I8's set-up: .ascenv-previous -> ../victim, and a victim holding what a leftover clean-up
    would delete."""
    root = tmp_path / "opp"
    vendor_tree(root / "vendors" / "customize")
    victim = tmp_path / "victim"
    vendor_tree(victim / "customize", kernel=b"victim's own")
    vendor_tree(victim / ".customize.discard", kernel=b"victim's own too")
    (root / deploy.KEEP_DIR).symlink_to("../victim")
    return root, victim


def test_a_planted_keep_directory_symlink_is_refused_by_install(tmp_path: Path) -> None:
    root, victim = planted_link(tmp_path)
    before = tree(tmp_path)
    with pytest.raises(errors.UsageError, match=r"\.ascenv-previous is a symbolic link to \.\./victim"):
        with deploy.replacing(root, ["customize"]):
            raise AssertionError("the installer must not run")
    assert tree(tmp_path) == before


def test_a_planted_keep_directory_symlink_is_refused_by_rollback(tmp_path: Path) -> None:
    root, victim = planted_link(tmp_path)
    before = tree(tmp_path)
    with pytest.raises(errors.UsageError, match="is a symbolic link"):
        deploy.rollback(root, "customize")
    assert tree(tmp_path) == before


def test_a_keep_directory_that_is_a_file_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "opp"
    vendor_tree(root / "vendors" / "customize")
    (root / deploy.KEEP_DIR).write_text("x")
    with pytest.raises(errors.UsageError, match="is a regular file: ascenv keeps replaced vendors only"):
        deploy.rollback(root, "customize")


def test_a_kept_vendor_that_is_a_symlink_is_not_rolled_back(tmp_path: Path) -> None:
    root = tmp_path / "opp"
    vendor_tree(root / "vendors" / "customize")
    outside = vendor_tree(tmp_path / "outside", kernel=b"not ascenv's")
    (root / deploy.KEEP_DIR).mkdir()
    (root / deploy.KEEP_DIR / "customize").symlink_to(outside)
    before = tree(root / "vendors")
    with pytest.raises(errors.UsageError, match="no previous customize vendor is kept"):
        deploy.rollback(root, "customize")
    assert tree(root / "vendors") == before and (root / deploy.KEEP_DIR / "customize").is_symlink()


def test_a_lock_file_that_is_a_symlink_is_refused(tmp_path: Path) -> None:
    root = installed(tmp_path)
    (tmp_path / "elsewhere").write_text("")
    (root / deploy.KEEP_DIR / deploy.LOCK_FILE).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(errors.UsageError, match="cannot open the lock"):
        deploy.rollback(root, "customize")


# --- I9: what killed runs left --------------------------------------------------------------------

KILLED_IN_WRITE = """
import os, signal, sys
from pathlib import Path
from ascenv import fsutil
from ascenv.package import deploy
def killed(src, dst):
    os.kill(os.getpid(), signal.SIGKILL)  # the temp file is written, not yet renamed
fsutil.os.replace = killed
deploy.rollback(Path(sys.argv[1]), "customize")
"""


def test_a_journal_temp_file_left_by_a_sigkill_is_removed_by_the_next_run(tmp_path: Path) -> None:
    """I9: SIGKILL during the journal write left .ascenv-customize.rollback.json.<rand>.tmp, forever."""
    root = installed(tmp_path)
    old, new = tree(root / deploy.KEEP_DIR / "customize"), tree(root / "vendors" / "customize")
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", KILLED_IN_WRITE, str(root)],
            cwd=REPO,
            capture_output=True,
            env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(REPO)},
            timeout=60,
        )
        assert done.returncode == -signal.SIGKILL, done.stderr
    temps = [n for n in keep_names(root) if n.startswith(fsutil.TEMP_PREFIX)]
    # one, not two: the second killed run removed the first one's before writing its own
    assert len(temps) == 1 and all(n.endswith(".tmp") and "customize.rollback.json." in n for n in temps)
    assert tree(root / "vendors" / "customize") == new  # nothing was swapped before the journal
    deploy.rollback(root, "customize")
    assert keep_names(root) == [deploy.LOCK_FILE, "customize"]
    assert tree(root / "vendors" / "customize") == old


def test_journal_temp_files_are_removed_by_an_install_too(tmp_path: Path) -> None:
    root = installed(tmp_path)
    stale = root / deploy.KEEP_DIR / f"{fsutil.TEMP_PREFIX}other.rollback.json.ab12cd34.tmp"
    stale.write_text('{"vendor": "other"')
    mine = root / deploy.KEEP_DIR / "notes.txt"  # not ascenv's name: left alone
    mine.write_text("x")
    with deploy.replacing(root, ["customize"]) as kept:
        assert kept == [root / deploy.KEEP_DIR / "customize"]
    assert not stale.exists() and mine.exists()


def test_a_keep_killed_between_its_renames_is_finished_by_the_next_run(tmp_path: Path) -> None:
    """Killed after the old kept tree went to .discard, before the whole copy took its place:
    the copy becomes the kept tree (it was complete), the old one goes."""
    root = installed(tmp_path)
    new = tree(root / "vendors" / "customize")
    keep = root / deploy.KEEP_DIR
    os.rename(keep / "customize", keep / ".customize.discard")
    vendor_tree(keep / ".customize.partial", op_types=("AddCustom", "SubCustom"), kernel=b"kernel-v2")
    deploy.rollback(root, "customize")
    assert keep_names(root) == [deploy.LOCK_FILE, "customize"]
    assert tree(root / "vendors" / "customize") == new  # the copy was put back (it is the same files)


def test_a_half_copy_left_by_a_killed_keep_is_removed_by_a_rollback(tmp_path: Path) -> None:
    root = installed(tmp_path)
    old = tree(root / deploy.KEEP_DIR / "customize")
    (root / deploy.KEEP_DIR / ".customize.partial" / "op_impl").mkdir(parents=True)
    deploy.rollback(root, "customize")
    assert keep_names(root) == [deploy.LOCK_FILE, "customize"]
    assert tree(root / "vendors" / "customize") == old


def test_a_journal_that_vanishes_while_read_is_no_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A journal removed between its lstat and its read (by a run that does not lock) is taken
    as absent: the rollback asked for is done, not exit 3."""
    root = installed(tmp_path)
    old = tree(root / deploy.KEEP_DIR / "customize")
    journal = deploy.VendorPaths(root, "customize").journal
    journal.write_text('{"vendor": "customize", "dev": 1, "ino": 1}\n')
    real = deploy.read_input

    def vanishing(path: Path, **kwargs: object) -> bytes:
        os.unlink(path)
        return real(path, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(deploy, "read_input", vanishing)
    result = deploy.rollback(root, "customize")
    assert not result.finished_interrupted and tree(root / "vendors" / "customize") == old


@pytest.mark.parametrize("content", ["not json", '{"dev": "x"}', None])
def test_a_damaged_journal_is_exit_2_naming_it(tmp_path: Path, content: object) -> None:
    root = installed(tmp_path)
    journal = deploy.VendorPaths(root, "customize").journal
    if content is None:
        journal.mkdir()
    else:
        journal.write_text(str(content))
    with pytest.raises(errors.InputError, match="the rollback journal .* cannot be read"):
        deploy.rollback(root, "customize")


def test_another_vendors_interrupted_rollback_is_finished_and_a_damaged_one_does_not_block(tmp_path: Path) -> None:
    root = installed(tmp_path)
    other = deploy.VendorPaths(root, "other")
    vendor_tree(other.previous, kernel=b"other-v1")
    vendor_tree(other.current, kernel=b"other-v2")
    kept_other = tree(other.previous)
    identity = other.previous.stat()
    other.journal.write_text(f'{{"vendor": "other", "dev": {identity.st_dev}, "ino": {identity.st_ino}}}\n')
    broken = deploy.VendorPaths(root, "broken").journal
    broken.write_text("not json")
    with deploy.replacing(root, ["customize"]) as kept:
        assert kept == [root / deploy.KEEP_DIR / "customize"]
    assert tree(other.current) == kept_other and not other.journal.exists()  # finished under the lock
    assert broken.exists()  # left for its own vendor's runs to report
    with pytest.raises(errors.InputError, match="broken.rollback.json cannot be read"):
        deploy.rollback(root, "broken")


def test_a_special_file_in_the_live_vendor_is_exit_2_and_nothing_is_kept_half(tmp_path: Path) -> None:
    root = installed(tmp_path)
    kept = tree(root / deploy.KEEP_DIR / "customize")
    os.mkfifo(root / "vendors" / "customize" / "pipe")
    with pytest.raises(errors.UsageError, match="is a FIFO .named pipe.: a vendor tree holds files"):
        deploy.keep_previous(root, ["customize"])
    assert keep_names(root) == ["customize"] and tree(root / deploy.KEEP_DIR / "customize") == kept


def test_a_rollback_with_no_live_vendor_and_no_vendors_directory_puts_the_kept_one_back(tmp_path: Path) -> None:
    root = installed(tmp_path)
    old = tree(root / deploy.KEEP_DIR / "customize")
    shutil.rmtree(root / "vendors")
    deploy.rollback(root, "customize")
    assert tree(root / "vendors" / "customize") == old
    assert keep_names(root) == [deploy.LOCK_FILE]
