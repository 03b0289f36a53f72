"""The careful deleter: removes exactly the planned entries, never anything else.

- Each entry is reached from its root through directory fds opened with ``O_NOFOLLOW`` and
  removed with ``unlinkat``/``rmdir`` relative to those fds (as ``shutil.rmtree``'s fd-based
  walk does), so a symlink inside a cache is removed as a link and never followed, and a
  directory swapped for a symlink mid-run fails to open instead of leading outside.
- An entry must be its root or a direct child of it; anything else is refused.
- With ``one_file_system`` (the default) a directory on another device is left alone.
- Files of other users (unless ``uid`` is None: --all-users), files whose ctime is at or after
  ``recent_cutoff`` and CANN's ``op_cache.ini`` are kept; the directories holding them stay.
- Files that vanish meanwhile are fine; permission errors are collected, not raised.
- Each entry done is appended to the journal (JSON lines) before the next one starts.
"""

from __future__ import annotations

import datetime
import errno
import json
import os
import posixpath
import stat
from dataclasses import dataclass, field
from typing import Callable, Optional

from ascenv.cache.entry import CacheEntry, display_path
from ascenv.cache.plan import Plan

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
KEEP_NAMES = frozenset({"op_cache.ini"})  # the cache's size/aging settings, not a cached kernel


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
    errors: list[str] = field(default_factory=list)


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
        if name in KEEP_NAMES:
            self.r.kept_other += 1
            return False
        if self.uid is not None and st.st_uid != self.uid:
            self.r.kept_foreign += 1
            return False
        if st.st_ctime >= self.recent:
            self.r.kept_recent += 1
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

    def remove_tree(self, parent_fd: int, name: str, st: os.stat_result, path: str, dev: int) -> bool:
        """Empty and remove the directory ``name`` of ``parent_fd``; True when it is gone."""
        if self.one_fs and st.st_dev != dev:
            self.r.kept_other += 1
            self.r.errors.append(f"{display_path(path)}: on another file system, left alone")
            return False
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
        except FileNotFoundError:
            self.r.vanished += 1
            return True
        except OSError as exc:  # ELOOP/ENOTDIR: swapped for a symlink or a file since lstat
            self.error(path, exc)
            return False
        try:
            opened = os.fstat(fd)
            if (opened.st_dev, opened.st_ino) != (st.st_dev, st.st_ino):
                self.r.errors.append(f"{display_path(path)}: replaced while cleaning, left alone")
                return False
            try:
                names = os.listdir(fd)
            except OSError as exc:
                self.error(path, exc)
                return False
            for child in names:
                child_path = path + "/" + child
                try:
                    cst = os.lstat(child, dir_fd=fd)
                except FileNotFoundError:
                    self.r.vanished += 1
                    continue
                except OSError as exc:
                    self.error(child_path, exc)
                    continue
                if stat.S_ISDIR(cst.st_mode):
                    self.remove_tree(fd, child, cst, child_path, dev)
                else:
                    self.remove_file(fd, child, cst, child_path)
        finally:
            os.close(fd)
        try:
            os.rmdir(name, dir_fd=parent_fd)
        except FileNotFoundError:
            return True
        except OSError as exc:
            if exc.errno != errno.ENOTEMPTY:  # something inside was kept
                self.error(path, exc)
            return False
        self.r.removed_dirs += 1
        self.r.freed += st.st_blocks * 512
        return True


def remove_entry(
    entry: CacheEntry, *, uid: Optional[int], recent_cutoff: float, one_file_system: bool = True
) -> EntryResult:
    result = EntryResult(entry.path, entry.kind)
    path = posixpath.normpath(entry.path)
    root = posixpath.normpath(entry.root)
    if path == root:
        base, name = posixpath.split(path)
        flags = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)  # the root's parent: the user's choice
    elif posixpath.dirname(path) == root:
        base, name = root, posixpath.basename(path)
        flags = _DIR_FLAGS
    else:
        result.errors.append(f"{display_path(path)}: not its root {display_path(root)} or a child of it, refused")
        return result
    if name in ("", ".", ".."):
        result.errors.append(f"{display_path(path)}: not a removable name, refused")
        return result
    remover = _Remover(result, uid, recent_cutoff, one_file_system)
    try:
        base_fd = os.open(base, flags)
    except FileNotFoundError:
        return result  # already gone: nothing to do (a second run is a no-op)
    except OSError as exc:
        remover.error(base, exc)
        return result
    try:
        try:
            st = os.lstat(name, dir_fd=base_fd)
        except FileNotFoundError:
            return result
        except OSError as exc:
            remover.error(path, exc)
            return result
        if stat.S_ISDIR(st.st_mode):
            remover.remove_tree(base_fd, name, st, path, os.fstat(base_fd).st_dev if path != root else st.st_dev)
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
    builds in the store): an error message, or None when it is gone."""
    results = []
    stamp = datetime.datetime.fromtimestamp(now, datetime.timezone.utc).isoformat() if now is not None else None
    log = _open_journal(journal) if journal else None
    try:
        for entry in plan.entries:
            if entry.owner is not None or entry.kind == "container":
                result = EntryResult(entry.path, entry.kind)
                problem = (
                    remove_other(entry) if remove_other else f"nothing to remove it with ({entry.owner or 'no engine'})"
                )
                if problem:
                    result.errors.append(f"{display_path(entry.path)}: {problem}")
                else:
                    result.freed, result.removed_files = entry.freeable, entry.freeable_files
            else:
                result = remove_entry(entry, uid=uid, recent_cutoff=recent_cutoff, one_file_system=one_file_system)
            results.append(result)
            if log is not None:
                log.write(
                    json.dumps(
                        {
                            "time": stamp or datetime.datetime.now(datetime.timezone.utc).isoformat(),
                            "action": "remove",
                            "kind": entry.kind,
                            "path": display_path(entry.path),
                            "freed": result.freed,
                            "files": result.removed_files,
                            "dirs": result.removed_dirs,
                            "kept_recent": result.kept_recent,
                            "kept_foreign": result.kept_foreign,
                            "errors": result.errors,
                        },
                        ensure_ascii=False,
                    )
                    + "\n"
                )
                log.flush()
    finally:
        if log is not None:
            log.close()
    return Outcome(tuple(results))


def _open_journal(path: str):
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    return open(path, "a", encoding="utf-8")
