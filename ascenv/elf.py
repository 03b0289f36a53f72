"""The one ELF reader of ascenv: machine type, dynamic section, dynamic symbols with versions.

It reads bytes and never loads or executes anything, so an aarch64 image unpacked on x86_64 reads
the same as on its own machine. Only the structures the ABI check needs are parsed, from the
section headers (as ``readelf --dyn-syms`` does): ``.dynamic``, ``.dynsym`` with its string table,
``.gnu.version``, ``.gnu.version_r`` and ``.gnu.version_d``. Layouts: System V gABI
(https://refspecs.linuxfoundation.org/elf/gabi4+/contents.html) and the LSB symbol versioning
chapter (https://refspecs.linuxfoundation.org/LSB_5.0.0/LSB-Core-generic/LSB-Core-generic/symversion.html).

A small struct reader rather than pyelftools: on libtorch_npu.so (torch_npu 2.5.1, aarch64) it is
about 40x faster (bench/README.md, "ELF reader"), and the ABI check reads a few dozen such files.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, NamedTuple, Optional

from ascenv.errors import ElfError

# e_machine values (gABI and the registry in binutils include/elf/common.h)
MACHINES = {3: "i386", 8: "mips", 20: "ppc", 21: "ppc64", 40: "arm", 62: "x86_64", 183: "aarch64", 243: "riscv64"}
HEAD = 64  # bytes enough for class, byte order and e_machine

_SHT_DYNAMIC, _SHT_DYNSYM = 6, 11
_SHT_VERDEF, _SHT_VERNEED, _SHT_VERSYM = 0x6FFFFFFD, 0x6FFFFFFE, 0x6FFFFFFF
_DT_NEEDED, _DT_SONAME, _DT_RPATH, _DT_RUNPATH = 1, 14, 15, 29
_STB_GLOBAL, _STB_WEAK, _STB_GNU_UNIQUE = 1, 2, 10
_VER_FLG_BASE, _VER_FLG_WEAK = 1, 2
_VERSYM_HIDDEN = 0x8000


class Symbol(NamedTuple):
    """One dynamic symbol. A NamedTuple, not a frozen dataclass: libtorch_cpu.so has 45,000 of them
    and a frozen dataclass's __init__ took half the reading time."""

    name: str
    version: Optional[str]  # "GLIBC_2.34"; None when the symbol carries no named version
    defined: bool
    weak: bool
    hidden: bool = False  # defined as a non-default version (name@VER, not name@@VER): only an explicit request binds


@dataclass(frozen=True)
class VersionNeed:
    """One ``.gnu.version_r`` requirement: ``version`` must be defined by the library named ``file``."""

    file: str
    version: str
    weak: bool


@dataclass(frozen=True)
class ElfFile:
    machine: str  # "aarch64", "x86_64", or "e_machine N"
    bits: int  # 32 or 64
    little_endian: bool
    soname: Optional[str]
    needed: tuple[str, ...]
    rpath: tuple[str, ...]
    runpath: tuple[str, ...]
    symbols: tuple[Symbol, ...]  # global and weak dynamic symbols (locals and the null entry left out)
    version_needs: tuple[VersionNeed, ...]
    version_defs: tuple[str, ...]  # versions this file defines (its base name, the soname, left out)

    @property
    def has_runpath(self) -> bool:
        return bool(self.runpath)

    def undefined(self) -> Iterator[Symbol]:
        return (s for s in self.symbols if not s.defined)

    def defined(self) -> Iterator[Symbol]:
        return (s for s in self.symbols if s.defined)


def machine(head: Optional[bytes]) -> Optional[str]:
    """The machine of an ELF file from its first bytes; None when they are not an ELF header."""
    if not head or len(head) < 20 or not head.startswith(b"\x7fELF"):
        return None
    number = int.from_bytes(head[18:20], "little" if head[5] == 1 else "big")
    return MACHINES.get(number, f"e_machine {number}")


def read(path: Path) -> Optional[ElfFile]:
    """Parse ``path``; None when it is not an ELF file. Raises OSError, ElfError."""
    with open(path, "rb") as f:
        return parse(f)


def parse(f: BinaryIO) -> Optional[ElfFile]:
    """Parse an open file positioned anywhere; None when it is not an ELF file. Raises OSError, ElfError."""
    f.seek(0)
    try:
        return _parse(f)
    except struct.error as exc:  # a count or offset that does not fit its structure
        raise ElfError(str(exc)) from exc


