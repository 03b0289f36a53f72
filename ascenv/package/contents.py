"""The tar stream inside a makeself package: every member with its size, mode and sha256, read in
one bounded pass (total decompressed bytes, member count, header sizes, bytes kept in memory),
nothing written to disk.

tarfile believes the sizes a header states: a pax header or GNU long name is read whole into
memory, a member's size is skipped block by block, a sparse map is read entry by entry, and a
chain of extended headers is followed by recursion (CPython Lib/tarfile.py, ``_proc_pax``,
``_proc_gnulong``, ``_proc_gnusparse_10``). So each is checked before tarfile acts on it:
extended headers at most 64 KiB each (as report bundles cap them), at most a few in a row, a
member no larger than the payload limit, no sparse member (makeself archives are made by a plain
``tar``; a sparse map could describe terabytes of holes read without any input).
"""

from __future__ import annotations

import contextlib
import hashlib
import posixpath
import tarfile
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from ascenv import elf
from ascenv.errors import PackageError
from ascenv.package.makeself import BoundedStream, Header

MAX_BYTES = 8 << 30  # decompressed payload; real operator packages are tens of MB
MAX_MEMBERS = 200_000
KEEP_LIMIT = 4 << 20  # the largest file kept in memory to be read (JSON, version.info), as tree.JSON_LIMIT
KEEP_TOTAL = 8 << 20  # all the files kept together; past it a file is "not read" (layout says so)
EXTENSION_LIMIT = 64 << 10  # one pax header or GNU long name/link; all global pax headers together
EXTENSION_CHAIN = 8  # extended headers before one member (global + pax + long name + long link is 4)
NAME_LIMIT = 4096  # PATH_MAX: a longer member name cannot be extracted anywhere
NAMES_TOTAL = 64 << 20  # names and link targets of all members together

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
_EXTENDED = (
    tarfile.GNUTYPE_LONGNAME,
    tarfile.GNUTYPE_LONGLINK,
    tarfile.XHDTYPE,
    tarfile.XGLTYPE,
    tarfile.SOLARIS_XHDTYPE,
)
_SPECIAL = {
    "chardev": "character device",
    "blockdev": "block device",
    "fifo": "FIFO",
    "other": "a member of a type tar does not define",
}
_KINDS = {
    tarfile.SYMTYPE: "symlink",
    tarfile.LNKTYPE: "hardlink",
    tarfile.CHRTYPE: "chardev",
    tarfile.BLKTYPE: "blockdev",
    tarfile.FIFOTYPE: "fifo",
}


@dataclass(frozen=True)
class Member:
    path: str  # as in the archive, without the leading "./"; bytes that are not UTF-8 shown as \xNN
    kind: str  # file, dir, symlink, hardlink, chardev, blockdev, fifo, other
    size: int
    mode: int  # permission bits
    sha256: Optional[str] = None  # regular files only
    link: Optional[str] = None  # symlink / hardlink target
    uid: int = 0
    gid: int = 0
    mtime: int = 0
    dangers: tuple[str, ...] = ()  # why extracting it could write or read outside the target directory

    @property
    def safe(self) -> bool:
        return not self.dangers


def clean(name: str) -> str:
    while name.startswith("./"):
        name = name[2:]
    return name.rstrip("/") or "."


def text(value: str) -> str:
    """A name tarfile decoded with surrogateescape (or JSON with a lone surrogate) as printable
    UTF-8: the undecodable bytes shown as ``\\xNN`` so that no output stream refuses it."""
    try:
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return value.encode("utf-8", "backslashreplace").decode("utf-8")


def kept_prefix(path: str, size: int) -> int:
    """How much of a member to keep for interpretation: JSON and version.info whole, shared
    libraries their ELF header, nothing of the rest (kernels, sources)."""
    if path.endswith((".json", "version.info")) and size <= KEEP_LIMIT:
        return size
    if ".so" in path.rsplit("/", 1)[-1]:
        return elf.HEAD
    return 0


