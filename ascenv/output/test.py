"""Rendering of ``ascenv test``: per shape pass or fail, the errors, the count beyond tolerance
and the first failing indices; or, with no NPU here, the command for an NPU host."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from ascenv import serde
from ascenv.accuracy.results import ShapeResult, TestRun
from ascenv.output import Output, safe


def run_json(run: TestRun) -> dict[str, Any]:
    data: dict[str, Any] = serde.to_data(run)
    # "build", as bench run's JSON names the key
    rest = {("build" if k == "build_key" else k): v for k, v in data.items() if k != "id"}
    return {"run": run.id, "passed": run.passed, **rest}


def tested(out: Output, result: Any, fmt: str) -> None:
    from ascenv.bench.runner import NpuCommands
    from ascenv.output.bench import npu_commands

    if isinstance(result, NpuCommands):
        npu_commands(out, result, fmt)
        return
    run = result.run
    if fmt == "json":
        out.json({**run_json(run), "path": str(result.path)}, kind="test")
        return
    table = Table(box=None, pad_edge=False)
    for title in ("SHAPE", "RESULT", "MAX ABS ERR", "MAX REL ERR", "BEYOND TOL", "ALLOWED", "TOLERANCE", "SEED"):
        table.add_column(title, no_wrap=True)
    for s in run.shapes:
        c = s.comparison
        t = s.tolerance
        table.add_row(
            safe(s.shape),
            "[green]pass[/]" if s.passed else "[red]FAIL[/]",
            f"{c.max_abs_error:.3g}" if c else "-",
            f"{c.max_rel_error:.3g}" if c else "-",
            f"{c.beyond}/{c.elements}" + (f" ({c.nonfinite} NaN/inf)" if c.nonfinite else "") if c else "-",
            f"{c.allowed:g}" if c else "-",
            f"rtol {t.rtol:g} atol {t.atol:g} {t.max_fraction:.2%}",
            str(s.seed),
        )
    out.console.print(table)
    for s in run.shapes:
        if not s.passed:
            _failure(out, s)
    verdict = "[green]passed[/]" if run.passed else "[red]FAILED[/]"
    out.console.print(
        f"{safe(run.op)} ({safe(run.target)}) build {safe(run.build_key[:12])} {verdict} against "
        f"{safe(run.reference)}, seed {run.seed}; run [bold]{safe(run.id)}[/] stored in {safe(str(result.path))}"
    )


def _failure(out: Output, s: ShapeResult) -> None:
    out.console.print(f"[red]shape {safe(s.shape)}[/] ({safe(s.output)}):")
    if s.problem:
        out.console.print(f"  {safe(s.problem)}")
    if s.comparison and s.comparison.first:
        out.console.print("  first failing elements (index: expected, actual):")
        for m in s.comparison.first:
            at = "" if len(m.at) < 2 else f" {list(m.at)}"
            out.console.print(f"    {m.index}{at}: {safe(m.expected)}, {safe(m.actual)}")
    if s.printed and (s.problem or not s.comparison):
        for line in s.printed.splitlines():
            out.console.print(f"  | {safe(line)}")
