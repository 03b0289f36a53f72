"""Bench runs kept in the build store, one JSON file per run, written atomically:

- ``<store>/<op>/<key>/bench/<run>.json`` for a run of a stored build (``--build KEY``);
- ``<store>/<op>/.bench/runs/<run>.json`` for a run imported without a build (the dot keeps it
  out of the store's build listing);
- ``<store>/<op>/.bench/baselines.json``: the accepted baseline run of each target.

A run file is ``{"schema": 1, "run": {...}}``; a file that does not read as one is reported
by name, never skipped. Store files are read as any input is (``fsutil.read_input``): a regular
file only (a FIFO would hang the read), at most ``RUN_LIMIT`` bytes (a 3 GB sparse file is not
read), JSON nested too deep is damage, not a crash. A run holds only finite, non-negative times
and counts (JSON has no NaN or Infinity: a strict reader such as jq fails on them) and names its
operator as one path component (``ascenv.names``): anything else is a damaged run, exit 2."""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional

from ascenv import serde
from ascenv.bench.baselines import BASELINES, DAMAGED, LOOSE, check_op, no_constant, read_baselines
from ascenv.bench.fingerprint import Fingerprint
from ascenv.bench.records import Clock, Record, Run
from ascenv.errors import InputError, SchemaError, UsageError
from ascenv.fsutil import read_input, write_atomic
from ascenv.names import name_problem

if TYPE_CHECKING:  # bench sits above the build store, which never imports bench.store (no cycle)
    from ascenv.store import Store

SCHEMA = 1
# A run keeps every launch's duration: readers.MAX_LAUNCHES of them take about 160 MiB of JSON.
# An import whose run would be larger is refused before it is written, so every run ascenv
# writes, it can read back.
RUN_LIMIT = 512 << 20


def run_stamp(created: str) -> str:
    """``2026-12-01T09:48:00.123456Z`` -> ``20261201T094800Z``: the second a run was created."""
    return created.replace("-", "").replace(":", "").split(".")[0].rstrip("Z") + "Z"


def run_id(created: str, payload: str) -> str:
    """``20261201T094800Z-1a2b3c4d``: sortable by time, unique by content."""
    return f"{run_stamp(created)}-{hashlib.sha256(payload.encode()).hexdigest()[:8]}"


_RUN_NAME = re.compile(r"(\d{8}T\d{6}Z)-[0-9a-f]{8}")
READ_BACK = 5  # up_to reads at most this many files per run it keeps


def dumps_run(run: Run) -> str:
    """Indented, one line per record: json's indenting encoder is pure Python and slow on a run
    that holds every launch's duration (200,000 of them took seconds), the compact one is not.
    Strict JSON: a NaN or an infinity is a ValueError here, never ``NaN`` in a file."""
    data = {k: v for k, v in run_data(run, durations=False).items() if k != "records"}
    head = json.dumps({"schema": SCHEMA, "run": data}, indent=1, ensure_ascii=False, allow_nan=False)
    close = "\n }\n}"
    lines = "".join(("\n   " if i == 0 else ",\n   ") + _record_line(r) for i, r in enumerate(run.records))
    return head[: -len(close)] + ',\n  "records": [' + lines + ("\n  ]" if run.records else "]") + close + "\n"


def _record_line(r: Record) -> str:
    """One record as json.dumps writes it, its durations written in slices: a list of a million
    float objects (32 bytes each) is not made for them."""
    data = record_data(r, durations=False)
    text = json.dumps(data, ensure_ascii=False, allow_nan=False)
    before, marker, after = text.partition('"durations": []')
    assert marker, "record_data keeps the durations key"
    return before + '"durations": [' + _floats(r.durations) + "]" + after


def _floats(values: Sequence[float], step: int = 1 << 16) -> str:
    if values and not (min(values) >= 0 and max(values) < math.inf):  # NaN fails both
        raise ValueError(f"durations out of range: {min(values)} .. {max(values)}")
    parts = []
    for start in range(0, len(values), step):
        parts.append(", ".join(map(float.__repr__, values[start : start + step])))  # as json.dumps does
    return ", ".join(parts)


