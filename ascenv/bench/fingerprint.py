"""The stack a run measured: what must match for two timings to be comparable.

Timings from another SoC, CANN, driver or metric set, or from a down-clocked chip, measure the
stack, not the kernel; the same holds for a CPU-target run on another host CPU. The build key,
recipe digest and image ID are recorded to say *what* was measured and are expected to differ
between the two sides of a comparison."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Optional


@dataclass(frozen=True)
class Fingerprint:
    build_key: Optional[str] = None
    recipe_digest: Optional[str] = None
    image_id: Optional[str] = None
    soc: Optional[str] = None
    cann: Optional[str] = None
    driver: Optional[str] = None
    firmware: Optional[str] = None
    torch_npu: Optional[str] = None
    host_cpu: Optional[str] = None
    host_cores: Optional[int] = None
    metric_set: Optional[str] = None
    downclocked: Optional[bool] = None
    target: Optional[str] = None


# what makes two runs' timings incomparable; host CPU only counts for CPU-target runs
_ALWAYS = ("target", "soc", "cann", "driver", "firmware", "torch_npu", "metric_set")
_CPU_ONLY = ("host_cpu", "host_cores")


@dataclass(frozen=True)
class Difference:
    field: str
    a: object
    b: object

    def __str__(self) -> str:
        a = self.a if self.a is not None else "unknown"
        b = self.b if self.b is not None else "unknown"
        return f"{self.field}: {a} vs {b}"


def differences(a: Fingerprint, b: Fingerprint) -> tuple[Difference, ...]:
    """The fields that make timings of ``a`` and ``b`` incomparable. A field one side does not
    know is not a difference (an import from a machine without torch_npu is not refused for
    it); a down-clocked side always is."""
    names = _ALWAYS + (_CPU_ONLY if "cpu" in (a.target, b.target) else ())
    found = [
        Difference(n, getattr(a, n), getattr(b, n))
        for n in names
        if getattr(a, n) is not None and getattr(b, n) is not None and getattr(a, n) != getattr(b, n)
    ]
    if a.downclocked or b.downclocked:
        found.append(Difference("downclocked", bool(a.downclocked), bool(b.downclocked)))
    return tuple(found)


FIELDS = tuple(f.name for f in fields(Fingerprint))


def gather(
    *,
    target: str,
    manifest: Optional[Any] = None,  # ascenv.store.Manifest of the build measured
    snapshot: Optional[Any] = None,  # ascenv.model.Snapshot of the machine, probed at import
    profiler_info: Optional[Mapping[str, str]] = None,
    metric_set: Optional[str] = None,
    downclocked: Optional[bool] = None,
) -> Fingerprint:
    """One fingerprint from what is known: the build's manifest says what was measured, the
    probe what it ran on; a profiler's own record of its CANN and torch_npu (profiler_info_*.json)
    wins over the probe, since it was written on the machine that ran."""
    found: dict[str, Any] = {"target": target, "metric_set": metric_set, "downclocked": downclocked}
    if manifest is not None:
        found.update(build_key=manifest.key, recipe_digest=manifest.recipe_digest, image_id=manifest.toolchain.image_id)
        for name in ("driver", "firmware", "cann"):
            found[name] = manifest.host.get(name)
    if snapshot is not None:
        chips = sorted({c.name for c in snapshot.npu.chips if c.name})
        active = next((c for c in snapshot.cann.installs if c.path == snapshot.cann.active), None)
        probed = {
            "soc": ",".join(chips) or None,
            "cann": active.version if active else None,
            "driver": snapshot.driver.version,
            "firmware": snapshot.firmware.version,
            "torch_npu": snapshot.python.packages.get("torch-npu"),
            "host_cpu": snapshot.host.cpu,
            "host_cores": snapshot.host.cpu_count,
        }
        found.update({k: v for k, v in probed.items() if v is not None})
    for name in ("cann", "torch_npu"):
        if profiler_info and profiler_info.get(name):
            found[name] = profiler_info[name]
    return Fingerprint(**found)
