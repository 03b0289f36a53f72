"""Bug-report bundles: what a user attaches to an issue instead of pasting ``npu-smi info``,
``cat …install.info`` and ``pip list`` by hand. Pure, apart from ``load_bundle``.

``assemble`` turns a snapshot, its findings, a lock and the raw captures of the run into the
members of a bundle, redacted unless told otherwise; ``pack`` writes them as a deterministic
``.tar.gz`` (sorted entries, fixed mtime/uid/gid/mode, gzip mtime 0: the same inputs give the same
bytes, as reprotest/diffoscope expect of a build artefact). ``MANIFEST.json`` lists every other
member with its sha256, so ``read_bundle`` refuses a bundle whose members were changed.

Redaction is by key name *and* by value pattern over the plain data (vllm-ascend's collect_env
drops secret-looking *names* but still prints values and URLs: research/peers-and-pain-points.md
§10 row 37), with one stable placeholder per distinct value (``<host-1>``, ``<user-1>``,
``<ip-2>``) so the structure stays readable and two bundles of similar machines compare equal.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import ipaddress
import json
import re
import tarfile
import zlib
from dataclasses import dataclass, field, replace
from typing import Any, Optional

from ascenv import __version__, errors, lockfile, serde
from ascenv.model import Finding, Snapshot

BUNDLE_SCHEMA = 1
MANIFEST = "MANIFEST.json"
SNAPSHOT = "snapshot.json"
DEFAULT_OUTPUT = "ascenv-report.tar.gz"
GZIP_MAGIC = b"\x1f\x8b"
MAX_MEMBER = 64 << 20  # refuse members bigger than this when reading (a bundle is ~100 KiB)


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
class Known:
    """Personal values the caller knows of besides those in the data (from its environment)."""

    hostnames: tuple[str, ...] = ()
    homes: tuple[str, ...] = ()  # home directories, e.g. $HOME
    users: tuple[str, ...] = ()  # $USER, $LOGNAME


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


@dataclass(frozen=True)
class Bundle:
    members: dict[str, bytes]  # name -> content, MANIFEST.json included
    created: str
    redacted: bool
    redactions: dict[str, int] = field(default_factory=dict)  # kind -> distinct values replaced


# --- redaction ---------------------------------------------------------------------------------

KINDS = ("host", "user", "ip", "serial", "secret")
_KIND_WORDS = {
    "host": "host name",
    "user": "user name",
    "ip": "IP address",
    "serial": "serial number",
    "secret": "secret",
}
_PLACEHOLDER = re.compile(r"<(?:host|user|ip|serial|secret)-\d+>|\*{3}")
# Words too common to replace wherever they appear: a user called "dev" must not turn /dev/davinci0
# into /<user-1>/davinci0. Such names are still replaced in home paths and in their own field.
_COMMON = frozenset(
    "root dev sys proc usr bin sbin lib lib64 etc tmp var opt home local share data user users admin test "
    "work build src app docker ubuntu debian centos openeuler kylin linux localhost ascend hwhiaiuser "
    "driver firmware cann python torch npu".split()
)
# Words of a variable or key name that say its value is a credential (vllm-ascend's collect_env
# drops names with secret/token/api/access/password; "auth" alone would also catch google-auth).
_SECRET_WORDS = frozenset(
    "secret secrets token tokens password passwords passwd passphrase credential credentials apikey".split()
)
_SECRET_PAIRS = frozenset({("api", "key"), ("access", "key"), ("private", "key"), ("secret", "key")})
_URL_USERINFO = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://(?P<value>[^/@\s\"'<>]+)@")
_SECRET_ASSIGNMENT = re.compile(
    r"(?i)[\w.-]*(?:secret|token|passw(?:or)?d|credentials?|api[_-]?key|access[_-]?key|private[_-]?key)[\w.-]*"
    r"[\"']?\s*[=:](?!=)\s*[\"']?(?P<value>[^\s\"'&;,]+)"
)
# Token shapes of the services Ascend users paste into their environment (GitHub, Hugging Face,
# OpenAI-style keys, GitLab, AWS access keys, Slack, JWTs, HTTP bearer tokens).
_TOKEN_SHAPES = re.compile(
    r"(?<![\w-])(?P<value>gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{20,}|hf_[A-Za-z0-9]{30,}"
    r"|sk-[A-Za-z0-9_-]{20,}|glpat-[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}|xox[abprs]-[A-Za-z0-9-]{10,}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})(?![\w-])"
    r"|(?i:bearer)\s+(?P<bearer>[A-Za-z0-9._~+/-]{16,}=*)"
)
_HOST_ASSIGNMENT = re.compile(
    r"(?im)(?<![\w-])host[-_ ]?name[\"']?[ \t]*[=:][ \t]*[\"']?(?P<value>[A-Za-z0-9][A-Za-z0-9.-]*)"
)
# npu-smi info -t board prints "Serial Number : 1000000000" (corpus npu_smi/from_ascend_deployer_5.txt)
_SERIAL_LINE = re.compile(
    r"(?im)^[ \t]*(?:serial[ _]?number|uuid|vdie[ _]?id)[ \t]*[:=][ \t]*(?P<value>\S[^\r\n]*?)[ \t]*$"
)
_IPV4 = re.compile(
    r"(?<![\w.])(?P<value>(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))(?![\w]|\.\d)"
)
_IPV6 = re.compile(r"(?<![\w:.])(?P<value>[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7})(?![\w:])")
_HOME = re.compile(r"(?<![\w.-])(?P<base>/home|/Users|/export/home)/(?P<user>[^/\s:\"'<>]+)")


class Redactor:
    """Replace personal values by placeholders, the same one for the same value everywhere.

    Two passes over all members: ``discover`` learns the values (by key name and by pattern),
    ``apply`` replaces them, so a serial found in the snapshot is also hidden in a raw capture.
    Placeholders are numbered in discovery order, which the caller keeps fixed."""

    def __init__(self) -> None:
        self._by_value: dict[str, str] = {}  # a value -> what replaces it
        self._ids: dict[tuple[str, str], str] = {}  # (kind, identity) -> placeholder
        self._pattern: Optional[re.Pattern[str]] = None

    @property
    def counts(self) -> dict[str, int]:
        return {kind: n for kind in KINDS if (n := sum(1 for k, _ in self._ids if k == kind))}

    def _placeholder(self, kind: str, identity: str) -> str:
        key = (kind, identity)
        if key not in self._ids:
            self._ids[key] = f"<{kind}-{1 + sum(1 for k, _ in self._ids if k == kind)}>"
        return self._ids[key]

    def add(self, kind: str, value: str) -> str:
        """Learn ``value``; a common word (``_COMMON``) is only replaced where its name says what it is."""
        value = value.strip()
        if not value or _PLACEHOLDER.fullmatch(value):
            return value
        placeholder = self._placeholder(kind, value)
        if value.lower() not in _COMMON:
            self._by_value.setdefault(value, placeholder)
            self._pattern = None
        return placeholder

    def add_home(self, home: str) -> None:
        home = home.rstrip("/")
        if "/" not in home or home in ("", "/root") or _PLACEHOLDER.search(home):
            return
        base, user = home.rsplit("/", 1)
        if not user:
            return
        self._by_value.setdefault(home, f"{base}/{self.add('user', user)}")
        self._pattern = None

    def add_known(self, known: Known) -> None:
        for host in known.hostnames:
            self.add_host(host)
        for home in known.homes:
            self.add_home(home)
        for user in known.users:
            if user != "root":
                self.add("user", user)

    def add_host(self, host: str) -> None:
        if host and host != "localhost":
            placeholder = self.add("host", host)
            short = host.split(".")[0]
            if short != host and short.lower() not in _COMMON:  # node7.cluster.local is also "node7"
                self._by_value.setdefault(short, placeholder)

    # pass 1 ---------------------------------------------------------------------------------
    def discover(self, data: Any, path: tuple[str, ...] = ()) -> None:
        if isinstance(data, dict):
            for k, v in data.items():
                self.discover(v, (*path, str(k)))
        elif isinstance(data, list):
            for v in data:
                self.discover(v, path)
        elif isinstance(data, str):
            kind = _kind_by_name(path)
            if kind == "host":
                self.add_host(data)
            elif kind is not None:
                self.add(kind, data)
            else:
                self.discover_text(data, ips=not _holds_versions(path))

    def discover_text(self, text: str, *, ips: bool = True) -> None:
        for match in _HOME.finditer(text):
            self.add_home(match.group(0))
        for pattern in (_URL_USERINFO, _SECRET_ASSIGNMENT):
            for match in pattern.finditer(text):
                self.add("secret", match.group("value"))
        for match in _TOKEN_SHAPES.finditer(text):
            self.add("secret", match.group("value") or match.group("bearer"))
        for match in _HOST_ASSIGNMENT.finditer(text):
            self.add_host(match.group("value"))
        for match in _SERIAL_LINE.finditer(text):
            self.add("serial", match.group("value"))
        if ips:
            for match in _IPV4.finditer(text):
                if not _in_version_line(text, match.start()):
                    self._add_ip(match.group("value"))
            for match in _IPV6.finditer(text):
                value = match.group("value")
                if "::" in value or value.count(":") == 7:
                    self._add_ip(value)

    def _add_ip(self, value: str) -> None:
        try:
            address = ipaddress.ip_address(value)
        except ValueError:
            return
        if not (address.is_loopback or address.is_unspecified):  # 127.0.0.1 says nothing about anyone
            self.add("ip", value)

    # pass 2 ---------------------------------------------------------------------------------
    def apply(self, data: Any, path: tuple[str, ...] = ()) -> Any:
        if isinstance(data, dict):
            return {k: self.apply(v, (*path, str(k))) for k, v in data.items()}
        if isinstance(data, list):
            return [self.apply(v, path) for v in data]
        if isinstance(data, str):
            kind = _kind_by_name(path)
            if kind is not None and data.strip() and not _PLACEHOLDER.fullmatch(data.strip()):
                return self._ids.get((kind, data.strip()), self.apply_text(data))
            return self.apply_text(data)
        return data

    def apply_text(self, text: str) -> str:
        if not self._by_value:
            return text
        if self._pattern is None:
            values = sorted(self._by_value, key=lambda v: (-len(v), v))  # longest first: /home/al before al
            # a value counts only as a whole token: 10.0.0.1 is not hidden inside 10.0.0.12 or
            # inside the version 7.10.0.0.1, and a serial not inside a longer number
            self._pattern = re.compile(
                r"(?<![A-Za-z0-9])(?<!\d\.)(?:" + "|".join(re.escape(v) for v in values) + r")(?![A-Za-z0-9]|\.\d)"
            )
        return self._pattern.sub(lambda m: self._by_value[m.group(0)], text)


def describe_redactions(counts: dict[str, int]) -> str:
    """``{"user": 1, "ip": 2}`` -> ``1 user name, 2 IP addresses`` (counts, never values)."""
    words = {"address": "addresses"}
    parts = []
    for kind, n in counts.items():
        word = _KIND_WORDS[kind]
        if n > 1:
            last = word.split()[-1]
            word = word[: -len(last)] + words.get(last, last + "s")
        parts.append(f"{n} {word}")
    return ", ".join(parts)


def _kind_by_name(path: tuple[str, ...]) -> Optional[str]:
    """What a field's *name* says its value is; None when only its value can tell. Package
    names are no field names: ``tokenizers`` or ``uuid`` map to versions, not secrets."""
    if not path or "packages" in path:
        return None
    words = [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", path[-1])]
    if words == ["hostname"] or words == ["host", "name"]:
        return "host"
    if {"serial", "uuid"} & set(words) or ("die" in words and "id" in words):
        return "serial"
    pairs = set(zip(words, words[1:]))
    if _SECRET_WORDS & set(words) or _SECRET_PAIRS & pairs:
        return "secret"
    return None


def _holds_versions(path: tuple[str, ...]) -> bool:
    # "7.7.0.1" could be an IPv4 address, but under "version", "Firmware Version",
    # "compiler_version" or in a package table it is a version
    return bool(path) and ("packages" in path or re.sub(r"[^a-z]", "", path[-1].lower()).endswith("version"))


def _in_version_line(text: str, position: int) -> bool:
    # npu-smi's header prints "npu-smi 23.0.0.1   Version: 23.0.0.1": a dotted quad on a line that
    # talks of a version is a version (formats-npu-smi.md, table header of every layout)
    start = text.rfind("\n", 0, position) + 1
    end = text.find("\n", position)
    return "version" in text[start : end if end >= 0 else len(text)].lower()


# --- assembly ------------------------------------------------------------------------------------


def assemble(inputs: Inputs) -> Bundle:
    """Every member of the bundle, redacted unless ``inputs.redact`` is False."""
    from ascenv.checks.summary import exit_code, summary
    from ascenv.output import report as render
    from ascenv.snapshot_io import snapshot_from_json, snapshot_to_json

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
    redactor = Redactor()
    if inputs.redact:
        # discovery order fixes the placeholder numbers: snapshot first, as it names most values
        redactor.add_known(inputs.known)
        for plain in (snapshot_data, findings_data, lock_data, commands, [what for _, what, _ in raw]):
            redactor.discover(plain)
        for _, _, text in raw:
            redactor.discover_text(text)
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
        "findings.json": _json_bytes(
            {
                "schema": 1,
                "exit_code": exit_code(findings, strict=False),
                "summary": summary(findings),
                "findings": findings_data,
            }
        ),
        "ascenv.lock": lockfile.dumps_lock(lock).encode("utf-8"),
    }
    sources = {
        SNAPSHOT: commands[0],
        "findings.json": "ascenv doctor",
        "ascenv.lock": inputs.lock_origin,
        "report.md": "ascenv report",
    }
    for member, what, text in raw:
        members[member] = text.encode("utf-8")
        sources[member] = what
    counts = redactor.counts
    members["report.md"] = render.markdown(
        snapshot,
        findings,
        created=inputs.created,
        commands=commands,
        extra=sorted((member, what) for member, what, _ in raw),
        lock_origin=inputs.lock_origin,
        redacted=inputs.redact,
        redactions=counts,
    ).encode("utf-8")
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
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def display_command(argv: tuple[str, ...]) -> str:
    """The command as run, with a ``-c`` script (the python probe's) shown by name only."""
    shown = list(argv)
    if "-c" in shown[:-1]:
        shown[shown.index("-c") + 1] = "<ascenv python probe>"
    return " ".join(_quote(a) for a in shown)


def _quote(arg: str) -> str:
    import shlex

    return arg if arg.startswith("<") and arg.endswith(">") else shlex.quote(arg)


def _status(capture: Capture) -> str:
    if capture.status == "ok":
        return ""
    return f"  # {capture.status}" + (f" {capture.returncode}" if capture.returncode is not None else "")


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


# --- the archive ---------------------------------------------------------------------------------


def pack(bundle: Bundle) -> bytes:
    """A deterministic .tar.gz: sorted members, mtime = the report's time, uid/gid 0, mode 0644,
    no user or group names, gzip header without a file name and with mtime 0."""
    import datetime

    mtime = int(datetime.datetime.fromisoformat(bundle.created).timestamp()) if bundle.created else 0
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(bundle.members):
            data = bundle.members[name]
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = mtime
            info.mode = 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    packed = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=packed, mtime=0, compresslevel=9) as gz:
        gz.write(raw.getvalue())
    return packed.getvalue()


