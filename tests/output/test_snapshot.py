"""ascenv.output.snapshot: machine text is shown as read, never read as rich markup."""

from __future__ import annotations

import io

from ascenv import model
from ascenv.output import Output
from ascenv.output.snapshot import render_snapshot


def test_markup_in_machine_text_is_printed_verbatim():
    # version.info and npu-smi output are free text: a "[/]" must not make rich raise
    chip = model.Chip(npu=0, chip=0, name="910B4", health="[red]OK", bus_id="0000:C1:00.0")
    snap = model.Snapshot(
        host=model.HostInfo(kernel="5.10.0-[/]", arch="aarch64"),
        driver=model.DriverInfo(version="25.0.[/]rc1"),
        npu=model.NpuInfo(npu_smi_version="[bold]24.1", chips=(chip,)),
        python=model.PythonInfo(executable="/usr/bin/python3", version="3.11.[/]"),
    )
    stdout = io.StringIO()
    render_snapshot(Output(stdout=stdout, stderr=io.StringIO(), interactive=False, color=False), snap)
    text = stdout.getvalue()
    for shown in ("kernel 5.10.0-[/]", "Driver  25.0.[/]rc1", "npu-smi [bold]24.1", "[red]OK", "Python  3.11.[/]"):
        assert shown in text
