"""Rendering of `ascenv compat update`, human and JSON."""

from __future__ import annotations

from ascenv import serde
from ascenv.compat.overlay import Installed, Removed
from ascenv.output import Output, safe


def installed(out: Output, result: Installed, fmt: str = "human") -> None:
    if fmt == "json":
        out.json(serde.to_data(result), kind="compat-update")
        return
    c = out.console
    c.print(f"installed {safe(', '.join(result.added))} in {safe(result.overlay)}")
    c.print(f"compatibility data as of {safe(result.as_of)} (shipped: {safe(result.shipped_as_of)})")
    for name in result.older:
        c.print(f"[yellow]![/] {safe(name)} is older than the shipped one: doctor reads the shipped file instead")
    c.print(f"doctor now reads {safe(', '.join(result.files))} from the overlay")


def removed(out: Output, result: Removed, fmt: str = "human") -> None:
    if fmt == "json":
        out.json(serde.to_data(result), kind="compat-remove")
    elif result.files:
        out.console.print(
            f"removed {safe(', '.join(result.files))} from {safe(result.overlay)}: the shipped data is used"
        )
    else:
        out.console.print(f"no overlay in {safe(result.overlay)}: the shipped data is in use")
