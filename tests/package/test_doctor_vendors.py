"""`ascenv doctor` reports what `ascenv op check` does, from the snapshot alone: the vendor probe
records each tree's layout, visibility.judge reads the record. Fixture roots as in
test_visibility; the host is the Atlas 800I A2 of tests.checks.helpers (910B4, aarch64)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Optional

import pytest

from ascenv import snapshot_io
from ascenv.checks import run_checks
from ascenv.model import Snapshot
from ascenv.probe.fs import Root
from ascenv.probe.vendors import probe_vendors
from tests.checks.helpers import a2_host, shipped_matrix
from tests.package.pkgbuild import vendor_tree
from tests.package.test_visibility import OPP, machine

VISIBILITY = ("ASC-VENDOR-OPTYPE", "ASC-VENDOR-ACLNN", "ASC-VENDOR-SHADOWED", "ASC-VENDOR-PKGROOT")


def snapshot(root: Path, environ: Optional[dict] = None) -> Snapshot:
    vendors, config = probe_vendors(Root(root), {"ASCEND_OPP_PATH": OPP, **(environ or {})}, OPP)
    return dataclasses.replace(a2_host(), vendors=vendors, vendor_config=config)


def doctor(snap: Snapshot) -> list[tuple[str, str, str]]:
    return sorted((f.id, f.title, f.found) for f in run_checks(snap, shipped_matrix()) if f.id in VISIBILITY)


def test_a_healthy_vendor_gives_no_finding(tmp_path: Path) -> None:
    root = machine(tmp_path)
    vendor_tree(root / OPP.lstrip("/") / "vendors" / "customize")
    snap = snapshot(root)
    (vendor,) = snap.vendors
    assert vendor.layout_read and vendor.ops_info == {"ascend910b": ("AddCustom",)}
    assert vendor.kernel_binaries == {"ascend910b": 1}
    assert [(x.kind, x.elf_arch) for x in vendor.libraries] == [
        ("opapi", "aarch64"),
        ("tiling", "aarch64"),
        ("proto", "aarch64"),
    ]
    assert doctor(snap) == []


@pytest.mark.parametrize(
    ("options", "id", "found"),
    [
        ({"omit": ("proto",)}, "ASC-VENDOR-OPTYPE", "op proto library for aarch64 (found: none)"),
        ({"omit": ("ops_info",)}, "ASC-VENDOR-OPTYPE", "aic-ascend910b-ops-info.json"),
        ({"omit": ("tiling",)}, "ASC-VENDOR-OPTYPE", "tiling library for aarch64"),
        ({"omit": ("kernels",)}, "ASC-VENDOR-OPTYPE", "kernel binaries in op_impl/ai_core/tbe/kernel/ascend910b/"),
        ({"units": ("ascend310p",)}, "ASC-VENDOR-OPTYPE", "(units with kernels: ascend310p)"),
        ({"arch": "x86_64"}, "ASC-VENDOR-OPTYPE", "libcust_opsproto_rt2.0.so (x86_64)"),
        ({"omit": ("header",)}, "ASC-VENDOR-ACLNN", "op_api/include/aclnn_add_custom.h"),
        ({"omit": ("opapi",)}, "ASC-VENDOR-ACLNN", "op_api/lib/libcust_opapi.so"),
    ],
)
def test_each_cause_is_found_by_doctor_and_survives_a_saved_snapshot(
    tmp_path: Path, options: dict, id: str, found: str
) -> None:
    root = machine(tmp_path)
    vendor_tree(root / OPP.lstrip("/") / "vendors" / "customize", **options)
    snap = snapshot(root)
    live = doctor(snap)
    assert {f[0] for f in live} == {id}
    assert any(found in f[2] for f in live), live
    saved = snapshot_io.snapshot_from_json(json.loads(snapshot_io.dumps_snapshot(snap)), "saved.json")
    assert doctor(saved) == live  # doctor --from gives the same findings


def test_shadowed_and_package_root_are_found_by_doctor(tmp_path: Path) -> None:
    root = machine(tmp_path, config="load_priority=newer,customize")
    vendors = root / OPP.lstrip("/") / "vendors"
    vendor_tree(vendors / "newer", name="newer")
    vendor_tree(vendors / "customize")
    found = doctor(snapshot(root, {"ASCEND_CUSTOM_OPP_PATH": OPP}))
    assert [f[0] for f in found] == ["ASC-VENDOR-PKGROOT", "ASC-VENDOR-SHADOWED"]
    assert "vendor newer wins, customize never used" in found[1][1]


def test_an_older_snapshot_without_layouts_loads_and_gives_no_finding(tmp_path: Path) -> None:
    root = machine(tmp_path)
    vendor_tree(root / OPP.lstrip("/") / "vendors" / "customize", omit=("proto",))
    data = json.loads(snapshot_io.dumps_snapshot(snapshot(root)))
    new_keys = ("layout_read", "ops_info", "kernel_ops", "kernel_binaries", "libraries", "aclnn_headers")
    for vendor in data["vendors"]:
        for key in (*new_keys, "install_root_of"):
            vendor.pop(key, None)
    old = snapshot_io.snapshot_from_json(data, "old.json")
    assert not old.vendors[0].layout_read
    assert doctor(old) == []
