"""Custom operator vendors: the packages CANN loads before its built-in operators, in CANN's order.

Search order (github:hicann/metadef@786891c02e5a7f509c6ffffd854e33ddefe3527c
base/common/plugin/plugin_manager.cc, doc comment above ``GetOpsProtoPath`` and
``GetPluginPathFromCustomOppPath``): the ``ASCEND_CUSTOM_OPP_PATH`` entries, leftmost first, empty
entries skipped; then the vendors named by ``$ASCEND_OPP_PATH/vendors/config.ini``; built-in last.
A vendor directory that ``config.ini`` does not name is never searched; it is listed with
``origin="unlisted"`` and ``priority=-1`` because it is usually a stale or half-done install.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Optional

from ascenv.model import UNLISTED, Vendor, VendorConfig, VendorLibrary
from ascenv.probe.fs import Root
from ascenv.probe.install_files import parse_key_values

MANIFEST = "ascenv-manifest.toml"  # written by `ascenv build` beside the files it installs
_TBE = "op_impl/ai_core/tbe"


def parse_load_priority(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Vendor names from ``config.ini`` as CANN reads them, and the problems met.

    ``PluginManager::GetOppPluginVendors`` (same file and commit as above): reads **one** line
    with ``std::getline``; fails if it is empty; splits it on ``=`` dropping empty pieces and
    requires exactly two; splits the value on ``,`` dropping empty pieces, then trims each name.
    It does not look at the key; install.sh writes ``load_priority=`` (github:leideng/CANN-8.1.RC1
    tools/op_project_templates/ascendc/customize/scripts/install.sh) and nnopbase also accepts
    ``priority=`` (gitcode cann/opbase PR 698), so another key is reported but still used.
    """
    lines = text.split("\n")
    first, problems = lines[0], []
    for number, line in enumerate(lines[1:], start=2):
        if "=" in line:
            problems.append(f"line {number} ({line.strip()!r}) is ignored: CANN reads only the first line")
    if not first.strip():
        return (), ("the first line is empty: CANN loads no vendor from config.ini", *problems)
    parts = [p for p in first.split("=") if p]
    if len(parts) != 2:
        message = f"first line {first.strip()!r} is not 'load_priority=<vendor>,...': CANN loads no vendor from it"
        return (), (message, *problems)
    key, value = parts[0].strip(), parts[1]
    if key != "load_priority":
        problems.insert(0, f"first line uses key {key!r}, not 'load_priority' (CANN reads the value anyway)")
    names = tuple(name.strip() for name in value.split(",") if name.strip())
    if not names:
        problems.insert(0, "first line names no vendor")
    return names, tuple(problems)


def probe_vendors(
    root: Root, environ: Mapping[str, str], opp_path: Optional[str]
) -> tuple[tuple[Vendor, ...], VendorConfig]:
    """``opp_path``: ASCEND_OPP_PATH, or the active CANN's ``opp`` directory; None if neither."""
    found: list[tuple[str, str, str]] = []  # (name, path, origin) in search order
    for entry in environ.get("ASCEND_CUSTOM_OPP_PATH", "").split(":"):
        if entry:
            found.append((_vendor_name(entry), entry, "ASCEND_CUSTOM_OPP_PATH"))
    config = VendorConfig()
    unlisted: list[tuple[str, str, str]] = []
    if opp_path:
        vendors_dir = posixpath.join(opp_path, "vendors")
        config_path = posixpath.join(vendors_dir, "config.ini")
        text = root.read_text(config_path)
        names: tuple[str, ...] = ()
        if text is not None:
            names, problems = parse_load_priority(text)
            config = VendorConfig(path=config_path, load_priority=names, problems=problems)
        found += [(name, posixpath.join(vendors_dir, name), "config.ini") for name in names]
        unlisted = [
            (name, posixpath.join(vendors_dir, name), "unlisted")
            for name in root.listdir(vendors_dir)
            if name not in names and root.is_dir(posixpath.join(vendors_dir, name))
        ]
    vendors = [_vendor(root, name, path, origin, priority) for priority, (name, path, origin) in enumerate(found)]
    vendors += [_vendor(root, name, path, origin, UNLISTED) for name, path, origin in unlisted]
    return tuple(vendors), config


