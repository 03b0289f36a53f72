"""Judge what a scan found (stale? in use? protected?) and turn filters into a plan. Pure:
everything about the machine (installed CANNs, vendors, processes) is passed in."""

from __future__ import annotations

import bisect
import datetime
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Callable, Optional

from ascenv.cache.entry import FOREIGN, KINDS, RECENT, CacheEntry, CacheReport, CannRecord, VendorRecord, display_path
from ascenv.errors import UsageError
from ascenv.words import counted

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_age(text: str) -> float:
    """``7d``, ``12h``, ``30m``, ``2w``, ``90s`` → seconds; a bare ``0`` is zero in any unit."""
    if re.fullmatch(r"\s*0+(?:\.0*)?\s*", text):
        return 0.0
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", text)
    if not match:
        raise UsageError(
            f"cannot read the age {text!r}", hint="write a number and a unit: 90s, 30m, 12h, 7d, 2w (or 0)"
        )
    return float(match.group(1)) * _UNITS[match.group(2)]


def recent_cutoff(now: float, recent: float) -> float:
    """Files modified at or after this time stay; --recent 0 protects none (a file stamped in
    the future by a skewed clock too)."""
    return now - recent if recent > 0 else float("inf")


def format_age(seconds: Optional[float]) -> str:
    """``3d``, ``2h``, ``5m``, ``40s``: the AGE column and the skip reasons."""
    if seconds is None:
        return "-"
    for unit, span in (("w", 7 * 86400), ("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= span:
            return f"{int(seconds // span)}{unit}"
    return f"{max(int(seconds), 0)}s"


def kept_reasons(entry: CacheEntry, now: Optional[float]) -> list[str]:
    """Why files of the entry stay, one line per rule, each naming a file (and, given ``now``,
    how long ago the latest recent one was modified)."""
    lines = []
    for kept in entry.kept:
        path = display_path(kept.example)
        files = counted(kept.files, "file")
        if kept.rule == RECENT:
            latest = "the latest" if now is None else f"the latest {format_age(now - kept.mtime)} ago"
            lines.append(f"{files} modified within --recent, {latest}: {path}")
        elif kept.rule == FOREIGN:
            lines.append(f"{files} of other users (see --all-users), e.g. uid {kept.uid}: {path}")
        else:
            lines.append(f"{files} of CANN's cache settings, always kept: {path}")
    return lines


def compute_unit(soc: str) -> str:
    """The custom-operator compute unit of a SoC directory name: lower-cased Short_SoC_version
    (Ascend910B4 → ascend910b, Ascend910_9382 → ascend910_93, Ascend310P3 → ascend310p).
    From CANN 8.1.RC1 platform_config/*.ini:
    github:leideng/CANN-8.1.RC1@551ed27c29284929bbdc2239e929ddfedfdf0b8b:Ascend/ascend-toolkit/8.1.RC1/aarch64-linux/data/platform_config/."""
    name = soc.lower()
    match = re.fullmatch(r"(ascend910_9\d)\d*", name) or re.fullmatch(r"(ascend\d{3}[a-z])\d.*", name)
    return match.group(1) if match else name


def _date(ts: float) -> str:
    return datetime.datetime.fromtimestamp(ts, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def assess(
    report: CacheReport,
    *,
    canns: Sequence[CannRecord] = (),
    vendors: Sequence[VendorRecord] = (),
    npu_pids: Sequence[int] = (),
    busy: Iterable[tuple[str, int]] = (),
) -> CacheReport:
    """Mark each entry stale / in use and infer the CANN that wrote it.

    Stale: it holds files written before every installed CANN was installed (so by a CANN no
    longer installed: the installers rewrite their install.info), or, for caches the runtime
    reads back, files compiled before an operator package that may use them was last
    (re)installed. ``busy``: (path, pid) of files open by, or working directories of, running
    processes. ``npu_pids``: processes on the NPU (npu-smi); they compile into the kernel
    caches at any time, so those are in use while any runs.
    """
    installs = sorted(((c.installed_at, c) for c in canns if c.installed_at is not None), key=lambda p: p[0])
    users_of = _users_index(busy)
    entries = []
    for entry in report.entries:
        reasons: list[str] = []
        version = None
        if installs and entry.newest is not None:
            before = [c for at, c in installs if at <= entry.newest]
            if before:
                version = before[-1].version
            first_at, first = installs[0]
            if entry.oldest is not None and entry.oldest < first_at:
                reasons.append(
                    f"holds files from {_date(entry.oldest)}, before any installed CANN "
                    f"(first: {first.version or first.path}, {_date(first_at)})"
                )
        kind = KINDS.get(entry.kind)
        if kind is not None and kind.serves_operators and entry.oldest is not None:
            unit = compute_unit(entry.soc) if entry.soc else None
            for vendor in vendors:
                serves = not vendor.compute_units or unit is None or unit in vendor.compute_units
                if serves and vendor.installed_at is not None and entry.oldest < vendor.installed_at:
                    reasons.append(
                        f"holds kernels compiled before vendor {vendor.name} was (re)installed "
                        f"({_date(vendor.installed_at)})"
                    )
        in_use = entry.in_use  # what its owner already knows (a running container, ...)
        users = users_of(entry.path)
        if in_use:
            pass
        elif users:
            in_use = "open or used as working directory by pid " + ", ".join(map(str, users))
        elif npu_pids and kind is not None and kind.serves_operators:
            in_use = (
                "NPU processes are running (pid " + ", ".join(map(str, sorted(npu_pids))) + ") and may compile into it"
            )
        entries.append(
            replace(entry, stale=bool(reasons), stale_reasons=tuple(reasons), cann_version=version, in_use=in_use)
        )
    return replace(report, entries=tuple(entries))


def _users_index(busy: Iterable[tuple[str, int]]) -> Callable[[str], list[int]]:
    """``users_of(path)``: the sorted pids of ``busy`` whose path ``is_within(.., path)``. The
    busy paths (every open file of the user's processes: thousands) are sorted once, so each
    entry looks up the ones below it by bisection instead of testing them all."""
    pairs = sorted(busy)
    paths = [path for path, _ in pairs]
    exact: dict[str, set[int]] = {}
    for path, pid in pairs:
        exact.setdefault(path, set()).add(pid)

    def users_of(root: str) -> list[int]:
        prefix = root.rstrip("/") + "/"  # is_within: the root itself, or a path starting with this
        low = bisect.bisect_left(paths, prefix)
        high = bisect.bisect_left(paths, prefix[:-1] + chr(ord("/") + 1), low)  # past every prefix + ...
        return sorted(exact.get(root, set()) | {pid for _, pid in pairs[low:high]})

    return users_of


@dataclass(frozen=True)
class Filters:
    kinds: Optional[frozenset[str]] = None  # None: the kinds planned by default (KINDS[k].default)
    older_than: Optional[float] = None  # seconds since the newest file
    socs: Optional[frozenset[str]] = None  # lower-cased SoC names or compute units
    stale: bool = False


def matches(entry: CacheEntry, filters: Filters, now: float, *, listing: bool = False) -> bool:
    """Does the entry pass the filters? A listing without --kind shows every kind."""
    if filters.kinds is not None:
        if entry.kind not in filters.kinds:
            return False
    elif not listing and not KINDS[entry.kind].default:
        return False
    if filters.older_than is not None and (entry.newest is None or now - entry.newest < filters.older_than):
        return False
    if filters.socs is not None:
        if entry.soc is None or not {entry.soc.lower(), compute_unit(entry.soc)} & filters.socs:
            return False
    return not filters.stale or entry.stale


@dataclass(frozen=True)
class Skipped:
    entry: CacheEntry
    reason: str


@dataclass(frozen=True)
class Plan:
    entries: tuple[CacheEntry, ...] = ()
    skipped: tuple[Skipped, ...] = ()  # matched the filters, left alone (protected, in use, ...)

    @property
    def bytes(self) -> int:
        return sum(e.freeable for e in self.entries)

    @property
    def files(self) -> int:
        return sum(e.freeable_files for e in self.entries)

    @property
    def kept_files(self) -> int:
        return sum(e.kept_files for e in self.entries)


def make_plan(report: CacheReport, filters: Filters, now: float) -> Plan:
    """The entries a delete would remove, and those that match but stay (with why)."""
    chosen: list[CacheEntry] = []
    skipped: list[Skipped] = []
    for entry in report.entries:
        if not matches(entry, filters, now):
            continue
        if entry.protected:
            skipped.append(Skipped(entry, f"never deleted: {entry.protected}"))
        elif entry.in_use:
            skipped.append(Skipped(entry, f"in use: {entry.in_use}"))
        elif entry.kept_files and not entry.freeable_files and not entry.freeable:
            # nothing would go: planning it would promise a delete that frees nothing, every run
            skipped.append(
                Skipped(
                    entry,
                    "nothing in it would be deleted: " + "; ".join(kept_reasons(entry, now) or ["every file stays"]),
                )
            )
        else:
            chosen.append(entry)
    return Plan(tuple(chosen), tuple(skipped))
