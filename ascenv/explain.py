"""What `ascenv explain` says: a doctor check (ASC-…) and the age of the compatibility data it
grades with, every check in one list, or what triage knows of an Ascend error code (EZ1001)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from ascenv import errors
from ascenv.checks import CheckInfo, load_checks

if TYPE_CHECKING:
    from ascenv.triage.signatures import Signature

# Checks that grade with the compatibility data (compat/*.toml): explain says how old it is.
_USES_COMPAT = ("ascenv.checks.torch", "ascenv.checks.stack", "ascenv.checks.kernels", "ascenv.checks.custom_ops")


@dataclass(frozen=True)
class Explained:
    check: CheckInfo
    compat_data_as_of: Optional[str]  # None: the check does not read the compatibility data


@dataclass(frozen=True)
class Explanation:
    listing: bool  # no id asked: every check, one line each
    checks: tuple[Explained, ...] = ()
    compat_data_as_of: str = ""  # "" without the shipped data
    code: str = ""  # an Ascend error code asked (then ``signatures`` says what it means)
    signatures: tuple[Signature, ...] = ()


def explain(wanted: Optional[str]) -> Explanation:
    """The check named ``wanted`` (case-insensitive), else the error code, else every check
    when ``wanted`` is None. An unknown name is a usage error that suggests the closest check."""
    checks = load_checks()
    if wanted is None:
        chosen = list(checks.values())
    else:
        key = wanted.upper()
        if key not in checks:
            from ascenv.triage.signatures import load as load_signatures

            codes = load_signatures().by_code(key)
            if codes:
                return Explanation(listing=False, code=key, signatures=codes)
            close = difflib.get_close_matches(key, list(checks), n=1)
            raise errors.UsageError(
                f"no check named {wanted}",
                hint=f"perhaps you meant {close[0]}?" if close else "run `ascenv explain` to list every check",
            )
        chosen = [checks[key]]
    as_of = _compat_as_of()
    explained = tuple(Explained(c, as_of if _uses_compat(c) else None) for c in chosen)
    return Explanation(listing=wanted is None, checks=explained, compat_data_as_of=as_of)


def _uses_compat(check: CheckInfo) -> bool:
    return getattr(check.function, "__module__", "") in _USES_COMPAT


def _compat_as_of() -> str:
    """The day the shipped matrix was last compared with its sources ("" without the data)."""
    from ascenv import compat, paths

    if not (paths.data_dir("compat") / "cann.toml").is_file():
        return ""
    return compat.load().as_of
