"""ascenv.output.build: `store ls` in a pipe prints every column whole."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ascenv import store
from tests.cli_helpers import run_cli
from tests.test_store import add_entry


def test_store_ls_in_a_pipe_prints_every_column_whole(tmp_path: Path) -> None:
    key = hashlib.sha256(b"add_custom").hexdigest()
    op = "add_custom_with_a_long_operator_name"
    add_entry(store.Store(tmp_path / "store"), op, key, target="cpu-target-with-a-long-name")
    code, out, err = run_cli(["store", "ls", "--store", str(tmp_path / "store")], {"PATH": os.environ["PATH"]})
    assert code == 0, err
    header, row, summary = out.splitlines()
    assert header.split() == ["OP", "TARGET", "KEY", "FINISHED", "OUTPUTS", "SIZE", "IMAGE", "RUNS", "STATE"]
    assert row.split()[:4] == [op, "cpu-target-with-a-long-name", key[:12], "2026-01-01T00:00:00Z"]
    assert row.split()[-2:] == ["0", "ok"] and "…" not in out
    assert summary == "1 build in the store."


def _outcome(tmp_path: Path, **fields):  # type: ignore[no-untyped-def]
    from ascenv.builder import Outcome

    st = store.Store(tmp_path / "store")
    key = hashlib.sha256(b"verify").hexdigest()
    add_entry(st, "add_custom", key)
    return Outcome(st.get("add_custom", key), reused=False, **fields)


def test_verify_reports_both_builds_times_and_json_lists_them(tmp_path: Path) -> None:
    import io
    import json

    from ascenv.output import Output
    from ascenv.output.build import render

    for fields, said in (
        (
            {"verified": True, "build_seconds": (12.34, 11.87)},
            "in 12.3 s, built again from a copy in 11.9 s: byte-identical",
        ),
        (
            {"verified": True, "build_seconds": (3.0, 4.0), "matched_stored": True},
            "in 3.0 s, built again from a copy in 4.0 s: byte-identical, and the same bytes as the stored build",
        ),
        ({"build_seconds": (7.25,)}, "in 7.2 s"),
    ):
        text = io.StringIO()
        render(
            Output(stdout=text, stderr=io.StringIO(), interactive=False, color=False),
            _outcome(tmp_path / str(len(said)), **fields),
        )
        assert said in " ".join(text.getvalue().split())
        data = io.StringIO()
        render(
            Output("json", stdout=data, stderr=io.StringIO(), interactive=False),
            _outcome(tmp_path / f"j{len(said)}", **fields),
            "json",
        )
        assert json.loads(data.getvalue())["build_seconds"] == list(fields["build_seconds"])