def loads_run(text: str, source: str) -> Run:
    try:
        data = json.loads(text, parse_constant=no_constant)
    except RecursionError:
        raise InputError(f"{source}: not an ascenv bench run (JSON nested too deep)") from None
    except ValueError as exc:
        raise InputError(f"{source}: not valid JSON: {exc}") from None
    run = _loads_run(data, source)
    problem = _run_problem(run)
    if problem:
        raise InputError(f"{source}: {problem}")
    return run


def _run_problem(run: Run) -> Optional[str]:
    """What makes a parsed run unusable (a path for an operator, a time that is not a time), or
    None. JSON's 1e400 reads as an infinity; NaN and Infinity are refused by the parser."""
    problem = name_problem(run.op)
    if problem:
        return f"run.op {run.op[:100]!r}: an operator name is one directory name: {problem}"
    for i, r in enumerate(run.records):
        where = f"run.records[{i}]"
        for name in ("durations", "peers"):
            values = getattr(r, name)
            if values and not (min(values) >= 0 and max(values) < math.inf):
                return f"{where}.{name}: expected finite times, zero or more"
        for name in ("duration_us", "duration_min_us", "duration_max_us"):
            if not 0 <= getattr(r, name) < math.inf:
                return f"{where}.{name}: expected a finite time, zero or more, found {getattr(r, name)!r}"
        counts = {"samples": r.samples, "block_dim": r.block_dim, "mix_block_dim": r.mix_block_dim}
        counts.update(current_mhz=r.clock.current_mhz, rated_mhz=r.clock.rated_mhz)
        for name, value in counts.items():
            if value is not None and value < 0:
                return f"{where}.{name}: expected a count, zero or more, found {value!r}"
        for metric, number in r.metrics.items():
            if not math.isfinite(number):
                return f"{where}.metrics.{metric}: expected a finite number, found {number!r}"
    return None


def _loads_run(data: Any, source: str) -> Run:
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        found = data.get("schema") if isinstance(data, dict) else None
        raise InputError(f"{source}: schema: this ascenv reads bench runs of schema {SCHEMA}, found {found!r}")
    fast = _run(data.get("run"))
    if fast is not None:
        return fast
    try:  # serde finds the key path of what is wrong (or builds what the fast path does not know)
        return serde.from_data(Run, data.get("run"), "run")
    except SchemaError as exc:
        raise InputError(f"{source}: {exc}") from None


# --- the Run type to plain data and back, without serde's per-value type dispatch --------------
# A run holds every launch's duration: generic (de)serialisation of 1,000 stored runs took most of
# a second. These are exact: run_data equals serde.to_data, and _run returns the Run that
# serde.from_data builds, or None (then serde reads the data and names the bad key).
def record_data(r: Record, durations: bool = True) -> dict[str, Any]:
    return {
        "op": r.op,
        "input_shapes": r.input_shapes,
        "input_dtypes": r.input_dtypes,
        "input_formats": r.input_formats,
        "task_type": r.task_type,
        "samples": r.samples,
        "durations": list(r.durations) if durations else [],
        "duration_us": r.duration_us,
        "duration_min_us": r.duration_min_us,
        "duration_max_us": r.duration_max_us,
        "duration_stat": r.duration_stat,
        "block_dim": r.block_dim,
        "mix_block_dim": r.mix_block_dim,
        "metrics": dict(r.metrics),
        "metric_set": r.metric_set,
        "clock": {"current_mhz": r.clock.current_mhz, "rated_mhz": r.clock.rated_mhz},
        "tool": r.tool,
        "tiling": serde.to_data(r.tiling),
        "peers": list(r.peers),
    }


def run_data(run: Run, durations: bool = True) -> dict[str, Any]:
    return {
        "id": run.id,
        "op": run.op,
        "target": run.target,
        "tool": run.tool,
        "created": run.created,
        "source": run.source,
        "files": list(run.files),
        "skipped_rows": run.skipped_rows,
        "fingerprint": {name: getattr(run.fingerprint, name) for name in _FINGERPRINT},
        "records": [record_data(r, durations) for r in run.records],
    }


_FINGERPRINT = tuple(f.name for f in fields(Fingerprint))
_FINGERPRINT_INT = {"host_cores": int, "downclocked": bool}
_RECORD = frozenset(f.name for f in fields(Record))
_RECORD_OPTIONAL = frozenset(("duration_stat", "block_dim", "mix_block_dim", "metrics", "metric_set", "clock"))
_RECORD_OPTIONAL |= {"tool", "tiling", "peers"}
_RUN = frozenset(f.name for f in fields(Run))


