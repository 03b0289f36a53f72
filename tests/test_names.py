"""One rule for names that become one directory of a path (kernels, store operators)."""

from __future__ import annotations

import pytest

from ascenv.names import NAME_MAX, name_problem


@pytest.mark.parametrize("name", ["add_custom", "a..b", "MatMul-v2.1", "0x", "x" * NAME_MAX])
def test_names_that_are_one_directory(name: str) -> None:
    assert name_problem(name) is None


@pytest.mark.parametrize(
    "name", ["", ".", "..", ".bench", "-x", "a/b", "../x", "/abs", "a\0b", "ok\n", "a b", "caf\u00e9", "x" * 256]
)
def test_names_that_are_not(name: str) -> None:
    assert name_problem(name)
