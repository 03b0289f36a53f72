"""What a cache scan finds: roots (where Ascend writes), entries (what can be removed) and the
report that holds them. Frozen data; no I/O here."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional, Protocol

CACHE_SCHEMA = 1

# CANN's cache settings (size limit, aging) beside the kernels: kept by every delete, so the scan
# counts it as kept too (a SoC cache holding only it is not planned: nothing there would be freed)
KEEP_NAMES = frozenset({"op_cache.ini"})

# Why a file stays, in the order the deleter checks: CANN's settings file, another user's file
# (without --all-users), a file modified within --recent.
SETTINGS, FOREIGN, RECENT = "settings", "foreign", "recent"


@dataclass(frozen=True)
class Kept:
    """Files of an entry that a delete keeps by one rule: how many, and one of them to name
    (for RECENT the most recently modified, with its mtime; for FOREIGN its owner)."""

    rule: str  # SETTINGS, FOREIGN or RECENT
    files: int
    example: str
    mtime: float
    uid: int


@dataclass(frozen=True)
class Kind:
    name: str
    description: str
    default: bool  # planned without --kind (compile caches and debris: yes; logs, dumps: opt-in)
    serves_operators: bool = False  # the runtime reads it back (so a vendor rebuild makes it stale)
    protected: bool = False  # results or installs: listed, never planned


KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind("kernel-cache", "operator compile disk cache (kernel_cache/<soc>)", True, serves_operators=True),
        Kind("fuzzy-kernel-cache", "fuzzy compile disk cache (fuzzy_kernel_cache/<soc>)", True, serves_operators=True),
        Kind("kernel-meta", "kernel_meta/ debug and process files of a compile", True),
        Kind("fusion-result", "fusion_result.json (FE/<pid>/ or the working directory)", True),
        Kind("aoe-workspace", "AOE tuning work directory", True),
        Kind("log", "plog logs", False),
        Kind("atrace", "trace logs", False),
        Kind("dump", "graph, exception and printf dumps", False),
        Kind("profiling", "profiling output", False),
        Kind(
            "ascenv-store", "ascenv's own store and build debris (needs CACHEDIR.TAG): old builds, dead staging", False
        ),
        Kind("container", "containers and images labelled ascenv.*", False),
        Kind("aoe-bank", "AOE tuning knowledge bank (user results)", False, protected=True),
    )
}


@dataclass(frozen=True)
class CacheRoot:
    """A directory (or file) Ascend writes to, resolved from the environment.

    ``layout`` says how entries are derived from it: ``soc`` = each sub-directory named as a SoC
    (``pattern``) is one SoC's cache (files beside them, e.g. ``op_cache.ini``, are kept);
    ``children`` = each child whose name matches ``pattern`` (any child when None) is an entry;
    ``self`` = the root itself is the entry.

    ``path`` is always free of symlinks (the scan and the delete walk it component by component
    without following any); ``named`` is the path the variable or default named when a symlink
    in it leads to ``path``.
    """

    kind: str
    path: str
    source: str  # why this path: the variable that set it, "default", "--path", "working directory"
    layout: str = "self"
    active: bool = True  # the place the current environment writes to (False: an older location)
    pattern: Optional[str] = None  # regular expression for child names (layout "children")
    require_tag: bool = False  # only when the directory holds a CACHEDIR.TAG (ascenv's own store)
    refused: Optional[str] = None  # why this root is never cleaned (home, /, a CANN install, ...)
    named: Optional[str] = None  # the path as named, when it goes through a symlink to ``path``
    content: Optional[str] = None  # regular expression every name directly inside an entry must match


@dataclass(frozen=True)
class CacheEntry:
    """One removable unit: a SoC cache, a kernel_meta directory, a log directory, ..."""

    kind: str
    path: str
    root: str  # the CacheRoot.path it lies in (or is)
    source: str
    allocated: int = 0  # bytes on disk (st_blocks * 512, hard links once: what `du` reports)
    apparent: int = 0  # sum of st_size
    files: int = 0  # non-directories (files, symlinks, ...)
    dirs: int = 0
    newest: Optional[float] = None  # newest mtime of a file (of the directory when empty)
    oldest: Optional[float] = None
    kept_files: int = 0  # files the delete will keep: op_cache.ini, other users' (unless --all-users), recent ones
    kept_bytes: int = 0  # with the directories that stay because they hold one, and hard links with names elsewhere
    kept: tuple[Kept, ...] = ()  # why files stay, one per rule (see Kept)
    soc: Optional[str] = None
    cann_version: Optional[str] = None  # inferred from install times, see plan.assess
    stale: bool = False
    stale_reasons: tuple[str, ...] = ()
    protected: Optional[str] = None  # why it is never planned
    in_use: Optional[str] = None  # why it is skipped now (NPU process running, open files)
    errors: tuple[str, ...] = ()  # unreadable directories, file systems not crossed
    owner: Optional[str] = None  # removed through its owner, not by path: "engine", "store"
    identity: Optional[tuple[int, int]] = None  # (st_dev, st_ino) of the entry when scanned
    root_identity: Optional[tuple[int, int]] = None  # (st_dev, st_ino) of its root when scanned

    @property
    def freeable(self) -> int:
        return max(self.allocated - self.kept_bytes, 0)

    @property
    def freeable_files(self) -> int:
        return max(self.files - self.kept_files, 0)


@dataclass(frozen=True)
class CannRecord:
    """An installed CANN as the cache needs it: version and when it was installed."""

    version: Optional[str]
    path: str
    installed_at: Optional[float]  # mtime of its install.info (written by the installer)


@dataclass(frozen=True)
class VendorRecord:
    """An installed custom operator package and when it was last (re)installed."""

    name: str
    path: str
    installed_at: Optional[float]  # mtime of its version.info (rewritten by every install)
    compute_units: tuple[str, ...] = ()  # ascend910b, ... (empty: unknown, may serve any SoC)


@dataclass(frozen=True)
class CacheReport:
    entries: tuple[CacheEntry, ...] = ()
    roots: tuple[CacheRoot, ...] = ()
    warnings: tuple[str, ...] = ()
    scanned_at: float = 0.0
    seconds: float = 0.0  # wall time of the scan


class EntryOwner(Protocol):
    """What lists and removes entries that are not plain paths (``CacheEntry.owner``): the
    container engine (``cache.containers``), the build store (``cache.build_store``)."""

    def entries(self) -> Sequence[CacheEntry]:
        """Its entries, each with ``owner`` set."""

    def remove(self, entry: CacheEntry) -> Optional[str]:
        """Remove one; an error message, or None when it is gone."""


def display_path(path: str) -> str:
    """A path safe to print and to put in JSON: undecodable bytes shown as \\xNN."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")
