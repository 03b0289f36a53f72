"""The careful deleter: removes exactly the planned entries, never anything else.

- Each entry's root is opened once, from ``/`` one component at a time with ``O_NOFOLLOW``
  (``dirfd.open_dir_path``), and must be the directory the scan saw (same ``st_dev``/``st_ino``);
  the entry is then reached and removed with ``openat``/``unlinkat`` relative to descriptors (as
  ``shutil.rmtree``'s fd-based walk does), so a symlink anywhere, in the ancestors of a root
  too, is never followed: a symlink inside a cache is removed as a link, and a directory swapped
  for a symlink or another directory after the plan was shown is left alone.
- An entry must be its root or a direct child of it; anything else is refused.
- A mount point (a bind mount too: its own mount ID, same ``st_dev``) is never entered; with
  ``one_file_system`` (the default) a directory on another device is not entered either.
- The walk is iterative, with at most ``FD_BUDGET`` descriptors open: deeper ancestors are
  closed and reopened through ``..`` of their child, checked to be the same directory.
- CANN's ``op_cache.ini``, files of other users (unless ``uid`` is None: --all-users) and files
  whose mtime is at or after ``recent_cutoff`` are kept; the directories holding them stay. The
  scan applies the same rules (``scan.keep_rule``), so the plan counts what this removes.
- Files that vanish meanwhile are fine; permission errors are collected, not raised.
- The journal (JSON lines, never written through a symlink) gets a ``begin`` line before an
  entry is touched and its ``remove`` line after, also when the run is interrupted.
"""

from __future__ import annotations

import datetime
import errno
import json
import os
import posixpath
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Optional

from ascenv import errors
from ascenv.cache.dirfd import DIR_FLAGS, mount_id, open_dir_path
from ascenv.cache.entry import FOREIGN, RECENT, CacheEntry, display_path
from ascenv.cache.plan import Plan
from ascenv.cache.scan import keep_rule

FD_BUDGET = 64  # directory descriptors one delete keeps open at most


@dataclass
class EntryResult:
    path: str
    kind: str
    removed_files: int = 0
    removed_dirs: int = 0
    freed: int = 0  # allocated bytes of what was unlinked (hard-linked files free nothing)
    kept_recent: int = 0
    kept_foreign: int = 0
    kept_other: int = 0  # op_cache.ini, other file systems
    vanished: int = 0
    errors: list[str] = field(default_factory=list)  # what failed or changed since the plan: exit 1
    left_alone: list[str] = field(default_factory=list)  # never entered by rule (mounts, other file systems)


@dataclass(frozen=True)
class Outcome:
    results: tuple[EntryResult, ...] = ()

    @property
    def freed(self) -> int:
        return sum(r.freed for r in self.results)

    @property
    def files(self) -> int:
        return sum(r.removed_files for r in self.results)

    @property
    def errors(self) -> list[str]:
        return [e for r in self.results for e in r.errors]

    @property
    def kept_recent(self) -> int:
        return sum(r.kept_recent for r in self.results)

    @property
    def kept_foreign(self) -> int:
        return sum(r.kept_foreign for r in self.results)

    @property
    def left_alone(self) -> list[str]:
        return [x for r in self.results for x in r.left_alone]

    @property
    def deleted(self) -> tuple[EntryResult, ...]:
        """Entries removed as planned (what is kept by rule aside: recent files, other users',
        mount points inside)."""
        return tuple(r for r in self.results if not r.errors and (_removed_any(r) or not r.left_alone))

    @property
    def partly_deleted(self) -> tuple[EntryResult, ...]:
        """Entries of which something went and something could not (an immutable file)."""
        return tuple(r for r in self.results if r.errors and _removed_any(r))

    @property
    def skipped(self) -> tuple[EntryResult, ...]:
        """Entries left as they were: changed after the scan, refused by their owner, a mount."""
        return tuple(r for r in self.results if (r.errors or r.left_alone) and not _removed_any(r))

    @property
    def complete(self) -> bool:
        """Nothing failed or changed since the plan (the command exits 1 otherwise); what is
        left alone by rule, every time (mount points, other file systems), does not count."""
        return not any(r.errors for r in self.results)


