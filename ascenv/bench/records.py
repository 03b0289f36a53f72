"""One record per (op, input shapes, dtypes, formats, task type) of an imported or measured run,
and a run: its records, where they came from and the stack they ran on."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from ascenv.bench.fingerprint import Fingerprint


@dataclass(frozen=True)
class Clock:
    """The AI Core clock msprof op records (``Current Freq`` vs ``Rated Freq``, MHz); None where the
    source has no clock. A down-clocked run measured a slower chip, not a slower kernel."""

    current_mhz: Optional[int] = None
    rated_mhz: Optional[int] = None

    @property
    def downclocked(self) -> Optional[bool]:
        if self.current_mhz is None or self.rated_mhz is None:
            return None
        return self.current_mhz < self.rated_mhz


@dataclass(frozen=True)
class Record:
    op: str
    input_shapes: Optional[str]  # the profiler's form without its quotes: "4096,1024;4096,1024"
    input_dtypes: Optional[str]  # "DT_BF16;DT_BF16"
    input_formats: Optional[str]  # "ND;ND"
    task_type: Optional[str]  # AI_CORE, AI_VECTOR_CORE, MIX_AIC, ... (None at torch_npu Level0)
    samples: int
    # every launch, microseconds, as array('d'): 8 bytes a launch where a tuple of floats takes 32
    # (a long profile has millions); empty when the source has only a summary
    durations: Sequence[float]
    duration_us: float  # the median (the mean when duration_stat is "mean")
    duration_min_us: float
    duration_max_us: float
    duration_stat: str = "median"  # "mean" for op_statistic, which keeps no launches
    block_dim: Optional[int] = None
    mix_block_dim: Optional[int] = None
    metrics: dict[str, float] = field(default_factory=dict)
    metric_set: str = "none"
    clock: Clock = Clock()
    tool: str = ""
    tiling: dict[str, Any] = field(default_factory=dict)  # what the project's tiling code chose
    # a fixed peer workload timed beside each launch, in the same process (microseconds, one per
    # duration; empty when none was): compare judges the launches against it (ascenv.bench.stats)
    peers: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.durations, array):
            object.__setattr__(self, "durations", array("d", self.durations))

    @property
    def key(self) -> tuple[Optional[str], ...]:
        return (self.op, self.input_shapes, self.input_dtypes, self.input_formats, self.task_type)

    @property
    def spread(self) -> float:
        """(max - min) / median: how far apart the launches of one shape landed."""
        return (self.duration_max_us - self.duration_min_us) / self.duration_us if self.duration_us else 0.0


@dataclass(frozen=True)
class Run:
    id: str
    op: str  # the operator project the run belongs to (a store entry's op)
    target: str  # npu for profiler imports, cpu for the CPU logic checker
    tool: str  # "msprof", "msprof op", "torch_npu" (joined with "+" when a tree holds several)
    created: str  # ISO 8601 UTC
    source: str  # the path imported, as given
    files: tuple[str, ...]  # the files read, relative to source
    skipped_rows: int  # rows without a duration (communication rows, N/A)
    fingerprint: Fingerprint
    records: tuple[Record, ...]


def record_json(r: Record) -> dict[str, Any]:
    return {
        "op": r.op,
        "input_shapes": r.input_shapes,
        "input_dtypes": r.input_dtypes,
        "input_formats": r.input_formats,
        "task_type": r.task_type,
        "samples": r.samples,
        "duration_us": r.duration_us,
        "duration_min_us": r.duration_min_us,
        "duration_max_us": r.duration_max_us,
        "duration_stat": r.duration_stat,
        "spread": round(r.spread, 6),
        "block_dim": r.block_dim,
        "mix_block_dim": r.mix_block_dim,
        "metrics": dict(r.metrics),
        "metric_set": r.metric_set,
        "clock": {
            "current_mhz": r.clock.current_mhz,
            "rated_mhz": r.clock.rated_mhz,
            "downclocked": r.clock.downclocked,
        },
    }


def op_key(name: str) -> str:
    """An operator's name with case and separators left out: the project ``add_custom`` and the op
    type ``AddCustom`` a profiler records for it are one key. CANN names an operator project's
    files in snake case after its op type in upper camel case (msopgen: op type AddCustom,
    op_kernel/add_custom.cpp; https://www.hiascend.com/document, "Ascend C operator development")."""
    return "".join(c for c in name.lower() if c.isalnum())


@dataclass(frozen=True)
class OpFilter:
    """The records of one operator out of a profile, and the op types left out."""

    kept: tuple[Record, ...]
    left_out: tuple[str, ...]  # op types, sorted, one each


def of_op(records: Sequence[Record], op: str) -> OpFilter:
    key = op_key(op)
    kept = tuple(r for r in records if op_key(r.op) == key)
    return OpFilter(kept, tuple(sorted({r.op for r in records if op_key(r.op) != key})))
