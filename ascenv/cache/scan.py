"""The scanner: size, file count and age of every cache entry, as fast as ``du``.

Sizes are *allocated* bytes (``st_blocks * 512``, hard links counted once per entry, the
directories' own blocks included): what ``du -s -B1`` prints and what a delete frees. The
apparent size (sum of ``st_size``) is kept beside it.

Speed: each directory is opened once (``O_NOFOLLOW``), listed with ``os.listdir(fd)`` and every
name is ``lstat``-ed relative to that fd (``fstatat``, as ``du``'s fts does), without building a
``DirEntry`` or a full path per file. That still costs 1.5 to 1.8 times ``du``'s CPU per file
(the syscall is most of both), so the work is shared by processes: forked workers
(``cache.workers``) and this one, which scans between handing out jobs (threads do not help:
the loop holds the GIL between the syscalls). Small trees never fork: the first
``SERIAL_BUDGET`` names are stat-ed here, and only what is still queued after that is shared,
in batches of directories (directories bigger than ``CHUNK`` names are split); a worker goes on
into the sub-directories its batch holds, up to ``WORKER_BUDGET`` names, and each batch comes
back as one set of sums per tree, not one result per directory.
``bench/bench_cache_scan.py`` measures the ratio to ``du -s``.

Nothing is followed: symlinks are counted as what they are (``lstat``), directories are opened
with ``O_NOFOLLOW``, a mount point (a bind mount too: same ``st_dev``, its own mount) is never
entered, and with ``one_file_system`` a directory on another device is not entered either (both
reported). A directory is opened relative to its parent's descriptor while that is still open
(the last ``_OPEN_CACHE`` scanned), else by its path; deeper than PATH_MAX, relative to its
nearest open ancestor. Files and directories that vanish while scanning are simply not counted;
an unreadable directory is reported in the entry's ``errors``.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections import OrderedDict, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Optional

from ascenv.cache.dirfd import mount_points, open_dir_path
from ascenv.cache.entry import (
    FOREIGN,
    KEEP_NAMES,
    KINDS,
    RECENT,
    SETTINGS,
    CacheEntry,
    CacheReport,
    CacheRoot,
    Kept,
    display_path,
)
from ascenv.cache.workers import DEPTH, Workers, can_fork

SERIAL_BUDGET = 2048  # names stat-ed before forking a worker is worth it (a fork costs ~3 ms)
CHUNK = 2048  # names per job when one directory is split between workers (~6 ms of work)
# directories a worker's job carries at most: one pipe write, one wake-up of the worker and one
# poll of the caller per batch, not per directory. One job a directory spent a third of the
# caller's time in write() on 20,000 directories of 5 files (cProfile; issue 25's "many small
# directories" at 3.35x du -s)
BATCH = 32
# names a worker's batch goes on stat-ing in the sub-directories it finds, before handing the rest
# back: on 40,000 directories of 5 files the caller, queueing and handing out every directory,
# was busier than the worker and kept it waiting
WORKER_BUDGET = 4 * CHUNK
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_NEVER_ENTRIES = ("CACHEDIR.TAG", "README", "README.md")  # ascenv's store markers stay
_MOUNTS: frozenset[str] = frozenset()  # mount points, read once per scan (forked workers inherit it)
# Descriptors of the directories scanned last, kept open so that a sub-directory opens by its one
# name relative to its parent (openat, as du's fts does) rather than by a full path the kernel
# resolves again from /: on 20 chains of 100 nested directories those path walks took 40 us an
# open (strace), 10 % of the walk's system time. Past PATH_MAX they are the only way down.
# Relative to an open parent is also where the name was listed: no component is resolved anew.
_OPEN_CACHE = 64
_open: OrderedDict[str, int] = OrderedDict()


def _open_dir(path: str) -> int:
    parent, _, name = path.rpartition("/")
    parent_fd = _open.get(parent)
    if parent_fd is not None:
        return os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
    try:
        return os.open(path, _DIR_FLAGS)
    except OSError as exc:
        if exc.errno != errno.ENAMETOOLONG:
            raise
    # past PATH_MAX: walk from the deepest open ancestor (the parent, in a breadth-first walk)
    start = None
    while start is None and "/" in parent.strip("/"):
        parent = parent.rsplit("/", 1)[0]
        if parent in _open:
            start = (parent + "/", _open[parent])
    return open_dir_path(path, start)


def _keep_open(path: str, fd: int) -> None:
    """Keep the descriptor of a scanned directory for its sub-directories; the oldest is closed
    (and one of the same directory: a big directory is scanned in chunks, each opening it)."""
    old = _open.pop(path, None)
    if old is not None:
        os.close(old)
    _open[path] = fd
    while len(_open) > _OPEN_CACHE:
        os.close(_open.popitem(last=False)[1])


def _forget_open() -> None:
    while _open:
        os.close(_open.popitem()[1])


@dataclass(frozen=True)
class TreeStats:
    allocated: int = 0
    apparent: int = 0
    files: int = 0
    dirs: int = 0
    newest: Optional[float] = None
    oldest: Optional[float] = None
    kept_files: int = 0  # op_cache.ini, other users' files (when uid is given), files modified recently
    kept_bytes: int = 0  # theirs, the directories that stay holding them, hard links with a name elsewhere
    kept: tuple[Kept, ...] = ()
    errors: tuple[str, ...] = ()


def keep_rule(name: str, st: os.stat_result, uid: Optional[int], recent: float) -> Optional[str]:
    """Why the deleter keeps this non-directory (None: it goes), rules checked in its order.
    Recent is judged by the mtime, the time ``ls -l``, ``find -mtime``, the AGE column and
    --older-than show, and the one ``touch -d`` sets (a tree aged that way is old)."""
    if name in KEEP_NAMES:
        return SETTINGS
    if uid is not None and st.st_uid != uid:
        return FOREIGN
    return RECENT if st.st_mtime >= recent else None


def _note_kept(why: dict, rule: str, path: str, st: os.stat_result) -> None:
    """Count a kept file under its rule; name the most recently modified if recent, else the
    first by path (as ``_scan_dir`` does inline)."""
    mtime = st.st_mtime if rule == RECENT else 0.0
    seen = why.get(rule)
    if seen is None:
        why[rule] = [1, path, mtime, st.st_uid]
        return
    seen[0] += 1
    if (-mtime, path) < (-seen[2], seen[1]):
        seen[1:] = [path, mtime, st.st_uid]


# What a scan of some directories of one tree adds up to, filled in place by ``_scan_dir``: one
# list per tree and batch of directories, handed from a worker to the caller whole (``_Acc.merge``
# once per batch, not once per directory: on 40,000 directories of 5 files the per-directory
# result tuples and their merges were a third of the caller's time)
BLOCKS, SIZE, FILES, DIRS, KEPT_FILES, KEPT_BLOCKS, NEWEST, OLDEST = range(8)
LINKS, WHY, ERRORS, STAYING, SUBDIRS, CHUNKS, UNSCANNED = range(8, 15)


def _new_sums() -> list:
    """[blocks, size, files, dirs, kept files, kept blocks, newest, oldest, hard links,
    why kept {rule: [files, example, mtime, uid]}, errors, directories that stay,
    (sub-directory, st_blocks) of every sub-directory found, (directory, names) chunks still to
    scan, where the sub-directories still to scan start in that list]"""
    return [0, 0, 0, 0, 0, 0, None, None, [], {}, [], [], [], [], 0]


def _scan_dir(
    path: str, names: Optional[list], dev: int, uid: Optional[int], recent: float, one_fs: bool, sums: list
) -> int:
    """lstat ``names`` (all entries when None) of one directory, relative to its fd, and add
    what it holds to ``sums`` (see ``_new_sums``); the number of names stat-ed.

    Runs in worker processes too, so it takes and fills plain data. A directory stays (listed
    in ``sums[STAYING]``) when something in it is left by the delete (a kept file, a directory
    not entered, an error), so that its ancestors stay too."""
    errors = sums[ERRORS]
    try:
        fd = _open_dir(path)
    except (FileNotFoundError, NotADirectoryError):
        return 0  # vanished, or replaced by a file or a symlink since it was listed
    except OSError as exc:
        _unscanned(path, exc, sums)
        return 0
    try:
        if names is None:
            try:
                names = os.listdir(fd)
            except OSError as exc:
                _unscanned(path, exc, sums)
                return 0
            if len(names) > CHUNK:  # this call takes the first chunk, the others are queued
                sums[CHUNKS].extend((path, names[i : i + CHUNK]) for i in range(CHUNK, len(names), CHUNK))
                names = names[:CHUNK]
        # the loop runs once per file: locals only, no call but the lstat, no None checks
        lstat = os.lstat
        dir_bits, dir_type = stat.S_IFMT(0o170000), stat.S_IFDIR
        check_uid = uid is not None
        keep_names = KEEP_NAMES
        n_settings = n_foreign = n_recent = foreign_uid = 0
        settings_name = foreign_name = recent_name = ""
        latest = 0.0
        stays = False
        blocks = size = files = dirs = kept_files = kept_blocks = 0
        newest, oldest = float("-inf"), float("inf")
        links = sums[LINKS]
        subdirs = sums[SUBDIRS]
        for name in names:
            try:
                st = lstat(name, dir_fd=fd)
            except FileNotFoundError:
                continue
            except OSError as exc:
                errors.append(f"{display_path(path)}/{display_path(name)}: {exc.strerror}")
                stays = True
                continue
            if st.st_mode & dir_bits == dir_type:
                sub = path + "/" + name
                if one_fs and st.st_dev != dev:
                    errors.append(f"{display_path(sub)}: another file system, not entered")
                    stays = True
                    continue
                if sub in _MOUNTS:
                    errors.append(f"{display_path(sub)}: a mount point, not entered")
                    stays = True
                    continue
                dirs += 1
                blocks += st.st_blocks
                size += st.st_size
                subdirs.append((sub, st.st_blocks))
                continue
            files += 1
            mtime = st.st_mtime
            if mtime > newest:
                newest = mtime
            if mtime < oldest:
                oldest = mtime
            keep = mtime >= recent or (check_uid and st.st_uid != uid) or name in keep_names
            if keep:  # keep_rule inline (every file of a fresh cache comes here): count, name one
                kept_files += 1
                if name in keep_names:
                    if not n_settings or name < settings_name:
                        settings_name = name
                    n_settings += 1
                elif check_uid and st.st_uid != uid:
                    if not n_foreign or name < foreign_name:
                        foreign_name, foreign_uid = name, st.st_uid
                    n_foreign += 1
                else:
                    if not n_recent or mtime > latest or (mtime == latest and name < recent_name):
                        recent_name, latest = name, mtime
                    n_recent += 1
            if st.st_nlink > 1:  # its blocks once per inode, and freed only if every name goes
                links.append((st.st_dev, st.st_ino, st.st_blocks, st.st_size, keep, st.st_nlink))
                continue
            nblocks = st.st_blocks
            blocks += nblocks
            size += st.st_size
            if keep:
                kept_blocks += nblocks
        sums[BLOCKS] += blocks
        sums[SIZE] += size
        sums[FILES] += files
        sums[DIRS] += dirs
        if files:
            sums[KEPT_FILES] += kept_files
            sums[KEPT_BLOCKS] += kept_blocks
            if sums[NEWEST] is None:
                sums[NEWEST], sums[OLDEST] = newest, oldest
            else:
                sums[NEWEST] = max(sums[NEWEST], newest)
                sums[OLDEST] = min(sums[OLDEST], oldest)
            if kept_files:
                why = sums[WHY]  # rule -> [files, example, mtime, uid], as _note_kept keeps it
                if n_settings:
                    _add_why(why, SETTINGS, n_settings, path + "/" + settings_name, 0.0, 0)
                if n_foreign:
                    _add_why(why, FOREIGN, n_foreign, path + "/" + foreign_name, 0.0, foreign_uid)
                if n_recent:
                    _add_why(why, RECENT, n_recent, path + "/" + recent_name, latest, 0)
                stays = True
        if stays:
            sums[STAYING].append(path)
        return len(names)
    finally:
        _keep_open(path, fd)


def _add_why(why: dict, rule: str, count: int, example: str, mtime: float, owner: int) -> None:
    """Add ``count`` files kept by ``rule``; the example is the most recently modified, then
    the first by path (whatever order directories are scanned and merged in)."""
    mine = why.get(rule)
    if mine is None:
        why[rule] = [count, example, mtime, owner]
        return
    mine[0] += count
    if (-mtime, example) < (-mine[2], mine[1]):
        mine[1:] = [example, mtime, owner]


def _unscanned(path: str, exc: OSError, sums: list) -> None:
    sums[ERRORS].append(f"{display_path(path)}: {exc.strerror} (not scanned)")
    sums[STAYING].append(path)


class _Acc:
    """Running totals of one tree (main process only)."""

    def __init__(self, top: str) -> None:
        self.top = top
        self.counts = [0, 0, 0, 0, 0, 0]  # blocks, size, files, dirs, kept files, kept blocks
        self.newest: Optional[float] = None
        self.oldest: Optional[float] = None
        self.inodes: dict = {}  # (dev, ino) of a hard-linked file -> [names seen, links, blocks, kept]
        self.errors: list[str] = []
        self.why: dict = {}
        self.staying: set[str] = set()  # directories holding something the delete leaves
        self.dir_blocks: dict[str, int] = {}  # st_blocks of every directory, as its parent listed it

    def add_top(self, st: os.stat_result, uid: Optional[int], recent: float) -> None:
        self.counts[0] += st.st_blocks
        self.counts[1] += st.st_size
        if stat.S_ISDIR(st.st_mode):
            self.counts[3] += 1
            self.dir_blocks[self.top] = st.st_blocks
            return
        self.counts[2] += 1
        rule = keep_rule(os.path.basename(self.top), st, uid, recent)
        if rule is not None:
            _note_kept(self.why, rule, self.top, st)
            self.counts[4] += 1
            self.counts[5] += st.st_blocks
        elif st.st_nlink > 1:  # another name keeps its blocks
            self.counts[5] += st.st_blocks
        self.newest = self.oldest = st.st_mtime

    def merge(self, sums: list) -> None:
        """Add the sums of some of this tree's directories (``_new_sums``); the sub-directories
        and chunks they list are the caller's to queue."""
        c = self.counts
        for i in range(6):
            c[i] += sums[i]
        newest, oldest = sums[NEWEST], sums[OLDEST]
        if newest is not None:
            self.newest = newest if self.newest is None else max(self.newest, newest)
            self.oldest = oldest if self.oldest is None else min(self.oldest, oldest)
        for dev, ino, nblocks, nsize, keep, nlink in sums[LINKS]:  # already in ``files`` and ``kept_files``
            seen = self.inodes.get((dev, ino))
            if seen is not None:  # a hard link already counted: `du` counts an inode once
                seen[0] += 1
                seen[3] = seen[3] or keep
                continue
            self.inodes[(dev, ino)] = [1, nlink, nblocks, keep]
            c[0] += nblocks
            c[1] += nsize
        for rule, (count, example, mtime, owner) in sums[WHY].items():
            _add_why(self.why, rule, count, example, mtime, owner)
        self.staying.update(sums[STAYING])
        self.errors.extend(sums[ERRORS])
        self.dir_blocks.update(sums[SUBDIRS])

    def result(self, top_mtime: Optional[float]) -> TreeStats:
        blocks, size, files, dirs, kept_files, kept_blocks = self.counts
        # a hard-linked file frees its blocks only when its last name goes: kept when one of its
        # names stays, or lies outside this tree (the deleter frees it at st_nlink 1 only)
        kept_blocks += sum(b for n, links, b, keep in self.inodes.values() if keep or n < links)
        kept_blocks += self._staying_blocks()
        kept = tuple(
            Kept(rule, count, example, mtime, owner)
            for rule in (SETTINGS, FOREIGN, RECENT)
            if rule in self.why
            for count, example, mtime, owner in [self.why[rule]]
        )
        return TreeStats(
            blocks * 512,
            size,
            files,
            dirs,
            self.newest if self.newest is not None else top_mtime,
            self.oldest if self.oldest is not None else top_mtime,
            kept_files,
            kept_blocks * 512,
            kept,
            tuple(self.errors),
        )

    def _staying_blocks(self) -> int:
        """Blocks of the directories the delete cannot remove: each holding something that
        stays, and every directory above it up to the entry (rmdir finds them not empty)."""
        dirs: set[str] = set()
        for path in self.staying:
            while path not in dirs and len(path) > len(self.top):
                dirs.add(path)
                path = path.rsplit("/", 1)[0]
            dirs.add(self.top)
        return sum(self.dir_blocks.get(path, 0) for path in dirs)


