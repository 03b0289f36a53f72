"""Keep the vendor directory an install replaces, and put it back atomically.

Layout, inside the install path (the directory holding ``vendors/``)::

    vendors/<v>/                          the live vendor, what CANN loads
    vendors/.<v>.ascenv-incoming          staging name of a swap (same directory as the live one)
    vendors/.<v>.ascenv-outgoing          the displaced tree, where an exchange is not available
    .ascenv-previous/<v>/                 the vendor the last install or rollback replaced
    .ascenv-previous/<v>.rollback.json    journal of a rollback under way
    .ascenv-previous/.<v>.discard         the tree kept before, held until the install succeeds
    .ascenv-previous/.<v>.failed          the tree a failed install left, on its way out
    .ascenv-previous/.lock                held (flock) by every install and rollback of this path

``.ascenv-previous`` lies beside ``vendors/``, not in it, so CANN never takes it for a vendor
(it loads the vendor directories below ``vendors/`` and those of ASCEND_CUSTOM_OPP_PATH).

An install whose installer fails is undone (``put_back``): install.sh merges into the live
vendor, so a failure midway leaves some new files among the old. The kept copy is renamed back
in, the tree kept before it back to ``.ascenv-previous``, and a vendor that did not exist before
is removed: the install path is as it was, byte for byte.

A rollback is a rename-based swap: the kept tree is renamed to the staging name, then exchanged
with the live one by ``renameat2(RENAME_EXCHANGE)`` (Linux >= 3.15, man 2 rename), so the live
name always holds one complete tree; where the exchange is refused it falls back to two renames
and the journal covers the moment between them. The journal names the tree that must end up
live by its inode (renames keep it), so a run killed at any step is finished by the next one
from what is on disk.

Every install and rollback of one install path runs under one exclusive lock (``locked``), and
reads the state only once it holds it: two runs at once (Ansible driving a cluster that shares
one opp tree) otherwise copy, rename and unlink each other's trees and journals (I1, I2).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import stat
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ascenv import errors
from ascenv.fsutil import TEMP_PREFIX, file_kind, read_input, write_atomic

KEEP_DIR = ".ascenv-previous"
LOCK_FILE = ".lock"
JOURNAL_SUFFIX = ".rollback.json"
JOURNAL_LIMIT = 1 << 16  # a journal is one line of JSON; anything larger is not one
Step = Callable[[str], None]  # called after each step (tests kill the process there)
Waiting = Callable[[Path], None]  # told the lock file when another run holds it (then we wait)

# Names ascenv derives from a vendor's must fit NAME_MAX, 255 bytes on Linux file systems, or a
# keep or a swap would fail halfway with ENAMETOOLONG. The longest is the journal's temp file,
# ``.ascenv-<v>.rollback.json.<8 random>.tmp`` (fsutil.write_atomic, tempfile.mkstemp).
_NAME_MAX = 255
_LONGEST_DERIVED = len(TEMP_PREFIX) + len(JOURNAL_SUFFIX) + len(".12345678.tmp")


def _no_step(name: str) -> None:
    return None


def _no_wait(lock: Path) -> None:
    return None


# --- vendor names ------------------------------------------------------------------------------


def vendor_name_problem(name: str) -> Optional[str]:
    """Why ``name`` is not a vendor name, or None. A vendor name is one path component below
    ``vendors/`` (CANN's msopgen makes it from ``vendor_name``, an identifier such as customize):
    not empty, ``.`` or ``..``, no ``/`` or NUL, and no leading ``.``, which ascenv's own staging,
    journal and lock names have (``--rollback .`` moved the whole keep directory: I3)."""
    if not name:
        return "it is empty"
    if name in (".", ".."):
        return f"{name!r} names a directory, not a vendor"
    if "/" in name:
        return "it holds '/': a vendor name is one path component"
    if "\0" in name:
        return "it holds a NUL byte"
    if name.startswith("."):
        return "it starts with '.', as ascenv's own staging and lock names do"
    if len(os.fsencode(name)) + _LONGEST_DERIVED > _NAME_MAX:
        return f"it is longer than {_NAME_MAX - _LONGEST_DERIVED} bytes"
    return None


def check_vendor_name(name: str, source: str) -> str:
    """``name`` when it is a vendor name; otherwise a UsageError (exit 2) saying where it came
    from (``source``: "--rollback", "the package X") and why. The one check for every
    vendor name ascenv turns into a path."""
    problem = vendor_name_problem(name)
    if problem is not None:
        raise errors.UsageError(
            f"{source} names the vendor {name!r}, which is not a vendor name: {problem}",
            hint="a vendor is one directory below <install-path>/vendors, such as customize",
        )
    return name


# --- paths -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class VendorPaths:
    root: Path  # the install path
    vendor: str

    @property
    def current(self) -> Path:
        return self.root / "vendors" / self.vendor

    @property
    def incoming(self) -> Path:
        return self.root / "vendors" / f".{self.vendor}.ascenv-incoming"

    @property
    def outgoing(self) -> Path:
        return self.root / "vendors" / f".{self.vendor}.ascenv-outgoing"

    @property
    def previous(self) -> Path:
        return self.root / KEEP_DIR / self.vendor

    @property
    def partial(self) -> Path:
        return self.root / KEEP_DIR / f".{self.vendor}.partial"

    @property
    def discard(self) -> Path:
        return self.root / KEEP_DIR / f".{self.vendor}.discard"

    @property
    def failed(self) -> Path:
        return self.root / KEEP_DIR / f".{self.vendor}.failed"

    @property
    def journal(self) -> Path:
        return self.root / KEEP_DIR / f"{self.vendor}{JOURNAL_SUFFIX}"


@dataclass(frozen=True)
class Rollback:
    vendor: str
    install_path: str
    live: str  # the vendor directory, now holding the kept tree
    kept: str  # where the tree it replaced is now (a second rollback swaps back)
    finished_interrupted: bool  # an earlier rollback was killed midway and was completed first
    compute_units: tuple[str, ...]  # units with kernels in either tree: their kernel caches may be stale


def _identity(path: Path) -> Optional[tuple[int, int]]:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino)


def _is_real_dir(path: Path) -> bool:
    """A directory, not a symbolic link to one (lstat)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _remove(path: Path) -> None:
    """Remove a tree or a file; a symbolic link is removed, never followed."""
    if _is_real_dir(path):
        shutil.rmtree(path)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def _sync_dir(path: Path) -> None:
    """Make renames in ``path`` durable (a crash after we report must not undo them)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically; False where the kernel, libc or file system cannot."""
    import ctypes  # imported on use: only a rollback needs it

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2  # <fcntl.h>, <linux/fs.h>
    # any failure falls back to plain renames, which raise the error again if it is real
    return renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


# --- the install path, its keep directory and its lock ------------------------------------------


def prepare_root(root: Path, *, create: bool) -> bool:
    """Check the install path ``root``: True when it is a directory (created, parents and all,
    when ``create``), False when it is absent and not created. One that is a file, or lies below
    one, or cannot be created is a UsageError (exit 2; I7), never a traceback."""
    try:
        if stat.S_ISDIR(os.stat(root).st_mode):
            return True
        raise errors.UsageError(
            f"the install path {root} is {file_kind(os.stat(root).st_mode)}, not a directory",
            hint="--install-path names the directory that holds (or will hold) vendors/",
        )
    except FileNotFoundError:
        pass
    except NotADirectoryError:
        raise _through_a_file(root) from None
    except OSError as exc:
        raise _cannot("use the install path", root, exc) from None
    if not create:
        return False
    try:
        root.mkdir(parents=True, exist_ok=True)  # install.sh creates it with a plain mkdir (no -p)
    except NotADirectoryError:
        raise _through_a_file(root) from None
    except FileExistsError:  # a dangling symlink, or a file made meanwhile
        raise errors.UsageError(
            f"the install path {root} cannot be created: something that is not a directory is in the way",
            hint="--install-path names the directory that holds (or will hold) vendors/",
        ) from None
    except OSError as exc:
        raise _cannot("create the install path", root, exc) from None
    return True


def _through_a_file(root: Path) -> errors.UsageError:
    blocker = next((p for p in reversed(root.parents) if p.exists() and not p.is_dir()), root.parent)
    return errors.UsageError(
        f"the install path {root} goes through {blocker}, which is {_kind(blocker)}, not a directory",
        hint="--install-path names the directory that holds (or will hold) vendors/",
    )


def _kind(path: Path) -> str:
    try:
        return file_kind(os.stat(path).st_mode)
    except OSError:
        return "not a directory"


def _keep_dir(root: Path, *, create: bool) -> Optional[Path]:
    """``<root>/.ascenv-previous``, created when ``create``; None when absent. A symbolic link or
    anything else there that is not a directory is refused, never followed: a planted
    ``.ascenv-previous -> ../victim`` had the kept tree written into, and leftovers deleted
    from, a directory ascenv does not own (I8)."""
    path = root / KEEP_DIR
    for _ in range(2):
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            if not create:
                return None
            try:
                os.mkdir(path)
            except FileExistsError:  # made by another run meanwhile
                pass
            except OSError as exc:
                raise _cannot("create", path, exc) from None
            continue
        except OSError as exc:
            raise _cannot("use", path, exc) from None
        if stat.S_ISDIR(mode):
            return path
        what = f"a symbolic link to {os.readlink(path)}" if stat.S_ISLNK(mode) else file_kind(mode)
        raise errors.UsageError(
            f"{path} is {what}: ascenv keeps replaced vendors only in a directory of its own",
            hint=f"{KEEP_DIR} is written by ascenv install alone; move that away, then rerun",
        )
    raise errors.UsageError(f"{path} keeps changing; is another program writing there?")


@contextlib.contextmanager
def locked(root: Path, *, create: bool, on_wait: Waiting = _no_wait) -> Iterator[Optional[Path]]:
    """Hold the install path's lock, an exclusive ``flock`` on ``.ascenv-previous/.lock``, for the
    block; yields the keep directory (None when it is absent and ``create`` is false: nothing is
    kept, nothing to lock). ``on_wait`` is told the lock file before waiting for another run.

    flock rather than a lock of ``vendors/`` itself: a directory opens read-only, and on NFS an
    exclusive flock needs a descriptor open for writing. Linux emulates flock on NFS with a
    whole-file byte-range lock that the server arbitrates (NFSv4 locking, NLM for v3; man 2 flock,
    "NFS details"), so runs on other clients sharing the opp tree are excluded too. The lock is
    released when the process dies, SIGKILL included; the file itself is never removed (removing
    it would let a waiter hold a lock on a name no longer there)."""
    keep = _keep_dir(root, create=create)
    if keep is None:
        yield None
        return
    import fcntl

    lock = keep / LOCK_FILE
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o644)
    except OSError as exc:
        raise _cannot("open the lock", lock, exc) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # opened non-blocking: a planted FIFO cannot hang us
            raise errors.UsageError(f"the lock {lock} is {file_kind(os.fstat(fd).st_mode)}, not a file")
        os.set_blocking(fd, True)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            on_wait(lock)
            fcntl.flock(fd, fcntl.LOCK_EX)  # Ctrl-C and SIGTERM (termination_as_interrupt) end the wait
        except OSError as exc:
            raise _cannot("lock", lock, exc) from None
        yield keep
    finally:
        os.close(fd)


