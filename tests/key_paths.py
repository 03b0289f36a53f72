"""Every key path of plain data (tables and lists), for the fuzzers that put a wrong value at each."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def key_paths(data: Any, prefix: tuple = ()) -> Iterator[tuple]:
    if prefix:
        yield prefix
    items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for key, value in items:
        yield from key_paths(value, (*prefix, key))
