"""Pure parsers for the version files an Ascend machine keeps on disk.

Formats (public samples, each with its source line, in tests/data/corpus/version_files/):

* ``key=value``: driver and firmware ``version.info``, ``ascend_*_install.info``,
  ``/etc/ascend_install.info``, component ``version.info`` (``required_*_version=">=7.6, <=8.2"``
  values are shell-quoted);
* ``version.cfg``: optional ``# version: 1.0`` header, then
  ``<component>_{running,upgrade,installed}_version=[<inner>:<CANN>]``, one or several pairs;
* ``compatible_version*`` lists: ``[V100R001C30],[V100R001C13]``, ``[7.0.0,7.7.99]``,
  ``[23.0.0,23.0.0.]`` (trailing-dot upper bounds), ``[V100R001C13,V100R001C19],[V100R001C30]``;
* ``key : value`` (nnal/atb and mindie ``version.info``: indented, keys with spaces,
  ``key:value`` without blanks).

Nothing here reads files or raises on odd input: unknown lines are skipped.

A file's text is recorded here, field by field, for the snapshot, doctor, lock and report: a secret
PEM block in it (a private key pasted into a ``version.info``) is removed first, whole
(``redact.without_pem``), since its lines would become fields of their own (``MIIE...AB==`` reads as
``key=value``, ``DEK-Info: ...`` as ``key: value``) that no per-value rule recognises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from ascenv.redact import without_pem

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*\Z")


def parse_key_values(text: str) -> dict[str, str]:
    """``key=value`` lines; the first ``=`` splits, one pair of surrounding quotes is dropped.

    Lines that are not ``key=value`` (prompts, blank lines, ``#`` comments, garbage) are skipped;
    a repeated key keeps its last value, as a shell ``source`` would.
    """
    fields: dict[str, str] = {}
    for line in without_pem(text).splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        key = key.strip()
        if not _KEY.match(key):
            continue
        fields[key] = _unquote(value.strip())
    return fields


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def parse_colon_fields(text: str) -> dict[str, str]:
    """``key : value`` / ``key: value`` / ``key:value`` lines (nnal/atb, mindie, atb-models).

    Keys may contain spaces (``Ascend-cann-atb Version``); the first ``:`` splits, so
    ``Time: 2025-02-05 03:45:45 PM CST`` keeps its clock in the value. Empty values stay empty.
    """
    fields: dict[str, str] = {}
    for line in without_pem(text).splitlines():
        key, sep, value = line.partition(":")
        key = key.strip()
        if not sep or not key or key.startswith("#"):
            continue
        fields[key] = value.strip()
    return fields


# --- compatible_version ranges ----------------------------------------------------------------


@dataclass(frozen=True)
class VersionRange:
    """One ``[low]`` or ``[low,high]`` element of a ``compatible_version*`` list.

    Bounds are the raw strings: ``[23.0.0,23.0.0.]`` keeps ``high == "23.0.0."`` (the trailing dot
    is how firmware writes "every 23.0.0.x"); comparing them is the version module's job.
    """

    low: str
    high: Optional[str] = None  # None for a single-element ``[V100R001C30]``

    @property
    def raw(self) -> str:
        return f"[{self.low}]" if self.high is None else f"[{self.low},{self.high}]"


_RANGE = re.compile(r"\[([^\[\]]*)\]")


def parse_compatible_versions(value: str) -> tuple[VersionRange, ...]:
    """``[V100R001C30],[V100R001C13]`` / ``[7.0.0,7.7.99]`` / ``[23.0.0,23.0.0.],[24.0,24.0.]``."""
    ranges = []
    for inner in _RANGE.findall(value or ""):
        parts = [p.strip() for p in inner.split(",")]
        if not parts[0]:
            continue
        if len(parts) == 1:
            ranges.append(VersionRange(parts[0]))
        elif len(parts) == 2 and parts[1]:
            ranges.append(VersionRange(parts[0], parts[1]))
    return tuple(ranges)


def parse_requirement(value: str) -> tuple[str, ...]:
    """``>=7.6, <=8.2`` (already unquoted) → ``(">=7.6", "<=8.2")``; ``8.2`` → ``("8.2",)``."""
    return tuple(part.strip() for part in (value or "").split(",") if part.strip())


# --- version.cfg ------------------------------------------------------------------------------


@dataclass(frozen=True)
class VersionPair:
    inner: str  # component version: 7.6.0.1.220, 1.84.15.1.310, 7.6.T13.0.B094
    cann: str  # CANN version: 8.0.0, 6.0.1, 8.0.T63


@dataclass(frozen=True)
class VersionCfgEntry:
    component: str  # runtime, compiler, hccl, opp, toolkit, aoe, ncs, opp_kernel, ...
    state: str  # running, upgrade, installed
    pairs: tuple[VersionPair, ...]


@dataclass(frozen=True)
class VersionCfg:
    format_version: Optional[str]  # "1.0" from "# version: 1.0"; None when the header is absent
    entries: tuple[VersionCfgEntry, ...]

    def get(self, component: str, state: str = "running") -> tuple[VersionPair, ...]:
        for entry in self.entries:
            if entry.component == component and entry.state == state:
                return entry.pairs
        return ()

    @property
    def cann_versions(self) -> tuple[str, ...]:
        """Every CANN version named in the file, in order of first appearance."""
        seen: dict[str, None] = {}
        for entry in self.entries:
            for pair in entry.pairs:
                seen.setdefault(pair.cann, None)
        return tuple(seen)


_CFG_LINE = re.compile(r"(?P<component>\w+?)_(?P<state>running|upgrade|installed)_version\s*=\s*(?P<value>.*)\Z")
_CFG_HEADER = re.compile(r"#\s*version\s*:\s*(?P<version>\S+)")
_PAIR = re.compile(r"\[\s*([^\[\]:]+?)\s*:\s*([^\[\]]+?)\s*\]")


def parse_version_cfg(text: str) -> VersionCfg:
    format_version = None
    entries = []
    for line in without_pem(text).splitlines():
        line = line.strip()
        header = _CFG_HEADER.match(line)
        if header and format_version is None:
            format_version = header.group("version")
            continue
        match = _CFG_LINE.match(line)
        if not match:
            continue
        pairs = tuple(VersionPair(inner, cann) for inner, cann in _PAIR.findall(match.group("value")))
        entries.append(VersionCfgEntry(match.group("component"), match.group("state"), pairs))
    return VersionCfg(format_version, tuple(entries))
