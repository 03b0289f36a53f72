"""Snapshots of fixture machines with one known fault each, for triage's confirmations.

Built on tests/fixture_hosts.py: each fault is a fixture host as built there, changed in the one
place the fault lives (a file removed or added under its root, or the target Python's packages).
The Python is never this test's interpreter: its distributions are set to the versions a thread
reported, so the checks judge the same stack on every test machine.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
from pathlib import Path
from typing import Optional

from ascenv import compat, model
from ascenv.probe.fs import Root
from ascenv.probe.snapshot import collect
from tests.fixture_hosts import build_host, write_tilelang_checkout

TOOLKIT = "usr/local/Ascend/ascend-toolkit/8.0.0"

FAULTS = (
    "env_not_sourced",  # two CANNs, set_env.sh not sourced (ASC-ENV-SOURCED error)
    "container",  # container without device nodes, npu-smi failing with -8020
    "no_device_nodes",  # the A2 host without /dev/davinci*: nodes missing, npu-smi still answers
    "torch_npu_cann",  # torch_npu 2.7.1 on the A3 host with CANN 9.0.0 (documented incompatible: ASC-TORCH-CANN error)
    "soc",  # CANN 8.0.0 without the platform_config of the host's Ascend910B4 (ASC-KERNELS-TARGET warning)
    "vendor_units",  # a custom vendor with kernels for ascend310p only on a 910B4 host
    "numpy2",  # numpy 2.0.2 in the target Python
    "torch_pair",  # torch 2.2.0 under torch_npu 2.1.0.post10 (ASC-TORCH-PAIR error)
    "pod_devices",  # the A2 host's cards 3 and 4 given to a container (ASCEND_VISIBLE_DEVICES=4,3)
    "driver_cann",  # the A3 host's CANN 8.5.0 on a 24.1.0 driver, older than it documents (ASC-CANN-DRIVER error)
    # the A3 host's CANN 8.5.0 with a tilelang-ascend checkout on PYTHONPATH made before the changes
    # CANN 8.5 needs of it (ASC-STACK-JIT error); ``jit_changes`` gives it some or all of them
    "jit_frontend",
)


def python_info(torch_npu: str = "2.1.0.post10", numpy: str = "1.26.4", torch: str = "2.1.0") -> model.PythonInfo:
    """torch 2.1.0 + torch_npu 2.1.0.post10 (validated with CANN 8.0.0 in compat/torch_npu.toml)."""
    dists = (("torch", torch), ("torch_npu", torch_npu), ("numpy", numpy))
    return model.PythonInfo(
        executable="/usr/bin/python3",
        version="3.10.12",
        implementation="cpython",
        platform="linux-aarch64",
        distributions=tuple(model.Distribution(name, version, "/site") for name, version in dists),
    )


def machine(fault: Optional[str], tmp_path: Path, jit_changes: tuple[str, ...] = ()) -> model.Snapshot:
    """The healthy A2 host (``fault=None``) or one with ``fault`` (one of FAULTS)."""
    assert fault is None or fault in FAULTS, fault
    name = {
        "env_not_sourced": "two-canns-dangling-latest",
        "container": "container-no-devices",
        "torch_npu_cann": "a3-cann900",
        "driver_cann": "a3-cann850",
        "jit_frontend": "a3-cann850",
    }.get(fault or "", "a2-cann800")
    host = build_host(name, tmp_path)
    root = host.root
    if fault == "no_device_nodes":
        for node in (root / "dev").iterdir():
            node.unlink()
    if fault == "driver_cann":
        # the driver's version.info as a 24.1.0 package writes it (Version=, as the A3 host's own)
        (root / "usr/local/Ascend/driver/version.info").write_text("Version=24.1.0\n")
    environ = host.environ
    if fault == "pod_devices":
        # what a device plugin or Ascend Docker Runtime gives a container of cards 4 and 3: their
        # nodes and the control nodes, /.dockerenv, and the variable the runtime read
        (root / ".dockerenv").write_text("")
        for node in (root / "dev").glob("davinci[0-9]*"):
            if node.name not in ("davinci3", "davinci4"):
                node.unlink()
        environ = {**environ, "ASCEND_VISIBLE_DEVICES": "4,3"}
    if fault == "jit_frontend":
        environ = {**environ, "PYTHONPATH": write_tilelang_checkout(root, changes=jit_changes)}
    if fault == "soc":
        os.remove(root / TOOLKIT / "aarch64-linux/data/platform_config/Ascend910B4.ini")
    if fault == "vendor_units":
        vendors = root / TOOLKIT / "opp/vendors"
        (vendors / "customize/op_impl/ai_core/tbe/kernel/ascend310p").mkdir(parents=True)
        (vendors / "config.ini").write_text("load_priority=customize\n")
    snapshot = collect(Root(str(root)), environ, python=sys.executable, sought=matrix().jit_strings)
    python = python_info(
        torch_npu="2.7.1" if fault == "torch_npu_cann" else "2.1.0.post10",
        numpy="2.0.2" if fault == "numpy2" else "1.26.4",
        torch={"torch_pair": "2.2.0", "torch_npu_cann": "2.7.1"}.get(fault or "", "2.1.0"),
    )
    return dataclasses.replace(snapshot, python=python)


@functools.lru_cache(maxsize=1)
def matrix() -> compat.Matrix:
    return compat.load()
