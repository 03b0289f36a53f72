"""Tables that fit the console or become a list: below the width a table needs, rich squeezes
its columns, cutting numbers to "2.…" and narrowing columns to nothing without a word (issue 25,
a 60-column terminal). A table is printed where every column gets at least its minimum (a
no-wrap cell's whole width, a wrapping cell's longest word); else each row is printed as
``TITLE value`` lines, as ``kubectl describe`` and ``docker inspect --format`` put one field a
line. In a pipe the console is ``PIPE_WIDTH`` wide: the table, whole."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

INDENT = "  "


def fits(console: Console, titles: Sequence[str], rows: Sequence[Sequence[str]], wrap: Collection[str] = ()) -> bool:
    """Whether each column gets its whole cells (a ``wrap`` column: its longest word) and the
    two spaces between columns that ``_table`` puts there. rich's own measure does not do: a
    no-wrap column's minimum is its longest word there too, and below its width rich cuts."""
    from rich.text import Text

    need = 2 * (len(titles) - 1)
    for i, title in enumerate(titles):
        texts = [Text(title)] + [Text.from_markup(row[i]) for row in rows]
        if title in wrap:
            need += max((Text(word).cell_len for t in texts for word in t.plain.split()), default=0)
        else:
            need += max(t.cell_len for t in texts)
    return need <= console.width


def print_rows(
    console: Console, titles: Sequence[str], rows: Sequence[Sequence[str]], *, wrap: Collection[str] = ()
) -> None:
    """``rows`` (rich markup, one cell per title) as a table where it fits ``console``, else as a
    list: each row's first cell after its title, then ``  TITLE: value`` for the others that
    are not empty. ``wrap`` names the columns whose text may wrap at spaces."""
    if fits(console, titles, rows, wrap):
        console.print(_table(titles, rows, wrap))
        return
    for i, row in enumerate(rows):
        if i:
            console.print()
        console.print(f"{titles[0]} {row[0]}".strip(), overflow="fold")
        for title, value in zip(titles[1:], row[1:]):
            if value and value != "-":
                console.print(f"{INDENT}{title}: {value}" if title else f"{INDENT}{value}", overflow="fold")


def _table(titles: Sequence[str], rows: Sequence[Sequence[str]], wrap: Collection[str]) -> Table:
    from rich.table import Table

    table = Table(box=None, pad_edge=False)
    for title in titles:
        table.add_column(title, no_wrap=title not in wrap, overflow="fold")
    for row in rows:
        table.add_row(*row)
    return table
