"""Bench runs kept in the build store, one JSON file per run, written atomically:

- ``<store>/<op>/<key>/bench/<run>.json`` for a run of a stored build (``--build KEY``);
- ``<store>/<op>/.bench/runs/<run>.json`` for a run imported without a build (the dot keeps it
  out of the store's build listing);
- ``<store>/<op>/.bench/baselines.json``: the accepted baseline run of each target.

A run file is ``{"schema": 1, "run": {...}}``; a file that does not read as one is reported
by name, never skipped."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from ascenv import serde
from ascenv.bench.fingerprint import Fingerprint
from ascenv.bench.records import Record, Run
from ascenv.errors import InputError, SchemaError, UsageError
from ascenv.fsutil import write_atomic

if TYPE_CHECKING:  # the build store lists a build's runs through ``build_runs``: no import cycle
    from ascenv.store import Store

SCHEMA = 1
LOOSE = ".bench"
BASELINES = "baselines.json"


def run_id(created: str, payload: str) -> str:
    """``20261201T094800Z-1a2b3c4d``: sortable by time, unique by content."""
    stamp = created.replace("-", "").replace(":", "").split(".")[0].rstrip("Z") + "Z"
    return f"{stamp}-{hashlib.sha256(payload.encode()).hexdigest()[:8]}"


def dumps_run(run: Run) -> str:
    return json.dumps({"schema": SCHEMA, "run": serde.to_data(run)}, indent=1, ensure_ascii=False) + "\n"


def loads_run(text: str, source: str) -> Run:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InputError(f"{source}: not valid JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        found = data.get("schema") if isinstance(data, dict) else None
        raise InputError(f"{source}: schema: this ascenv reads bench runs of schema {SCHEMA}, found {found!r}")
    try:
        return serde.from_data(Run, data.get("run"), "run")
    except SchemaError as exc:
        raise InputError(f"{source}: {exc}") from None


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
            return self.store.entry_dir(op, build_key) / "bench"
        return self.root / op / LOOSE / "runs"

    def write(self, run: Run) -> Path:
        directory = self.run_dir(run.op, run.fingerprint.build_key)
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{run.id}.json"
        write_atomic(path, dumps_run(run))
        return path

    def runs(self, op: Optional[str] = None) -> list[StoredRun]:
        """Every run (of ``op``), newest first."""
        if not self.root.is_dir():
            return []
        ops = [self.root / op] if op else sorted(p for p in self.root.iterdir() if not p.name.startswith("."))
        found = []
        for op_dir in ops:
            if not op_dir.is_dir():
                continue
            paths = list((op_dir / LOOSE / "runs").glob("*.json")) + list(op_dir.glob("*/bench/*.json"))
            for path in paths:
                found.append(StoredRun(loads_run(path.read_text(encoding="utf-8"), str(path)), path))
        return sorted(found, key=lambda s: (s.run.created, s.run.id), reverse=True)

    def baselines(self, op: str) -> dict[str, str]:
        path = self.root / op / LOOSE / BASELINES
        if not path.is_file():
            return {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise InputError(f"{path}: not valid JSON: {exc}") from None
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            raise InputError(f"{path}: expected an object of target -> run id")
        return data

    def set_baseline(self, stored: StoredRun) -> None:
        run = stored.run
        if run.fingerprint.downclocked:
            raise UsageError(
                f"run {run.id} was measured on a down-clocked chip (Current Freq below Rated Freq)",
                hint="measure again at the rated clock; a down-clocked run never becomes a baseline",
            )
        with self.store.lock("bench"):
            current = self.baselines(run.op)
            current[run.target] = run.id
            path = self.root / run.op / LOOSE / BASELINES
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, json.dumps(current, indent=1, sort_keys=True) + "\n")

    def resolve(self, name: str, op: Optional[str], target: Optional[str] = None) -> StoredRun:
        """A run by id (or its first 6+ characters), a build key prefix (its newest run), or
        ``baseline`` / ``latest`` of ``op``."""
        runs = self.runs(op)
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
    payload = json.dumps([serde.to_data(r) for r in records], sort_keys=True) + source + created
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


def read_baselines(root: Path, op: str) -> dict[str, str]:
    """``<op>/.bench/baselines.json`` of the store at ``root`` (target -> run id)."""
    path = root / op / LOOSE / BASELINES
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise InputError(f"{path}: expected an object of target -> run id")
    return data


def build_runs(entry_path: Path, baselines: dict[str, str]) -> tuple[BuildRun, ...]:
    """The runs in ``<entry>/bench/``, newest first, damaged ones (by name) last; read at the
    time they are listed, since the entry's manifest cannot list them (see ascenv.store)."""
    chosen = set(baselines.values())
    good: list[BuildRun] = []
    damaged: list[BuildRun] = []
    for path in sorted((entry_path / "bench").glob("*.json")):
        try:
            run = loads_run(path.read_text(encoding="utf-8"), str(path))
        except OSError as exc:
            damaged.append(BuildRun(path.name, damaged=f"cannot read it: {exc.strerror}"))
            continue
        except InputError as exc:
            damaged.append(BuildRun(path.name, damaged=exc.message))
            continue
        good.append(BuildRun(path.name, run.id, run.created, run.tool, run.target, len(run.records), run.id in chosen))
    good.sort(key=lambda r: (r.created or "", r.id or ""), reverse=True)
    return tuple(good + damaged)
