"""Rendering of clean-cache, human (the listing, the plan, the result) and JSON (one document)."""

from __future__ import annotations

import datetime
import time
from typing import Optional

from ascenv.cache.entry import RECENT, CacheEntry, display_path
from ascenv.cache.plan import format_age, kept_reasons
from ascenv.cache.result import LS, CleanCache
from ascenv.output import Output, safe
from ascenv.words import counted


def size(n: int) -> str:
    """Binary units, one decimal: 3.2 GiB (what `du -h` and `ls -h` mean by G)."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


age = format_age  # the age of the newest file's mtime: the clock --recent and --older-than judge by


def _state(entry: CacheEntry) -> str:
    if entry.protected:
        return "[cyan]kept[/]"
    if entry.in_use:
        return "[yellow]in use[/]"
    return "[red]stale[/]" if entry.stale else ""


def render_listing(out: Output, entries: tuple[CacheEntry, ...], now: Optional[float] = None) -> None:
    now = time.time() if now is None else now
    from rich.table import Table  # here: a JSON listing or plan need not import rich's tables

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
            safe(display_path(e.soc) if e.soc else "-"),
            safe(e.cann_version or "-"),
            _state(e),
            safe(display_path(e.path)),
        )
    if entries:
        out.console.print(table)
    total = sum(e.allocated for e in entries)
    out.console.print(
        f"Found {counted(len(entries), 'cache entry', 'cache entries')}, {size(total)} on disk "
        f"in {counted(sum(e.files for e in entries), 'file')}."
    )
    for e in entries:
        for reason in e.stale_reasons:
            out.console.print(f"  stale {safe(display_path(e.path))}: {safe(reason)}")


def render_plan(out: Output, result: CleanCache, fmt: str = "human") -> None:
    """The plan, before it is confirmed and carried out (JSON: nothing yet, one document at the end)."""
    if fmt == "json" or result.plan is None:
        return
    plan, dry_run, pins_files = result.plan, result.mode != "delete", result.pins_files
    if pins_files is not None:
        out.message(f"images: pins files read: {', '.join(pins_files) or 'none'}")
    for item in plan.skipped:
        out.message(f"skip {display_path(item.entry.path)}: {item.reason}")
    for e in plan.entries:
        out.message(f"  {size(e.freeable):>10}  {e.kind:<18} {display_path(e.path)}")
        for problem in e.errors:  # what the scan could not see stays, and is not in the totals
            out.message(f"{'':14}not counted: {display_path(problem)}")
        for reason in kept_reasons(e, result.now):  # what stays is not in the totals either
            out.message(f"{'':14}stays: {reason}")
    verb = "would free" if dry_run else "will free"
    out.message(
        f"{counted(len(plan.entries), 'entry', 'entries')}: {verb} {size(plan.bytes)} in {counted(plan.files, 'file')}."
    )
    if dry_run:
        out.message("Dry run: nothing was deleted.")


def render_outcome(out: Output, outcome, journal: Optional[str]) -> None:
    for error in outcome.errors + outcome.left_alone:
        out.warn(error)
    kept = []
    if outcome.kept_recent:
        kept.append(f"{counted(outcome.kept_recent, 'file')} modified within --recent")
    if outcome.kept_foreign:
        kept.append(f"{counted(outcome.kept_foreign, 'file')} of other users")
    tail = f" Kept {', '.join(kept)}." if kept else ""
    deleted, partly, skipped = outcome.deleted, outcome.partly_deleted, outcome.skipped
    out.message(
        f"Deleted {_entries(len(deleted))}: freed {size(outcome.freed)} in {counted(outcome.files, 'file')}.{tail}"
    )
    if partly:  # C2: say it, and the command exits 1
        out.message(f"Only partly deleted {_entries(len(partly))} (see the warnings above).")
    if skipped:  # C1: an entry left alone is not "deleted"
        out.message(f"Skipped {_entries(len(skipped))}, left as they were (see the warnings above).")
    if journal:
        out.message(f"Journal: {journal}")


def _entries(n: int) -> str:
    return counted(n, "entry", "entries")


def can_confirm(out: Output, fmt: str) -> bool:
    """Whether a question can be asked: a terminal, and no JSON document on stdout to keep clean."""
    return out.interactive and fmt != "json"


def render(out: Output, result: CleanCache, fmt: str = "human") -> None:
    """The listing (ls), or the result of the delete; JSON: the whole run in one document."""
    if fmt == "json":
        out.json(json_payload(result), kind="clean-cache")
    elif result.mode == LS:
        render_listing(out, result.listed, result.now)
    elif result.outcome is not None:
        render_outcome(out, result.outcome, result.journal)


def _iso(ts: Optional[float]) -> Optional[str]:
    return (
        None if ts is None else datetime.datetime.fromtimestamp(ts, datetime.timezone.utc).isoformat(timespec="seconds")
    )


def entry_json(e: CacheEntry, now: float) -> dict:
    return {
        "kind": e.kind,
        "path": display_path(e.path),
        "root": display_path(e.root),
        "source": display_path(e.source),
        "size": e.allocated,
        "apparent_size": e.apparent,
        "files": e.files,
        "dirs": e.dirs,
        "newest": _iso(e.newest),
        "oldest": _iso(e.oldest),
        "age_seconds": None if e.newest is None else round(now - e.newest, 1),
        "soc": None if e.soc is None else display_path(e.soc),
        "cann_version": e.cann_version,
        "stale": e.stale,
        "stale_reasons": list(e.stale_reasons),
        "protected": e.protected,
        "in_use": e.in_use,
        "kept_files": e.kept_files,
        "kept_size": e.kept_bytes,
        "kept": [  # why they stay, one rule each, with one file named
            {"rule": k.rule, "files": k.files, "example": display_path(k.example), "modified": _iso(k.mtime)}
            if k.rule == RECENT
            else {"rule": k.rule, "files": k.files, "example": display_path(k.example)}
            for k in e.kept
        ],
        "errors": [display_path(x) for x in e.errors],
    }


def json_payload(result: CleanCache) -> dict:
    data: dict = {
        "mode": result.mode,
        "size_unit": "bytes allocated on disk (du -B1)",
        "scan_seconds": round(result.scan_seconds, 3),
        "entries": [entry_json(e, result.now) for e in result.listed],
        "warnings": [display_path(w) for w in result.warnings],
    }
    plan = result.plan
    if plan is not None:
        data["plan"] = {
            "entries": [display_path(e.path) for e in plan.entries],
            "size": plan.bytes,
            "files": plan.files,
            "skipped": [{"path": display_path(s.entry.path), "reason": display_path(s.reason)} for s in plan.skipped],
        }
        if result.pins_files is not None:  # images were listed: the pins files that said which to keep
            data["plan"]["pins_files"] = list(result.pins_files)
    outcome = result.outcome
    if outcome is not None:
        data["result"] = {
            "freed": outcome.freed,
            "files": outcome.files,
            "kept_recent": outcome.kept_recent,
            "kept_foreign": outcome.kept_foreign,
            "deleted": [display_path(r.path) for r in outcome.deleted],
            "partly_deleted": [display_path(r.path) for r in outcome.partly_deleted],
            "skipped": [display_path(r.path) for r in outcome.skipped],
            "errors": [display_path(x) for x in outcome.errors],
            "left_alone": [display_path(x) for x in outcome.left_alone],
            "journal": None if result.journal is None else display_path(result.journal),
        }
    return data
