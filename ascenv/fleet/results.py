"""What came back from the nodes: ``<results>/<host key>/result.json`` (written by the playbook for
every node, unreachable and failed ones included) read into one ``NodeResult`` per host of the
play; a node's snapshot is also written beside it as snapshot.json (and check.json for the
cluster-lock check), so the folder is what ``ascenv diff`` reads too.

A host name is data, never a path: the folder is ``host_key(host)``, and the hosts are the ones
the playbook recorded for its play (``ansible_play_hosts_all``, after --limit), so a host whose
result never came back is a failed node, not a node left out of the verdict."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from ascenv import errors, fsutil
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
HOSTS = ".ascenv-hosts.json"  # the play's hosts, written first by the playbook
MAX_RESULT = 64 << 20
MAX_HOSTS = 64 << 20
# exit codes of the node's `timeout` (coreutils): the step ran past ascenv_node_timeout, was sent
# SIGTERM (124), or ignored it and was killed 10 s later (128 + SIGKILL)
_TIMED_OUT = (124, 137)
# a host name that is also a safe folder name: the playbook's ``ascenv_key`` tests the same
_PLAIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}")


def host_key(host: str) -> str:
    """The folder of ``host`` under the results, as the playbook's ``ascenv_key`` names it: the
    name itself when it is plain, else ``%<the name, made safe, cut at 40>%<sha256 of the name>``
    (``/``, ``..``, a leading ``-``, spaces and other scripts never reach a path; ``%`` never occurs
    in a plain name and the hash tells apart names made alike)."""
    if _PLAIN.fullmatch(host):
        return host
    readable = re.sub(r"[^A-Za-z0-9_.-]", "_", host)[:40]
    try:  # Ansible's `hash` filter: to_bytes(errors="surrogate_or_strict")
        data = host.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate Ansible refuses anyway: still one folder of its own
        data = host.encode("utf-8", "surrogatepass")
    return f"%{readable}%{hashlib.sha256(data).hexdigest()}"


def played_hosts(results: Path) -> Optional[tuple[str, ...]]:
    """The hosts of the play, as the playbook recorded them; None when it recorded none (no host
    matched, or the playbook never started)."""
    path = results / HOSTS
    if not path.is_file():
        return None
    try:
        hosts = json.loads(fsutil.read_input(str(path), what="fleet host list", shown=HOSTS, limit=MAX_HOSTS))
    except (ValueError, RecursionError) as exc:
        raise errors.InputError(f"{path}: the playbook's host list does not read: {exc}") from None
    if not isinstance(hosts, list) or not all(isinstance(h, str) for h in hosts):
        raise errors.InputError(f"{path}: the playbook's host list is not a list of names")
    return tuple(dict.fromkeys(hosts))


@dataclass(frozen=True)
class NodeResult:
    host: str
    status: str  # OK (a snapshot came back), UNREACHABLE or FAILED
    message: str = ""
    lock: Optional[Lock] = None  # the node's stack, when its snapshot came back
    python: str = ""  # the node Python that ran the step


def read_results(results: Path, hosts: Optional[Sequence[str]] = None) -> tuple[NodeResult, ...]:
    """One result per host of the play (``hosts``, else the list the playbook recorded), sorted
    by host name; a host without a result is FAILED. Without any list (results written by hand),
    every folder holding a result.json."""
    reader = StackReader()
    if hosts is None:
        hosts = played_hosts(results)
    if hosts is None:
        found = [read_node(p, reader) for p in sorted(results.iterdir()) if (p / RESULT).is_file()]
    else:
        found = [read_host(results, host, reader) for host in dict.fromkeys(hosts)]
    return tuple(sorted(found, key=lambda r: r.host))


def read_host(results: Path, host: str, reader: StackReader) -> NodeResult:
    folder = results / host_key(host)
    if not (folder / RESULT).is_file():
        return NodeResult(host, FAILED, "no result came back: the playbook ended before this node's (see its output)")
    return read_node(folder, reader, host)


def read_node(folder: Path, reader: StackReader, host: Optional[str] = None) -> NodeResult:
    """The node of ``folder``; ``host`` is its name in the play (else the name its result gives)."""
    shown = host if host is not None else folder.name
    try:
        raw = fsutil.read_input(str(folder / RESULT), what="fleet result", shown=shown, limit=MAX_RESULT)
        record = json.loads(raw)
    except (AscenvError, ValueError, RecursionError) as exc:
        return NodeResult(shown, FAILED, f"unreadable result: {_why(exc)}")
    if not isinstance(record, dict):
        return NodeResult(shown, FAILED, "unreadable result: not a JSON object")
    named = record.get("host")
    if host is None:
        host = named if isinstance(named, str) and named and host_key(named) == folder.name else folder.name
    elif named != host:
        return NodeResult(host, FAILED, "unreadable result: it is another host's")
    if record.get("unreachable"):
        return NodeResult(host, UNREACHABLE, _line(record.get("msg")) or "unreachable")
    try:
        return _snapshot_of(host, folder, record, reader)
    except RecursionError:  # a node's JSON nested deeper than Python's stack: that node's fault only
        return NodeResult(host, FAILED, "unreadable result: JSON nested too deep")


def read_step(results: Path, host: str) -> tuple[bool, str, Optional[dict]]:
    """A rollout node's step: (reached, message, the envelope it printed). Not reached: its
    result says unreachable, or none came back (the node went away, or the run was ended)."""
    folder = results / host_key(host)
    if not (folder / RESULT).is_file():
        return False, "no result came back: the playbook ended before this node's", None
    try:
        record = json.loads(fsutil.read_input(str(folder / RESULT), what="fleet result", shown=host, limit=MAX_RESULT))
    except (AscenvError, ValueError, RecursionError) as exc:
        return True, f"unreadable result: {_why(exc)}", None
    if not isinstance(record, dict) or record.get("host") != host:
        return True, "unreadable result: not this host's", None
    if record.get("unreachable"):
        return False, _line(record.get("msg")) or "unreachable", None
    envelope = _envelope(record.get("stdout"))
    if envelope is None or envelope.get("error"):
        why = (envelope or {}).get("error") or _last_line(record.get("stdout")) or record.get("msg") or "no report"
        return True, _line(why), None
    return True, "", envelope


def _snapshot_of(host: str, folder: Path, record: dict, reader: StackReader) -> NodeResult:
    envelope = _envelope(record.get("stdout"))
    python = str(envelope.get("python", "")) if envelope else ""
    if envelope is None or not isinstance(envelope.get("snapshot"), dict):
        rc = record.get("rc")
        if rc in _TIMED_OUT and not (envelope or {}).get("error"):
            timeout = record.get("timeout")
            after = f" after {timeout} s" if isinstance(timeout, int) else ""
            return NodeResult(host, FAILED, f"exit {rc}: timed out{after} (ascenv_node_timeout), stopped on the node")
        # Ansible's msg for a failed script is "non-zero return code": the node's own words come first
        # (its stdout holds its stderr too, under the pty Ansible asks for; stderr is then ssh's own)
        why = (
            (envelope or {}).get("error")
            or _last_line(record.get("stdout"))
            or _last_line(record.get("stderr"))
            or record.get("msg")
            or "no snapshot came back"
        )
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


def _why(exc: Exception) -> str:
    if isinstance(exc, AscenvError):
        return exc.message
    return "JSON nested too deep" if isinstance(exc, RecursionError) else str(exc)


def _last_line(value: Any) -> str:
    lines = [line for line in str(value or "").splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith("Shared connection to ")]  # ssh's, on a pty
    return lines[-1] if lines else ""


def _line(value: Any) -> str:
    text = str(value or "").strip()
    return " ".join(text.split())[:500]
