"""Custom operator vendors: config.ini well formed, every vendor present, accepted by the runtime's
ABI gate, built for this chip; and the ids of what `ascenv op check` reports about them."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterator
from typing import Any, Optional

from ascenv.checks import check, finding
from ascenv.checks._facts import (
    accepted,
    active_install,
    describe_ranges,
    device_socs,
    effective_version,
    opp_abi_ranges,
    set_env_line,
    vendor_compiler_versions,
)
from ascenv.model import UNLISTED, Finding, Severity, Snapshot, Vendor


@check(
    "ASC-VENDOR-CONFIG",
    layer="vendors",
    title="vendors/config.ini is well formed",
    explain="""
$ASCEND_OPP_PATH/vendors/config.ini decides the order in which CANN searches custom operator
vendors: `load_priority=vendor_a,vendor_b`. CANN reads only its first line, so anything else a
user or a second installer appends is ignored (github:hicann/metadef@786891c02e5a7f509c6ffffd854e33ddefe3527c:
base/common/plugin/plugin_manager.cc GetOppPluginVendors).
""",
)
def vendor_config(snap: Snapshot, matrix: object) -> Iterator[Finding]:
    config = snap.vendor_config
    for problem in config.problems:
        yield finding(
            "ASC-VENDOR-CONFIG",
            Severity.ERROR,
            "vendors/config.ini is malformed",
            found=problem,
            expected="one line: load_priority=<vendor>[,<vendor>…]",
            evidence=tuple(p for p in (config.path,) if p),
            fix=f"rewrite it: echo 'load_priority={','.join(config.load_priority) or 'customize'}' > "
            f"{config.path or '$ASCEND_OPP_PATH/vendors/config.ini'}",
        )


@check(
    "ASC-VENDOR-PRESENT",
    layer="vendors",
    title="every configured vendor is installed",
    explain="""
A vendor named in config.ini or ASCEND_CUSTOM_OPP_PATH whose directory is gone is skipped
without a message; its operators then fall back to built-in ones or fail with EZ3003.
""",
)
def vendors_present(snap: Snapshot, matrix: object) -> Iterator[Finding]:
    for vendor in snap.vendors:
        if not vendor.exists:
            yield finding(
                "ASC-VENDOR-PRESENT",
                Severity.ERROR,
                f"vendor {vendor.name} is configured but missing",
                found=f"{vendor.path} (from {vendor.origin}) does not exist",
                expected="an installed vendor directory",
                fix="reinstall the operator package, or remove the vendor from " + vendor.origin,
            )


@check(
    "ASC-VENDOR-READ",
    layer="vendors",
    title="every custom vendor tree could be read",
    explain="""
