"""Human, markdown and JSON rendering of `ascenv fleet audit` and `ascenv fleet lock`."""

from __future__ import annotations

from ascenv import serde
from ascenv.diff import Group
from ascenv.fleet.results import NodeResult
from ascenv.fleet.verdicts import FleetAudit, Verdict
from ascenv.output import Output, safe
from ascenv.output.diff import fleet_human, fleet_markdown

_STYLE = {"ok": "green", "drift": "bold red", "unreachable": "bold yellow", "failed": "bold yellow"}


def _verdict_data(v: Verdict) -> dict:
    return {"host": v.host, "status": v.status, "differs_in": list(v.differs_in), "message": v.message}


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
    c.print(f"{len(result.nodes)} node(s): {safe(_summary(result))}; results in {safe(folder)}")


def audit_markdown(result: FleetAudit, folder: str) -> str:
    reached = sum(len(g.nodes) for g in result.groups)
    lines = [fleet_markdown(reached, result.groups)] if result.groups else []
    lines += [f"## Verdict per node against {result.against}", "", "| host | status | differs in | message |"]
    lines.append("| --- | --- | --- | --- |")
    for v in result.nodes:
        cells = [v.host, v.status, ", ".join(v.differs_in), v.message]
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
        f"[green]wrote[/] {safe(path)}: the stack of {len(group.nodes)} of {len(results)} node(s)"
        f" (input-hash {safe(group.input_hash)})"
    )
    for r in missing:
        out.warn(f"{r.host} is not in it: {r.status}" + (f" ({r.message})" if r.message else ""))
