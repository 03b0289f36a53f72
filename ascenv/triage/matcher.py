"""One pass over a block of the log for all the table's literals at once.

google-re2 (Google's RE2 bindings, https://github.com/google/re2/tree/main/python) compiles the
alternation of the escaped literals into a DFA: the block is read once whatever the number of
literals. Measured on a 1 MB block of serving-log noise with the 114 literals of the shipped table:
re2 alternation 14 ms, one ``bytes.find`` pass per literal 115 ms, Python ``re`` alternation
735 ms (it backtracks through the alternatives at every position), pyahocorasick 141 ms (its PyPI
build matches str, so the block must be decoded first). Without google-re2 importable (a platform
without its wheel), the ``bytes.find`` passes are the fallback: same result, slower.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Optional


def _re2() -> Optional[Any]:
    try:
        return importlib.import_module("re2")
    except ImportError:
        return None


class LiteralMatcher:
    """Where in a block lines holding any of ``literals`` start."""

    def __init__(self, literals: tuple[bytes, ...], use_re2: bool = True) -> None:
        self.literals = literals
        re2 = _re2() if literals and use_re2 else None
        self.engine = "bytes.find"
        self._compiled: Optional[Any] = None
        self._spans: Optional[Callable[[bytes, int, int], tuple[int, int]]] = None
        if re2 is not None:
            options = re2.Options()
            options.max_mem = 64 << 20  # the DFA of a few hundred literals; RE2 falls back when out
            # bytes, not UTF-8: an escaped byte \xNN is that byte (a log may hold invalid UTF-8,
            # and a Chinese literal is matched by its UTF-8 bytes)
            options.encoding = re2.Options.Encoding.LATIN1
            pattern = b"|".join(_escape(literal) for literal in literals)
            self._compiled = re2.compile(pattern, options)
            self.engine = "re2"
            self._spans = _raw_search(re2, self._compiled, b"noise\n" + literals[0] + b" tail\n")

    def line_starts(self, block: bytes, end: int, limit: Optional[int] = None) -> set[int]:
        """The offsets of the lines of ``block[:end]`` that hold a literal; with ``limit``, the
        search stops once it has ``limit`` of them (the scanner asks whether a block is dense)."""
        starts: set[int] = set()
        most = end + 1 if limit is None else limit
        if self._spans is not None:
            spans = self._spans
            position = 0
            while True:
                first, last = spans(block, position, end)
                if first < 0:
                    return starts
                starts.add(block.rfind(b"\n", 0, first) + 1)
                stop = block.find(b"\n", last, end)
                if stop == -1 or len(starts) >= most:
                    return starts
                position = stop  # the rest of this line is already selected
        if self._compiled is not None:
            position = 0
            while True:
                found = self._compiled.search(block, position, end)
                if found is None:
                    return starts
                start = block.rfind(b"\n", 0, found.start()) + 1
                starts.add(start)
                stop = block.find(b"\n", found.end(), end)
                if stop == -1 or len(starts) >= most:
                    return starts
                position = stop  # the rest of this line is already selected
        for literal in self.literals:
            position = block.find(literal, 0, end)
            while position != -1:
                starts.add(block.rfind(b"\n", 0, position) + 1)
                if len(starts) >= most:
                    return starts
                stop = block.find(b"\n", position, end)
                if stop == -1:
                    break
                position = block.find(literal, stop, end)
        return starts


def _raw_search(re2: Any, compiled: Any, sample: bytes) -> Optional[Callable[[bytes, int, int], tuple[int, int]]]:
    """The span of the first match in ``block[position:end]`` ((-1, -1): none), straight from the
    compiled RE2 object: ``search`` wraps each call in a generator, a match object and its groups,
    which was a third of the scan of a log whose every 34th line matches (profile of
    bench_triage.py --dense). The binding's ``_regexp.Match(anchor, text, pos, endpos)`` returns
    the spans ``search`` itself is made of; None when this google-re2 has no such method (the
    public ``search`` is used then), and it is checked against ``search`` on ``sample`` (a line
    holding a literal) and on a block without any."""
    regexp = getattr(compiled, "_regexp", None)
    anchor = getattr(getattr(re2, "_Anchor", None), "UNANCHORED", None)
    if regexp is None or anchor is None or not hasattr(regexp, "Match"):
        return None

    def spans(block: bytes, position: int, end: int) -> tuple[int, int]:
        return regexp.Match(anchor, block, position, end)[0]

    try:
        for probe in (sample, b"no literal here\n"):
            expected = compiled.search(probe, 0, len(probe))
            found = spans(probe, 0, len(probe))
            if (expected is None) != (found[0] < 0) or (expected is not None and tuple(found) != expected.span()):
                return None
    except Exception:  # noqa: BLE001 - a binding whose private call differs: the public one is used
        return None
    return spans


def _escape(literal: bytes) -> bytes:
    # RE2 syntax: every byte but an ASCII letter or digit is written \xNN (a Latin-1 byte)
    return b"".join(bytes([byte]) if byte < 128 and chr(byte).isalnum() else b"\\x%02x" % byte for byte in literal)
