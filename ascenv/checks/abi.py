"""The binaries: would torch_npu's libraries link on this machine (``snapshot.abi``, read by
``ascenv.probe.abi`` with ``ascenv.abi``)? A version table says what was tested; the symbols say
what ld.so will bind, on pairings no table has heard of too."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Optional

from ascenv.checks import check, finding
from ascenv.errors import InvalidVersion
from ascenv.model import AbiInfo, AbiUnresolved, Finding, FindingDetails, Severity, Snapshot
from ascenv.words import counted

_SHOWN = 3  # demangled names per layer in the words; details.unresolved has them all
_FIXES = {
    "torch": "pip install the torch release torch_npu was built for (ASC-TORCH-PAIR names it)",
    "cann": "source the set_env.sh of a CANN release this torch_npu supports (ascend-toolkit/set_env.sh)",
    "nnal": "install the NNAL (ATB) release of this torch_npu and source nnal/atb/set_env.sh",
    "driver": "install the Ascend driver (HDK) this CANN needs; its lib64 must be on LD_LIBRARY_PATH",
    "glibc": "use an OS (image) with a newer glibc, or a wheel built for this glibc (its manylinux tag)",
    "libstdc++": "use a newer libstdc++ (the OS's, or conda's libstdcxx-ng) or a wheel built with this one",
    "torch_npu": (
        "reinstall torch_npu (pip install --force-reinstall --no-deps torch-npu==<its version>): "
        "its own libraries disagree"
    ),
}


def _fix(layers: set[Any]) -> str:
    return "; ".join(_FIXES[x] for x in sorted(x for x in layers if x in _FIXES)) or "reinstall the packages together"


def _base(path: str) -> str:
    return path.rsplit("/", 1)[-1]


@check(
    "ASC-ABI-SYMBOLS",
    layer="abi",
    title="every symbol torch_npu's libraries need is defined in their load order",
    explain="""
