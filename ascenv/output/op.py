"""Rendering of `ascenv op check`."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from ascenv import serde
from ascenv.output import Output, safe
from ascenv.package.visibility import OpCheck

_MARK = {True: "[green]yes[/]", False: "[red]no[/]"}
_SEVERITY = {"error": "[red]error[/]", "warn": "[yellow]warn[/]", "info": "info", "ok": "[green]ok[/]"}


def op_check_json(result: OpCheck) -> dict[str, Any]:
    return {
        "arch": result.arch,
        "compute_unit": result.compute_unit,
        "vendors": [
            {
                "name": v.name,
                "path": v.path,
                "origin": v.origin,
                "priority": v.priority,
                "exists": v.exists,
                "op_types": list(v.layout.op_types) if v.layout else [],
                "compute_units": list(v.layout.compute_units) if v.layout else [],
                "compiler_version": v.layout.compiler_version if v.layout else None,
            }
            for v in result.vendors
        ],
        "op_types": [
            {
                "op_type": o.op_type,
                "vendor": o.vendor,
                "atc": o.atc,
                "runtime": o.runtime,
                "aclnn": o.aclnn,
                "shadowed": list(o.shadowed),
            }
            for o in result.ops
        ],
        "findings": [serde.to_data(f) for f in result.findings],
        "notes": list(result.notes),
    }


def _seen_by(o: Any) -> tuple[tuple[str, bool], ...]:
    return (("ATC", o.atc), ("runtime", o.runtime), ("aclnn", o.aclnn))


def render_op_check(out: Output, result: OpCheck, fmt: str = "human") -> None:
    if fmt == "json":
        out.json(op_check_json(result), kind="op-check")
        return
    if fmt == "junit":
        from ascenv.output import junit

        # one case per finding (errors fail, with the fix), then one passing case per OpType
        # saying which vendor provides it and who sees it
        cases = junit.finding_cases("op", result.findings)
        for o in result.ops:
            seen = ", ".join(f"{name} {'yes' if ok else 'no'}" for name, ok in _seen_by(o))
            shadowed = f"; shadows {', '.join(o.shadowed)}" if o.shadowed else ""
            cases.append(junit.Case("ascenv.op.optype", f"{o.op_type} from {o.vendor}", text=seen + shadowed))
        out.text(junit.document("ascenv op check", cases))
        return
    console = out.console
    unit = result.compute_unit or "no --soc"
    if not result.vendors and not result.findings:  # nothing to list: say where it looked, not only a header
        for note in result.notes:
            out.message(note)
        return
    console.print(f"[bold]custom operators[/] for {safe(result.arch)}, {safe(unit)}, in CANN's search order")
    for v in result.vendors:
        state = (
            "" if v.layout else " [red](missing)[/]" if not v.exists else " [yellow](not read: see ASC-VENDOR-READ)[/]"
        )
        console.print(f"  {v.priority}. {safe(v.name)} {safe(v.path)} ({safe(v.origin)}){state}")
    if result.ops:
        table = Table(box=None, pad_edge=False)
        for column in ("OpType", "vendor", "ATC", "runtime", "aclnn", "shadowed"):
            table.add_column(column)
        for o in result.ops:
            table.add_row(
                safe(o.op_type),
                safe(o.vendor),
                _MARK[o.atc],
                _MARK[o.runtime],
                _MARK[o.aclnn],
                safe(", ".join(o.shadowed)),
            )
        console.print(table)
    for f in result.findings:
        console.print(f"{_SEVERITY[f.severity.value]} {f.id}: {safe(f.title)}")
        for label, text in (("found", f.found), ("expected", f.expected), ("fix", f.fix)):
            if text:
                console.print(f"    {label}: {safe(text)}")
    for note in result.notes:
        console.print(f"[dim]note: {safe(note)}[/]")
