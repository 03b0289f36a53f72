"""Rendering of `ascenv store ls | show | gc`, human and JSON."""

from __future__ import annotations

from ascenv import serde
from ascenv.accuracy.results import BuildTest
from ascenv.bench.store import BuildRun
from ascenv.output import Output, safe
from ascenv.output.build import size
from ascenv.output.tables import print_rows
from ascenv.store import GcResult, Stray
from ascenv.store_listing import CheckedEntry, Listing, Shown
from ascenv.words import counted


def entry_data(build: CheckedEntry) -> dict:
    e, m = build.entry, build.entry.manifest
    return {
        "op": e.op,
        "key": e.key,
        "path": str(e.path),
        "ok": not build.problems,
        "problems": list(build.problems),
        "target": m.target if m else None,
        "finished": m.timings.finished if m else None,
        "image_id": m.toolchain.image_id if m else None,
        "manifest_sha256": e.manifest_sha256,
        "outputs": serde.to_data(list(m.outputs)) if m else [],
        "bench_runs": [bench_run_data(r) for r in build.bench_runs],
        "tests": [serde.to_data(t) for t in build.tests],
    }


def bench_run_data(r: BuildRun) -> dict:
    return {
        "file": r.name,
        "id": r.id,
        "created": r.created,
        "tool": r.tool,
        "target": r.target,
        "records": r.records,
        "baseline": r.baseline,
        "damaged": r.damaged,
    }


def stray_data(stray: Stray) -> dict:
    return {"path": stray.path, "why": stray.why}


def render_strays(out: Output, strays: tuple[Stray, ...]) -> None:
    for s in strays:
        out.message(f"left alone {s.path}: {s.why}")


def render_ls(out: Output, listing: Listing, fmt: str = "human") -> None:
    if fmt == "json":
        out.json(
            {
                "store": str(listing.root),
                "exists": listing.exists,
                "builds": [entry_data(b) for b in listing.builds],
                "not_builds": [stray_data(s) for s in listing.strays],
            },
            kind="store-ls",
        )
        return
    if not listing.exists:
        out.console.print(f"No build store at {safe(str(listing.root))} (ascenv build creates one).")
        return
    rows = []
    for b in listing.builds:
        e, m = b.entry, b.entry.manifest
        state = "[green]ok[/]" if not b.problems else f"[red]{safe(b.problems[0])}[/]"
        rows.append(
            [
                safe(e.op),
                safe(m.target if m else "?"),
                safe(e.key[:12]),
                safe(m.timings.finished if m else "?"),
                str(len(m.outputs)) if m else "?",
                size(sum(o.size for o in m.outputs)) if m else "?",
                safe(m.toolchain.image if m else "?"),
                str(len(b.bench_runs)),
                state,
            ]
        )
    count = len(listing.builds)
    if count:
        titles = ("OP", "TARGET", "KEY", "FINISHED", "OUTPUTS", "SIZE", "IMAGE", "RUNS", "STATE")
        print_rows(out.console, titles, rows, wrap=("STATE",))
    render_strays(out, listing.strays)
    out.console.print(f"{count} build{'s' if count != 1 else ''} in the store.")


def render_show(out: Output, shown: Shown, fmt: str = "human") -> None:
    entry = shown.build.entry
    if fmt == "json":
        manifest = serde.to_data(entry.manifest) if entry.manifest else None
        out.json({**entry_data(shown.build), "manifest": manifest}, kind="store-show")
        return
    out.console.print(f"[bold]{safe(str(entry.path))}[/]")
    out.text(shown.manifest_text)
    for problem in shown.build.problems:
        out.warn(problem)
    _render_tests(out, shown.build.tests)
    runs = shown.build.bench_runs
    if not runs:
        out.console.print("No bench runs of this build (ascenv bench import PATH --build KEY adds one).")
        return
    out.console.print(f"[bold]{len(runs)} bench run{'s' if len(runs) != 1 else ''}[/] in bench/:")
    rows = []
    for r in runs:
        if r.damaged:
            rows.append([safe(r.name), "", "", "", "", f"[red]damaged: {safe(r.damaged)}[/]"])
        else:
            rows.append(
                [
                    safe(r.id or ""),
                    safe(r.created or ""),
                    safe(r.tool or ""),
                    safe(r.target or ""),
                    str(r.records),
                    "[green]baseline[/]" if r.baseline else "",
                ]
            )
    print_rows(out.console, ("RUN", "CREATED", "TOOL", "TARGET", "RECORDS", ""), rows, wrap=("",))


def _render_tests(out: Output, tests: tuple[BuildTest, ...]) -> None:
    if not tests:
        out.console.print("No accuracy checks of this build (ascenv test OP --build KEY adds one).")
        return
    out.console.print(f"[bold]{counted(len(tests), 'accuracy check')}[/] in accuracy/:")
    rows = []
    for t in tests:
        if t.damaged:
            rows.append([safe(t.name), "", "", "", f"[red]damaged: {safe(t.damaged)}[/]"])
            continue
        failed = f"[red]failed on {safe(', '.join(t.failed))}[/]" if t.failed else "[green]passed[/]"
        rows.append([safe(t.id or ""), safe(t.created or ""), safe(t.target or ""), str(t.shapes), failed])
    print_rows(out.console, ("RUN", "CREATED", "TARGET", "SHAPES", "RESULT"), rows, wrap=("RESULT",))


def render_gc(out: Output, result: GcResult, fmt: str = "human") -> None:
    if fmt == "json":
        out.json(
            {
                "removed": [f"{e.op}/{e.key}" for e in result.removed],
                "kept_referenced": [f"{e.op}/{e.key}" for e in result.kept_referenced],
                "kept_baseline": [{"build": f"{e.op}/{e.key}", "targets": list(t)} for e, t in result.kept_baseline],
                "swept_tmp": list(result.swept_tmp),
                "freed": result.freed,
                "left_alone": [stray_data(s) for s in result.left_alone],
                "not_removed": list(result.problems),
            },
            kind="store-gc",
        )
        return
    for e in result.removed:
        out.message(f"removed {e.op}/{e.key[:12]}")
    for e in result.kept_referenced:
        out.message(f"kept {e.op}/{e.key[:12]}: a lock references it")
    for e, targets in result.kept_baseline:
        out.message(f"kept {e.op}/{e.key[:12]}: it holds the bench baseline of {', '.join(targets)}")
    if result.swept_tmp:
        n = len(result.swept_tmp)
        out.message(f"removed {n} leftover staging director{'y' if n == 1 else 'ies'}")
    render_strays(out, result.left_alone)
    for problem in result.problems:
        out.warn(f"not removed: {problem}")
    out.console.print(f"{counted(len(result.removed), 'build')} removed, {size(result.freed)} freed.")
