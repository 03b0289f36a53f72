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


def diagnose(snapshot: Snapshot, matrix: Any, *, strict: bool = False, extra: Iterable[Finding] = ()) -> Diagnosis:
    findings = tuple(run_checks(snapshot, matrix, extra))
    return Diagnosis(snapshot, findings, exit_code(findings, strict=strict), strict)


def exit_code(findings: Sequence[Finding], *, strict: bool) -> int:
    """1 when a finding is an error (or, with ``strict``, a warning), else 0."""
    failing = {Severity.ERROR, Severity.WARN} if strict else {Severity.ERROR}
    return errors.EXIT_FINDINGS if any(f.severity in failing for f in findings) else errors.EXIT_OK


def summary(findings: Sequence[Finding]) -> dict[str, int]:
    return {s.value: sum(1 for f in findings if f.severity is s) for s in Severity}