class _Reader:
    def __init__(self, f: BinaryIO, little: bool, bits: int) -> None:
        self.f = f
        self.end = "<" if little else ">"
        self.bits = bits
        f.seek(0, 2)
        self.size = f.tell()

    def bytes_at(self, offset: int, size: int) -> bytes:
        if offset < 0 or size < 0 or offset + size > self.size:
            raise ElfError(f"structure at {offset}+{size} runs past the end of the file ({self.size} bytes)")
        self.f.seek(offset)
        return self.f.read(size)


@dataclass(frozen=True)
class _Section:
    type: int
    offset: int
    size: int
    link: int
    entsize: int


def _parse(f: BinaryIO) -> Optional[ElfFile]:
    ident = f.read(HEAD)
    if len(ident) < 52 or not ident.startswith(b"\x7fELF") or ident[4] not in (1, 2) or ident[5] not in (1, 2):
        return None
    bits = 32 if ident[4] == 1 else 64
    r = _Reader(f, ident[5] == 1, bits)
    name = machine(ident) or ""
    sections = _sections(r, ident)
    by_type = {s.type: s for s in sections}  # one of each in a linked object
    soname, needed, rpath, runpath = None, [], [], []
    dyn = by_type.get(_SHT_DYNAMIC)
    if dyn is not None and dyn.link < len(sections):
        strtab = r.bytes_at(sections[dyn.link].offset, sections[dyn.link].size)
        fmt = r.end + ("iI" if bits == 32 else "qQ")
        for tag, value in struct.iter_unpack(fmt, _whole(r, dyn, struct.calcsize(fmt))):
            if tag == 0:
                break
            if tag == _DT_NEEDED:
                needed.append(_str(strtab, value))
            elif tag == _DT_SONAME:
                soname = _str(strtab, value)
            elif tag == _DT_RPATH:
                rpath += [p for p in _str(strtab, value).split(":") if p]
            elif tag == _DT_RUNPATH:
                runpath += [p for p in _str(strtab, value).split(":") if p]
    needs, need_names = _version_needs(r, sections, by_type.get(_SHT_VERNEED))
    defs, def_names = _version_defs(r, sections, by_type.get(_SHT_VERDEF))
    symbols = _symbols(r, sections, by_type.get(_SHT_DYNSYM), by_type.get(_SHT_VERSYM), {**def_names, **need_names})
    return ElfFile(
        machine=name,
        bits=bits,
        little_endian=ident[5] == 1,
        soname=soname,
        needed=tuple(needed),
        rpath=tuple(rpath),
        runpath=tuple(runpath),
        symbols=symbols,
        version_needs=needs,
        version_defs=defs,
    )


def _sections(r: _Reader, ident: bytes) -> list[_Section]:
    if r.bits == 64:
        shoff, shentsize, shnum = (
            struct.unpack_from(r.end + "Q", ident, 40)[0],
            *struct.unpack_from(r.end + "HH", ident, 58),
        )
        fmt = r.end + "IIQQQQIIQQ"
    else:
        shoff, shentsize, shnum = (
            struct.unpack_from(r.end + "I", ident, 32)[0],
            *struct.unpack_from(r.end + "HH", ident, 46),
        )
        fmt = r.end + "IIIIIIIIII"
    if shoff == 0:
        return []
    first = struct.unpack(fmt, r.bytes_at(shoff, struct.calcsize(fmt)))
    if shnum == 0:  # more than 0xff00 sections: the count is in section 0's sh_size (gABI)
        shnum = first[5]
    if shentsize < struct.calcsize(fmt):
        raise ElfError(f"section header entries of {shentsize} bytes are too small")
    raw = r.bytes_at(shoff, shentsize * shnum)
    out = []
    for i in range(shnum):
        _, sh_type, _, _, offset, size, link, _, _, entsize = struct.unpack_from(fmt, raw, i * shentsize)
        out.append(_Section(sh_type, offset, size, link, entsize))
    return out


def _whole(r: _Reader, s: _Section, entry: int) -> bytes:
    data = r.bytes_at(s.offset, s.size)
    return data[: len(data) - len(data) % entry]


