"""``ascenv triage``: from the error text a user got to the layer that broke, confirmed on the
machine. ``signatures`` loads the table, ``scan`` streams the log through it, ``rank`` turns the
matches into ranked causes decided by the doctor's checks. Nothing here prints."""

from __future__ import annotations

from typing import IO, Optional

from ascenv import errors
from ascenv.model import PythonInfo, Snapshot
from ascenv.triage.logfile import Bounded, open_log, refuse_device
from ascenv.triage.rank import Cause, SignatureMatch, TriageResult, rank
from ascenv.triage.scan import LineGroup, scan
from ascenv.triage.signatures import SignatureTable, load
from ascenv.triage.verdict import CheckVerdict, Machine, describe

__all__ = [
    "Bounded",
    "Cause",
    "CheckVerdict",
    "Machine",
    "LineGroup",
    "SignatureMatch",
    "SignatureTable",
    "TriageResult",
    "exit_code",
    "is_own_interpreter",
    "load",
    "open_log",
    "refuse_device",
    "triage",
]


def triage(
    stream: IO[bytes],
    snapshot: Optional[Snapshot],
    matrix: object = None,
    table: Optional[SignatureTable] = None,
    judged: Optional[str] = None,
) -> TriageResult:
    """Scan ``stream`` (bytes, read once, in bounded memory) and decide each cause on ``snapshot``
    with the doctor's checks; ``snapshot=None`` triages the text alone (every cause unknown).
    ``judged`` names the machine in the header ("this machine", "snapshot FILE")."""
    from ascenv.checks import load_checks, run_checks

    if table is None:
        table = load(known_checks=set(load_checks()))
    matched = scan(stream, table)
    if snapshot is None:
        return rank(matched, None, None)
    label = judged or f"the machine at {snapshot.root}"
    machine = describe(snapshot, label, own_python=is_own_interpreter(snapshot.python))
    return rank(matched, run_checks(snapshot, matrix), snapshot, machine, matrix)


def is_own_interpreter(python: PythonInfo) -> bool:
    """Whether the snapshot's target Python is the interpreter running ascenv (or its virtual
    environment): its packages are ascenv's dependencies, never evidence about the user's stack.
    Same bin directory as ``sys.executable``, or a distribution found in ascenv's own prefix. The
    base interpreter of ascenv's virtual environment is not ascenv's: its site-packages are the
    user's (pipx and venvs are built on the system Python the user's stack may live in)."""
    import os
    import sys

    if not python.executable or python.from_files:  # an image's environment under --root: never ascenv's
        return False
    if os.path.dirname(os.path.abspath(python.executable)) == os.path.dirname(os.path.abspath(sys.executable)):
        return True
    prefixes = tuple(os.path.join(os.path.abspath(p), "") for p in {sys.prefix, sys.exec_prefix})
    return any(os.path.join(os.path.abspath(d.location), "").startswith(prefixes) for d in python.distributions)


def exit_code(result: TriageResult) -> int:
    """1 when the machine confirms a cause, or (no signature known) when the doctor finds an error."""
    broken = result.any_confirmed if result.recognised else bool(result.doctor_errors)
    return errors.EXIT_FINDINGS if broken else errors.EXIT_OK
