"""Driver ↔ firmware ↔ CANN: the ranges the packages carry, Huawei's HDK tables, a pending reboot."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Optional

from ascenv.checks import check, finding
from ascenv.checks.facts import device_socs, judged_installs, not_comparable, parse
from ascenv.errors import InvalidVersion
from ascenv.model import Finding, Severity, Snapshot
from ascenv.versions import ProductLine, parse_range_list


def _driver_version(snap: Snapshot) -> Optional[str]:
    return snap.driver.version or snap.npu.driver_version


def _driver_file(snap: Snapshot) -> tuple[str, ...]:
    file = snap.driver.version_file
    return (file.path,) if file else ((snap.npu.source,) if snap.npu.source else ())


@check(
    "ASC-FW-DRIVER",
    layer="firmware",
    title="driver and firmware accept each other",
    explain="""
The driver and firmware packages name the versions they work with: driver version.info has
`compatible_version_fw=[7.0.0,7.7.99]` (firmware versions), firmware version.info has
`compatible_version_drv=[24.1,24.1.],[25.0,25.0.]` (driver families; a trailing dot means any
version starting with it). Both must hold. A real case: driver 24.1.rc2 with firmware 7.3.0.1.231
outside `[7.0.0,7.2.99]` gave "driver and firmware packages do not match" and broke IPC/UUID
These fields are the most robust check: they need no
table, the packages carry them.
""",
)
def firmware_driver(snap: Snapshot, matrix: Any) -> Iterator[Finding]:
    driver, firmware = snap.driver, snap.firmware
    if not driver.version or not firmware.version:
        return
    sides = (
        (
            "the driver",
            driver.version_file,
            "compatible_version_fw",
            "firmware",
            firmware.version,
            ProductLine.FIRMWARE,
        ),
        ("the firmware", firmware.version_file, "compatible_version_drv", "driver", driver.version, ProductLine.DRIVER),
    )
    evidence = tuple(dict.fromkeys(p for p in (driver.version_file and driver.version_file.path, firmware.source) if p))
    judged, refused, odd = [], [], []
    for owner, file, key, other, version, line in sides:
        text = file.get(key) if file else None
        if not text:
            continue
        try:
            ranges = parse_range_list(text, line=line)
            subject = parse(version, line)
            if subject is None:
                raise InvalidVersion(f"{other} version {version!r}")
            inside = any(r.contains(subject) for r in ranges)
        except InvalidVersion as exc:
            odd.append(f"{owner}'s {key}={text} vs {other} {version}: not comparable ({exc.message})")
            continue
        judged.append(f"{owner} accepts {other} {text}")
        if not inside:
            refused.append(f"{owner} ({file.path if file else '?'}) accepts {other} {text}; the {other} is {version}")
    bundle = (driver.version_file.get("package_version") if driver.version_file else None) or driver.version
    if refused:
        yield finding(
            "ASC-FW-DRIVER",
            Severity.ERROR,
            f"driver {driver.version} and firmware {firmware.version} do not match",
            found="; ".join(refused),
            expected="each inside the other's compatible range",
            evidence=evidence,
            fix=f"install the firmware of the driver's HDK release {bundle} "
            f"(Ascend-hdk-<chip>-npu-firmware_{bundle}.run --full; "
            "or the driver of the firmware's release), then reboot",
        )
    elif odd:
        yield finding(
            "ASC-FW-DRIVER",
            Severity.WARN,
            "driver/firmware compatibility not comparable",
            found="; ".join(odd),
            expected="version strings and ranges as the HDK packages write them",
            evidence=evidence,
            fix="check by hand: npu-smi info -t board -i 0 (Compatibility : OK)",
        )
    elif judged:
        yield finding(
            "ASC-FW-DRIVER",
            Severity.OK,
            f"driver {driver.version} and firmware {firmware.version} accept each other",
            found="; ".join(judged),
            evidence=evidence,
        )


@check(
    "ASC-DRIVER-REBOOT",
    layer="driver",
    title="the running driver is the installed one",
    explain="""
