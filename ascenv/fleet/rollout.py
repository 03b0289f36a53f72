"""`ascenv fleet rollout`'s decisions. Pure: the waves, the journal and the moves of its states,
each node's gates judged from what its step reported, and what the controller does next.

The staged release follows the operator porting guide's recipe (one card, a test environment, a
small share of traffic; keep the previous operator package and roll back at once on a problem):
a canary wave, then waves that bring the fleet to the given shares, or the hosts of ``--limit``
groups. A failed gate on any node stops the rollout and rolls back every node of that wave and of
the earlier ones (``install --rollback``), or holds them for inspection; a node that is not
reached stops the rollout after its wave, the others staying as they are (each at the build and
verified, or untouched). The controller runs ``next_step`` until it says to stop, saving the
journal after each step, so a rerun of a killed controller continues from the journal."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Optional

from ascenv import errors
from ascenv.words import counted

# a node's states
PENDING = "pending"  # in a wave that has started, its step not (yet) reported
INSTALLED = "installed"  # the build is live, its gates not all judged
VERIFIED = "verified"  # the build is live and every gate passed (or could not be checked)
FAILED = "failed"  # the install or a gate failed
ROLLED_BACK = "rolled-back"  # the previous vendor is live again
UNREACHABLE = "unreachable"  # its step never reported (ssh failed, or the node went away)
STATES = (PENDING, INSTALLED, VERIFIED, FAILED, ROLLED_BACK, UNREACHABLE)
# the moves a step may make; anything else is a bug in the controller
_MOVES = {
    PENDING: {PENDING, INSTALLED, VERIFIED, FAILED, UNREACHABLE},
    UNREACHABLE: {PENDING, INSTALLED, VERIFIED, FAILED, UNREACHABLE, ROLLED_BACK},
    INSTALLED: {PENDING, INSTALLED, VERIFIED, FAILED, UNREACHABLE, ROLLED_BACK},
    VERIFIED: {VERIFIED, ROLLED_BACK},
    FAILED: {FAILED, ROLLED_BACK},
    ROLLED_BACK: {ROLLED_BACK},
}

# the rollout's phases: the first two are under way, the others end a run of the controller
ROLLING_OUT = "rolling-out"
ROLLING_BACK = "rolling-back"
DONE = "done"  # every node verified
STOPPED = "stopped"  # a node was not reached: a rerun continues
ROLLBACK_STOPPED = "rollback-stopped"  # a node could not be rolled back: a rerun continues the rollback
ROLLED_BACK_ALL = "rolled-back"  # a gate failed and every node that got the build was rolled back
HELD = "held"  # a gate failed, --no-rollback: the nodes are left as they are
UNDER_WAY = (ROLLING_OUT, ROLLING_BACK)

PASS, FAIL, NOT_CHECKABLE = "pass", "fail", "not-checkable"
STALE_CACHE = "ASC-VENDOR-STALE-CACHE"


@dataclass(frozen=True)
class Gate:
    name: str  # op-check, test, bench
    status: str  # pass, fail, not-checkable
    detail: str = ""


@dataclass(frozen=True)
class NodeState:
    host: str
    wave: int
    state: str = PENDING
    build: Optional[str] = None  # the build key live on the node as last reported (None: another, or none)
    message: str = ""
    gates: tuple[Gate, ...] = ()
    swept: tuple[str, ...] = ()  # earlier runs' temporary folders its steps removed from the node


@dataclass(frozen=True)
class Journal:
    op: str
    key: str
    vendors: tuple[str, ...]
    waves: tuple[tuple[str, ...], ...]
    nodes: tuple[NodeState, ...]
    phase: str = ROLLING_OUT
    wave: int = 0  # the wave under way, or the last one run
    schema: int = 1
    # the id of each playbook run (each step) of this rollout, saved as it starts: a rerun ends
    # what is left of the earlier ones and has the nodes remove the folders they left
    runs: tuple[str, ...] = ()

    def node(self, host: str) -> NodeState:
        for node in self.nodes:
            if node.host == host:
                return node
        raise ValueError(f"{host} is not a node of the rollout")

    def in_wave(self, wave: int) -> tuple[NodeState, ...]:
        return tuple(n for n in self.nodes if n.wave == wave)


@dataclass(frozen=True)
class Step:
    kind: str  # "wave", "rollback", or "stop"
    hosts: tuple[str, ...] = ()
    wave: int = 0


@dataclass(frozen=True)
class Outcome:
    """What one node's step came to, judged (``judge_apply``, ``judge_rollback``)."""

    host: str
    state: str
    build: Optional[str] = None
    message: str = ""
    gates: tuple[Gate, ...] = ()
    swept: tuple[str, ...] = ()


