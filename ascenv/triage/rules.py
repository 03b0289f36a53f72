"""The parts of a triage rule shared by the signature table and the rule families: the cause
vocabulary, a cause with the checks that decide it, a signature, and the validation of a cause row
(used by signatures.toml and layers.toml alike)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

from ascenv.checks import LAYERS as CHECK_LAYERS

# The cause vocabulary shared with the labelled error corpus (one name per cause; finer causes go
# into ``detail``, never into a new name).
CAUSES = (
    "driver_cann_mismatch",
    "torch_npu_cann_mismatch",
    "torch_torch_npu_mismatch",
    "python_no_wheel",
    "env_not_sourced",
    "kernels_missing",
    "soc_unsupported",
    "device_busy",
    "container_no_device",
    "permission",
    "custom_op_not_loaded",
    "stale_kernel_cache",
    "hccl_inconsistent_versions",
    "firmware_driver_mismatch",
    "out_of_memory",
    "disk_or_tmp_full",
    # added with the corpus's second batch (README "Additional causes"): an Ascend package not
    # found because its index is not configured; a framework/plugin built for another CANN/torch_npu
    "package_index_missing",
    "framework_build_mismatch",
    "other",
)
# The rules over a kind of message, implemented in ascenv/triage/families.py.
FAMILIES = ("undefined_symbol", "missing_library", "memory")

# The stack layers of the doctor, plus the two a log can implicate that no check covers.
LAYERS = (*CHECK_LAYERS, "hccl", "application")


@dataclass(frozen=True)
class CauseRule:
    cause: str  # one of CAUSES
    weight: float  # 0..1: how often the sources found this cause behind the message
    checks: tuple[str, ...]  # doctor checks whose error confirms the cause
    context: tuple[str, ...]  # doctor checks that show the relevant facts but decide nothing
    fix: str
    detail: Optional[str] = None  # the finer cause ("numpy2: ...")
    package: Optional[str] = None  # a Python distribution whose version decides the cause ...
    package_min: Optional[str] = None  # ... when installed at this version or newer
    warnings_confirm: bool = False  # a warning of a check confirms too (checks that never err)


@dataclass(frozen=True)
class Signature:
    id: str
    layer: str
    literals: tuple[str, ...]  # any one of them selects a line
    regex: Optional[re.Pattern]  # then, when set, this must match the line too
    codes: tuple[str, ...]  # error codes it explains (ascenv explain CODE)
    summary: str
    source: tuple[str, ...]  # public URLs that established the meaning
    causes: tuple[CauseRule, ...]  # for a family: what a line it cannot classify means
    family: Optional[str] = None  # a rule over the kind of message (ascenv/triage/families.py)
    # a generic wrapper ("HCCL function error", "Segmentation fault") whose cause the lines around
    # it name: ranked after the causal lines even when it comes first
    wrapper: bool = False
    # a context line, not a cause (a JIT front-end named in the log): it names no cause of its own;
    # its cause rows raise the weight of those causes when another line of the log names them
    boost: bool = False

    def matches(self, line: str) -> bool:
        if not any(literal in line for literal in self.literals):
            return False
        # a family reads its regex itself, around the literal only (families.derive)
        return self.regex is None or self.family is not None or self.regex.search(line) is not None


def cause_rule(row: Any, known_checks: Optional[set[str]]) -> CauseRule:
    """One [[...cause]] row: a cause of the vocabulary, its weight, the checks that decide it."""
    cause = row.string("cause")
    if cause not in CAUSES:
        raise row.fail("cause", f"expected one of {', '.join(CAUSES)}, found {cause!r}")
    row.seen.add("weight")
    weight = row.data.get("weight")
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0.0 <= weight <= 1.0:
        raise row.fail("weight", f"expected a number from 0 to 1, found {weight!r}")
    checks = row.raw("checks", list, True)
    checks = row.strings("checks") if checks else ()
    context = row.strings("context")
    for key, ids_ in (("checks", checks), ("context", context)):
        for i, check_id in enumerate(ids_):
            if known_checks is not None and check_id not in known_checks:
                raise row.fail(f"{key}[{i}]", f"no doctor check named {check_id!r} (ascenv explain lists them)")
    package = row.string("package", required=False)
    package_min = row.string("package_min", required=package is not None)
    if package_min is not None and package is None:
        raise row.fail("package_min", "needs package")
    if package_min is not None:
        from packaging.version import InvalidVersion, Version

        try:
            Version(package_min)
        except InvalidVersion:
            raise row.fail("package_min", f"expected a version like 2 or 2.0, found {package_min!r}") from None
    return CauseRule(
        cause=cause,
        weight=float(weight),
        checks=checks,
        context=context,
        fix=row.string("fix"),
        detail=row.string("detail", required=False),
        package=package,
        package_min=package_min,
        warnings_confirm=bool(row.raw("warnings_confirm", bool, False)),
    )
