"""What `ascenv explain` says: a doctor check (ASC-…) and the age of the compatibility data it
grades with, every check in one list, or what triage knows of an Ascend error code (EZ1001)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from ascenv import errors
from ascenv.checks import RENAMED, CheckInfo, load_checks, resolve

if TYPE_CHECKING:
    from ascenv.triage.signatures import Signature, SignatureTable

# Checks that grade with the compatibility data (compat/*.toml): explain says how old it is.
_USES_COMPAT = frozenset(
    (
        *("ASC-TORCH-PAIR", "ASC-TORCH-CANN", "ASC-TORCH-SUGGEST", "ASC-TORCH-PYTHON"),
        *("ASC-FW-DRIVER", "ASC-DRIVER-REBOOT", "ASC-CANN-DRIVER", "ASC-DRIVER-CANN", "ASC-CANN-LATEST"),
        *("ASC-KERNELS-SOC", "ASC-KERNELS-TARGET", "ASC-KERNELS-ABI", "ASC-VENDOR-ABI", "ASC-VENDOR-UNITS"),
    )
)


@dataclass(frozen=True)
class Explained:
    check: CheckInfo
    compat_data_as_of: Optional[str]  # None: the check does not read the compatibility data
    renamed_from: tuple[str, ...] = ()  # its old IDs (users have them in issues)


@dataclass(frozen=True)
class Explanation:
    listing: bool  # no id asked: every check, one line each
    checks: tuple[Explained, ...] = ()
    compat_data_as_of: str = ""  # "" without the shipped data
    code: str = ""  # an Ascend error code asked (then ``signatures`` says what it means)
    signatures: tuple[Signature, ...] = ()
    asked_as: str = ""  # the old ID asked for, when the check was renamed since
    error_codes: tuple[str, ...] = ()  # with the listing: every error code triage's table knows


# What an error code looks like, by the codes the signature table holds (its sources quote them
# from real logs): CANN's "E" + a module letter or digit + four digits (EZ9999, EH9999), ERR00008,
# or a runtime/ACL/HCCL return code of four to six digits, negative ones too (507033, -8005).
_CODE_SHAPE = re.compile(r"^(E[A-Z0-9]{1,3}\d{4,5}|-?\d{4,6})$")


def explain(wanted: Optional[str]) -> Explanation:
    """The check named ``wanted`` (case-insensitive), else the error code, else every check
    when ``wanted`` is None. An unknown name is a usage error that suggests the closest check."""
    checks = load_checks()
    asked_as = ""
    if wanted is None:
        chosen = list(checks.values())
    else:
        key = wanted.upper()
        found = resolve(key) or _constraint(key)
        if found is None:
            from ascenv.triage.signatures import load as load_signatures

            table = load_signatures()
            codes = table.by_code(key)
            if codes:
                return Explanation(listing=False, code=key, signatures=codes)
            if _CODE_SHAPE.match(key):
                known = _known_codes(table)
                alike = [c for c in known if c[:2] == key[:2]][:8] or difflib.get_close_matches(key, known, n=4)
                raise errors.UsageError(
                    f"{wanted} is not an error code triage's table knows ({len(known)} codes are known)",
                    hint=(f"known codes like it: {', '.join(alike)}; " if alike else "")
                    + "`ascenv explain` lists them all; `ascenv triage LOG` also reads the lines around a code",
                )
            close = difflib.get_close_matches(key, [*checks, *RENAMED], n=1)
            raise errors.UsageError(
                f"no check named {wanted}",
                hint=f"perhaps you meant {RENAMED.get(close[0], close[0])}?"
                if close
                else "run `ascenv explain` to list every check",
            )
        chosen = [found]
        asked_as = key if found.id != key else ""
    as_of = _compat_as_of()
    explained = tuple(
        Explained(
            c,
            as_of if _uses_compat(c) else None,
            tuple(sorted(old for old, new in RENAMED.items() if new == c.id)),
        )
        for c in chosen
    )
    listed: tuple[str, ...] = ()
    if wanted is None:
        from ascenv.triage.signatures import load as load_signatures

        listed = _known_codes(load_signatures())
    return Explanation(
        listing=wanted is None, checks=explained, compat_data_as_of=as_of, asked_as=asked_as, error_codes=listed
    )


def _known_codes(table: SignatureTable) -> tuple[str, ...]:
    return tuple(sorted({code.upper() for signature in table.signatures for code in signature.codes}))


def _constraint(key: str) -> Optional[CheckInfo]:
    """A finding of a project's declared constraints (ASC-REQ-*, ``ascenv check``): not a
    registered check (it needs the project's file), explained all the same."""
    from ascenv import constraints

    known = constraints.explained_ids().get(key)
    if known is None:
        return None
    layer, title = known
    return CheckInfo(key, layer, title, constraints.EXPLAIN.strip(), lambda snapshot, matrix: ())


def _uses_compat(check: CheckInfo) -> bool:
    return check.id in _USES_COMPAT


def _compat_as_of() -> str:
    """The day the shipped matrix was last compared with its sources ("" without the data)."""
    from ascenv import compat, paths

    if not (paths.data_dir("compat") / "cann.toml").is_file():
        return ""
    return compat.load().as_of
