"""Human, markdown and JSON rendering of `ascenv fleet audit` and `ascenv fleet lock`."""

from __future__ import annotations

from ascenv import serde
from ascenv.diff import Group
from ascenv.fleet.results import NodeResult
from ascenv.fleet.rollout import Journal
from ascenv.fleet.verdicts import FleetAudit, Verdict
from ascenv.output import Output, safe
from ascenv.output.diff import fleet_human, fleet_markdown
from ascenv.words import counted

_STYLE = {"ok": "green", "drift": "bold red", "unreachable": "bold yellow", "failed": "bold yellow"}


def _verdict_data(v: Verdict) -> dict:
    data = {"host": v.host, "status": v.status, "differs_in": list(v.differs_in), "message": v.message}
    return {**data, "vendor_builds": list(v.builds)}


def _summary(result: FleetAudit) -> str:
    counts: dict[str, int] = {}
    for v in result.nodes:
        counts[v.status] = counts.get(v.status, 0) + 1
    return ", ".join(f"{n} {status}" for status, n in counts.items())


def audit_human(out: Output, result: FleetAudit, folder: str) -> None:
    c = out.console
    reached = sum(len(g.nodes) for g in result.groups)
    if result.groups:
        fleet_human(out, reached, result.groups)
        c.print()
    c.print(f"[bold]verdict per node[/] against {safe(result.against)}:")
    for v in result.nodes:
        detail = f" in {safe(', '.join(v.differs_in))}" if v.differs_in else ""
        message = f": {safe(v.message)}" if v.message else ""
        c.print(f"  [{_STYLE[v.status]}]{v.status:<11}[/] {safe(v.host)}{detail}{message}")
        if v.builds:
            c.print(f"              vendors: {safe('; '.join(v.builds))}")
    c.print(f"{counted(len(result.nodes), 'node')}: {safe(_summary(result))}; results in {safe(folder)}")


def audit_markdown(result: FleetAudit, folder: str) -> str:
    reached = sum(len(g.nodes) for g in result.groups)
    lines = [fleet_markdown(reached, result.groups)] if result.groups else []
    lines += [f"## Verdict per node against {result.against}", ""]
    lines += ["| host | status | differs in | message | vendor builds |", "| --- | --- | --- | --- | --- |"]
    for v in result.nodes:
        cells = [v.host, v.status, ", ".join(v.differs_in), v.message, "; ".join(v.builds)]
        lines.append("| " + " | ".join(cell.replace("|", "\\|").replace("\n", " ") for cell in cells) + " |")
    lines += ["", f"Results: `{folder}`", ""]
    return "\n".join(lines)


def render_audit(out: Output, result: FleetAudit, folder: str, fmt: str = "human") -> None:
    if fmt == "json":
        out.json(
            {
                "against": result.against,
                "results": folder,
                "nodes": [_verdict_data(v) for v in result.nodes],
                "groups": [serde.to_data(g) for g in result.groups],
            },
            kind="fleet-audit",
        )
    elif fmt == "markdown":
        out.text(audit_markdown(result, folder))
    else:
        audit_human(out, result, folder)


def render_locked(out: Output, path: str, group: Group, results: tuple[NodeResult, ...], fmt: str = "human") -> None:
    missing = [r for r in results if r.lock is None]
    if fmt == "json":
        out.json(
            {
                "written": path,
                "input_hash": group.input_hash,
                "nodes": list(group.nodes),
                "not_locked": [{"host": r.host, "status": r.status, "message": r.message} for r in missing],
            },
            kind="fleet-lock",
        )
        return
    out.console.print(
        f"[green]wrote[/] {safe(path)}: the stack of {len(group.nodes)} of {counted(len(results), 'node')}"
        f" (input-hash {safe(group.input_hash)})"
    )
    for r in missing:
        out.warn(f"{r.host} is not in it: {r.status}" + (f" ({r.message})" if r.message else ""))


_STATE_STYLE = {
    "verified": "green",
    "installed": "cyan",
    "pending": "dim",
    "rolled-back": "yellow",
    "failed": "bold red",
    "unreachable": "bold yellow",
}


def render_rollout(out: Output, journal: Journal, path: str, fmt: str = "human") -> None:
    """`fleet rollout` and `fleet rollout --status`: the journal, wave by wave."""
    if fmt == "json":
        out.json({"journal": path, **serde.to_data(journal)}, kind="fleet-rollout")
        return
    if fmt == "markdown":
        lines = [f"## Rollout of {journal.op} build {journal.key[:12]}: {journal.phase}", ""]
        lines += ["| wave | host | state | build | message |", "| --- | --- | --- | --- | --- |"]
        for n in journal.nodes:
            cells = [str(n.wave + 1), n.host, n.state, (n.build or "")[:12], n.message]
            lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
        out.text("\n".join([*lines, "", f"Journal: `{path}`", ""]))
        return
    c = out.console
    c.print(f"[bold]rollout[/] of {safe(journal.op)} build {safe(journal.key[:12])}: [bold]{safe(journal.phase)}[/]")
    for wave in range(len(journal.waves)):
        c.print(f"wave {wave + 1}/{len(journal.waves)}:")
        for n in journal.in_wave(wave):
            style = _STATE_STYLE.get(n.state, "")
            build = f" at {safe(n.build[:12])}" if n.build else ""
            message = f": {safe(n.message)}" if n.message else ""
            c.print(f"  [{style}]{n.state:<11}[/] {safe(n.host)}{build}{message}")
            for g in n.gates:
                c.print(f"      {safe(g.name)} {safe(g.status)}" + (f": {safe(g.detail)}" if g.detail else ""))
            if n.swept:
                c.print(f"      removed earlier runs' temporary folders: {safe(', '.join(n.swept))}")
    c.print(f"journal: {safe(path)}")
