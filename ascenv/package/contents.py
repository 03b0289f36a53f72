"""The tar stream inside a makeself package: every member with its size, mode and sha256, read in
one bounded pass (total decompressed bytes, member count), nothing written to disk."""

from __future__ import annotations

import hashlib
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ascenv.errors import PackageError
from ascenv.package.makeself import BoundedStream, Header

MAX_BYTES = 8 << 30  # decompressed payload; real operator packages are tens of MB
MAX_MEMBERS = 200_000
KEEP_LIMIT = 16 << 20  # the largest file kept in memory to be read (JSON, version.info)
ELF_HEAD = 64  # enough of an ELF file for its class, byte order and e_machine


@dataclass(frozen=True)
class Member:
    path: str  # as in the archive, without the leading "./"
    kind: str  # file, dir, symlink, hardlink, other
    size: int
    mode: int  # permission bits
    sha256: Optional[str] = None  # regular files only
    link: Optional[str] = None  # symlink / hardlink target
    uid: int = 0
    gid: int = 0
    mtime: int = 0


def clean(name: str) -> str:
    while name.startswith("./"):
        name = name[2:]
    return name.rstrip("/") or "."


def kept_prefix(path: str, size: int) -> int:
    """How much of a member to keep for interpretation: JSON and version.info whole, shared
    libraries their ELF header, nothing of the rest (kernels, sources)."""
    if path.endswith((".json", "version.info")) and size <= KEEP_LIMIT:
        return size
    if ".so" in path.rsplit("/", 1)[-1]:
        return ELF_HEAD
    return 0


def read_members(
    path: Path,
    header: Header,
    *,
    max_bytes: int = MAX_BYTES,
    max_members: int = MAX_MEMBERS,
    keep: Callable[[str, int], int] = kept_prefix,
) -> tuple[tuple[Member, ...], dict[str, bytes]]:
    stream = BoundedStream(path, header, max_bytes)
    members: list[Member] = []
    kept: dict[str, bytes] = {}
    try:
        with tarfile.open(fileobj=stream, mode="r|") as tar:  # type: ignore[call-overload]
            for info in tar:
                if len(members) >= max_members:
                    raise PackageError(
                        f"{path} holds more than {max_members} members",
                        hint="raise the limit with --max-members if the package really is that large",
                    )
                name = clean(info.name)
                digest = None
                if info.isfile():
                    digest, data = _hash(tar, info, keep(name, info.size))
                    if data is not None:
                        kept[name] = data
                members.append(
                    Member(
                        path=name,
                        kind=_kind(info),
                        size=info.size if info.isfile() else 0,
                        mode=info.mode & 0o7777,
                        sha256=digest,
                        link=info.linkname if (info.issym() or info.islnk()) else None,
                        uid=info.uid,
                        gid=info.gid,
                        mtime=int(info.mtime),
                    )
                )
    except tarfile.TarError as exc:
        raise PackageError(f"{path}: the payload is not a readable tar stream ({exc})") from exc
    finally:
        stream.close()
    return tuple(members), kept


def _hash(tar: tarfile.TarFile, info: tarfile.TarInfo, keep: int) -> tuple[str, Optional[bytes]]:
    handle = tar.extractfile(info)
    assert handle is not None  # a regular file
    digest, head = hashlib.sha256(), b""
    while True:
        chunk = handle.read(1 << 16)
        if not chunk:
            break
        digest.update(chunk)
        if len(head) < keep:
            head += chunk[: keep - len(head)]
    return digest.hexdigest(), head if keep else None


def _kind(info: tarfile.TarInfo) -> str:
    if info.isfile():
        return "file"
    if info.isdir():
        return "dir"
    if info.issym():
        return "symlink"
    return "hardlink" if info.islnk() else "other"
