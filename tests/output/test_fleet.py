"""Rendering of `fleet rollout` (ascenv.output.fleet.render_rollout): every node under its wave,
its gates, and a host or message holding markup or a table's `|` shown as data."""

from __future__ import annotations

import io
import json

from ascenv.fleet import rollout as r
from ascenv.output import Output
from ascenv.output.fleet import render_rollout

KEY = "b" * 64


def _journal() -> r.Journal:
    journal = r.new_journal("add_custom", KEY, ["customize"], [("n1",), ("[red]n2", "s|3")])
    gates = (r.Gate("op-check", r.PASS, "resolves"), r.Gate("test", r.NOT_CHECKABLE, "no `test` command"))
    journal = r.moved(journal, r.Outcome("n1", r.VERIFIED, KEY, "", gates))
    return r.moved(journal, r.Outcome("s|3", r.FAILED, KEY, "op-check: AddCustom resolves to vendor other|x"))


def _render(fmt: str) -> str:
    out = io.StringIO()
    render_rollout(Output(fmt, stdout=out, stderr=io.StringIO(), interactive=False, color=False), _journal(), "j", fmt)
    return out.getvalue()


def test_human_lists_each_wave_its_nodes_and_gates_and_keeps_markup_as_text():
    text = _render("human")
    assert text.index("wave 1/2:") < text.index("verified    n1 at bbbbbbbbbbbb") < text.index("wave 2/2:")
    assert "test not-checkable: no `test` command" in text and "[red]n2" in text
    assert "failed      s|3 at bbbbbbbbbbbb: op-check: AddCustom resolves to vendor other|x" in text


def test_markdown_escapes_the_table_and_json_is_the_journal():
    rows = [line for line in _render("markdown").splitlines() if line.startswith("| 2 |")]
    assert rows[1] == "| 2 | s\\|3 | failed | bbbbbbbbbbbb | op-check: AddCustom resolves to vendor other\\|x |"
    doc = json.loads(_render("json"))
    assert doc["journal"] == "j" and doc["phase"] == "rolling-out" and len(doc["nodes"]) == 3
