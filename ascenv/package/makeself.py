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
import lzma
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Optional

from ascenv.errors import PackageError

HEADER_LIMIT = 1 << 20  # a makeself header is ~20 KB; a "header" past 1 MiB is not one
CHUNK = 1 << 16
_NO_CRC = "0000000000"
_NO_MD5 = "0" * 32
_NO_SHA = "0" * 64
_VARIABLE = re.compile(rb'^([A-Za-z_]+)="([^"\n]*)"$', re.M)
_VERSION = re.compile(rb"^# This script was generated using Makeself ([^\s]+)", re.M)
_DATE = re.compile(rb"^\s*echo Date of packaging: ?(.*)$", re.M)
_COMPRESSION = re.compile(rb"^\s*echo Compression: ?(\S*)\s*$", re.M)
_UNCOMPRESSED = re.compile(rb"^\s*echo Uncompressed size: ?(\d+) KB\s*$", re.M)
# MS_Decompress is the command the header pipes the payload through.
_DECOMPRESS = {"gzip": "gzip", "pigz": "gzip", "bzip2": "bzip2", "pbzip2": "bzip2", "xz": "xz", "none": "none"}


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
    found = {k.decode(): v.decode("utf-8", "replace") for k, v in _VARIABLE.findall(head)}
    missing = [k for k in ("skip", "filesizes", "targetdir", "label") if k not in found]
    if missing:
        raise PackageError(
            f"{path} has no makeself header variable(s) {', '.join(missing)}",
            hint="a makeself 2.x archive defines skip, filesizes, targetdir and label in its header",
        )
    try:
        skip = int(found["skip"])
        sizes = tuple(int(s) for s in found["filesizes"].split())
    except ValueError as exc:
        raise PackageError(
            f"{path}: makeself header has skip={found['skip']!r} filesizes={found['filesizes']!r}"
        ) from exc
    lines = head.split(b"\n")
    if skip < 1 or len(lines) <= skip:
        raise PackageError(f"{path}: the header says it is {skip} lines, the first MiB holds {len(lines) - 1}")
    offset = sum(len(line) + 1 for line in lines[:skip])
    if offset + sum(sizes) > size:
        raise PackageError(
            f"{path} is truncated: the header announces {offset + sum(sizes)} bytes "
            f"({offset} of header + payload {' + '.join(map(str, sizes))}), the file has {size}",
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
        uncompressed_kb=int(kb) if kb else None,
        skip=skip,
        offset=offset,
        sizes=sizes,
        crc=_per_part(found.get("CRCsum", ""), len(sizes), _NO_CRC),
        md5=_per_part(found.get("MD5", ""), len(sizes), _NO_MD5),
        sha256=_per_part(found.get("SHA", ""), len(sizes), _NO_SHA),
        text=head[:offset],
    )


def _match(pattern: re.Pattern[bytes], text: bytes) -> Optional[str]:
    found = pattern.search(text)
    return found.group(1).decode("utf-8", "replace").strip() if found else None


def _decompress_command(head: bytes) -> str:
    found = re.search(rb'eval "([a-z0-9]+) -[a-z]*d[a-z]*"', head)
    return found.group(1).decode() if found else "unknown"


def _per_part(value: str, parts: int, absent: str) -> tuple[str, ...]:
    values = value.split()
    return tuple(values) if len(values) == parts else (absent,) * parts


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
        raise PackageError(
            f"{path} is corrupt: "
            + "; ".join(f"payload {c.kind} is {c.actual}, the header records {c.expected}" for c in bad),
            hint="the payload changed after packaging: copy or download the package again",
        )
    return checks


def _range(handle: IO[bytes], size: int) -> Iterator[bytes]:
    left = size
    while left:
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
    produce more than ``limit`` bytes: a small package that inflates to terabytes is refused."""

    def __init__(self, path: Path, header: Header, limit: int) -> None:
        if header.compression not in _DECOMPRESS:
            raise PackageError(
                f"{path}: payload compression {header.compression!r} is not one ascenv reads",
                hint="ascenv reads gzip, bzip2, xz and uncompressed makeself payloads (CANN packages use gzip)",
            )
        self._kind = _DECOMPRESS[header.compression]
        self._handle = open(path, "rb")  # noqa: SIM115 - closed by close()
        self._parts = list(header.sizes)
        self._offset = header.offset
        self._limit = limit
        self.produced = 0
        self._buffer = b""
        self._chunks: Optional[Iterator[bytes]] = None
        self.name = str(path)

    def _generate(self) -> Iterator[bytes]:
        self._handle.seek(self._offset)
        for size in self._parts:
            inflater = _decoder(self._kind)
            for chunk in _range(self._handle, size):
                yield chunk if inflater is None else inflater.decompress(chunk)
            if inflater is not None and not inflater.eof:
                raise PackageError(f"{self.name}: the compressed payload ends before its end marker")

    def read(self, n: int = -1) -> bytes:
        if self._chunks is None:
            self._chunks = self._generate()
        while n < 0 or len(self._buffer) < n:
            try:
                piece = next(self._chunks)
            except StopIteration:
                break
            except (OSError, EOFError, zlib.error, lzma.LZMAError, ValueError) as exc:
                raise PackageError(f"{self.name}: the payload does not decompress ({exc})") from exc
            self.produced += len(piece)
            if self.produced > self._limit:
                raise PackageError(
                    f"{self.name}: the payload decompresses to more than {self._limit} bytes",
                    hint="raise the limit with --max-bytes if the package really is that large",
                )
            self._buffer += piece
        if n < 0:
            data, self._buffer = self._buffer, b""
        else:
            data, self._buffer = self._buffer[:n], self._buffer[n:]
        return data

    def close(self) -> None:
        self._handle.close()


def _decoder(kind: str) -> Any:
    """A decompressor object (``decompress``, ``eof``), None for an uncompressed payload."""
    if kind == "none":
        return None
    if kind == "gzip":
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    return bz2.BZ2Decompressor() if kind == "bzip2" else lzma.LZMADecompressor()