def tree_stats(
    paths: Sequence[str],
    *,
    uid: Optional[int] = None,
    recent_cutoff: float = float("inf"),
    one_file_system: bool = True,
    workers: Optional[int] = None,
) -> list[Optional[TreeStats]]:
    """Totals of each path (a directory tree or a single file); None for a path that does not
    exist. ``op_cache.ini``, files not owned by ``uid`` (None: anyone's count as ours) and files
    whose mtime is at or after ``recent_cutoff`` are counted as kept (see ``keep_rule``)."""
    global _MOUNTS
    _MOUNTS = mount_points()
    try:
        return _tree_stats(paths, uid, recent_cutoff, one_file_system, workers)
    finally:
        _forget_open()


def _tree_stats(paths, uid, recent_cutoff, one_file_system, workers) -> list[Optional[TreeStats]]:
    accs: list[Optional[_Acc]] = []
    tops: list[Optional[float]] = []
    queue: deque = deque()  # (tree index, directory, names or None, device)
    for index, path in enumerate(paths):
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            accs.append(None)
            tops.append(None)
            continue
        acc = _Acc(path)
        accs.append(acc)
        tops.append(st.st_mtime)
        acc.add_top(st, uid, recent_cutoff)
        if stat.S_ISDIR(st.st_mode):
            queue.append((index, path, None, st.st_dev))

    devices = {job[0]: job[3] for job in queue}

    def absorb(scanned: list) -> None:
        """Merge (tree index, sums) of some scanned directories and queue what they found."""
        for index, sums in scanned:
            accs[index].merge(sums)
            dev = devices[index]
            if sums[CHUNKS]:
                queue.extend((index, path, chunk, dev) for path, chunk in sums[CHUNKS])
            queue.extend((index, sub, None, dev) for sub, _ in sums[SUBDIRS][sums[UNSCANNED] :])

    budget = SERIAL_BUDGET
    while queue and budget > 0:
        index, path, names, dev = queue.popleft()
        sums = _new_sums()
        budget -= _scan_dir(path, names, dev, uid, recent_cutoff, one_file_system, sums)
        absorb([(index, sums)])
    if queue:
        _drain_with_workers(queue, absorb, workers, uid, recent_cutoff, one_file_system)
    return [None if acc is None else acc.result(top) for acc, top in zip(accs, tops)]


