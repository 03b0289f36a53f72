"""``ascenv op check``: which installed vendor provides each OpType, and whether ATC, the runtime
and aclnn / torch_npu can use it, judged from the files CANN reads.

Search order: the vendors of ``ASCEND_CUSTOM_OPP_PATH`` leftmost first, then ``config.ini``'s
``load_priority`` (``ascenv.probe.vendors``); the first vendor providing an OpType wins
(github:hicann/metadef@786891c02e5a7f509c6ffffd854e33ddefe3527c base/common/plugin/plugin_manager.cc).
What each consumer needs of a vendor tree (the layout in ``ascenv.vendor_layout``):

* ATC / graph mode: the op proto library for this host arch, and the OpType in
  ``aic-<unit>-ops-info.json`` of the SoC's compute unit;
* the runtime (binary kernels): the tiling library for this arch, and kernel binaries plus the
  ``kernel/config/<unit>`` entry of the OpType for the compute unit;
* aclnn (and torch_npu bindings that call it): ``op_api/include/aclnn_<op>.h`` and
  ``op_api/lib/libcust_opapi.so``.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from ascenv import vendor_layout as layout
from ascenv.checks import finding, load_checks
from ascenv.checks._facts import accepted, describe_ranges, effective_version, opp_abi_ranges
from ascenv.model import UNLISTED, Finding, Severity, Snapshot, Vendor
from ascenv.words import counted

if TYPE_CHECKING:
    from ascenv.probe.fs import Root


@dataclass(frozen=True)
class OpStatus:
    op_type: str
    vendor: str
    atc: bool
    runtime: bool
    aclnn: bool
    shadowed: tuple[str, ...]  # later vendors that also provide it (never used)


@dataclass(frozen=True)
class VendorStatus:
    name: str
    path: str
    origin: str
    priority: int
    layout: Optional[layout.VendorLayout]  # None when the directory is missing or its tree was not read
    exists: bool = True


@dataclass(frozen=True)
class Judgement:
    vendors: tuple[VendorStatus, ...]
    ops: tuple[OpStatus, ...]
    findings: tuple[Finding, ...]


@dataclass(frozen=True)
class OpCheck:
    arch: str
    compute_unit: Optional[str]
    vendors: tuple[VendorStatus, ...]
    ops: tuple[OpStatus, ...]
    findings: tuple[Finding, ...]
    notes: tuple[str, ...]


def layout_of(vendor: Vendor) -> Optional[layout.VendorLayout]:
    """The probe's record of a vendor tree (a snapshot holds it), as ``layout`` describes trees."""
    if not vendor.exists or not vendor.layout_read:
        return None
    op_types = set().union(*vendor.ops_info.values(), *vendor.kernel_ops.values())
    return layout.VendorLayout(
        name=vendor.name,
        op_types=tuple(sorted(op_types)),
        ops_info=dict(vendor.ops_info),
        kernel_ops=dict(vendor.kernel_ops),
        kernel_binaries=dict(vendor.kernel_binaries),
        libraries=tuple(layout.Library(x.kind, x.path, x.dir_arch, x.elf_arch) for x in vendor.libraries),
        aclnn_headers=vendor.aclnn_headers,
        compiler_version=vendor.version_info.get("custom_opp_compiler_version"),
    )


