"""Names that become one directory of a path: a kernel recipe's ``name`` and the operator of the
build store and of bench runs (``<store>/<op>/...``). One rule, so that a name that is valid for a
kernel is valid everywhere it is stored, and nothing else is.

A name starts with a letter or digit (so never ``.``, ``..``, ``.bench`` or ``-x``, which a shell
tool would read as an option) and holds letters, digits, ``_``, ``.`` and ``-`` only: no ``/``, no
NUL, no newline, no space. At most 255 bytes, Linux's NAME_MAX for one path component
(https://man7.org/linux/man-pages/man3/pathconf.3.html)."""

from __future__ import annotations

import re
from typing import Optional

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")  # fullmatch: ``$`` would let a final newline pass
NAME_MAX = 255
RULE = "letters, digits, '_', '.', '-', starting with a letter or digit"


def name_problem(name: str) -> Optional[str]:
    """Why ``name`` cannot be one path component of a store (a short phrase), or None."""
    if len(name) > NAME_MAX:
        return f"longer than {NAME_MAX} characters"
    if not _NAME.fullmatch(name):
        return f"expected {RULE}"
    return None


def is_name(name: str) -> bool:
    """Whether ``name`` may be one path component of a store."""
    return name_problem(name) is None