def _drain_with_workers(queue: deque, absorb, workers: Optional[int], uid, recent, one_fs) -> None:
    """Finish the walk with forked workers, this process scanning too (``workers`` processes in
    all; by default one per CPU, at most 8); alone when there is one CPU, other threads run or
    no worker can be forked."""
    if workers is None:  # the CPUs this process may run on (a container's cpuset), not the machine's
        workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    count = min(8, workers)
    pool = None
    if count > 1 and can_fork():
        try:
            pool = Workers(count - 1, _scan_batch)
        except OSError:
            pool = None
    if pool is None:  # alone: the whole walk in one call, nothing handed back and forth
        while queue:
            jobs = list(queue)
            queue.clear()
            absorb(_scan_batch(jobs, uid, recent, one_fs, float("inf")))
        return
    with pool:
        while queue or pool.busy:
            while queue:
                batch = _take(queue, count)
                if not pool.submit(batch, (batch, uid, recent, one_fs, WORKER_BUDGET)):
                    queue.extendleft(reversed(batch))  # every worker has its DEPTH of batches
                    break
            mine = _take(queue, count)  # a batch here between two collections
            if mine:
                absorb(_scan_batch(mine, uid, recent, one_fs))
            done, returned = pool.collect(0 if mine else None)
            for _, scanned in done:
                absorb(scanned)
            for batch in returned:  # a worker died or failed: run here, where a failure has its traceback
                absorb(_scan_batch(batch, uid, recent, one_fs))