def _removed_any(r: EntryResult) -> bool:
    return bool(r.removed_files or r.removed_dirs or r.freed)


class _Stop(Exception):
    """The walk cannot go on safely (an ancestor moved while cleaning)."""


@dataclass
class _Frame:
    fd: Optional[int]  # None: closed to stay within FD_BUDGET, reopened through ".." of its child
    name: str
    path: str
    names: list
    st: os.stat_result


class _Remover:
    def __init__(self, result: EntryResult, uid: Optional[int], recent_cutoff: float, one_fs: bool) -> None:
        self.r = result
        self.uid = uid
        self.recent = recent_cutoff
        self.one_fs = one_fs

    def error(self, path: str, exc: OSError) -> None:
        self.r.errors.append(f"{display_path(path)}: {exc.strerror or exc}")

    def remove_file(self, dir_fd: int, name: str, st: os.stat_result, path: str) -> bool:
        """Unlink one non-directory (a symlink is removed as a link); True when it is gone."""
        rule = keep_rule(name, st, self.uid, self.recent)  # the rules the scan counted by
        if rule is not None:
            if rule == RECENT:
                self.r.kept_recent += 1
            elif rule == FOREIGN:
                self.r.kept_foreign += 1
            else:
                self.r.kept_other += 1
            return False
        try:
            os.unlink(name, dir_fd=dir_fd)
        except FileNotFoundError:
            self.r.vanished += 1
            return True
        except OSError as exc:
            self.error(path, exc)
            return False
        self.r.removed_files += 1
        if st.st_nlink <= 1:
            self.r.freed += st.st_blocks * 512
        return True

    def enter(self, parent_fd: int, name: str, st: os.stat_result, path: str, dev: int, mnt: Optional[int]):
        """Open the directory ``name`` (seen as ``st``) and list it: (fd, names), or None when
        it must be left alone (another file system, a mount point, swapped since the lstat)."""
        if self.one_fs and st.st_dev != dev:
            self.r.kept_other += 1
            self.r.left_alone.append(f"{display_path(path)}: on another file system, left alone")
            return None
        try:
            fd = os.open(name, DIR_FLAGS, dir_fd=parent_fd)
        except FileNotFoundError:
            self.r.vanished += 1
            return None
        except OSError as exc:  # ELOOP/ENOTDIR: swapped for a symlink or a file since lstat
            self.error(path, exc)
            return None
        try:
            opened = os.fstat(fd)
            if (opened.st_dev, opened.st_ino) != (st.st_dev, st.st_ino):
                self.r.errors.append(f"{display_path(path)}: replaced while cleaning, left alone")
            elif mnt is not None and mount_id(fd) != mnt:
                self.r.kept_other += 1
                self.r.left_alone.append(f"{display_path(path)}: a mount point, left alone")
            else:
                names = os.listdir(fd)
                names.reverse()  # popped from the end: removed in listing order
                return fd, names
        except OSError as exc:
            self.error(path, exc)
        os.close(fd)
        return None

    def remove_tree(
        self, parent_fd: int, name: str, st: os.stat_result, path: str, dev: int, mnt: Optional[int]
    ) -> bool:
        """Empty and remove the directory ``name`` of ``parent_fd``, depth first, without
        recursion; True when it is gone."""
        opened = self.enter(parent_fd, name, st, path, dev, mnt)
        if opened is None:
            return False
        stack = [_Frame(opened[0], name, path, opened[1], st)]
        gone = False
        try:
            while stack:
                top = stack[-1]
                assert top.fd is not None
                pushed = False
                while top.names:
                    child = top.names.pop()
                    child_path = top.path + "/" + child
                    try:
                        cst = os.lstat(child, dir_fd=top.fd)
                    except FileNotFoundError:
                        self.r.vanished += 1
                        continue
                    except OSError as exc:
                        self.error(child_path, exc)
                        continue
                    if not stat.S_ISDIR(cst.st_mode):
                        self.remove_file(top.fd, child, cst, child_path)
                        continue
                    sub = self.enter(top.fd, child, cst, child_path, dev, mnt)
                    if sub is not None:
                        stack.append(_Frame(sub[0], child, child_path, sub[1], cst))
                        self._park(stack)
                        pushed = True
                        break
                if pushed:
                    continue
                stack.pop()
                parent = stack[-1] if stack else None
                if parent is not None and parent.fd is None:
                    parent.fd = self._reopen_parent(top, parent)
                os.close(top.fd)
                top.fd = None
                into = parent.fd if parent is not None else parent_fd
                assert into is not None
                gone = self._rmdir(into, top)
        except _Stop:
            pass
        finally:
            for frame in stack:
                if frame.fd is not None:
                    os.close(frame.fd)
        return gone

    @staticmethod
    def _park(stack: list) -> None:
        """Keep FD_BUDGET descriptors open: the entry's own and those of the deepest frames."""
        index = len(stack) - FD_BUDGET
        if index >= 1 and stack[index].fd is not None:
            os.close(stack[index].fd)
            stack[index].fd = None

    def _reopen_parent(self, child: _Frame, parent: _Frame) -> int:
        assert child.fd is not None
        fd = os.open("..", DIR_FLAGS, dir_fd=child.fd)
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != (parent.st.st_dev, parent.st.st_ino):
            os.close(fd)
            self.r.errors.append(f"{display_path(parent.path)}: moved while cleaning, stopped")
            raise _Stop
        return fd

    def _rmdir(self, parent_fd: int, frame: _Frame) -> bool:
        try:
            os.rmdir(frame.name, dir_fd=parent_fd)
        except FileNotFoundError:
            return True
        except OSError as exc:
            if exc.errno != errno.ENOTEMPTY:  # something inside was kept
                self.error(frame.path, exc)
            return False
        self.r.removed_dirs += 1
        self.r.freed += frame.st.st_blocks * 512
        return True


