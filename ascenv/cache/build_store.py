"""The build store's debris as clean-cache entries (kind ``ascenv-store``, ``owner`` "store"):
staging directories below ``.tmp/`` whose process is gone, and the builds ``ascenv store gc
--keep N`` would remove (``Store.gc_plan``: never one a lock references or that holds a bench
baseline). Only in a directory ascenv made (``store_tag.tag_problem``: its CACHEDIR.TAG with ascenv's
line; ``Store.gc_plan`` refuses any other) and only builds by their full shape (``<op>/<64-hex
key>/manifest.toml``, no symlink followed). They are removed through the store (``Store.discard``:
under its lock, a build renamed out of sight first, the lock's references and the staging's
process checked again), never file by file."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Optional

from ascenv.cache.entry import CacheEntry, CacheRoot
from ascenv.cache.plan import kept_reasons
from ascenv.cache.scan import scan
from ascenv.store import Store

OWNER = "store"


class StoreDebris:
    def __init__(
        self,
        store: Store,
        *,
        keep: int,
        referenced: Iterable[str],
        uid: Optional[int],
        recent_cutoff: float,
        one_file_system: bool = True,
    ) -> None:
        self.store = store
        self.keep = keep
        self.referenced = frozenset(referenced)
        self.uid, self.recent_cutoff, self.one_file_system = uid, recent_cutoff, one_file_system

    def roots(self) -> list[CacheRoot]:
        """Each piece of debris as a root of its own, for the scanner to size."""
        plan = self.store.gc_plan(self.keep, self.referenced)
        where = f"build store {self.store.root}"
        roots = [
            CacheRoot("ascenv-store", str(p), f"{where}: staging of a process that is gone") for p in plan.dead_tmp
        ]
        roots += [
            CacheRoot("ascenv-store", str(e.path), f"{where}: beyond the {self.keep} newest builds of {e.op}")
            for e in plan.remove
        ]
        return roots

    def entries(self) -> list[CacheEntry]:
        report = scan(
            self.roots(), uid=self.uid, recent_cutoff=self.recent_cutoff, one_file_system=self.one_file_system
        )
        # The store removes a build whole or not at all: one holding recent or foreign files waits.
        return [
            replace(
                e,
                owner=OWNER,
                in_use=e.in_use
                or ("a build goes whole, and it keeps " + "; ".join(kept_reasons(e, None)) if e.kept_files else None),
            )
            for e in report.entries
        ]

    def remove(self, entry: CacheEntry) -> Optional[str]:
        return self.store.discard(Path(entry.path), self.referenced)
