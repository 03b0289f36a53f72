"""Human rendering of a snapshot."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from ascenv.model import Snapshot
from ascenv.output import Output


def render_snapshot(out: Output, snap: Snapshot) -> None:
    c = out.console
    h = snap.host
    c.print(f"[bold]Host[/]  {escape(h.os_name or '?')}  kernel {h.kernel or '?'}  {h.arch or '?'}  glibc {h.glibc or '?'}")
    c.print(f"[bold]Driver[/]  {snap.driver.version or 'not found'}   [bold]Firmware[/]  {snap.firmware.version or 'not found'}")
    if snap.npu.chips:
        table = Table("NPU", "Chip", "Name", "Health", "Bus-Id", "HBM MB", "Memory MB", title=f"npu-smi {snap.npu.npu_smi_version or ''}")
        for chip in snap.npu.chips:
            table.add_row(
                str(chip.npu), str(chip.chip), escape(chip.name or "-"), chip.health or "-", chip.bus_id or "-",
                _pair(chip.hbm_used_mb, chip.hbm_total_mb), _pair(chip.memory_used_mb, chip.memory_total_mb),
            )
        c.print(table)
    for error in snap.npu.errors:
        c.print(f"[red]npu-smi:[/] {escape(error.message)}")
    if snap.cann.installs:
        for inst in snap.cann.installs:
            mark = "*" if inst.path == snap.cann.active else " "
            c.print(f" {mark} CANN {escape(inst.version or '?')}  {inst.kind}  {escape(inst.path)}")
    else:
        c.print("[bold]CANN[/]  no installation found")
    py = snap.python
    if py.executable:
        pk = py.packages
        c.print(
            f"[bold]Python[/]  {py.version} ({escape(py.executable)})  torch {pk.get('torch', '-')}  torch_npu {pk.get('torch-npu', '-')}"
        )
    for vendor in snap.vendors:
        c.print(f"[bold]Vendor[/]  {escape(vendor.name)}  {escape(vendor.path)}")
    errors = [e for part in (snap.errors, snap.driver.errors, snap.cann.errors, snap.devices.errors, snap.python.errors) for e in part]
    for error in errors:
        c.print(f"[yellow]{error.probe}:[/] {escape(error.message)}")


def _pair(used, total) -> str:
    return "-" if total is None else f"{used if used is not None else '?'} / {total}"
