"""The one ELF reader of ascenv: machine type, dynamic section, dynamic symbols with versions.

It reads bytes and never loads or executes anything, so an aarch64 image unpacked on x86_64 reads
the same as on its own machine. Only the structures the ABI check needs are parsed, from the
section headers (as ``readelf --dyn-syms`` does): ``.dynamic``, ``.dynsym`` with its string table,
``.gnu.version``, ``.gnu.version_r``, ``.gnu.version_d`` and the symbol hash table (``.gnu.hash``,
else ``.hash``). Layouts: System V gABI (https://refspecs.linuxfoundation.org/elf/gabi4+/contents.html,
"Hash Table" for ``.hash``) and the LSB symbol versioning chapter
(https://refspecs.linuxfoundation.org/LSB_5.0.0/LSB-Core-generic/LSB-Core-generic/symversion.html).

The dynamic symbols are kept as the file's bytes and decoded on demand: ``ElfFile.lookup`` finds the
definitions of one name through the hash table as ld.so does, so a library of 80,000 symbols
(libtorch_cpu.so) is not decoded whole when a few thousand names are asked of it. The GNU hash
layout (bloom filter, buckets, chains) has no specification; it follows glibc's ``do_lookup_x``
(elf/dl-lookup.c) and https://flapenguin.me/elf-dt-gnu-hash.

A small struct reader rather than pyelftools: on libtorch_npu.so (torch_npu 2.5.1, aarch64) it is
about 40x faster (bench/README.md, "ELF reader"), and the ABI check reads a few dozen such files.
"""

from __future__ import annotations

import functools
import re
import struct
import sys
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, NamedTuple, Optional

from ascenv.errors import ElfError

# e_machine values (gABI and the registry in binutils include/elf/common.h)
MACHINES = {3: "i386", 8: "mips", 20: "ppc", 21: "ppc64", 40: "arm", 62: "x86_64", 183: "aarch64", 243: "riscv64"}
HEAD = 64  # bytes enough for class, byte order and e_machine

