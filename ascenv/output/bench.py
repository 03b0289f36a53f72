"""Rendering of `ascenv bench`: imported runs, comparisons (per shape, bars of A's and B's medians
to one scale and the interval the noise allows B's), baselines and history."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any, Optional

from rich.markup import escape
from rich.table import Table

from ascenv.bench.history import History
from ascenv.bench.records import Run, record_json
from ascenv.bench.stats import Change, Comparison, ShapeChange
from ascenv.bench.store import StoredRun
from ascenv.output import Output, printable, safe

_COLOURS = {"faster": "green", "slower": "red", "same": "default", "inconclusive": "yellow"}


def _shapes(value: Optional[str]) -> str:
    return "-" if value is None else value or '""'


def _us(value: float) -> str:
    return f"{value:.3f}" if value < 1000 else f"{value:.1f}"


def imported(out: Output, run: Run, path: Path, fmt: str) -> None:
    if fmt == "json":
        out.json(
            {"run": run.id, "tool": run.tool, "path": str(path), "records": [record_json(r) for r in run.records]},
            kind="bench-import",
        )
        return
    table = Table(box=None, pad_edge=False)
    for title in ("OP", "INPUT SHAPES", "TASK", "N", "MEDIAN us", "MIN", "MAX", "BLOCK DIM", "METRICS"):
        table.add_column(title, no_wrap=title != "INPUT SHAPES")
    for r in run.records:
        median = _us(r.duration_us) + ("" if r.duration_stat == "median" else " (mean)")
        table.add_row(
            safe(r.op),
            safe(_shapes(r.input_shapes)),
            safe(r.task_type or "-"),
            str(r.samples),
            median,
            _us(r.duration_min_us),
            _us(r.duration_max_us),
            "-" if r.block_dim is None else str(r.block_dim),
            safe(r.metric_set),
        )
    out.console.print(table)
    out.console.print(
        f"run [bold]{safe(run.id)}[/] ({safe(run.tool)}, {len(run.records)} records from {len(run.files)} file(s)) "
        f"stored in {safe(str(path))}"
    )
    if run.skipped_rows:
        out.message(f"{run.skipped_rows} row(s) without a duration were skipped")
    if run.fingerprint.downclocked:
        out.warn("the chip ran below its rated clock: this run cannot become a baseline")


BAR_WIDTH = 50  # cells of a shape's longest bar: a shape's block stays within 120 columns
LINE_WIDTH = 120


def has_interval(change: Change) -> bool:
    """False where the core computed none (a side with fewer launches than a bootstrap needs)."""
    return not (change.verdict == "inconclusive" and change.low == change.high)


def cells(value: float, scale: float) -> int:
    """The bar length of ``value`` in whole cells, the longest of the shape (``scale``) being
    ``BAR_WIDTH``: whole cells only, so the bars read the same in a pipe as on a terminal."""
    return max(0, min(BAR_WIDTH, round(value / scale * BAR_WIDTH))) if scale > 0 else 0


def _glyphs(out: Output) -> tuple[str, str, str, str]:
    """Bar, whisker start, whisker line, whisker end; ASCII where the output cannot encode more."""
    if out.console.encoding.lower().replace("-", "").startswith("utf"):
        return "\u2588", "\u251c", "\u2500", "\u2524"  # block, box drawings: one cell each
    return "#", "[", "-", "]"


def _whisker(low: float, high: float, scale: float, glyphs: tuple[str, str, str, str]) -> str:
    """``low`` .. ``high`` (durations) on the bars' scale: the cells a bar ending there ends in."""
    _, start, line, end = glyphs
    first, last = (max(0, cells(x, scale) - 1) for x in (low, high))
    if first == last:
        return " " * first + "|"
    return " " * first + start + line * (last - first - 1) + end


