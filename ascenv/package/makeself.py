"""The makeself header and payload of a ``.run`` file, read without running it.

Layout (makeself-header.sh of makeself 2.4.5, https://github.com/megastep/makeself): the first
``skip`` lines are a shell script whose variables describe the archive (``label``, ``targetdir``,
``filesizes``, ``CRCsum``, ``MD5``, ``SHA``); the payload starts at the byte that follows those
lines (the header computes ``head -n $skip $0 | wc -c``) and is one compressed tar stream per entry
of ``filesizes``. ``--info`` echoes the packaging date and compression as literal text, which is
where they are read from here. The Huawei-modified header CANN ships keeps these variables.
"""

from __future__ import annotations

import bz2
import hashlib
import importlib
import lzma
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Optional

from ascenv.errors import PackageError
from ascenv.words import counted

HEADER_LIMIT = 1 << 20  # a makeself header is ~20 KB; a "header" past 1 MiB is not one
CHUNK = 1 << 16  # bytes read, and bytes decompressed, per step
# xz -9 needs 65 MiB to decompress (xz(1), "Memory usage"); a stream asking for more is not a
# makeself payload, and liblzma would allocate its dictionary up front
XZ_MEMLIMIT = 256 << 20
SHOWN_PARTS = 4  # payload parts named in a message; the rest are counted (a header may list 200k)
_NO_CRC = "0000000000"
_NO_MD5 = "0" * 32
_NO_SHA = "0" * 64
_VARIABLE = re.compile(rb'^([A-Za-z_][A-Za-z0-9_]*)="([^"\n]*)"$', re.M)  # MD5 has a digit
_VERSION = re.compile(rb"^# This script was generated using Makeself ([^\s]+)", re.M)
_DATE = re.compile(rb"^\s*echo Date of packaging: ?(.*)$", re.M)
_COMPRESSION = re.compile(rb"^\s*echo Compression: ?(\S*)\s*$", re.M)
_UNCOMPRESSED = re.compile(rb"^\s*echo Uncompressed size: ?(\d+) KB\s*$", re.M)
# MS_Decompress is the command the header pipes the payload through.
_DECOMPRESS = {
    "gzip": "gzip",
    "pigz": "gzip",
    "bzip2": "bzip2",
    "pbzip2": "bzip2",
    "xz": "xz",
    "zstd": "zstd",
    "none": "none",
}


@dataclass(frozen=True)
class Header:
    version: Optional[str]  # "2.4.5"
    label: str  # "version:1.0" in every CANN operator package
    script: str  # run after extraction: "./install.sh"
    target_dir: str  # makeself-<pid>-<date> for an archive made from "./"
    date: Optional[str]  # as `date` printed it at packaging time
    compression: str  # gzip, bzip2, xz, none (zstd and others are reported but not read)
    uncompressed_kb: Optional[int]
    skip: int  # header lines
    offset: int  # payload start, in bytes
    sizes: tuple[int, ...]  # compressed size of each payload part
    crc: tuple[str, ...]  # POSIX cksum of each part; "0000000000" = none
    md5: tuple[str, ...]
    sha256: tuple[str, ...]
    text: bytes  # the header itself, ``offset`` bytes

    @property
    def total_size(self) -> int:
        return sum(self.sizes)


@dataclass(frozen=True)
class Checksum:
    kind: str  # crc, md5, sha256
    expected: str
    actual: str

    @property
    def ok(self) -> bool:
        return self.expected == self.actual


