"""Everything clean-cache knows before it plans: the roots, what is in them, what the owners
(engine, store) list, judged against the machine (installed CANNs and vendors, processes)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Callable, Optional

from ascenv.cache.entry import CacheEntry, CacheReport, EntryOwner, display_path
from ascenv.cache.machine import MachineFacts
from ascenv.cache.plan import assess
from ascenv.cache.roots import resolve_roots
from ascenv.cache.scan import find_named_dirs, scan

SEARCHED_NAMES = {"kernel_meta": "kernel-meta", "aoe_workspace": "aoe-workspace"}


def survey(
    environ: Mapping[str, str],
    *,
    home: str,
    cwd: str,
    search_paths: Sequence[str],
    facts: Callable[[], MachineFacts],
    uid: Optional[int],
    recent_cutoff: float,
    one_file_system: bool,
    owners: Optional[Mapping[str, EntryOwner]] = None,
    follow: Sequence[str] = (),
    homes: Sequence[str] = (),
) -> CacheReport:
    """Resolve the roots, look below --path for kernel_meta/aoe_workspace, scan, add what the
    owners list, judge. ``facts`` is asked for after the scan (the caller may gather them
    meanwhile: they cost as much as a small scan); the roots they protect (CANN installs,
    vendors) are then dropped from the report. ``follow``: symlink targets the user named
    (--follow); ``homes``: the other accounts' home directories."""

    def roots(discovered=(), protected=()):
        return resolve_roots(
            environ,
            home=home,
            cwd=cwd,
            search_paths=search_paths,
            discovered=discovered,
            protected_paths=protected,
            realpath=os.path.realpath,
            follow=follow,
            other_homes=homes,
        )

    tops = [r.path for r in roots() if r.kind == "search"]
    found = find_named_dirs(tops, SEARCHED_NAMES, one_file_system=one_file_system) if tops else []
    report = scan(roots(found), uid=uid, recent_cutoff=recent_cutoff, one_file_system=one_file_system)
    machine = facts()
    if machine.protected:  # scanning below an install was harmless; cleaning it is not
        final = roots(found, machine.protected)
        refused = {(r.kind, r.path): r for r in final if r.refused}
        kept = [e for e in report.entries if (e.kind, e.root) not in refused]
        notes = [
            f"not cleaning {display_path(r.path)} ({r.source}): {display_path(r.refused or '')}"
            for r in refused.values()
            if any((e.kind, e.root) == (r.kind, r.path) for e in report.entries)
        ]
        report = replace(report, entries=tuple(kept), roots=final, warnings=report.warnings + tuple(notes))
    owned: list[CacheEntry] = []
    failures: list[str] = []
    for name, owner in (owners or {}).items():
        try:
            owned += owner.entries()
        except Exception as exc:  # noqa: BLE001 - an engine or store failing mid-listing must not stop the scan
            failures.append(f"{name}: listing failed ({type(exc).__name__}: {exc}); its entries are not shown")
    report = replace(report, entries=report.entries + tuple(owned), warnings=report.warnings + tuple(failures))
    return assess(report, canns=machine.canns, vendors=machine.vendors, npu_pids=machine.npu_pids, busy=machine.busy)
