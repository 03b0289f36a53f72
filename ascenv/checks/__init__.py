"""Pure checks: ``Snapshot`` (+ the compat ``Matrix``) in, ``Finding``s out.

Each check is a small function registered with ``@check(ID, layer, title, explain)``; the
registry gives ``ascenv explain ID`` its text and keeps IDs stable and unique. A check never
reads the machine: everything it knows is in the snapshot, so ``doctor --from snapshot.json``
re-checks a saved machine offline with the same result (and loads no probe module).

Where a check goes: in the module named after its layer (``ascenv/checks/<layer>.py``, one per
entry of ``LAYERS``), with an ID that starts with the layer's prefix (``LAYER_PREFIXES``).
Modules are found in the package, not listed by hand; a module whose name starts with ``_``
(``_facts``, ``_unreadable``) holds pure helpers shared by the layer modules and registers nothing;
``summary`` (what findings add up to) is a public helper marked ``HELPER = True``. A renamed check
keeps its old ID in ``renamed_from``, so ``ascenv explain OLD-ID`` still answers.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Callable, Optional

from ascenv.model import Finding, Severity, Snapshot

CheckFunction = Callable[[Snapshot, Any], Iterable[Finding]]

# Layers in the order a report walks the stack, bottom up.
LAYERS = (
    "npu",
    "driver",
    "firmware",
    "devices",
    "cann",
    "kernels",
    "env",
    "vendors",
    "python",
    "torch_npu",
    "stack",
    "abi",
)

# The ID prefix of each layer's checks (ASC-<prefix>-<name>).
LAYER_PREFIXES = {
    "npu": "ASC-NPU-",
    "driver": "ASC-DRIVER-",
    "firmware": "ASC-FW-",
    "devices": "ASC-DEV-",
    "cann": "ASC-CANN-",
    "kernels": "ASC-KERNELS-",
    "env": "ASC-ENV-",
    "vendors": "ASC-VENDOR-",
    "python": "ASC-PY-",
    "torch_npu": "ASC-TORCH-",
    "stack": "ASC-STACK-",
    "abi": "ASC-ABI-",
}


@dataclass(frozen=True)
class CheckInfo:
    id: str
    layer: str
    title: str
    explain: str  # what the check means, why it matters, where the fact comes from
    function: CheckFunction
    # a fix suggester lists what would fit (CANN releases for this driver, torch_npu wheels for
    # this CANN): it tests nothing, so its answer never confirms or rules a cause out
    suggests: bool = False


REGISTRY: dict[str, CheckInfo] = {}
# Old ID -> current ID, for checks renamed since users quoted them (in issues, in scripts).
RENAMED: dict[str, str] = {}


def check(
    id: str, *, layer: str, title: str, explain: str, renamed_from: tuple[str, ...] = (), suggests: bool = False
) -> Callable[[CheckFunction], CheckFunction]:
    if layer not in LAYERS:
        raise ValueError(f"{id}: unknown layer {layer!r}")
    if not id.startswith(LAYER_PREFIXES[layer]):
        raise ValueError(f"{id}: a check of layer {layer} has an ID starting with {LAYER_PREFIXES[layer]}")

    def register(function: CheckFunction) -> CheckFunction:
        home = f"{__name__}.{layer}"
        if function.__module__ != home:
            raise ValueError(f"{id}: a check of layer {layer} belongs in {home}, not {function.__module__}")
        for known in (id, *renamed_from):
            if known in REGISTRY or known in RENAMED:
                raise ValueError(f"check id {known} registered twice")
        REGISTRY[id] = CheckInfo(id, layer, title, explain.strip(), function, suggests)
        RENAMED.update(dict.fromkeys(renamed_from, id))
        return function

    return register


def finding(id: str, severity: Severity, title: str, **kwargs: Any) -> Finding:
    """A Finding of a registered check (its layer comes from the registry)."""
    return Finding(id=id, severity=severity, layer=REGISTRY[id].layer, title=title, **kwargs)


def check_modules() -> list[str]:
    """The modules of this package that may hold checks (every name without a leading ``_``), the
    layer modules in ``LAYERS`` order first: found on disk, so a new module cannot be forgotten."""
    names = [m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")]
    return sorted(names, key=lambda n: (LAYERS.index(n) if n in LAYERS else len(LAYERS), n))


def load_checks() -> dict[str, CheckInfo]:
    """Every check, in layer order: importing the modules fills the registry."""
    for name in check_modules():
        importlib.import_module(f"{__name__}.{name}")
    return REGISTRY


def resolve(id: str) -> Optional[CheckInfo]:
    """The check an ID names, also by the ID it had before a rename (case-insensitive)."""
    checks = load_checks()
    wanted = id.upper()
    return checks.get(wanted) or checks.get(RENAMED.get(wanted, ""))


def run_checks(snapshot: Snapshot, matrix: Optional[Any] = None, extra: Iterable[Finding] = ()) -> list[Finding]:
    """Every registered check, in layer order, then severity (errors first); ``extra`` findings
    (a project's constraints, ascenv.constraints) are sorted in with them."""
    findings: list[Finding] = list(extra)
    for info in load_checks().values():
        findings.extend(info.function(snapshot, matrix))
    order = {s: i for i, s in enumerate((Severity.ERROR, Severity.WARN, Severity.INFO, Severity.OK))}
    return sorted(findings, key=lambda f: (LAYERS.index(f.layer), order[f.severity]))
