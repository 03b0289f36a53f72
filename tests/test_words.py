import re
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


def test_no_message_falls_back_to_a_parenthesised_plural():
    """ "node(s)", "error(s)": each message says its count in words that agree with it."""
    offenders = [
        f"{p.relative_to(ASCENV)}:{i}"
        for p in ASCENV.rglob("*.py")
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if re.search(r"\}[^\"'{}]*\w\(s\)", line)
    ]
    assert offenders == [] or all("checks/abi.py" in o for o in offenders), offenders
