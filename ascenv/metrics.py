"""The stack of one machine as Prometheus metrics (`ascenv export prometheus`): what is installed,
what doctor found, whether the machine still matches each cluster lock, and the custom operator
vendors. Pure: the command probes, diagnoses and checks the locks, ``output.export`` writes the
text exposition format.

The versions are labels of one info metric whose value is 1, as node-exporter's
``node_uname_info`` and dcgm-exporter's driver label do: a dashboard joins them onto other
series, and ``count by (cann) (ascenv_stack_info)`` counts the nodes per CANN release
(https://prometheus.io/docs/instrumenting/writing_exporters/#target-labels-not-static-scraped-labels).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ascenv.lockfile import Lock, LockCheck
from ascenv.model import Finding, Severity, Snapshot

# The labels of ascenv_stack_info, in the order written. A layer that is absent is an empty
# value, which PromQL reads as a missing label (https://prometheus.io/docs/concepts/data_model/).
STACK_LABELS = ("driver", "firmware", "cann", "torch_npu", "torch", "nnal", "soc")


@dataclass(frozen=True)
class VendorMetric:
    vendor: str
    path: str  # two trees of one vendor name (config.ini and ASCEND_CUSTOM_OPP_PATH) are two series
    op_types: str  # comma-separated, sorted: one label, a stable series per build
    build_sha256: str  # the digest of the ascenv build manifest beside the vendor; "" when none


@dataclass(frozen=True)
class StackMetrics:
    stack: tuple[tuple[str, str], ...]  # (label, value) in STACK_LABELS order
    findings: tuple[tuple[str, int], ...]  # (severity, count), every severity, in Severity order
    locks: tuple[tuple[str, bool], ...]  # (lock as given, in sync)
    vendors: tuple[VendorMetric, ...]
    timestamp: float  # seconds since the epoch of this run


def stack_metrics(
    snapshot: Snapshot, machine: Lock, findings: Sequence[Finding], checks: Sequence[LockCheck], *, now: float
) -> StackMetrics:
    """The metrics of the machine ``snapshot`` describes (``machine`` is its lock) at ``now``."""
    packages = snapshot.python.packages
    active = next((c.version for c in machine.cann if c.active), None)
    values = {
        "driver": machine.npu.driver,
        "firmware": machine.npu.firmware,
        "cann": active,
        "torch_npu": packages.get("torch-npu"),
        "torch": packages.get("torch"),
        "nnal": next((part.version for part in snapshot.stack if part.name == "nnal-atb"), None),
        "soc": machine.platform.compute_unit,
    }
    locks: dict[str, bool] = {}
    for check in checks:
        locks.setdefault(check.source, check.in_sync)
    return StackMetrics(
        stack=tuple((label, values[label] or "") for label in STACK_LABELS),
        findings=tuple((s.value, sum(1 for f in findings if f.severity is s)) for s in Severity),
        # one series per label set: a lock given twice, or a vendor tree listed twice, would be a
        # duplicate sample, which the textfile collector rejects for the whole file
        locks=tuple(locks.items()),
        vendors=tuple(
            dict.fromkeys(
                VendorMetric(
                    vendor=v.name,
                    path=v.path,
                    op_types=",".join(sorted({op for ops in v.ops_info.values() for op in ops})),
                    build_sha256=v.manifest_digest or "",
                )
                for v in snapshot.vendors
                if v.exists
            )
        ),
        timestamp=now,
    )
