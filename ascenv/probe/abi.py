"""torch_npu's libraries read under the root and bound as ld.so would (``ascenv.abi``), for the
ASC-ABI-* checks.

The start objects are what ``import torch_npu`` opens: torch's ``_C`` extension first (torch_npu
imports torch, whose libraries are then loaded and satisfy torch_npu's DT_NEEDED by soname), then
torch_npu's ``_C``; then the libraries of ``torch_npu/lib`` the import does not reach
(``libop_plugin_atb.so``, opened when an ATB operator is used) and the custom-operator vendors'
libraries (opened by CANN when it needs their operators), recorded apart. The search uses the snapshot's
LD_LIBRARY_PATH (set_env.sh puts CANN's lib64 there) and the root's ld.so.conf. Nothing is
loaded or executed; only ``c++filt`` (binutils), when present, reads the unbound names.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from typing import Optional

from ascenv import proc
from ascenv.abi import loader, symbols
from ascenv.abi.tree import Tree
from ascenv.model import (
    AbiInfo,
    AbiMissingLibrary,
    AbiMissingVersion,
    AbiUnresolved,
    Distribution,
    PythonInfo,
    Vendor,
    normalize_name,
)
from ascenv.probe.fs import Root

DEMANGLE_TIMEOUT = 10.0
_DEMANGLE_MAX = 5000  # names handed to c++filt; more are listed mangled
# The interpreter defines the C API for its extension modules without a DT_NEEDED entry
# (manylinux wheels must not link libpython: PEP 513, "libpythonX.Y.so.1").
_PYTHON_API = ("Py", "_Py")


def starts(tree: Tree, torch: Optional[Distribution], torch_npu: Distribution) -> tuple[list[str], list[str]]:
    """(what the import opens, torch_npu's other libraries: opened later, by a feature that needs them)."""
    imported: list[str] = []
    if torch is not None:
        imported += tree.glob(posixpath.join(torch.location, "torch"), "_C*.so")
    package = posixpath.join(torch_npu.location, "torch_npu")
    return imported + tree.glob(package, "_C*.so"), tree.glob(posixpath.join(package, "lib"), "*.so")


def probe_abi(
    root: Root,
    python: PythonInfo,
    environ: Mapping[str, str],
    run: proc.Runner = proc.run,
    *,
    vendors: Sequence[Vendor] = (),
    machine: Optional[str] = None,
) -> AbiInfo:
    """torch_npu's libraries and the custom-operator vendors' (of ``machine``, when given: a vendor
    tree holds one per architecture) as ld.so would load and bind them."""
    dists: dict[str, Distribution] = {}
    for d in python.distributions:
        dists.setdefault(normalize_name(d.name), d)
    torch_npu = dists.get("torch-npu")
    if torch_npu is None and not any(v.libraries for v in vendors):
        return AbiInfo()
    tree = Tree(root)
    imported, later = starts(tree, dists.get("torch"), torch_npu) if torch_npu else ([], [])
    # the machine of torch_npu's own extension wins over the caller's (an aarch64 image read on x86_64)
    first = tree.elf(imported[-1]) if imported else None
    machine = first.machine if first else machine
    # CANN opens a vendor's libraries (op proto, tiling, op_api) when it needs its operators
    custom = [
        posixpath.join(v.path, lib.path)
        for v in vendors
        if v.exists
        for lib in v.libraries
        if lib.elf_arch is not None and (machine is None or lib.elf_arch == machine)
    ]
    later += custom
    ld_library_path = tuple(p for p in environ.get("LD_LIBRARY_PATH", "").split(":") if p)
    conf, cache = loader.conf_dirs(tree), loader.cache_entries(tree.data(loader.CACHE))
    # the import's closure first, then the other libraries on top (each file is parsed once)
    at_import = loader.load(tree, imported, ld_library_path=ld_library_path, conf=conf, cache=cache)
    order = loader.load(tree, imported + later, ld_library_path=ld_library_path, conf=conf, cache=cache)
    package = posixpath.join(torch_npu.location, "torch_npu") + "/" if torch_npu else None
    mine = [o.path for o in order.objects if (package and o.path.startswith(package)) or o.path in custom]
    unbound = symbols.unresolved(order, check=mine, provided=lambda name: name.startswith(_PYTHON_API))
    names = demangle([u.symbol for u in unbound if u.symbol.startswith("_Z")], run)
    twins = {(t.library, t.symbol): t for t in symbols.abi_twins(order, unbound)}
    return AbiInfo(
        read=True,
        package=f"torch-npu {torch_npu.version}" if torch_npu else "custom operators",
        libraries=tuple(imported + [p for p in later if p not in imported]),
        loaded=tuple(o.path for o in order.objects),
        imported=tuple(o.path for o in at_import.objects),
        checked=tuple(mine),
        ld_library_path=ld_library_path,
        unresolved=tuple(_unresolved(u, names, twins.get((u.library, u.symbol))) for u in unbound),
        missing=tuple(
            AbiMissingLibrary(m.name, m.needed_by, symbols.library_layer(m.name), m.searched) for m in order.missing
        ),
        versions=tuple(
            AbiMissingVersion(v.library, v.version, v.file, v.provider, v.newest, v.layer)
            for v in symbols.missing_versions(order)  # torch's glibc floor fails the import as much as torch_npu's
        ),
        problems=tuple(f"{path}: {why}" for path, why in sorted(tree.problems.items())),
    )


def _unresolved(u: symbols.Unresolved, names: dict[str, str], twin: Optional[symbols.AbiTwin]) -> AbiUnresolved:
    return AbiUnresolved(
        u.library,
        u.symbol,
        u.version,
        names.get(u.symbol),
        u.expected_from,
        u.layer,
        twin.twin if twin else None,
        twin.defined_in if twin else None,
    )


def demangle(mangled: Sequence[str], run: proc.Runner = proc.run) -> dict[str, str]:
    """c++filt's reading of each name; empty when c++filt is missing or fails (names stay mangled)."""
    wanted = list(dict.fromkeys(mangled))[:_DEMANGLE_MAX]
    if not wanted:
        return {}
    done = run(["c++filt"], timeout=DEMANGLE_TIMEOUT, input="\n".join(wanted) + "\n")
    lines = done.stdout.splitlines() if done.ok else []
    if len(lines) != len(wanted):
        return {}
    return {m: d for m, d in zip(wanted, lines) if d != m}
