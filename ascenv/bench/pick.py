"""Which two runs ``bench compare`` compares, and why: a run named by id or build key is taken
as named; ``latest`` beside another run is the newest run of the same operator, target and stack
as that run (``fingerprint.differences`` finds none), so the defaults ``baseline latest`` compare
like with like. "Any target" made the default fail after a ``bench import`` (an NPU run) beside
a CPU baseline with "stacks differ: cpu vs npu" (issue 25). Two runs named outright that differ
are still refused by ``compare``; only the picking of ``latest`` changed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ascenv.bench.fingerprint import differences
from ascenv.bench.records import Run
from ascenv.bench.store import BenchStore, StoredRun


@dataclass(frozen=True)
class Picked:
    a: StoredRun
    b: StoredRun
    why_a: str  # "" where the run was named by id or build key
    why_b: str


def comparable(like: Run, run: Run) -> bool:
    return run.op == like.op and run.target == like.target and not differences(like.fingerprint, run.fingerprint)


def _why_named(name: str, stored: StoredRun) -> str:
    if name == "baseline":
        return f"the baseline of {stored.run.op} ({stored.run.target})"
    if name == "latest":
        return f"the newest run of {stored.run.op}"
    return ""


def _latest_like(bench: BenchStore, like: StoredRun, side: str) -> tuple[StoredRun, str]:
    run = like.run
    found = bench.newest_where(run.op, lambda r: comparable(run, r))
    assert found is not None, "the run itself is comparable with itself"
    newest = bench.newest_where(run.op, lambda r: True)
    why = f"the newest run of {run.op} with {side}'s target ({run.target}) and stack"
    if found.run.id == run.id:
        why += f": {side} itself, no other run matches"
    if newest is not None and newest.run.id != found.run.id:
        kept = newest.run
        what = "; ".join(str(d) for d in differences(run.fingerprint, kept.fingerprint))
        if not what and kept.target != run.target:  # a fingerprint that does not record its target
            what = f"target: {run.target} vs {kept.target}"
        why += f" (the newest, {kept.id}, differs: {what}; name it to compare it anyway)"
    return found, why


def pick(bench: BenchStore, a: str, b: str, op: Optional[str]) -> Picked:
    """Runs A and B by name (see the module docstring)."""
    if b == "latest" and a != "latest":
        first = bench.resolve(a, op)
        second, why_b = _latest_like(bench, first, "A")
        return Picked(first, second, _why_named(a, first), why_b)
    if a == "latest" and b != "latest":
        second = bench.resolve(b, op)
        first, why_a = _latest_like(bench, second, "B")
        return Picked(first, second, why_a, _why_named(b, second))
    first = bench.resolve(a, op)
    second = bench.resolve(b, op or first.run.op)
    return Picked(first, second, _why_named(a, first), _why_named(b, second))
