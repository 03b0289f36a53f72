"""Human and markdown rendering of `ascenv diff`."""

from __future__ import annotations

from ascenv.diff import Group
from ascenv.lockfile import Change
from ascenv.output import Output, safe
from ascenv.output.lock import changes_table, package_rows
from ascenv.words import counted

SHOWN_NODES = 8  # node names listed per group before "… and N more"


def _names(nodes: tuple[str, ...]) -> str:
    shown = ", ".join(nodes[:SHOWN_NODES])
    return shown + (f" … and {len(nodes) - SHOWN_NODES} more" if len(nodes) > SHOWN_NODES else "")


def pair_human(out: Output, a: str, b: str, changes: tuple[Change, ...]) -> None:
    if not changes:
        out.console.print(f"[green]identical stacks[/]: {safe(a)} and {safe(b)}")
        return
    out.console.print(changes_table(changes, safe(a), safe(b), severity=False))
    layers = sorted({c.layer for c in changes}, key=[c.layer for c in changes].index)
    out.console.print(f"{counted(len(package_rows(changes)), 'difference')} in {safe(', '.join(layers))}")


def fleet_human(out: Output, total: int, groups: tuple[Group, ...]) -> None:
    c = out.console
    if len(groups) == 1:
        c.print(
            f"[green]all {counted(total, 'node')} have the identical stack[/] (input-hash {safe(groups[0].input_hash)})"
        )
        return
    reference = groups[-1]
    c.print(
        f"{counted(total, 'node')}, {counted(len(groups), 'distinct stack')};"
        f" reference: the {counted(len(reference.nodes), 'node')} sharing the most common one"
    )
    for group in groups[:-1]:
        c.print(f"\n[bold red]outlier[/] ({counted(len(group.nodes), 'node')}): {safe(_names(group.nodes))}")
        c.print(f"  differs in: [bold]{safe(', '.join(group.layers))}[/]")
        c.print(changes_table(group.changes, "reference", "these nodes", severity=False))
    c.print(f"\n[green]reference[/] ({counted(len(reference.nodes), 'node')}): {safe(_names(reference.nodes))}")


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md_table(changes: tuple[Change, ...], a: str, b: str) -> list[str]:
    lines = [f"| layer | what | {_md_cell(a)} | {_md_cell(b)} |", "| --- | --- | --- | --- |"]
    for c in package_rows(changes):
        lines.append(f"| {c.layer} | {_md_cell(c.item)} | {_md_cell(c.old or '-')} | {_md_cell(c.new or '-')} |")
    return lines


def pair_markdown(a: str, b: str, changes: tuple[Change, ...]) -> str:
    if not changes:
        return f"**Identical stacks**: `{a}` and `{b}`\n"
    return "\n".join([f"## ascenv diff: `{a}` vs `{b}`", ""] + _md_table(changes, a, b)) + "\n"


def fleet_markdown(total: int, groups: tuple[Group, ...]) -> str:
    lines = [f"## ascenv diff: {counted(total, 'node')}, {counted(len(groups), 'distinct stack')}", ""]
    for group in groups:
        if group.reference:
            lines += [f"### Reference ({counted(len(group.nodes), 'node')})", "", _md_cell(_names(group.nodes)), ""]
            continue
        lines += [
            f"### Outlier ({counted(len(group.nodes), 'node')}): differs in {', '.join(group.layers)}",
            "",
            _md_cell(_names(group.nodes)),
            "",
        ]
        lines += _md_table(group.changes, "reference", "these nodes") + [""]
    return "\n".join(lines)


def render_pair(out: Output, inputs: tuple[str, str], changes: tuple[Change, ...], fmt: str = "human") -> None:
    a, b = inputs
    if fmt == "json":
        from ascenv import serde

        out.json(
            {"inputs": list(inputs), "identical": not changes, "changes": [serde.to_data(c) for c in changes]},
            kind="diff",
        )
    elif fmt == "markdown":
        out.text(pair_markdown(a, b, changes))
    else:
        pair_human(out, a, b, changes)


def render_fleet(out: Output, total: int, groups: tuple[Group, ...], fmt: str = "human") -> None:
    if fmt == "json":
        from ascenv import serde

        out.json(
            {"nodes": total, "stacks": len(groups), "groups": [serde.to_data(g) for g in groups]}, kind="diff-fleet"
        )
    elif fmt == "markdown":
        out.text(fleet_markdown(total, groups))
    else:
        fleet_human(out, total, groups)
