"""Custom operator vendors: config.ini readable, every listed vendor present."""

from __future__ import annotations

from collections.abc import Iterator

from ascenv.checks import check, finding
from ascenv.model import Finding, Severity, Snapshot


@check(
    "ASC-VENDOR-CONFIG",
    layer="vendors",
    title="vendors/config.ini is well formed",
    explain="""
$ASCEND_OPP_PATH/vendors/config.ini decides the order in which CANN searches custom operator
vendors: `load_priority=vendor_a,vendor_b`. CANN reads only its first line, so anything else a
user or a second installer appends is ignored (research/operator-build-and-caches.md §2).
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
            fix=f"rewrite it: echo 'load_priority={','.join(config.load_priority) or 'customize'}' > {config.path or '$ASCEND_OPP_PATH/vendors/config.ini'}",
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
