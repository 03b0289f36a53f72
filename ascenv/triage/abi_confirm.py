"""Confirm an ``undefined symbol`` of a log with the binaries of the machine judged (issue #23, item 5).

The dynamic loader names the library and the mangled symbol it could not bind
(``libtorch_npu.so: undefined symbol: _ZNK3c10...``; glibc elf/dl-lookup.c, "undefined symbol:
%s"). ASC-ABI-SYMBOLS reads the same libraries under the machine's root (or a snapshot's record
of them) and lists what it cannot bind in ``details.unresolved``; the cause is

- confirmed when the symbol of the log is there (ASC-ABI-CXX11 counts too: the provider defines it,
  under the other C++ ABI only, which is still unbound);
- ruled out only when the check read the library of the log, bound every symbol it needs and
  this one is not among the unbound (the machine's pairing links);
- not checkable otherwise, with why: the check read no libraries (no torch_npu in the judged
  Python), could not read some, does not read the library of the log (a CANN library: it reads
  torch_npu's and the custom operators'), or the library that should define it is absent. That
  answer is listed only where no other check of the cause answers: it must not reopen a cause
  the version tables ruled out.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from typing import Optional

from ascenv.model import Finding, Snapshot
from ascenv.triage.scan import LineGroup
from ascenv.triage.verdict import CONFIRMED, NOT_CHECKABLE, RULED_OUT, CheckVerdict
from ascenv.words import counted

CHECK = "ASC-ABI-SYMBOLS"
# the family signature's reading of the loader's message (compat/triage/signatures.toml, "undefined-symbol")
_UNDEFINED = re.compile(
    r"(?:(?P<lib>[^\s:'\"(\[,]{1,300}\.so[\w.]{0,20}): )?undefined symbol:? ?(?P<symbol>[A-Za-z_$][\w.$]{0,499})"
)


def logged(lines: Sequence[LineGroup]) -> list[tuple[Optional[str], str]]:
    """(library base name or None, symbol) of each ``undefined symbol`` line, in order, once each."""
    out: dict[tuple[Optional[str], str], None] = {}
    for group in lines:
        for found in _UNDEFINED.finditer(group.text):
            lib = found.group("lib")
            symbol = found.group("symbol").split("@", 1)[0].rstrip(".,;")
            out[(posixpath.basename(lib) if lib else None, symbol)] = None
    return list(out)


def with_abi_verdict(
    verdicts: tuple[CheckVerdict, ...],
    lines: Sequence[LineGroup],
    checks: Sequence[str],
    snapshot: Snapshot,
    findings: Sequence[Finding],
) -> tuple[CheckVerdict, ...]:
    """A cause's verdicts with ASC-ABI-SYMBOLS's on its undefined symbols. Its "not checkable" is
    added only where no other check answers: the binaries confirm or rule out on top of the tables,
    and their silence must not reopen a cause the other checks decided."""
    abi = abi_verdict(lines, snapshot, findings)
    if abi is None or CHECK in checks or (abi.verdict == NOT_CHECKABLE and verdicts):
        return verdicts
    return (*verdicts, abi)


def abi_verdict(lines: Sequence[LineGroup], snapshot: Snapshot, findings: Sequence[Finding]) -> Optional[CheckVerdict]:
    """ASC-ABI-SYMBOLS's verdict on the undefined symbols of ``lines``; None when they name none."""
    wanted = logged(lines)
    if not wanted:
        return None
    verdicts = [_one(lib, symbol, snapshot, findings) for lib, symbol in wanted]
    # one unbound symbol confirms; all must resolve to rule the cause out
    for kind in (CONFIRMED, NOT_CHECKABLE):
        chosen = [v for v in verdicts if v.verdict == kind]
        if chosen:
            return CheckVerdict(CHECK, kind, "; ".join(dict.fromkeys(v.reason for v in chosen)))
    return CheckVerdict(CHECK, RULED_OUT, "; ".join(dict.fromkeys(v.reason for v in verdicts)))


def _one(lib: Optional[str], symbol: str, snapshot: Snapshot, findings: Sequence[Finding]) -> CheckVerdict:
    abi = snapshot.abi
    shown = symbol if len(symbol) <= 80 else symbol[:77] + "..."
    unbound = [
        u
        for f in findings
        if f.id in (CHECK, "ASC-ABI-CXX11") and f.details is not None
        for u in f.details.unresolved
        if u.symbol == symbol or u.demangled == symbol
    ]
    if unbound:
        mine = [u for u in unbound if lib is None or posixpath.basename(u.library) == lib] or unbound
        u = mine[0]
        where = f"defined only under the other C++ ABI in {u.other_abi_in}" if u.other_abi_twin else "unbound"
        return CheckVerdict(
            CHECK, CONFIRMED, f"{posixpath.basename(u.library)} needs {u.demangled or shown}: {where} here"
        )
    if not abi.read:
        return CheckVerdict(CHECK, NOT_CHECKABLE, "the ABI check read no libraries (no torch_npu in the Python judged)")
    if abi.problems:
        return CheckVerdict(CHECK, NOT_CHECKABLE, f"{counted(len(abi.problems), 'file')} could not be read as ELF")
    absent = [u for u in abi.unresolved if u.symbol == symbol and u.expected_from]
    if absent:
        return CheckVerdict(
            CHECK,
            NOT_CHECKABLE,
            f"{shown} should come from {absent[0].expected_from}, which is absent here (ASC-ABI-NEEDED)",
        )
    if lib is None:
        return CheckVerdict(CHECK, NOT_CHECKABLE, f"the log does not say which library needs {shown}")
    if not abi.checked:
        return CheckVerdict(CHECK, NOT_CHECKABLE, "the snapshot does not record which libraries the ABI check bound")
    read = [p for p in abi.checked if posixpath.basename(p) == lib]
    if not read:
        scope = "torch_npu's and the custom operators' libraries"
        return CheckVerdict(CHECK, NOT_CHECKABLE, f"{lib} is not among the libraries the ABI check binds ({scope})")
    return CheckVerdict(
        CHECK, RULED_OUT, f"{read[0]} binds every symbol it needs here ({shown} is not among the unbound)"
    )
