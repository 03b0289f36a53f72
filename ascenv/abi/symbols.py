"""Bind undefined symbols against a load order, as ld.so would with RTLD_NOW, and say whose they are.

Matching follows glibc's ``check_match`` (elf/dl-lookup.c): a reference to ``name@VER`` binds to
a definition of ``name`` with version ``VER``, or to an unversioned one; a reference without a
version binds to any definition not hidden (``name@VER`` rather than ``name@@VER``). Weak
references may stay unbound. Python imports extension modules with RTLD_NOW
(``sys.getdlopenflags()``), so one unbound reference anywhere in the load order fails the import.

Version requirements (``.gnu.version_r``) are checked as ``_dl_check_map_versions``
(elf/dl-version.c) does: the library the requirement names must define the version, unless the
requirement is weak or that library defines no versions at all (ld.so only warns then).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Optional

from ascenv.abi.loader import LoadOrder
from ascenv.elf import ElfFile

# Which layer ships a namespace or a C prefix, and the DT_NEEDED names of that layer's libraries.
# Namespaces: the PyTorch sources (c10/, aten/ -> at::, torch/), CANN's headers (acl/*.h, ge/,
# hccl/), NNAL's atb/*.h; versions: glibc's and GCC's version scripts.
_NAMESPACES = {
    "c10": ("torch", ("libc10.so",)),
    "at": ("torch", ("libtorch_cpu.so", "libtorch.so")),
    "torch": ("torch", ("libtorch_python.so", "libtorch_cpu.so", "libtorch.so")),
    "caffe2": ("torch", ("libtorch_cpu.so",)),
    "ge": ("cann", ("libge_runner.so", "libgraph.so", "libge_common.so")),
    "gert": ("cann", ("libge_runner.so", "libgraph.so")),
    "acl": ("cann", ("libascendcl.so",)),
    "hccl": ("cann", ("libhccl.so",)),
    "atb": ("nnal", ("libatb.so",)),
    "Mki": ("nnal", ("libmki.so",)),  # ATB's kernel library (nnal/atb/latest/atb/cxx_abi_*/lib/libmki.so)
    "std": ("libstdc++", ("libstdc++.so.6",)),
    "__gnu_cxx": ("libstdc++", ("libstdc++.so.6",)),
    "__cxxabiv1": ("libstdc++", ("libstdc++.so.6",)),
}
_C_PREFIXES = (
    ("acl", "cann", ("libascendcl.so", "libacl_op_compiler.so", "libacl_*.so")),
    ("Hccl", "cann", ("libhccl.so",)),
    ("hccl", "cann", ("libhccl.so",)),
    ("Msprof", "cann", ("libmsprofiler.so", "libprofapi.so")),
    ("rt", "cann", ("libruntime.so",)),
    ("halGet", "driver", ("libascend_hal.so",)),
    ("dsmi_", "driver", ("libdrvdsmi_host.so",)),
    ("pthread_", "glibc", ("libpthread.so.0", "libc.so.6")),
    ("dlopen", "glibc", ("libdl.so.2", "libc.so.6")),
    ("dlsym", "glibc", ("libdl.so.2", "libc.so.6")),
    ("dlclose", "glibc", ("libdl.so.2", "libc.so.6")),
    ("dlerror", "glibc", ("libdl.so.2", "libc.so.6")),
    ("dladdr", "glibc", ("libdl.so.2", "libc.so.6")),
    # PyTorch's Python bindings (torch/csrc: THPVariable_Wrap, THPStorage_NewWithStorage), C++
    # functions at global scope defined in libtorch_python.so
    ("THP", "torch", ("libtorch_python.so",)),
    ("Py", "python", ("libpython3*.so*",)),
    ("_Py", "python", ("libpython3*.so*",)),
)
# libraries of the C runtime and the toolchain (glibc's and GCC's sonames)
_RUNTIME_LIBRARIES = (
    ("libc.so.*", "glibc"),
    ("libm.so.*", "glibc"),
    ("libpthread.so.*", "glibc"),
    ("libdl.so.*", "glibc"),
    ("librt.so.*", "glibc"),
    ("ld-linux*", "glibc"),
    ("libstdc++.so.*", "libstdc++"),
    ("libgcc_s.so.*", "libgcc"),
    ("libgomp.so.*", "libgcc"),
)
_VERSION_LAYERS = (("GLIBCXX_", "libstdc++"), ("CXXABI_", "libstdc++"), ("GLIBC_", "glibc"), ("GCC_", "libgcc"))
_SUBSTITUTIONS = {"St": "std", "Sa": "std", "Sb": "std", "Ss": "std", "Si": "std", "So": "std", "Sd": "std"}


@dataclass(frozen=True)
class Unresolved:
    library: str  # machine path of the library with the reference
    symbol: str  # mangled
    version: Optional[str]
    expected_from: Optional[str]  # the DT_NEEDED name it most likely comes from
    layer: Optional[str]  # torch, cann, nnal, driver, glibc, libstdc++, python, ...


@dataclass(frozen=True)
class MissingVersion:
    library: str  # the library with the requirement
    version: str  # "GLIBC_2.38"
    file: str  # the DT_NEEDED name that must define it
    provider: str  # machine path of that library in the load order
    newest: Optional[str]  # the newest version of the same family it does define ("GLIBC_2.36")
    layer: Optional[str]


def top_namespace(symbol: str) -> Optional[str]:
    """The outermost namespace of an Itanium-mangled name (``_ZNK3c1010TensorImpl...`` -> ``c10``)."""
    m = re.match(r"_Z(?:T[VISTH]|GV|TW)?(N[rVKRO]*)?", symbol)
    if not m:
        return None
    rest = symbol[m.end() :]
    if rest[:2] in _SUBSTITUTIONS:
        return _SUBSTITUTIONS[rest[:2]]
    if rest.startswith("St"):
        return "std"
    n = re.match(r"(\d+)", rest)
    if not n or not m.group(1):  # a free function at global scope has no namespace
        return None
    length = int(n.group(1))
    return rest[n.end() : n.end() + length]


def global_function(symbol: str) -> Optional[str]:
    """The name of a C++ function at global scope (``_Z25THPStorage_NewWithStorage...`` ->
    ``THPStorage_NewWithStorage``); None for a C name or a nested one."""
    m = re.match(r"_Z(\d+)", symbol)
    return symbol[m.end() : m.end() + int(m.group(1))] if m else None


def attribute(symbol: str, version: Optional[str], obj: ElfFile) -> tuple[Optional[str], Optional[str]]:
    """(expected_from, layer) of an unbound reference of ``obj``."""
    layer: Optional[str] = None
    patterns: tuple[str, ...] = ()
    if version:
        need = next((n for n in obj.version_needs if n.version == version), None)
        layer = next((lay for prefix, lay in _VERSION_LAYERS if version.startswith(prefix)), None)
        if need is not None:  # the version requirement names the file exactly
            return need.file, layer
    namespace = top_namespace(symbol)
    if namespace in _NAMESPACES:
        layer, patterns = _NAMESPACES[namespace]
    elif namespace is None:
        name = global_function(symbol) or symbol
        for prefix, lay, pats in _C_PREFIXES:
            if name.startswith(prefix):
                layer, patterns = lay, pats
                break
    for pattern in patterns:
        hit = next((n for n in obj.needed if fnmatch.fnmatchcase(n, pattern)), None)
        if hit:
            return hit, layer
    # ld --as-needed drops a DT_NEEDED none of whose symbols bound at link time (a consumer built
    # with the other C++ ABI than its provider): name the layer's library itself
    plain = next((p for p in patterns if not any(c in p for c in "*?[")), None)
    return plain, layer


def library_layer(name: str) -> Optional[str]:
    """The layer that ships a library, by its DT_NEEDED name (``libhccl.so`` -> cann); None when unknown."""
    pairs = [(pat, layer) for layer, pats in _NAMESPACES.values() for pat in pats]
    pairs += [(pat, layer) for _, layer, pats in _C_PREFIXES for pat in pats] + list(_RUNTIME_LIBRARIES)
    # torch_npu's own libraries (libtorch_npu.so, libnpu_profiler.so) before torch's libtorch*.so
    pairs += [("libtorch_npu*.so", "torch_npu"), ("libnpu_profiler*.so", "torch_npu")]
    pairs += [("libtorch*.so", "torch"), ("libc10*.so", "torch"), ("libshm*.so", "torch"), ("libatb*.so", "nnal")]
    return next((layer for pat, layer in pairs if fnmatch.fnmatchcase(name, pat)), None)


def unresolved(
    order: LoadOrder, *, check: Optional[Iterable[str]] = None, provided: Callable[[str], bool] = lambda _: False
) -> tuple[Unresolved, ...]:
    """Undefined non-weak references of the objects ``check`` (machine paths; all by default) that no
    object of the load order defines. ``provided`` names symbols the host process supplies without a
    DT_NEEDED (the interpreter's Py* API for an extension module)."""
    wanted = None if check is None else set(check)
    checked = [o for o in order.objects if wanted is None or o.path in wanted]
    # each reference looked up through the libraries' hash tables, in load order until one binds it,
    # as ld.so does: most of libtorch_cpu.so's 80,000 definitions are never decoded
    bound: dict[tuple[str, Optional[str]], bool] = {}
    homes: dict[str, Optional[tuple[str, str]]] = {}
    out = []
    for o in checked:
        for s in o.elf.undefined():
            if s.weak or provided(s.name):
                continue
            key = (s.name, s.version)
            if key not in bound:
                bound[key] = any(
                    _binds(((d.version, d.hidden) for d in lib.elf.lookup(s.name)), s.version) for lib in order.objects
                )
            if bound[key]:
                continue
            expected_from, layer = attribute(s.name, s.version, o.elf)
            if layer is None:
                home = homes[s.name] if s.name in homes else homes.setdefault(s.name, _namespace_home(order, s.name))
                expected_from, layer = home or (expected_from, layer)
            out.append(Unresolved(o.path, s.name, s.version, expected_from, layer))
    return tuple(out)


def _namespace_home(order: LoadOrder, symbol: str) -> Optional[tuple[str, str]]:
    """(library, layer) of the library of the load order that defines most other names of the outer
    namespace of ``symbol``, when the table above does not know that namespace: a namespace lives in
    the library that defines its members (torch's c10d:: in libtorch_cpu.so, with a few Python
    bindings in libtorch_python.so; torch_npu's c10_npu:: in libtorch_npu.so), so an unbound member
    belongs to that library's layer. None when no library of a known layer defines one."""
    namespace = top_namespace(symbol)
    if not namespace or namespace in _NAMESPACES:
        return None
    raw = namespace.encode("utf-8", "surrogateescape")
    # the mangled length prefix pins the whole name: 4c10d is c10d, never c10d_npu
    members = re.compile(rb"_Z(?:T[VISTH]|GV|TW)?N[rVKRO]*" + str(len(raw)).encode() + re.escape(raw))
    best: Optional[tuple[int, str, str]] = None
    for o in order.objects:
        base = o.path.rsplit("/", 1)[-1]
        layer = library_layer(o.elf.soname or base) or library_layer(base)
        count = len(o.elf.defined_matching(members)) if layer else 0
        if layer and count and (best is None or count > best[0]):
            best = (count, o.elf.soname or base, layer)
    return best[1:] if best else None


def _binds(definitions: Iterable[tuple[Optional[str], bool]], version: Optional[str]) -> bool:
    for def_version, hidden in definitions:
        if version is None:
            if not hidden:
                return True
        elif def_version == version or (def_version is None and not hidden):
            return True
    return False


def missing_versions(order: LoadOrder, *, check: Optional[Iterable[str]] = None) -> tuple[MissingVersion, ...]:
    """Version requirements the named library in the load order does not define (``version `GLIBC_2.38'
    not found``). A requirement on a library that is not in the load order is a missing DT_NEEDED."""
    by_name: dict[str, tuple[str, ElfFile]] = {}
    for o in order.objects:
        for name in (o.elf.soname, o.path.rsplit("/", 1)[-1]):
            if name:
                by_name.setdefault(name, (o.path, o.elf))
    wanted = None if check is None else set(check)
    out = []
    for o in order.objects:
        if wanted is not None and o.path not in wanted:
            continue
        for need in o.elf.version_needs:
            provider = by_name.get(need.file)
            if provider is None or need.weak:
                continue
            path, lib = provider
            if not lib.version_defs or need.version in lib.version_defs:
                continue
            layer = next((lay for prefix, lay in _VERSION_LAYERS if need.version.startswith(prefix)), None)
            out.append(MissingVersion(o.path, need.version, need.file, path, _newest(need.version, lib), layer))
    return tuple(out)


def _newest(version: str, lib: ElfFile) -> Optional[str]:
    family = re.match(r"[A-Za-z_]+", version)
    if not family:
        return None
    same = [v for v in lib.version_defs if re.fullmatch(re.escape(family.group(0)) + r"[\d.]+", v)]
    return max(same, key=_version_key, default=None)


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version))


