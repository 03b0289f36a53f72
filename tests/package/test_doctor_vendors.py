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


# --- one bad file, one bad vendor (December 2026 adversarial report P3/V1) ----------------------

BAD_CONFIGS = [b'{"binList": 5}', b'{"binList":[{"binInfo":"x"}]}', b"[" * 100_000, b'{"B\\ud800": {"binList": []}}']


def with_a_bad_vendor(tmp_path: Path, text: bytes) -> Path:
    root = machine(tmp_path, config="load_priority=evil,customize")
    vendors = root / OPP.lstrip("/") / "vendors"
    vendor_tree(vendors / "customize")
    evil = vendor_tree(vendors / "evil", name="evil", op_types=("EvilOp",))
    (evil / "op_impl/ai_core/tbe/kernel/config/ascend910b/add.json").write_bytes(text)
    return root


@pytest.mark.parametrize("text", BAD_CONFIGS, ids=["int", "str-bininfo", "deep", "surrogate"])
def test_one_malformed_file_keeps_every_vendor_in_the_snapshot_doctor_and_lock(tmp_path: Path, text: bytes) -> None:
    from ascenv import lockfile

    snap = snapshot(with_a_bad_vendor(tmp_path, text))
    assert [(v.name, v.layout_read) for v in snap.vendors] == [("evil", True), ("customize", True)]
    assert snap.vendors[0].ops_info == {"ascend910b": ("EvilOp",)}  # the rest of evil is read
    findings = run_checks(snap, shipped_matrix())
    read = [f for f in findings if f.id == "ASC-VENDOR-READ"]
    if text.startswith(b'{"B'):
        assert read == []  # a well-formed file: its odd key is data, shown escaped
    else:
        assert [(f.severity.value, f.title) for f in read] == [
            ("warn", "vendor evil: 1 file not read as CANN writes them")
        ]
        assert "kernel/config/ascend910b/add.json" in (read[0].found or "")
    saved = snapshot_io.snapshot_from_json(json.loads(snapshot_io.dumps_snapshot(snap)), "saved.json")
    assert saved.vendors == snap.vendors  # the problems survive a saved snapshot (doctor --from)
    lock = lockfile.lock_from_snapshot(snap, generator_version="test")
    assert [v.name for v in lock.vendors] == ["evil", "customize"]


def test_a_vendor_whose_tree_cannot_be_read_is_still_listed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the variant: whatever reading one tree raises, the other vendors are read
    from ascenv.probe import vendor_tree as tree

    root = with_a_bad_vendor(tmp_path, b"{}")
    original = tree.read_vendor

    def failing(root_: Root, name: str, path: str):  # type: ignore[no-untyped-def]
        if name == "evil":
            raise TypeError("a bug in one reader")
        return original(root_, name, path)

    monkeypatch.setattr(tree, "read_vendor", failing)
    snap = snapshot(root)
    evil, customize = snap.vendors
    assert (evil.name, evil.layout_read, customize.layout_read) == ("evil", False, True)
    assert evil.problems == ("its tree could not be read: TypeError: a bug in one reader",)
    read = [f for f in run_checks(snap, shipped_matrix()) if f.id == "ASC-VENDOR-READ"]
    assert [f.title for f in read] == ["vendor evil: 1 file not read as CANN writes them"]


def test_a_failed_vendors_probe_is_shown_by_doctor() -> None:
    from ascenv.model import ProbeError

    failed = ProbeError("vendors", "internal", "the vendors probe failed: TypeError: x")
    snap = dataclasses.replace(a2_host(), errors=(failed,))
    (found,) = [f for f in run_checks(snap, shipped_matrix()) if f.id == "ASC-VENDOR-READ"]
    assert found.severity.value == "error" and found.found == failed.message
    assert "no custom vendor was checked" in found.title


@pytest.mark.parametrize("text", BAD_CONFIGS, ids=["int", "str-bininfo", "deep", "surrogate"])
def test_op_check_on_a_malformed_file_never_exits_3(tmp_path: Path, text: bytes) -> None:
    from tests.commands.test_op_cmd import ascenv

    root = with_a_bad_vendor(tmp_path, text)
    for fmt in ("human", "json"):
        argv = ("op", "check", "--root", str(root), "--soc", "Ascend910B4", "--arch", "aarch64", "--format", fmt)
        code, out, err = ascenv(tmp_path, *argv, environ={"ASCEND_OPP_PATH": OPP})
        assert code in (0, 1) and "Traceback" not in err, err
        assert "customize" in out and "evil" in out


@pytest.mark.parametrize("key", ["B\\ud800", "\\udfffC", "D\\udc80\\ud800"])
def test_a_lone_surrogate_in_an_installed_op_type_reaches_the_snapshot_escaped(tmp_path: Path, key: str) -> None:
    root = machine(tmp_path)
    vendor = vendor_tree(root / OPP.lstrip("/") / "vendors" / "customize")
    ops_info = vendor / "op_impl/ai_core/tbe/config/ascend910b/aic-ascend910b-ops-info.json"
    ops_info.write_text('{"' + key + '": {"opFile": {"value": "x"}}, "AddCustom": {}}')
    snap = snapshot(root)
    assert snap.vendors[0].ops_info == {"ascend910b": ("AddCustom", key)}  # the escape, as text
    snapshot_io.dumps_snapshot(snap).encode("utf-8")  # writable as UTF-8: no exit 3
    run_checks(snap, shipped_matrix())


def test_op_check_says_a_vendor_was_not_read_rather_than_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ascenv.probe import vendor_tree as tree
    from tests.commands.test_op_cmd import ascenv

    root = with_a_bad_vendor(tmp_path, b"{}")
    original = tree.read_vendor
    monkeypatch.setattr(
        tree, "read_vendor", lambda r, n, p: (_ for _ in ()).throw(TypeError("x")) if n == "evil" else original(r, n, p)
    )
    argv = ("op", "check", "--root", str(root), "--soc", "Ascend910B4", "--arch", "aarch64")
    code, out, err = ascenv(tmp_path, *argv, environ={"ASCEND_OPP_PATH": OPP})
    assert code == 0, err
    assert "evil" in out and "(not read: see ASC-VENDOR-READ)" in out and "(missing)" not in out
    assert "warn ASC-VENDOR-READ: vendor evil: 1 file not read as CANN writes them" in out
    code, out, _ = ascenv(tmp_path, *argv, "--format", "json", environ={"ASCEND_OPP_PATH": OPP})
    assert [(v["name"], v["exists"]) for v in json.loads(out)["vendors"]] == [("evil", True), ("customize", True)]
