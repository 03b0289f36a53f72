"""Shared libraries built in the test with the installed gcc/g++: small, real, and as the linker makes them."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

HAVE_TOOLS = all(shutil.which(t) for t in ("gcc", "g++", "readelf"))
needs_tools = pytest.mark.skipif(not HAVE_TOOLS, reason="gcc, g++ and readelf build and read the fixtures")


def build(
    out: Path,
    source: str,
    *,
    cxx: bool = False,
    links: Sequence[Path] = (),
    soname: str | None = None,
    flags: Sequence[str] = (),
    nostdlib: bool = False,
) -> Path:
    """Compile ``source`` into the shared library ``out``; ``links`` become its DT_NEEDED (by soname).
    With ``nostdlib`` it needs no libc, so a fixture root need not hold one."""
    out.parent.mkdir(parents=True, exist_ok=True)
    src = out.with_name(out.name + (".cc" if cxx else ".c"))
    src.write_text(source)
    cmd = ["g++" if cxx else "gcc", "-shared", "-fPIC", "-o", str(out), str(src)]
    cmd += [f"-Wl,-soname,{soname or out.name}", *flags, *map(str, links)]
    if nostdlib:
        cmd.insert(1, "-nostdlib")
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    src.unlink()
    return out


def _unique_named(out: str) -> list[str]:
    """readelf's lines with STB_GNU_UNIQUE spelled UNIQUE: readelf names binding 10 only in a file whose
    EI_OSABI is GNU; torch_npu 2.14.0's libtorch_npu.so (OSABI SYSV) has 32 such function-local statics
    (``_ZGVZN3c1010Dispatcher9singletonEvE1s``) that it prints as ``<OS specific>: 10``, and ld.so binds
    to them all the same (glibc's do_lookup_x takes STB_GNU_UNIQUE whatever the OSABI)."""
    return [line.replace("<OS specific>: 10", "UNIQUE") for line in out.splitlines()]


def readelf_undefined(path: Path, binds: tuple[str, ...] = ("GLOBAL", "WEAK")) -> set[str]:
    """``name@VERSION`` of the undefined dynamic symbols of ``binds``, as ``readelf --dyn-syms -W`` lists them."""
    out = subprocess.run(["readelf", "--dyn-syms", "-W", str(path)], check=True, capture_output=True, text=True).stdout
    names = set()
    for line in _unique_named(out):
        fields = line.split()
        if len(fields) >= 8 and fields[0].endswith(":") and fields[4] in binds and fields[6] == "UND":
            names.add(fields[7])  # "name@VER" (readelf adds " (N)" as a separate field)
    return names


def place(root: Path, machine_path: str, built: Path) -> Path:
    """Copy a built library to ``machine_path`` under ``root``."""
    target = root / machine_path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(built, target)
    return target


def readelf_defined(path: Path) -> set[str]:
    """Names of the global/weak defined dynamic symbols ``readelf --dyn-syms -W`` lists (versions dropped)."""
    out = subprocess.run(["readelf", "--dyn-syms", "-W", str(path)], check=True, capture_output=True, text=True).stdout
    names = set()
    for line in _unique_named(out):
        fields = line.split()
        if (
            len(fields) >= 8
            and fields[0].endswith(":")
            and fields[4] in ("GLOBAL", "WEAK", "UNIQUE")
            and fields[6] != "UND"
        ):
            names.add(fields[7].split("@", 1)[0])
    return names


def stub_libc(d: Path, versions: dict[str, list[str]]) -> Path:
    """A libc.so.6 defining each function under its version, with a version script as glibc's."""
    script, source, parent = [], [], None
    for version, names in versions.items():
        script.append(
            f"{version} {{ global: {'; '.join(names) or 'dummy_' + version.replace('.', '_')}; }}"
            + (f" {parent};" if parent else ";")
        )
        source += [f"int {n}(void) {{ return 0; }}" for n in names or ["dummy_" + version.replace(".", "_")]]
        parent = version
    d.mkdir(parents=True, exist_ok=True)
    (d / "libc.map").write_text("\n".join(script) + "\n")
    return build(
        d / "libc.so.6", "\n".join(source) + "\n", nostdlib=True, flags=[f"-Wl,--version-script={d / 'libc.map'}"]
    )