def _text(value: Any) -> bool:
    if type(value) is not str:
        return False
    if value.isascii():
        return True
    try:
        value.encode("utf-8")  # a lone surrogate from a JSON escape: serde names it
    except UnicodeEncodeError:
        return False
    return True


def _maybe_text(value: Any) -> bool:
    return value is None or _text(value)


def _maybe_int(value: Any) -> bool:
    return value is None or type(value) is int


def _number(value: Any) -> Optional[float]:
    kind = type(value)
    return value if kind is float else float(value) if kind is int else None


def _numbers(values: Any) -> Optional[array[float]]:
    if type(values) is not list:
        return None
    if all(type(v) is float for v in values):
        return array("d", values)
    found = [_number(v) for v in values]
    return None if None in found else array("d", found)  # type: ignore[arg-type]


def _fingerprint(data: Any) -> Optional[Fingerprint]:
    if type(data) is not dict or not data.keys() <= set(_FINGERPRINT):
        return None
    for name, value in data.items():
        kind = _FINGERPRINT_INT.get(name)
        if not (value is None or (type(value) is kind if kind else _text(value))):
            return None
    return Fingerprint(**data)


def _record(data: Any) -> Optional[Record]:
    if type(data) is not dict or not data.keys() <= _RECORD or not _RECORD - _RECORD_OPTIONAL <= data.keys():
        return None
    durations = _numbers(data["durations"])
    numbers = [_number(data[name]) for name in ("duration_us", "duration_min_us", "duration_max_us")]
    if durations is None or None in numbers or type(data["samples"]) is not int or not _text(data["op"]):
        return None
    if not all(_maybe_text(data[n]) for n in ("input_shapes", "input_dtypes", "input_formats", "task_type")):
        return None
    extra: dict[str, Any] = {}
    for name in ("duration_stat", "metric_set", "tool"):
        if name in data:
            if not _text(data[name]):
                return None
            extra[name] = data[name]
    for name in ("block_dim", "mix_block_dim"):
        if name in data:
            if not _maybe_int(data[name]):
                return None
            extra[name] = data[name]
    if "metrics" in data:
        metrics = data["metrics"]
        if type(metrics) is not dict or not all(_text(k) for k in metrics):
            return None
        values = {k: _number(v) for k, v in metrics.items()}
        if None in values.values():
            return None
        extra["metrics"] = values
    if "clock" in data:
        clock = data["clock"]
        if type(clock) is not dict or not clock.keys() <= {"current_mhz", "rated_mhz"}:
            return None
        if not all(_maybe_int(v) for v in clock.values()):
            return None
        extra["clock"] = Clock(**clock)
    if "tiling" in data:
        if type(data["tiling"]) is not dict or not all(_text(k) for k in data["tiling"]):
            return None
        extra["tiling"] = data["tiling"]
    if "peers" in data:
        peers = _numbers(data["peers"])
        if peers is None:
            return None
        extra["peers"] = tuple(peers)
    return Record(
        data["op"],
        data["input_shapes"],
        data["input_dtypes"],
        data["input_formats"],
        data["task_type"],
        data["samples"],
        durations,
        *numbers,  # type: ignore[arg-type]
        **extra,
    )


def _run(data: Any) -> Optional[Run]:
    if type(data) is not dict or data.keys() != _RUN:
        return None
    texts = ("id", "op", "target", "tool", "created", "source")
    files = data["files"]
    if not all(_text(data[n]) for n in texts) or type(data["skipped_rows"]) is not int:
        return None
    if type(files) is not list or not all(_text(f) for f in files):
        return None
    fingerprint = _fingerprint(data["fingerprint"])
    if fingerprint is None or type(data["records"]) is not list:
        return None
    records = [_record(r) for r in data["records"]]
    if None in records:
        return None
    return Run(
        data["id"],
        data["op"],
        data["target"],
        data["tool"],
        data["created"],
        data["source"],
        tuple(files),
        data["skipped_rows"],
        fingerprint,
        tuple(records),  # type: ignore[arg-type]
    )


@dataclass(frozen=True)
class StoredRun:
    run: Run
    path: Path


