"""``ascenv triage``: from the error text a user got to the layer that broke, confirmed on the
machine. ``signatures`` loads the table, ``scan`` streams the log through it, ``rank`` turns the
matches into ranked causes decided by the doctor's checks. Nothing here prints."""

from __future__ import annotations

from typing import IO, Optional

from ascenv.model import Snapshot
from ascenv.triage.rank import Cause, SignatureMatch, TriageResult, rank
from ascenv.triage.scan import LineGroup, scan
from ascenv.triage.signatures import SignatureTable, load

__all__ = ["Cause", "LineGroup", "SignatureMatch", "SignatureTable", "TriageResult", "load", "triage"]


def triage(
    stream: IO[bytes],
    snapshot: Optional[Snapshot],
    matrix: object = None,
    table: Optional[SignatureTable] = None,
) -> TriageResult:
    """Scan ``stream`` (bytes, read once, in bounded memory) and decide each cause on ``snapshot``
    with the doctor's checks; ``snapshot=None`` triages the text alone (every cause unknown)."""
    from ascenv.checks import load_checks, run_checks

    if table is None:
        table = load(known_checks=set(load_checks()))
    matched = scan(stream, table)
    findings = None if snapshot is None else run_checks(snapshot, matrix)
    return rank(matched, findings, snapshot)