def read_header(path: Path) -> Header:
    try:
        with open(path, "rb") as handle:
            head = handle.read(HEADER_LIMIT)
            size = handle.seek(0, 2)
    except OSError as exc:
        raise PackageError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if not head.startswith(b"#!"):
        raise PackageError(
            f"{path} is not a makeself package: it does not start with a shell header",
            hint="pass the custom_opp_<os>_<arch>.run that the operator project's build wrote",
        )
    found: dict[str, str] = {}
    for key, value in _VARIABLE.findall(head):
        found.setdefault(key.decode(), value.decode("utf-8", "replace"))  # the first, as the shell reads it
    missing = [k for k in ("skip", "filesizes", "targetdir", "label") if k not in found]
    if missing:
        raise PackageError(
            f"{path} lacks the makeself header {counted(len(missing), 'variable')} {', '.join(missing)}",
            hint="a makeself 2.x archive defines skip, filesizes, targetdir and label in its header",
        )
    skip, sizes = _skip_and_sizes(path, found["skip"], found["filesizes"])
    lines = head.split(b"\n", min(skip, HEADER_LIMIT))
    if len(lines) <= skip:
        raise PackageError(f"{path}: the header says it is {skip} lines, the first MiB holds {len(lines) - 1}")
    offset = sum(len(line) + 1 for line in lines[:skip])
    if offset + sum(sizes) > size:
        raise PackageError(
            f"{path} is truncated: the header announces {offset + sum(sizes)} bytes "
            f"({offset} of header + {_parts_text(sizes)}), the file has {size}",
            hint="copy or download the package again",
        )
    compression = _match(_COMPRESSION, head) or _decompress_command(head)
    version = _match(_VERSION, head)
    kb = _match(_UNCOMPRESSED, head)
    return Header(
        version=version,
        label=found["label"],
        script=found.get("script", ""),
        target_dir=found["targetdir"],
        date=_match(_DATE, head),
        compression=compression,
        uncompressed_kb=int(kb) if kb and len(kb) < 20 else None,
        skip=skip,
        offset=offset,
        sizes=sizes,
        crc=_per_part(path, "CRCsum", found.get("CRCsum", ""), len(sizes), _NO_CRC),
        md5=_per_part(path, "MD5", found.get("MD5", ""), len(sizes), _NO_MD5),
        sha256=_per_part(path, "SHA", found.get("SHA", ""), len(sizes), _NO_SHA),
        text=head[:offset],
    )


def _skip_and_sizes(path: Path, skip_text: str, sizes_text: str) -> tuple[int, tuple[int, ...]]:
    """``skip`` and ``filesizes`` as numbers, each at least 1: makeself writes ``wc -c`` of each
    compressed part, and a part of 0 or fewer bytes holds no archive (a negative one would make
    the reader go backwards)."""
    parts = sizes_text.split()
    if not skip_text.isdigit() or not parts or not all(p.isdigit() for p in parts):
        bad = next((p for p in parts if not p.isdigit()), "")
        raise PackageError(
            f"{path}: makeself header has skip={_short(skip_text)!r} and {counted(len(parts), 'filesizes part')}"
            + (f", one of them {_short(bad)!r}" if bad else "")
            + ": expected whole numbers",
            hint="the header was edited or damaged: copy or download the package again",
        )
    skip, sizes = int(skip_text), tuple(int(p) for p in parts)
    small = [n for n in sizes if n < 1]
    if skip < 1 or small:
        raise PackageError(
            f"{path}: makeself header has skip={skip} and {_parts_text(sizes)}: "
            + ("the header is at least one line" if skip < 1 else f"{counted(len(small), 'part')} of 0 bytes")
            + ", expected at least 1",
            hint="the header was edited or damaged: copy or download the package again",
        )
    return skip, sizes


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _parts_text(sizes: tuple[int, ...]) -> str:
    """``payload 123 + 456``, or ``payload of 200000 parts (123 + 456 + ...)`` past SHOWN_PARTS."""
    if len(sizes) <= SHOWN_PARTS:
        return "payload " + " + ".join(map(str, sizes))
    return f"payload of {len(sizes)} parts ({' + '.join(map(str, sizes[:SHOWN_PARTS]))} + ...)"


def _match(pattern: re.Pattern[bytes], text: bytes) -> Optional[str]:
    found = pattern.search(text)
    return found.group(1).decode("utf-8", "replace").strip() if found else None


def _decompress_command(head: bytes) -> str:
    found = re.search(rb'eval "([a-z0-9]+) -[a-z]*d[a-z]*"', head)
    return found.group(1).decode() if found else "unknown"


def _per_part(path: Path, name: str, value: str, parts: int, absent: str) -> tuple[str, ...]:
    """One checksum per payload part, as makeself's header reads them (``cut -d" " -f$i``).

    Empty, or only makeself's all-zero "not computed" value: not recorded. Any other count than
    one per part is a header that was edited: refused, never read as "not recorded" (which
    would let a tampered payload pass)."""
    values = value.split()
    if all(v == absent for v in values):
        return (absent,) * parts
    if len(values) != parts:
        raise PackageError(
            f"{path}: the makeself header lists {counted(len(values), name + ' value')}"
            f" for {counted(parts, 'payload part')}",
            hint="the header was edited or damaged: copy or download the package again",
        )
    return tuple(values)


