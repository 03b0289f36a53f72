"""Pure checks: ``Snapshot`` (+ the compat ``Matrix``) in, ``Finding``s out.

Each check is a small function registered with ``@check(ID, layer, title, explain)``; the
registry gives ``ascenv explain ID`` its text and keeps IDs stable and unique. A check never
reads the machine: everything it knows is in the snapshot, so ``doctor --from snapshot.json``
re-checks a saved machine offline with the same result.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Callable, Optional

from ascenv.model import Finding, Severity, Snapshot

CheckFunction = Callable[[Snapshot, Any], Iterable[Finding]]

# Layers in the order a report walks the stack, bottom up.
LAYERS = ("npu", "driver", "firmware", "devices", "cann", "kernels", "env", "vendors", "python", "torch_npu")

# Modules holding checks; importing them fills the registry.
_MODULES = ("npu", "devices", "cann", "env", "vendors", "python", "stack", "kernels", "torch", "custom_ops", "packages")


@dataclass(frozen=True)
class CheckInfo:
    id: str
    layer: str
    title: str
    explain: str  # what the check means, why it matters, where the fact comes from
    function: CheckFunction


REGISTRY: dict[str, CheckInfo] = {}


def check(id: str, *, layer: str, title: str, explain: str) -> Callable[[CheckFunction], CheckFunction]:
    if layer not in LAYERS:
        raise ValueError(f"{id}: unknown layer {layer!r}")

    def register(function: CheckFunction) -> CheckFunction:
        if id in REGISTRY:
            raise ValueError(f"check id {id} registered twice")
        REGISTRY[id] = CheckInfo(id, layer, title, explain.strip(), function)
        return function

    return register


def finding(id: str, severity: Severity, title: str, **kwargs: Any) -> Finding:
    """A Finding of a registered check (its layer comes from the registry)."""
    return Finding(id=id, severity=severity, layer=REGISTRY[id].layer, title=title, **kwargs)


def load_checks() -> dict[str, CheckInfo]:
    for name in _MODULES:
        importlib.import_module(f"ascenv.checks.{name}")
    return REGISTRY


def run_checks(snapshot: Snapshot, matrix: Optional[Any] = None) -> list[Finding]:
    """Every registered check, in layer order, then severity (errors first)."""
    findings: list[Finding] = []
    for info in load_checks().values():
        findings.extend(info.function(snapshot, matrix))
    order = {s: i for i, s in enumerate((Severity.ERROR, Severity.WARN, Severity.INFO, Severity.OK))}
    return sorted(findings, key=lambda f: (LAYERS.index(f.layer), order[f.severity]))