npu-smi reports the version of the driver that is running; /usr/local/Ascend/driver/version.info
the one installed on disk. When they differ, the driver was most likely upgraded (or
reinstalled) without the reboot the installer asks for, and libraries from the new package talk
to the old kernel modules. This is a hypothesis carried over from the CUDA world ("Driver/library
version mismatch" after an upgrade without reboot; research/peers-and-pain-points.md §10 #40):
the Ascend symptom is not verified, so ascenv warns and does not fail.
""",
)
def driver_reboot(snap: Snapshot, matrix: Any) -> Iterator[Finding]:
    disk, running = snap.driver.version, snap.npu.driver_version
    if not disk or not running:
        return
    a, b = parse(disk, ProductLine.DRIVER), parse(running, ProductLine.DRIVER)
    same = a == b if a is not None and b is not None else disk.strip().lower() == running.strip().lower()
    if same:
        return
    yield finding(
        "ASC-DRIVER-REBOOT",
        Severity.WARN,
        f"driver {disk} installed, {running} running: upgraded without reboot?",
        found=f"{snap.driver.path or 'driver'}/version.info says {disk}; npu-smi info says {running}",
        expected="the same version",
        evidence=_driver_file(snap) + ((snap.npu.source,) if snap.npu.source else ()),
        fix=f"reboot so the installed driver {disk} is loaded (npu-smi info then shows Version: {disk})",
    )


def _context(snap: Snapshot, matrix: Any) -> tuple[tuple[str, ...], Optional[str]]:
    """What HDK rules apply here: compute units and card names, and the HDK numbering line."""
    units = {s.compute_unit for s in device_socs(snap, matrix) if s.compute_unit}
    cards = {b.product_name for b in snap.npu.boards if b.product_name}
    return tuple(sorted(units | cards)), ("ascend950" if "ascend950" in units else None)


_FIT_SEVERITY = {
    "matched": Severity.OK,
    "compatible": Severity.OK,
    "known-working": Severity.OK,
    "newer-than-matched": Severity.INFO,
    "unknown": Severity.INFO,
    "older-than-matched": Severity.WARN,
    "not-listed": Severity.WARN,
    "below-minimum": Severity.ERROR,
    "incompatible": Severity.ERROR,
}
_FIT_WORDS = {
    "matched": "the HDK released with it",
    "compatible": "in Huawei's compatibility list",
    "known-working": "paired with it in an install guide",
    "newer-than-matched": "newer than the HDK released with it; no list says yes or no",
    "unknown": "no HDK data for this CANN",
    "older-than-matched": "older than the HDK released with it",
    "not-listed": "not in Huawei's compatibility list for it",
    "below-minimum": "below the documented minimum",
    "incompatible": "explicitly incompatible",
}


@check(
    "ASC-CANN-DRIVER",
    layer="cann",
    title="CANN fits the installed driver (HDK)",
    explain="""
Each CANN release ships with an HDK (driver + firmware) release ("matched", from ascend-deployer's
required_soft and the release notes); Huawei also publishes compatibility lists and, from CANN
8.5, minimums: 8.5.x/9.0.x need HDK >= 25.0.X, 9.1.x needs >= 25.2.X (25.0.X is explicitly "N").
Below a documented minimum or explicitly incompatible is an error; older than the matched HDK
(no minimum documented before 8.5) or not in a published list is a warning; newer than matched
with no list is a note (data: compat/cann.toml, each row with its release note).
""",
)
def cann_driver(snap: Snapshot, matrix: Any) -> Iterator[Finding]:
    driver = _driver_version(snap)
    if matrix is None or not driver or not snap.cann.installs:
        return
    context, hdk_line = _context(snap, matrix)
    for install in judged_installs(snap):
        evidence = tuple(p for p in (install.info_file,) if p) + _driver_file(snap)
        odd = not_comparable(install.version, ProductLine.CANN) or not_comparable(driver, ProductLine.DRIVER)
        if odd:
            yield finding(
                "ASC-CANN-DRIVER",
                Severity.INFO,
                f"CANN {install.version or '?'} vs driver {driver}: not comparable",
                found=odd,
                expected="release version strings (8.0.RC2, 24.1.rc2.2)",
                evidence=evidence,
            )
            continue
        verdict = matrix.driver_fit(install.version, driver, applies_to=context, hdk_line=hdk_line)
        fit = verdict.fit.value
        severity = _FIT_SEVERITY[fit]
        rules = verdict.evidence
        if severity is Severity.ERROR and rules and all(r.provenance.status.value != "documented" for r in rules):
            # INFERRED or CONFLICT facts are reported at a lower confidence, never as a failure
            severity = Severity.WARN
        hdk = ", ".join(dict.fromkeys(t for r in rules for t in r.hdk_text))
        soft = sorted({r.provenance.status.value for r in rules} - {"documented"})
        as_of = getattr(matrix, "as_of", "")
        if fit == "unknown" and not rules:
            found = _no_hdk_data(matrix, install.version or "?", driver, as_of)
        else:
            found = f"driver {driver} is {_FIT_WORDS[fit]}" + (f" ({hdk})" if hdk else "")
        found += f"; the source marks this {'/'.join(soft)}" if soft else ""
        sources = tuple(f"compat: {r.provenance.source[0]}" for r in rules[:2])
        cited = {"source": rules[0].provenance.url if rules else "", "data_as_of": as_of}
        title = f"CANN {install.version} with driver {driver}: {fit.replace('-', ' ')}"
        if severity in (Severity.OK, Severity.INFO):
            yield finding("ASC-CANN-DRIVER", severity, title, found=found, evidence=evidence + sources, **cited)
            continue
        rules_here = matrix.hdk_rules_for(install.version, applies_to=context, hdk_line=hdk_line)
        listed = [t for r in rules_here if r.kind.value in ("matched", "compatible") for t in r.hdk_text]
        floors = [t for r in rules_here if r.kind.value == "minimum" for t in r.hdk_text]
        matched = [r.hdk_text[0] for r in rules_here if r.kind.value == "matched"]
        allowed = [v.cann.raw for v in matrix.cann_for_driver(driver, applies_to=context, hdk_line=hdk_line)]
        upgrade = (
            f"install the HDK {matched[0]} (driver, then firmware) released with CANN {install.version}"
            if matched
            else f"install an HDK driver listed for CANN {install.version}"
        )
        keep = f", or keep the driver and use CANN {', '.join(allowed[:4])}" if allowed else ""
        yield finding(
            "ASC-CANN-DRIVER",
            severity,
            title,
            found=found,
            expected="HDK "
            + (", ".join(dict.fromkeys(listed)) or "-")
            + (f" (at least {', '.join(floors)})" if floors else ""),
            evidence=evidence + sources,
            fix=upgrade + keep,
            **cited,
        )


def _no_hdk_data(matrix: Any, cann: str, driver: str, as_of: str) -> str:
    """The note for a CANN without HDK rules: newer than the data, or simply not published."""
    newest = max((r.version for r in matrix.cann_releases), default=None)
    version = parse(cann, ProductLine.CANN)
    if version is not None and newest is not None and version.commercial() > newest:
        return f"CANN {cann} is newer than every release in the compatibility data (as of {as_of}): no HDK list known"
    return f"no HDK compatibility published for CANN {cann} in the data (as of {as_of}); driver {driver} not judged"


@check(
    "ASC-DRIVER-CANN",
    layer="driver",
    title="CANN releases the installed driver allows",
    explain="""
The fix suggester for the driver: every CANN release for which this driver is the matched HDK,
in Huawei's compatibility list, or paired in an install guide (compat/cann.toml), newest first.
Use it to pick a CANN without touching the driver.
""",
)
def cann_for_driver(snap: Snapshot, matrix: Any) -> Iterator[Finding]:
    driver = _driver_version(snap)
    if matrix is None or not driver:
        return
    odd = not_comparable(driver, ProductLine.DRIVER)
    if odd:
        yield finding(
            "ASC-DRIVER-CANN",
            Severity.INFO,
            f"driver {driver}: allowed CANN releases unknown",
            found=odd,
            evidence=_driver_file(snap),
        )
        return
    context, hdk_line = _context(snap, matrix)
    verdicts = matrix.cann_for_driver(driver, applies_to=context, hdk_line=hdk_line)
    if not verdicts:
        yield finding(
            "ASC-DRIVER-CANN",
            Severity.INFO,
            f"no CANN release lists driver {driver}",
            found="compat/cann.toml has no matched, compatible or known-working row for it",
            evidence=_driver_file(snap),
        )
        return
    groups: dict = {}
    for v in verdicts:
        groups.setdefault(v.fit.value, []).append(v.cann.raw)
    names = [v.cann.raw for v in verdicts]
    yield finding(
        "ASC-DRIVER-CANN",
        Severity.INFO,
        f"driver {driver} allows CANN {names[0]}"
        + (f" … {names[-1]} ({len(names)} releases)" if len(names) > 1 else ""),
        found="; ".join(f"{fit}: {', '.join(cann)}" for fit, cann in groups.items()),
        evidence=_driver_file(snap),
    )