def verify(path: Path, header: Header) -> list[Checksum]:
    """Every checksum the header carries (the all-zero ones mean "not recorded"), recomputed."""
    results = []
    with open(path, "rb") as handle:
        handle.seek(header.offset)
        for index, size in enumerate(header.sizes):
            sha, md5, crc = hashlib.sha256(), hashlib.md5(), CksumCrc()  # noqa: S324 - makeself's own choice
            for chunk in _range(handle, size):
                sha.update(chunk)
                md5.update(chunk)
                crc.update(chunk)
            for kind, expected, absent, actual in (
                ("sha256", header.sha256[index], _NO_SHA, sha.hexdigest()),
                ("md5", header.md5[index], _NO_MD5, md5.hexdigest()),
                ("crc", header.crc[index], _NO_CRC, str(crc.value())),
            ):
                if expected != absent:
                    results.append(Checksum(kind, expected, actual))
    return results


def require_valid(path: Path, header: Header) -> list[Checksum]:
    checks = verify(path, header)
    bad = [c for c in checks if not c.ok]
    if bad:
        shown = "; ".join(
            f"payload {c.kind} is {c.actual}, the header records {_short(c.expected, 64)}" for c in bad[:SHOWN_PARTS]
        )
        more = f" (and {len(bad) - SHOWN_PARTS} more)" if len(bad) > SHOWN_PARTS else ""
        raise PackageError(
            f"{path} is corrupt: {shown}{more}",
            hint="the payload changed after packaging: copy or download the package again",
        )
    return checks


def _range(handle: IO[bytes], size: int) -> Iterator[bytes]:
    left = size
    while left > 0:
        chunk = handle.read(min(CHUNK, left))
        if not chunk:
            raise PackageError(f"{getattr(handle, 'name', 'package')} ends {left} bytes early")
        left -= len(chunk)
        yield chunk


class CksumCrc:
    """POSIX ``cksum`` (CRC-32, polynomial 0x04C11DB7, MSB first, length appended, inverted),
    which makeself records as CRCsum. Computed with zlib's reflected CRC on bit-reversed bytes,
    which is the same register bit-reversed: a pure-Python loop would take minutes per 100 MB."""

    _REVERSE = bytes(int(f"{b:08b}"[::-1], 2) for b in range(256))

    def __init__(self) -> None:
        self._register = 0  # reflected register, init 0 as cksum
        self._length = 0

    def update(self, data: bytes) -> None:
        self._register = _raw_crc(data.translate(self._REVERSE), self._register)
        self._length += len(data)

    def value(self) -> int:
        length, tail = self._length, bytearray()
        while length:
            tail.append(length & 0xFF)
            length >>= 8
        register = _raw_crc(bytes(tail).translate(self._REVERSE), self._register)
        return ~int(f"{register:032b}"[::-1], 2) & 0xFFFFFFFF


def _raw_crc(data: bytes, register: int) -> int:
    # zlib.crc32 inverts the register on entry and on exit; undo both to chain a raw register
    return zlib.crc32(data, register ^ 0xFFFFFFFF) ^ 0xFFFFFFFF


