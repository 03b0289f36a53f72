"""`ascenv store ls | show | gc` through cli.main on a store built in tmp_path (no engine): the bench
runs each build lists, and what gc keeps for them."""

from __future__ import annotations

import json
from pathlib import Path

from ascenv.bench.store import BenchStore
from ascenv.store import Store
from tests.cli_helpers import run_cli
from tests.test_store import add_entry, bench_run

ENV = {"PATH": "/usr/bin:/bin"}


def test_store_show_and_ls_list_bench_runs_and_gc_says_it_kept_the_baseline(tmp_path: Path) -> None:
    st = Store(tmp_path / "store")
    old = add_entry(st, "add_custom", "aaaaaa".ljust(64, "0"), target="npu", finished="2026-01-01T00:00:00Z")
    new = add_entry(st, "add_custom", "bbbbbb".ljust(64, "0"), target="npu", finished="2026-01-02T00:00:00Z")
    run = bench_run(st, old.key, "2026-12-01T09:00:00.000000Z")
    BenchStore(st).set_baseline(BenchStore(st).resolve(run.id, "add_custom"))
    (new.path / "bench").mkdir()
    (new.path / "bench" / "cut.json").write_text('{"schema": 1, "run": {')
    where = ["--store", str(st.root)]

    code, out, _ = run_cli(["store", "show", "aaaaaa", *where, "--format", "json"], ENV, cwd=tmp_path)
    assert code == 0
    assert json.loads(out)["bench_runs"] == [
        {
            "file": f"{run.id}.json",
            "id": run.id,
            "created": run.created,
            "tool": "msprof op",
            "target": "npu",
            "records": 2,
            "baseline": True,
            "damaged": None,
        }
    ]
    code, out, _ = run_cli(["store", "show", "aaaaaa", *where], ENV, cwd=tmp_path)
    assert code == 0 and "1 bench run" in out and run.id in out and "baseline" in out
    code, out, _ = run_cli(["store", "show", "bbbbbb", *where], ENV, cwd=tmp_path)
    assert "cut.json" in out and "damaged: " in out and "not valid JSON" in out

    code, out, _ = run_cli(["store", "ls", *where, "--format", "json"], ENV, cwd=tmp_path)
    builds = {b["key"][:6]: b["bench_runs"] for b in json.loads(out)["builds"]}
    assert [r["id"] for r in builds["aaaaaa"]] == [run.id]
    assert [(r["file"], r["id"], r["damaged"] is not None) for r in builds["bbbbbb"]] == [("cut.json", None, True)]

    code, out, _ = run_cli(["store", "gc", "--keep", "0", *where, "--format", "json"], ENV, cwd=tmp_path)
    result = json.loads(out)
    assert code == 0 and result["removed"] == [f"add_custom/{new.key}"]
    assert result["kept_baseline"] == [{"build": f"add_custom/{old.key}", "targets": ["npu"]}]
    assert old.path.is_dir() and (st.root / "add_custom" / ".bench" / "baselines.json").is_file()