def dangers(name: str, kind: str, mode: int, link: Optional[str], below_link: Optional[str]) -> tuple[str, ...]:
    """What makes a member unsafe to extract: what Python's "data" extraction filter refuses or
    strips (PEP 706: absolute names, "..", links leading out, devices and FIFOs, setuid/setgid
    bits), and a member written through a symlink the archive made just before."""
    found = []
    if name.startswith("/"):
        found.append("absolute path")
    if ".." in name.split("/"):
        found.append("'..' in its path")
    if below_link is not None:
        found.append(f"below the symlink {below_link}: extracting it writes through the link")
    if kind == "symlink" and link is not None and _leaves(posixpath.dirname(name), link):
        found.append(f"symlink pointing outside the package ({link})")
    if kind == "hardlink":
        outside = link is not None and _leaves("", link)
        found.append(f"hard link to {link}" + (", outside the package" if outside else ""))
    if kind in _SPECIAL:
        found.append(_SPECIAL[kind])
    found += [bit for flag, bit in ((0o4000, "setuid"), (0o2000, "setgid")) if mode & flag]
    return tuple(found)


def _leaves(directory: str, target: str) -> bool:
    if target.startswith("/"):
        return True
    depth = len([p for p in directory.split("/") if p not in ("", ".")])
    for part in target.split("/"):
        if part == "..":
            depth -= 1
            if depth < 0:
                return True
        elif part not in ("", "."):
            depth += 1
    return False


def read_members(
    path: Path,
    header: Header,
    *,
    max_bytes: int = MAX_BYTES,
    max_members: int = MAX_MEMBERS,
    keep: Callable[[str, int], int] = kept_prefix,
) -> tuple[tuple[Member, ...], dict[str, bytes]]:
    members: list[Member] = []
    kept: dict[str, bytes] = {}
    budget = KEEP_TOTAL
    links: set[str] = set()
    with tar_members(path, header, max_bytes=max_bytes, max_members=max_members) as found:
        for tar, info in found:
            name, kind = text(clean(info.name)), _kind(info)
            link = text(info.linkname) if kind in ("symlink", "hardlink") else None
            digest = None
            if kind == "file" and info.size == 0:
                digest, data = EMPTY_SHA256, (b"" if keep(name, 0) else None)
            elif kind == "file":
                wanted = keep(name, info.size)
                digest, data = _hash(tar, info, wanted if wanted <= budget else 0)
                if data is not None:
                    kept[name] = data
                    budget -= len(data)
            members.append(
                Member(
                    path=name,
                    kind=kind,
                    size=info.size if kind == "file" else 0,
                    mode=info.mode & 0o7777,
                    sha256=digest,
                    link=link,
                    uid=info.uid,
                    gid=info.gid,
                    mtime=_seconds(info.mtime),
                    dangers=dangers(name, kind, info.mode, link, _below(name, links)),
                )
            )
            if kind == "symlink":
                links.add(name)
    return tuple(members), kept


def _below(name: str, links: set[str]) -> Optional[str]:
    """The symlink member that ``name`` lies below, if any (tar would write through it)."""
    if not links:
        return None
    parts = name.split("/")
    return next((p for p in ("/".join(parts[:i]) for i in range(1, len(parts))) if p in links), None)


def _seconds(mtime: Any) -> int:
    """A pax mtime is a decimal that may be NaN, inf or huge (tarfile takes any float)."""
    try:
        return int(mtime)
    except (ValueError, OverflowError):
        return 0


@contextlib.contextmanager
def tar_members(
    path: Path, header: Header, *, max_bytes: int, max_members: int
) -> Iterator[Iterator[tuple[tarfile.TarFile, tarfile.TarInfo]]]:
    """The payload's tar members with the archive to read them from, one at a time and each
    forgotten by tarfile once read, with every limit checked; any way the stream can be
    malformed is a PackageError (exit 2). Each payload part is its own tar archive, extracted
    in turn as makeself's header does (``for s in $filesizes``): all of them are read."""
    members = _each(path, header, max_bytes, max_members)
    try:
        yield members
    except PackageError:
        raise
    except (tarfile.TarError, EOFError, ValueError, OverflowError, RecursionError, UnicodeError) as exc:
        reason = str(exc) if isinstance(exc, tarfile.TarError) else f"{type(exc).__name__}: {exc}"
        raise PackageError(f"{path}: the payload is not a readable tar stream ({reason[:200]})") from exc
    finally:
        members.close()