def _cannot(action: str, path: Path, exc: OSError) -> errors.UsageError:
    """An OSError on the install path as a UsageError (exit 2): what, where, and the system's reason."""
    where = exc.filename if exc.filename else path
    reason = exc.strerror or str(exc)
    hint = None
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        hint = f"run as a user who may write {path}, or choose another --install-path"
    return errors.UsageError(f"cannot {action} {path}: {where}: {reason}", hint=hint)


def _tidy(root: Path, keep: Path) -> None:
    """Finish or remove what runs killed midway left in the keep directory (under the lock, so
    no run is using them): every vendor's rollback journal (the rollback is finished), journal
    temp files of write_atomic (``.ascenv-<v>.rollback.json.*.tmp``, left by a SIGKILL during
    the write: I9), and every vendor's partial copy and discarded tree."""
    with os.scandir(keep) as entries:
        names = [entry.name for entry in entries]
    for name in names:
        if name.startswith(TEMP_PREFIX) and name.endswith(".tmp") and f"{JOURNAL_SUFFIX}." in name:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(keep / name)
            continue
        if name.endswith(JOURNAL_SUFFIX) and vendor_name_problem(name[: -len(JOURNAL_SUFFIX)]) is None:
            # a damaged journal stops only its own vendor's runs, which raise it themselves
            with contextlib.suppress(errors.InputError):
                finish_interrupted(VendorPaths(root, name[: -len(JOURNAL_SUFFIX)]))
            continue
        for suffix in (".partial", ".discard", ".failed"):
            vendor = name[1 : -len(suffix)] if name.startswith(".") and name.endswith(suffix) else ""
            if vendor and vendor_name_problem(vendor) is None:
                _settle_keep(VendorPaths(root, vendor))