ascenv reads each vendor's operator description files (aic-<unit>-ops-info.json,
kernel/config/<unit>/*.json, version.info) to tell which OpTypes it provides. A file that is not
the JSON CANN writes (damaged, hand-edited, truncated) is reported here, per file, and the rest of
the vendor and every other vendor are still checked. If the vendors probe itself failed, no
vendor was checked at all: that is said here too, never left as an empty vendor list.
""",
)
def vendor_read(snap: Snapshot, matrix: object) -> Iterator[Finding]:
    for error in snap.errors:
        if error.probe == "vendors":
            yield finding(
                "ASC-VENDOR-READ",
                Severity.ERROR,
                "the vendors probe failed: no custom vendor was checked",
                found=error.message,
                expected="every vendor named by ASCEND_CUSTOM_OPP_PATH and vendors/config.ini read",
                fix="rerun with --debug and report it (ascenv report bundles what is needed)",
            )
    from ascenv.package.visibility import read_problems

    yield from read_problems([v for v in snap.vendors if v.priority != UNLISTED])


def _searched(snap: Snapshot) -> list:
    """Vendors CANN searches: present, and named by ASCEND_CUSTOM_OPP_PATH or config.ini."""
    return [v for v in snap.vendors if v.exists and v.priority != UNLISTED]


def _evidence(vendor: Vendor, *more: str) -> tuple:
    paths = [posixpath.join(vendor.path, "version.info")] if vendor.version_info else [vendor.path]
    return tuple(paths + [m for m in (vendor.manifest, *more) if m])


def _built_with(matrix: Any, compiler: str) -> Optional[str]:
    """The CANN whose compiler/version.info carries this Version (compat/cann.toml [[compiler]])."""
    if matrix is None:
        return None
    rows = [c for c in matrix.compilers if c.version.raw == compiler]
    return rows[0].cann.raw if rows else None


def _accepted(effective: Optional[int], ranges: Any) -> bool:
    """A compiler version the runtime's ABI gate lets through (no effective version: not)."""
    return effective is not None and accepted(effective, ranges)


@check(
    "ASC-VENDOR-ABI",
    layer="vendors",
    title="the runtime accepts each custom vendor's compiler version",
    explain="""
A custom operator package records the compiler that built it (<vendor>/version.info:
custom_opp_compiler_version=7.7.0.1.238, written by the project template's gen_version_info.sh).
At load time CANN compares it with `required_opp_abi_version` of the running CANN's
compiler/version.info (e.g. ">=6.3, <=7.7"), on major + minor (the minor padded to 5 digits), and
a vendor outside every range is skipped with only a log warning: its operators silently fall back
to the built-in ones or fail with EZ3003. Source: github:hicann/metadef
base/common/plugin/plugin_manager.cc IsVendorVersionValid, GetRequiredOppAbiVersion,
GetEffectiveVersion (@786891c02e5a7f509c6ffffd854e33ddefe3527c).
Paths containing opp_latest are exempt; a vendor without version.info is not checked.
""",
)
def vendor_abi(snap: Snapshot, matrix: Any) -> Iterator[Finding]:
    install = active_install(snap)
    if install is None or not install.required_opp_abi_version:
        return
    required = install.required_opp_abi_version
    compiler_file = posixpath.join(install.path, "compiler", "version.info")
    ranges = opp_abi_ranges(required)
    for vendor in _searched(snap):
        if "opp_latest" in vendor.path:
            continue
        versions = vendor_compiler_versions(vendor)
        if not versions:
            yield finding(
                "ASC-VENDOR-ABI",
                Severity.INFO,
                f"vendor {vendor.name}: build compiler unknown, CANN loads it unchecked",
                found=f"no custom_opp_compiler_version in {vendor.path}/version.info",
                evidence=_evidence(vendor),
            )
            continue
        if ranges is None:
            yield finding(
                "ASC-VENDOR-ABI",
                Severity.ERROR,
                f"vendor {vendor.name} is skipped: CANN cannot read its own ABI range",
                found=f"required_opp_abi_version={required!r} in {compiler_file}",
                expected='">=X.Y, <=X.Y" (or X.Y items)',
                evidence=_evidence(vendor, compiler_file),
                fix=f"reinstall CANN {install.version or ''} (its compiler/version.info is damaged)",
            )
            continue
        bad = [v for v in versions if not _accepted(effective_version(v), ranges)]
        if bad:
            origin = _built_with(matrix, bad[0])
            yield finding(
                "ASC-VENDOR-ABI",
                Severity.ERROR,
                f"vendor {vendor.name} is silently skipped by CANN {install.version or '?'}",
                found=f"built by compiler {', '.join(bad)}"
                + (f" (CANN {origin})" if origin else "")
                + (
                    ""
                    if all(effective_version(v) is not None for v in bad)
                    else " — not comparable: CANN cannot parse it"
                )
                + f"; runtime accepts required_opp_abi_version {required} = {describe_ranges(ranges)}",
                expected=f"a package built with a compiler inside {required}",
                evidence=_evidence(vendor, compiler_file),
                fix=f"rebuild and reinstall {vendor.name} after `{set_env_line(install)}` "
                f"(compiler {install.compiler_version or 'of CANN ' + str(install.version)})"
                + (f", or run it with CANN {origin}" if origin else ""),
            )
            continue
        if install.compiler_version and install.compiler_version not in versions:
            origin = _built_with(matrix, versions[0])
            yield finding(
                "ASC-VENDOR-ABI",
                Severity.INFO,
                f"vendor {vendor.name} was built by another CANN's compiler (accepted)",
                found=f"built by {', '.join(versions)}"
                + (f" (CANN {origin})" if origin else "")
                + f"; runtime compiler {install.compiler_version}, accepts {required}",
                evidence=_evidence(vendor, compiler_file),
                fix=f"rebuild {vendor.name} with CANN {install.version} to be sure",
            )
            continue
        yield finding(
            "ASC-VENDOR-ABI",
            Severity.OK,
            f"vendor {vendor.name} accepted ({', '.join(versions)} in {required})",
            evidence=_evidence(vendor, compiler_file),
        )


@check(
    "ASC-VENDOR-UNITS",
    layer="vendors",
    title="each custom vendor has kernels for this chip",
    explain="""
A built operator package holds binaries per compute unit: op_impl/ai_core/tbe/kernel/<unit>/ and
config/<unit>/ (ascend910b, ascend310p, ascend910_93, …), chosen by ASCEND_COMPUTE_UNIT in the
project's CMakePresets.json. A package built for another chip loads, but its operators are
missing on this one: "Socversion mismatch", EZ3002/EZ3003 (vllm-ascend#6676, #1383).
""",
)
def vendor_units(snap: Snapshot, matrix: Any) -> Iterator[Finding]:
    socs = [s for s in device_socs(snap, matrix) if s.compute_unit]
    if not socs:
        return
    for vendor in _searched(snap):
        if not vendor.compute_units:
            continue
        missing = [s for s in socs if s.compute_unit not in vendor.compute_units]
        if not missing:
            present = sorted({s.compute_unit for s in socs if s.compute_unit})
            yield finding(
                "ASC-VENDOR-UNITS",
                Severity.OK,
                f"vendor {vendor.name} has kernels for {', '.join(present)}",
                evidence=(vendor.path,),
            )
            continue
        units = sorted({s.compute_unit for s in missing if s.compute_unit})
        socs_text = ", ".join(sorted({s.soc_version for s in missing if s.soc_version})) or "this chip"
        yield finding(
            "ASC-VENDOR-UNITS",
            Severity.ERROR,
            f"vendor {vendor.name} has no kernels for {', '.join(units)}",
            found=f"{vendor.path}/op_impl/ai_core/tbe holds {', '.join(vendor.compute_units)}",
            expected=f"kernels for {', '.join(units)} ({socs_text})",
            evidence=_evidence(vendor),
            fix=f"rebuild {vendor.name} with ASCEND_COMPUTE_UNIT={';'.join(units)} in CMakePresets.json "
            f"(--soc_version {socs_text}) and reinstall it",
        )


# --- what `ascenv op check` reports -------------------------------------------------------------
# The vendor probe records each tree's layout in the snapshot and ascenv.package.visibility judges
# it, for op check and doctor alike. Snapshots older than those records give no finding here.


def _judged(check_id: str) -> Callable[[Snapshot, Any], Iterator[Finding]]:
    def run(snap: Snapshot, matrix: Any) -> Iterator[Finding]:
        from ascenv.package.visibility import doctor_findings

        return iter(doctor_findings(snap, matrix, check_id))

    return run


check(
    "ASC-VENDOR-OPTYPE",
    layer="vendors",
    title="each OpType is visible to ATC and to the runtime",
    explain="""
ATC (graph mode) finds a custom OpType through the vendor's op proto library for the host arch
(op_proto/lib/linux/<arch>/libcust_opsproto_rt2.0.so) and its entry in
op_impl/ai_core/tbe/config/<unit>/aic-<unit>-ops-info.json for the SoC's compute unit; the
runtime needs the tiling library (op_impl/ai_core/tbe/op_tiling/lib/linux/<arch>/
libcust_opmaster_rt2.0.so) and kernel binaries under op_impl/ai_core/tbe/kernel/<unit>/ with their
kernel/config/<unit>/ entry. Missing one gives "op not found" in ATC or EZ3002/EZ3003 at run time.
Layout: the CANN operator project template (scripts/install.sh, cmake/func.cmake). Reported by
`ascenv op check` and `ascenv doctor`.
""",
)(_judged("ASC-VENDOR-OPTYPE"))

check(
    "ASC-VENDOR-ACLNN",
    layer="vendors",
    title="each OpType has its aclnn interface",
    explain="""
Single-operator calls (aclnnXxx) and the torch_npu bindings built on them need
op_api/include/aclnn_<op_file>.h and op_api/lib/libcust_opapi.so in the vendor, with op_api/lib on
LD_LIBRARY_PATH (the set_env.bash an --install-path install writes adds it). Reported by
`ascenv op check` and `ascenv doctor`.
""",
)(_judged("ASC-VENDOR-ACLNN"))

check(
    "ASC-VENDOR-SHADOWED",
    layer="vendors",
    title="no OpType is provided by two searched vendors",
    explain="""
CANN searches ASCEND_CUSTOM_OPP_PATH entries leftmost first, then the vendors of
vendors/config.ini's load_priority, and uses the first vendor that provides an OpType
(github:hicann/metadef base/common/plugin/plugin_manager.cc). A second vendor with the same
OpType is never used: a rebuilt package installed under another vendor name, or in the default
location while an older --install-path vendor stays on ASCEND_CUSTOM_OPP_PATH, silently runs the
old operator. Reported by `ascenv op check` and `ascenv doctor`.
""",
)(_judged("ASC-VENDOR-SHADOWED"))

check(
    "ASC-VENDOR-PKGROOT",
    layer="vendors",
    title="ASCEND_CUSTOM_OPP_PATH names vendor directories",
    explain="""
ASCEND_CUSTOM_OPP_PATH is a list of vendor directories (<install-path>/vendors/<vendor>), not of
install roots (CANN environment variable reference, ASCEND_CUSTOM_OPP_PATH). An entry naming the
--install-path itself has no op_impl/ or op_proto/ below it, so CANN finds nothing there and
says nothing. Reported by `ascenv op check` and `ascenv doctor`.
""",
)(_judged("ASC-VENDOR-PKGROOT"))


@check(
    "ASC-VENDOR-STALE-CACHE",
    layer="vendors",
    title="no kernel cache predates a vendor's install",
    explain="""
The operator compile disk cache (kernel_cache/<soc> and fuzzy_kernel_cache/<soc> below
ACL_OP_COMPILER_CACHE_DIR, else $ASCEND_CACHE_PATH, else $HOME/atc_data) is read back by the
runtime: kernels compiled from a vendor before it was rebuilt and reinstalled may still be served
instead of the new ones. A cache holding files older than the vendor's version.info (rewritten by
every install) is reported with the `ascenv clean-cache ... --stale --yes` command that removes
it. Reported by `ascenv op check` only: doctor works from a snapshot, which records no caches, and
never scans them.
""",
)
def stale_kernel_cache(snap: Snapshot, matrix: Any) -> Iterator[Finding]:
    return iter(())  # op check scans the caches (ascenv.package.stale_cache); doctor does not