def judge(
    vendors: Sequence[Vendor], *, arch: str, compute_unit: Optional[str], wanted: Optional[str] = None
) -> Judgement:
    """Everything op check and doctor say about the searched vendors, from the probe's records
    alone (a snapshot is enough)."""
    load_checks()
    searched = [v for v in vendors if v.priority != UNLISTED]
    findings: list[Finding] = list(_package_roots(searched))
    statuses = [VendorStatus(v.name, v.path, v.origin, v.priority, layout_of(v), v.exists) for v in searched]
    ops: list[OpStatus] = []
    providers: dict[str, list[VendorStatus]] = {}
    for status in statuses:
        for op in status.layout.op_types if status.layout else ():
            providers.setdefault(op, []).append(status)
    for op, where in sorted(providers.items()):
        winner = where[0]
        if wanted and wanted not in (op, winner.name) and wanted not in (w.name for w in where):
            continue
        assert winner.layout is not None
        atc, runtime, aclnn, problems = _judge(op, winner, arch, compute_unit)
        findings += problems
        shadowed = tuple(w.name for w in where[1:])
        if shadowed:
            findings.append(
                finding(
                    "ASC-VENDOR-SHADOWED",
                    Severity.WARN,
                    f"{op}: vendor {winner.name} wins, {', '.join(shadowed)} never used",
                    found=f"{op} is provided by {', '.join(f'{w.name} ({w.origin})' for w in where)}, in search order",
                    expected="one vendor per OpType, or the intended one first",
                    evidence=tuple(w.path for w in where),
                    fix=f"to use {shadowed[0]}'s {op}: put {_path_of(where[1])} first in ASCEND_CUSTOM_OPP_PATH, "
                    f"or uninstall {winner.name} ({winner.path})",
                )
            )
        ops.append(OpStatus(op, winner.name, atc, runtime, aclnn, shadowed))
    if wanted and not ops:
        findings.append(
            finding(
                "ASC-VENDOR-OPTYPE",
                Severity.ERROR,
                f"no searched vendor provides {wanted}",
                found="vendors searched: " + (", ".join(f"{s.name} ({s.path})" for s in statuses) or "none"),
                expected=f"a vendor whose aic-<unit>-ops-info.json or kernel config names {wanted}",
                fix="install the package that provides it, and add its vendor directory to ASCEND_CUSTOM_OPP_PATH",
            )
        )
    return Judgement(tuple(statuses), tuple(ops), tuple(findings))


def doctor_findings(snap: Snapshot, matrix: Any, check_id: str) -> list[Finding]:
    """The findings of one check id for doctor: judged for each compute unit of the NPUs the
    snapshot lists (none listed: the unit-free parts only), the same finding once."""
    from ascenv.checks._facts import device_socs

    if not any(v.layout_read for v in snap.vendors):
        return []  # an older snapshot: the trees were not recorded
    if check_id == "ASC-VENDOR-OPTYPE" and not snap.host.arch:
        return []  # the libraries' arch cannot be judged
    units: list[Optional[str]] = [*sorted({s.compute_unit for s in device_socs(snap, matrix) if s.compute_unit})]
    seen: dict[tuple[str, str], Finding] = {}
    for unit in units or [None]:
        for found in judge(snap.vendors, arch=snap.host.arch or "", compute_unit=unit).findings:
            if found.id == check_id:
                seen.setdefault((found.title, found.found), found)
    return list(seen.values())


def check_ops(
    root: Root,
    environ: Mapping[str, str],
    *,
    opp_path: Optional[str],
    arch: str,
    compute_unit: Optional[str],
    wanted: Optional[str] = None,
    home: Optional[str] = None,
    cwd: str = "/",
) -> OpCheck:
    """Judge the vendors (``judge``), the ABI gate, and the kernel caches that predate a
    vendor's install (``stale_cache``; ``home`` None: ``$HOME`` of ``environ``)."""
    from ascenv.package.stale_cache import stale_kernel_caches
    from ascenv.probe.vendors import probe_vendors  # op check reads the trees; doctor reads the snapshot

    vendors, _ = probe_vendors(root, environ, opp_path)
    judged = judge(vendors, arch=arch, compute_unit=compute_unit, wanted=wanted)
    used = {o.vendor for o in judged.ops} | ({wanted} if wanted else set())
    checked = [v for v in vendors if v.priority != UNLISTED and (not wanted or v.name in used)]
    findings = [
        *judged.findings,
        *read_problems(checked),
        *_abi(root, opp_path, list(judged.vendors)),
        *stale_kernel_caches(
            root, environ, checked, home=home or environ.get("HOME"), cwd=cwd, compute_unit=compute_unit
        ),
    ]
    notes = []
    if not vendors:
        notes.append(_nothing_found(opp_path, environ.get("ASCEND_CUSTOM_OPP_PATH")))
    elif compute_unit is None:
        notes.append("no --soc given: the per-compute-unit parts (ops-info, kernels) were not judged")
    return OpCheck(arch, compute_unit, judged.vendors, judged.ops, tuple(findings), tuple(notes))