def _settle_keep(paths: VendorPaths) -> None:
    """A keep stopped midway, from what is on disk. The copy goes to ``partial``; only once it is
    whole is the old kept tree renamed to ``discard``, then ``partial`` to ``previous``. So a
    ``discard`` means ``partial`` is whole: it becomes the kept tree. A ``partial`` alone may be
    half a copy: it is removed. A ``failed`` tree (``put_back``) is removed: the kept copy is
    live again, or still at ``previous`` for --rollback."""
    _remove(paths.failed)
    if _identity(paths.discard) is not None:
        if _identity(paths.previous) is None:
            source = paths.partial if _identity(paths.partial) is not None else paths.discard
            os.rename(source, paths.previous)
            _sync_dir(paths.previous.parent)
        _remove(paths.discard)
    _remove(paths.partial)


# --- keep --------------------------------------------------------------------------------------


@contextlib.contextmanager
def replacing(root: Path, vendors: Sequence[str], on_wait: Waiting = _no_wait) -> Iterator[list[Path]]:
    """For an install into ``root`` (created when absent) that replaces ``vendors``: hold the
    install path's lock for the block (the installer runs inside it), after keeping each live
    vendor the install replaces (``keep_previous``); yields the kept trees. The trees kept before
    are held (``.<v>.discard``) until the block ends, for ``put_back`` to restore them."""
    for vendor in vendors:
        check_vendor_name(vendor, "the install")
    prepare_root(root, create=True)
    with locked(root, create=True, on_wait=on_wait) as keep:
        assert keep is not None
        try:
            _tidy(root, keep)
            kept = keep_previous(root, vendors, hold=True)
        except OSError as exc:  # finishing what killed runs left (keep_previous names its own)
            raise _cannot("prepare the install in", root, exc) from None
        try:
            yield kept
        finally:  # installed, or failed and not put back: the tree kept before goes, as it always did
            for vendor in vendors:
                with contextlib.suppress(OSError):
                    _remove(VendorPaths(root, vendor).discard)