def _str(table: bytes, offset: int) -> str:
    end = table.find(b"\0", offset)
    if offset >= len(table) or end < 0:
        raise ElfError(f"string at {offset} is outside its table of {len(table)} bytes")
    return table[offset:end].decode("utf-8", "surrogateescape")


def _strtab(r: _Reader, sections: list[_Section], s: _Section) -> bytes:
    if s.link >= len(sections):
        raise ElfError(f"section links to string table {s.link}, there are {len(sections)} sections")
    return r.bytes_at(sections[s.link].offset, sections[s.link].size)


def _version_needs(
    r: _Reader, sections: list[_Section], s: Optional[_Section]
) -> tuple[tuple[VersionNeed, ...], dict[int, str]]:
    if s is None:
        return (), {}
    strtab, data = _strtab(r, sections, s), r.bytes_at(s.offset, s.size)
    needs, names, pos = [], {}, 0
    for _ in range(len(data) // 16 + 1):
        _, count, file_at, aux, nxt = struct.unpack_from(r.end + "HHIII", data, _bound(data, pos, 16))
        file, apos = _str(strtab, file_at), pos + aux
        for _ in range(count):
            _, flags, index, name_at, anext = struct.unpack_from(r.end + "IHHII", data, _bound(data, apos, 16))
            names[index] = _str(strtab, name_at)
            needs.append(VersionNeed(file, names[index], bool(flags & _VER_FLG_WEAK)))
            if not anext:
                break
            apos += anext
        if not nxt:
            break
        pos += nxt
    return tuple(needs), names


def _version_defs(
    r: _Reader, sections: list[_Section], s: Optional[_Section]
) -> tuple[tuple[str, ...], dict[int, str]]:
    if s is None:
        return (), {}
    strtab, data = _strtab(r, sections, s), r.bytes_at(s.offset, s.size)
    defs, names, pos = [], {}, 0
    for _ in range(len(data) // 20 + 1):
        _, flags, index, count, _, aux, nxt = struct.unpack_from(r.end + "HHHHIII", data, _bound(data, pos, 20))
        if count:  # the first aux names the version; later ones its parents
            name = _str(strtab, struct.unpack_from(r.end + "I", data, _bound(data, pos + aux, 8))[0])
            names[index] = name
            if not flags & _VER_FLG_BASE:
                defs.append(name)
        if not nxt:
            break
        pos += nxt
    return tuple(defs), names


def _bound(data: bytes, pos: int, size: int) -> int:
    if pos < 0 or pos + size > len(data):
        raise ElfError(f"version entry at {pos} runs past its section of {len(data)} bytes")
    return pos


def _symbols(
    r: _Reader, sections: list[_Section], s: Optional[_Section], versym: Optional[_Section], versions: dict[int, str]
) -> tuple[Symbol, ...]:
    if s is None:
        return ()
    strtab = _strtab(r, sections, s)
    if r.bits == 64:
        fmt, name_i, info_i, shndx_i = r.end + "IBBHQQ", 0, 1, 3
    else:
        fmt, name_i, info_i, shndx_i = r.end + "IIIBBH", 0, 3, 5
    entries = list(struct.iter_unpack(fmt, _whole(r, s, struct.calcsize(fmt))))
    indexes: list[int] = []
    if versym is not None:
        indexes = [v for (v,) in struct.iter_unpack(r.end + "H", _whole(r, versym, 2))]
    out = []
    n_indexes = len(indexes)
    find = strtab.find
    for i, e in enumerate(entries):
        bind = e[info_i] >> 4
        if i == 0 or bind not in (_STB_GLOBAL, _STB_WEAK, _STB_GNU_UNIQUE):
            continue
        raw = indexes[i] if i < n_indexes else 1
        index = raw & 0x7FFF
        at = e[name_i]
        end = find(b"\0", at)
        if end < 0 or at >= len(strtab):
            raise ElfError(f"symbol name at {at} is outside its table of {len(strtab)} bytes")
        defined = e[shndx_i] != 0
        out.append(
            Symbol(
                strtab[at:end].decode("utf-8", "surrogateescape"),
                versions.get(index) if index > 1 else None,
                defined,
                bind == _STB_WEAK,
                defined and bool(raw & _VERSYM_HIDDEN),
            )
        )
    return tuple(out)
