"""The noise between runs (bench.stats.between_runs): how far one build's runs moved, read from
the stored runs, and the verdicts it widens or leaves undecided. The real series is a CI run's 21
``bench run``s of one add_custom CPU build at load (tests/data/bench_drift, copied from its store):
at 524288 elements one run's launch/peer median rose 18 % (its kernel 36 %, its peer 14 %) while
the shape timed just before it in the same run did not move."""

from __future__ import annotations

import json
import random
import statistics
from dataclasses import replace
from pathlib import Path

import pytest

from ascenv.bench.fingerprint import Fingerprint
from ascenv.bench.records import Run
from ascenv.bench.stats import BetweenRuns, between_runs, compare, history_of, spread_of
from ascenv.bench.store import BenchStore, loads_run, new_run
from ascenv.store import Store
from tests.benchcmd.test_compare import ENV, noisy, record
from tests.cli_helpers import run_cli

DATA = Path(__file__).resolve().parents[1] / "data" / "bench_drift"


@pytest.fixture(scope="module")
def series() -> list[Run]:
    runs = [loads_run(p.read_text(encoding="utf-8"), str(p)) for p in sorted(DATA.glob("*.json"))]
    assert len(runs) == 21 and len({r.fingerprint.build_key for r in runs}) == 1
    return sorted(runs, key=lambda r: r.created)


def ratio_median(run: Run, shapes: str) -> float:
    (r,) = [x for x in run.records if x.input_shapes == shapes]
    return statistics.median(d / p for d, p in zip(r.durations, r.peers))


def test_the_noise_between_runs_of_one_build_is_the_spread_of_their_medians(series: list[Run]) -> None:
    for shapes in ("262145", "524288"):
        key = next(x.key for x in series[0].records if x.input_shapes == shapes)
        found = between_runs(series, key, against_peer=True)
        medians = [ratio_median(r, shapes) for r in series]
        assert found.runs == 21 and found.builds == 1
        assert found.spread == pytest.approx(max(medians) / min(medians) - 1)
    # the burst run (21:02:01) is what widens 524288: without it its runs moved under 8 %
    burst = max(series, key=lambda r: ratio_median(r, "524288"))
    assert burst.created.startswith("2026-12-04T21:02:01")
    key = next(x.key for x in burst.records if x.input_shapes == "524288")
    assert between_runs(series, key, True).spread > 0.2
    assert between_runs([r for r in series if r is not burst], key, True).spread < 0.08
    # the durations alone, where no peer is judged: the records' medians
    durations = [next(x.duration_us for x in r.records if x.key == key) for r in series]
    assert between_runs(series, key, False).spread == pytest.approx(max(durations) / min(durations) - 1)


def _run(build: object, durations: list[float], created: str) -> Run:
    return new_run(
        op="add_custom", target="npu", tool="msprof op", created=created, source="x", files=(), skipped_rows=0,
        fingerprint=Fingerprint(soc="910B4", build_key=build if isinstance(build, str) else None),
        records=(record(durations),),
    )  # fmt: skip


def test_only_runs_of_one_build_measure_it() -> None:
    """Runs not tied to a build (imports without --build) are not known to be one code; two builds
    run once each are two codes; a build run twice is measured, whatever other builds did."""
    base = [100.0, 101.0, 99.0]
    key = record(base).key
    loose = [_run(None, base, "2026-12-01T09:00:00Z"), _run(None, [x * 1.5 for x in base], "2026-12-01T09:01:00Z")]
    assert between_runs(loose, key, False) == BetweenRuns()
    once_each = [_run("k1", base, "2026-12-01T09:00:00Z"), _run("k2", [x * 1.5 for x in base], "2026-12-01T09:01:00Z")]
    assert between_runs(once_each, key, False) == BetweenRuns()
    twice = once_each + [_run("k1", [x * 1.1 for x in base], "2026-12-01T09:02:00Z")]
    found = between_runs(twice, key, False)
    assert (found.runs, found.builds) == (2, 1) and found.spread == pytest.approx(0.1)
    assert between_runs(twice, ("other",) + key[1:], False) == BetweenRuns()  # another op's record


