"""An operator's history: newest first, each record judged against the next older run's."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

from ascenv.bench.fingerprint import Fingerprint
from ascenv.bench.history import history
from ascenv.bench.readers import read_path
from ascenv.bench.records import Record, Run
from ascenv.bench.stats import compare, verdict
from ascenv.bench.store import BenchStore, new_run
from ascenv.store import Store
from tests.benchcmd.test_readers import KD_EDITED, sample
from tests.cli_helpers import run_cli

ENV = {"PATH": "/usr/bin:/bin"}


def scaled(r: Record, factor: float, rng: random.Random) -> Record:
    durations = tuple(d * factor * (1 + rng.gauss(0, 0.01)) for d in r.durations)
    s = sorted(durations)
    return replace(r, durations=durations, duration_us=s[len(s) // 2], duration_min_us=s[0], duration_max_us=s[-1])


def fixture_runs(tmp_path: Path) -> list[Run]:
    """Four runs of the real hand-edited kernel_details sample: as recorded, then every record
    slower by 30 %, then noisy redraws, oldest first; returned newest first."""
    records = read_path(sample(tmp_path, KD_EDITED)).records
    rng = random.Random(12)
    sets = [records, tuple(scaled(r, 1.3, rng) for r in records)]
    sets += [tuple(scaled(r, 1.3, rng) for r in records), tuple(scaled(r, 0.97, rng) for r in records)]
    runs = [
        new_run(
            op="mm",
            target="npu",
            tool="torch_npu",
            created=f"2026-12-01T09:0{i}:00.000000Z",
            source="x",
            files=(),
            skipped_rows=0,
            fingerprint=Fingerprint(build_key=f"key{i}"),
            records=rs,
        )  # fmt: skip
        for i, rs in enumerate(sets)
    ]
    return runs[::-1]


def test_verdicts_are_those_of_stats_compare_on_real_records(tmp_path: Path) -> None:
    runs = fixture_runs(tmp_path)
    got = history("mm", runs)
    assert [row.run for row in got.rows][:: len(runs[0].records)] == [r.id for r in runs]  # newest first
    assert (got.runs, got.total) == (4, 4)
    judged = 0
    for i, run in enumerate(runs):
        older = {r.key: r for r in runs[i + 1].records} if i + 1 < len(runs) else {}
        rows = [row for row in got.rows if row.run == run.id]
        assert len(rows) == len(run.records)
        for row, r in zip(rows, run.records):
            assert (row.op, row.input_shapes, row.block_dim, row.build_key) == (
                r.op,
                r.input_shapes,
                r.block_dim,
                run.fingerprint.build_key,
            )
            assert (row.duration_us, row.spread) == (r.duration_us, r.spread)
            prev = older.get(r.key)
            assert row.verdict == (compare(prev.durations, r.durations, 0.05).verdict if prev else None)
            judged += prev is not None
    assert judged == 3 * len(runs[0].records)
    verdicts = {row.verdict for row in got.rows}
    assert verdicts == {"faster", "same", "slower", "inconclusive", None}  # single launches prove nothing


def test_shape_filter_and_limit(tmp_path: Path) -> None:
    runs = fixture_runs(tmp_path)
    shapes = "81920,4096;8192,512"
    got = history("mm", runs, shapes)
    assert [(row.op, row.input_shapes) for row in got.rows] == [("MatMulV2", shapes)] * 4
    # newest first: 0.97 after 1.3 (faster), 1.3 redrawn (same), 1.3 after as recorded (slower), the first
    assert [row.verdict for row in got.rows] == ["faster", "same", "slower", None]
    newest = history("mm", runs[:3], shapes, limit=2, total=4)
    assert (newest.runs, newest.total) == (2, 4) and [row.run for row in newest.rows] == [runs[0].id, runs[1].id]
    assert [row.verdict for row in newest.rows] == [row.verdict for row in got.rows[:2]]  # the 3rd run judges the 2nd


def test_verdict_without_the_bootstrap_is_compares() -> None:
    rng = random.Random(5)
    for _ in range(300):
        n, m = rng.randrange(0, 12), rng.randrange(0, 12)
        centre = rng.choice([0.5, 0.9, 0.97, 1.0, 1.03, 1.1, 2.0])
        a = [100 * (1 + rng.gauss(0, 0.03)) for _ in range(n)]
        b = [100 * centre * (1 + rng.gauss(0, 0.03)) for _ in range(m)]
        assert verdict(a, b, 0.05) == compare(a, b, 0.05).verdict, (a, b)
    assert verdict([0.0, 1.0, 2.0], [5.0, 6.0, 7.0], 0.05) == compare([0.0, 1.0, 2.0], [5.0, 6.0, 7.0], 0.05).verdict


def test_history_cli_lists_the_newest_runs_and_says_the_total(tmp_path: Path) -> None:
    bench = BenchStore(Store(tmp_path))
    for run in fixture_runs(tmp_path / "src"):
        bench.write(run)
    base = ["bench", "history", "mm", "--store", str(tmp_path), "--shape", "81920,4096;8192,512"]
    code, out, err = run_cli([*base, "--format", "json"], ENV)
    doc = json.loads(out)
    assert code == 0, err
    assert (doc["runs"], doc["total"], len(doc["history"])) == (4, 4, 4)
    code, out, _ = run_cli([*base, "--limit", "2", "--format", "json"], ENV)
    short = json.loads(out)
    assert (short["runs"], short["total"]) == (2, 4) and short["history"] == doc["history"][:2]
    code, out, _ = run_cli([*base, "--limit", "2"], ENV)
    assert code == 0 and "newest 2 of 4 runs" in out
    code, _, err = run_cli([*base, "--limit", "-1"], ENV)
    assert code == 2 and "--limit" in err


def test_history_names_each_builds_source_commit_and_tiling(tmp_path: Path) -> None:
    """The source commit comes from the build's manifest (``ascenv build`` records the commit its
    SOURCE_DATE_EPOCH came from); a build outside git has none."""
    from ascenv import store as store_module
    from ascenv.bench.history import source_commits
    from tests.test_store import manifest_for

    st = Store(tmp_path)
    sha = "1f" * 20
    for key, origin in (("a" * 64, f"git commit {sha}"), ("b" * 64, "recipe")):
        with st.staging("test") as stage:
            entry = stage / "entry"
            (entry / "outputs").mkdir(parents=True)
            (entry / "outputs" / "add_custom_cpu").write_bytes(b"x")
            manifest = replace(
                manifest_for("add_custom", key, "cpu", "2026-12-01T09:00:00Z", {"add_custom_cpu": b"x"}),
                source_date_epoch_from=origin,
            )
            (entry / store_module.MANIFEST).write_text(store_module.dumps_manifest(manifest))
            st.commit("add_custom", key, entry)
    assert source_commits(st, "add_custom", ["a" * 64, "b" * 64, None, "c" * 64]) == {"a" * 64: sha}

    durations = (10.0, 10.1, 9.9, 10.05)
    tiling = {"status": "ok", "tileLength": 3280}
    for key, created in (("b" * 64, "2026-12-01T09:00:00.000000Z"), ("a" * 64, "2026-12-01T09:10:00.000000Z")):
        record = Record("AddCustom", "131073", None, None, "checker", 4, durations, 10.0, 9.9, 10.1, tiling=tiling)
        BenchStore(st).write(
            new_run(
                op="add_custom",
                target="cpu",
                tool="cpu-checker",
                created=created,
                source="x",
                files=(),
                skipped_rows=0,
                fingerprint=Fingerprint(build_key=key, target="cpu"),
                records=(record,),
            )  # fmt: skip
        )
    code, out, err = run_cli(["bench", "history", "add_custom", "--store", str(tmp_path), "--format", "json"], {})
    assert code == 0, err
    rows = json.loads(out)["history"]
    assert [(r["build_key"][:1], r["source_commit"], r["tiling"]) for r in rows] == [
        ("a", sha, tiling),
        ("b", None, tiling),
    ]
    code, out, _ = run_cli(["bench", "history", "add_custom", "--store", str(tmp_path)], {"COLUMNS": "200"})
    assert sha[:10] in out and "tileLength=3280" in out