class BenchStore:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.root = store.root

    def run_dir(self, op: str, build_key: Optional[str]) -> Path:
        if build_key:
            return self.store.entry_dir(check_op(op), build_key) / "bench"
        return self.root / check_op(op) / LOOSE / "runs"

    def write(self, run: Run) -> Path:
        directory = self.run_dir(run.op, run.fingerprint.build_key)
        text = dumps_run(run)
        if len(text) > RUN_LIMIT:  # characters: at least as many bytes
            raise InputError(
                f"the run of {run.op} would take {len(text) >> 20} MiB, more than the {RUN_LIMIT >> 20} MiB "
                "a run file may hold",
                hint="import fewer launches at a time (one PROF_* directory, one device, a shorter session)",
            )
        path = directory / f"{run.id}.json"
        write_in_store(self.root, path, text, "the bench run")
        return path

    def paths(self, op: Optional[str] = None) -> list[Path]:
        """The run files (of ``op``), unread, in the order ``runs`` reads them."""
        if op:
            check_op(op)
        if not self.root.is_dir():
            return []
        ops = [self.root / op] if op else sorted(p for p in self.root.iterdir() if not p.name.startswith("."))
        found: list[Path] = []
        for op_dir in ops:
            if op_dir.is_dir():
                found += list((op_dir / LOOSE / "runs").glob("*.json")) + list(op_dir.glob("*/bench/*.json"))
        return found

    def runs(self, op: Optional[str] = None) -> list[StoredRun]:
        """Every run (of ``op``), newest first."""
        return _newest_first([_load(path) for path in self.paths(op)])

    def newest(self, op: Optional[str], count: int) -> tuple[list[StoredRun], int]:
        """``runs(op)[:count]`` and the number of runs, reading only the newest files where their
        names say which they are (see ``_first``)."""
        paths = self.paths(op)
        seconds: dict[str, list[Path]] = {}
        for path in paths:
            named = _RUN_NAME.fullmatch(path.stem)
            if not named:
                return self.runs(op)[:count], len(paths)
            seconds.setdefault(named.group(1), []).append(path)
        found: list[StoredRun] = []
        for second in sorted(seconds, reverse=True):
            if len(found) >= count:
                break
            group = [_load(path) for path in seconds[second]]
            if any(s.run.id != s.path.stem or run_stamp(s.run.created) != second for s in group):
                return self.runs(op)[:count], len(paths)
            found += group
        return _newest_first(found)[:count], len(paths)

    def _first(self, paths: list[Path], keep: Callable[[Run], bool]) -> tuple[bool, Optional[StoredRun]]:
        """The first run of ``paths``, newest first, that ``keep`` accepts; as ``runs`` would find
        it, reading one second of runs at a time from the newest: a run file is named by its id,
        which starts with the second the run was created (``run_id``), so no file of an older
        second holds a newer run. (False, None) where a name does not say that."""
        seconds: dict[str, list[Path]] = {}
        for path in paths:
            named = _RUN_NAME.fullmatch(path.stem)
            if not named:
                return False, None
            seconds.setdefault(named.group(1), []).append(path)
        for second in sorted(seconds, reverse=True):
            group = [_load(path) for path in seconds[second]]
            for stored in group:
                if stored.run.id != stored.path.stem or run_stamp(stored.run.created) != second:
                    return False, None
            found = next((s for s in _newest_first(group) if keep(s.run)), None)
            if found is not None:
                return True, found
        return True, None

    def up_to(self, op: str, run: Run, keep: Callable[[Run], bool], count: int) -> list[Run]:
        """The newest ``count`` runs of ``op`` created no later than ``run`` that ``keep`` accepts,
        newest first, reading at most ``READ_BACK`` times ``count`` files (one second of runs at a
        time, as ``newest``): what ``bench compare`` reads the noise between runs from. A run file
        not named by its id has every run read."""
        paths = self.paths(op)
        seconds: dict[str, list[Path]] = {}
        for path in paths:
            named = _RUN_NAME.fullmatch(path.stem)
            if not named:
                found = [s.run for s in self.runs(op) if s.run.created <= run.created and keep(s.run)]
                return found[:count]
            seconds.setdefault(named.group(1), []).append(path)
        kept: list[StoredRun] = []
        read = 0
        last = run_stamp(run.created)
        for second in sorted((s for s in seconds if s <= last), reverse=True):
            if len(kept) >= count or read >= READ_BACK * count:
                break
            group = [_load(path) for path in seconds[second]]
            read += len(group)
            kept += [s for s in group if s.run.created <= run.created and keep(s.run)]
        return [s.run for s in _newest_first(kept)[:count]]

    def newest_where(self, op: Optional[str], keep: Callable[[Run], bool]) -> Optional[StoredRun]:
        """The newest run (of ``op``) that ``keep`` accepts, or None; reading one second of runs
        at a time where the files' names allow it (``_first``), every run otherwise."""
        paths = self.paths(op)
        named, found = self._first(paths, keep)
        if named:
            return found
        return next((s for s in self.runs(op) if keep(s.run)), None)

    def baselines(self, op: str) -> dict[str, str]:
        return read_baselines(self.root, op)

    def set_baseline(self, stored: StoredRun) -> None:
        run = stored.run
        if run.fingerprint.downclocked:
            raise UsageError(
                f"run {run.id} was measured on a down-clocked chip (Current Freq below Rated Freq)",
                hint="measure again at the rated clock; a down-clocked run never becomes a baseline",
            )
        with contextlib.ExitStack() as held:
            try:
                held.enter_context(self.store.lock("bench"))
            except OSError as exc:  # the store cannot be written: its lock file cannot be made
                raise UsageError(
                    f"cannot write the baselines to {self.root}: {exc.strerror or exc}",
                    hint="choose a store that can be written with --store DIR (or ASCENV_STORE)",
                ) from None
            current = self.baselines(run.op)
            current[run.target] = run.id
            path = self.root / check_op(run.op, "run.op") / LOOSE / BASELINES
            text = json.dumps(current, indent=1, sort_keys=True, allow_nan=False) + "\n"
            write_in_store(self.root, path, text, "the baselines")

    def resolve(self, name: str, op: Optional[str], target: Optional[str] = None) -> StoredRun:
        """A run by id (or its first 6+ characters), a build key prefix (its newest run), or
        ``baseline`` / ``latest`` of ``op``. Reads only the run files it needs where their names
        say enough (``_first``), every run otherwise."""
        found = self._resolve_by_name(name, op, target)
        return found if found is not None else self._resolve(name, op, target, self.runs(op))

    def _resolve_by_name(self, name: str, op: Optional[str], target: Optional[str]) -> Optional[StoredRun]:
        """``resolve`` from the files it names, or None where every run must be read (a build key
        prefix, no run, an operator not said, a file not named by its run's id)."""
        paths = self.paths(op)
        if not all(_RUN_NAME.fullmatch(p.stem) for p in paths):
            return None  # a run may be in a file named otherwise

        def wanted(run: Run) -> bool:
            return target is None or run.target == target

        if name == "latest":
            return self._first(paths, wanted)[1]
        if name == "baseline":
            dirs = {path.relative_to(self.root).parts[0] for path in paths}
            newest = self._first(paths, wanted)[1] if len(dirs) == 1 else None
            if newest is None or newest.run.op != dirs.pop():
                return None
            chosen = self.baselines(newest.run.op)
            ids = {chosen[t] for t in ([target] if target else chosen) if t in chosen}
            return self._first([p for p in paths if p.stem in ids], lambda run: wanted(run) and run.id in ids)[1]
        if len(name) < 6:
            return None
        candidates = [p for p in paths if p.stem.startswith(name)]
        first = self._first(candidates, lambda run: wanted(run) and run.id.startswith(name))[1]
        if first is None:
            return None
        others = [p for p in candidates if p != first.path and wanted(_load(p).run)]
        if any(_load(p).run.id != first.run.id for p in others):
            return None  # several runs start with it: resolve says so
        return first

    def _resolve(self, name: str, op: Optional[str], target: Optional[str], runs: list[StoredRun]) -> StoredRun:
        if target:
            runs = [s for s in runs if s.run.target == target]
        where = f"{op}'s runs" if op else f"the runs in {self.root}"
        if name == "latest":
            if not runs:
                raise UsageError(f"no bench run in {where}", hint="import one with: ascenv bench import PATH --op OP")
            return runs[0]
        if name == "baseline":
            ops = {s.run.op for s in runs}
            if len(ops) != 1:
                raise UsageError(
                    "say which operator's baseline: --op OP",
                    hint=f"operators with runs: {', '.join(sorted(ops)) or 'none'}",
                )
            chosen = self.baselines(ops.pop())
            wanted = {chosen[t] for t in ([target] if target else chosen) if t in chosen}
            matches = [s for s in runs if s.run.id in wanted]
            if not matches:
                raise UsageError(
                    f"no baseline set for {where}", hint="accept a run with: ascenv bench baseline set RUN"
                )
            return matches[0]
        if len(name) < 6:
            raise UsageError(f"a run id or build key prefix needs at least 6 characters, found {name!r}")
        matches = [s for s in runs if s.run.id.startswith(name)]
        if not matches:
            matches = [s for s in runs if (s.run.fingerprint.build_key or "").startswith(name)][:1]
        if not matches:
            raise UsageError(
                f"no bench run or build key starting with {name!r} in {where}",
                hint="list them with: ascenv bench history OP",
            )
        if len({s.run.id for s in matches}) > 1:
            raise UsageError(f"{len(matches)} runs start with {name!r}", hint="give more characters")
        return matches[0]