# The C++11 ABI of libstdc++ (GCC 5) changed std::string and std::list: their mangled names gain
# std::__cxx11 and functions returning them an [abi:cxx11] tag
# (https://gcc.gnu.org/onlinedocs/libstdc++/manual/using_dual_abi.html). Mapping both to the old
# spelling, and every substitution back-reference to one token (their numbering shifts with the
# longer names), gives one skeleton for a function's two ABI builds.
_CXX11_STRING = "NSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"
_CXX11_MARKS = ("__cxx11", "B5cxx11")
_BACKREF = re.compile(r"S[0-9A-Z]*_")


def abi_skeleton(symbol: str) -> str:
    skeleton = symbol.replace(_CXX11_STRING, "Ss").replace("B5cxx11", "").replace("NSt7__cxx11", "NSt")
    return _BACKREF.sub("S_", skeleton)


def is_cxx11(symbol: str) -> bool:
    return any(mark in symbol for mark in _CXX11_MARKS)


@dataclass(frozen=True)
class AbiTwin:
    library: str
    symbol: str  # the unbound reference
    twin: str  # a definition of the same function under the other C++ ABI
    defined_in: str  # machine path of the library that defines it
    wanted_cxx11: bool  # the reference asks for the C++11 ABI (the definition is pre-C++11)


