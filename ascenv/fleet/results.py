"""What came back from the nodes: ``<results>/<host>/result.json`` (written by the playbook for
every node, unreachable and failed ones included) read into one ``NodeResult`` per host; a node's
snapshot is also written beside it as snapshot.json (and check.json for the cluster-lock check),
so the folder is what ``ascenv diff`` reads too."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Optional

from ascenv import __version__, fsutil, lockfile
from ascenv.errors import AscenvError
from ascenv.lockfile import Lock
from ascenv.model import Snapshot
from ascenv.snapshot_io import snapshot_from_json

OK = "ok"
DRIFT = "drift"
UNREACHABLE = "unreachable"
FAILED = "failed"
RESULT = "result.json"
SNAPSHOT = "snapshot.json"
CHECK = "check.json"
MAX_RESULT = 64 << 20


@dataclass(frozen=True)
class NodeResult:
    host: str
    status: str  # OK (a snapshot came back), UNREACHABLE or FAILED
    message: str = ""
    lock: Optional[Lock] = None  # the node's stack, when its snapshot came back
    python: str = ""  # the node Python that ran the step


def read_results(results: Path) -> tuple[NodeResult, ...]:
    """Every host folder under ``results``, sorted by host name."""
    reader = StackReader()
    found = []
    for folder in sorted(p for p in results.iterdir() if (p / RESULT).is_file()):
        found.append(read_node(folder, reader))
    return tuple(found)


def read_node(folder: Path, reader: StackReader) -> NodeResult:
    host = folder.name
    try:
        record = json.loads(fsutil.read_input(str(folder / RESULT), what="fleet result", shown=host, limit=MAX_RESULT))
    except (AscenvError, ValueError) as exc:
        return NodeResult(host, FAILED, f"unreadable result: {exc}")
    if not isinstance(record, dict):
        return NodeResult(host, FAILED, "unreadable result: not a JSON object")
    if record.get("unreachable"):
        return NodeResult(host, UNREACHABLE, _line(record.get("msg")) or "unreachable")
    envelope = _envelope(record.get("stdout"))
    python = str(envelope.get("python", "")) if envelope else ""
    if envelope is None or not isinstance(envelope.get("snapshot"), dict):
        why = (envelope or {}).get("error") or record.get("msg") or record.get("stderr") or "no snapshot came back"
        rc = record.get("rc")
        prefix = f"exit {rc}: " if isinstance(rc, int) and rc != 0 else ""
        return NodeResult(host, FAILED, prefix + _line(why), python=python)
    snapshot_data = envelope["snapshot"]
    # plain writes into the run's own results folder: an fsync and an indented (pure-Python)
    # encoding per node made the fold of 1,000 nodes take seconds
    (folder / SNAPSHOT).write_text(json.dumps(snapshot_data) + "\n", encoding="utf-8")
    if envelope.get("check") is not None:
        (folder / CHECK).write_text(json.dumps(envelope["check"]) + "\n", encoding="utf-8")
    try:
        lock = reader.lock(snapshot_data, host)
    except AscenvError as exc:
        return NodeResult(host, FAILED, f"its snapshot does not read: {exc.message}", python=python)
    return NodeResult(host, OK, lock=lock, python=python)


def _envelope(stdout: Any) -> Optional[dict]:
    if not isinstance(stdout, str) or not stdout.strip():
        return None
    # the envelope is the last line: a login banner or a profile's echo may come before it
    for line in reversed(stdout.strip().splitlines()):
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except ValueError:
                return None
            return value if isinstance(value, dict) and "ascenv_node" in value else None
    return None


def _line(value: Any) -> str:
    text = str(value or "").strip()
    return " ".join(text.split())[:500]


# Only the parts a lock is made of are built, and a part whose JSON was already seen (a fleet's
# identical driver, CANN and Python sections) is reused: building 1,000 whole snapshots is slow.
_LOCKED_PARTS = ("host", "npu", "driver", "firmware", "cann", "python", "vendors")
_LOCKED_NPU = ("driver_version", "chips", "boards")


class StackReader:
    def __init__(self) -> None:
        self._built: dict[tuple[str, str], object] = {}
        self._locks: dict[tuple[int, ...], Lock] = {}

    def lock(self, data: dict, name: str) -> Lock:
        """The node's lock; nodes made of the very same (reused) parts share one lock build, only
        ``created`` and ``source`` (outside the input hash) are the node's own."""
        snapshot = self.snapshot(data, name)
        key = tuple(id(getattr(snapshot, part)) for part in _LOCKED_PARTS)
        built = self._locks.get(key)
        if built is None:
            built = lockfile.lock_from_snapshot(snapshot, generator_version=__version__, source=name)
            self._locks[key] = built
        return replace(built, created=snapshot.created, source=name)

    def snapshot(self, data: dict, name: str) -> Snapshot:
        head = {k: data[k] for k in ("schema", "created") if k in data}
        parts: dict[str, Any] = {}
        for key in _LOCKED_PARTS:
            if key not in data:
                continue
            value = data[key]
            if key == "npu" and isinstance(value, dict):
                value = {k: value[k] for k in _LOCKED_NPU if k in value}
            seen = (key, json.dumps(value, sort_keys=True))
            if seen not in self._built:
                self._built[seen] = getattr(snapshot_from_json({**head, key: value}, name), key)
            parts[key] = self._built[seen]
        return replace(snapshot_from_json(head, name), **parts)