Python opens extension modules with RTLD_NOW: one undefined symbol no loaded library defines fails
`import torch_npu` with "undefined symbol: ..." (torch 2.9 beside torch_npu 2.8: c10::TensorImpl::
is_contiguous_custom; NNAL older than torch_npu: atb::...GroupTopkParam). ascenv reads the ELF
dynamic symbols of torch_npu's libraries and of every library ld.so would load with them (the
same search: RPATH, LD_LIBRARY_PATH, RUNPATH, ld.so.conf, default directories) and binds them as
glibc's lookup does, without loading anything. details.unresolved lists each symbol (mangled and
demangled), its library, the DT_NEEDED library it should come from and that library's layer.
""",
)
def symbols(snap: Snapshot, matrix: object) -> Iterator[Finding]:
    abi = snap.abi
    if not abi.read:
        return
    # a symbol of a library that is missing altogether is ASC-ABI-NEEDED's finding, one defined under
    # the other C++ ABI ASC-ABI-CXX11's: not a second one here
    if abi.problems:  # a damaged or cut library reads as absent: say so rather than judge on less
        yield finding(
            "ASC-ABI-SYMBOLS",
            Severity.WARN,
            f"{counted(len(abi.problems), 'file')} could not be read as ELF: the ABI check read without them",
            found=_few(list(abi.problems)),
            expected="complete ELF files",
            fix="reinstall the package the file belongs to (a download or copy was cut short?)",
        )
    absent = {m.name for m in abi.missing}
    unbound = [u for u in abi.unresolved if u.expected_from not in absent and not u.other_abi_twin]
    if not unbound:
        yield finding(
            "ASC-ABI-SYMBOLS",
            Severity.OK,
            f"{abi.package}: all symbols bind ({len(abi.loaded)} libraries in the load order)",
        )
        return
    at_import = [u for u in unbound if _at_import(abi, u.library)]
    later = [u for u in unbound if not _at_import(abi, u.library)]
    torch = _torch_to_install(snap, matrix)
    if at_import:
        yield _unbound(at_import, Severity.ERROR, "import torch_npu fails", torch)
    if later:
        yield _unbound(later, Severity.WARN, "the import works, the feature or operator that opens them fails", torch)


def _torch_to_install(snap: Snapshot, matrix: Any) -> Optional[str]:
    """``pip install torch==X`` for the installed torch_npu from the compat data, when it has the row."""
    npu = snap.python.packages.get("torch-npu")
    if matrix is None or not npu:
        return None
    try:
        rows = matrix.torch_npu(npu)
    except InvalidVersion:
        return None
    if not rows:
        return None
    platform = snap.python.platform or ""
    arch = "x86_64" if platform.endswith("x86_64") else "aarch64" if platform.endswith("aarch64") else snap.host.arch
    return f"pip install {rows[0].torch_requirement(arch or 'aarch64')}  # the torch torch_npu {npu} is built for"


def _at_import(abi: AbiInfo, path: str) -> bool:
    """Whether ``import torch_npu`` loads ``path`` (a custom operator's library: CANN opens it later)."""
    return path in abi.imported


def _severity(abi: AbiInfo, paths: Iterable[str]) -> Severity:
    return Severity.ERROR if any(_at_import(abi, p) for p in paths) else Severity.WARN


def _unbound(unbound: list[AbiUnresolved], severity: Severity, effect: str, torch: Optional[str]) -> Finding:
    by_layer: dict[str, list[AbiUnresolved]] = {}
    for u in unbound:
        by_layer.setdefault(u.layer or "unknown", []).append(u)
    groups = []
    for layer, items in sorted(by_layer.items(), key=lambda kv: -len(kv[1])):
        names = ", ".join((u.demangled or u.symbol) + (f"@{u.version}" if u.version else "") for u in items[:_SHOWN])
        more = f", … {len(items) - _SHOWN} more" if len(items) > _SHOWN else ""
        groups.append(f"{layer}: {len(items)} ({names}{more})")
    libraries = sorted({_base(u.library) for u in unbound})
    providers = sorted({u.expected_from for u in unbound if u.expected_from})
    return finding(
        "ASC-ABI-SYMBOLS",
        severity,
        f"{counted(len(unbound), 'undefined symbol')} in {', '.join(libraries)}: {effect}",
        found="; ".join(groups),
        expected="each defined by " + (", ".join(providers) if providers else "a library in the load order"),
        evidence=tuple(sorted({u.library for u in unbound})),
        fix=torch if torch and {u.layer for u in unbound} == {"torch"} else _fix({u.layer for u in unbound}),
        details=FindingDetails(unresolved=tuple(unbound)),
    )


@check(
    "ASC-ABI-NEEDED",
    layer="abi",
    title="every library torch_npu's libraries need is found where ld.so looks",
    explain="""
A DT_NEEDED library ld.so finds in none of the places it searches (the requesting library's RPATH
or RUNPATH, LD_LIBRARY_PATH, ld.so.conf's directories, /lib and /usr/lib) fails the import with
"libhccl.so: cannot open shared object file". ascenv models that search under the root with the
recorded LD_LIBRARY_PATH, before anything is imported, and names the layer that ships the library.
""",
)
def needed(snap: Snapshot, matrix: object) -> Iterator[Finding]:
    abi = snap.abi
    if not abi.read:
        return
    if not abi.missing:
        yield finding("ASC-ABI-NEEDED", Severity.OK, f"{abi.package}: every DT_NEEDED library is found")
        return
    by_name: dict[str, list[Any]] = {}
    for m in abi.missing:
        by_name.setdefault(m.name, []).append(m)
    for name, group in by_name.items():
        missing = tuple(group)
        users = [m.needed_by for m in missing]
        layer = missing[0].layer
        yield finding(
            "ASC-ABI-NEEDED",
            _severity(abi, users),
            f"{name} is found nowhere ld.so looks" + (f" ({layer})" if layer else ""),
            found=f"needed by {_few([_base(u) for u in users])}; searched {_few(missing[0].searched) or 'nothing'}",
            expected=f"{name} in a directory of LD_LIBRARY_PATH, ld.so.conf or the libraries' RUNPATH",
            evidence=tuple(users),
            fix=_NEEDED_FIXES.get(
                layer or "", "install the package that ships it and put its directory on LD_LIBRARY_PATH"
            ),
            details=FindingDetails(missing=missing),
        )


# what brings a missing library of each layer (the symbol fixes above are about versions)
_RUNTIME = "the root has no C runtime for this machine: audit an image of the libraries' architecture, or install"
_NEEDED_FIXES = {
    "torch": "pip install the torch release torch_npu was built for (ASC-TORCH-PAIR names it)",
    "cann": "source the set_env.sh of the CANN install (ascend-toolkit/set_env.sh puts its lib64 on LD_LIBRARY_PATH)",
    "nnal": "install NNAL (ATB) of this torch_npu's release and source nnal/atb/set_env.sh",
    "driver": "install the Ascend driver; its lib64/common and lib64/driver must be on LD_LIBRARY_PATH",
    "glibc": f"{_RUNTIME} glibc",
    "libstdc++": f"{_RUNTIME} libstdc++6",
    "libgcc": f"{_RUNTIME} libgcc-s1",
}


def _few(items: Sequence[str], shown: int = _SHOWN) -> str:
    more = f", … {len(items) - shown} more" if len(items) > shown else ""
    return ", ".join(items[:shown]) + more


@check(
    "ASC-ABI-GLIBC",
    layer="abi",
    title="the glibc and libstdc++ of the root define the symbol versions torch_npu's libraries need",
    explain="""
A library asks for symbol versions (GLIBC_2.34, GLIBCXX_3.4.30, CXXABI_1.3.13) of the library that
must define them; ld.so refuses to load it when that library lacks one ("version `GLIBC_2.38' not
found"). This is the glibc floor of a wheel: a manylinux_2_28 wheel on an older OS fails here.
ascenv compares the versions required (.gnu.version_r) with those defined (.gnu.version_d).
""",
)
def glibc(snap: Snapshot, matrix: object) -> Iterator[Finding]:
    abi = snap.abi
    if not abi.read:
        return
    if not abi.versions:
        yield finding("ASC-ABI-GLIBC", Severity.OK, f"{abi.package}: every required symbol version is defined")
        return
    by_file: dict[str, list[Any]] = {}
    for v in abi.versions:
        by_file.setdefault(v.file, []).append(v)
    for file, items in by_file.items():
        wanted = sorted({v.version for v in items}, key=_version_key)
        newest = items[0].newest
        yield finding(
            "ASC-ABI-GLIBC",
            _severity(abi, [v.library for v in items]),
            f"{file} is older than {', '.join(_base(v.library) for v in items[:_SHOWN])} need",
            found=f"{items[0].provider} defines up to {newest or 'no such version'}",
            expected=f"{file} defining {', '.join(wanted)}",
            evidence=tuple(sorted({v.library for v in items} | {items[0].provider})),
            fix=_fix({v.layer for v in items}),
            details=FindingDetails(versions=tuple(items)),
        )


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.replace("_", ".").split(".") if x.isdigit())


