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


@pytest.mark.skipif(not HAS_RE2, reason="google-re2 not installed: the bytes.find fallback is used")
@settings(max_examples=200, deadline=None)
@given(st.lists(pieces, max_size=40))
def test_the_direct_re2_call_finds_what_search_finds(parts):
    block = b"".join(parts)
    fast = LiteralMatcher(LITERALS)
    assert fast._spans is not None  # this google-re2 has the call: the fast path is the one used
    public = LiteralMatcher(LITERALS)
    public._spans = None  # the public search() path
    for end in (len(block), len(block) // 2):
        assert fast.line_starts(block, end) == public.line_starts(block, end)


def test_a_binding_without_the_direct_call_falls_back_to_search():
    from ascenv.triage import matcher

    class Compiled:  # a google-re2 whose private object differs: no _regexp
        def search(self, text, pos, end):
            return None

    assert matcher._raw_search(object(), Compiled(), b"x\n") is None