def keep_previous(root: Path, vendors: Sequence[str], step: Step = _no_step, *, hold: bool = False) -> list[Path]:
    """Copy each live vendor the install will replace to ``.ascenv-previous/<v>`` (copied, not
    moved: the installer may merge into the existing directory). The copy is made under a
    partial name and renamed in, so the kept tree is complete or absent. The caller holds the
    lock (``replacing``). ``hold``: the tree kept before stays at ``.<v>.discard`` (a run killed
    meanwhile leaves it to the next run's ``_tidy``, which removes it)."""
    kept = []
    for vendor in vendors:
        paths = VendorPaths(root, check_vendor_name(vendor, "the install"))
        finish_interrupted(paths, step)
        if not paths.current.is_dir():
            continue
        keep = _keep_dir(root, create=True)
        assert keep is not None
        _settle_keep(paths)
        try:
            _copy_tree(paths.current, paths.partial)
            step("copied")
        except BaseException as exc:  # a full disk, an interrupt: the partial copy goes
            with contextlib.suppress(OSError):
                _remove(paths.partial)
            if isinstance(exc, OSError):
                raise _keep_failed(paths, exc) from None
            raise
        try:
            if _identity(paths.previous) is not None:
                os.rename(paths.previous, paths.discard)
            os.rename(paths.partial, paths.previous)
            _sync_dir(keep)
            step("kept")
            if not hold:
                _remove(paths.discard)
        except OSError as exc:
            raise _cannot("keep the previous vendor in", keep, exc) from None
        kept.append(paths.previous)
    return kept


