"""Is B faster or slower than A, given the spread of their launches?

The change is ``median(B) / median(A) - 1``. Its interval is a percentile bootstrap (Efron &
Tibshirani, *An Introduction to the Bootstrap*, 1993, ch. 13): both sides are resampled with
replacement ``ROUNDS`` times, the change is computed for each pair of resamples, and the
2.5th and 97.5th percentiles bound it. A resample's median is drawn directly, not by drawing n
launches and sorting them (O(1000 n log n): 100,000 launches took minutes): the resampled
launches are ``sorted[floor(n U)]`` for n uniform U, so their m-th smallest is
``sorted[floor(n U_(m))]``, and the m-th smallest of n uniforms is Beta(m, n - m + 1)
distributed (David & Nagaraja, *Order Statistics*, 2003, sec. 2.2; the exact bootstrap
distribution of the median is Maritz & Jarrett, JASA 73:194, 1978). One sort per side and two
Beta draws per round: the same distribution as element-wise resampling, for any n.

The median, not the mean, because a launch that meets
a cold cache or a preempted core is an outlier, not a trend; the bootstrap, because launch
times are not normal (they have a floor and a long right tail). The random generator is seeded
from the data, so the same two runs always give the same verdict.

Verdicts:

- ``inconclusive``: fewer than ``MIN_SAMPLES`` launches on a side (one msprof launch proves
  nothing: two single-launch collections of one unchanged kernel came out 7 to 15 % apart),
  or an interval that reaches beyond the threshold without a call either way (too noisy);
- ``faster`` / ``slower``: the whole interval is below / above zero *and* the change is beyond
  ``±threshold``;
- ``same``: the interval lies within ``±threshold`` (even where it leaves out zero);
- ``undecidable``: the noise between runs is wider than the threshold (below) and the change
  is within it: no call can be made either way, and the bench gate of ``fleet rollout`` takes it
  as not checkable.

The threshold takes part in the call, as ``asv compare --factor`` reports only changes that are
both significant and beyond the factor (https://asv.readthedocs.io/en/stable/commands.html):
launches within one run share the machine's state of those seconds, so the interval of one
run's samples is narrower than the drift between two runs (a CPU checker's time moved 5 to
15 % between runs seconds apart on a shared machine, while each run's own spread was 3 to
5 %); a few percent "significant" between two runs is that drift, not the kernel. Where the
launches carry a peer workload timed beside them, the ratio is compared (``judged``).

The noise between runs. A run's launches are timed within a second or two, so the bootstrap
sees only the noise of those seconds; the machine's state a minute later moves the median of
every launch at once (a CI run of one add_custom build: one shape's launch/peer median +18 % for
one run, the other shape of that run unmoved; earlier, consecutive runs -20 % to +27 % at load
5-8, which gave 6 false regressions in 400 pairs at 20 %). Only runs of one code show it: the
stored runs of a build measured more than once (``between_runs``: the largest max/min - 1 of
one build's medians, over the newest ``HISTORY`` runs of A's stack up to B, B left out). Where
it is measured, a change is called only beyond it as well as beyond the threshold, and where it
is wider than the threshold a change within it is ``undecidable``; where no build has two runs,
the verdict says the noise between runs was not measured.

A regression (exit 1) is ``slower``: significant and above the threshold (and the noise between
runs, where measured).
"""

from __future__ import annotations

import hashlib
import random
import re
import statistics
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

from ascenv.bench.fingerprint import Difference, differences
from ascenv.bench.records import Record, Run
from ascenv.errors import UsageError
from ascenv.words import counted

MIN_SAMPLES = 3
ROUNDS = 1000
# up to this many launches a resample is drawn launch by launch (random.choices): for 10
# launches that is about 3x faster than two Beta variates, for 1,000 about 20x slower
DRAWN_UP_TO = 64
LEVEL = 0.95
HISTORY = 20  # the newest runs of A's stack (up to B) read for the noise between runs


@dataclass(frozen=True)
class Change:
    verdict: str  # faster | slower | same | inconclusive | undecidable
    change: float  # median(B) / median(A) - 1 (None-free: 0.0 when a side has no launches)
    low: float
    high: float
    regression: bool  # slower by more than the threshold, outside the noise
    reason: str = ""


def threshold(text: str) -> float:
    """``--fail-over PCT`` (``5%``, ``2.5``) as a fraction (0.05), else exit 2."""
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*%?\s*", text)
    if not found:
        raise UsageError(f"--fail-over {text!r} is not a percentage", hint="for example: --fail-over 5%")
    return float(found.group(1)) / 100


def _seed(sa: Sequence[float], sb: Sequence[float]) -> int:
    """From the data (sorted: the same launches in another order give the same interval), about
    a thousand order statistics a side, not all n."""
    picks: list[float] = [len(sa), len(sb)]
    for ordered in (sa, sb):
        picks += ordered[:: max(1, len(ordered) >> 10)]
    digest = hashlib.sha256(array("d", picks).tobytes()).digest()
    return int.from_bytes(digest[:8], "big")