class BoundedStream:
    """The decompressed payload as a file object for ``tarfile`` (stream mode), refusing to
    produce more than ``limit`` bytes: a small package that inflates to terabytes is refused.

    Memory stays bounded whatever the payload: each step reads at most CHUNK compressed bytes
    and asks the decompressor for at most CHUNK bytes out (``decompress(data, max_length)``;
    https://docs.python.org/3/library/zlib.html#zlib.Decompress.decompress and the bz2/lzma
    ``needs_input`` protocol), so 22 KB of bzip2 that inflates to 4 GiB is refused after
    ``limit`` bytes, having held one step at a time. The buffer is a bytearray read from an
    offset and compacted only once a step's worth was consumed: linear in the bytes read."""

    def __init__(self, path: Path, header: Header, limit: int, *, part: Optional[int] = None) -> None:
        if header.compression not in _DECOMPRESS:
            raise PackageError(
                f"{path}: payload compression {header.compression!r} is not one ascenv reads",
                hint="ascenv reads gzip, bzip2, xz, zstd (Python 3.14+) and uncompressed makeself payloads"
                " (CANN packages use gzip)",
            )
        self._kind = _DECOMPRESS[header.compression]
        _decoder(self._kind, str(path))  # refuse an unreadable kind before opening anything
        self._handle = open(path, "rb")  # noqa: SIM115 - closed by close()
        # one part (each is a tar archive of its own), or all of them one after the other
        self._parts = list(header.sizes) if part is None else [header.sizes[part]]
        self._offset = header.offset + (sum(header.sizes[:part]) if part else 0)
        self.limit = limit
        self.produced = 0
        self._buffer = bytearray()
        self._start = 0  # bytes of _buffer already handed out
        self._pieces: Optional[Iterator[bytes]] = None
        self.name = str(path)

    def _generate(self) -> Iterator[bytes]:
        self._handle.seek(self._offset)
        for size in self._parts:
            chunks = _range(self._handle, size)
            if self._kind == "none":
                yield from chunks
            else:
                yield from _inflate(self._kind, chunks, self.name)

    def _next_piece(self) -> Optional[bytes]:
        if self._pieces is None:
            self._pieces = self._generate()
        try:
            piece = next(self._pieces, None)
        except (OSError, EOFError, zlib.error, lzma.LZMAError, ValueError) as exc:
            raise PackageError(f"{self.name}: the payload does not decompress ({exc})") from exc
        if piece is not None:
            self.produced += len(piece)
            if self.produced > self.limit:
                raise PackageError(
                    f"{self.name}: the payload decompresses to more than {self.limit} bytes",
                    hint="raise the limit with --max-bytes if the package really is that large",
                )
        return piece

    def read(self, n: int = -1) -> bytes:
        while n < 0 or len(self._buffer) - self._start < n:
            piece = self._next_piece()
            if piece is None:
                break
            if self._start >= CHUNK:  # compact: what is left is less than one read plus one step
                del self._buffer[: self._start]
                self._start = 0
            self._buffer += piece
        end = len(self._buffer) if n < 0 else min(len(self._buffer), self._start + n)
        data = bytes(self._buffer[self._start : end])
        self._start = end
        return data

    def close(self) -> None:
        self._handle.close()


def _inflate(kind: str, chunks: Iterator[bytes], name: str) -> Iterator[bytes]:
    """The decompressed bytes of one payload part, at most CHUNK per piece. Streams may follow
    one another in a part, as ``gzip -d``, ``bzip2 -d`` (pbzip2 writes one per block), ``xz -d``
    and ``zstd -d`` read them; a part must end at the end of a stream."""
    decoder = _decoder(kind, name)
    data, hungry = b"", True
    while True:
        if decoder.eof:
            # what follows the end marker (zlib may also leave it in unconsumed_tail: not twice)
            data = decoder.unused_data
            if not data:
                data = next(chunks, b"")
                if not data:
                    return
            decoder, hungry = _decoder(kind, name), False
        if hungry:
            data = next(chunks, b"")
            if not data:  # every part holds at least one byte: this decoder has had input
                raise PackageError(f"{name}: the compressed payload ends before its end marker")
        out = decoder.decompress(data, CHUNK)
        # zlib hands back what it did not read (unconsumed_tail); bz2, lzma and zstd keep it
        # and say needs_input=False while they hold output
        if kind == "gzip":
            data = decoder.unconsumed_tail
            hungry = not data and len(out) < CHUNK
        else:
            data = b""
            hungry = decoder.needs_input
        if out:
            yield out


def _decoder(kind: str, name: str) -> Any:
    """A decompressor object (``decompress(data, max_length)``, ``eof``, ``unused_data``)."""
    if kind == "gzip":
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if kind == "bzip2":
        return bz2.BZ2Decompressor()
    if kind == "xz":
        return lzma.LZMADecompressor(memlimit=XZ_MEMLIMIT)
    if kind == "zstd":
        # the standard library reads zstd from Python 3.14 (PEP 784); its decoder refuses
        # windows past 128 MiB (zstd's default window_log_max, 27) unless told otherwise
        try:
            return importlib.import_module("compression.zstd").ZstdDecompressor()
        except ImportError:
            raise PackageError(
                f"{name}: the payload is zstd-compressed, which this Python cannot read",
                hint="run ascenv on Python 3.14 or later (compression.zstd), or repack the package with --gzip",
            ) from None
    return None
