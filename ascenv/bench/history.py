"""An operator's bench history: its runs newest first, each record judged against the same
record (op, shapes, dtypes, formats, task type) of the next older run.

The verdict is ``stats.compare``'s (through ``stats.verdict``), a bootstrap of 1,000 rounds per
record: about 10 ms each. ``bench history`` lists the newest 20 runs unless asked otherwise,
with the total said: the recent runs are what is looked at, and judging a thousand runs would
take ten seconds for rows nobody reads; every run is ``--limit 0`` away. Where one side's
launches are all slower (or all faster) than the other's, the verdict needs no bootstrap."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from ascenv.bench.records import Run
from ascenv.bench.stats import judged, verdict
from ascenv.store import Store

GIT_COMMIT = "git commit "  # how a manifest names the commit its SOURCE_DATE_EPOCH came from

THRESHOLD = 0.05  # as ``bench compare``'s default --fail-over


@dataclass(frozen=True)
class Row:
    run: str
    build_key: Optional[str]
    op: str
    input_shapes: Optional[str]
    block_dim: Optional[int]
    duration_us: float  # the median (the mean for a summary-only record)
    spread: float
    verdict: Optional[str]  # against the next older run's same record; None where it has none
    tiling: dict[str, Any] = field(default_factory=dict)
    source_commit: Optional[str] = None  # the build's sources, where its manifest names a git commit


@dataclass(frozen=True)
class History:
    op: str
    rows: tuple[Row, ...]
    runs: int  # the runs listed
    total: int  # the runs the operator has


def history(
    op: str,
    runs: Sequence[Run],
    shapes: Optional[str] = None,
    limit: Optional[int] = None,
    total: Optional[int] = None,
    threshold: float = THRESHOLD,
    commits: Mapping[str, str] = {},  # noqa: B006 - read only: build key -> source commit
) -> History:
    """Rows of the newest ``limit`` of ``runs`` (newest first; all when ``limit`` is None or 0),
    records with input shapes ``shapes`` only when given. ``runs`` may hold one run more than is
    listed (the one the oldest listed run is judged against); ``total`` is the number of runs of
    ``op`` when ``runs`` holds fewer."""
    listed = runs[:limit] if limit else runs
    rows = []
    for i, run in enumerate(listed):
        older = {r.key: r for r in runs[i + 1].records} if i + 1 < len(runs) else {}
        for r in run.records:
            if shapes is not None and r.input_shapes != shapes:
                continue
            prev = older.get(r.key)
            rows.append(
                Row(
                    run=run.id,
                    build_key=run.fingerprint.build_key,
                    op=r.op,
                    input_shapes=r.input_shapes,
                    block_dim=r.block_dim,
                    duration_us=r.duration_us,
                    spread=r.spread,
                    verdict=verdict(*judged(prev, r)[:2], threshold) if prev else None,
                    tiling=dict(r.tiling),
                    source_commit=commits.get(run.fingerprint.build_key or ""),
                )
            )
    return History(op, tuple(rows), len(listed), len(runs) if total is None else total)


def source_commits(store: Store, op: str, keys: Iterable[Optional[str]]) -> dict[str, str]:
    """Build key -> the git commit of its sources, for the stored builds whose manifest names one
    (``ascenv build`` takes SOURCE_DATE_EPOCH from the project's last commit when it is in git)."""
    found = {}
    for key in {k for k in keys if k}:
        entry = store.get(op, key)
        origin = entry.manifest.source_date_epoch_from if entry is not None and entry.manifest else ""
        if origin.startswith(GIT_COMMIT):
            found[key] = origin[len(GIT_COMMIT) :]
    return found