def _median_of(ordered: Sequence[float]) -> float:
    n = len(ordered)
    return ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2


def resampled_median(ordered: Sequence[float], rng: random.Random) -> float:
    """The median of one bootstrap resample of ``ordered`` (sorted, not empty), drawn from its
    exact distribution (see the module docstring)."""
    n = len(ordered)
    if n <= DRAWN_UP_TO:  # few launches: drawing them is cheaper than two Beta variates
        return _median_of(sorted(rng.choices(ordered, k=n)))
    m = (n + 1) // 2  # the lower middle one: the median for odd n
    u = rng.betavariate(m, n - m + 1)
    low = ordered[min(n - 1, int(u * n))]
    if n % 2:
        return low
    # the next order statistic: the least of the n - m uniforms above u
    v = u + (1 - u) * rng.betavariate(1, n - m)
    return (low + ordered[min(n - 1, int(v * n))]) / 2


def bootstrap(a: Sequence[float], b: Sequence[float], rounds: int = ROUNDS) -> tuple[float, float]:
    """The 95 % interval of ``median(b) / median(a) - 1``."""
    return _interval(sorted(a), sorted(b), rounds)


def _interval(sa: Sequence[float], sb: Sequence[float], rounds: int = ROUNDS) -> tuple[float, float]:
    rng = random.Random(_seed(sa, sb))
    changes = []
    for _ in range(rounds):
        ma = resampled_median(sa, rng)
        mb = resampled_median(sb, rng)
        changes.append(mb / ma - 1 if ma else 0.0)
    changes.sort()
    tail = (1 - LEVEL) / 2
    return changes[int(tail * rounds)], changes[min(rounds - 1, int((1 - tail) * rounds))]


def compare(a: Sequence[float], b: Sequence[float], threshold: float, between: Optional[float] = None) -> Change:
    """The verdict on B against A for one shape (durations in any one unit), ``between`` the noise
    between runs where it was measured (``between_runs``). Each side is sorted once: the medians
    and every bootstrap round read the sorted launches."""
    if not a or not b:
        return Change("inconclusive", 0.0, 0.0, 0.0, False, "no launches kept on one side (a summary only)")
    sa, sb = sorted(a), sorted(b)
    point = _median_of(sb) / _median_of(sa) - 1 if _median_of(sa) else 0.0
    if min(len(a), len(b)) < MIN_SAMPLES:
        fewest = counted(min(len(a), len(b)), "launch", "launches")
        return Change("inconclusive", point, point, point, False, f"{fewest}; {MIN_SAMPLES} needed")
    low, high = _interval(sa, sb)
    bound = max(threshold, between or 0.0)
    beyond = f"beyond the noise between runs of one build ({between:.1%})" if bound > threshold else ""
    if low > 0 and point > bound:
        return Change("slower", point, low, high, True, beyond)
    if high < 0 and point < -bound:
        return Change("faster", point, low, high, False, beyond)
    if between is not None and between > threshold:
        return Change(
            "undecidable",
            point,
            low,
            high,
            False,
            f"not decidable: between runs of one build the median moved {between:.1%}, more than the threshold",
        )
    if -threshold <= low and high <= threshold:
        return Change("same", point, low, high, False)
    return Change("inconclusive", point, low, high, False, "the noise is wider than the threshold")


def verdict(a: Sequence[float], b: Sequence[float], threshold: float) -> str:
    """``compare(a, b, threshold).verdict``, without the bootstrap where the samples' ranges
    decide it: a resample's median lies between the sample's min and max, so when every launch
    of B is slower than every launch of A (``min(b) / max(a) > 1``) every resampled change is
    above zero and so is the interval's low end: slower; faster likewise. Launch times are
    positive; with a zero or negative one the bootstrap decides."""
    if a and b and min(len(a), len(b)) >= MIN_SAMPLES and min(a) > 0 and min(b) > 0:
        point = statistics.median(b) / statistics.median(a) - 1
        if min(b) / max(a) - 1 > 0 and point > threshold:
            return "slower"
        if max(b) / min(a) - 1 < 0 and point < -threshold:
            return "faster"
    return compare(a, b, threshold).verdict


def judged(a: Record, b: Record) -> tuple[Sequence[float], Sequence[float], bool]:
    """What is compared for one shape: each launch's duration over the peer workload timed beside
    it when both records have one per launch (a machine that is busier, or clocked lower, for one
    run slows the peer too: the ratio keeps the kernel's own change), else the durations."""
    if a.peers and b.peers and len(a.peers) == len(a.durations) and len(b.peers) == len(b.durations):
        if min(a.peers) > 0 and min(b.peers) > 0:
            return (
                tuple(d / p for d, p in zip(a.durations, a.peers)),
                tuple(d / p for d, p in zip(b.durations, b.peers)),
                True,
            )
    return a.durations, b.durations, False


@dataclass(frozen=True)
class BetweenRuns:
    """How far one shape's median (of what is judged) moved between stored runs of one build,
    the same code: the noise between runs, which a run's own launches cannot show."""

    spread: Optional[float] = None  # the largest max/min - 1 of one build's medians; None: not measured
    runs: int = 0  # the runs it was measured over (of builds run more than once)
    builds: int = 0


