"""Repack a makeself package so that the same inputs always give the same bytes.

makeself 2.4.5 embeds, besides the payload, a random target directory (``makeself-<pid>-<time>``),
the packaging date, the build command line (absolute paths of the header and of the output), tar
owners and mtimes, and the gzip header's time (https://github.com/megastep/makeself makeself.sh;
https://reproducible-builds.org/docs/archives/ for the tar and gzip parts). Repacking fixes each:
entries sorted by name, owners 0:0 without names, mtimes clamped to SOURCE_DATE_EPOCH
(https://reproducible-builds.org/specs/source-date-epoch/), gzip written by zlib with neither
name nor time, the header's target directory, date and build command made constant. The header
script is otherwise kept as the package had it (CANN's modified header included): its ``skip``
line count and its checksums are recomputed, which is all makeself reads back.
"""

from __future__ import annotations

import hashlib
import re
import tarfile
import tempfile
import time
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ascenv import errors
from ascenv.fsutil import atomic_path
from ascenv.package import contents, makeself

TARGET_DIR = "makeself-ascenv-normalized"
BUILD_COMMAND = 'echo Build command was: "makeself (repacked by ascenv package normalize)"'
GZIP_LEVEL = 9
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@dataclass(frozen=True)
class Normalized:
    source: str
    output: str
    source_sha256: str
    sha256: str
    members: int
    source_date_epoch: int
    date: str


def epoch_from(environ: Mapping[str, str]) -> int:
    value = environ.get("SOURCE_DATE_EPOCH", "").strip()
    if not value:
        return 0
    if not value.isdigit():
        raise errors.UsageError(
            f"SOURCE_DATE_EPOCH={value!r} is not a number of seconds",
            hint="set it to an integer (git log -1 --format=%ct) or pass --source-date-epoch",
        )
    return int(value)


def packaging_date(epoch: int) -> str:
    """``date`` in the C locale, UTC: "Thu Jan  1 00:00:00 UTC 1970"."""
    t = time.gmtime(epoch)
    clock = f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}"
    return f"{_DAYS[t.tm_wday]} {_MONTHS[t.tm_mon - 1]} {t.tm_mday:2d} {clock} UTC {t.tm_year}"


