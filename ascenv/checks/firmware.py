"""The firmware: driver and firmware accept each other (the ranges both packages carry)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ascenv.checks import check, finding
from ascenv.checks._facts import parse
from ascenv.errors import InvalidVersion
from ascenv.model import Finding, Severity, Snapshot
from ascenv.versions import ProductLine, parse_range_list


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