def read_bundle(data: bytes, source: str) -> tuple[dict[str, bytes], dict]:
    """The verified members of a bundle and its manifest; an InputError (exit 2) names what is
    wrong: not gzip, not a tar, no MANIFEST.json or snapshot.json, a member changed or missing."""
    hint = "make a new one with `ascenv report`"
    if not data.startswith(GZIP_MAGIC):
        raise errors.InputError(f"{source} is not an ascenv report bundle (not gzip-compressed)", hint=hint)
    members: dict[str, bytes] = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            for info in tar:
                if not info.isfile():
                    continue  # pack() writes regular files only; anything else is not read
                if info.size > MAX_MEMBER:
                    raise errors.InputError(
                        f"{source}: member {info.name} is {info.size} bytes, more than a report holds", hint=hint
                    )
                handle = tar.extractfile(info)
                members[info.name] = handle.read() if handle else b""
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:  # BadGzipFile is an OSError
        raise errors.InputError(
            f"{source} is not a readable report bundle (truncated or not a tar.gz): {exc}", hint=hint
        ) from None
    if MANIFEST not in members:
        raise errors.InputError(f"{source} has no {MANIFEST}: it is not an ascenv report bundle", hint=hint)
    try:
        manifest = json.loads(members[MANIFEST].decode("utf-8"))
        listed = {m["name"]: m["sha256"] for m in manifest["members"]}
        schema = manifest["schema"]
    except (ValueError, UnicodeDecodeError, KeyError, TypeError) as exc:
        raise errors.InputError(
            f"{source}: {MANIFEST} is not readable ({type(exc).__name__}: {exc})", hint=hint
        ) from None
    if not isinstance(schema, int) or schema > BUNDLE_SCHEMA:
        raise errors.InputError(
            f"{source}: bundle schema {schema!r} is not supported (this ascenv reads {BUNDLE_SCHEMA})",
            hint="upgrade ascenv",
        )
    unlisted = sorted(set(members) - set(listed) - {MANIFEST})
    if unlisted:
        raise errors.InputError(
            f"{source}: {', '.join(unlisted)} not listed in {MANIFEST}: the bundle was changed after it was made",
            hint=hint,
        )
    for name, digest in sorted(listed.items()):
        if name not in members:
            raise errors.InputError(f"{source}: {name} is listed in {MANIFEST} but missing from the bundle", hint=hint)
        if hashlib.sha256(members[name]).hexdigest() != digest:
            raise errors.InputError(
                f"{source}: {name} does not match its sha256 in {MANIFEST}: the bundle was changed after it was made",
                hint=hint,
            )
    if SNAPSHOT not in members:
        raise errors.InputError(f"{source} has no {SNAPSHOT}", hint=hint)
    return members, manifest


def load_bundle(path: str, shown: Optional[str] = None) -> Snapshot:
    """The snapshot inside a report bundle (``ascenv diff`` takes bundles as inputs)."""
    from ascenv.snapshot_io import snapshot_from_json

    shown = shown or path
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_MEMBER * 4)
    except OSError as exc:
        raise errors.InputError(f"cannot read bundle {shown}: {exc.strerror}") from None
    members, _ = read_bundle(data, shown)
    try:
        snapshot = json.loads(members[SNAPSHOT].decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise errors.InputError(f"{shown}: {SNAPSHOT} is not JSON: {exc}") from None
    return snapshot_from_json(snapshot, f"{shown}:{SNAPSHOT}")