# --- the waves ---------------------------------------------------------------------------------


def parse_shares(text: str) -> tuple[int, ...]:
    """``25%,50%,100%``: the share of the fleet each wave brings it to, rising, the last 100 %."""
    shares = []
    for part in text.split(","):
        number = part.strip().removesuffix("%")
        if not number.isdigit() or not 0 < int(number) <= 100:
            raise errors.UsageError(
                f"--waves {text}: {part.strip()!r} is not a share of the fleet",
                hint="give rising percentages ending at 100%, e.g. --waves 25%,50%,100%",
            )
        shares.append(int(number))
    if shares != sorted(set(shares)) or shares[-1] != 100:
        raise errors.UsageError(
            f"--waves {text}: the shares must rise and end at 100% (each wave brings the fleet to its share)",
            hint="e.g. --waves 25%,50%,100%",
        )
    return tuple(shares)


def plan_waves(
    hosts: Sequence[str],
    canary: int,
    shares: Sequence[int] = (100,),
    groups: Optional[Sequence[Sequence[str]]] = None,
) -> tuple[tuple[str, ...], ...]:
    """The canary's first ``canary`` hosts, then either the hosts of each group in turn (hosts
    already in a wave are not repeated) or waves bringing the fleet to each share (rounded up)."""
    if canary < 0:
        raise errors.UsageError(f"--canary {canary}: expected 0 or more nodes")
    order = list(dict.fromkeys(h for g in groups for h in g)) if groups is not None else list(dict.fromkeys(hosts))
    if not order:
        raise errors.UsageError("no host to roll out to", hint="check -i INVENTORY and --limit")
    waves: list[tuple[str, ...]] = [tuple(order[:canary])]
    done = set(waves[0])
    if groups is not None:
        for group in groups:
            waves.append(tuple(h for h in dict.fromkeys(group) if h not in done))
            done.update(group)
    else:
        reached = len(waves[0])
        for share in shares:
            cut = max(math.ceil(len(order) * share / 100), reached)
            waves.append(tuple(order[reached:cut]))
            reached = cut
    return tuple(w for w in waves if w)


