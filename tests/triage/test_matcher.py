"""The one-pass literal matcher finds the same lines as one bytes.find pass per literal."""

from __future__ import annotations

import importlib.util

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ascenv.triage.matcher import LiteralMatcher

LITERALS = (b"EZ3002", b"ret is -8020", "找不到".encode(), b"a.b*c", b"+cpu", b"\\x", b"(from versions: none)")
HAS_RE2 = importlib.util.find_spec("re2") is not None

pieces = st.sampled_from([*LITERALS, b"\n", b"noise ", b"a", b"\xff\xfe", "数据".encode(), b"\r", b"E"])


@settings(max_examples=200, deadline=None)
@given(st.lists(pieces, max_size=40))
def test_same_lines_as_the_find_passes(parts):
    block = b"".join(parts)
    expected = LiteralMatcher(LITERALS, use_re2=False).line_starts(block, len(block))
    assert LiteralMatcher(LITERALS).line_starts(block, len(block)) == expected
    # every selected line holds a literal, and every line holding one is selected
    lines = {i: block[i : (block.find(b"\n", i) + 1 or len(block) + 1) - 1] for i in expected}
    assert all(any(lit in line for lit in LITERALS) for line in lines.values())
    start = 0
    for line in block.split(b"\n"):
        assert (start in expected) == any(lit in line for lit in LITERALS)
        start += len(line) + 1


def test_end_bounds_the_search():
    block = b"first line\nEZ3002 in the tail\n"
    assert LiteralMatcher(LITERALS).line_starts(block, 11) == set()
    assert LiteralMatcher(LITERALS).line_starts(block, len(block)) == {11}


@pytest.mark.skipif(not HAS_RE2, reason="google-re2 not installed: the bytes.find fallback is used")
def test_re2_is_the_engine_when_installed():
    assert LiteralMatcher(LITERALS).engine == "re2"