def _load(path: Path) -> StoredRun:
    return StoredRun(loads_run(read_run_text(path), str(path)), path)


def read_run_text(path: Path) -> str:
    """A run file's text, read as an input (``fsutil.read_input``), or an InputError naming it."""
    data = read_input(path, what="bench run", limit=RUN_LIMIT, hint=DAMAGED)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason})", hint=DAMAGED) from None


def write_in_store(root: Path, path: Path, text: str, what: str) -> None:
    """``write_atomic`` of ``path`` below the store ``root``, the directories made first. Nothing
    below the root is followed where it is a symlink (a shared store's ``<op>/.bench`` or
    ``baselines.json`` planted as a link would have the write land outside it); a store that
    cannot be written (a read-only directory or file system, a full disk) is exit 2 naming it."""
    step = root
    for part in path.relative_to(root).parts:
        step = step / part
        if step.is_symlink():
            raise InputError(
                f"{step} is a symlink: ascenv writes no bench file through a link inside the store",
                hint="remove the link; the store's directories are made by ascenv",
            )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, text)
    except OSError as exc:
        raise UsageError(
            f"cannot write {what} to {path}: {exc.strerror or exc}",
            hint="choose a store that can be written with --store DIR (or ASCENV_STORE)",
        ) from None


def _newest_first(found: Iterable[StoredRun]) -> list[StoredRun]:
    return sorted(found, key=lambda s: (s.run.created, s.run.id), reverse=True)


