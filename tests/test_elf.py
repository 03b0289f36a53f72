"""ascenv.elf: the fields the ABI check needs, checked against readelf on libraries built here."""

from __future__ import annotations

import io
import re
import struct
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ascenv import elf
from tests.abi.build import build, needs_tools, readelf_undefined

pytestmark = needs_tools


@pytest.fixture(scope="module")
def libs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("elf")
    dep = build(d / "libdep.so", "int dep(void) { return 1; }")
    versioned = d / "libver.so"
    (d / "ver.map").write_text("VER_1 { global: old_f; local: *; };\nVER_2 { global: new_f; } VER_1;\n")
    build(
        versioned,
        "int old_f(void){return 1;}\nint new_f(void){return 2;}",
        flags=[f"-Wl,--version-script={d / 'ver.map'}"],
    )
    main = build(
        d / "libmain.so",
        "#include <stdio.h>\n#include <math.h>\n"
        "extern int dep(void); extern int new_f(void); extern int maybe(void) __attribute__((weak));\n"
        'int run(double x) { printf("%d", dep() + new_f() + (maybe ? maybe() : 0)); return (int)cos(x); }\n',
        links=[dep, versioned],
        flags=["-lm", "-Wl,-rpath,$ORIGIN/a:/opt/b", "-Wl,--disable-new-dtags"],
    )
    runpath = build(
        d / "librun.so",
        "extern int dep(void); int r(void){return dep();}",
        links=[dep],
        flags=["-Wl,-rpath,$ORIGIN/../lib", "-Wl,--enable-new-dtags"],
    )
    cxx = build(
        d / "libcxx.so",
        '#include <string>\nnamespace atb { std::string name(const std::string& s) { return s + "!"; } }\n',
        cxx=True,
    )
    return {"dep": dep, "versioned": versioned, "main": main, "runpath": runpath, "cxx": cxx}


def test_dynamic_section(libs: dict[str, Path]) -> None:
    main = elf.read(libs["main"])
    assert main is not None
    assert main.soname == "libmain.so"
    assert {"libdep.so", "libver.so", "libm.so.6", "libc.so.6"} <= set(main.needed)
    assert main.rpath == ("$ORIGIN/a", "/opt/b") and main.runpath == ()
    run = elf.read(libs["runpath"])
    assert run is not None and run.runpath == ("$ORIGIN/../lib",) and run.rpath == ()


def test_symbols_and_versions(libs: dict[str, Path]) -> None:
    main = elf.read(libs["main"])
    ver = elf.read(libs["versioned"])
    assert main is not None and ver is not None
    undefined = {s.name: s for s in main.undefined()}
    assert undefined["new_f"].version == "VER_2"
    assert undefined["dep"].version is None and not undefined["dep"].weak
    assert undefined["maybe"].weak
    assert undefined["printf"].version is not None and undefined["printf"].version.startswith("GLIBC_2.")
    assert "run" in {s.name for s in main.defined()}
    assert ver.version_defs == ("VER_1", "VER_2")
    assert {(n.file, n.version) for n in main.version_needs} >= {("libver.so", "VER_2")}
    defined = {s.name: s for s in ver.defined()}
    assert defined["old_f"].version == "VER_1" and defined["new_f"].version == "VER_2"


def test_machine_and_class(libs: dict[str, Path]) -> None:
    head = libs["dep"].read_bytes()[: elf.HEAD]
    parsed = elf.read(libs["dep"])
    assert parsed is not None
    assert (
        elf.machine(head)
        == parsed.machine
        == subprocess.run(["uname", "-m"], capture_output=True, text=True).stdout.strip()
    )
    assert parsed.bits == 64 and parsed.little_endian
    patched = bytearray(head)
    patched[18:20] = (183).to_bytes(2, "little")
    assert elf.machine(bytes(patched)) == "aarch64"
    patched[18:20] = (9999).to_bytes(2, "little")
    assert elf.machine(bytes(patched)) == "e_machine 9999"


@pytest.mark.parametrize("name", ["main", "runpath", "cxx", "versioned"])
def test_undefined_matches_readelf(libs: dict[str, Path], name: str) -> None:
    parsed = elf.read(libs[name])
    assert parsed is not None
    mine = {s.name + (f"@{s.version}" if s.version else "") for s in parsed.undefined()}
    assert mine == readelf_undefined(libs[name])
    assert mine  # each fixture references something (libc at least): an empty comparison proves nothing


