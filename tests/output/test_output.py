"""ascenv.output: untrusted text never drives the terminal; tables in a pipe are printed whole."""

from __future__ import annotations

import io
import json

import pytest
from rich.table import Table

from ascenv.output import PIPE_WIDTH, Output, printable, safe

HOSTILE = "25.0\x1b]0;pwned\x07\x1b[2J[bold red]x[/]\r\n99.9 GiB\x9b31m\x7f"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def quiet(stdout: io.StringIO, color: bool = False) -> Output:
    return Output(stdout=stdout, stderr=io.StringIO(), interactive=False, color=color)


def test_printable_shows_every_control_but_tab() -> None:
    assert printable(HOSTILE) == "25.0\\x1b]0;pwned\\x07\\x1b[2J[bold red]x[/]\\x0d\\x0a99.9 GiB\\x9b31m\\x7f"
    assert printable("a\tb") == "a\tb"
    assert printable(3) == "3"


def test_safe_is_printable_and_literal_in_markup() -> None:
    stdout = io.StringIO()
    quiet(stdout).console.print(f"[bold]driver[/] {safe(HOSTILE)}")
    assert stdout.getvalue() == "driver " + printable(HOSTILE) + "\n"


def test_control_characters_a_renderer_forgot_are_shown_not_sent() -> None:
    # even raw text (not passed through safe) and a table cell cannot send ESC or C1 codes (the
    # table's borders may then be off: renderers pass data through safe(), which keeps them)
    stdout = Terminal()
    out = quiet(stdout, color=True)
    out.console.print("raw \x1b]0;pwned\x07 \x1b[2J \x9b31m")
    table = Table("NAME")
    table.add_row("cell \x1b[31mred\x1b[0m")
    out.console.print(table)
    text = stdout.getvalue()
    assert "\\x1b]0;pwned" in text and "\\x1b[2J" in text and "\\x9b31m" in text and "cell \\x1b[31mred" in text
    assert "\x1b]" not in text and "\x9b" not in text and "\x07" not in text
    assert "\x1b[1m" in text  # rich's own styling still works (the table header is bold)


def test_messages_on_stderr_are_shown_too() -> None:
    stderr = io.StringIO()
    out = Output(stdout=io.StringIO(), stderr=stderr, interactive=False, color=False)
    out.warn("name \x1b]0;pwned\x07 [bold]x")
    out.error("bad \x9b", hint="line\nforged")
    assert stderr.getvalue() == ("warning: name \\x1b]0;pwned\\x07 [bold]x\nerror: bad \\x9b\nhint: line\\x0aforged\n")


def test_plain_text_keeps_newlines_and_tabs_only() -> None:
    stdout = io.StringIO()
    quiet(stdout).text("| a | b\x1b]0;x\x07 |\n\tnext\r")
    assert stdout.getvalue() == "| a | b\\x1b]0;x\\x07 |\n\tnext\\x0d\n"


@pytest.mark.any_json
def test_json_escapes_c1_and_line_separators_and_stays_the_same_value() -> None:
    stdout = io.StringIO()
    quiet(stdout).json({"value": "a\x9b2J\x7f\u2028é\x1b"})
    text = stdout.getvalue()
    assert "\x9b" not in text and "\x7f" not in text and "\u2028" not in text and "\x1b" not in text
    assert '"a\\u009b2J\\u007f\\u2028é\\u001b"' in text
    assert json.loads(text) == {"schema": 1, "value": "a\x9b2J\x7f\u2028é\x1b"}


def _long_table() -> Table:
    table = Table(box=None, pad_edge=False)
    for title in ("OP", "TARGET", "KEY", "FINISHED", "OUTPUTS", "SIZE", "IMAGE", "STATE"):
        table.add_column(title, no_wrap=True)
    table.add_row("add_custom", "cpu", "9f86d081884c", "2026-01-01T00:00:00Z", "2", "1.2 MiB", "x" * 90, "ok")
    return table


def test_tables_in_a_pipe_are_printed_whole() -> None:
    stdout = io.StringIO()
    out = quiet(stdout)
    assert out.console.width == PIPE_WIDTH
    out.console.print(_long_table())
    header, row = stdout.getvalue().splitlines()
    assert header.split() == ["OP", "TARGET", "KEY", "FINISHED", "OUTPUTS", "SIZE", "IMAGE", "STATE"]
    assert row.split() == [
        "add_custom",
        "cpu",
        "9f86d081884c",
        "2026-01-01T00:00:00Z",
        "2",
        "1.2",
        "MiB",
        "x" * 90,
        "ok",
    ]
    assert "…" not in stdout.getvalue()


def test_tables_on_a_terminal_keep_its_width() -> None:
    stdout = Terminal()
    out = quiet(stdout)
    assert out.console.width < PIPE_WIDTH
    out.console.width = 80
    out.console.print(_long_table())
    assert "…" in stdout.getvalue()  # on an 80-column terminal rich fits the table, as before


def test_a_progress_description_cannot_drive_the_terminal() -> None:
    stderr = Terminal()
    out = Output(stdout=Terminal(), stderr=stderr, interactive=True, color=False)
    with out.progress("scan /cache/\x1b]0;pwned\x07", total=2) as progress:
        progress.advance(1, description="next \x9b2J")
        progress(1)
    text = stderr.getvalue()
    assert "\\x1b]0;pwned\\x07" in text and "\x1b]0;" not in text and "\x9b" not in text


# names that are not UTF-8 (surrogateescape) and lone surrogates reach no output raw (issue 28, X3)
UNDECODABLE = "bad\udcff-\udc80.log \ud800"


def _strict(text: str) -> str:
    text.encode("utf-8")  # a lone surrogate would raise here, as on a UTF-8 stdout
    return text


@pytest.mark.any_json
def test_json_text_and_rich_show_undecodable_bytes_as_backslash_x() -> None:
    stdout = io.StringIO()
    out = quiet(stdout)
    out.json({"path": UNDECODABLE, UNDECODABLE: 1})
    document = json.loads(_strict(stdout.getvalue()))
    assert document["path"] == "bad\\xff-\\x80.log \\ud800" and "bad\\xff-\\x80.log \\ud800" in document
    for show in (out.text, out.console.print):
        stdout.seek(0), stdout.truncate()
        show(f"{UNDECODABLE} [x]")
        assert "bad\\xff-\\x80.log \\ud800" in _strict(stdout.getvalue())
    assert printable(UNDECODABLE) == "bad\\xff-\\x80.log \\ud800"