def new_run(
    *,
    op: str,
    target: str,
    tool: str,
    created: str,
    source: str,
    files: tuple[str, ...],
    skipped_rows: int,
    fingerprint: Fingerprint,
    records: tuple[Record, ...],
) -> Run:
    # the records as the run file writes them: no list of every duration as float objects
    payload = "\n".join(_record_line(r) for r in records) + source + created
    return Run(run_id(created, payload), op, target, tool, created, source, files, skipped_rows, fingerprint, records)


@dataclass(frozen=True)
class BuildRun:
    """One file of a build's ``bench/`` folder as ``ascenv store ls | show`` list it; a file that
    does not read as a run keeps its name and why (``damaged``), the other fields then None."""

    name: str  # the file name below bench/
    id: Optional[str] = None
    created: Optional[str] = None
    tool: Optional[str] = None
    target: Optional[str] = None
    records: Optional[int] = None
    baseline: bool = False
    damaged: Optional[str] = None


def build_runs(entry_path: Path, baselines: dict[str, str]) -> tuple[BuildRun, ...]:
    """The runs in ``<entry>/bench/``, newest first, damaged ones (by name) last; read at the
    time they are listed, since the entry's manifest cannot list them (see ascenv.store)."""
    chosen = set(baselines.values())
    good: list[BuildRun] = []
    damaged: list[BuildRun] = []
    for path in sorted((entry_path / "bench").glob("*.json")):
        try:
            run = loads_run(read_run_text(path), str(path))
        except InputError as exc:
            damaged.append(BuildRun(path.name, damaged=exc.message))
            continue
        good.append(BuildRun(path.name, run.id, run.created, run.tool, run.target, len(run.records), run.id in chosen))
    good.sort(key=lambda r: (r.created or "", r.id or ""), reverse=True)
    return tuple(good + damaged)
