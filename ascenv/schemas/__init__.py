"""The JSON Schemas (draft 2020-12) of ascenv's ``--format json`` documents, one file per kind
(``doctor.json``, ``lock-check.json``, …), shipped in the package. ``Output.json`` is told the
kind of each document; the tests validate every document against its schema. Written by
``python -m ascenv.schemas.generate``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ascenv import errors

DIRECTORY = Path(__file__).resolve().parent


def names() -> list[str]:
    """Every kind with a schema, sorted."""
    return sorted(p.stem for p in DIRECTORY.glob("*.json"))


def load(name: str) -> dict[str, Any]:
    """The schema of the ``name`` document (``doctor``, ``snapshot``, ``bench-compare``, …)."""
    path = DIRECTORY / f"{name}.json"
    if "/" in name or not path.is_file():
        raise errors.UsageError(f"no JSON schema named {name!r}", hint="one of: " + ", ".join(names()))
    return dict(json.loads(path.read_text(encoding="utf-8")))
