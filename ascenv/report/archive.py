"""A bundle as a file: ``pack`` writes the members as a deterministic ``.tar.gz`` (sorted entries,
fixed mtime/uid/gid/mode, gzip mtime 0: the same inputs give the same bytes, as
reprotest/diffoscope expect of a build artefact); ``read_bundle`` reads one back, verified.

A bundle handed to ``ascenv diff`` may come from anyone, so the reader is its own small tar parser
over a bounded inflater rather than :mod:`tarfile`, which reads GNU long-name and pax headers
whole, whatever size they claim, before a caller can look at them
(https://docs.python.org/3/library/tarfile.html#tarfile-extraction-filter covers extraction, not
reading). Every read is bounded: the compressed input, the decompressed total, the number of
members, each member and each header. Nothing is ever extracted or written.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
import zlib
from collections.abc import Iterator
from typing import BinaryIO, Optional, Protocol, Union

from ascenv import errors, fsutil
from ascenv.model import Snapshot
from ascenv.report.bundle import BUNDLE_SCHEMA, MANIFEST, SNAPSHOT, Bundle
from ascenv.snapshot_io import snapshot_from_json

GZIP_MAGIC = b"\x1f\x8b"
# A bundle is ~100 KiB; its largest members are raw files the probe reads up to 4 MiB each.
MAX_COMPRESSED = 64 << 20
MAX_TOTAL = 64 << 20  # decompressed bytes, headers and padding included
MAX_MEMBER = 16 << 20
MAX_MEMBERS = 512  # pack() writes a few dozen: one per npu-smi query, version file and vendor
MAX_HEADER = 64 << 10  # a pax or GNU long-name/long-link header's data
_BLOCK = 512
_CHUNK = 1 << 16
_HINT = "make a new one with `ascenv report`"
# ustar type flags (POSIX.1-2001 pax, https://pubs.opengroup.org/onlinepubs/9699919799/utilities/pax.html)
_REGULAR = (b"0", b"\0", b"7")
_NO_DATA = (b"1", b"2", b"3", b"4", b"5", b"6")  # links, devices, directories, FIFOs: skipped, never read
_PAX = b"x"
_PAX_GLOBAL = b"g"
_GNU_LONGNAME = b"L"
_GNU_LONGLINK = b"K"


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


class _Readable(Protocol):
    def read(self, size: int, /) -> bytes: ...


def _refuse(source: str, what: str) -> errors.InputError:
    return errors.InputError(f"{source}: {what}", hint=_HINT)


class _Inflater:
    """The decompressed bytes of a gzip stream, read in exact amounts, never more than the bounds."""

    def __init__(self, stream: _Readable, source: str) -> None:
        self._stream = stream
        self._source = source
        self._zlib = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)  # gzip header and trailer checked
        self._buffer = bytearray()
        self._compressed = 0
        self._total = 0

    def _more(self) -> bool:
        """Inflate one more chunk into the buffer; False at the end of the gzip stream."""
        if self._zlib.eof:
            return False
        data = self._zlib.unconsumed_tail
        if not data:
            data = self._stream.read(_CHUNK)
            self._compressed += len(data)
            if self._compressed > MAX_COMPRESSED:
                raise _refuse(self._source, f"more than {MAX_COMPRESSED >> 20} MiB: not a report bundle")
            if not data:
                raise _truncated(self._source, "the gzip stream ends early")
        try:
            out = self._zlib.decompress(data, _CHUNK)
        except zlib.error as exc:
            raise _truncated(self._source, str(exc)) from None
        self._total += len(out)
        if self._total > MAX_TOTAL:
            raise _refuse(
                self._source, f"decompresses to more than {MAX_TOTAL >> 20} MiB: a report bundle is far smaller"
            )
        self._buffer += out
        return True

    def read(self, size: int) -> bytes:
        while len(self._buffer) < size:
            if not self._more():
                raise _truncated(self._source, "the tar archive ends early")
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    def finish(self) -> None:
        """Read to the end of the gzip stream, so that its CRC-32 and length are checked."""
        self._buffer.clear()
        while self._more():
            self._buffer.clear()


def _truncated(source: str, detail: str) -> errors.InputError:
    return errors.InputError(
        f"{source} is not a readable report bundle (truncated or not a tar.gz): {detail}", hint=_HINT
    )


def _octal(field: bytes, source: str, what: str) -> int:
    if field[:1] and field[0] & 0x80:  # base-256 (GNU): only sizes far beyond every bound use it
        return MAX_TOTAL + 1
    text = field.split(b"\0", 1)[0].strip(b" ")
    try:
        return int(text, 8) if text else 0
    except ValueError:
        raise _truncated(source, f"a tar header has a bad {what} field {text[:20]!r}") from None


def _checksum_ok(header: bytes) -> bool:
    stored = header[148:156].split(b"\0", 1)[0].strip(b" ")
    try:
        expected = int(stored, 8)
    except ValueError:
        return False
    unsigned = sum(header[:148]) + 8 * 32 + sum(header[156:])
    signed = unsigned - 2 * sum(b for b in header[:148] + header[156:] if b > 127)  # old tars summed signed
    return expected in (unsigned, signed)


def _padded(size: int) -> int:
    return -(-size // _BLOCK) * _BLOCK


def _pax_records(data: bytes, source: str) -> dict[bytes, bytes]:
    """``"%d %s=%s\\n"`` records (POSIX pax extended header format)."""
    records: dict[bytes, bytes] = {}
    position = 0
    while position < len(data) and data[position : position + 1] != b"\0":
        space = data.find(b" ", position, position + 20)
        try:
            length = int(data[position:space]) if space > position else 0
        except ValueError:
            length = 0
        record = data[space + 1 : position + length]
        if length <= 0 or not record.endswith(b"\n") or b"=" not in record:
            raise _truncated(source, "a pax header is malformed")
        key, value = record[:-1].split(b"=", 1)
        records[key] = value
        position += length
    return records


def _member_name(raw: bytes, source: str) -> str:
    """The name as ``pack`` writes names: a relative path of UTF-8 text without control
    characters, ``.`` or ``..`` parts. Anything else is refused, not skipped: a reviewer who opens
    the bundle with tar must see the members that were verified."""
    try:
        name = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _refuse(source, f"member name {raw!r} is not UTF-8: a report bundle never holds one") from None
    parts = name.split("/")
    if (
        not name
        or name.startswith("/")
        or any(part in ("", ".", "..") for part in parts)
        or any(ord(c) < 32 or 127 <= ord(c) < 160 for c in name)
    ):
        raise _refuse(
            source,
            f"member name {name!r} is not a plain relative path (absolute, empty, '.' or '..' parts, "
            "or control characters): a report bundle never holds one",
        )
    return name


def _entries(inflater: _Inflater, source: str) -> Iterator[tuple[str, bytes, Optional[bytes]]]:
    """(name, type flag, data or None for members that are skipped) of every tar entry."""
    overrides: dict[bytes, bytes] = {}
    count = 0
    while True:
        header = inflater.read(_BLOCK)
        if header == bytes(_BLOCK):
            return  # end of archive (POSIX: two zero blocks; one is enough to stop)
        if not _checksum_ok(header):
            raise _truncated(source, "a tar header has a bad checksum")
        kind = header[156:157]
        size = _octal(header[124:136], source, "size")
        if kind in (_PAX, _PAX_GLOBAL, _GNU_LONGNAME, _GNU_LONGLINK):
            if size > MAX_HEADER:
                raise _refuse(source, f"a tar header of {size} bytes (more than {MAX_HEADER >> 10} KiB)")
            data = inflater.read(_padded(size))[:size]
            if kind == _PAX:
                overrides.update(_pax_records(data, source))
            elif kind == _GNU_LONGNAME:
                overrides[b"path"] = data.split(b"\0", 1)[0]
            elif kind == _GNU_LONGLINK:
                overrides[b"linkpath"] = data.split(b"\0", 1)[0]
            continue  # a global pax header changes no field ascenv reads
        count += 1
        if count > MAX_MEMBERS:
            raise _refuse(source, f"more than {MAX_MEMBERS} members: a report bundle holds a few dozen")
        raw_name = header[0:100].split(b"\0", 1)[0]
        if header[257:263] == b"ustar\0":  # POSIX ustar: name = prefix/name
            prefix = header[345:500].split(b"\0", 1)[0]
            raw_name = prefix + b"/" + raw_name if prefix else raw_name
        raw_name = overrides.get(b"path", raw_name)
        if b"size" in overrides:
            try:
                size = int(overrides[b"size"])
            except ValueError:
                raise _truncated(source, "a pax header has a bad size") from None
        overrides = {}
        name = _member_name(raw_name, source)
        if kind in _REGULAR:
            if size > MAX_MEMBER:
                raise _refuse(
                    source, f"member {name} is {size} bytes, more than a report holds ({MAX_MEMBER >> 20} MiB)"
                )
            yield name, kind, inflater.read(_padded(size))[:size]
        elif kind in _NO_DATA:
            yield name, kind, None  # pack() writes regular files only; a link is never followed
        else:
            raise _refuse(source, f"member {name} has tar type {kind!r}, which a report bundle never holds")


def read_bundle(data: Union[bytes, BinaryIO], source: str) -> tuple[dict[str, bytes], dict]:
    """The verified members of a bundle and its manifest; an InputError (exit 2) names what is
    wrong: not gzip, not a tar, over a bound, an odd or repeated member name, no MANIFEST.json or
    snapshot.json, a member changed or missing."""
    stream: BinaryIO = io.BytesIO(data) if isinstance(data, (bytes, bytearray)) else data
    if stream.read(len(GZIP_MAGIC)) != GZIP_MAGIC:  # RFC 1952 §2.3.1: ID1 ID2
        raise errors.InputError(f"{source} is not an ascenv report bundle (not gzip-compressed)", hint=_HINT)
    inflater = _Inflater(_Prefixed(GZIP_MAGIC, stream), source)
    members: dict[str, bytes] = {}
    seen: set[str] = set()
    for name, _, content in _entries(inflater, source):
        if name in seen:
            raise _refuse(source, f"member {name} appears twice: a reader could be shown either copy")
        seen.add(name)
        if content is not None:
            members[name] = content
    inflater.finish()
    manifest, listed = _manifest(members, source)
    unlisted = sorted(set(members) - set(listed) - {MANIFEST})
    if unlisted:
        raise _refuse(
            source, f"{', '.join(unlisted)} not listed in {MANIFEST}: the bundle was changed after it was made"
        )
    for name, digest in sorted(listed.items()):
        if name not in members:
            raise _refuse(source, f"{name} is listed in {MANIFEST} but missing from the bundle")
        if hashlib.sha256(members[name]).hexdigest() != digest:
            raise _refuse(
                source, f"{name} does not match its sha256 in {MANIFEST}: the bundle was changed after it was made"
            )
    if SNAPSHOT not in members:
        raise errors.InputError(f"{source} has no {SNAPSHOT}", hint=_HINT)
    return members, manifest


def _manifest(members: dict[str, bytes], source: str) -> tuple[dict, dict[str, str]]:
    """MANIFEST.json and its ``name -> sha256`` listing; errors give the key path of a bad value."""
    if MANIFEST not in members:
        raise errors.InputError(f"{source} has no {MANIFEST}: it is not an ascenv report bundle", hint=_HINT)
    try:
        manifest = json.loads(members[MANIFEST].decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise _refuse(source, f"{MANIFEST} is not readable ({type(exc).__name__}: {exc})") from None
    if not isinstance(manifest, dict):
        raise _refuse(source, f"{MANIFEST} is not readable (a JSON {type(manifest).__name__}, expected an object)")
    schema = manifest.get("schema")
    if not isinstance(schema, int) or isinstance(schema, bool) or schema < 1:
        raise _refuse(source, f"{MANIFEST}: schema is {schema!r}, expected a bundle schema number ({BUNDLE_SCHEMA})")
    if schema > BUNDLE_SCHEMA:
        raise errors.InputError(
            f"{source}: bundle schema {schema} is not supported (this ascenv reads {BUNDLE_SCHEMA})",
            hint="upgrade ascenv",
        )
    entries = manifest.get("members")
    if not isinstance(entries, list):
        raise _refuse(source, f"{MANIFEST} is not readable: members is {type(entries).__name__}, expected a list")
    listed: dict[str, str] = {}
    for i, entry in enumerate(entries):
        name = entry.get("name") if isinstance(entry, dict) else None
        digest = entry.get("sha256") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not isinstance(digest, str):
            raise _refuse(source, f"{MANIFEST} is not readable: members[{i}] needs a string name and sha256")
        if name in listed:
            raise _refuse(source, f"{MANIFEST} lists {name} twice")
        listed[name] = digest
    return manifest, listed


class _Prefixed:
    """A stream with bytes already read from it put back in front."""

    def __init__(self, prefix: bytes, stream: BinaryIO) -> None:
        self._prefix = prefix
        self._stream = stream

    def read(self, size: int) -> bytes:
        if self._prefix:
            data, self._prefix = self._prefix[:size], self._prefix[size:]
            return data
        return self._stream.read(size)


def load_bundle(path: str, shown: Optional[str] = None) -> Snapshot:
    """The snapshot inside a report bundle (``ascenv diff`` takes bundles as inputs)."""
    shown = shown or path
    with fsutil.open_input(path, what="bundle", shown=shown, limit=MAX_COMPRESSED) as fh:
        try:
            members, _ = read_bundle(fh, shown)
        except OSError as exc:
            raise errors.InputError(f"cannot read bundle {shown}: {exc.strerror}") from None
    try:
        data = json.loads(members[SNAPSHOT].decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise errors.InputError(f"{shown}: {SNAPSHOT} is not JSON: {exc}") from None
    return snapshot_from_json(data, f"{shown}:{SNAPSHOT}")