def _shape_block(s: ShapeChange, glyphs: tuple[str, str, str, str]) -> list[str]:
    """Four lines: what was measured, A's bar, B's bar with the change and the verdict, and the
    interval of B's median that the noise allows (A's median times one plus the change's bounds)."""
    c = s.change
    a, b = s.a.duration_us, s.b.duration_us
    interval = has_interval(c)
    low, high = a * (1 + c.low), a * (1 + c.high)
    scale = max(a, b, high if interval else 0.0)
    title = printable("  ".join(x for x in (s.b.op, _shapes(s.b.input_shapes), s.b.task_type or "") if x))
    lines = [escape(x) for x in textwrap.wrap(title, LINE_WIDTH, subsequent_indent="    ", break_on_hyphens=False)]
    bar_a, bar_b = (escape(f"{glyphs[0] * cells(x, scale):<{BAR_WIDTH}}") for x in (a, b))
    verdict = f"[{_COLOURS[c.verdict]}]{c.verdict}[/]"
    lines.append(f"  A  {bar_a}  {_us(a):>9} us  n={s.a.samples}")
    lines.append(f"  B  {bar_b}  {_us(b):>9} us  n={s.b.samples}  {c.change:+.1%}  {verdict}")
    whisker = escape(f"{_whisker(low, high, scale, glyphs) if interval else '':<{BAR_WIDTH}}")
    noise = f"95% {c.low:+.1%} .. {c.high:+.1%}" if interval else "no interval"
    lines.append(f"     {whisker}  {noise}" + (f": {safe(c.reason)}" if c.reason else ""))
    return lines


def comparison(out: Output, result: Comparison, fmt: str, allow_env_change: bool, chart: Optional[str] = None) -> None:
    if fmt == "json":
        out.json(
            {
                "a": result.a.id,
                "b": result.b.id,
                "threshold": result.threshold,
                "shapes": [
                    {
                        "op": s.b.op,
                        "input_shapes": s.b.input_shapes,
                        "task_type": s.b.task_type,
                        "verdict": s.change.verdict,
                        "change": round(s.change.change, 6),
                        "interval": [round(s.change.low, 6), round(s.change.high, 6)],
                        "regression": s.change.regression,
                        "samples": [s.a.samples, s.b.samples],
                        "median_us": [s.a.duration_us, s.b.duration_us],
                        "reason": s.change.reason or None,
                        "against_peer": s.against_peer,
                    }
                    for s in result.shapes
                ],
                "differences": [{"field": d.field, "a": d.a, "b": d.b} for d in result.differences],
                "only_a": [r.op for r in result.only_a],
                "only_b": [r.op for r in result.only_b],
            },
            kind="bench-compare",
        )
    else:
        glyphs = _glyphs(out)
        out.console.print(f"A {safe(result.a.id)}  vs  B {safe(result.b.id)}")
        _, start, dash, end = glyphs
        legend = (
            f"bars: each shape's medians, A and B to one scale; {start}{dash * 3}{end} the 95% interval of B's median"
        )
        out.console.print(escape(legend))
        for s in result.shapes:
            for text in _shape_block(s, glyphs):
                out.console.print(text)
        peered = sum(s.against_peer for s in result.shapes)
        if peered:
            out.message(
                f"{peered} shape(s) judged as duration / the peer workload timed beside each launch "
                "(the change and interval are of that ratio; the bars are the durations)"
            )
        if result.only_a or result.only_b:
            out.message(f"{len(result.only_a)} record(s) only in A, {len(result.only_b)} only in B: not compared")
        if result.regressions:
            out.console.print(f"[red]{len(result.regressions)} shape(s) slower by more than {result.threshold:.0%}[/]")
    for d in result.differences:
        text = f"the runs' stacks differ: {d}"
        if allow_env_change:
            out.warn(text + " (compared anyway: --allow-env-change)")
        else:
            out.error(text, hint="compare runs of one stack, or pass --allow-env-change to compare anyway")
    if chart:
        out.message(f"chart written to {chart}")


def baseline(out: Output, stored: StoredRun, fmt: str) -> None:
    if fmt == "json":
        out.json({"op": stored.run.op, "target": stored.run.target, "baseline": stored.run.id}, kind="bench-baseline")
        return
    out.console.print(f"baseline of {safe(stored.run.op)} ({safe(stored.run.target)}): {safe(stored.run.id)}")


