"""Counted nouns for messages: ``1 file``, ``2 files``, ``1,204 entries``. One helper, so no
message says "1 images" or falls back to "node(s)"."""

from __future__ import annotations

from typing import Optional


def counted(n: int, noun: str, plural: Optional[str] = None) -> str:
    """``n`` and ``noun`` agreed in number (``plural`` when not noun + s)."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