def test_the_history_is_of_a_stack_up_to_b_without_b() -> None:
    a = _run("k1", [1.0, 1.0, 1.0], "2026-12-01T09:00:00Z")
    b = _run("k2", [2.0, 2.0, 2.0], "2026-12-01T09:05:00Z")
    earlier = _run("k1", [1.1, 1.1, 1.1], "2026-12-01T08:00:00Z")
    later = _run("k1", [3.0, 3.0, 3.0], "2026-12-01T10:00:00Z")
    other_soc = replace(earlier, id="x", fingerprint=replace(earlier.fingerprint, soc="310P3"))
    assert [r.id for r in history_of(a, b, [a, b, earlier, later, other_soc])] == [a.id, earlier.id]


def test_a_change_within_the_noise_between_runs_is_undecidable_and_beyond_it_is_called() -> None:
    rng = random.Random(5)
    base = noisy(rng, 100)
    slower = [x * 1.25 for x in base]
    assert compare(base, slower, 0.20).regression  # no noise between runs known: as before
    assert compare(base, slower, 0.20, 0.10).regression  # measured, within the threshold: as before
    undecided = compare(base, slower, 0.20, 0.30)
    assert undecided.verdict == "undecidable" and not undecided.regression
    assert "moved 30.0%, more than the threshold" in undecided.reason
    assert compare(base, list(base), 0.20, 0.30).verdict == "undecidable"  # no "same" either
    called = compare(base, [x * 1.40 for x in base], 0.20, 0.30)
    assert called.verdict == "slower" and called.regression
    assert "beyond the noise between runs of one build (30.0%)" in called.reason
    assert compare(base, [x * 0.6 for x in base], 0.20, 0.30).verdict == "faster"
    assert compare(base, [x * 1.05 for x in base], 0.20, 0.10).verdict == "same"


def store_runs(store: Path, *runs: Run) -> None:
    for r in runs:
        BenchStore(Store(store)).write(r)


def test_compare_reads_the_noise_between_runs_from_the_store_and_says_it(tmp_path: Path) -> None:
    base = [100.0, 100.5, 99.5, 100.2, 99.8]
    a = _run("k1", base, "2026-12-01T09:00:00Z")
    b = _run("k2", [x * 1.25 for x in base], "2026-12-01T09:10:00Z")
    store_runs(tmp_path, a, b)
    argv = ["bench", "compare", a.id, b.id, "--fail-over", "20%", "--store", str(tmp_path)]
    code, out, _ = run_cli([*argv, "--format", "json"], ENV)
    (shape,) = json.loads(out)["shapes"]
    assert code == 1 and shape["verdict"] == "slower"
    assert shape["between_runs"] == {"spread": None, "runs": 0, "builds": 0}
    code, out, _ = run_cli(argv, ENV)
    assert "between runs not measured (no build of this stack run twice on this shape)" in out

    store_runs(tmp_path, _run("k1", [x * 1.3 for x in base], "2026-12-01T08:00:00Z"))  # the baseline build again
    code, out, _ = run_cli([*argv, "--format", "json"], ENV)
    (shape,) = json.loads(out)["shapes"]
    assert code == 0 and shape["verdict"] == "undecidable" and not shape["regression"]
    assert shape["between_runs"]["runs"] == 2 and shape["between_runs"]["spread"] == pytest.approx(0.3, abs=1e-3)
    code, out, _ = run_cli(argv, ENV)
    assert code == 0 and "undecidable" in out and "between runs 30.0% (2 runs of 1 build)" in out.replace("\n", " ")
    store_runs(tmp_path, _run("k1", [x * 3 for x in base], "2026-12-01T09:20:00Z"))  # after B: not read
    code, out, _ = run_cli([*argv, "--format", "json"], ENV)
    (shape,) = json.loads(out)["shapes"]
    assert shape["between_runs"]["runs"] == 2 and shape["between_runs"]["spread"] == pytest.approx(0.3, abs=1e-3)


def test_the_launch_spread_said_is_of_what_is_judged(series: list[Run]) -> None:
    """A shape judged against its peer says the spread of duration / peer, the measure of its
    bars (issue 25: one measure per shape), not of the durations."""
    (r,) = [x for x in series[-3].records if x.input_shapes == "524288"]  # 21:02:01, the burst run
    ratios = [d / p for d, p in zip(r.durations, r.peers)]
    assert spread_of(r, True) == pytest.approx((max(ratios) - min(ratios)) / statistics.median(ratios))
    assert spread_of(r, False) == r.spread and abs(spread_of(r, True) - r.spread) > 0.01