def remove_entry(
    entry: CacheEntry,
    *,
    uid: Optional[int],
    recent_cutoff: float,
    one_file_system: bool = True,
    result: Optional[EntryResult] = None,
) -> EntryResult:
    """Remove one planned entry; ``result`` (filled as it goes) lets an interrupted caller
    journal what was already removed."""
    result = result if result is not None else EntryResult(entry.path, entry.kind)
    path = posixpath.normpath(entry.path)
    root = posixpath.normpath(entry.root)
    if not path.startswith("/"):
        result.errors.append(f"{display_path(path)}: not an absolute path, refused")
        return result
    if path == root:
        base, name = posixpath.split(path)
    elif posixpath.dirname(path) == root:
        base, name = root, posixpath.basename(path)
    else:
        result.errors.append(f"{display_path(path)}: not its root {display_path(root)} or a child of it, refused")
        return result
    if name in ("", ".", ".."):
        result.errors.append(f"{display_path(path)}: not a removable name, refused")
        return result
    remover = _Remover(result, uid, recent_cutoff, one_file_system)
    try:
        base_fd = open_dir_path(base)
    except FileNotFoundError:
        return result  # already gone: nothing to do (a second run is a no-op)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            result.errors.append(
                f"{display_path(base)}: a symlink or a file is now in its path (it changed after the scan), left alone"
            )
        else:
            remover.error(base, exc)
        return result
    try:
        base_st = os.fstat(base_fd)
        if path != root and entry.root_identity is not None and (base_st.st_dev, base_st.st_ino) != entry.root_identity:
            result.errors.append(f"{display_path(base)}: not the directory that was scanned (replaced), left alone")
            return result
        try:
            st = os.lstat(name, dir_fd=base_fd)
        except FileNotFoundError:
            return result
        except OSError as exc:
            remover.error(path, exc)
            return result
        if entry.identity is not None and (st.st_dev, st.st_ino) != entry.identity:
            result.errors.append(f"{display_path(path)}: not what was scanned (replaced since), left alone")
            return result
        if stat.S_ISDIR(st.st_mode):
            dev = base_st.st_dev if path != root else st.st_dev
            remover.remove_tree(base_fd, name, st, path, dev, mount_id(base_fd))
        else:
            remover.remove_file(base_fd, name, st, path)
    finally:
        os.close(base_fd)
    return result


