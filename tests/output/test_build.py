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
