"""`fleet rollout`'s pure core (ascenv.fleet.rollout): waves, the journal's state machine, the
gates judged from a node's report, and what the controller does next. No node is asked."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ascenv import errors, serde
from ascenv.fleet import journal as journal_file
from ascenv.fleet import rollout as r

KEY = "b" * 64
OLD = "a" * 64
PATH = "/opt/opp/vendors/customize"


def _op_check(*vendors: tuple[str, str, list[str]], findings: tuple[dict, ...] = ()) -> dict:
    """op check's JSON with these (name, path, op types) in CANN's search order."""
    return {
        "vendors": [{"name": n, "path": p, "op_types": ops} for n, p, ops in vendors],
        "findings": list(findings),
        "set_env_assumed": [],
    }


def _report(op_check: dict, live: str = KEY, test: str = "not-checkable", error: str = "") -> dict:
    report = {"live_after": {"customize": live}, "vendor_paths": [PATH], "op_check": op_check}
    report["test"] = {"status": test, "detail": "why"}
    if error:
        report["error"] = error
    return report


GOOD = _op_check(("customize", PATH, ["AddCustom"]))
SHADOWED = _op_check(("other", "/opt/shadow/vendors/other", ["AddCustom"]), ("customize", PATH, ["AddCustom"]))


# --- waves --------------------------------------------------------------------------------------


def test_canary_then_shares_of_the_whole_fleet_rounded_up():
    hosts = [f"n{i}" for i in range(1, 11)]
    assert r.plan_waves(hosts, 1, (25, 50, 100)) == (("n1",), ("n2", "n3"), ("n4", "n5"), tuple(hosts[5:]))
    # a share already reached by the canary makes no empty wave
    assert r.plan_waves(hosts[:4], 2, (25, 100)) == (("n1", "n2"), ("n3", "n4"))
    assert r.plan_waves(hosts[:3], 0) == (("n1", "n2", "n3"),)


def test_limit_groups_are_waves_in_turn_without_repeating_a_host():
    waves = r.plan_waves((), 1, groups=[("a", "b"), ("b", "c"), ("c",)])
    assert waves == (("a",), ("b",), ("c",))


@given(st.integers(1, 40), st.integers(0, 45), st.lists(st.integers(1, 99), max_size=4))
def test_every_host_is_in_exactly_one_wave_in_inventory_order(n, canary, shares):
    hosts = [f"h{i}" for i in range(n)]
    waves = r.plan_waves(hosts, canary, (*sorted(set(shares)), 100))
    assert [h for w in waves for h in w] == hosts
    assert all(waves) and (canary == 0 or waves[0] == tuple(hosts[: min(canary, n)]))


@pytest.mark.parametrize("text", ["50%,25%,100%", "25%,50%", "0%,100%", "abc", "25%,,100%", "150%"])
def test_shares_that_do_not_rise_to_100_are_usage_errors(text):
    with pytest.raises(errors.UsageError, match="--waves"):
        r.parse_shares(text)


def test_inventory_groups_take_children_and_limits_take_groups_or_hosts():
    doc = {
        "_meta": {"hostvars": {}},
        "all": {"children": ["ungrouped", "ascend"]},
        "ascend": {"children": ["rack1"], "hosts": ["n1"]},
        "rack1": {"hosts": ["n2", "n3"]},
        "ungrouped": {"hosts": ["n4"]},
    }
    groups = r.inventory_groups(doc)
    assert groups["all"] == ("n4", "n1", "n2", "n3") and groups["ascend"] == ("n1", "n2", "n3")
    assert r.limit_groups(groups, ["rack1", "n4"]) == [("n2", "n3"), ("n4",)]
    with pytest.raises(errors.UsageError, match="neither a group nor a host"):
        r.limit_groups(groups, ["rack*"])


# --- gates --------------------------------------------------------------------------------------


def test_op_check_passes_when_each_optype_resolves_to_the_new_vendor():
    assert r.judge_op_check(GOOD, [PATH], ()).status == r.PASS


def test_a_vendor_earlier_in_the_search_order_fails_the_gate_naming_it():
    gate = r.judge_op_check(SHADOWED, [PATH], ())
    assert gate.status == r.FAIL and "AddCustom resolves to vendor other (/opt/shadow/vendors/other)" in gate.detail


@pytest.mark.parametrize(
    "doc, words",
    [
        (_op_check(("customize", "/elsewhere", ["AddCustom"])), "is not among the vendors CANN searches"),
        (
            _op_check(("customize", PATH, ["AddCustom"]), findings=({"id": "X", "severity": "error", "title": "t"},)),
            "X: t",
        ),
        (
            _op_check(
                ("customize", PATH, ["A"]),
                findings=(
                    {
                        "id": r.STALE_CACHE,
                        "severity": "warn",
                        "title": "old",
                        "fix": "ascenv clean-cache --stale --yes",
                    },
                ),
            ),
            "--clean-cache",
        ),
        ({"error": "op check exited 3"}, "op check did not run: op check exited 3"),
        (None, "op check did not run"),
    ],
    ids=["not-searched", "error-finding", "stale-cache", "op-check-failed", "no-report"],
)
def test_op_check_gate_failures(doc, words):
    gate = r.judge_op_check(doc, [PATH], ())
    assert gate.status == r.FAIL and words in gate.detail


def test_a_node_is_verified_only_with_the_build_live_and_no_failed_gate():
    assert r.judge_apply("n", True, "", _report(GOOD), KEY).state == r.VERIFIED
    failed = r.judge_apply("n", True, "", _report(SHADOWED), KEY)
    assert failed.state == r.FAILED and failed.build == KEY and "op-check:" in failed.message
    assert r.judge_apply("n", True, "", _report(GOOD, live=OLD), KEY).state == r.FAILED
    assert r.judge_apply("n", True, "", _report(GOOD, test="fail"), KEY).state == r.FAILED
    broken = r.judge_apply("n", True, "", _report(GOOD, live=OLD, error="installer exited 1"), KEY)
    assert broken.state == r.FAILED and broken.build is None and "installer exited 1" in broken.message
    assert r.judge_apply("n", False, "ssh: refused", None, KEY).state == r.UNREACHABLE
    assert r.judge_apply("n", True, "exit 1: boom", None, KEY).state == r.FAILED


def test_a_test_gate_that_cannot_run_is_reported_and_fails_only_when_required():
    verified = r.judge_apply("n", True, "", _report(GOOD), KEY)
    assert verified.state == r.VERIFIED and verified.gates[1] == r.Gate("test", r.NOT_CHECKABLE, "why")
    required = r.judge_apply("n", True, "", _report(GOOD), KEY, require_test=True)
    assert required.state == r.FAILED and "required by --gate test, not checkable: why" in required.message


# --- the journal and the next step --------------------------------------------------------------


def _run_wave(journal, outcomes, **kw):
    step = r.next_step(journal)
    assert step.kind == "wave"
    journal = r.started(journal, step)
    return r.after_wave(
        journal,
        step,
        [r.Outcome(h, s, KEY if s in (r.VERIFIED, r.FAILED) else None) for h, s in outcomes.items()],
        **kw,
    ), step


def test_a_good_rollout_goes_wave_by_wave_to_done():
    journal = r.new_journal("add_custom", KEY, ["customize"], [("n1",), ("n2", "n3")])
    journal, step = _run_wave(journal, {"n1": r.VERIFIED})
    assert step.hosts == ("n1",) and journal.phase == r.ROLLING_OUT and journal.wave == 1
    journal, step = _run_wave(journal, {"n2": r.VERIFIED, "n3": r.VERIFIED})
    assert step.hosts == ("n2", "n3") and journal.phase == r.DONE and r.exit_code(journal) == 0
    assert r.next_step(journal).kind == "stop"


def test_a_failed_gate_rolls_back_this_wave_and_the_earlier_ones_not_the_later():
    journal = r.new_journal("add_custom", KEY, ["customize"], [("n1",), ("n2", "n3"), ("n4",)])
    journal, _ = _run_wave(journal, {"n1": r.VERIFIED})
    journal, _ = _run_wave(journal, {"n2": r.VERIFIED, "n3": r.FAILED})
    assert journal.phase == r.ROLLING_BACK
    journal = r.moved(journal, r.Outcome("n3", r.FAILED, KEY, "op-check: shadowed", (r.Gate("op-check", r.FAIL),)))
    step = r.next_step(journal)
    assert step == r.Step("rollback", ("n1", "n2", "n3"), 1)
    journal = r.after_rollback(journal, step, [r.Outcome(h, r.ROLLED_BACK, None, "restored") for h in step.hosts])
    assert journal.phase == r.ROLLED_BACK_ALL and r.exit_code(journal) == errors.EXIT_FINDINGS
    # why it failed stays on record with the rollback
    assert journal.node("n3").message == "op-check: shadowed; restored" and journal.node("n3").gates
    assert journal.node("n1").message == "restored"
    assert journal.node("n1").build is None
    assert journal.node("n4").state == r.PENDING and r.next_step(journal).kind == "stop"


def test_no_rollback_holds_and_a_rollback_not_reached_stops_for_a_rerun():
    journal = r.new_journal("add_custom", KEY, ["customize"], [("n1",), ("n2",)])
    held, _ = _run_wave(journal, {"n1": r.FAILED}, rollback=False)
    assert held.phase == r.HELD and r.next_step(held).kind == "stop" and r.exit_code(held) == 1
    journal, _ = _run_wave(journal, {"n1": r.FAILED})
    step = r.next_step(journal)
    journal = r.after_rollback(journal, step, [r.Outcome("n1", r.UNREACHABLE, None, "not rolled back: down")])
    assert journal.phase == r.ROLLBACK_STOPPED and r.exit_code(journal) == errors.EXIT_NODES_FAILED
    node = journal.node("n1")
    assert (node.state, node.build, node.message) == (r.FAILED, KEY, "not rolled back: down")
    again = r.resumed(journal, "add_custom", KEY)
    assert r.next_step(again) == r.Step("rollback", ("n1",), 0)
    assert r.stop_reason(journal) == "the rollback stopped: still to roll back: n1 (not rolled back: down)"


def test_an_unreached_node_stops_after_its_wave_and_a_rerun_retries_only_it():
    journal = r.new_journal("add_custom", KEY, ["customize"], [("n1", "n2"), ("n3",)])
    journal, _ = _run_wave(journal, {"n1": r.VERIFIED, "n2": r.UNREACHABLE})
    assert journal.phase == r.STOPPED and r.exit_code(journal) == errors.EXIT_NODES_FAILED
    assert r.next_step(journal).kind == "stop"
    again = r.resumed(journal, "add_custom", KEY)
    assert r.next_step(again) == r.Step("wave", ("n2",), 0)
    assert r.stop_reason(journal) == "the rollout stopped after its wave: not reached: n2 (unreachable)"


def test_a_controller_killed_mid_wave_leaves_pending_nodes_a_rerun_takes_up():
    journal = r.new_journal("add_custom", KEY, ["customize"], [("n1",), ("n2", "n3")])
    journal, _ = _run_wave(journal, {"n1": r.VERIFIED})
    journal = r.started(journal, r.next_step(journal))  # saved; then the controller was killed
    assert [n.state for n in journal.in_wave(1)] == [r.PENDING, r.PENDING]
    assert r.next_step(r.resumed(journal, "add_custom", KEY)) == r.Step("wave", ("n2", "n3"), 1)
    # a rollback killed midway: the nodes it did not finish are visited again, none twice
    rolling = r.after_wave(
        r.started(journal, r.Step("wave", ("n2", "n3"), 1)),
        r.Step("wave", ("n2", "n3"), 1),
        [r.Outcome("n2", r.VERIFIED, KEY), r.Outcome("n3", r.FAILED, KEY)],
    )
    partly = r.moved(rolling, r.Outcome("n1", r.ROLLED_BACK))
    assert r.next_step(partly) == r.Step("rollback", ("n2", "n3"), 1)


def test_moves_outside_the_state_machine_are_refused():
    journal = r.new_journal("add_custom", KEY, ["customize"], [("n1",)])
    rolled = r.moved(journal, r.Outcome("n1", r.UNREACHABLE))
    rolled = r.moved(rolled, r.Outcome("n1", r.ROLLED_BACK))
    for state in (r.VERIFIED, r.PENDING, r.INSTALLED):
        with pytest.raises(ValueError, match="not a move"):
            r.moved(rolled, r.Outcome("n1", state))


def test_another_builds_journal_is_not_resumed():
    journal = r.new_journal("add_custom", KEY, ["customize"], [("n1",)])
    with pytest.raises(errors.UsageError, match="not add_custom aaaaaaaaaaaa"):
        r.resumed(journal, "add_custom", OLD)


def test_the_journal_file_round_trips_and_a_damaged_one_is_exit_2(tmp_path):
    journal = r.new_journal("add_custom", KEY, ["customize"], [("n1",), ("n2",)])
    journal, _ = _run_wave(journal, {"n1": r.VERIFIED})
    path = tmp_path / "j" / "journal.json"
    journal_file.save(path, journal)
    assert journal_file.load(path, "journal.json") == journal
    assert [p.name for p in path.parent.iterdir()] == ["journal.json"]  # no temp file left
    assert journal_file.load(tmp_path / "none.json", "none.json") is None
    data = serde.to_data(journal)
    for damaged in ("{", json.dumps({**data, "nodes": "x"}), json.dumps({**data, "schema": 2})):
        path.write_text(damaged)
        with pytest.raises(errors.InputError):
            journal_file.load(path, "journal.json")
