"""ascenv.output.doctor: finding text from untrusted snapshots is shown, never sent to the terminal."""

from __future__ import annotations

import io

from ascenv import model
from ascenv.output import Output
from ascenv.output import doctor as render

PWNED = "\x1b]0;pwned\x07"


def _findings() -> list[model.Finding]:
    return [
        model.Finding(
            "ASC-CANN-DRIVER",
            model.Severity.ERROR,
            "cann",
            "driver 25.0" + PWNED + " too old [bold red]",
            found="25.0\x1b[2J\nforged | cell",
            expected="[/]",
            fix="install \x9b31m",
        )
    ]


def test_human_shows_controls_and_markup_literally() -> None:
    stdout = io.StringIO()
    snap = model.Snapshot(driver=model.DriverInfo(version="25.0" + PWNED))
    render.human(Output(stdout=stdout, stderr=io.StringIO(), interactive=False, color=False), snap, _findings())
    text = stdout.getvalue()
    assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text
    assert "driver 25.0\\x1b]0;pwned\\x07 ·" in text  # the headline
    assert "driver 25.0\\x1b]0;pwned\\x07 too old [bold red]  ASC-CANN-DRIVER" in text
    assert "found:    25.0\\x1b[2J\\x0aforged | cell" in text
    assert "expected: [/]" in text and "fix:      install \\x9b31m" in text


def test_markdown_cells_cannot_break_the_table_or_the_terminal() -> None:
    stdout = io.StringIO()
    snap = model.Snapshot(driver=model.DriverInfo(version="25.0" + PWNED))
    Output(stdout=stdout, stderr=io.StringIO(), interactive=False).text(render.markdown(snap, _findings()))
    text = stdout.getvalue()
    assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text
    (row,) = [line for line in text.splitlines() if "ASC-CANN-DRIVER" in line]
    assert row.count(" | ") == 4 and "forged \\| cell" in row
