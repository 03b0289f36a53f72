"""ascenv.elf's lookup of a name through the symbol hash table (.gnu.hash, else .hash) against the
whole .dynsym table, on libraries built here with each hash style and on real libraries."""

from __future__ import annotations

import random
import re
import shutil
import struct
from pathlib import Path

import pytest

from ascenv import elf
from tests.abi import fetch_wheels
from tests.abi.build import build, needs_tools, readelf_defined

pytestmark = needs_tools

# 3,000 functions (a bloom filter of several words, chains longer than one), one name defined under two
# versions (name@VER_1 hidden, name@@VER_2 the default, as glibc's compatibility symbols), a reference
SOURCE = (
    "\n".join(f"int f{i}(void) {{ return {i}; }}" for i in range(3000))
    + '\nint both_v1(void) { return 1; }\n__asm__(".symver both_v1,both@VER_1");'
    + '\nint both_v2(void) { return 2; }\n__asm__(".symver both_v2,both@@VER_2");'
    + "\nextern int ext(void);\nint call(void) { return ext(); }\n"
)
STYLES = {"gnu": "gnu", "sysv": "sysv", "both": "gnu"}  # --hash-style -> the table a lookup uses (ld.so's choice)


@pytest.fixture(scope="module")
def libs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("hash")
    ext = build(d / "libext.so", "int ext(void) { return 0; }")
    (d / "ver.map").write_text("VER_1 { global: f*; call; both; local: *; };\nVER_2 { } VER_1;\n")
    return {
        style: build(
            d / f"lib{style}.so",
            SOURCE,
            links=[ext],
            flags=[f"-Wl,--hash-style={style}", f"-Wl,--version-script={d / 'ver.map'}"],
        )
        for style in STYLES
    }


def _read(path: Path) -> elf.ElfFile:
    parsed = elf.read(path)
    assert parsed is not None
    return parsed


def _found_as_whole_table(path: Path) -> int:
    """Every defined global/weak symbol is what a lookup of its name gives, read from a fresh file (no
    whole table decoded yet); the number of names checked."""
    whole: dict[str, list[elf.Symbol]] = {}
    for s in _read(path).symbols:
        if s.defined:
            whole.setdefault(s.name, []).append(s)
    fresh = _read(path)
    assert {name: list(fresh.lookup(name)) for name in whole} == whole
    assert set(whole) == readelf_defined(path)
    return len(whole)


@pytest.mark.parametrize("style", STYLES)
def test_every_definition_is_found_through_the_hash(libs: dict[str, Path], style: str) -> None:
    assert _read(libs[style]).dynsym.hashed == STYLES[style]
    assert _found_as_whole_table(libs[style]) > 3000


@pytest.mark.parametrize("style", STYLES)
def test_names_not_defined_are_not_found(libs: dict[str, Path], style: str) -> None:
    parsed = _read(libs[style])
    undefined = [s.name for s in parsed.undefined()]
    assert "ext" in undefined
    # a tail of a defined name ("1" of "f1"), a longer one, other case, a NUL inside, an empty name
    made_up = ["f3000", "f", "1", "f10000", "F1", "f1 ", "f1\0", "", "both@VER_1", "call2"]
    made_up += [f"g{random.Random(i).getrandbits(64):x}" for i in range(2000)]
    assert [n for n in undefined + made_up if parsed.lookup(n)] == []