_SHT_HASH, _SHT_DYNAMIC, _SHT_DYNSYM, _SHT_GNU_HASH = 5, 6, 11, 0x6FFFFFF6
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
    dynsym: DynamicSymbols  # global and weak dynamic symbols, decoded when asked
    version_needs: tuple[VersionNeed, ...]
    version_defs: tuple[str, ...]  # versions this file defines (its base name, the soname, left out)

    @property
    def has_runpath(self) -> bool:
        return bool(self.runpath)

    @property
    def symbols(self) -> tuple[Symbol, ...]:
        """Every global and weak dynamic symbol (locals and the null entry left out), in table order."""
        return self.dynsym.all()

    def undefined(self) -> Iterator[Symbol]:
        return iter(self.dynsym.undefined())

    def defined(self) -> Iterator[Symbol]:
        return (s for s in self.dynsym.all() if s.defined)

    def lookup(self, name: str) -> tuple[Symbol, ...]:
        """The definitions of ``name`` (each version), found through the hash table."""
        return self.dynsym.lookup(name)

    def defined_matching(self, pattern: re.Pattern[bytes]) -> tuple[Symbol, ...]:
        """The definitions whose names ``pattern`` matches at their start."""
        return self.dynsym.defined_matching(pattern)


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
    dynsym = _dynsym(r, sections, by_type, {**def_names, **need_names})
    return ElfFile(
        machine=name,
        bits=bits,
        little_endian=ident[5] == 1,
        soname=soname,
        needed=tuple(needed),
        rpath=tuple(rpath),
        runpath=tuple(runpath),
        dynsym=dynsym,
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


def _dynsym(
    r: _Reader, sections: list[_Section], by_type: dict[int, _Section], versions: dict[int, str]
) -> DynamicSymbols:
    s = by_type.get(_SHT_DYNSYM)
    if s is None:
        return DynamicSymbols.of(())
    strtab = _strtab(r, sections, s)
    size = 24 if r.bits == 64 else 16
    data = _whole(r, s, size)
    versym = by_type.get(_SHT_VERSYM)
    indexes = _words(r.end, _whole(r, versym, 2), "H") if versym is not None else array("H")
    table = DynamicSymbols(data, r.end, r.bits, strtab, indexes, versions)
    # the name offsets, checked now as the whole table once was: lookups and later reading never fail
    names = _words(r.end, data, "I")[:: size // 4]
    if names and (max(names) >= len(strtab) or strtab.rfind(b"\0") < max(names)):
        table.all()  # the exact error of the entry at fault, when it is a global or weak one
    dynsym_index = sections.index(s)
    gnu, sysv = by_type.get(_SHT_GNU_HASH), by_type.get(_SHT_HASH)
    if gnu is not None and gnu.link == dynsym_index:
        table.use_gnu_hash(r.bytes_at(gnu.offset, gnu.size))
    if not table.hashed and sysv is not None and sysv.link == dynsym_index:
        table.use_sysv_hash(r.bytes_at(sysv.offset, sysv.size), 8 if sysv.entsize == 8 else 4)
    return table


def _words(end: str, data: bytes, code: str) -> array[int]:
    """``data`` as unsigned integers of the byte order ``end`` ("<", ">"; ``code``: H 2 bytes, I 4, Q 8)."""
    out = array(code)
    out.frombytes(data[: len(data) - len(data) % out.itemsize])
    if (end == "<") != (sys.byteorder == "little"):
        out.byteswap()
    return out


_BINDS = (_STB_GLOBAL, _STB_WEAK, _STB_GNU_UNIQUE)
# struct format, entry size, and the positions of st_name, st_info, st_shndx in it; st_info's byte offset
_SYM_LAYOUT = {True: ("IBBHQQ", 24, 0, 1, 3, 4), False: ("IIIBBH", 16, 0, 3, 5, 12)}


@functools.lru_cache(maxsize=1 << 16)
def gnu_hash(name: bytes) -> int:
    """The GNU hash of a symbol name (Bernstein's, h * 33 + c from 5381; glibc's dl_new_hash)."""
    h = 5381
    for c in name:
        h = h * 33 + c
    return h & 0xFFFFFFFF


@functools.lru_cache(maxsize=1 << 16)
def sysv_hash(name: bytes) -> int:
    """The System V hash of a symbol name (gABI, "Hash Table"; glibc's _dl_elf_hash)."""
    h = 0
    for c in name:
        h = ((h << 4) + c) & 0xFFFFFFFF
        g = h & 0xF0000000
        h = (h ^ (g >> 24)) & ~g
    return h


class _GnuHash(NamedTuple):
    symoffset: int  # the first symbol the table holds
    shift: int  # of the bloom filter's second bit
    bloom: array[int]  # words of the file's class (32 or 64 bits)
    buckets: array[int]
    chain: array[int]  # hashes of the symbols from symoffset, the low bit ending a chain


class DynamicSymbols:
    """The global and weak entries of ``.dynsym``, kept as the file's bytes and decoded when asked:
    all of them in table order, the undefined ones, or the definitions of a name found through
    the hash table (``.gnu.hash``, else ``.hash``; without either, from the whole table)."""

    def __init__(
        self, data: bytes, end: str, bits: int, strtab: bytes, versym: array[int], versions: dict[int, str]
    ) -> None:
        self._data, self._strtab, self._versym, self._versions = data, strtab, versym, versions
        self._bits = bits
        # Elf64_Sym: name, info, other, shndx, value, size; Elf32_Sym: name, value, size, info, other, shndx
        fmt, self._size, self._name_i, self._info_i, self._shndx_i, self._info_at = _SYM_LAYOUT[bits == 64]
        self._fmt = end + fmt
        self._count = len(data) // self._size
        self._all: Optional[tuple[Symbol, ...]] = None
        self._by_name: Optional[dict[str, list[tuple[int, Symbol]]]] = None  # without a hash table
        self._unhashed: Optional[dict[str, list[int]]] = None  # definitions before the GNU hash's first entry
        self._gnu: Optional[_GnuHash] = None
        self._sysv: Optional[tuple[array[int], array[int]]] = None
        self._end = end

    @classmethod
    def of(cls, symbols: tuple[Symbol, ...]) -> DynamicSymbols:
        """A table of the given symbols (a file without ``.dynsym``, or one made in a test)."""
        table = cls(b"", "<", 64, b"", array("H"), {})
        table._all = tuple(symbols)
        return table

    @property
    def hashed(self) -> Optional[str]:
        """ "gnu" or "sysv": the hash table lookups go through; None when they read the whole table."""
        return "gnu" if self._gnu is not None else "sysv" if self._sysv is not None else None

    def use_gnu_hash(self, raw: bytes) -> None:
        """Look names up through this ``.gnu.hash``; a table that does not fit is left unused."""
        if len(raw) < 16:
            return
        nbuckets, symoffset, nbloom, shift = struct.unpack_from(self._end + "IIII", raw)
        word = self._bits // 8
        chain_at = 16 + nbloom * word + nbuckets * 4
        # glibc masks the bloom index with nbloom - 1: the linker writes a power of two
        if not nbuckets or not nbloom or nbloom & (nbloom - 1) or chain_at > len(raw) or symoffset > self._count:
            return
        bloom = _words(self._end, raw[16 : 16 + nbloom * word], "Q" if word == 8 else "I")
        buckets = _words(self._end, raw[16 + nbloom * word : chain_at], "I")
        chain = _words(self._end, raw[chain_at:], "I")
        self._gnu = _GnuHash(symoffset, shift, bloom, buckets, chain)

    def use_sysv_hash(self, raw: bytes, word: int) -> None:
        """Look names up through this ``.hash`` (``word``: 8 bytes on s390x and Alpha, 4 elsewhere); one that does not
        fit is left unused."""
        words = _words(self._end, raw, "Q" if word == 8 else "I")
        if len(words) < 2 or not words[0] or 2 + words[0] + words[1] > len(words):
            return
        nbucket, nchain = words[0], words[1]
        self._sysv = (words[2 : 2 + nbucket], words[2 + nbucket : 2 + nbucket + nchain])

    def all(self) -> tuple[Symbol, ...]:
        if self._all is None:
            self._all = self._decode_all()
        return self._all

    def _decode_all(self) -> tuple[Symbol, ...]:
        # one loop over iter_unpack rather than _symbol per entry: the ELF reader's benchmark
        strtab, indexes, versions = self._strtab, self._versym, self._versions
        name_i, info_i, shndx_i = self._name_i, self._info_i, self._shndx_i
        out = []
        n_indexes = len(indexes)
        find = strtab.find
        for i, e in enumerate(struct.iter_unpack(self._fmt, self._data)):
            bind = e[info_i] >> 4
            if i == 0 or bind not in _BINDS:
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

    def undefined(self) -> tuple[Symbol, ...]:
        if self._all is not None:
            return tuple(s for s in self._all if not s.defined)
        data, size = self._data, self._size
        info, at = data[self._info_at :: size], self._info_at + 2  # st_shndx follows st_info and st_other
        low, high = data[at::size], data[at + 1 :: size]
        wanted = [i for i in range(1, self._count) if not (low[i] or high[i]) and info[i] >> 4 in _BINDS]
        return tuple(s for s in map(self._symbol, wanted) if s is not None)

    def lookup(self, name: str) -> tuple[Symbol, ...]:
        return tuple(s for _, s in self._definitions(name))

    def defined_matching(self, pattern: re.Pattern[bytes]) -> tuple[Symbol, ...]:
        """Definitions whose names ``pattern`` matches at their start, in table order: the string table is
        searched from every place the pattern matches (a name may share its tail with a longer one)."""
        if self._all is not None and not self.hashed:
            return tuple(s for s in self._all if s.defined and pattern.match(s.name.encode("utf-8", "surrogateescape")))
        strtab, seen = self._strtab, set()
        found: dict[int, Symbol] = {}
        m = pattern.search(strtab)
        while m is not None and m.start() < len(strtab):  # a pattern matching "" matches at the end too
            end = strtab.find(b"\0", m.start())
            name = strtab[m.start() : end if end >= 0 else len(strtab)]
            if name not in seen and pattern.match(name):
                seen.add(name)
                found.update(self._definitions(name.decode("utf-8", "surrogateescape")))
            m = pattern.search(strtab, m.start() + 1)
        return tuple(found[i] for i in sorted(found))

    def _definitions(self, name: str) -> list[tuple[int, Symbol]]:
        """(index, symbol) of the definitions of ``name``, in table order."""
        key = name.encode("utf-8", "surrogateescape")
        if self._gnu is not None:
            indexes = self._gnu_chain(self._gnu, key) + self._before_gnu_hash(self._gnu.symoffset).get(name, [])
        elif self._sysv is not None:
            indexes = self._sysv_chain(self._sysv, key)
        else:
            return self._whole_table().get(name, [])
        out: list[tuple[int, Symbol]] = []
        for i in sorted(set(indexes)):
            s = self._symbol(i)
            if s is not None and s.defined and s.name == name:
                out.append((i, s))
        return out

    def _gnu_chain(self, gnu: _GnuHash, key: bytes) -> list[int]:
        # glibc do_lookup_x: the bloom filter's two bits, the bucket's first index, then the chain of
        # hashes (low bit dropped) whose last has the low bit set
        symoffset, shift, bloom, buckets, chain = gnu
        h, bits, keyz = gnu_hash(key), self._bits, key + b"\0"
        word = bloom[(h // bits) & (len(bloom) - 1)]
        if not (word >> (h % bits)) & (word >> ((h >> shift) % bits)) & 1:
            return []
        out: list[int] = []
        i = buckets[h % len(buckets)]
        if i < symoffset:
            return out
        while i < self._count and i - symoffset < len(chain):
            other = chain[i - symoffset]
            if (other | 1) == (h | 1) and self._named(i, keyz):
                out.append(i)
            if other & 1:
                break
            i += 1
        return out

    def _sysv_chain(self, sysv: tuple[array[int], array[int]], key: bytes) -> list[int]:
        buckets, chain = sysv
        i, out, steps, keyz = buckets[sysv_hash(key) % len(buckets)], [], 0, key + b"\0"
        while 0 < i < min(self._count, len(chain)) and steps <= len(chain):  # a cycle ends too
            if self._named(i, keyz):
                out.append(i)
            i, steps = chain[i], steps + 1
        return out

    def _named(self, i: int, keyz: bytes) -> bool:
        """Entry ``i`` is named ``keyz`` (the name with its terminating NUL)."""
        (at,) = struct.unpack_from(self._end + "I", self._data, i * self._size)
        return self._strtab.startswith(keyz, at)

    def _before_gnu_hash(self, symoffset: int) -> dict[str, list[int]]:
        """Definitions below the GNU hash's first index, which its chains leave out (the linker puts
        only undefined and local entries there; kept so that a lookup answers as the whole table)."""
        if self._unhashed is None:
            data, size = self._data, self._size
            info, at = data[self._info_at : symoffset * size : size], self._info_at + 2
            low, high = data[at : symoffset * size : size], data[at + 1 : symoffset * size : size]
            self._unhashed = {}
            for i in range(1, min(symoffset, len(info))):
                if (low[i] or high[i]) and info[i] >> 4 in _BINDS:
                    s = self._symbol(i)
                    if s is not None:
                        self._unhashed.setdefault(s.name, []).append(i)
        return self._unhashed

    def _whole_table(self) -> dict[str, list[tuple[int, Symbol]]]:
        if self._by_name is None:
            self._by_name = {}
            for i, s in enumerate(self.all()):  # positions in all(), which keeps table order
                if s.defined:
                    self._by_name.setdefault(s.name, []).append((i, s))
        return self._by_name

    def _symbol(self, i: int) -> Optional[Symbol]:
        """Entry ``i`` as a Symbol; None for a local one. Raises ElfError for a name outside the string table."""
        e = struct.unpack_from(self._fmt, self._data, i * self._size)
        bind = e[self._info_i] >> 4
        if bind not in _BINDS:
            return None
        raw = self._versym[i] if i < len(self._versym) else 1
        index = raw & 0x7FFF
        at, strtab = e[self._name_i], self._strtab
        end = strtab.find(b"\0", at)
        if end < 0 or at >= len(strtab):
            raise ElfError(f"symbol name at {at} is outside its table of {len(strtab)} bytes")
        defined = e[self._shndx_i] != 0
        return Symbol(
            strtab[at:end].decode("utf-8", "surrogateescape"),
            self._versions.get(index) if index > 1 else None,
            defined,
            bind == _STB_WEAK,
            defined and bool(raw & _VERSYM_HIDDEN),
        )
