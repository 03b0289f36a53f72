"""The driver: installed and loaded, the one running is the one on disk, the CANN releases it allows."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ascenv.checks import check, finding
from ascenv.checks._facts import driver_file, driver_version, hdk_context, not_comparable, parse
from ascenv.checks._unreadable import unreadable_files, unreadable_finding
from ascenv.model import Finding, Severity, Snapshot
from ascenv.pci import npu_functions
from ascenv.versions import ProductLine
from ascenv.words import counted


@check(
    "ASC-DRIVER-LOADED",
    layer="driver",
    title="driver installed and loaded",
    explain="""
The driver package installs files under /usr/local/Ascend/driver (version.info) and kernel
modules; an installed but unloaded driver (after a kernel update, or before the reboot the
installer asks for) leaves npu-smi and every ACL call failing.
""",
)
def driver_loaded(snap: Snapshot, matrix: object) -> Iterator[Finding]:
    driver = snap.driver
    if driver.version is None:
        unreadable = unreadable_files(driver.errors)
        if unreadable:  # installed but hidden from this user: a reinstall would be the wrong fix
            yield unreadable_finding("ASC-DRIVER-LOADED", "driver", unreadable[0])
            return
        cards = npu_functions(snap.devices.pci)
        if cards and not snap.devices.in_container:
            yield finding(
                "ASC-DRIVER-LOADED",
                Severity.ERROR,
                "Ascend card present but no driver installed",
                found=f"{counted(len(cards), 'Ascend PCI function')}, no driver version.info",
                expected="/usr/local/Ascend/driver/version.info",
                fix="install the Ascend-hdk driver and firmware .run packages for this card (driver first)",
            )
        return
    if driver.loaded is False and not snap.devices.in_container:
        yield finding(
            "ASC-DRIVER-LOADED",
            Severity.ERROR,
            "driver installed but not loaded",
            found=f"driver {driver.version} on disk, kernel module not loaded",
            evidence=tuple(p for p in (driver.path,) if p),
            fix="reboot, or load it: modprobe drv_davinci_intf (see dmesg for the reason it did not load)",
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
version mismatch" after an upgrade without reboot,
https://github.com/greshake/i3status-rust/pull/771):
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
        evidence=driver_file(snap) + ((snap.npu.source,) if snap.npu.source else ()),
        fix=f"reboot so the installed driver {disk} is loaded (npu-smi info then shows Version: {disk})",
    )


@check(
    "ASC-DRIVER-CANN",
    layer="driver",
    suggests=True,
    title="CANN releases the installed driver allows",
    explain="""
The fix suggester for the driver: every CANN release for which this driver is the matched HDK,
in Huawei's compatibility list, or paired in an install guide (compat/cann.toml), newest first.
Use it to pick a CANN without touching the driver.
""",
)
def cann_for_driver(snap: Snapshot, matrix: Any) -> Iterator[Finding]:
    driver = driver_version(snap)
    if matrix is None or not driver:
        return
    odd = not_comparable(driver, ProductLine.DRIVER)
    if odd:
        yield finding(
            "ASC-DRIVER-CANN",
            Severity.INFO,
            f"driver {driver}: allowed CANN releases unknown",
            found=odd,
            evidence=driver_file(snap),
        )
        return
    context, hdk_line = hdk_context(snap, matrix)
    verdicts = matrix.cann_for_driver(driver, applies_to=context, hdk_line=hdk_line)
    if not verdicts:
        yield finding(
            "ASC-DRIVER-CANN",
            Severity.INFO,
            f"no CANN release lists driver {driver}",
            found="compat/cann.toml has no matched, compatible or known-working row for it",
            evidence=driver_file(snap),
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
        evidence=driver_file(snap),
    )
