"""What `ascenv op check` reports about installed operator vendors, as doctor checks: the vendor
probe records each tree's layout in the snapshot, and ascenv.package.visibility judges it, for op
check and doctor alike. Snapshots older than those records give no finding here."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ascenv.checks import check
from ascenv.model import Finding, Snapshot


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