def test_undefined_matches_readelf_on_system_libstdcxx() -> None:
    found = [
        p
        for p in (Path("/usr/lib/x86_64-linux-gnu/libstdc++.so.6"), Path("/usr/lib/aarch64-linux-gnu/libstdc++.so.6"))
        if p.exists()
    ]
    if not found:
        pytest.skip("no system libstdc++ at the Debian path")
    parsed = elf.read(found[0])
    assert parsed is not None
    assert {s.name + (f"@{s.version}" if s.version else "") for s in parsed.undefined()} == readelf_undefined(found[0])
    assert any(v.startswith("GLIBCXX_3.4.") for v in parsed.version_defs)
    assert any(v.startswith("CXXABI_1.3") for v in parsed.version_defs)


def test_not_elf_is_none(tmp_path: Path) -> None:
    for data in (b"", b"#!/bin/sh\n", b"\x7fELF", b"\x7fELF\x03\x01" + bytes(60)):
        (tmp_path / "x").write_bytes(data)
        assert elf.read(tmp_path / "x") is None
    assert elf.machine(None) is None and elf.machine(b"MZ" + bytes(30)) is None


def test_truncated_library_is_an_elf_error(libs: dict[str, Path], tmp_path: Path) -> None:
    data = libs["main"].read_bytes()
    cut = tmp_path / "cut.so"
    cut.write_bytes(data[: len(data) // 2])  # section headers sit at the end: now past it
    with pytest.raises(elf.ElfError):
        elf.read(cut)


@given(st.data())
def test_corrupt_bytes_raise_only_elf_error(libs: dict[str, Path], data: st.DataObject) -> None:
    # an unpacked image is untrusted: any damage is an ElfError or a result, never another exception.
    # Damage lands where the reader looks: the ELF header, section headers and the sections it parses.
    blob = bytearray(libs["main"].read_bytes())
    with open(libs["main"], "rb") as f:
        r = elf._Reader(f, True, 64)
        sections = elf._sections(r, blob[: elf.HEAD])
    shoff = int.from_bytes(blob[40:48], "little")
    wanted = (5, 6, 11, 0x6FFFFFF6, 0x6FFFFFFD, 0x6FFFFFFE, 0x6FFFFFFF)  # with .hash and .gnu.hash
    spans = [(0, elf.HEAD), (shoff, len(blob))] + [(s.offset, s.offset + s.size) for s in sections if s.type in wanted]
    for _ in range(data.draw(st.integers(1, 8))):
        lo, hi = data.draw(st.sampled_from(spans))
        blob[data.draw(st.integers(lo, hi - 1))] = data.draw(st.integers(0, 255))
    try:
        parsed = elf.parse(io.BytesIO(bytes(blob)))
    except elf.ElfError:
        return
    if parsed is not None:  # the symbols are decoded later, on demand: that never fails either
        for name in ("run", "dep", "printf", "cos", "maybe", "nothing", ""):
            parsed.lookup(name)
        parsed.defined_matching(re.compile(rb"[a-z]"))
        parsed.dynsym.undefined()
        assert len(parsed.symbols) >= 0


def test_32_bit_header_fields() -> None:
    # a hand-made ELF32 big-endian header without sections: class, order and machine still read
    head = b"\x7fELF\x01\x02\x01" + bytes(9) + struct.pack(">HHIIIIIHHHHHH", 3, 8, 1, 0, 0, 0, 0, 52, 32, 0, 40, 0, 0)
    parsed = elf.parse(io.BytesIO(head))
    assert parsed is not None
    assert (parsed.bits, parsed.little_endian, parsed.machine, parsed.symbols) == (32, False, "mips", ())


@pytest.mark.parametrize(
    ("number", "name"),
    [(3, "i386"), (40, "arm"), (62, "x86_64"), (183, "aarch64"), (243, "riscv64"), (9999, "e_machine 9999")],
)
@pytest.mark.parametrize("little", [True, False])
def test_machine_of_a_header_in_either_byte_order(number: int, name: str, little: bool) -> None:
    # the one reader of e_machine, also for the libraries of operator packages (vendor_layout)
    order = "little" if little else "big"
    head = b"\x7fELF\x02" + (b"\x01" if little else b"\x02") + bytes(12) + number.to_bytes(2, order) + bytes(44)
    assert elf.machine(head) == name
