"""Kernel caches that may still serve a kernel compiled before a vendor was (re)installed, for
``ascenv op check``: the compile-cache roots of ``ascenv.cache.roots`` (only the ones the
environment makes active: the runtime reads no other), scanned and judged by clean-cache's own
``scan`` and ``assess``. Read only; doctor works from a snapshot and never calls this."""

from __future__ import annotations

import datetime
import os
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Optional

from ascenv.checks import finding
from ascenv.model import Finding, Severity, Vendor

if TYPE_CHECKING:
    from ascenv.probe.fs import Root

CACHE_KINDS = ("kernel-cache", "fuzzy-kernel-cache")


def stale_kernel_caches(
    root: Root,
    environ: Mapping[str, str],
    vendors: Sequence[Vendor],
    *,
    home: Optional[str],
    cwd: str = "/",
    compute_unit: Optional[str] = None,
) -> list[Finding]:
    """One ASC-VENDOR-STALE-CACHE finding per active kernel cache entry (``kernel_cache/<soc>``,
    ``fuzzy_kernel_cache/<soc>``) holding files older than the install of one of ``vendors``
    that may serve its SoC; only the SoCs of ``compute_unit`` when given. Paths are machine
    paths read inside ``root``; ``home`` None: ``$HOME/atc_data`` is not looked at."""
    from ascenv.cache.entry import CacheReport, VendorRecord
    from ascenv.cache.plan import assess
    from ascenv.cache.plan import compute_unit as unit_of
    from ascenv.cache.roots import resolve_roots
    from ascenv.cache.scan import scan

    def realpath(path: str) -> str:
        if root.is_host:
            return os.path.realpath(path)
        return root.resolve(path) or path

    roots = [
        r
        for r in resolve_roots(environ, home=home or "/", cwd=cwd, realpath=realpath)
        if r.kind in CACHE_KINDS and r.active and not (home is None and r.source.startswith("default"))
    ]
    records = [
        VendorRecord(v.name, v.path, _mtime(root, posixpath.join(v.path, "version.info")), tuple(v.compute_units))
        for v in vendors
        if v.exists
    ]
    if not roots or not any(r.installed_at is not None for r in records):
        return []
    machine = {str(root.host_path(r.path)): r.path for r in roots}
    # the walk of clean-cache, in this process (one or two directories: no worker pool)
    report = scan(
        [replace(r, path=host) for host, r in zip(machine, roots)], uid=None, recent_cutoff=float("inf"), workers=1
    )
    entries = [e for e in report.entries if e.soc and (compute_unit is None or unit_of(e.soc) == compute_unit)]
    if not entries:
        return []
    # judged against one vendor at a time: which vendors' installs each entry predates
    stale_for: dict[str, list[VendorRecord]] = {}
    for record in records:
        for entry in assess(CacheReport(entries=tuple(entries)), vendors=(record,)).entries:
            if entry.stale:
                stale_for.setdefault(entry.path, []).append(record)
    found = []
    for entry in entries:
        which = stale_for.get(entry.path)
        if not which:
            continue
        assert entry.soc is not None and entry.oldest is not None and entry.newest is not None
        path = machine[entry.root] + entry.path[len(entry.root) :]
        names = ", ".join(v.name for v in which)
        command = f"ascenv clean-cache --kind kernel-cache --kind fuzzy-kernel-cache --soc {entry.soc} --stale --yes"
        found.append(
            finding(
                "ASC-VENDOR-STALE-CACHE",
                Severity.WARN,
                f"{entry.kind} {entry.soc} predates the install of vendor {names}: it may still serve old kernels",
                found=f"{path} ({entry.source}): files from {_date(entry.oldest)} to {_date(entry.newest)}; "
                + "; ".join(
                    f"vendor {v.name} installed {_date(v.installed_at)} ({v.path}/version.info)"
                    for v in which
                    if v.installed_at is not None
                ),
                expected=f"no kernels in {path} compiled before the vendor's install",
                evidence=(path, *(posixpath.join(v.path, "version.info") for v in which)),
                fix=command if root.is_host else f"in the system whose root is {root.directory}: {command}",
            )
        )
    return found


def _date(ts: float) -> str:
    return datetime.datetime.fromtimestamp(ts, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _mtime(root: Root, path: str) -> Optional[float]:
    """install.sh copies version.info without -p: its mtime is the (re)install time."""
    resolved = root.resolve(path)
    try:
        return os.stat(root.host_path(resolved)).st_mtime if resolved else None
    except OSError:
        return None
