"""Rendering of `ascenv bench`: imported runs, comparisons (per shape, bars of A's and B's medians
to one scale and the interval the noise allows B's), baselines and history."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any, Optional

from rich.markup import escape

from ascenv.bench.history import History
from ascenv.bench.pick import Picked
from ascenv.bench.records import Run, record_json
from ascenv.bench.stats import Change, Comparison, ShapeChange, spread_of
from ascenv.bench.store import StoredRun
from ascenv.output import Output, printable, safe
from ascenv.output.tables import print_rows
from ascenv.words import counted

_COLOURS = {"faster": "green", "slower": "red", "same": "default", "inconclusive": "yellow", "undecidable": "yellow"}


def _shapes(value: Optional[str]) -> str:
    return "-" if value is None else value or '""'


def _us(value: float) -> str:
    return f"{value:.3f}" if value < 1000 else f"{value:.1f}"


def _op_types(names: tuple[str, ...]) -> str:
    shown = ", ".join(names[:20]) + (f" and {len(names) - 20} more" if len(names) > 20 else "")
    return shown or "none"


def absent(out: Output, op: str, source: str, op_types: tuple[str, ...], fmt: str) -> None:
    """``bench import --op OP`` of a profile that holds no launch of OP: nothing stored."""
    if fmt == "json":
        out.json({"run": None, "op": op, "absent": True, "op_types": list(op_types)}, kind="bench-import-absent")
    out.warn(
        f"{op} is absent from {source}: it holds the op types {_op_types(op_types)}; nothing stored "
        f"(--all-ops keeps them all under {op})"
    )


def imported(out: Output, run: Run, path: Path, fmt: str, left_out: tuple[str, ...] = ()) -> None:
    if fmt == "json":
        out.json(
            {
                "run": run.id,
                "tool": run.tool,
                "path": str(path),
                "records": [record_json(r) for r in run.records],
                "left_out": list(left_out),
            },
            kind="bench-import",
        )
        return
    rows = []
    for r in run.records:
        median = _us(r.duration_us) + ("" if r.duration_stat == "median" else " (mean)")
        rows.append(
            [
                safe(r.op),
                safe(_shapes(r.input_shapes)),
                safe(r.task_type or "-"),
                str(r.samples),
                median,
                _us(r.duration_min_us),
                _us(r.duration_max_us),
                "-" if r.block_dim is None else str(r.block_dim),
                safe(r.metric_set),
            ]
        )
    titles = ("OP", "INPUT SHAPES", "TASK", "N", "MEDIAN us", "MIN", "MAX", "BLOCK DIM", "METRICS")
    print_rows(out.console, titles, rows, wrap=("INPUT SHAPES",))
    out.console.print(
        f"run [bold]{safe(run.id)}[/] ({safe(run.tool)}, {counted(len(run.records), 'record')}"
        f" from {counted(len(run.files), 'file')}) "
        f"stored in {safe(str(path))}"
    )
    if left_out:
        out.message(f"left out the other op types of the profile (--all-ops keeps them): {_op_types(left_out)}")
    if run.skipped_rows:
        out.message(f"{counted(run.skipped_rows, 'row')} without a duration were skipped")
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


def measure(value: float, unit: str) -> str:
    """A median in its unit: ``  412.000 us`` or ``    0.912 x peer`` (a ratio, 3 decimals)."""
    return f"{_us(value) if unit == 'us' else f'{value:.3f}':>9} {unit}"


def _shape_block(s: ShapeChange, glyphs: tuple[str, str, str, str]) -> list[str]:
    """Five lines: what was measured, A's bar, B's bar with the change and the verdict, the
    interval of B's median that the noise allows (A's median times one plus the change's bounds),
    and the two noises: the launches' spread and the noise between runs (``noise_words``)."""
    c = s.change
    a, b = s.medians  # the measure judged: every number of the block is of it
    interval = has_interval(c)
    low, high = a * (1 + c.low), a * (1 + c.high)
    scale = max(a, b, high if interval else 0.0)
    title = printable("  ".join(x for x in (s.b.op, _shapes(s.b.input_shapes), s.b.task_type or "") if x))
    lines = [escape(x) for x in textwrap.wrap(title, LINE_WIDTH, subsequent_indent="    ", break_on_hyphens=False)]
    bar_a, bar_b = (escape(f"{glyphs[0] * cells(x, scale):<{BAR_WIDTH}}") for x in (a, b))
    verdict = f"[{_COLOURS[c.verdict]}]{c.verdict}[/]"
    lines.append(f"  A  {bar_a}  {measure(a, s.unit)}  n={s.a.samples}")
    lines.append(f"  B  {bar_b}  {measure(b, s.unit)}  n={s.b.samples}  {c.change:+.1%}  {verdict}")
    whisker = escape(f"{_whisker(low, high, scale, glyphs) if interval else '':<{BAR_WIDTH}}")
    noise = f"95% {c.low:+.1%} .. {c.high:+.1%}" if interval else "no interval"
    lines.append(f"     {whisker}  {noise}" + (f": {safe(c.reason)}" if c.reason else ""))
    lines.append(f"     noise: {noise_words(s)}")
    return lines


