"""Findings for installed files the probe could not read (permission, or not a regular file):
"installed but hidden from this user" needs another fix than "not installed"."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Optional

from ascenv.checks import finding
from ascenv.model import Finding, ProbeError, Severity


def unreadable_files(errors: Iterable[ProbeError]) -> list[ProbeError]:
    """The probe errors that say a file or directory exists but could not be read."""
    return [e for e in errors if e.kind in ("permission", "not-a-file")]


def unreadable_finding(id: str, what: str, error: ProbeError, *, severity: Optional[Severity] = None) -> Finding:
    """``what`` is installed (its file exists) but the probe could not read it: say so, and how
    to read it, never "not installed, install it"."""
    evidence = tuple(p for p in (error.source,) if p)
    if error.kind == "permission":
        return finding(
            id,
            severity or Severity.ERROR,
            f"{what} files cannot be read by this user",
            found=error.message,
            expected="read access to the installed files",
            evidence=evidence,
            fix=(
                f"rerun as root (sudo), or ask for read access to {error.source or 'it'}"
                " (root-only installs are mode 750)"
            ),
        )
    return finding(
        id,
        severity or Severity.ERROR,
        f"{what} file is not a regular file",
        found=error.message,
        expected="the regular file the installer writes",
        evidence=evidence,
        fix=f"replace {error.source or 'it'} with the installer's file (reinstall the {what} package)",
    )
