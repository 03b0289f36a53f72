"""Doctor reports: grouped by layer, one line per finding plus its fix, a summary line."""

from __future__ import annotations

from pathlib import Path

from ascenv.checks import LAYERS
from ascenv.checks.summary import Diagnosis, data_line, summary
from ascenv.errors import UsageError
from ascenv.model import Finding, Severity, Snapshot
from ascenv.output import Output, safe, shown_text
from ascenv.words import counted

_MARK = {
    Severity.ERROR: "[bold red]✗[/]",
    Severity.WARN: "[yellow]![/]",
    Severity.INFO: "[blue]i[/]",
    Severity.OK: "[green]✓[/]",
}
_MD_MARK = {Severity.ERROR: "❌", Severity.WARN: "⚠️", Severity.INFO: "ℹ️", Severity.OK: "✅"}


def _headline(snap: Snapshot) -> str:
    chips = snap.npu.chips
    names = sorted({c.name for c in chips if c.name})
    cann = next((i.version for i in snap.cann.installs if i.path == snap.cann.active), None)
    parts = [
        f"{len(chips)}× {'/'.join(names)}" if chips else "no NPU listed",
        f"driver {snap.driver.version or snap.npu.driver_version or '-'}",
        f"firmware {snap.firmware.version or '-'}",
        f"CANN {cann or ('/'.join(i.version or '?' for i in snap.cann.installs) or '-')}",
        f"torch {snap.python.packages.get('torch', '-')}",
        f"torch_npu {snap.python.packages.get('torch-npu', '-')}",
        f"Python {snap.python.version or '-'}",
    ]
    return " · ".join(parts)


def _count_line(findings: list[Finding]) -> str:
    counts = {s: sum(1 for f in findings if f.severity is s) for s in Severity}
    return (
        f"{counted(counts[Severity.ERROR], 'error')}, {counted(counts[Severity.WARN], 'warning')},"
        f" {counted(counts[Severity.INFO], 'note')}, {counts[Severity.OK]} ok"
    )


def human(out: Output, snap: Snapshot, findings: list[Finding], command: str = "doctor", data: str = "") -> None:
    c = out.console
    c.print(f"[bold]ascenv {command}[/]  {safe(_headline(snap))}")
    if data:
        c.print(f"[dim]{safe(data)}[/]")
    for layer in LAYERS:
        group = [f for f in findings if f.layer == layer]
        if not group:
            continue
        c.print(f"\n[bold]{safe(layer)}[/]")
        for f in group:
            c.print(f"  {_MARK[f.severity]} {safe(f.title)}  [dim]{safe(f.id)}[/]")
            if f.found and f.severity is not Severity.OK:
                c.print(f"      found:    {safe(f.found)}")
            if f.expected and f.severity in (Severity.ERROR, Severity.WARN):
                c.print(f"      expected: {safe(f.expected)}")
            if f.fix:
                c.print(f"      [cyan]fix:[/]      {safe(f.fix)}")
            if f.source and f.severity is not Severity.OK:
                dated = f" (data as of {safe(f.data_as_of)})" if f.data_as_of else ""
                c.print(f"      [dim]source:   {safe(f.source)}{dated}[/]")
    c.print(f"\n{_count_line(findings)}  (ascenv explain <ID> tells why a check matters)")


def markdown(snap: Snapshot, findings: list[Finding], command: str = "doctor", data: str = "") -> str:
    lines = [
        f"### ascenv {command}",
        "",
        f"`{_headline(snap)}`",
        "",
        *([data, ""] if data else []),
        "| | layer | finding | found | fix |",
        "|---|---|---|---|---|",
    ]
    for f in findings:
        cells = [_MD_MARK[f.severity], f.layer, f"{f.title} (`{f.id}`)", f.found, f"`{f.fix}`" if f.fix else ""]
        lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    lines += ["", _count_line(findings)]
    return "\n".join(lines) + "\n"


def render(out: Output, diagnosis: Diagnosis, fmt: str = "human", command: str = "doctor") -> None:
    """``command`` (doctor, check) names the report and, in JUnit, the test suite."""
    if fmt == "json":
        out.json(json_payload(diagnosis), kind="doctor")
    elif fmt == "markdown":
        out.text(markdown(diagnosis.snapshot, list(diagnosis.findings), command, data_line(diagnosis)))
    elif fmt == "junit":
        from ascenv.output import junit

        cases = junit.finding_cases(command, diagnosis.findings, strict=diagnosis.strict)
        out.text(junit.document(f"ascenv {command}", cases))
    else:
        human(out, diagnosis.snapshot, list(diagnosis.findings), command, data_line(diagnosis))


def json_payload(diagnosis: Diagnosis) -> dict:
    from ascenv import serde
    from ascenv.snapshot_io import snapshot_to_json

    return {
        "exit_code": diagnosis.exit_code,
        "summary": summary(diagnosis.findings),
        "data": {
            "as_of": diagnosis.data_as_of or None,
            "overlay": list(diagnosis.overlay),
            "overlay_ignored": list(diagnosis.overlay_ignored),
        },
        "findings": [serde.to_data(f) for f in diagnosis.findings],
        "snapshot": snapshot_to_json(diagnosis.snapshot),
    }


def append_markdown(path: Path, diagnosis: Diagnosis, command: str = "doctor") -> None:
    """Add the markdown report to ``path`` (a CI job summary collects what each step appends)."""
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(
                shown_text(markdown(diagnosis.snapshot, list(diagnosis.findings), command, data_line(diagnosis))) + "\n"
            )
    except OSError as exc:
        raise UsageError(
            f"cannot write {path}: {exc.strerror or exc}", hint="--summary takes a writable file"
        ) from None