def noise_words(s: ShapeChange) -> str:
    """``launch spread 3.1 % / 2.4 %, between runs 6.0 % (8 runs of 1 build)``, or that the noise
    between runs was not measured: the two noises a verdict stands on."""
    spread = f"launch spread {spread_of(s.a, s.against_peer):.1%} / {spread_of(s.b, s.against_peer):.1%}"
    between = s.between
    if between.spread is None:
        return f"{spread}, between runs not measured (no build of this stack run twice on this shape)"
    runs = counted(between.runs, "run")
    return f"{spread}, between runs {between.spread:.1%} ({runs} of {counted(between.builds, 'build')})"


def comparison(
    out: Output,
    result: Comparison,
    fmt: str,
    allow_env_change: bool,
    chart: Optional[str] = None,
    picked: Optional[Picked] = None,
) -> None:
    why = {"a": picked.why_a if picked else "", "b": picked.why_b if picked else ""}
    if fmt == "junit":
        from ascenv.output import junit

        out.text(junit.document(f"ascenv bench compare {result.a.id} {result.b.id}", comparison_cases(result)))
    elif fmt == "json":
        out.json(
            {
                "a": result.a.id,
                "b": result.b.id,
                "picked": {side: text or None for side, text in why.items()},
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
                        "measure": "duration_us" if s.unit == "us" else "duration/peer",
                        "medians": list(s.medians),
                        "reason": s.change.reason or None,
                        "against_peer": s.against_peer,
                        "between_runs": {
                            "spread": None if s.between.spread is None else round(s.between.spread, 6),
                            "runs": s.between.runs,
                            "builds": s.between.builds,
                        },
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
        for side, text in why.items():
            if text:  # a run picked by name (baseline, latest): which one and why
                out.message(f"{side.upper()}: {text}")
        _, start, dash, end = glyphs
        legend = (
            f"bars: each shape's medians, A and B to one scale; {start}{dash * 3}{end} the 95% interval of B's median"
        )
        out.console.print(escape(legend))
        out.console.print("each shape in one measure: us (duration), or x peer (duration / the peer timed beside it)")
        for s in result.shapes:
            for text in _shape_block(s, glyphs):
                out.console.print(text)
        peered = sum(s.against_peer for s in result.shapes)
        if peered:
            out.message(
                f"{peered} of {counted(len(result.shapes), 'shape')} judged as duration / the peer workload timed"
                " beside each launch (x peer): their bars, change and interval are all of that ratio;"
                " --format json adds the durations (median_us)"
            )
        if result.only_a or result.only_b:
            out.message(
                f"{counted(len(result.only_a), 'record')} only in A, {len(result.only_b)} only in B: not compared"
            )
        if result.regressions:
            out.console.print(
                f"[red]{counted(len(result.regressions), 'shape')} slower by more than {result.threshold:.0%}[/]"
            )
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


def comparison_cases(result: Comparison) -> list:
    """One JUnit case per compared shape: a regression fails, with what to do as its message."""
    from ascenv.output.junit import Case

    cases = []
    for s in result.shapes:
        c = s.change
        text = (
            f"{c.verdict}: {c.change:+.1%} (95% interval {c.low:+.1%} .. {c.high:+.1%}), median"
            f" {_us(s.a.duration_us)} us -> {_us(s.b.duration_us)} us, {s.a.samples}/{s.b.samples} launches"
            + (f"; {c.reason}" if c.reason else "")
            + f"; noise: {noise_words(s)}"
        )
        failure = (
            f"slower by {c.change:.1%} (over {result.threshold:.0%}): find the change with `ascenv bench history"
            f" {s.b.op}`, or accept it with `ascenv bench baseline set {result.b.id}`"
            if c.regression
            else None
        )
        cases.append(Case(f"ascenv.bench.{s.b.op}", f"{s.b.op} {_shapes(s.b.input_shapes)}", failure, text=text))
    return cases


def benchmark_action(result: History) -> list[dict[str, Any]]:
    """The newest run's records as github-action-benchmark's ``customSmallerIsBetter`` input: a
    list of {name, unit, value, range, extra} (its README, "Examples": custom benchmarks)."""
    newest = result.rows[0].run if result.rows else None
    return [
        {
            "name": f"{row.op} {_shapes(row.input_shapes)}",
            "unit": "us",
            "value": row.duration_us,
            "range": f"± {row.spread:.1%}",
            "extra": f"run {row.run}; build {row.build_key or '-'}; source {row.source_commit or '-'}",
        }
        for row in result.rows
        if row.run == newest
    ]


def history(out: Output, result: History, fmt: str) -> None:
    """Newest first; each record judged against the same record of the next older run."""
    if fmt == "benchmark-action":
        import json

        out.text(json.dumps(benchmark_action(result), indent=2, ensure_ascii=False, allow_nan=False))
        return
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
    rows = []
    for row in result.rows:
        rows.append(
            [
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
            ]
        )
    titles = ("RUN", "BUILD", "SOURCE", "OP", "INPUT SHAPES", "BLOCK DIM", "TILING", "MEDIAN us", "SPREAD")
    print_rows(out.console, (*titles, "VS PREVIOUS"), rows, wrap=("INPUT SHAPES", "TILING"))
    if result.runs < result.total:
        out.console.print(
            f"the newest {result.runs} of {counted(result.total, 'run')} of {safe(result.op)} (all: --limit 0)."
        )
    else:
        out.console.print(f"{counted(result.total, 'run')} of {safe(result.op)}.")


def _tiling(values: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in values.items() if k != "status") or "-"


def npu_commands(out: Output, result: Any, fmt: str) -> None:
    """No NPU here (``bench.runner.NpuCommands``, of ``bench run`` or ``test``): what to run on one."""
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


def ran(out: Output, result: Any, fmt: str) -> None:
    """``bench run``: the run measured and stored (runner.Measured), or, with no NPU here, the
    commands to run on an NPU host (runner.NpuCommands)."""
    from ascenv.bench.runner import NpuCommands

    if isinstance(result, NpuCommands):
        npu_commands(out, result, fmt)
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
    rows = []
    for r in run.records:
        rows.append(
            [
                safe(r.task_type or "-"),
                safe(_shapes(r.input_shapes)),
                str(r.samples),
                _us(r.duration_us),
                _us(r.duration_min_us),
                _us(r.duration_max_us),
                f"{r.spread:.1%}",
                safe(_tiling(r.tiling)),
            ]
        )
    titles = ("BENCHMARK", "SHAPE", "N", "MEDIAN us", "MIN", "MAX", "SPREAD", "TILING")
    print_rows(out.console, titles, rows, wrap=("TILING", "SHAPE"))
    for b in result.benchmarks:
        out.console.print(f"{safe(b.name)} measures: {safe(b.measures)}")
    if run.target == "cpu":
        where = f"{run.fingerprint.host_cpu or 'unknown CPU'}, {run.fingerprint.host_cores or '?'} cores"
        out.console.print(f"CPU target ({safe(where)}): a logic checker's time on the host CPU, not NPU performance")
    out.console.print(
        f"run [bold]{safe(run.id)}[/] of build {safe(result.build_key[:12])} "
        f"({result.warmup} warm-up + {result.repeat} timed runs per shape) stored in {safe(str(result.path))}"
    )