def normalize(
    package: Path,
    output: Path,
    epoch: int,
    *,
    max_bytes: int = contents.MAX_BYTES,
    max_members: int = contents.MAX_MEMBERS,
) -> Normalized:
    header = makeself.read_header(package)
    makeself.require_valid(package, header)
    if header.compression != "gzip":
        raise errors.PackageError(
            f"{package}: normalize repacks gzip payloads only, this one is {header.compression}",
            hint="CANN operator packages are made with --gzip (cmake/makeself.cmake of the project template)",
        )
    try:
        with tempfile.TemporaryFile() as spool:
            members = _spool(package, header, spool, max_bytes, max_members)
            with tempfile.TemporaryFile() as payload:
                tar_size = _write_tar(members, spool, payload, epoch)
                payload.seek(0)
                sha, md5, crc, size = hashlib.sha256(), hashlib.md5(), makeself.CksumCrc(), 0  # noqa: S324
                for chunk in iter(lambda: payload.read(makeself.CHUNK), b""):
                    sha.update(chunk)
                    md5.update(chunk)
                    crc.update(chunk)
                    size += len(chunk)
                sums = {
                    "SHA": sha.hexdigest() if header.sha256[0] != "0" * 64 else header.sha256[0],
                    "MD5": md5.hexdigest() if header.md5[0] != "0" * 32 else header.md5[0],
                    "CRCsum": str(crc.value()) if header.crc[0] != "0000000000" else header.crc[0],
                }
                text = rewrite_header(header, size, (tar_size + 1023) // 1024, sums, packaging_date(epoch))
                payload.seek(0)
                digest = _write(output, text, payload)
    except OSError as exc:  # the spool files: a full or unwritable $TMPDIR (the output's own errors are said above)
        raise errors.UsageError(
            f"cannot repack {package}: a temporary file failed: {exc.strerror or exc}",
            hint="normalize spools the payload in $TMPDIR, up to --max-bytes: make room there or set TMPDIR elsewhere",
        ) from None
    return Normalized(
        source=str(package),
        output=str(output),
        source_sha256=_file_sha256(package),
        sha256=digest.hexdigest(),
        members=len(members),
        source_date_epoch=epoch,
        date=packaging_date(epoch),
    )


def _write(output: Path, text: bytes, payload: IO[bytes]) -> Any:
    """The header then the payload, atomically into ``output``; the sha256 of what was written.
    A target that cannot be written (a directory, a missing parent, a dangling link, a full or
    read-only file system) is a usage error, as for lock, report and snapshot -o."""
    digest = hashlib.sha256(text)
    try:
        with atomic_path(output, mode=0o755) as tmp:
            with open(tmp, "wb") as handle:
                handle.write(text)
                for chunk in iter(lambda: payload.read(makeself.CHUNK), b""):
                    digest.update(chunk)
                    handle.write(chunk)
    except OSError as exc:
        raise errors.UsageError(
            f"cannot write {output}: {exc.strerror or exc}", hint="-o takes a file path in a writable directory"
        ) from None
    return digest


def _spool(
    package: Path, header: makeself.Header, spool: IO[bytes], max_bytes: int, max_members: int
) -> list[tuple[tarfile.TarInfo, int]]:
    """Every member's TarInfo and the offset of its data in ``spool`` (one pass over the payload)."""
    found: list[tuple[tarfile.TarInfo, int]] = []
    data_of: dict[str, tuple[int, int]] = {}
    with contents.tar_members(package, header, max_bytes=max_bytes, max_members=max_members) as members:
        for tar, info in members:
            offset = spool.tell()
            if info.isfile():
                handle = tar.extractfile(info)
                assert handle is not None
                for chunk in iter(lambda: handle.read(makeself.CHUNK), b""):  # noqa: B023
                    spool.write(chunk)
                data_of[contents.clean(info.name)] = (offset, info.size)
            elif info.islnk():  # a hard link becomes a copy: sorting may put it before its target
                target = data_of.get(contents.clean(info.linkname))
                if target is None:
                    raise errors.PackageError(
                        f"{package}: hard link {contents.text(info.name)} to a file not before it"
                    )
                info = _as_file(info, target[1])
                offset = target[0]
            found.append((info, offset))
    return found


def _as_file(info: tarfile.TarInfo, size: int) -> tarfile.TarInfo:
    copy = tarfile.TarInfo(info.name)
    copy.mode, copy.mtime, copy.size, copy.type = info.mode, info.mtime, size, tarfile.REGTYPE
    return copy


def _write_tar(members: list[tuple[tarfile.TarInfo, int]], spool: IO[bytes], payload: IO[bytes], epoch: int) -> int:
    """The sorted, owner-free, clamped tar, gzip-compressed into ``payload``; returns the tar's size."""
    compressor = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # gzip, mtime 0, no name
    counter = _Compressing(payload, compressor)
    with tarfile.open(fileobj=counter, mode="w|", format=tarfile.GNU_FORMAT) as tar:  # type: ignore[call-overload]
        for info, offset in sorted(members, key=lambda m: contents.clean(m[0].name)):
            name = contents.clean(info.name)
            clean = tarfile.TarInfo("./" if name == "." else "./" + name)
            clean.type, clean.mode, clean.linkname = info.type, info.mode & 0o7777, info.linkname
            clean.uid = clean.gid = 0
            clean.uname = clean.gname = ""
            clean.mtime = min(int(info.mtime), epoch)
            if info.isfile():
                clean.size = info.size
                spool.seek(offset)
                tar.addfile(clean, _Slice(spool, info.size))
            else:
                tar.addfile(clean)
    payload.write(compressor.flush())
    return counter.size


class _Compressing:
    def __init__(self, target: IO[bytes], compressor: Any) -> None:
        self._target, self._compressor, self.size = target, compressor, 0

    def write(self, data: bytes) -> int:
        self.size += len(data)
        self._target.write(self._compressor.compress(data))
        return len(data)


class _Slice:
    def __init__(self, handle: IO[bytes], size: int) -> None:
        self._handle, self._left = handle, size

    def read(self, n: int = -1) -> bytes:
        n = self._left if n < 0 else min(n, self._left)
        data = self._handle.read(n)
        self._left -= len(data)
        return data


def rewrite_header(header: makeself.Header, size: int, kb: int, sums: Mapping[str, str], date: str) -> bytes:
    text = header.text.decode("latin-1")  # byte-transparent: the header is kept as it was
    values = {**sums, "filesizes": str(size), "totalsize": str(size)}
    for key, value in values.items():
        text = re.sub(rf'^{key}="[^"\n]*"$', f'{key}="{value}"', text, count=1, flags=re.M)
    # makeself names the directory it extracts into makeself-<pid>-<date> (makeself.sh,
    # archdirname), the one random part; any other value was chosen ("." of --current) and stays.
    # Only the assignment and the echo line of --dumpconf (echo archdirname=\"...\") change: a
    # global replace would also rewrite "." or "opp" wherever they appear, and break the header.
    if re.fullmatch(r"makeself-\d+-\d+", header.target_dir):
        text = re.sub(r'^targetdir="[^"\n]*"$', f'targetdir="{TARGET_DIR}"', text, count=1, flags=re.M)
        text = re.sub(
            r'^(\s*echo archdirname=\\")' + re.escape(header.target_dir) + r'(?=\\"\s*$)',
            lambda m: m.group(1) + TARGET_DIR,
            text,
            flags=re.M,
        )
    text = re.sub(r"^(\s*echo Date of packaging: ?).*$", lambda m: m.group(1) + date, text, flags=re.M)
    text = re.sub(r"^(\s*echo Uncompressed size: ?)\d+( KB)\s*$", rf"\g<1>{kb}\g<2>", text, flags=re.M)
    # the build command spans lines ending in "\\" up to the one closing the quote
    text = re.sub(
        r'^(\s*)echo Build command was: ".*?(?<!\\)"$',
        lambda m: m.group(1) + BUILD_COMMAND,
        text,
        count=1,
        flags=re.M | re.S,
    )
    lines = text.count("\n")
    text = re.sub(r'^skip="\d+"$', f'skip="{lines}"', text, count=1, flags=re.M)
    return text.encode("latin-1")


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(makeself.CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()