def inventory_groups(doc: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """Every group of ``ansible-inventory --list``'s JSON with its hosts, children's included, in
    the inventory's order ("all" is every host)."""

    def hosts_of(name: str, seen: frozenset[str]) -> list[str]:
        group = doc.get(name)
        if not isinstance(group, Mapping) or name in seen:
            return []
        found = [h for h in group.get("hosts", ()) if isinstance(h, str)]
        for child in group.get("children", ()):
            found += hosts_of(child, seen | {name})
        return list(dict.fromkeys(found))

    names = [n for n in doc if n != "_meta"]
    return {name: tuple(hosts_of(name, frozenset())) for name in names}


def limit_groups(groups: Mapping[str, Sequence[str]], limits: Sequence[str]) -> list[tuple[str, ...]]:
    """Each ``--limit`` (a group or a host of the inventory) as its hosts."""
    every = set(groups.get("all", ()))
    out = []
    for limit in limits:
        if limit in groups:
            out.append(tuple(groups[limit]))
        elif limit in every:
            out.append((limit,))
        else:
            raise errors.UsageError(
                f"--limit {limit} is neither a group nor a host of the inventory",
                hint="a rollout takes group or host names, one wave each: ansible-inventory -i INVENTORY --graph",
            )
    return out


# --- the journal -------------------------------------------------------------------------------


def new_journal(op: str, key: str, vendors: Sequence[str], waves: Sequence[Sequence[str]]) -> Journal:
    nodes = tuple(NodeState(host, i) for i, wave in enumerate(waves) for host in wave)
    return Journal(op, key, tuple(vendors), tuple(tuple(w) for w in waves), nodes)


def moved(journal: Journal, outcome: Outcome) -> Journal:
    """The journal with one node moved to its outcome; a move the state machine has not is a bug."""
    node = journal.node(outcome.host)
    if outcome.state not in _MOVES[node.state]:
        raise ValueError(f"{node.host}: {node.state} -> {outcome.state} is not a move of the rollout")
    swept = tuple(dict.fromkeys(node.swept + outcome.swept))
    new = replace(
        node, state=outcome.state, build=outcome.build, message=outcome.message, gates=outcome.gates, swept=swept
    )
    return replace(journal, nodes=tuple(new if n.host == node.host else n for n in journal.nodes))


def resumed(journal: Journal, op: str, key: str) -> Journal:
    """The journal of an earlier run of the same rollout, set to continue where it stopped."""
    if (journal.op, journal.key) != (op, key):
        raise errors.UsageError(
            f"the journal is of the rollout of {journal.op} build {journal.key[:12]}, not {op} {key[:12]}",
            hint="pass --journal FILE of its own to each rollout",
        )
    restart = {STOPPED: ROLLING_OUT, ROLLBACK_STOPPED: ROLLING_BACK}
    return replace(journal, phase=restart.get(journal.phase, journal.phase))


def next_step(journal: Journal) -> Step:
    """What the controller does now."""
    if journal.phase == ROLLING_BACK:
        hosts = tuple(n.host for n in journal.nodes if n.wave <= journal.wave and _may_hold_build(n, journal.key))
        return Step("rollback", hosts, journal.wave) if hosts else Step("stop")
    if journal.phase != ROLLING_OUT:
        return Step("stop")
    for wave in range(journal.wave, len(journal.waves)):
        hosts = tuple(n.host for n in journal.in_wave(wave) if n.state != VERIFIED)
        if hosts:
            return Step("wave", hosts, wave)
    return Step("stop")


def _may_hold_build(node: NodeState, key: str) -> bool:
    """A node a rollback must visit: it reported the build live, or may have got it unseen."""
    return node.state in (INSTALLED, VERIFIED, FAILED, PENDING, UNREACHABLE) and (
        node.build == key or node.state in (PENDING, UNREACHABLE)
    )


def started(journal: Journal, step: Step, run_id: str = "") -> Journal:
    """The journal as a step starts (saved before the nodes are asked), with the step's run id."""
    if run_id:
        journal = replace(journal, runs=(*journal.runs, run_id))
    if step.kind == "wave":
        journal = replace(journal, wave=step.wave)
        for host in step.hosts:
            node = journal.node(host)
            journal = moved(journal, Outcome(host, PENDING, node.build, "", ()))
    return journal


def after_wave(journal: Journal, step: Step, outcomes: Sequence[Outcome], *, rollback: bool = True) -> Journal:
    """The journal after a wave: a failed node starts the rollback (or holds), an unreached one
    stops the rollout, a wave all verified lets the next one start (or ends it)."""
    for outcome in outcomes:
        journal = moved(journal, outcome)
    states = {journal.node(h).state for h in step.hosts}
    if FAILED in states:
        return replace(journal, phase=ROLLING_BACK if rollback else HELD)
    if states - {VERIFIED}:
        return replace(journal, phase=STOPPED)
    last = step.wave + 1 >= len(journal.waves)
    return replace(journal, phase=DONE if last else ROLLING_OUT, wave=step.wave if last else step.wave + 1)


def after_rollback(journal: Journal, step: Step, outcomes: Sequence[Outcome]) -> Journal:
    for outcome in outcomes:
        node = journal.node(outcome.host)
        if outcome.state == ROLLED_BACK:  # why it failed, and its gates, stay on record
            said = "; ".join(m for m in (node.message, outcome.message) if m)
            journal = moved(journal, replace(outcome, message=said, gates=node.gates))
        else:  # not reached, or the rollback failed: the node keeps its state, the message says why
            journal = moved(journal, replace(outcome, state=node.state, build=node.build, gates=node.gates))
    left = [h for h in step.hosts if journal.node(h).state != ROLLED_BACK]
    return replace(journal, phase=ROLLBACK_STOPPED if left else ROLLED_BACK_ALL)


def exit_code(journal: Journal) -> int:
    if journal.phase in (STOPPED, ROLLBACK_STOPPED):
        return errors.EXIT_NODES_FAILED
    return errors.EXIT_OK if journal.phase == DONE else errors.EXIT_FINDINGS


def stop_reason(journal: Journal) -> str:
    """Why a run stopped with nodes left to finish (exit 11): the nodes, and what each says."""
    if journal.phase == ROLLBACK_STOPPED:
        left = [n for n in journal.nodes if n.wave <= journal.wave and _may_hold_build(n, journal.key)]
        what = "the rollback stopped: still to roll back"
    else:
        left = [n for n in journal.nodes if n.wave <= journal.wave and n.state in (UNREACHABLE, PENDING)]
        what = "the rollout stopped after its wave: not reached"
    named = "; ".join(f"{n.host} ({n.message or n.state})" for n in left[:8])
    more = f" and {len(left) - 8} more" if len(left) > 8 else ""
    return f"{what}: {named}{more}"


# --- a node's report, judged --------------------------------------------------------------------


@dataclass(frozen=True)
class BenchGate:
    """``--fail-over PCT``: the bench gate, asked for (a fraction: 0.05 for 5 %)."""

    fail_over: float
    allow_unchecked: bool = False  # --allow-unchecked-bench: not checkable is said, not a failure


def judge_apply(
    host: str,
    reached: bool,
    message: str,
    report: Optional[Mapping[str, Any]],
    key: str,
    require_test: bool = False,
    bench: Optional[BenchGate] = None,
) -> Outcome:
    """A node's apply step: ``reached`` False when its step never ran or never reported. A test
    gate the node cannot run is reported as such, and fails the node only when ``require_test``
    (--gate test: asked for, so never taken as passed). The bench gate is judged only when asked
    for (``bench``), and then one that cannot be checked fails unless ``allow_unchecked``."""
    if not reached:
        return Outcome(host, UNREACHABLE, None, message or "unreachable")
    if report is None:
        return Outcome(host, FAILED, None, message or "its step reported nothing")
    live = report.get("live_after") or {}
    build = key if live and all(v == key for v in live.values()) else None
    swept, kept = _swept(report)
    if report.get("error"):
        back = "; the vendor from before is back" if report.get("restored") else ""
        return Outcome(host, FAILED, build, f"install failed: {report['error']}{back}{kept}", swept=swept)
    gates = [judge_op_check(report.get("op_check"), report.get("vendor_paths") or (), report.get("cleaned") or ())]
    test = report.get("test") or {}
    status, detail = str(test.get("status", NOT_CHECKABLE)), str(test.get("detail", ""))
    if require_test and status == NOT_CHECKABLE:
        status, detail = FAIL, f"required by --gate test, not checkable: {detail}"
    gates.append(Gate("test", status, detail))
    if bench is not None:
        gates.append(judge_bench(report.get("bench"), bench))
    if build != key:
        said = "the install reported success but the build is not live"
        return Outcome(host, FAILED, build, said + kept, tuple(gates), swept)
    failed = [g for g in gates if g.status == FAIL]
    if failed:
        said = "; ".join(f"{g.name}: {g.detail}" for g in failed)
        return Outcome(host, FAILED, build, said + kept, tuple(gates), swept)
    return Outcome(host, VERIFIED, build, kept.removeprefix("; "), tuple(gates), swept)


def _swept(report: Mapping[str, Any]) -> tuple[tuple[str, ...], str]:
    """The earlier runs' folders the node removed, and (as a message tail) the ones it kept, why."""
    swept = tuple(str(s) for s in report.get("swept") or () if isinstance(s, str))
    kept = [str(k) for k in report.get("sweep_kept") or ()]
    return swept, (f"; earlier runs' folders kept: {'; '.join(kept)}" if kept else "")


def judge_rollback(host: str, reached: bool, message: str, report: Optional[Mapping[str, Any]], key: str) -> Outcome:
    if not reached or report is None:
        return Outcome(host, UNREACHABLE, None, f"not rolled back: {message or 'unreachable'}")
    live = report.get("live_after") or {}
    swept, kept = _swept(report)
    if report.get("error") or any(v == key for v in live.values()):
        said = f"not rolled back: {report.get('error') or 'the build is still live'}"
        return Outcome(host, FAILED, key, said + kept, swept=swept)
    restored = "previous vendor restored" if report.get("rolled_back") else "the build was not live on it"
    return Outcome(host, ROLLED_BACK, None, restored + kept, swept=swept)


def judge_op_check(doc: Optional[Mapping[str, Any]], vendor_paths: Sequence[str], cleaned: Sequence[str]) -> Gate:
    """``op check``'s JSON on the node: each OpType of the new vendors resolves to them (the first
    vendor in CANN's search order that provides it is theirs), no error finding, no kernel cache
    older than the install (ASC-VENDOR-STALE-CACHE, unless it was cleaned with its command)."""
    if not doc or "vendors" not in doc:
        return Gate("op-check", FAIL, f"op check did not run: {(doc or {}).get('error', 'no report')}")
    vendors = [v for v in doc.get("vendors", []) if isinstance(v, Mapping)]
    problems = []
    for path in vendor_paths:
        ours = [v for v in vendors if v.get("path") == path]
        if not ours:
            problems.append(f"{path} is not among the vendors CANN searches")
            continue
        for op in ours[0].get("op_types", []):
            winner = next(v for v in vendors if op in v.get("op_types", []))
            if winner.get("path") != path:
                problems.append(f"{op} resolves to vendor {winner.get('name')} ({winner.get('path')}), not {path}")
    for found in doc.get("findings", []):
        if found.get("severity") == "error":
            problems.append(f"{found.get('id')}: {found.get('title')}")
        elif found.get("id") == STALE_CACHE:
            problems.append(f"{STALE_CACHE}: {found.get('title')}; run {found.get('fix')} (or pass --clean-cache)")
    if problems:
        return Gate("op-check", FAIL, "; ".join(problems))
    detail = "OpTypes resolve to the new vendor"
    if doc.get("set_env_assumed"):
        detail += " with its bin/set_env.bash sourced (the node's ASCEND_CUSTOM_OPP_PATH does not name it)"
    if cleaned:
        detail += f"; stale kernel caches cleaned: {'; '.join(cleaned)}"
    return Gate("op-check", PASS, detail)


def judge_bench(doc: Optional[Mapping[str, Any]], gate: BenchGate) -> Gate:
    """The bench gate: the node's run of the new build against the node's baseline, compared as
    ``bench compare`` does (``bench.stats.compare_runs``, the same verdicts): a shape slower
    beyond --fail-over fails; every shape same, faster or inconclusive passes. No baseline, no
    run (no NPU on the node), runs of different stacks, no shape in common, or a shape
    ``undecidable`` (the noise between runs wider than --fail-over): not checkable,
    which fails the gate unless ``allow_unchecked`` (the user asked for it: never taken as passed)."""
    status, detail = _bench_verdict(doc or {}, gate.fail_over)
    if status == NOT_CHECKABLE and not gate.allow_unchecked:
        return Gate("bench", FAIL, f"required by --fail-over, not checkable: {detail}")
    return Gate("bench", status, detail)


def _bench_verdict(doc: Mapping[str, Any], fail_over: float) -> tuple[str, str]:
    from ascenv.bench.stats import compare_runs, history_of
    from ascenv.bench.store import SCHEMA, loads_run

    if not doc.get("baseline") or not doc.get("run"):
        return NOT_CHECKABLE, str(doc.get("detail") or "the node reported no bench runs")
    try:
        baseline = loads_run(json.dumps({"schema": SCHEMA, "run": doc["baseline"]}), "the node's baseline run")
        new = loads_run(json.dumps({"schema": SCHEMA, "run": doc["run"]}), "the node's run of the build")
        # the node sends its stored runs of the baseline's stack (node_main.earlier_runs): the noise
        # between runs of one build is read from them
        earlier = [
            loads_run(json.dumps({"schema": SCHEMA, "run": item}), f"the node's earlier run {i + 1}")
            for i, item in enumerate(doc.get("history") or ())
        ]
    except (errors.AscenvError, TypeError, ValueError) as exc:
        return NOT_CHECKABLE, f"the node's bench runs do not read: {exc}"
    result = compare_runs(baseline, new, fail_over, history_of(baseline, new, [baseline, *earlier]))
    against = f"baseline run {baseline.id}"
    if result.differences:
        said = "; ".join(str(d) for d in result.differences)
        return NOT_CHECKABLE, f"the run and the {against} are of different stacks ({said})"
    if not result.shapes:
        return NOT_CHECKABLE, f"no shape of run {new.id} was measured in the {against}"
    limit = f"{fail_over:.1%}".replace(".0%", "%")
    if result.regressions:
        slower = "; ".join(
            f"{s.b.op} {s.b.input_shapes or ''} {s.change.change:+.1%}".replace("  ", " ") for s in result.regressions
        )
        return FAIL, f"slower than the {against} by more than {limit}: {slower}"
    undecided = [s for s in result.shapes if s.change.verdict == "undecidable"]
    if undecided:  # the noise between runs is wider than the threshold: no call either way
        said = "; ".join(f"{s.b.op} {s.b.input_shapes or ''} {s.change.reason}".replace("  ", " ") for s in undecided)
        return NOT_CHECKABLE, f"against the {against}: {said}"
    unsure = sum(1 for s in result.shapes if s.change.verdict == "inconclusive")
    tail = f" ({unsure} inconclusive)" if unsure else ""
    return PASS, f"{counted(len(result.shapes), 'shape')} within {limit} of the {against}{tail}"
