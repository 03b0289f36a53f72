"""Rendering of `ascenv install` and `ascenv install --rollback`, human and JSON."""

from __future__ import annotations

from ascenv.installer import Installed
from ascenv.output import Output, safe
from ascenv.package.deploy import Rollback, cache_command


def render(out: Output, result: Installed, fmt: str = "human") -> None:
    if fmt == "json":
        out.json(
            {
                "op": result.entry.op if result.entry else None,
                "key": result.entry.key if result.entry else None,
                "package": str(result.package),
                "install_path": str(result.install_path),
                "manifests": [str(p) for p in result.manifests],
                "kept": [str(p) for p in result.kept],
            },
            kind="install",
        )
        return
    out.console.print(f"[green]installed[/] {safe(str(result.package))} into {safe(str(result.install_path))}")
    for path in result.manifests:
        out.console.print(f"  manifest recorded: {safe(str(path))}")
    if result.entry is None:
        out.console.print("  inspected before it ran; no build manifest recorded (not a build of the store)")
    root = safe(str(result.install_path))
    for path in result.kept:
        out.console.print(
            f"  previous {safe(path.name)} kept in {safe(str(path))} "
            f"(ascenv install --rollback {safe(path.name)} --install-path {root} puts it back)"
        )


def render_rollback(out: Output, result: Rollback, fmt: str = "human") -> None:
    if fmt == "json":
        out.json(
            {
                "vendor": result.vendor,
                "install_path": result.install_path,
                "live": result.live,
                "kept": result.kept,
                "finished_interrupted": result.finished_interrupted,
                "compute_units": list(result.compute_units),
                "clean_kernel_caches": cache_command(result.compute_units),
            },
            kind="install-rollback",
        )
        return
    if result.finished_interrupted:
        out.console.print(f"[yellow]an interrupted rollback of {safe(result.vendor)} was completed[/]")
    out.console.print(f"[green]rolled back[/] {safe(result.live)}: it holds the vendor the last install replaced")
    out.console.print(f"  the replaced one is kept in {safe(result.kept)} (run the same command to swap back)")
    out.console.print(
        "  kernel caches compiled from the other version may still be served: "
        f"{safe(cache_command(result.compute_units))}"
    )
