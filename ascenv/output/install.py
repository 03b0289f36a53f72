"""Rendering of `ascenv install`, human and JSON."""

from __future__ import annotations

from ascenv.installer import Installed
from ascenv.output import Output, safe


def render(out: Output, result: Installed, fmt: str = "human") -> None:
    if fmt == "json":
        out.json(
            {
                "op": result.entry.op,
                "key": result.entry.key,
                "package": str(result.package),
                "install_path": str(result.install_path),
                "manifests": [str(p) for p in result.manifests],
            }
        )
        return
    out.console.print(f"[green]installed[/] {safe(str(result.package))} into {safe(str(result.install_path))}")
    for path in result.manifests:
        out.console.print(f"  manifest recorded: {safe(str(path))}")
