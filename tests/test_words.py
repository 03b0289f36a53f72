import re
import tokenize
from pathlib import Path

import pytest

from ascenv.words import counted

ASCENV = Path(__file__).resolve().parents[1] / "ascenv"


@pytest.mark.parametrize(
    ("n", "noun", "plural", "said"),
    [
        (0, "file", None, "0 files"),
        (1, "image", None, "1 image"),
        (2, "entry", "entries", "2 entries"),
        (1204, "node", None, "1,204 nodes"),
    ],
)
def test_counted(n, noun, plural, said):
    assert counted(n, noun, plural) == said


def _strings(path: Path):
    """Every string literal of a module (f-strings too: one STRING token before Python 3.12)."""
    with tokenize.open(path) as handle:
        for token in tokenize.generate_tokens(handle.readline):
            if token.type == tokenize.STRING or token.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
                yield token.start[0], token.string


def test_no_message_falls_back_to_a_parenthesised_plural():
    """ "node(s)", "error(s)", "process(es)" after a count: each message says its count in words that agree with it."""
    offenders = [
        f"{p.relative_to(ASCENV)}:{line}"
        for p in sorted(ASCENV.rglob("*.py"))
        for line, text in _strings(p)
        if re.search(r"\}[^\"'{}]*[a-z]\((?:e?s)\)", text)
    ]
    assert offenders == [], offenders
