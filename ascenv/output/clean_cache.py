"""Human rendering of clean-cache: the listing, the plan, the result."""

from __future__ import annotations

import time
from typing import Optional

from rich.markup import escape
from rich.table import Table

from ascenv.cache.entry import CacheEntry, display_path
from ascenv.output import Output


def size(n: int) -> str:
    """Binary units, one decimal: 3.2 GiB (what `du -h` and `ls -h` mean by G)."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def age(seconds: Optional[float]) -> str:
    if seconds is None:
        return "-"
    for unit, span in (("w", 7 * 86400), ("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= span:
            return f"{int(seconds // span)}{unit}"
    return f"{max(int(seconds), 0)}s"


def _state(entry: CacheEntry) -> str:
    if entry.protected:
        return "[cyan]kept[/]"
    if entry.in_use:
        return "[yellow]in use[/]"
    return "[red]stale[/]" if entry.stale else ""


def render_listing(out: Output, entries: list[CacheEntry], now: Optional[float] = None) -> None:
    now = time.time() if now is None else now
    table = Table(box=None, pad_edge=False)
    for title in ("KIND", "SIZE", "FILES", "AGE", "SOC", "CANN", "STATE"):
        table.add_column(title, no_wrap=True, justify="right" if title in ("SIZE", "FILES", "AGE") else "left")
    table.add_column("PATH", overflow="fold")
    for e in entries:
        table.add_row(
            e.kind,
            size(e.allocated),
            f"{e.files:,}",
            age(None if e.newest is None else now - e.newest),
            escape(display_path(e.soc) if e.soc else "-"),
            escape(e.cann_version or "-"),
            _state(e),
            escape(display_path(e.path)),
        )
    if entries:
        out.console.print(table)
    total = sum(e.allocated for e in entries)
    out.console.print(
        f"Found {len(entries)} cache entr{'y' if len(entries) == 1 else 'ies'}, {size(total)} on disk "
        f"in {sum(e.files for e in entries):,} files."
    )
    for e in entries:
        for reason in e.stale_reasons:
            out.console.print(f"  stale {escape(display_path(e.path))}: {escape(reason)}")


def render_plan(out: Output, plan, dry_run: bool, pins_files: Optional[tuple[str, ...]] = None) -> None:
    """``pins_files``: the pins files read to keep images (None when no image was listed)."""
    if pins_files is not None:
        out.message(f"images: pins files read: {', '.join(pins_files) or 'none'}")
    for item in plan.skipped:
        out.message(f"skip {display_path(item.entry.path)}: {item.reason}")
    for e in plan.entries:
        out.message(f"  {size(e.freeable):>10}  {e.kind:<18} {display_path(e.path)}")
        for problem in e.errors:  # what the scan could not see stays, and is not in the totals
            out.message(f"{'':14}not counted: {display_path(problem)}")
    if plan.kept_files:
        out.message(
            f"{plan.kept_files:,} files in them stay: other users' (see --all-users) or changed in the last minutes"
        )
    verb = "would free" if dry_run else "will free"
    out.message(
        f"{len(plan.entries)} entr{'y' if len(plan.entries) == 1 else 'ies'}: "
        f"{verb} {size(plan.bytes)} in {plan.files:,} files."
    )
    if dry_run:
        out.message("Dry run: nothing was deleted.")


def render_outcome(out: Output, outcome, journal: Optional[str]) -> None:
    for error in outcome.errors:
        out.warn(error)
    kept = []
    if outcome.kept_recent:
        kept.append(f"{outcome.kept_recent:,} changed in the last minutes")
    if outcome.kept_foreign:
        kept.append(f"{outcome.kept_foreign:,} of other users")
    tail = f" Kept {', '.join(kept)}." if kept else ""
    out.message(
        f"Deleted {len(outcome.results)} entr{'y' if len(outcome.results) == 1 else 'ies'}: "
        f"freed {size(outcome.freed)} in {outcome.files:,} files.{tail}"
    )
    if journal:
        out.message(f"Journal: {journal}")
