"""Tables in a 60-column terminal and in a pipe (issue 25: ``store ls`` and ``bench history`` cut
numbers to "2.…" and squeezed columns to nothing without a word)."""

from __future__ import annotations

import io
from pathlib import Path

from ascenv.bench.history import History, Row
from ascenv.output import PIPE_WIDTH, Output
from ascenv.output import bench as bench_render
from ascenv.output.store import render_ls
from ascenv.output.tables import print_rows
from ascenv.store import Store
from ascenv.store_listing import list_builds
from tests.test_store import add_entry

HISTORY_TITLES = ("RUN", "BUILD", "SOURCE", "OP", "INPUT SHAPES", "BLOCK DIM", "TILING", "MEDIAN us", "SPREAD")


def console_of(width: int) -> tuple[Output, io.StringIO]:
    stdout = io.StringIO()
    out = Output(stdout=stdout, stderr=io.StringIO(), interactive=False, color=False)
    if width != PIPE_WIDTH:
        out.console.width = width  # a terminal of that many columns
    return out, stdout


def history() -> History:
    rows = tuple(
        Row(
            f"20261201T09{i:02d}00Z-1a2b3c4d",
            "c0ffee1234567890",
            "add_custom",
            "131073;131073",
            40,
            2.345678 * 1000 + i,
            0.0123,
            "same" if i else None,
            {"status": "ok", "tileLength": 3280, "usedCoreNum": 40},
            "0123456789abcdef",
        )
        for i in range(3)
    )
    return History("add_custom", rows, 3, 3)


def cut(text: str) -> bool:
    return "\u2026" in text or "..." in text


def test_bench_history_in_60_columns_lists_every_field_whole() -> None:
    out, stdout = console_of(60)
    bench_render.history(out, history(), "human")
    text = stdout.getvalue()
    assert not cut(text) and all(len(line) <= 60 for line in text.splitlines())
    for i in range(3):
        assert f"MEDIAN us: {2345.678 + i:.1f}" in text  # whole, not "2.…"
        assert f"20261201T09{i:02d}00Z-1a2b3c4d" in text
    for title in (*HISTORY_TITLES, "VS PREVIOUS"):  # no column dropped
        assert title in text, title
    assert "TILING: tileLength=3280 usedCoreNum=40" in text


def test_bench_history_in_a_pipe_and_a_wide_terminal_is_one_table_line_per_row() -> None:
    for width in (PIPE_WIDTH, 200):
        out, stdout = console_of(width)
        bench_render.history(out, history(), "human")
        lines = stdout.getvalue().splitlines()
        assert lines[0].split() == [*" ".join(HISTORY_TITLES).split(), "VS", "PREVIOUS"]
        assert len(lines) == 1 + 3 + 1 and not cut("\n".join(lines))  # header, 3 rows, the count
        assert "2345.7" in lines[1] and "same" not in lines[1] and lines[2].rstrip().endswith("same")


def test_store_ls_in_60_columns_and_in_a_pipe(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    for i in range(2):
        add_entry(store, f"add_custom_{i}", f"{i}" * 64, outputs={"bin": b"x" * (2500 + i)})
    listing = list_builds(store)
    out, stdout = console_of(60)
    render_ls(out, listing)
    narrow = stdout.getvalue()
    assert not cut(narrow) and all(len(line) <= 60 for line in narrow.splitlines())
    for title in ("OP", "TARGET", "KEY", "FINISHED", "OUTPUTS", "SIZE", "IMAGE", "RUNS", "STATE"):
        assert narrow.count(f"{title}") >= 2, title  # every field of both builds
    assert "KEY: 000000000000" in narrow and "FINISHED: 2026-01-01T00:00:00Z" in narrow
    out, stdout = console_of(PIPE_WIDTH)
    render_ls(out, listing)
    lines = stdout.getvalue().splitlines()
    assert lines[0].split() == ["OP", "TARGET", "KEY", "FINISHED", "OUTPUTS", "SIZE", "IMAGE", "RUNS", "STATE"]
    assert lines[1].split()[:4] == ["add_custom_0", "cpu", "000000000000", "2026-01-01T00:00:00Z"]


def test_a_table_that_fits_stays_a_table_and_a_long_wrapping_cell_wraps() -> None:
    out, stdout = console_of(60)
    print_rows(out.console, ("A", "B"), [["1.234567", "x"]])
    assert stdout.getvalue().splitlines()[1].split() == ["1.234567", "x"]
    out, stdout = console_of(60)
    words = " ".join(f"w{i}" for i in range(40))  # 159 characters of short words: wraps in its column
    print_rows(out.console, ("N", "TEXT"), [["12345.678", words]], wrap=("TEXT",))
    text = stdout.getvalue()
    assert "12345.678" in text and "w39" in text and all(len(line) <= 60 for line in text.splitlines())
    assert "N:" not in text and "TEXT:" not in text  # still a table
