"""Run files read back as serde reads them, and latest / baseline / prefixes resolved from the
files they name as from every run."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from ascenv import serde
from ascenv.bench import store as store_module
from ascenv.bench.fingerprint import Fingerprint
from ascenv.bench.records import Record, Run
from ascenv.bench.store import BenchStore, dumps_run, loads_run, new_run, run_data
from ascenv.errors import InputError
from ascenv.store import Store
from tests.benchcmd.test_history import fixture_runs


def test_run_files_read_and_written_as_serde_does(tmp_path: Path) -> None:
    for run in fixture_runs(tmp_path):
        assert run_data(run) == serde.to_data(run)
        text = dumps_run(run)
        assert json.loads(text) == {"schema": 1, "run": serde.to_data(run)}
        assert text.count('\n   {"op": ') == len(run.records)  # indented, one line per record
        assert loads_run(text, "x") == serde.from_data(Run, json.loads(text)["run"], "run") == run


def edited(run: Run, edit) -> str:  # type: ignore[no-untyped-def]
    data = json.loads(dumps_run(run))
    edit(data["run"])
    return json.dumps(data)


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d["records"][0].update(durations=[1, 2.5, 3], duration_us=2),  # ints are numbers
        lambda d: [d["records"][0].pop(k) for k in ("clock", "tiling", "metrics", "duration_stat")],
        lambda d: d["records"][0]["metrics"].update(x=1),
        lambda d: d["fingerprint"].pop("soc"),
        lambda d: d.update(source="caf\u00e9"),
    ],
)
def test_hand_edited_run_files_that_serde_accepts(tmp_path: Path, edit) -> None:  # type: ignore[no-untyped-def]
    text = edited(fixture_runs(tmp_path)[0], edit)
    assert loads_run(text, "x") == serde.from_data(Run, json.loads(text)["run"], "run")


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (lambda d: d["records"][0].update(durations=[1.0, True]), "run.records[0].durations[1]: expected number"),
        (lambda d: d["records"][0].update(extra=1), "run.records[0].extra: unknown key"),
        (lambda d: d["records"][0].pop("samples"), "run.records[0].samples: missing"),
        (lambda d: d["fingerprint"].update(host_cores="8"), "run.fingerprint.host_cores"),
        (lambda d: d.update(source="\ud800"), "run.source: not valid Unicode"),
        (lambda d: d["records"][0]["clock"].update(current_mhz=1.5), "run.records[0].clock.current_mhz"),
    ],
)
def test_bad_run_files_name_the_key(tmp_path: Path, edit, words: str) -> None:  # type: ignore[no-untyped-def]
    text = edited(fixture_runs(tmp_path)[0], edit)
    with pytest.raises(InputError, match="^f.json: " + words.replace("[", r"\[").replace("]", r"\]")):
        loads_run(text, "f.json")


def many_runs(root: Path, count: int = 60) -> BenchStore:
    """Runs of two operators, loose and of builds, npu and cpu, several within one second."""
    bench = BenchStore(Store(root))
    rng = random.Random(3)
    for i in range(count):
        second, micro = divmod(i, 3)  # three runs a second: their ids do not sort by microsecond
        durations = tuple(100.0 + rng.random() for _ in range(5))
        s = sorted(durations)
        rec = Record("add_custom", "n=8", None, None, "AI_VECTOR_CORE", 5, durations, s[2], s[0], s[-1])
        bench.write(
            new_run(
                op="add_custom" if i % 7 else "other",
                target="cpu" if i % 5 == 0 else "npu",
                tool="msprof op",
                created=f"2026-12-01T09:{second // 60:02d}:{second % 60:02d}.{micro * 3 % 7:06d}Z",
                source=str(i),
                files=(),
                skipped_rows=0,
                fingerprint=Fingerprint(build_key="abcdef1234" if i % 4 == 0 else None),
                records=(rec,),
            )  # fmt: skip
        )
    return bench


def test_resolving_from_file_names_gives_the_run_every_run_gives(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    bench = many_runs(tmp_path)
    runs = bench.runs("add_custom")
    bench.set_baseline(runs[17])
    bench.set_baseline(next(s for s in runs if s.run.target == "cpu"))
    names = ["latest", "baseline", runs[5].run.id, runs[30].run.id[:18], "abcdef", "2026120"]
    for op in ("add_custom", None):
        for target in (None, "npu", "cpu"):
            for name in names:
                try:
                    expected = bench._resolve(name, op, target, bench.runs(op)).path
                except Exception as exc:
                    with pytest.raises(type(exc), match=str(exc)[:40].replace("(", r"\(").replace(")", r"\)")):
                        bench.resolve(name, op, target)
                    continue
                assert bench.resolve(name, op, target).path == expected, (name, op, target)
    for count in (1, 2, 5, 100):
        newest, total = bench.newest("add_custom", count)
        assert ([s.path for s in newest], total) == ([s.path for s in runs[:count]], len(runs))

    loads = []
    real = store_module._load
    monkeypatch.setattr(store_module, "_load", lambda path: loads.append(path) or real(path))
    assert bench.resolve("latest", "add_custom").path == runs[0].path
    assert bench.resolve("baseline", "add_custom", "npu").path == runs[17].path
    # latest: the newest second's 3 runs; baseline: those again (whose operator) and the baseline's file
    assert len(loads) == 7 < len(runs)


def test_a_file_not_named_by_its_run_is_still_found(tmp_path: Path) -> None:
    bench = many_runs(tmp_path, 9)
    runs = bench.runs("add_custom")
    oldest = runs[-1].path
    renamed = oldest.with_name("copied.json")
    oldest.rename(renamed)
    data = json.loads(renamed.read_text())
    data["run"]["created"] = "2027-01-01T00:00:00.000000Z"  # now the newest, whatever its name says
    renamed.write_text(json.dumps(data))
    assert bench.resolve("latest", "add_custom").path == renamed == bench.runs("add_custom")[0].path
    assert bench.newest("add_custom", 1)[0][0].path == renamed
    assert bench.resolve(data["run"]["id"], "add_custom").path == renamed  # by its id, whatever its name