def _each(
    path: Path, header: Header, max_bytes: int, max_members: int
) -> Generator[tuple[tarfile.TarFile, tarfile.TarInfo], None, None]:
    count, names, produced = 0, 0, 0
    for part in range(len(header.sizes)):
        stream = BoundedStream(path, header, max_bytes - produced, part=part)
        try:
            with tarfile.open(fileobj=stream, mode="r|", tarinfo=_checked_info(path, max_bytes)) as tar:  # type: ignore[call-overload]
                while True:
                    info = tar.next()
                    if info is None:
                        break
                    count += 1
                    if count > max_members:
                        raise PackageError(
                            f"{path} holds more than {max_members} members",
                            hint="raise the limit with --max-members if the package really is that large",
                        )
                    names += len(info.name) + len(info.linkname)
                    if names > NAMES_TOTAL:
                        raise PackageError(f"{path}: its member names take more than {NAMES_TOTAL >> 20} MiB")
                    info.pax_headers = {}  # a copy of every global header: not kept per member
                    tar.members.clear()  # tarfile keeps every member it read; stream mode never needs them again
                    yield tar, info
        finally:
            produced += stream.produced
            stream.close()


def _checked_info(path: Path, limit: int) -> type[tarfile.TarInfo]:
    """A TarInfo class that checks each header before tarfile acts on it (see the module doc)."""
    state = {"depth": 0, "global": 0}

    class CheckedInfo(tarfile.TarInfo):
        @classmethod
        def fromtarfile(cls, tar: tarfile.TarFile) -> CheckedInfo:
            state["depth"] += 1
            try:
                if state["depth"] > EXTENSION_CHAIN:
                    raise PackageError(f"{path}: more than {EXTENSION_CHAIN} extended tar headers in a row")
                info = super().fromtarfile(tar)
            finally:
                state["depth"] -= 1
            if not 0 <= info.size <= limit:
                raise PackageError(f"{path}: a member header states {info.size} bytes, past the limit {limit}")
            if len(info.name) > NAME_LIMIT or len(info.linkname) > NAME_LIMIT:
                raise PackageError(f"{path}: a member name is longer than {NAME_LIMIT} bytes (PATH_MAX)")
            return info

        def _proc_member(self, tar: tarfile.TarFile) -> Any:
            if self.type in _EXTENDED:
                if not 0 <= self.size <= EXTENSION_LIMIT:
                    raise PackageError(
                        f"{path}: an extended tar header (long name or pax) of {self.size} bytes,"
                        f" more than {EXTENSION_LIMIT >> 10} KiB"
                    )
                if self.type == tarfile.XGLTYPE:
                    state["global"] += self.size
                    if state["global"] > EXTENSION_LIMIT:
                        raise PackageError(f"{path}: global pax headers past {EXTENSION_LIMIT >> 10} KiB")
            return super()._proc_member(tar)  # type: ignore[misc]

        def _proc_sparse(self, tar: tarfile.TarFile) -> Any:
            raise PackageError(f"{path}: sparse member {text(self.name)!r}: not in a makeself package")

        def _proc_gnusparse_00(self, member: tarfile.TarInfo, *args: Any) -> Any:  # called by _proc_pax
            raise PackageError(f"{path}: sparse member {text(member.name)!r}: not in a makeself package")

        _proc_gnusparse_01 = _proc_gnusparse_10 = _proc_gnusparse_00

    return CheckedInfo


def _hash(tar: tarfile.TarFile, info: tarfile.TarInfo, keep: int) -> tuple[str, Optional[bytes]]:
    handle = tar.extractfile(info)
    assert handle is not None  # a regular file
    digest, head = hashlib.sha256(), bytearray()
    while True:
        chunk = handle.read(1 << 16)
        if not chunk:
            break
        digest.update(chunk)
        if len(head) < keep:
            head += chunk[: keep - len(head)]
    return digest.hexdigest(), bytes(head) if keep else None


def _kind(info: tarfile.TarInfo) -> str:
    if info.isfile():
        return "file"
    if info.isdir():
        return "dir"
    return _KINDS.get(info.type, "other")
