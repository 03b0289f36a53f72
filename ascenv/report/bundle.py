"""The members of a bug-report bundle: what a user attaches to an issue instead of pasting
``npu-smi info``, ``cat …install.info`` and ``pip list`` by hand. Pure.

``assemble`` turns a snapshot, its findings, a lock and the raw captures of the run into the
members of a bundle, redacted unless told otherwise (``ascenv.redact``: one stable placeholder
per distinct value, ``<host-1>``, ``<user-1>``, ``<ip-2>``, so the structure stays readable and two
bundles of similar machines compare equal). ``MANIFEST.json`` lists every other member with its
sha256, so a reader can refuse a bundle whose members were changed.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional

from ascenv import __version__, fsutil, lockfile, proc, serde
from ascenv.checks.summary import exit_code, summary
from ascenv.model import Finding, Snapshot
from ascenv.redact import Known, Redactor
from ascenv.snapshot_io import snapshot_from_json, snapshot_to_json

BUNDLE_SCHEMA = 1
MANIFEST = "MANIFEST.json"
SNAPSHOT = "snapshot.json"
TRIAGE = "triage.json"
BENCH = "bench.json"
FINDINGS = "findings.json"
LOCK = "ascenv.lock"
REPORT_MD = "report.md"
DEFAULT_OUTPUT = "ascenv-report.tar.gz"


# --- inputs ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Capture:
    """One command ascenv ran while probing, with its raw output."""

    argv: tuple[str, ...]
    status: str  # proc.OK, EXIT, NOT_FOUND, TIMEOUT, OS_ERROR
    returncode: Optional[int]
    stdout: str
    stderr: str


@dataclass(frozen=True)
class RawFile:
    """A file read from the machine (a version file, a vendor's ascenv build manifest)."""

    path: str  # the machine path
    data: bytes
    member: str  # where it goes in the bundle


@dataclass(frozen=True)
class LogTriage:
    """``ascenv triage`` of a log the user gave (``report --log``), as its JSON and Markdown."""

    log: str  # the name as given
    data: dict  # what `ascenv triage --format json` prints
    markdown: str


@dataclass(frozen=True)
class BenchRuns:
    """The bench runs of installed vendors (``ascenv.report.bench``): what ``bench.json`` holds,
    or None with the reason there is nothing to carry."""

    data: Optional[dict]
    note: Optional[str] = None


@dataclass(frozen=True)
class Inputs:
    snapshot: Snapshot
    findings: tuple[Finding, ...]
    lock: lockfile.Lock
    lock_origin: str  # "generated" or the file it was read from
    created: str  # ISO 8601 UTC, of the report
    command: str  # the ascenv command line that made it
    captures: tuple[Capture, ...] = ()
    files: tuple[RawFile, ...] = ()
    redact: bool = True
    known: Known = Known()
    triage: Optional[LogTriage] = None
    bench: Optional[BenchRuns] = None  # None: the store was not read


@dataclass(frozen=True)
class Bundle:
    members: dict[str, bytes]  # name -> content, MANIFEST.json included
    created: str
    redacted: bool
    redactions: dict[str, int] = field(default_factory=dict)  # kind -> distinct values replaced


@dataclass(frozen=True)
class Page:
    """What ``report.md`` shows, already redacted; the renderer turns it into Markdown."""

    snapshot: Snapshot
    findings: tuple[Finding, ...]
    created: str
    commands: tuple[str, ...]  # the ascenv command line first, then what the probes ran
    extra: tuple[tuple[str, str], ...]  # (member, what it is) of the raw captures and files
    lock_origin: str
    redacted: bool
    redactions: dict[str, int]
    triage_markdown: Optional[str] = None  # the triage of a log given with --log
    bench: Optional[dict] = None  # what bench.json holds
    bench_note: Optional[str] = None  # why there is no bench.json (None: the store was not read)


# --- assembly ------------------------------------------------------------------------------------


def assemble(inputs: Inputs, markdown: Callable[[Page], str]) -> Bundle:
    """Every member of the bundle, redacted unless ``inputs.redact`` is False; ``markdown``
    renders ``report.md`` from what the other members hold."""
    snapshot_data = snapshot_to_json(inputs.snapshot)
    findings_data = [serde.to_data(f) for f in inputs.findings]
    lock_data = lockfile.lock_data(inputs.lock)
    commands = [inputs.command] + [display_command(c.argv) + _status(c) for c in inputs.captures]
    # raw outputs worth reading as printed (npu-smi's tables); the python probe's is in snapshot.json
    raw = [
        (capture_member(c.argv), f"raw output of `{display_command(c.argv)}`", capture_text(c))
        for c in inputs.captures
        if "-c" not in c.argv
    ]
    raw += [(f.member, f.path, f.data.decode("utf-8", errors="replace")) for f in inputs.files]
    triage_data = inputs.triage.data if inputs.triage else None
    triage_md = inputs.triage.markdown if inputs.triage else None
    bench_data = inputs.bench.data if inputs.bench else None
    bench_note = inputs.bench.note if inputs.bench else None
    redactor = Redactor()
    if inputs.redact:
        # discovery order fixes the placeholder numbers: snapshot first, as it names most values
        redactor.add_known(inputs.known)
        for plain in (snapshot_data, findings_data, lock_data, commands, [what for _, what, _ in raw]):
            redactor.discover(plain)
        for _, _, text in raw:
            redactor.discover_text(text)
        if triage_data is not None and triage_md is not None:
            # a log quotes host names, paths and tokens like any capture
            redactor.discover(triage_data)
            redactor.discover_text(triage_md)
            triage_data = redactor.apply(triage_data)
            triage_md = redactor.apply_text(triage_md)
        if bench_data is not None:
            # a run keeps the path it was imported from and the host CPU it ran on
            redactor.discover(bench_data)
            bench_data = redactor.apply(bench_data)
        if bench_note is not None:
            redactor.discover_text(bench_note)
            bench_note = redactor.apply_text(bench_note)
        snapshot_data = redactor.apply(snapshot_data)
        findings_data = redactor.apply(findings_data)
        lock_data = redactor.apply(lock_data)
        commands = redactor.apply(commands)
        raw = [(member, redactor.apply_text(what), redactor.apply_text(text)) for member, what, text in raw]
    snapshot = snapshot_from_json(snapshot_data, SNAPSHOT)
    findings = [serde.from_data(Finding, f) for f in findings_data]
    lock = serde.from_data(lockfile.Lock, lock_data, key=serde.kebab)
    lock = replace(lock, input_hash=lockfile.input_hash(lock))  # redacted paths change what it hashes

    members: dict[str, bytes] = {
        SNAPSHOT: _json_bytes(snapshot_data),
        FINDINGS: _json_bytes(
            {
                "schema": 1,
                "exit_code": exit_code(findings, strict=False),
                "summary": summary(findings),
                "findings": findings_data,
            }
        ),
        LOCK: _text_bytes(lockfile.dumps_lock(lock)),
    }
    sources = {
        SNAPSHOT: commands[0],
        FINDINGS: "ascenv doctor",
        LOCK: inputs.lock_origin,
        REPORT_MD: "ascenv report",
    }
    for member, what, text in raw:
        members[member] = _text_bytes(text)
        sources[member] = what
    if inputs.triage and triage_data is not None:
        members[TRIAGE] = _json_bytes({"schema": 1, **triage_data})  # as `ascenv triage --format json`
        sources[TRIAGE] = f"ascenv triage {inputs.triage.log}"
    if bench_data is not None:
        members[BENCH] = _json_bytes({"schema": 1, **bench_data})
        sources[BENCH] = "the build store's bench runs"
    counts = redactor.counts
    page = Page(
        snapshot=snapshot,
        findings=tuple(findings),
        created=inputs.created,
        commands=tuple(commands),
        extra=tuple(sorted((member, what) for member, what, _ in raw)),
        lock_origin=inputs.lock_origin,
        redacted=inputs.redact,
        redactions=counts,
        triage_markdown=triage_md,
        bench=bench_data,
        bench_note=bench_note if inputs.bench else None,
    )
    members[REPORT_MD] = _text_bytes(markdown(page))
    members[MANIFEST] = _json_bytes(
        {
            "schema": BUNDLE_SCHEMA,
            "kind": "ascenv-report",
            "created": inputs.created,
            "ascenv_version": __version__,  # of the report; snapshot.json says which ascenv probed
            "snapshot_schema": inputs.snapshot.schema,
            "redacted": inputs.redact,
            "redactions": counts,
            "members": [
                {
                    "name": name,
                    "sha256": hashlib.sha256(data).hexdigest(),
                    "size": len(data),
                    "source": sources.get(name, ""),
                }
                for name, data in sorted(members.items())
            ],
        }
    )
    return Bundle(members, inputs.created, inputs.redact, counts)


def _json_bytes(data: Any) -> bytes:
    # serde.to_data shows undecodable bytes (a path given as bad\xff) as text, keys included
    return (json.dumps(serde.to_data(data), indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _text_bytes(text: str) -> bytes:
    """A text member as UTF-8, undecodable bytes of a path or a file shown as ``\\xff``
    (``fsutil.shown``) rather than failing to encode."""
    return fsutil.shown(text).encode("utf-8")


def display_command(argv: tuple[str, ...]) -> str:
    """The command as run, with a ``-c`` script (the python probe's) shown by name only."""
    shown = list(argv)
    if "-c" in shown[:-1]:
        shown[shown.index("-c") + 1] = "<ascenv python probe>"
    return " ".join(_quote(a) for a in shown)


def _quote(arg: str) -> str:
    return arg if arg.startswith("<") and arg.endswith(">") else shlex.quote(arg)


def _status(capture: Capture) -> str:
    if capture.status == "ok":
        return ""
    if capture.returncode is not None:
        return f"  # {proc.exit_text(capture.returncode)}"  # "exited 255", "killed by SIGSEGV"
    return f"  # {capture.status}"


def capture_member(argv: tuple[str, ...]) -> str:
    """``npu-smi info -t board -i 0`` -> ``captures/npu-smi_info_-t_board_-i_0.txt``."""
    words = [argv[0].rsplit("/", 1)[-1], *argv[1:]]
    return "captures/" + re.sub(r"[^A-Za-z0-9._-]+", "_", "_".join(words)) + ".txt"


def capture_text(capture: Capture) -> str:
    """The raw output, as the tool printed it; stderr after a marker line when there is any."""
    text = capture.stdout
    if capture.stderr:
        text += ("" if not text or text.endswith("\n") else "\n") + "--- stderr ---\n" + capture.stderr
    return text
