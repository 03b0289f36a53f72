"""The rollout's bench gate (``--fail-over PCT``) judged from what a node reported, pure: recorded
launches (a torch_npu profile of repeated launches, tests/data/msprof) as the node's baseline run,
and the new build's run as those launches slowed, sped up or left as they are. The verdicts are
``bench compare``'s own (bench.stats.compare_runs)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from ascenv.bench.fingerprint import Fingerprint
from ascenv.bench.readers import read_path
from ascenv.bench.records import Run
from ascenv.bench.store import new_run, run_data
from ascenv.fleet import rollout as r
from tests.benchcmd.test_readers import KD_EDITED, sample
from tests.fleet.test_rollout import GOOD, KEY, _report

NPU = Fingerprint(soc="910B4", cann="8.0.0", target="npu", metric_set="PipeUtilization")
FIVE = r.BenchGate(0.05)


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Run:
    records = read_path(sample(tmp_path_factory.mktemp("kd"), KD_EDITED)).records
    repeated = tuple(x for x in records if x.samples >= 3)  # FlashAttentionScore: 4 launches
    assert repeated
    return _run(repeated, "2026-12-01T09:00:00.000000Z")


def _run(records, created: str, fp: Fingerprint = NPU) -> Run:
    return new_run(
        op="add_custom", target="npu", tool="torch_npu", created=created, source="kernel_details.csv", files=(),
        skipped_rows=0, fingerprint=fp, records=records,
    )  # fmt: skip


def _scaled(base: Run, factor: float, fp: Fingerprint = NPU) -> Run:
    records = tuple(
        replace(
            x,
            durations=tuple(round(d * factor, 3) for d in x.durations),
            duration_us=x.duration_us * factor,
            duration_min_us=x.duration_min_us * factor,
            duration_max_us=x.duration_max_us * factor,
        )
        for x in base.records
    )
    return _run(records, "2026-12-04T21:00:00.000000Z", fp)


def _doc(base: Run, new: Run) -> dict:
    return {"baseline": run_data(base), "run": run_data(new)}


def test_a_regression_beyond_fail_over_fails_the_gate_naming_the_shape(baseline):
    gate = r.judge_bench(_doc(baseline, _scaled(baseline, 1.20)), FIVE)
    assert gate.name == "bench" and gate.status == r.FAIL
    assert f"slower than the baseline run {baseline.id} by more than 5%" in gate.detail
    assert "FlashAttentionScore" in gate.detail and "+20.0%" in gate.detail
    # the same change within a wider --fail-over passes
    assert r.judge_bench(_doc(baseline, _scaled(baseline, 1.20)), r.BenchGate(0.25)).status == r.PASS


@pytest.mark.parametrize("factor", [1.0, 1.01, 0.7])  # unchanged, within the noise, faster
def test_within_fail_over_or_faster_passes(baseline, factor):
    gate = r.judge_bench(_doc(baseline, _scaled(baseline, factor)), FIVE)
    assert gate.status == r.PASS, gate
    assert f"within 5% of the baseline run {baseline.id}" in gate.detail


def test_no_baseline_no_run_other_stacks_no_common_shape_are_not_checkable_and_fail_unless_allowed(baseline):
    other_stack = _scaled(baseline, 1.0, replace(NPU, cann="8.3.RC1"))
    other_shapes = _run(tuple(replace(x, input_shapes="1,1") for x in baseline.records), "2026-12-04T21:00:01.000Z")
    cases = {
        "no baseline": ({"detail": "no npu baseline of add_custom in the node's store"}, "no npu baseline"),
        "no NPU": (
            {"baseline": run_data(baseline), "detail": "the new build's NPU benchmark did not run: no NPU here"},
            "no NPU here",
        ),
        "other stack": (_doc(baseline, other_stack), "different stacks (cann: 8.0.0 vs 8.3.RC1)"),
        "no shape in common": (_doc(baseline, other_shapes), "no shape of run"),
        "damaged": ({"baseline": {"id": 1}, "run": run_data(baseline)}, "do not read"),
        "nothing reported": (None, "reported no bench runs"),
    }
    for what, (doc, words) in cases.items():
        required = r.judge_bench(doc, FIVE)
        assert required.status == r.FAIL and required.detail.startswith("required by --fail-over, not checkable: ")
        assert words in required.detail, what
        allowed = r.judge_bench(doc, r.BenchGate(0.05, allow_unchecked=True))
        assert allowed.status == r.NOT_CHECKABLE and words in allowed.detail, what


def test_the_gate_is_judged_only_when_asked_for_and_a_failed_one_fails_the_node(baseline):
    report = _report(GOOD)
    assert [g.name for g in r.judge_apply("n1", True, "", report, KEY).gates] == ["op-check", "test"]
    report["bench"] = _doc(baseline, _scaled(baseline, 1.5))
    failed = r.judge_apply("n1", True, "", report, KEY, bench=FIVE)
    assert failed.state == r.FAILED and failed.message.startswith("bench: slower than the baseline run")
    assert [g.name for g in failed.gates] == ["op-check", "test", "bench"]
    report["bench"] = {"detail": "no npu baseline of add_custom"}
    assert r.judge_apply("n1", True, "", report, KEY, bench=FIVE).state == r.FAILED
    held = r.judge_apply("n1", True, "", report, KEY, bench=r.BenchGate(0.05, True))
    assert held.state == r.VERIFIED
    assert held.gates[-1] == r.Gate("bench", r.NOT_CHECKABLE, "no npu baseline of add_custom")


def test_fail_over_is_read_as_bench_compare_reads_it():
    from ascenv import errors
    from ascenv.bench.stats import threshold

    assert threshold("5%") == 0.05 and threshold(" 2.5 ") == 0.025
    with pytest.raises(errors.UsageError):
        threshold("five")


def test_sweep_results_and_run_ids_are_kept_in_the_journal():
    j = r.new_journal("add_custom", KEY, ["customize"], [("n1",), ("n2",)])
    step = r.next_step(j)
    j = r.started(j, step, "0123456789ab")
    assert j.runs == ("0123456789ab",)
    report = {**_report(GOOD), "swept": ["ascenv-ffffffffffff-0"], "sweep_kept": ["ascenv-ffffffffffff-1: busy"]}
    done = r.after_wave(j, step, [r.judge_apply("n1", True, "", report, KEY)])
    node = done.node("n1")
    assert node.state == r.VERIFIED and node.swept == ("ascenv-ffffffffffff-0",)
    assert "earlier runs' folders kept: ascenv-ffffffffffff-1: busy" in node.message


def test_a_shape_undecidable_for_the_noise_between_runs_is_not_checkable(baseline):
    """The node's earlier runs of the baseline build moved 30 % between runs: a 20 % change
    within that is no regression and no pass either."""
    built = replace(NPU, build_key="k1")
    base = replace(baseline, fingerprint=built)
    again = replace(_scaled(base, 1.30, built), id="again", created="2026-12-01T08:00:00.000000Z")
    doc = {**_doc(base, _scaled(base, 1.20, replace(NPU, build_key="k2"))), "history": [run_data(again)]}
    gate = r.judge_bench(doc, r.BenchGate(0.10))
    assert gate.status == r.FAIL and "required by --fail-over, not checkable" in gate.detail
    assert "not decidable: between runs of one build the median moved 30.0%" in gate.detail
    assert r.judge_bench(doc, r.BenchGate(0.10, allow_unchecked=True)).status == r.NOT_CHECKABLE
    assert r.judge_bench({**doc, "history": []}, r.BenchGate(0.10)).status == r.FAIL  # +20 %: a regression
    assert r.judge_bench({**doc, "history": [{"id": 1}]}, r.BenchGate(0.10)).status == r.FAIL  # unreadable


def test_the_node_sends_its_earlier_runs_of_the_baseline_build_and_the_gate_reads_their_noise(baseline, tmp_path):
    """node_main.earlier_runs: the runs of the node's store that `bench compare` would read the
    noise between runs from (the baseline's stack up to the new run: the baseline's build run
    again, another build; not another stack, not a later run)."""
    from ascenv.bench.stats import compare_runs, history_of
    from ascenv.bench.store import SCHEMA, BenchStore, loads_run
    from ascenv.fleet import node_main
    from ascenv.store import Store

    built = replace(NPU, build_key="k1")
    base = replace(baseline, fingerprint=built)
    again = replace(_scaled(base, 1.30, built), id="again", created="2026-12-01T08:00:00.000000Z")
    other_build = replace(
        _scaled(base, 2.0, replace(NPU, build_key="k9")), id="other", created="2026-12-01T07:00:00.000000Z"
    )
    later = replace(_scaled(base, 1.5, built), id="later", created="2026-12-05T00:00:00.000000Z")
    other_cann = replace(
        _scaled(base, 1.6, replace(built, cann="8.5.0")), id="cann", created="2026-12-01T06:00:00.000000Z"
    )
    new = _scaled(base, 1.20, replace(NPU, build_key="k2"))
    bench = BenchStore(Store(tmp_path / "store"))
    for run in (base, again, other_build, later, other_cann):
        bench.write(run)
    sent = node_main.earlier_runs(bench, base, new)
    assert sorted(item["id"] for item in sent) == sorted([base.id, "again", "other"])
    doc = {**_doc(base, new), "history": sent}
    gate = r.judge_bench(doc, r.BenchGate(0.10, allow_unchecked=True))
    assert gate.status == r.NOT_CHECKABLE and "between runs of one build the median moved 30.0%" in gate.detail
    # a node whose store holds no second run of the baseline's build: the +20 % is a regression
    lone = BenchStore(Store(tmp_path / "lone"))
    lone.write(base)
    alone = node_main.earlier_runs(lone, base, new)
    assert [item["id"] for item in alone] == [base.id]  # the baseline itself, also sent as the baseline
    assert r.judge_bench({**doc, "history": alone}, FIVE).status == r.FAIL
    earlier = [loads_run(json.dumps({"schema": SCHEMA, "run": item}), "sent") for item in alone]
    shapes = compare_runs(base, new, 0.05, history_of(base, new, [base, *earlier])).shapes
    assert shapes and all(s.between.spread is None for s in shapes)  # one run is no noise between runs
