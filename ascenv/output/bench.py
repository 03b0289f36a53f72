"""Rendering of `ascenv bench`: imported runs, comparisons (a table with a bar per shape: the
change and its noise interval), baselines and history."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional

from rich.table import Table

from ascenv.bench.records import Run, record_json
from ascenv.bench.stats import Comparison, compare
from ascenv.bench.store import StoredRun
from ascenv.output import Output, safe

_COLOURS = {"faster": "green", "slower": "red", "same": "default", "inconclusive": "yellow"}


def _shapes(value: Optional[str]) -> str:
    return "-" if value is None else value or '""'


def _us(value: float) -> str:
    return f"{value:.3f}" if value < 1000 else f"{value:.1f}"


def imported(out: Output, run: Run, path: Path, fmt: str) -> None:
    if fmt == "json":
        out.json({"run": run.id, "tool": run.tool, "path": str(path), "records": [record_json(r) for r in run.records]})
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


def _bar(low: float, high: float, point: float, span: float, width: int = 21) -> str:
    """The interval as ``[---|--]`` on a scale from -span to +span; the centre is no change."""
    half = width // 2

    def pos(x: float) -> int:
        return max(0, min(width - 1, half + round(x / span * half))) if span else half

    cells = [" "] * width
    cells[half] = "|"
    for i in range(pos(low), pos(high) + 1):
        cells[i] = "-" if cells[i] == " " else cells[i]
    cells[pos(point)] = "*"
    return "".join(cells)


def comparison(out: Output, result: Comparison, fmt: str, allow_env_change: bool) -> None:
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
                    }
                    for s in result.shapes
                ],
                "differences": [{"field": d.field, "a": d.a, "b": d.b} for d in result.differences],
                "only_a": [r.op for r in result.only_a],
                "only_b": [r.op for r in result.only_b],
            }
        )
    else:
        span = max([abs(x) for s in result.shapes for x in (s.change.low, s.change.high)] + [result.threshold * 2])
        table = Table(box=None, pad_edge=False)
        for title in (
            "OP",
            "INPUT SHAPES",
            "A us",
            "B us",
            "CHANGE",
            "95% INTERVAL",
            f"-{span:.0%} .. +{span:.0%}",
            "VERDICT",
        ):
            table.add_column(title, no_wrap=title != "INPUT SHAPES")
        for s in result.shapes:
            c = s.change
            table.add_row(
                safe(s.b.op),
                safe(_shapes(s.b.input_shapes)),
                _us(s.a.duration_us),
                _us(s.b.duration_us),
                f"{c.change:+.1%}",
                f"{c.low:+.1%} .. {c.high:+.1%}",
                _bar(c.low, c.high, c.change, span),
                f"[{_COLOURS[c.verdict]}]{c.verdict}[/]" + (f" ({safe(c.reason)})" if c.reason else ""),
            )
        out.console.print(f"A {safe(result.a.id)}  vs  B {safe(result.b.id)}")
        out.console.print(table)
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


def baseline(out: Output, stored: StoredRun, fmt: str) -> None:
    if fmt == "json":
        out.json({"op": stored.run.op, "target": stored.run.target, "baseline": stored.run.id})
        return
    out.console.print(f"baseline of {safe(stored.run.op)} ({safe(stored.run.target)}): {safe(stored.run.id)}")


def history(out: Output, op: str, runs: Sequence[Run], shapes: Optional[str], fmt: str) -> None:
    """Newest first; each record judged against the same record of the next older run."""
    rows: list[dict[str, Any]] = []
    for i, run in enumerate(runs):
        older = {r.key: r for r in runs[i + 1].records} if i + 1 < len(runs) else {}
        for r in run.records:
            if shapes is not None and r.input_shapes != shapes:
                continue
            prev = older.get(r.key)
            verdict = compare(prev.durations, r.durations, 0.05).verdict if prev else None
            rows.append(
                {
                    "run": run.id,
                    "build_key": run.fingerprint.build_key,
                    "op": r.op,
                    "input_shapes": r.input_shapes,
                    "block_dim": r.block_dim,
                    "tiling": r.tiling,
                    "duration_us": r.duration_us,
                    "spread": round(r.spread, 6),
                    "verdict": verdict,
                }
            )
    if fmt == "json":
        out.json({"op": op, "history": rows})
        return
    table = Table(box=None, pad_edge=False)
    for title in ("RUN", "BUILD", "OP", "INPUT SHAPES", "BLOCK DIM", "MEDIAN us", "SPREAD", "VS PREVIOUS"):
        table.add_column(title, no_wrap=title != "INPUT SHAPES")
    for row in rows:
        table.add_row(
            safe(row["run"]),
            safe((row["build_key"] or "-")[:12]),
            safe(row["op"]),
            safe(_shapes(row["input_shapes"])),
            "-" if row["block_dim"] is None else str(row["block_dim"]),
            _us(row["duration_us"]),
            f"{row['spread']:.1%}",
            safe(row["verdict"] or "-"),
        )
    out.console.print(table)
    out.console.print(f"{len(runs)} run(s) of {safe(op)}.")


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
                }
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
            }
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
        out.console.print(f"CPU target ({safe(where)}): a logic checker's wall time, not NPU performance")
    out.console.print(
        f"run [bold]{safe(run.id)}[/] of build {safe(result.build_key[:12])} "
        f"({result.warmup} warm-up + {result.repeat} timed runs per shape) stored in {safe(str(result.path))}"
    )