def history(out: Output, result: History, fmt: str) -> None:
    """Newest first; each record judged against the same record of the next older run."""
    if fmt == "json":
        out.json(
            {
                "op": result.op,
                "runs": result.runs,
                "total": result.total,
                "history": [
                    {
                        "run": row.run,
                        "build_key": row.build_key,
                        "source_commit": row.source_commit,
                        "op": row.op,
                        "input_shapes": row.input_shapes,
                        "block_dim": row.block_dim,
                        "tiling": row.tiling,
                        "duration_us": row.duration_us,
                        "spread": round(row.spread, 6),
                        "verdict": row.verdict,
                    }
                    for row in result.rows
                ],
            },
            kind="bench-history",
        )
        return
    table = Table(box=None, pad_edge=False)
    titles = ("RUN", "BUILD", "SOURCE", "OP", "INPUT SHAPES", "BLOCK DIM", "TILING", "MEDIAN us", "SPREAD")
    for title in (*titles, "VS PREVIOUS"):
        table.add_column(title, no_wrap=title not in ("INPUT SHAPES", "TILING"))
    for row in result.rows:
        table.add_row(
            safe(row.run),
            safe((row.build_key or "-")[:12]),
            safe((row.source_commit or "-")[:10]),
            safe(row.op),
            safe(_shapes(row.input_shapes)),
            "-" if row.block_dim is None else str(row.block_dim),
            safe(_tiling(row.tiling)),
            _us(row.duration_us),
            f"{row.spread:.1%}",
            safe(row.verdict or "-"),
        )
    out.console.print(table)
    if result.runs < result.total:
        out.console.print(f"the newest {result.runs} of {result.total} run(s) of {safe(result.op)} (all: --limit 0).")
    else:
        out.console.print(f"{result.total} run(s) of {safe(result.op)}.")


def _tiling(values: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in values.items() if k != "status") or "-"


def ran(out: Output, result: Any, fmt: str) -> None:
    """``bench run``: the run measured and stored (runner.Measured), or, with no NPU here, the
    commands to run on an NPU host (runner.NpuCommands)."""
    from ascenv.bench.runner import NpuCommands

    if isinstance(result, NpuCommands):
        if fmt == "json":
            out.json(
                {
                    "op": result.op,
                    "build": result.build_key,
                    "ran": False,
                    "reason": result.reason,
                    "commands": list(result.commands),
                },
                kind="bench-commands",
            )
            return
        out.warn(f"{result.reason}: nothing was run; on an NPU host, run:")
        for command in result.commands:
            out.console.print(safe(command), soft_wrap=True)
        return
    run = result.run
    if fmt == "json":
        out.json(
            {
                "run": run.id,
                "op": run.op,
                "target": run.target,
                "build": result.build_key,
                "tool": run.tool,
                "path": str(result.path),
                "warmup": result.warmup,
                "repeat": result.repeat,
                "benchmarks": [{"name": b.name, "measures": b.measures} for b in result.benchmarks],
                "fingerprint": {"host_cpu": run.fingerprint.host_cpu, "host_cores": run.fingerprint.host_cores},
                "records": [
                    {**record_json(r), "benchmark": r.task_type, "durations_us": list(r.durations), "tiling": r.tiling}
                    for r in run.records
                ],
            },
            kind="bench-run",
        )
        return
    table = Table(box=None, pad_edge=False)
    for title in ("BENCHMARK", "SHAPE", "N", "MEDIAN us", "MIN", "MAX", "SPREAD", "TILING"):
        table.add_column(title, no_wrap=title not in ("TILING", "SHAPE"))
    for r in run.records:
        table.add_row(
            safe(r.task_type or "-"),
            safe(_shapes(r.input_shapes)),
            str(r.samples),
            _us(r.duration_us),
            _us(r.duration_min_us),
            _us(r.duration_max_us),
            f"{r.spread:.1%}",
            safe(_tiling(r.tiling)),
        )
    out.console.print(table)
    for b in result.benchmarks:
        out.console.print(f"{safe(b.name)} measures: {safe(b.measures)}")
    if run.target == "cpu":
        where = f"{run.fingerprint.host_cpu or 'unknown CPU'}, {run.fingerprint.host_cores or '?'} cores"
        out.console.print(f"CPU target ({safe(where)}): a logic checker's time on the host CPU, not NPU performance")
    out.console.print(
        f"run [bold]{safe(run.id)}[/] of build {safe(result.build_key[:12])} "
        f"({result.warmup} warm-up + {result.repeat} timed runs per shape) stored in {safe(str(result.path))}"
    )
