"""Hostile makeself packages for the tests, after mkrun.py and bomb.py of the December 2026
adversarial report (../shared/research/adversarial-2026-12-second.md, appendix): the header of a
real package Debian's makeself built, with its variables replaced, and any payload after it."""

from __future__ import annotations

import bz2
import functools
import hashlib
import io
import lzma
import os
import re
import subprocess
import sys
import tarfile
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Optional

from ascenv.package.makeself import CksumCrc
from tests.package.pkgbuild import make_package

COMMANDS = {"gzip": "gzip -cd", "bzip2": "bzip2 -d", "xz": "xz -d", "zstd": "zstd -dc", "none": "cat", "lz4": "lz4 -d"}
MiB = 1 << 20


@functools.lru_cache(maxsize=1)
def _real_header_cached(work: str) -> bytes:
    package = make_package(Path(work), Path(work) / "canary")
    data = package.read_bytes()
    skip = int(re.search(rb'^skip="(\d+)"$', data, re.M).group(1))  # type: ignore[union-attr]
    return b"\n".join(data.split(b"\n")[:skip]) + b"\n"


def real_header(tmp_path_factory) -> bytes:  # type: ignore[no-untyped-def]
    """The header of a package made by Debian's makeself, with CANN's flags (made once a session)."""
    return _real_header_cached(str(tmp_path_factory.getbasetemp() / "hostile-header"))


def compress(raw: bytes, kind: str = "gzip") -> bytes:
    if kind == "gzip":
        c = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip framing, no name, mtime 0
        return c.compress(raw) + c.flush()
    if kind == "bzip2":
        return bz2.compress(raw, 9)
    if kind == "xz":
        return lzma.compress(raw, preset=1)
    if kind == "zstd":
        return subprocess.run(["zstd", "-q", "-c"], input=raw, capture_output=True, check=True).stdout
    return raw


def tar_bytes(members: Iterable[tuple[tarfile.TarInfo, Optional[bytes]]], fmt: int = tarfile.GNU_FORMAT) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=fmt) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return out.getvalue()


def ti(name: str, data: bytes = b"", type: bytes = tarfile.REGTYPE, linkname: str = "", mode: int = 0o644):  # type: ignore[no-untyped-def]
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = type, linkname, mode
    info.size = len(data) if type == tarfile.REGTYPE else 0
    return info, (data if type == tarfile.REGTYPE else None)


def build(
    out: Path,
    header: bytes,
    payload: bytes,
    *,
    compression: str = "gzip",
    subs: Optional[Mapping[str, str]] = None,
    parts: Optional[list[bytes]] = None,
) -> Path:
    """``out``: ``header`` with its sizes and checksums for ``payload`` (or each of ``parts``),
    ``subs`` replacing any variable, then the payload."""
    pieces = parts if parts is not None else [payload]
    crcs, shas = [], []
    for piece in pieces:
        crc = CksumCrc()
        crc.update(piece)
        crcs.append(str(crc.value()))
        shas.append(hashlib.sha256(piece).hexdigest())
    values = {
        "SHA": " ".join(shas),
        "CRCsum": " ".join(crcs),
        "MD5": " ".join("0" * 32 for _ in pieces),
        "filesizes": " ".join(str(len(p)) for p in pieces),
        "totalsize": str(sum(len(p) for p in pieces)),
        **(subs or {}),
    }
    text = header.decode("latin-1")
    for key, value in values.items():
        text = re.sub(rf'^{key}="[^"\n]*"$', lambda m, k=key, v=value: f'{k}="{v}"', text, count=1, flags=re.M)
    if compression != "gzip":
        text = text.replace('eval "gzip -cd"', f'eval "{COMMANDS[compression]}"')
        text = text.replace("echo Compression: gzip", f"echo Compression: {compression}")
    out.write_bytes(text.encode("latin-1") + b"".join(pieces))
    return out


def one_member_stream(kind: str, size: int, name: str = "packages/zeros.bin", step: int = 16 * MiB) -> bytes:
    """One compressed stream of a tar holding one member of ``size`` zero bytes (bomb.py)."""
    compressor = {
        "bzip2": lambda: bz2.BZ2Compressor(9),
        "xz": lambda: lzma.LZMACompressor(preset=1),
        "gzip": lambda: zlib.compressobj(9, zlib.DEFLATED, 31),
    }[kind]()
    info = tarfile.TarInfo(name)
    info.size = size
    out = [compressor.compress(info.tobuf(tarfile.GNU_FORMAT))]
    zeros, left = bytes(min(step, size)), size
    while left:
        out.append(compressor.compress(zeros[: min(step, left)]))
        left -= min(step, left)
    out.append(compressor.flush())
    return b"".join(out)


@functools.lru_cache(maxsize=8)
def repeated_bomb(kind: str, copies: int, size: int = 16 * MiB) -> bytes:
    """A tar of one member of ``copies * size`` zero bytes as one stream holding its header
    then ``copies`` streams of ``size`` zeros each (as pbzip2 writes them; gzip -d, bzip2 -d and
    xz -d read them one after the other): a bomb of GiBs that takes a second to make."""
    header = tarfile.TarInfo("packages/zeros.bin")
    header.size = copies * size
    return compress(header.tobuf(tarfile.GNU_FORMAT), kind) + compress(bytes(size), kind) * copies


_MEASURE = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[2:], capture_output=True, text=True)\n"
    "sys.stdout.write(done.stdout); sys.stderr.write(done.stderr)\n"
    "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
    "sys.exit(done.returncode)\n"
)


def ascenv_measured(tmp_path: Path, *argv: str, timeout: float = 300) -> tuple[int, str, str, int]:
    """(exit code, stdout, stderr, peak RSS in MiB) of ``python -m ascenv ARGV`` in a fresh
    wrapper process, so that no earlier child of the test run counts."""
    peak = tmp_path / "peak-rss"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "PYTHONDONTWRITEBYTECODE": "1"}
    env.update({k: v for k, v in os.environ.items() if k == "PYTHONPATH"})
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(peak), sys.executable, "-m", "ascenv", *argv],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=timeout,
    )
    return done.returncode, done.stdout, done.stderr, int(peak.read_text()) >> 10


def many_members(count: int, prefix: str = "packages/f") -> bytes:
    """A tar of ``count`` empty files ``<prefix>000000.txt``...: the header of the first with its
    name and checksum patched, as tarfile would write them (tarfile takes minutes for 100k)."""
    template = bytearray(tarfile.TarInfo(f"{prefix}{0:06d}.txt").tobuf(tarfile.GNU_FORMAT))
    start = len(prefix)
    blocks = []
    for i in range(count):
        block = bytearray(template)
        block[start : start + 6] = b"%06d" % i
        block[148:156] = b" " * 8  # the checksum is computed with its own field as spaces
        block[148:156] = b"%06o\0 " % sum(block)
        blocks.append(bytes(block))
    return b"".join(blocks) + bytes(1024)