_HEAD = re.compile(r"_Z(?:N[rVKRO]*)?(\d+)")


def outer_names(symbol: str) -> str:
    """The first two names of a mangled symbol (``_ZN2at14RecordFunction6before...`` ->
    ``2at14RecordFunction``): namespaces and classes, which the C++ ABI of std::string does not
    change (std's own are left out by the caller). "" when it does not start with a name."""
    m = _HEAD.match(symbol)
    if not m:
        return ""
    end = m.end() + int(m.group(1))
    n = re.match(r"\d+", symbol[end:])
    if n:
        end += n.end() + int(n.group(0))
    return symbol[m.start(1) : end]


def abi_twins(order: LoadOrder, unbound: Iterable[Unresolved]) -> tuple[AbiTwin, ...]:
    """The unbound C++ references that the load order defines under the other C++ ABI:
    ``_GLIBCXX_USE_CXX11_ABI`` differs between the library and its provider (ATB's two builds)."""
    wanted: dict[str, list[Unresolved]] = {}
    providers: set[str] = set()
    heads: set[str] = set()
    for u in unbound:
        if not u.symbol.startswith("_Z") or top_namespace(u.symbol) in ("std", "__gnu_cxx", None):
            continue
        if ("Ss" in u.symbol or "Sb" in u.symbol or is_cxx11(u.symbol)) and u.expected_from:
            wanted.setdefault(abi_skeleton(u.symbol), []).append(u)
            providers.add(u.expected_from)
            heads.add(outer_names(u.symbol))
    out = []
    seen: set[tuple[str, str]] = set()
    # the two builds of a function share its outer names: only the definitions starting with those,
    # found in the string table (libtorch_cpu.so's 80,000 names stay undecoded), get a skeleton
    starts = re.compile(
        rb"_Z(?:N[rVKRO]*)?(?:"
        + b"|".join(re.escape(h.encode("utf-8", "surrogateescape")) for h in sorted(heads))
        + rb")"
    )
    # only the libraries the references should come from
    for o in order.objects:
        if not wanted or not {o.elf.soname, o.path.rsplit("/", 1)[-1]} & providers:
            continue
        for s in o.elf.defined_matching(starts):
            if not s.name.startswith("_Z") or outer_names(s.name) not in heads:
                continue
            for u in wanted.get(abi_skeleton(s.name), ()):
                if s.name != u.symbol and is_cxx11(s.name) != is_cxx11(u.symbol) and (u.library, u.symbol) not in seen:
                    seen.add((u.library, u.symbol))
                    out.append(AbiTwin(u.library, u.symbol, s.name, o.path, is_cxx11(u.symbol)))
    return tuple(out)