def execute(
    plan: Plan,
    *,
    uid: Optional[int],
    recent_cutoff: float,
    one_file_system: bool = True,
    journal: Optional[str] = None,
    now: Optional[float] = None,
    remove_other: Optional[Callable[[CacheEntry], Optional[str]]] = None,
) -> Outcome:
    """Remove exactly the planned entries (no re-scan between the confirmation and the delete).
    ``remove_other`` removes the entries that have an ``owner`` (labelled containers and images,
    builds in the store): an error message, or None when it is gone. The journal is opened
    before anything is removed: when it cannot be written, nothing is."""
    results = []
    log = _Journal(journal, now) if journal else None
    try:
        for entry in plan.entries:
            result = EntryResult(entry.path, entry.kind)
            if log is not None:
                log.write("begin", entry)
            interrupted = True
            try:
                if entry.owner is not None or entry.kind == "container":
                    problem = (
                        remove_other(entry)
                        if remove_other
                        else f"nothing to remove it with ({entry.owner or 'no engine'})"
                    )
                    if problem:
                        result.errors.append(f"{display_path(entry.path)}: {problem}")
                    else:
                        result.freed, result.removed_files = entry.freeable, entry.freeable_files
                else:
                    remove_entry(
                        entry, uid=uid, recent_cutoff=recent_cutoff, one_file_system=one_file_system, result=result
                    )
                interrupted = False
            finally:
                results.append(result)
                if log is not None:
                    log.write("remove", entry, result, interrupted=interrupted)
    finally:
        if log is not None:
            log.close()
    return Outcome(tuple(results))


class _Journal:
    """The append-only JSON-lines journal; opened without following a symlink."""

    def __init__(self, path: str, now: Optional[float]) -> None:
        self.path = path
        self.stamp = (
            datetime.datetime.fromtimestamp(now, datetime.timezone.utc).isoformat() if now is not None else None
        )
        self.fd = _open_state_file(path, os.O_WRONLY | os.O_APPEND)

    def write(self, action: str, entry: CacheEntry, result: Optional[EntryResult] = None, **extra) -> None:
        record: dict = {
            "time": self.stamp or datetime.datetime.now(datetime.timezone.utc).isoformat(),
            "action": action,
            "kind": entry.kind,
            "path": display_path(entry.path),
        }
        if result is not None:
            record.update(
                freed=result.freed,
                files=result.removed_files,
                dirs=result.removed_dirs,
                kept_recent=result.kept_recent,
                kept_foreign=result.kept_foreign,
                errors=result.errors + result.left_alone,
            )
            record.update({k: v for k, v in extra.items() if v})
        os.write(self.fd, (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))  # one write: one line

    def close(self) -> None:
        os.close(self.fd)


def _open_state_file(path: str, flags: int) -> int:
    """Open (create, 0600) a file of the state directory, never through a symlink; a clear
    error (exit 2) when that cannot be done."""
    directory = os.path.dirname(path)
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        return os.open(path, flags | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise errors.UsageError(
                f"cannot write {display_path(path)}: it is a symbolic link, and ascenv does not write through one",
                hint="remove the link (or set XDG_STATE_HOME to another directory) and rerun",
            ) from None
        raise errors.UsageError(
            f"cannot write {display_path(path)}: {exc.strerror or exc}",
            hint=f"make {display_path(directory)} a writable directory, or set XDG_STATE_HOME to one, and rerun",
        ) from None


@contextmanager
def exclusive(lock_path: str) -> Iterator[None]:
    """Hold the clean-cache lock of the state directory: two deletes never run at once (they
    would split the counts and take each other's unlinks for recent changes)."""
    import fcntl

    fd = _open_state_file(lock_path, os.O_RDWR)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise errors.UsageError(
                "another ascenv clean-cache is deleting right now",
                hint="wait for it to finish, then rerun (its plan may already cover yours)",
            ) from None
        yield
    finally:
        os.close(fd)
