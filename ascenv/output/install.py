"""Render `ascenv install`'s kept vendors and `ascenv install --rollback`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ascenv.output import Output, safe
from ascenv.package.deploy import Rollback, cache_command


def render_kept(out: Output, kept: Sequence[Path], root: Path) -> None:
    for path in kept:
        out.console.print(
            f"  previous {safe(path.name)} kept in {safe(str(path))} "
            f"(ascenv install --rollback {safe(path.name)} --install-path {safe(str(root))} puts it back)"
        )


def render_rollback(out: Output, result: Rollback) -> None:
    if result.finished_interrupted:
        out.console.print(f"[yellow]an interrupted rollback of {safe(result.vendor)} was completed[/]")
    out.console.print(f"[green]rolled back[/] {safe(result.live)}: it holds the vendor the last install replaced")
    out.console.print(f"  the replaced one is kept in {safe(result.kept)} (run the same command to swap back)")
    out.console.print(
        "  kernel caches compiled from the other version may still be served: "
        f"{safe(cache_command(result.compute_units))}"
    )


def rollback_json(result: Rollback) -> dict[str, Any]:
    return {
        "vendor": result.vendor,
        "install_path": result.install_path,
        "live": result.live,
        "kept": result.kept,
        "finished_interrupted": result.finished_interrupted,
        "compute_units": list(result.compute_units),
        "clean_kernel_caches": cache_command(result.compute_units),
    }
