"""Which PCI functions are Ascend NPUs: pure, shared by the device probe and the checks.

Huawei's vendor id also covers other functions (Kunpeng root ports, NICs, accelerators), so the
NPUs are picked by device id.
"""

from __future__ import annotations

from ascenv.model import PciDevice

HUAWEI = "0x19e5"
# PCI device ids of Ascend cards: ascend-deployer 26.0.0 module_utils/common_info.py ``card_map``
# (310 d100, 200I A2 d105/d107, 310P d500, 910 d801, 910B/A2 d802, A3 d803, A5 d806;
# https://gitee.com/ascend/ascend-deployer).
NPU_DEVICE_IDS = frozenset({"0xd100", "0xd105", "0xd107", "0xd500", "0xd801", "0xd802", "0xd803", "0xd806"})


def npu_functions(pci: tuple[PciDevice, ...]) -> tuple[PciDevice, ...]:
    """The functions that are Ascend NPUs (by device id), out of every 0x19e5 function."""
    return tuple(p for p in pci if p.device in NPU_DEVICE_IDS)
