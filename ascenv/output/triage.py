"""Triage reports: causes most likely first, each with the log lines that named it, what the
machine showed, and the fix; a log that no signature knows gets its own last error (ranked
``other``) and the doctor's errors instead."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

from ascenv import serde
from ascenv.output import Output, safe
from ascenv.triage import Cause, LineGroup, TriageResult
from ascenv.triage.signatures import Signature
from ascenv.triage.verdict import CONFIRMED, FROM_SNAPSHOT, NOT_CHECKABLE
from ascenv.words import counted

_VERDICT = {True: "confirmed", False: "ruled out", None: "not checkable"}
_MARK = {True: "[bold red]✗[/]", False: "[green]✓[/]", None: "[yellow]?[/]"}
_MD_MARK = {True: "❌", False: "✅", None: "❔"}


def render(out: Output, result: TriageResult, code: int, name: str, fmt: str = "human") -> None:
    if fmt == "json":
        out.json(to_json(result, code), kind="triage")
    elif fmt == "markdown":
        out.text(markdown(result, name))
    else:
        human(out, result, name)


def to_json(result: TriageResult, code: int) -> dict:
    return {
        "exit_code": code,
        "checked": result.checked,
        "machine": _machine_json(result),
        "input": {"bytes": result.bytes_read, "lines": result.lines, "binary": result.binary},
        # a signature named a cause; false: the causes are `other`, unrecognised (the log's own error)
        "recognised": result.recognised,
        "causes": [_cause_json(c) for c in result.causes],
        "signatures": [
            {
                "id": s.id,
                "layer": s.layer,
                "summary": s.summary,
                "codes": list(s.codes),
                "count": s.count,
                "first_line": s.first_line,
                "lines": [_line_json(g) for g in s.lines],
                "source": list(s.source),
            }
            for s in result.signatures
        ],
        # no signature known: the whole doctor's errors stand in for the causes
        "findings": [serde.to_data(f) for f in result.doctor_errors] if not result.recognised else [],
    }


def _cause_json(c: Cause) -> dict[str, Any]:
    return {
        "cause": c.cause,
        "detail": c.detail,
        "layer": c.layer,
        "lines": [_line_json(g) for g in c.lines],
        "checks": list(c.checks),
        "confirmed": c.confirmed,
        "evidence": list(c.evidence),
        "verdicts": [{"check": v.check, "verdict": v.verdict, "reason": v.reason} for v in c.verdicts],
        "fix": c.fix,
        "weight": c.weight,
        "signatures": list(c.signatures),
        "source": list(c.source),
        "context": [_line_json(g) for g in c.context],
    }


def _machine_json(result: TriageResult) -> Optional[dict[str, Any]]:
    m = result.machine
    if m is None:
        return None
    return {
        "label": m.label,
        "cann": list(m.cann),
        "ascend": m.ascend,
        "driver": m.driver,
        "python": m.python,
        "python_reason": m.python_reason or None,
    }


def _judged(result: TriageResult) -> str:
    """Which machine the verdicts are about, and what it has (the header's second line)."""
    m = result.machine
    if m is None:
        return "no machine judged: causes ranked from the log alone"
    cann = f"CANN {', '.join(m.cann)}" if m.cann else "no CANN"
    host = "Ascend host" if m.ascend else "no NPU or Ascend driver"
    python = f"Python {m.python}" if m.python else "target Python not used as evidence"
    return f"judged on {m.label}: {cann}, {host}, {python}"


def _line_json(g: LineGroup) -> dict[str, Any]:
    return {"text": g.text, "count": g.count, "line": g.first_line}


def _headline(result: TriageResult, name: str) -> str:
    kind = " (binary data: scanned as text)" if result.binary else ""
    return f"{name}: {counted(result.lines, 'line')}{kind}, {counted(len(result.signatures), 'known signature')}"


def _repeat(g: LineGroup) -> str:
    return f" (×{g.count}, first at line {g.first_line})" if g.count > 1 else f" (line {g.first_line})"


def _verdict(c: Cause, checked: bool) -> str:
    if checked and c.confirmed is None and not c.verdicts:
        return "not checkable: no machine check decides this cause"
    if c.confirmed is True:
        return "confirmed by " + ", ".join(v.check for v in c.verdicts if v.verdict == CONFIRMED)
    if c.confirmed is None and c.verdicts:
        # the first reason a check could not decide it (every not-checkable answer says why)
        why = next(v.reason for v in c.verdicts if v.verdict == NOT_CHECKABLE)
        return f"not checkable: {why}"
    return _VERDICT[c.confirmed]


def human(out: Output, result: TriageResult, name: str) -> None:
    con = out.console
    con.print(f"[bold]ascenv triage[/]  {safe(_headline(result, name))}")
    con.print(f"[dim]{safe(_judged(result))}[/]")
    if not result.recognised:
        _no_signature_human(out, result)
        return
    for i, c in enumerate(result.causes, 1):
        title = c.cause + (f" — {c.detail}" if c.detail else "")
        verdict = _verdict(c, result.checked)
        con.print(f"\n{_MARK[c.confirmed]} [bold]{i}. {safe(title)}[/]  [dim]({c.layer})[/]  {safe(verdict)}")
        for g in c.lines:
            con.print(f"      log:     {safe(g.text)}[dim]{_repeat(g)}[/]")
        for g in c.context:
            con.print(f"      context: {safe(g.text)}[dim]{_repeat(g)}[/]")
        for v in c.verdicts:
            con.print(f"      machine: {v.check} {v.verdict}: {safe(v.reason)}")
        if c.checks:
            con.print(f"      checks:  {safe(', '.join(c.checks))}")
        con.print(f"      [cyan]fix:[/]     {safe(c.fix)}")
    confirmed = [c for c in result.causes if c.confirmed]
    tail = (
        f"{counted(len(confirmed), 'cause')} confirmed on {result.machine.label}"
        if result.machine is not None
        else "no machine checked: causes ranked from the log alone"
    )
    con.print(f"\n{tail}  (ascenv explain <ID> tells what a check means)")


def _no_signature_human(out: Output, result: TriageResult) -> None:
    con = out.console
    if result.lines == 0:
        con.print("\nthe log is empty: nothing to triage")
        con.print(
            "  [cyan]hint:[/] pass the file that holds the error, or the command's stderr too:"
            " `CMD 2>&1 | ascenv triage -`"
        )
        return
    con.print("\nno error of the Ascend stack recognised in this log: ranked [bold]other[/] (the program's own error)")
    for c in result.causes:
        for g in c.lines:
            con.print(f"      last error: {safe(g.text)}[dim]{_repeat(g)}[/]")
        con.print(f"      [cyan]fix:[/] {safe(c.fix)}")
    con.print("\nthe doctor's errors on this machine:")
    machine = result.machine
    if not result.doctor_errors and machine is not None and not machine.ascend:
        con.print(f"  none, but {safe(machine.label)} has no Ascend stack to judge: {FROM_SNAPSHOT}")
    elif not result.doctor_errors:
        con.print("  none: the doctor finds nothing wrong with the stack")
    for f in result.doctor_errors:
        con.print(f"  [bold red]✗[/] {safe(f.title)}  [dim]{f.id}[/]")
        if f.fix:
            con.print(f"      [cyan]fix:[/] {safe(f.fix)}")


def markdown(result: TriageResult, name: str) -> str:
    lines = [f"### ascenv triage: {_md(_headline(result, name))}", "", _md(_judged(result)), ""]
    if not result.recognised:
        lines.append("No error of the Ascend stack recognised in this log: ranked `other` (the program's own error).")
        for g in (g for c in result.causes for g in c.lines):  # a fence: the line may hold backticks
            lines += ["", f"Its last error (line {g.first_line}):", "", "```", g.text, "```"]
        lines += ["", "The doctor's errors on this machine:", ""]
        lines += [
            f"- ❌ `{f.id}` {_md(f.title)}" + (f" — fix: `{f.fix}`" if f.fix else "") for f in result.doctor_errors
        ]
        if not result.doctor_errors:
            lines.append("- none")
        return "\n".join(lines) + "\n"
    lines += ["| # | cause | layer | machine | fix |", "| --- | --- | --- | --- | --- |"]
    for i, c in enumerate(result.causes, 1):
        title = c.cause + (f" ({c.detail})" if c.detail else "")
        verdict = _verdict(c, result.checked)
        lines.append(f"| {i} | {_md(title)} | {c.layer} | {_MD_MARK[c.confirmed]} {_md(verdict)} | {_md(c.fix)} |")
    checked = [(i, v) for i, c in enumerate(result.causes, 1) for v in c.verdicts]
    if checked:
        lines += ["", "Checks on the machine:", ""]
        lines += [f"- {i}: `{v.check}` {v.verdict}: {_md(v.reason)}" for i, v in checked]
    lines.append("")
    lines.append("Matched lines:")
    lines.append("")
    lines.append("```")
    for s in result.signatures:
        for g in s.lines:
            lines.append(f"{g.text}{_repeat(g)}")
    lines.append("```")
    return "\n".join(lines) + "\n"


def _md(text: Optional[str]) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ")


def explain_code(out: Output, code: str, signatures: Sequence[Signature], fmt: str) -> int:
    """``ascenv explain CODE``: each signature that carries the code, its causes and sources."""
    if fmt == "json":
        out.json(
            {
                "code": code,
                "signatures": [
                    {
                        "id": s.id,
                        "layer": s.layer,
                        "summary": s.summary,
                        "source": list(s.source),
                        "causes": [
                            {
                                "cause": r.cause,
                                "detail": r.detail,
                                "weight": r.weight,
                                "checks": list(r.checks),
                                "fix": r.fix,
                            }
                            for r in s.causes
                        ],
                    }
                    for s in signatures
                ],
            },
            kind="explain-code",
        )
        return 0
    parts = []
    for s in signatures:
        lines = [f"{code}  ({s.layer}) {s.summary}", ""]
        for r in sorted(s.causes, key=lambda r: -r.weight):
            title = r.cause + (f" — {r.detail}" if r.detail else "")
            checks = f"  [checks: {', '.join(r.checks)}]" if r.checks else ""
            lines.append(f"  - {title}{checks}\n    fix: {r.fix}")
        lines.append("")
        lines += [f"  source: {url}" for url in s.source]
        parts.append("\n".join(lines))
    out.text(
        "\n\n".join(parts) + "\n\n`ascenv triage LOG` finds these in a log and confirms the cause on the machine.\n"
    )
    return 0