@check(
    "ASC-ABI-CXX11",
    layer="abi",
    title="torch_npu's libraries and their providers are built with the same C++ ABI",
    explain="""
libstdc++ has two ABIs for std::string and std::list (_GLIBCXX_USE_CXX11_ABI=1, the C++11 one,
and =0); a function taking a std::string has a different symbol in each. NNAL ships ATB twice
(nnal/atb/latest/atb/cxx_abi_0 and cxx_abi_1; ATB_HOME_PATH names the one in use): with the
build of the other ABI on LD_LIBRARY_PATH, torch_npu's ATB plugin fails with an undefined symbol
the library does define, under the other ABI. (A symbol missing under both ABIs, as with an NNAL
of another release than torch_npu's, is ASC-ABI-SYMBOLS.) ascenv matches each unbound C++ symbol
with the definitions of its provider modulo the ABI-dependent parts of the mangled name
(https://gcc.gnu.org/onlinedocs/libstdc++/manual/using_dual_abi.html).
""",
)
def cxx11(snap: Snapshot, matrix: object) -> Iterator[Finding]:
    abi = snap.abi
    if not abi.read:
        return
    twins = [u for u in abi.unresolved if u.other_abi_twin]
    if not twins:
        yield finding("ASC-ABI-CXX11", Severity.OK, f"{abi.package}: no C++ ABI mismatch between its libraries")
        return
    groups: dict[tuple[str, bool], list[AbiUnresolved]] = {}
    for u in twins:
        groups.setdefault((u.other_abi_in or "", "__cxx11" in u.symbol or "B5cxx11" in u.symbol), []).append(u)
    for (provider, wants_cxx11), items in groups.items():
        want, have = (
            ("C++11 (cxx_abi_1)", "pre-C++11 (cxx_abi_0)")
            if wants_cxx11
            else ("pre-C++11 (cxx_abi_0)", "C++11 (cxx_abi_1)")
        )
        users = sorted({_base(u.library) for u in items})
        names = ", ".join(u.demangled or u.symbol for u in items[:_SHOWN])
        layer = items[0].layer
        build = "1" if wants_cxx11 else "0"
        fix = (
            f"put nnal/atb/latest/atb/cxx_abi_{build}/lib on LD_LIBRARY_PATH in place of the other build's lib "
            f"(ATB_HOME_PATH=.../atb/cxx_abi_{build})"
            if layer == "nnal"
            else f"install {_base(provider)} built with _GLIBCXX_USE_CXX11_ABI={build}, the ABI of {', '.join(users)}"
        )
        yield finding(
            "ASC-ABI-CXX11",
            _severity(abi, [u.library for u in items]),
            f"{', '.join(users)} want the {want} ABI; {_base(provider)} is built with the {have} one",
            found=f"{counted(len(items), 'symbol')} defined only under the other ABI in {provider}: {names}",
            expected=f"{_base(provider)} built with the {want} ABI",
            evidence=tuple(sorted({u.library for u in items} | {provider})),
            fix=fix,
            details=FindingDetails(unresolved=tuple(items)),
        )
