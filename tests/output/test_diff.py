"""ascenv.output.diff: values of another machine's bundle are shown, never sent to the terminal."""

from __future__ import annotations

import io

from ascenv.lockfile import Change
from ascenv.model import Severity
from ascenv.output import Output
from ascenv.output import diff as render

PWNED = "\x1b]0;pwned\x07"
CHANGES = (
    Change("python", "torch-npu" + PWNED, "changed", "2.1.0[bold red]", "2.1.0\x9b2J\n99.9 GiB forged", Severity.ERROR),
)


def test_pair_human_shows_controls_and_markup_literally() -> None:
    stdout = io.StringIO()
    out = Output(stdout=stdout, stderr=io.StringIO(), interactive=False, color=False)
    render.pair_human(out, "node-a" + PWNED, "node-[b]", CHANGES)
    text = stdout.getvalue()
    assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text
    for shown in ("node-a\\x1b]0;pwned\\x07", "node-[b]", "torch-npu\\x1b]0;pwned\\x07", "2.1.0[bold red]"):
        assert shown in text, shown
    assert "2.1.0\\x9b2J\\x0a99.9 GiB forged" in text
    assert not any(line.lstrip().startswith("99.9 GiB") for line in text.splitlines())


def test_pair_markdown_keeps_its_table_and_the_terminal_clean() -> None:
    stdout = io.StringIO()
    Output(stdout=stdout, stderr=io.StringIO(), interactive=False).text(render.pair_markdown("a|b", "c", CHANGES))
    text = stdout.getvalue()
    assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text
    (row,) = [line for line in text.splitlines() if line.startswith("| python")]
    assert row == "| python | torch-npu\\x1b]0;pwned\\x07 | 2.1.0[bold red] | 2.1.0\\x9b2J 99.9 GiB forged |"
