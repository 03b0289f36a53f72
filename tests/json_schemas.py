"""Validation of ascenv's JSON documents against the schemas it ships (ascenv/schemas/)."""

from __future__ import annotations

import functools
from typing import Any

from jsonschema import Draft202012Validator

from ascenv import schemas


@functools.cache
def validator(kind: str) -> Draft202012Validator:
    return Draft202012Validator(schemas.load(kind))


def problems(kind: str, document: Any) -> list[str]:
    """What is wrong with ``document`` as a ``kind`` document: "path: message" lines, [] when valid."""
    found = sorted(validator(kind).iter_errors(document), key=lambda e: list(map(str, e.absolute_path)))
    return [f"{kind}: {'.'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}"[:500] for e in found]


def assert_valid(kind: str, document: Any) -> None:
    wrong = problems(kind, document)
    assert not wrong, "\n".join(wrong[:10])
