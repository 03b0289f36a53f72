"""What a list of findings adds up to: the counts by severity and the exit code of `doctor`
(and of the report that records a doctor run). A helper: it registers no check."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ascenv import errors
from ascenv.checks import run_checks
from ascenv.model import Finding, Severity, Snapshot

HELPER = True  # found by the check discovery, holds no check


@dataclass(frozen=True)
class Diagnosis:
    """What `doctor` found on one machine: the snapshot it judged, the findings, the exit code."""

    snapshot: Snapshot
    findings: tuple[Finding, ...]
    exit_code: int
    strict: bool = False  # warnings fail too (the exit code, and JUnit failures)
    data_as_of: str = ""  # the compatibility data's day ("" without the data)
    overlay: tuple[str, ...] = ()  # the user's data files read in place of the shipped ones
    overlay_ignored: tuple[str, ...] = ()  # the user's data files older than the shipped ones


def diagnose(snapshot: Snapshot, matrix: Any, *, strict: bool = False, extra: Iterable[Finding] = ()) -> Diagnosis:
    findings = tuple(run_checks(snapshot, matrix, extra))
    as_of, overlay = getattr(matrix, "as_of", ""), tuple(getattr(matrix, "overlay", ()))
    ignored = tuple(getattr(matrix, "overlay_ignored", ()))
    return Diagnosis(snapshot, findings, exit_code(findings, strict=strict), strict, as_of, overlay, ignored)


def data_line(diagnosis: Diagnosis) -> str:
    """``data as of 2026-12-01`` and, when the user refreshed it, the files read instead."""
    if not diagnosis.data_as_of:
        return ""
    line = f"compatibility data as of {diagnosis.data_as_of}"
    if diagnosis.overlay:
        line += f" (overlay: {', '.join(diagnosis.overlay)}; `ascenv compat update --remove` restores the shipped data)"
    if diagnosis.overlay_ignored:
        line += f" (ignored, older than the shipped data: {', '.join(diagnosis.overlay_ignored)})"
    return line


def exit_code(findings: Sequence[Finding], *, strict: bool) -> int:
    """1 when a finding is an error (or, with ``strict``, a warning), else 0."""
    failing = {Severity.ERROR, Severity.WARN} if strict else {Severity.ERROR}
    return errors.EXIT_FINDINGS if any(f.severity in failing for f in findings) else errors.EXIT_OK


def summary(findings: Sequence[Finding]) -> dict[str, int]:
    return {s.value: sum(1 for f in findings if f.severity is s) for s in Severity}