def _nothing_found(opp_path: Optional[str], custom: Optional[str]) -> str:
    """Where no vendor was found, so "nothing to check" is not mistaken for "all is well"."""
    where = (
        f"looked in {opp_path}/vendors"
        if opp_path
        else "no opp directory to look in (ASCEND_OPP_PATH unset, no CANN at the default path)"
    )
    custom_said = f"ASCEND_CUSTOM_OPP_PATH={custom}" if custom else "ASCEND_CUSTOM_OPP_PATH unset"
    return (
        f"no custom operator vendor found: {where}; {custom_said};"
        " install one with `ascenv install OP`, or source CANN's set_env.sh first"
    )


def read_problems(vendors: Iterable[Vendor], shown: int = 3) -> list[Finding]:
    """A finding per vendor whose files could not all be read (op check and doctor)."""
    found = []
    for vendor in vendors:
        if not vendor.problems:
            continue
        more = len(vendor.problems) - shown
        found.append(
            finding(
                "ASC-VENDOR-READ",
                Severity.WARN,
                f"vendor {vendor.name}: {counted(len(vendor.problems), 'file')} not read as CANN writes them",
                found="; ".join(vendor.problems[:shown]) + (f" (and {more} more)" if more > 0 else ""),
                expected="the JSON files the operator project's build writes",
                evidence=(vendor.path,),
                fix=f"rebuild and reinstall {vendor.name}; its OpTypes in those files are not judged until then",
            )
        )
    return found


def _path_of(status: VendorStatus) -> str:
    return status.path


def _judge(op: str, vendor: VendorStatus, arch: str, unit: Optional[str]) -> tuple[bool, bool, bool, list[Finding]]:
    lay = vendor.layout
    assert lay is not None
    problems: list[Finding] = []
    evidence = (vendor.path,)

    def arch_libs(kind: str) -> tuple[bool, str]:
        libs = lay.libraries_of(kind)
        good = [lib for lib in libs if lib.dir_arch == arch and lib.elf_arch in (arch, None)]
        have = ", ".join(f"{lib.path} ({lib.elf_arch or 'not ELF'})" for lib in libs) or "none"
        return bool(good), have

    proto_ok, proto_have = arch_libs("proto")
    atc_missing = []
    if not proto_ok:
        atc_missing.append(f"op proto library for {arch} (found: {proto_have})")
    if unit is not None and op not in lay.ops_info.get(unit, ()):
        atc_missing.append(
            f"{op} in {layout.TBE}/config/{unit}/aic-{unit}-ops-info.json (units: {', '.join(lay.ops_info) or 'none'})"
        )
    if atc_missing:
        problems.append(
            finding(
                "ASC-VENDOR-OPTYPE",
                Severity.ERROR,
                f"{op} (vendor {lay.name}) is invisible to ATC",
                found="missing " + "; ".join(atc_missing),
                expected=f"op_proto/lib/linux/{arch}/{layout.PROTO_LIB} and the ops-info JSON for "
                + (unit or "the compute unit"),
                evidence=evidence,
                fix=f"rebuild the package on/for {arch}"
                + (f" with ASCEND_COMPUTE_UNIT={unit}" if unit else "")
                + " and reinstall it",
            )
        )
    tiling_ok, tiling_have = arch_libs("tiling")
    rt_missing = []
    if not tiling_ok:
        rt_missing.append(f"tiling library for {arch} (found: {tiling_have})")
    if unit is not None:
        if not lay.kernel_binaries.get(unit):
            rt_missing.append(
                f"kernel binaries in {layout.TBE}/kernel/{unit}/ "
                f"(units with kernels: {', '.join(lay.compute_units) or 'none'})"
            )
        elif op not in lay.kernel_ops.get(unit, ()):
            rt_missing.append(f"{op} in {layout.TBE}/kernel/config/{unit}/")
    if rt_missing:
        problems.append(
            finding(
                "ASC-VENDOR-OPTYPE",
                Severity.ERROR,
                f"{op} (vendor {lay.name}) cannot run: the runtime lacks its parts",
                found="missing " + "; ".join(rt_missing),
                expected=f"{layout.TBE}/op_tiling/lib/linux/{arch}/{layout.TILING_LIB} and kernels for "
                + (unit or "the compute unit"),
                evidence=evidence,
                fix="rebuild with ENABLE_BINARY_PACKAGE=True"
                + (f" and ASCEND_COMPUTE_UNIT={unit}" if unit else "")
                + f" for {arch}, and reinstall it",
            )
        )
    header = f"aclnn_{layout.snake_case(op)}.h"
    opapi_ok = bool(lay.libraries_of("opapi"))
    aclnn_missing = [] if header in lay.aclnn_headers else [f"op_api/include/{header}"]
    if not opapi_ok:
        aclnn_missing.append(layout.OPAPI_LIB)
    if aclnn_missing:
        problems.append(
            finding(
                "ASC-VENDOR-ACLNN",
                Severity.WARN,
                f"{op} (vendor {lay.name}) has no aclnn interface: torch_npu bindings cannot call it",
                found="missing " + ", ".join(aclnn_missing),
                expected=f"op_api/include/{header} and {layout.OPAPI_LIB}",
                evidence=evidence,
                fix="rebuild the package with the aclnn (op_api) outputs and reinstall it; then add "
                f"{vendor.path}/op_api/lib to LD_LIBRARY_PATH",
            )
        )
    return not atc_missing, not rt_missing, not aclnn_missing, problems