# --- a failed install, undone ---------------------------------------------------------------------

CONFIG = "config.ini"  # vendors/config.ini: install.sh writes the vendors' load priority there


@dataclass(frozen=True)
class BeforeInstall:
    """What an install may change, as it was before the installer ran (under the lock)."""

    kept: tuple[str, ...]  # vendors that were live, each copied to .ascenv-previous/<v>
    config: Optional[bytes]  # vendors/config.ini; None when there was none
    config_mode: int = 0o644


def before_install(root: Path, vendors: Sequence[str], kept: Sequence[Path]) -> BeforeInstall:
    """The state ``put_back`` restores, read once ``replacing`` has kept the live vendors."""
    names = {path.name for path in kept}
    config = root / "vendors" / CONFIG
    try:
        mode = os.lstat(config).st_mode
        data: Optional[bytes] = config.read_bytes() if stat.S_ISREG(mode) else None
    except OSError:
        mode, data = 0o644, None
    return BeforeInstall(tuple(v for v in vendors if v in names), data, stat.S_IMODE(mode))


def put_back(root: Path, vendors: Sequence[str], before: BeforeInstall) -> list[str]:
    """Undo a failed install (the caller still holds the lock): each vendor that was live gets its
    kept copy back, byte for byte, and ``.ascenv-previous`` the tree it held before; a vendor the
    install created is removed; vendors/config.ini is as it was. Each step is a rename, so a run
    killed midway leaves the kept copy live or still kept, and the failed tree to ``_tidy``.
    Returns what was done, one sentence each; an OSError is an InstallFailed saying where."""
    said = []
    for vendor in vendors:
        paths = VendorPaths(root, vendor)
        try:
            if vendor in before.kept:
                if not _is_real_dir(paths.previous):  # nothing to put back: leave what is live
                    said.append(f"the previous {vendor} vendor could not be put back: {paths.previous} is gone")
                    continue
                _remove(paths.failed)
                if _identity(paths.current) is not None:
                    os.rename(paths.current, paths.failed)
                os.rename(paths.previous, paths.current)
                if _identity(paths.discard) is not None:
                    os.rename(paths.discard, paths.previous)
                _sync_dir(paths.current.parent)
                _sync_dir(paths.previous.parent)
                _remove(paths.failed)
                said.append(f"the {vendor} vendor is back as it was before ({paths.current})")
            elif _identity(paths.current) is not None:
                _remove(paths.failed)
                os.rename(paths.current, paths.failed)
                _sync_dir(paths.current.parent)
                _remove(paths.failed)
                said.append(f"the partial {vendor} vendor it left was removed ({paths.current})")
        except OSError as exc:
            raise errors.InstallFailed(
                f"the install failed and the {vendor} vendor could not be put back: "
                f"{exc.filename or paths.current}: {exc.strerror or exc}",
                hint=f"look at {paths.current} and {paths.previous}: ascenv install --rollback {vendor} "
                f"--install-path {root} swaps them",
            ) from None
    config = root / "vendors" / CONFIG
    try:
        now: Optional[bytes] = config.read_bytes() if config.is_file() else None
        if now != before.config:
            if before.config is None:
                config.unlink()
            else:
                write_atomic(config, before.config, mode=before.config_mode)
            said.append(f"{config} is back as it was")
    except OSError as exc:
        said.append(f"{config} could not be put back: {exc.strerror or exc}")
    return said