def _vendor_name(entry: str) -> str:
    """``<root>/vendors/<name>``, or ``<root>/vendors/<name>/op_api/lib/`` for a package delivered
    as a shared library (ASCEND_CUSTOM_OPP_PATH doc, canncommercial 900 envref_07_0147)."""
    path = posixpath.normpath(entry)
    if path.endswith("/op_api/lib"):
        path = posixpath.dirname(posixpath.dirname(path))
    return posixpath.basename(path)


def _vendor(root: Root, name: str, path: str, origin: str, priority: int) -> Vendor:
    if not root.is_dir(path):
        return Vendor(name=name, path=path, origin=origin, priority=priority, exists=False)
    from ascenv.probe.vendor_tree import read_vendor  # imported on use: start-up time counts

    text = root.read_text(posixpath.join(path, "version.info"))
    manifest = posixpath.join(path, MANIFEST)
    data = root.read_bytes(manifest)
    try:
        lay = read_vendor(root, name, path)
    except Exception as exc:  # noqa: BLE001 - one vendor's tree must not cost the others theirs
        failed = f"its tree could not be read: {type(exc).__name__}: {exc}"[:300]
        return Vendor(name=name, path=path, origin=origin, priority=priority, problems=(failed,))
    return Vendor(
        name=name,
        path=path,
        origin=origin,
        priority=priority,
        # one line, often without a newline: custom_opp_compiler_version=7.7.0.1.238
        # (cmake/util/gen_version_info.sh of the msopgen project template)
        version_info=parse_key_values(text) if text is not None else {},
        compute_units=compute_units(root, path),
        manifest=manifest if data is not None else None,
        manifest_digest=_sha256(data) if data is not None else None,
        layout_read=True,
        ops_info=lay.ops_info,
        kernel_ops=lay.kernel_ops,
        kernel_binaries=lay.kernel_binaries,
        libraries=tuple(VendorLibrary(x.kind, x.path, x.dir_arch, x.elf_arch) for x in lay.libraries),
        aclnn_headers=lay.aclnn_headers,
        install_root_of=_install_root_of(root, path) if origin == "ASCEND_CUSTOM_OPP_PATH" else None,
        problems=lay.problems,
    )


def _install_root_of(root: Root, path: str) -> Optional[tuple[str, ...]]:
    """The vendors below ``path/vendors`` when ``path`` is an install root, not a vendor: CANN
    looks for op_impl/ and op_proto/ right below an ASCEND_CUSTOM_OPP_PATH entry and finds none."""
    vendors_dir = posixpath.join(posixpath.normpath(path), "vendors")
    if not root.is_dir(vendors_dir) or root.is_dir(posixpath.join(path, "op_impl")):
        return None
    return tuple(sorted(n for n in root.listdir(vendors_dir) if root.is_dir(posixpath.join(vendors_dir, n))))


def _sha256(data: bytes) -> str:
    import hashlib  # imported on use: most vendors have no manifest, and start-up time counts

    return hashlib.sha256(data).hexdigest()


def compute_units(root: Root, vendor_path: str) -> tuple[str, ...]:
    """Units (ascend910b, ascend310p, ...) the package has kernels or operator info for.

    A built package holds ``op_impl/ai_core/tbe/kernel/<unit>/<op>/*.o`` (binary kernels, beside
    ``kernel/config/<unit>/``) and ``op_impl/ai_core/tbe/config/<unit>/aic-<unit>-ops-info.json``
    (also in a source-only package); seen in the listing of a public CANN 8.0.RC3 SinhCustom .run
    package.
    """
    tbe = posixpath.join(vendor_path, _TBE)
    units: set[str] = set()
    for folder in ("kernel", "kernel/config", "config"):
        parent = posixpath.join(tbe, folder)
        units.update(n for n in root.listdir(parent) if n != "config" and root.is_dir(posixpath.join(parent, n)))
    return tuple(sorted(units))
