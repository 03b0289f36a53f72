"""What npu-smi said: tool present, error codes explained, chip health."""

from __future__ import annotations

from collections.abc import Iterator

from ascenv.checks import check, finding
from ascenv.checks._facts import has_npu_hardware
from ascenv.model import Finding, Severity, Snapshot, processes_note
from ascenv.proc import last_line
from ascenv.words import counted


@check(
    "ASC-NPU-SMI",
    layer="npu",
    title="npu-smi answers",
    explain="""
npu-smi is the driver's management tool; its table gives chip names (the SoC), health, HBM and
the processes using each NPU. It is missing on CPU-only hosts and in containers started without
`-v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi` (the mount the CANN container images document:
https://github.com/Ascend/cann-container-image README). When it fails, the DCMI return code says
why: -8020 means the device is used by another process or container. An output without its whole
process table (cut, or npu-smi answered only in part) leaves the processes on the NPUs unknown:
that is said, never read as "no process".
""",
)
def npu_smi(snap: Snapshot, matrix: object) -> Iterator[Finding]:
    errors = snap.npu.errors
    if snap.npu.chips:
        if not errors:
            yield finding(
                "ASC-NPU-SMI",
                Severity.OK,
                f"npu-smi lists {counted(len(snap.npu.chips), 'chip')}",
                evidence=(snap.npu.source,),
            )
        else:  # the table came; some sub-queries (-m, -t board) did not: one note, not one per NPU
            commands = sorted({e.source for e in errors if e.source})
            yield finding(
                "ASC-NPU-SMI",
                Severity.WARN,
                f"npu-smi answered only in part ({len(errors)} failed quer{'y' if len(errors) == 1 else 'ies'})",
                found=last_line(errors[0].message) or errors[0].kind,
                evidence=tuple(commands[:3]),
                fix="run the failing command by hand as root to compare: "
                + (commands[0] if commands else "npu-smi info"),
            )
        unknown = processes_note(snap.npu)
        if unknown is not None:
            yield finding(
                "ASC-NPU-SMI",
                Severity.INFO,
                "processes on the NPUs unknown",
                found=unknown,
                expected="the whole process table: every NPU with its processes or 'No running processes found'",
                evidence=(snap.npu.source,),
            )
        return
    for error in errors:
        missing = error.kind == "not-found"
        if missing and not has_npu_hardware(snap):
            yield finding(
                "ASC-NPU-SMI",
                Severity.INFO,
                "no Ascend NPU on this machine",
                found="no npu-smi, no driver, no Ascend PCI device, no /dev/davinci*",
                expected="nothing: fine for building and checking without a device",
            )
            continue
        severity = Severity.WARN if missing else Severity.ERROR
        fix = (
            "mount it into the container: -v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi "
            "-v /usr/local/Ascend/driver:/usr/local/Ascend/driver:ro"
            if missing and snap.devices.in_container
            else "install the Ascend driver package (it ships npu-smi) or add its directory to PATH"
            if missing
            else _fix_for_code(error.code)
        )
        title = "npu-smi not found" if missing else f"npu-smi failed{f' ({error.code})' if error.code else ''}"
        found = error.message if not error.meaning else f"{error.message} — {error.meaning}"
        yield finding(
            "ASC-NPU-SMI", severity, title, found=found, evidence=(error.source,) if error.source else (), fix=fix
        )


def _fix_for_code(code: object) -> str:
    if code == "-8020":
        return (
            "another process or container holds the device: find it with `npu-smi info` on the host, "
            "or start this container with only the NPUs it owns (--device /dev/davinciN)"
        )
    if code == "-8005":
        return "the driver is not initialised: check `dmesg` for davinci errors and reload the driver or reboot"
    return "see the npu-smi message above; rerun `npu-smi info` as root to compare"


@check(
    "ASC-NPU-HEALTH",
    layer="npu",
    title="chip health",
    explain="""
npu-smi prints a health word per chip: OK, Warning, Alarm or Critical (npucli source,
github:verylucky01/driver @e29d066, npu_info_print*.c). Anything but OK means the chip reports a fault; the error codes
come from `npu-smi info -t health -i <npu> -c <chip>`.
""",
)
def chip_health(snap: Snapshot, matrix: object) -> Iterator[Finding]:
    for chip in snap.npu.chips:
        if chip.health and chip.health.upper() != "OK":
            severity = Severity.WARN if chip.health.lower() == "warning" else Severity.ERROR
            yield finding(
                "ASC-NPU-HEALTH",
                severity,
                f"NPU {chip.npu} chip {chip.chip} health is {chip.health}",
                found=f"{chip.name or 'chip'} at {chip.bus_id or 'unknown bus'}: {chip.health}",
                expected="OK",
                evidence=(snap.npu.source,),
                fix=f"npu-smi info -t health -i {chip.npu} -c {chip.chip}  # shows the error codes",
            )