def test_bloom_filter_rejects_and_chains_reject(libs: dict[str, Path]) -> None:
    # both ways a GNU lookup says "not defined" happen: the bloom filter's bits are unset, or they are
    # set and no chain entry has the name
    parsed = _read(libs["gnu"])
    gnu = parsed.dynsym._gnu
    assert gnu is not None
    names = [f"g{random.Random(i).getrandbits(64):x}" for i in range(5000)]
    passed = 0
    for name in names:
        h = elf.gnu_hash(name.encode())
        word = gnu.bloom[(h // 64) & (len(gnu.bloom) - 1)]
        passed += (word >> (h % 64)) & (word >> ((h >> gnu.shift) % 64)) & 1
        assert parsed.lookup(name) == ()
    assert 0 < passed < len(names)


def test_hashes_of_known_names() -> None:
    # values given by https://flapenguin.me/elf-dt-gnu-hash and the gABI's elf_hash
    assert elf.gnu_hash(b"") == 0x00001505
    assert elf.gnu_hash(b"printf") == 0x156B2BB8
    assert elf.gnu_hash(b"exit") == 0x7C967E3F
    assert elf.gnu_hash(b"syscall") == 0xBAC212A0
    assert elf.sysv_hash(b"") == 0
    assert elf.sysv_hash(b"printf") == 0x077905A6
    assert elf.sysv_hash(b"exit") == 0x0006CF04


@pytest.mark.parametrize("style", STYLES)
def test_versions_of_one_name(libs: dict[str, Path], style: str) -> None:
    both = _read(libs[style]).lookup("both")
    assert sorted((s.version, s.hidden) for s in both) == [("VER_1", True), ("VER_2", False)]


def _sections(blob: bytes) -> list[tuple[int, int, int]]:
    """(header offset, sh_type, sh_offset) of each section of a little-endian ELF64 file."""
    shoff, (shentsize, shnum) = struct.unpack_from("<Q", blob, 40)[0], struct.unpack_from("<HH", blob, 58)
    out = []
    for i in range(shnum):
        at = shoff + i * shentsize
        out.append((at, struct.unpack_from("<I", blob, at + 4)[0], struct.unpack_from("<Q", blob, at + 24)[0]))
    return out


@pytest.mark.parametrize("style", STYLES)
def test_without_a_hash_table_the_whole_table_answers(libs: dict[str, Path], style: str, tmp_path: Path) -> None:
    blob = bytearray(libs[style].read_bytes())
    for at, sh_type, _ in _sections(blob):
        if sh_type in (5, 0x6FFFFFF6):
            struct.pack_into("<I", blob, at + 4, 1)  # now PROGBITS
    (tmp_path / "lib.so").write_bytes(blob)
    assert _read(tmp_path / "lib.so").dynsym.hashed is None
    assert _found_as_whole_table(tmp_path / "lib.so") > 3000
    assert _read(tmp_path / "lib.so").lookup("ext") == ()


@pytest.mark.parametrize("style", ["gnu", "both"])
def test_a_gnu_hash_that_does_not_fit_is_left_unused(libs: dict[str, Path], style: str, tmp_path: Path) -> None:
    blob = bytearray(libs[style].read_bytes())
    gnu = next(offset for _, sh_type, offset in _sections(blob) if sh_type == 0x6FFFFFF6)
    struct.pack_into("<I", blob, gnu + 8, 3)  # bloom words: not a power of two, as no linker writes
    (tmp_path / "lib.so").write_bytes(blob)
    assert _read(tmp_path / "lib.so").dynsym.hashed == ("sysv" if style == "both" else None)
    assert _found_as_whole_table(tmp_path / "lib.so") > 3000


def test_a_definition_before_the_gnu_hash_is_still_found(libs: dict[str, Path], tmp_path: Path) -> None:
    # the linker puts only undefined and local entries below the GNU hash's first index; one defined
    # there (a patched file) is outside every chain and still answered, as the whole table does
    blob = bytearray(libs["gnu"].read_bytes())
    sections = _sections(blob)
    dynsym = next(offset for _, sh_type, offset in sections if sh_type == 11)
    index = next(i for i, s in enumerate(_read(libs["gnu"]).dynsym.all(), 1) if s.name == "ext")
    symoffset = struct.unpack_from("<I", blob, next(o for _, t, o in sections if t == 0x6FFFFFF6) + 4)[0]
    assert index < symoffset
    struct.pack_into("<H", blob, dynsym + 24 * index + 6, 1)  # st_shndx: defined now
    (tmp_path / "lib.so").write_bytes(blob)
    found = _read(tmp_path / "lib.so").lookup("ext")
    assert [(s.name, s.defined) for s in found] == [("ext", True)]


@pytest.mark.parametrize("pattern", [rb"f1[0-9]", rb"both", rb"", rb"f29(?:9|8)", rb"ext", rb"1"])
def test_defined_matching_is_the_whole_tables_answer(libs: dict[str, Path], pattern: bytes) -> None:
    compiled = re.compile(pattern)
    whole = tuple(s for s in _read(libs["gnu"]).symbols if s.defined and compiled.match(s.name.encode()))
    assert _read(libs["gnu"]).defined_matching(compiled) == whole
    assert elf.DynamicSymbols.of(_read(libs["sysv"]).symbols).defined_matching(compiled) == tuple(
        s for s in _read(libs["sysv"]).symbols if s.defined and compiled.match(s.name.encode())
    )


def _real_libraries() -> list[Path]:
    system = [
        Path(f"/usr/lib/{m}-linux-gnu/{n}") for m in ("x86_64", "aarch64") for n in ("libc.so.6", "libstdc++.so.6")
    ]
    roots = fetch_wheels.CACHE / "roots"
    wheels = sorted(roots.glob("*/usr/local/python3.11.13/lib/python3.11/site-packages/torch*/lib/lib*.so"))
    small = [p for p in wheels if p.name in ("libtorch_npu.so", "libc10.so", "libtorch_python.so")]
    return [p for p in system if p.exists()] + small


@pytest.mark.parametrize(
    "path", _real_libraries(), ids=lambda p: f"{str(p).split('/roots/')[-1].split('/')[0]}:{p.name}"
)
def test_every_definition_of_a_real_library_is_found(path: Path) -> None:
    # the wheels' libraries (aarch64 and x86_64; present once tests/abi/test_real_wheels.py ran) and the host's
    if not shutil.which("readelf"):
        pytest.skip("readelf")
    assert _read(path).dynsym.hashed == "gnu"
    assert _found_as_whole_table(path) > 1000
