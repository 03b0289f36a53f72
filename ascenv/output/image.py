"""Rendering of `ascenv image ls | verify | build | pin`, human and JSON."""

from __future__ import annotations

from pathlib import Path

from rich.table import Column, Table

from ascenv import serde
from ascenv.containers.images import OK, BuildOutcome, ImageStatus
from ascenv.containers.pins import Pin
from ascenv.output import Output, safe

_STYLE = {"ok": "green", "drifted": "red", "missing": "yellow", "unpinned": "yellow"}


def _short(digest: str | None) -> str:
    if not digest:
        return "-"
    head, _, tail = digest.rpartition("sha256:")
    return f"{head}sha256:{tail[:12]}" if tail else digest


def render_ls(out: Output, statuses: tuple[ImageStatus, ...], fmt: str = "human") -> None:
    if fmt == "json":
        out.json({"images": serde.to_data(list(statuses))}, kind="image-ls")
        return
    table = Table("Kind", "State", "Pinned", "Present", "Size MB")
    table.columns.insert(0, Column("Image", no_wrap=True))
    for s in statuses:
        state = f"[{_STYLE[s.state]}]{s.state}[/]" + (" (recipe changed)" if s.recipe_changed else "")
        size = f"{s.size / 1e6:.0f}" if s.size else "-"
        table.add_row(safe(s.name), safe(s.kind), state, safe(_short(s.pinned)), safe(_short(s.present)), size)
    out.console.print(table)


def render_verify(out: Output, s: ImageStatus, fmt: str = "human") -> None:
    if fmt == "json":
        out.json(serde.to_data(s), kind="image-verify")
        return
    if s.state == OK:
        out.console.print(f"[green]ok[/] {safe(s.name)}: the present image is the pinned {safe(s.pinned or '')}")
    elif s.state == "unpinned":
        out.console.print(
            f"[yellow]unpinned[/] {safe(s.name)}: no pin in pins.toml; "
            f"record one with `ascenv image pin {safe(s.name)}`"
        )
    elif s.state == "missing":
        out.console.print(
            f"[yellow]missing[/] {safe(s.name)}: pinned {safe(s.pinned or '')} "
            f"is not present; run `ascenv image build {safe(s.name)}`"
        )
    else:
        out.console.print(
            f"[red]drifted[/] {safe(s.name)}: pinned {safe(s.pinned or '')}, present {safe(s.present or '')}"
        )
        for change in s.changes:
            out.console.print(f"  {safe(change.describe())}")
        if not s.changes and s.kind == "bootstrap":
            out.console.print("  the package versions are the same: the difference is in file contents")
    if s.recipe_changed:
        out.console.print(f"  the recipe changed since it was pinned; re-pin with `ascenv image pin {safe(s.name)}`")


def render_build(out: Output, o: BuildOutcome, fmt: str = "human") -> None:
    if fmt == "json":
        out.json(serde.to_data(o), kind="image-build")
        return
    if o.reused:
        out.console.print(
            f"[green]present[/] {safe(o.name)} {safe(o.image_id)} equals its pin ({o.seconds:.2f} s, nothing built)"
        )
        return
    out.console.print(
        f"[bold]built[/] {safe(o.name)} {safe(o.image_id)} as {safe(o.tag)} in "
        f"{o.seconds:.1f} s, {o.size / 1e6:.0f} MB, {len(o.packages)} packages"
    )
    if o.matches_pin is None:
        out.console.print(f"  not pinned yet: record it with `ascenv image pin {safe(o.name)}`")
    elif o.matches_pin:
        out.console.print("  [green]equals its pin[/]")


def render_pinned(out: Output, name: str, pin: Pin, path: Path, fmt: str = "human") -> None:
    if fmt == "json":
        out.json({"name": name, "pin": serde.to_data(pin)}, kind="image-pin")
        return
    out.console.print(f"[bold]pinned[/] {safe(name)} = {safe(pin.image_id or pin.ref or '')} in {safe(str(path))}")