def _keep_failed(paths: VendorPaths, exc: OSError) -> errors.UsageError:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return errors.UsageError(
            f"no space to keep the previous vendor {paths.vendor}: copying {paths.current} "
            f"into {paths.previous.parent} failed ({exc.strerror}); nothing was installed",
            hint=f"free space on the file system of {paths.root} (the vendor it replaces is copied there first), "
            "then rerun",
        )
    return _cannot(f"keep the previous vendor {paths.vendor} from", paths.current, exc)


def _copy_tree(source: Path, target: Path) -> None:
    """``shutil.copytree(source, target, symlinks=True)`` that stops at the first error and
    raises it with its errno: copytree goes on after a failed file and then raises one
    shutil.Error listing them all as text (several KB on a full disk, the cause lost: I6).
    Symbolic links are copied as links, never followed; depth is not bounded by recursion.
    Directory modes and times are set last, once their contents are written."""
    os.mkdir(target)
    pending = [(source, target)]
    made = []
    while pending:
        src, dst = pending.pop()
        made.append((src, dst))
        with os.scandir(src) as entries:
            listed = list(entries)
        for entry in listed:
            to = dst / entry.name
            if entry.is_symlink():
                os.symlink(os.readlink(entry.path), to)
            elif entry.is_dir(follow_symlinks=False):
                os.mkdir(to)
                pending.append((Path(entry.path), to))
            elif entry.is_file(follow_symlinks=False):
                shutil.copy2(entry.path, to, follow_symlinks=False)
            else:
                raise errors.UsageError(
                    f"{entry.path} is {file_kind(entry.stat(follow_symlinks=False).st_mode)}: a vendor tree holds "
                    "files, directories and links, and ascenv cannot keep this one",
                    hint="remove it from the vendor directory, then rerun",
                )
    for src, dst in reversed(made):
        shutil.copystat(src, dst, follow_symlinks=False)


# --- rollback ----------------------------------------------------------------------------------


def _journal_target(paths: VendorPaths) -> Optional[tuple[int, int]]:
    """The (dev, inode) the journal of ``paths`` names, None when there is no journal (or it
    disappeared while being read: then there is nothing to finish)."""
    try:
        mode = os.lstat(paths.journal).st_mode
    except FileNotFoundError:
        return None
    unreadable = errors.InputError(
        f"the rollback journal {paths.journal} cannot be read",
        hint=f"look at {paths.current} and {paths.previous}, keep the right one, then remove the journal",
    )
    if not stat.S_ISREG(mode):
        raise unreadable
    try:
        text = read_input(paths.journal, what="rollback journal", limit=JOURNAL_LIMIT)
    except errors.InputError:
        if _identity(paths.journal) is None:
            return None
        raise unreadable from None
    try:
        data = json.loads(text)
        return (int(data["dev"]), int(data["ino"]))
    except (ValueError, KeyError, TypeError):
        raise unreadable from None


def finish_interrupted(paths: VendorPaths, step: Step = _no_step) -> bool:
    """Complete a rollback whose journal is still there; True when there was one."""
    target = _journal_target(paths)
    if target is None:
        return False
    _swap(paths, target, step)
    return True


