"""What came back from the nodes: ``<results>/<host>/result.json`` (written by the playbook for
every node, unreachable and failed ones included) read into one ``NodeResult`` per host; a node's
snapshot is also written beside it as snapshot.json (and check.json for the cluster-lock check),
so the folder is what ``ascenv diff`` reads too."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from ascenv import fsutil
from ascenv.diff import StackReader
from ascenv.errors import AscenvError
from ascenv.lockfile import Lock

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
