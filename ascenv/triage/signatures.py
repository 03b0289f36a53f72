"""The error-signature table (compat/triage/signatures.toml): what a failure prints -> the layer it
implicates -> its known causes, ranked, with the doctor checks that decide each one.

Validated at load like the compatibility data: a bad value names the file and its key path and is
exit code 2. Patterns are linear-time by construction: literals are plain substrings, and a regex
may not nest quantifiers nor refer back to a group (checked here, so a signature can never make a
2 GB log take exponential time).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from ascenv.checks import LAYERS as CHECK_LAYERS

FILE = "signatures.toml"

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
    "other",
)
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
    causes: tuple[CauseRule, ...]

    def matches(self, line: str) -> bool:
        if not any(literal in line for literal in self.literals):
            return False
        return self.regex is None or self.regex.search(line) is not None


@dataclass(frozen=True)
class SignatureTable:
    signatures: tuple[Signature, ...]

    @property
    def literals(self) -> tuple[str, ...]:
        """The scanner's prefilter: every literal once, without those that contain another (a line
        holding "Acl open device 0 failed" holds "Acl open device": one search finds both)."""
        unique = sorted({lit for sig in self.signatures for lit in sig.literals}, key=lambda s: (len(s), s))
        kept: list[str] = []
        for literal in unique:
            if not any(shorter in literal for shorter in kept):
                kept.append(literal)
        return tuple(kept)

    def by_code(self, code: str) -> tuple[Signature, ...]:
        wanted = code.upper()
        return tuple(s for s in self.signatures if wanted in (c.upper() for c in s.codes))

    def by_id(self, id: str) -> Optional[Signature]:
        return next((s for s in self.signatures if s.id == id), None)


def load(directory: Optional[Path] = None, known_checks: Optional[set[str]] = None) -> SignatureTable:
    """Read and validate ``signatures.toml`` (default: compat/triage/, shipped with the compat data;
    a subdirectory, so the compatibility loader's own file list stays as it is).
    ``known_checks``: the registered doctor check IDs every listed check must be one of."""
    # compat's reader: the same messages ("file: key.path: problem") and schema handling as the
    # compatibility data
    from ascenv import compat
    from ascenv.paths import data_dir

    directory = Path(directory) if directory is not None else data_dir("compat") / "triage"
    reader = compat.read_table(directory, FILE)
    ids: set[str] = set()

    def signature(row: Any) -> Signature:
        sig_id = row.string("id")
        if sig_id in ids:
            raise row.fail("id", f"{sig_id!r} used twice")
        ids.add(sig_id)
        layer = row.string("layer")
        if layer not in LAYERS:
            raise row.fail("layer", f"expected one of {', '.join(LAYERS)}, found {layer!r}")
        literals = row.strings("literals", required=True)
        source = row.strings("source", required=True)
        for i, url in enumerate(source):
            if not url.startswith("https://"):
                raise row.fail(f"source[{i}]", f"expected an https:// URL, found {url!r}")
        pattern = row.string("regex", required=False)
        compiled = None if pattern is None else _linear_regex(row, "regex", pattern)
        causes = row.rows("cause", lambda r: cause_rule(r))
        return Signature(
            id=sig_id,
            layer=layer,
            literals=literals,
            regex=compiled,
            codes=row.strings("codes"),
            summary=row.string("summary"),
            source=source,
            causes=causes,
        )

    def cause_rule(row: Any) -> CauseRule:
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

    table = SignatureTable(reader.rows("signature", signature))
    reader.done()
    return table


def _linear_regex(row: Any, key: str, pattern: str) -> re.Pattern:
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise row.fail(key, f"not a valid regular expression: {exc}") from None
    problem = _backtracking_risk(pattern)
    if problem:
        raise row.fail(key, f"{problem}: use literals plus a simple regex (matching must stay linear-time)")
    return compiled


def _backtracking_risk(pattern: str) -> Optional[str]:
    """Why ``pattern`` could backtrack super-linearly (a repeat inside a repeat, a back-reference),
    or None. Walks the parsed pattern of the standard library's own parser."""
    import importlib

    try:
        parser: Any = importlib.import_module("re._parser")  # Python >= 3.11
    except ImportError:  # pragma: no cover - Python 3.9/3.10
        parser = importlib.import_module("sre_parse")
    constants = parser  # both modules re-export the opcode constants
    repeats = {constants.MAX_REPEAT, constants.MIN_REPEAT}
    possessive = getattr(constants, "POSSESSIVE_REPEAT", None)
    if possessive is not None:
        repeats.add(possessive)

    def walk(items: Any, inside_repeat: bool) -> Optional[str]:
        for op, arg in items:
            if op in repeats:
                low, high, sub = arg
                if inside_repeat:
                    return "nested quantifier"
                found = walk(sub, high > 1)
                if found:
                    return found
            elif op is constants.GROUPREF or op is getattr(constants, "GROUPREF_EXISTS", None):
                return "back-reference"
            elif op is constants.SUBPATTERN:
                found = walk(arg[-1], inside_repeat)
                if found:
                    return found
            elif op is constants.BRANCH:
                for branch in arg[1]:
                    found = walk(branch, inside_repeat)
                    if found:
                        return found
            elif op in (constants.ASSERT, constants.ASSERT_NOT):
                found = walk(arg[1], inside_repeat)
                if found:
                    return found
        return None

    return walk(parser.parse(pattern), False)