def _swap(paths: VendorPaths, target: tuple[int, int], step: Step) -> None:
    """Bring the tree ``target`` to the live name; the tree it replaces goes to previous.
    Each branch starts from what is on disk, so it resumes wherever a killed run stopped."""
    vendors_dir = paths.current.parent
    if _identity(paths.current) != target:
        if _identity(paths.previous) == target:
            vendors_dir.mkdir(exist_ok=True)  # the live tree may have been removed, vendors/ too
            os.rename(paths.previous, paths.incoming)
            _sync_dir(vendors_dir)
            step("staged")
        if _identity(paths.incoming) != target:
            raise errors.InputError(
                f"the rollback of {paths.vendor} cannot go on: the kept tree is neither at "
                f"{paths.previous} nor at {paths.incoming}",
                hint=f"look at {vendors_dir}; remove {paths.journal} once the right vendor is in place",
            )
        if _identity(paths.current) is not None:
            if not _exchange(paths.incoming, paths.current):
                os.rename(paths.current, paths.outgoing)
                step("moved-out")
                os.rename(paths.incoming, paths.current)
        else:
            os.rename(paths.incoming, paths.current)
        _sync_dir(vendors_dir)
        step("swapped")
    for displaced in (paths.incoming, paths.outgoing):
        if _identity(displaced) not in (None, target) and _identity(paths.previous) is None:
            os.rename(displaced, paths.previous)
            _sync_dir(paths.previous.parent)
            step("kept")
    with contextlib.suppress(FileNotFoundError):
        paths.journal.unlink()
    _sync_dir(paths.journal.parent)
    step("done")


def vendor_units(path: Path) -> tuple[str, ...]:
    from ascenv.probe.fs import Root
    from ascenv.probe.vendors import compute_units

    return compute_units(Root(str(path)), "/")  # the tree as a root of its own


def rollback(
    root: Path,
    vendor: str,
    units: Callable[[Path], tuple[str, ...]] = vendor_units,
    step: Step = _no_step,
    on_wait: Waiting = _no_wait,
) -> Rollback:
    """Swap ``vendors/<vendor>`` with the tree kept when it was last replaced. ``units``: the
    compute units with kernels in a vendor tree (for the kernel caches to clear). A rollback
    left unfinished by a killed run is completed instead, and that is the rollback asked for.
    Runs under the install path's lock, and reads the state only once it holds it."""
    check_vendor_name(vendor, "--rollback")
    paths = VendorPaths(root, vendor)
    nothing_kept = errors.UsageError(
        f"no previous {vendor} vendor is kept in {paths.previous.parent}",
        hint="ascenv install keeps the vendor it replaces; nothing was installed over "
        f"{paths.current} since ascenv started keeping it",
    )
    if not prepare_root(root, create=False):
        raise nothing_kept
    with locked(root, create=False, on_wait=on_wait) as keep:
        if keep is None:
            raise nothing_kept
        try:
            finished = finish_interrupted(paths, step)  # before _tidy, which would finish it as well
            _tidy(root, keep)
            if finished:
                return _rolled_back(paths, True, units)
            if not _is_real_dir(paths.previous):
                raise nothing_kept
            target = _identity(paths.previous)
            assert target is not None
            try:
                write_atomic(paths.journal, json.dumps({"vendor": vendor, "dev": target[0], "ino": target[1]}) + "\n")
            except OSError as exc:
                raise _cannot("write the rollback journal (nothing was changed)", paths.journal, exc) from None
            step("journal")
            _swap(paths, target, step)
        except OSError as exc:
            raise _cannot(f"roll back {vendor} in", root, exc) from None
        return _rolled_back(paths, False, units)


def _rolled_back(paths: VendorPaths, finished: bool, units: Callable[[Path], tuple[str, ...]]) -> Rollback:
    found: set[str] = set()
    for tree in (paths.current, paths.previous):
        if tree.is_dir():
            found.update(units(tree))
    return Rollback(
        vendor=paths.vendor,
        install_path=str(paths.root),
        live=str(paths.current),
        kept=str(paths.previous),
        finished_interrupted=finished,
        compute_units=tuple(sorted(found)),
    )


def cache_command(compute_units: Sequence[str]) -> str:
    """The clean-cache call that drops compiled kernels a swapped vendor may still be served
    from (the runtime keys its disk cache by op and shape, not by the vendor's files)."""
    socs = "".join(f" --soc {u}" for u in compute_units)
    return f"ascenv clean-cache --kind kernel-cache --kind fuzzy-kernel-cache{socs} --yes"