def _package_roots(vendors: Sequence[Vendor]) -> list[Finding]:
    """An entry naming an install root (``DIR`` holding ``vendors/``) instead of ``DIR/vendors/<v>``:
    CANN looks for op_impl/ op_proto/ right below the entry, finds none, and skips it."""
    found = []
    for vendor in vendors:
        names = vendor.install_root_of
        if names is None:
            continue
        entry = vendor.path
        vendors_dir = posixpath.join(posixpath.normpath(entry), "vendors")
        proper = ":".join(posixpath.join(vendors_dir, n) for n in names) or f"{vendors_dir}/<vendor>"
        found.append(
            finding(
                "ASC-VENDOR-PKGROOT",
                Severity.ERROR,
                f"ASCEND_CUSTOM_OPP_PATH entry {entry} is an install root, not a vendor directory",
                found=f"{entry} holds vendors/ ({', '.join(names) or 'empty'}), no op_impl/ or op_proto/",
                expected="<install-path>/vendors/<vendor> entries",
                evidence=(vendors_dir,),
                fix=f"replace {entry} with {proper} in ASCEND_CUSTOM_OPP_PATH "
                f"(or source {vendors_dir}/<vendor>/bin/set_env.bash)",
            )
        )
    return found


def _abi(root: Root, opp_path: Optional[str], statuses: list[VendorStatus]) -> list[Finding]:
    """CANN's gate on each vendor's compiler version (see ASC-VENDOR-ABI); skipped without CANN."""
    if not opp_path:
        return []
    compiler_file = posixpath.join(posixpath.dirname(posixpath.normpath(opp_path)), "compiler", "version.info")
    text = root.read_text(compiler_file)
    from ascenv.probe.install_files import parse_key_values

    required = parse_key_values(text).get("required_opp_abi_version", "").strip('"') if text else ""
    ranges = opp_abi_ranges(required) if required else None
    if ranges is None:
        return []
    found = []
    for status in statuses:
        version = status.layout.compiler_version if status.layout else None
        if not version or "opp_latest" in status.path:
            continue
        effective = effective_version(version)
        if effective is None or not accepted(effective, ranges):
            found.append(
                finding(
                    "ASC-VENDOR-ABI",
                    Severity.ERROR,
                    f"vendor {status.name} is silently skipped by CANN: compiler {version} outside {required}",
                    found=f"custom_opp_compiler_version={version}; {compiler_file}: "
                    f"required_opp_abi_version={required} = {describe_ranges(ranges)}",
                    expected=f"a package built with a compiler inside {required}",
                    evidence=(posixpath.join(status.path, "version.info"), compiler_file),
                    fix=f"rebuild and reinstall {status.name} with the CANN whose compiler/version.info "
                    f"is {compiler_file}",
                )
            )
    return found
