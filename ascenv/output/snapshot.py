"""Human rendering of a snapshot."""

from __future__ import annotations

from typing import Optional

from rich.table import Table

from ascenv.model import NpuInfo, Snapshot
from ascenv.output import Output, safe
from ascenv.probe.npu_smi import processes_note


def _text(value: Optional[object], missing: str = "?") -> str:
    """A value read from the machine, safe for rich: a version.info is free text and a ``[/]``
    in it would otherwise be read as markup and fail."""
    return safe(str(value)) if value is not None else missing


def render(out: Output, snap: Snapshot, fmt: str = "human") -> None:
    if fmt == "json":
        from ascenv.snapshot_io import snapshot_to_json

        out.json(snapshot_to_json(snap), kind="snapshot")
    else:
        render_snapshot(out, snap)


def render_snapshot(out: Output, snap: Snapshot) -> None:
    c = out.console
    h = snap.host
    c.print(f"[bold]Host[/]  {_text(h.os_name)}  kernel {_text(h.kernel)}  {_text(h.arch)}  glibc {_text(h.glibc)}")
    c.print(
        f"[bold]Driver[/]  {_text(snap.driver.version, 'not found')}"
        f"   [bold]Firmware[/]  {_text(snap.firmware.version, 'not found')}"
    )
    if snap.npu.chips:
        table = Table(
            "NPU",
            "Chip",
            "Name",
            "Health",
            "Bus-Id",
            "HBM MB",
            "Memory MB",
            title=f"npu-smi {_text(snap.npu.npu_smi_version, '')}",
        )
        for chip in snap.npu.chips:
            table.add_row(
                str(chip.npu),
                str(chip.chip),
                _text(chip.name, "-"),
                _text(chip.health, "-"),
                _text(chip.bus_id, "-"),
                _pair(chip.hbm_used_mb, chip.hbm_total_mb),
                _pair(chip.memory_used_mb, chip.memory_total_mb),
            )
        c.print(table)
        c.print(f"[bold]Processes[/]  {_processes(snap.npu)}")
    for error in snap.npu.errors:
        c.print(f"[red]npu-smi:[/] {safe(error.message)}")
    if snap.cann.installs:
        for inst in snap.cann.installs:
            mark = "*" if inst.path == snap.cann.active else " "
            c.print(f" {mark} CANN {_text(inst.version)}  {_text(inst.kind)}  {safe(inst.path)}")
    else:
        c.print("[bold]CANN[/]  no installation found")
    py = snap.python
    if py.executable:
        pk = py.packages
        c.print(
            f"[bold]Python[/]  {_text(py.version)} ({safe(py.executable)})"
            f"  torch {_text(pk.get('torch'), '-')}  torch_npu {_text(pk.get('torch-npu'), '-')}"
        )
    for vendor in snap.vendors:
        c.print(f"[bold]Vendor[/]  {safe(vendor.name)}  {safe(vendor.path)}")
    for part in snap.stack:  # the layer above torch_npu
        abi = f"  {part.abi_selected or ','.join(part.abi_variants)}" if part.abi_variants else ""
        c.print(f"[bold]Stack[/]  {safe(part.name)} {_text(part.version)}{safe(abi)}  {safe(part.path)}")
    errors = [
        e
        for part in (snap.errors, snap.driver.errors, snap.cann.errors, snap.devices.errors, snap.python.errors)
        for e in part
    ]
    for error in errors:
        c.print(f"[yellow]{safe(error.probe)}:[/] {safe(error.message)}")


def _processes(npu: NpuInfo) -> str:
    """The processes on the NPUs, or why they are unknown: a missing process table is not 'none'."""
    listed = ", ".join(
        f"{p.pid if p.pid is not None else '?'} {safe(p.name or '?')} (NPU {p.npu}"
        + (f" chip {p.chip})" if p.chip is not None else ")")
        for p in npu.processes
    )
    unknown = processes_note(npu)
    if unknown is not None:
        return f"unknown: {safe(unknown)}" + (f"; listed: {listed}" if listed else "")
    return listed or "none running"


def _pair(used, total) -> str:
    return "-" if total is None else f"{used if used is not None else '?'} / {total}"