def _take(queue: deque, workers: int) -> tuple:
    """Up to ``BATCH`` directories from the front of ``queue``, fewer while the queue is short
    (each of ``workers`` gets its DEPTH of batches before one takes many); a chunk of a big
    directory (names given) ends a batch: it is a batch's work alone."""
    size = max(1, min(BATCH, len(queue) // (workers * DEPTH)))
    batch: list[tuple] = []
    while queue and len(batch) < size:
        job = queue.popleft()
        batch.append(job)
        if job[2] is not None:
            break
    return tuple(batch)


def _scan_batch(jobs: Sequence[tuple], uid: Optional[int], recent: float, one_fs: bool, budget: float = 0) -> list:
    """``_scan_dir`` of each (tree index, path, names, device) of ``jobs``, in a worker or
    here, then of the sub-directories they hold, breadth first, until ``budget`` names are
    stat-ed: [(tree index, sums)], one sums per tree (see ``_new_sums``), the sub-directories
    not scanned yet at the end of its list."""
    by_tree: dict[int, list] = {}
    devices: dict[int, int] = {}
    spent = 0
    for index, path, names, dev in jobs:
        sums = by_tree.get(index)
        if sums is None:
            sums = by_tree[index] = _new_sums()
            devices[index] = dev
        spent += _scan_dir(path, names, dev, uid, recent, one_fs, sums)
    for index, sums in by_tree.items():  # on into what they hold: no round trip per directory
        subdirs, dev = sums[SUBDIRS], devices[index]
        next_dir = 0
        while next_dir < len(subdirs) and spent < budget:
            spent += _scan_dir(subdirs[next_dir][0], None, dev, uid, recent, one_fs, sums)
            next_dir += 1
        sums[UNSCANNED] = next_dir
    return list(by_tree.items())


# --- from roots to entries ------------------------------------------------------------------------


def find_named_dirs(
    tops: Iterable[str], names: dict[str, str], *, max_depth: int = 8, one_file_system: bool = True
) -> list[tuple[str, str]]:
    """(kind, path) of every directory below ``tops`` whose name is a key of ``names``
    (``{"kernel_meta": "kernel-meta", ...}``), not descending into what it finds, into hidden
    directories, through symlinks or (with ``one_file_system``) into other file systems."""
    found: list[tuple[str, str]] = []
    mounts = mount_points()
    for top in tops:
        try:
            dev = os.lstat(top).st_dev
        except OSError:
            continue
        stack = [(top, 0)]
        while stack:
            path, depth = stack.pop()
            try:
                with os.scandir(path) as it:
                    children = [e for e in it if e.is_dir(follow_symlinks=False)]
            except OSError:
                continue
            for child in children:
                if child.name in names:
                    found.append((names[child.name], child.path))
                elif depth < max_depth and not child.name.startswith(".") and child.path not in mounts:
                    try:
                        if one_file_system and child.stat(follow_symlinks=False).st_dev != dev:
                            continue
                    except OSError:
                        continue
                    stack.append((child.path, depth + 1))
    return sorted(found)


def scan(
    roots: Sequence[CacheRoot],
    *,
    uid: Optional[int],
    recent_cutoff: float,
    one_file_system: bool = True,
    workers: Optional[int] = None,
) -> CacheReport:
    """Entries of every root that exists, each with its totals. Refused roots that exist are
    reported as warnings; a root that does not exist is silently absent."""
    warnings: list[str] = []
    units: list[_Unit] = []
    mounts = mount_points()
    for root in roots:
        if root.kind == "search":
            continue
        if root.refused:
            if os.path.lexists(root.named or root.path):
                named = display_path(root.named or root.path)
                warnings.append(f"not cleaning {named} ({root.source}): {display_path(root.refused)}")
            continue
        found, notes = _units(root, mounts)
        units.extend(found)
        warnings.extend(notes)
    units = _outermost(units)
    stats = tree_stats(
        [u.path for u in units],
        uid=uid,
        recent_cutoff=recent_cutoff,
        one_file_system=one_file_system,
        workers=workers,
    )
    entries = []
    for unit, st in zip(units, stats):
        if st is None:
            continue  # vanished between listing the root and scanning it
        root = unit.root
        kind = KINDS.get(root.kind)
        entries.append(
            CacheEntry(
                kind=root.kind,
                path=unit.path,
                root=root.path,
                source=root.source,
                allocated=st.allocated,
                apparent=st.apparent,
                files=st.files,
                dirs=st.dirs,
                newest=st.newest,
                oldest=st.oldest,
                kept_files=st.kept_files,
                kept_bytes=st.kept_bytes,
                kept=st.kept,
                soc=unit.soc,
                errors=st.errors,
                protected="AOE tuning banks are user results" if kind is not None and kind.protected else None,
                identity=unit.identity,
                root_identity=unit.root_identity,
            )
        )
    return CacheReport(entries=tuple(entries), roots=tuple(roots), warnings=tuple(warnings))


@dataclass(frozen=True)
class _Unit:
    root: CacheRoot
    path: str
    soc: Optional[str]
    identity: tuple[int, int]
    root_identity: tuple[int, int]


def _ident(st: os.stat_result) -> tuple[int, int]:
    return (st.st_dev, st.st_ino)


def _units(root: CacheRoot, mounts: frozenset[str]) -> tuple[list[_Unit], list[str]]:
    """The entries a root holds, by its layout (see CacheRoot): only names shaped as the layout
    says, never a mount point; and notes on what was passed over."""
    notes: list[str] = []
    if root.layout == "self":
        try:
            st = os.lstat(root.path)
            parent = os.lstat(os.path.dirname(root.path))
        except OSError:
            return [], notes
        if root.path in mounts:
            return [], [f"not cleaning {display_path(root.path)}: a mount point"]
        return [_Unit(root, root.path, None, _ident(st), _ident(parent))], notes
    try:
        top = os.lstat(root.path)
        if not stat.S_ISDIR(top.st_mode):
            return [], notes  # absent, or a symlink/file where a cache directory is expected
        names = sorted(os.listdir(root.path))
    except OSError:
        return [], notes
    if root.require_tag and not _tagged_cache(root.path, names):
        return [], notes  # not a tagged cache directory, or ascenv's build store: nothing to plan here
    pattern = re.compile(root.pattern) if root.pattern else None
    content = re.compile(root.content) if root.content else None
    result = []
    for name in names:
        if pattern is not None and not pattern.fullmatch(name):
            continue  # not what CANN names an entry here (op_cache.ini, a user's own directory...)
        if root.require_tag and (name in _NEVER_ENTRIES or name.endswith(".lock")):
            continue
        path = os.path.join(root.path, name)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if root.layout == "soc" and not stat.S_ISDIR(st.st_mode):
            continue
        if path in mounts:
            notes.append(f"not cleaning {display_path(path)}: a mount point")
            continue
        if content is not None and not _holds_only(path, st, content):
            continue
        result.append(_Unit(root, path, name if root.layout == "soc" else None, _ident(st), _ident(top)))
    return result, notes


def _tagged_cache(path: str, names: list[str]) -> bool:
    """A directory tagged as a cache (https://bford.info/cachedir/: a regular file starting with
    the signature, no symlink followed) and not ascenv's build store, whose builds go only
    through the store's own rules (``cache.build_store``: never a locked build or a baseline's)."""
    if "CACHEDIR.TAG" not in names:
        return False
    from ascenv.store_tag import TAG_SIGNATURE, tag_lines, tag_problem

    lines = tag_lines(path)
    return isinstance(lines, list) and lines[:1] == [TAG_SIGNATURE] and tag_problem(path) is not None


def _holds_only(path: str, st: os.stat_result, content: re.Pattern) -> bool:
    """A directory that holds something and only names matching ``content``."""
    if not stat.S_ISDIR(st.st_mode):
        return False
    try:
        names = os.listdir(path)
    except OSError:
        return False
    return bool(names) and all(content.fullmatch(n) for n in names)


def _outermost(units: list) -> list:
    """Drop duplicates and entries nested in another entry (the outer one already holds them)."""
    paths = {u.path for u in units}

    def is_nested(path: str) -> bool:
        parent = os.path.dirname(path)
        while parent and parent != path:
            if parent in paths:
                return True
            path, parent = parent, os.path.dirname(parent)
        return False

    nested = {p for p in paths if is_nested(p)}
    seen: set[str] = set()
    result = []
    for unit in units:
        if unit.path in nested or unit.path in seen:
            continue
        seen.add(unit.path)
        result.append(unit)
    return result