def _judged_median(r: Record, against_peer: bool) -> Optional[float]:
    """The median of what ``judged`` compares for ``r``: duration / peer, or the duration."""
    if against_peer:
        if r.peers and len(r.peers) == len(r.durations) and min(r.peers) > 0:
            return _median_of(sorted(d / p for d, p in zip(r.durations, r.peers)))
        return None
    return r.duration_us if r.duration_us > 0 else None


def spread_of(r: Record, against_peer: bool) -> float:
    """(max - min) / median of what is judged for ``r``: the launches' duration / peer where the
    shape is judged against its peer (one measure per shape, as its bars), else ``r.spread``."""
    if against_peer and r.peers and len(r.peers) == len(r.durations) and min(r.peers) > 0:
        ratios = sorted(d / p for d, p in zip(r.durations, r.peers))
        middle = _median_of(ratios)
        return (ratios[-1] - ratios[0]) / middle if middle else 0.0
    return r.spread


def between_runs(history: Sequence[Run], key: tuple[Optional[str], ...], against_peer: bool) -> BetweenRuns:
    """The noise between runs of the record ``key``: per build with two or more runs of it in
    ``history``, ``max(medians) / min(medians) - 1``; the largest. Runs without a build key
    (imports not tied to a build) are not known to be of one code and are left out."""
    medians: dict[str, list[float]] = {}
    for run in history:
        if not run.fingerprint.build_key:
            continue
        for r in run.records:
            if r.key == key:
                found = _judged_median(r, against_peer)
                if found:
                    medians.setdefault(run.fingerprint.build_key, []).append(found)
    repeated = [m for m in medians.values() if len(m) > 1]
    if not repeated:
        return BetweenRuns()
    return BetweenRuns(max(max(m) / min(m) - 1 for m in repeated), sum(map(len, repeated)), len(repeated))


def in_history(a: Run, b: Run, r: Run) -> bool:
    """Whether ``r`` is one of the runs the noise between runs of A and B is read from: of A's op
    and target, with no fingerprint difference from A, created no later than B, not B."""
    return (
        r.id != b.id
        and r.op == a.op
        and r.target == a.target
        and r.created <= b.created
        and not differences(a.fingerprint, r.fingerprint)
    )


def history_of(a: Run, b: Run, runs: Sequence[Run]) -> tuple[Run, ...]:
    """The newest ``HISTORY`` of ``runs`` that are ``in_history`` of A and B, each run once (a run
    given twice, e.g. the baseline also among a node's stored runs, is not a second run)."""
    unique = {r.id: r for r in runs if in_history(a, b, r)}.values()
    kept = sorted(unique, key=lambda r: (r.created, r.id), reverse=True)
    return tuple(kept[:HISTORY])


@dataclass(frozen=True)
class ShapeChange:
    a: Record
    b: Record
    change: Change
    against_peer: bool = False  # judged as duration / peer (see ``judged``)
    # A's and B's medians of what was judged: durations (us), or duration / peer. The one measure
    # a shape is drawn in, so that a bar, its label, the change and the interval agree (issue 25:
    # a -4.1 % launch/peer change was printed beside medians in us 8.7 % apart)
    medians: tuple[float, float] = (0.0, 0.0)
    between: BetweenRuns = BetweenRuns()  # the noise between runs of one build, where measured

    @property
    def unit(self) -> str:
        return "x peer" if self.against_peer else "us"


@dataclass(frozen=True)
class Comparison:
    a: Run
    b: Run
    threshold: float
    shapes: tuple[ShapeChange, ...]
    differences: tuple[Difference, ...]  # fingerprint fields that make the timings incomparable
    only_a: tuple[Record, ...]
    only_b: tuple[Record, ...]

    @property
    def regressions(self) -> tuple[ShapeChange, ...]:
        return tuple(s for s in self.shapes if s.change.regression)


def compare_runs(a: Run, b: Run, threshold: float, history: Sequence[Run] = ()) -> Comparison:
    """Every shape both runs measured, matched on (op, shapes, dtypes, formats, task type);
    ``history`` the stored runs the noise between runs is read from (``history_of``)."""
    by_key = {r.key: r for r in a.records}
    b_keys = {r.key for r in b.records}
    shapes = []
    for r in b.records:
        if r.key in by_key:
            first, second, against_peer = judged(by_key[r.key], r)
            medians = (
                (_median_of(sorted(first)), _median_of(sorted(second)))
                if against_peer
                else (by_key[r.key].duration_us, r.duration_us)  # the record's median (a summary's mean)
            )
            between = between_runs(history, r.key, against_peer)
            change = compare(first, second, threshold, between.spread)
            shapes.append(ShapeChange(by_key[r.key], r, change, against_peer, medians, between))
    return Comparison(
        a,
        b,
        threshold,
        tuple(shapes),
        differences(a.fingerprint, b.fingerprint),
        tuple(r for r in a.records if r.key not in b_keys),
        tuple(r for r in b.records if r.key not in by_key),
    )
