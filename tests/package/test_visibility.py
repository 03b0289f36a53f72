"""`op check` core on fixture roots: vendor trees generated in tmp_path in the package layout."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import pytest

from ascenv.package.visibility import check_ops
from ascenv.probe.fs import Root
from tests.package.pkgbuild import vendor_tree

OPP = "/usr/local/Ascend/ascend-toolkit/latest/opp"
# reference data beside the checkout (never copied into the repo); the nearest ../shared up the tree
SHARED = next(
    (p / "shared" / "opproject-refdata" for p in Path(__file__).resolve().parents if (p / "shared").is_dir()),
    Path("/nonexistent"),
)


def machine(
    tmp_path: Path, config: Optional[str] = "load_priority=customize", required: str = '">=6.3, <=7.7"'
) -> Path:
    root = tmp_path / "root"
    vendors = root / OPP.lstrip("/") / "vendors"
    vendors.mkdir(parents=True)
    if config is not None:
        (vendors / "config.ini").write_text(config + "\n")
    compiler = root / OPP.lstrip("/") / ".." / "compiler"
    compiler.mkdir(parents=True)
    (compiler / "version.info").write_text(f"Version=7.7.0.1.238\nrequired_opp_abi_version={required}\n")
    return root


def run(root: Path, environ: Optional[dict] = None, unit: Optional[str] = "ascend910b", wanted=None):  # type: ignore[no-untyped-def]
    return check_ops(
        Root(root),
        {"ASCEND_OPP_PATH": OPP, **(environ or {})},
        opp_path=OPP,
        arch="aarch64",
        compute_unit=unit,
        wanted=wanted,
    )


def ids(result) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    return [(f.id, f.severity.value) for f in result.findings]


def test_a_correct_vendor_is_visible_everywhere(tmp_path: Path) -> None:
    root = machine(tmp_path)
    vendor_tree(root / OPP.lstrip("/") / "vendors" / "customize", op_types=("AddCustom", "SinhCustom"))
    result = run(root)
    assert [(o.op_type, o.vendor, o.atc, o.runtime, o.aclnn, o.shadowed) for o in result.ops] == [
        ("AddCustom", "customize", True, True, True, ()),
        ("SinhCustom", "customize", True, True, True, ()),
    ]
    assert result.findings == ()


@pytest.mark.parametrize(
    ("options", "id", "atc", "runtime", "aclnn", "found"),
    [
        ({"omit": ("proto",)}, "ASC-VENDOR-OPTYPE", False, True, True, "op proto library for aarch64 (found: none)"),
        ({"omit": ("ops_info",)}, "ASC-VENDOR-OPTYPE", False, True, True, "aic-ascend910b-ops-info.json"),
        ({"omit": ("tiling",)}, "ASC-VENDOR-OPTYPE", True, False, True, "tiling library for aarch64"),
        (
            {"omit": ("kernels",)},
            "ASC-VENDOR-OPTYPE",
            True,
            False,
            True,
            "kernel binaries in op_impl/ai_core/tbe/kernel/ascend910b/",
        ),
        ({"units": ("ascend310p",)}, "ASC-VENDOR-OPTYPE", False, False, True, "(units with kernels: ascend310p)"),
        ({"arch": "x86_64"}, "ASC-VENDOR-OPTYPE", False, False, True, "libcust_opsproto_rt2.0.so (x86_64)"),
        ({"omit": ("header",)}, "ASC-VENDOR-ACLNN", True, True, False, "op_api/include/aclnn_add_custom.h"),
        ({"omit": ("opapi",)}, "ASC-VENDOR-ACLNN", True, True, False, "op_api/lib/libcust_opapi.so"),
        ({"compiler": "8.5.0"}, "ASC-VENDOR-ABI", True, True, True, "custom_opp_compiler_version=8.5.0"),
    ],
)
def test_each_failure_cause_alone(
    tmp_path: Path, options: dict, id: str, atc: bool, runtime: bool, aclnn: bool, found: str
) -> None:
    root = machine(tmp_path)
    vendor_tree(root / OPP.lstrip("/") / "vendors" / "customize", **options)
    result = run(root)
    (op,) = result.ops
    assert (op.atc, op.runtime, op.aclnn) == (atc, runtime, aclnn)
    assert {f.id for f in result.findings} == {id}
    assert any(found in f.found for f in result.findings), [f.found for f in result.findings]
    assert all(f.fix and f.expected for f in result.findings)


def test_shared_optype_names_the_shadowed_vendor(tmp_path: Path) -> None:
    root = machine(tmp_path, config="load_priority=customize,mdc")
    vendors = root / OPP.lstrip("/") / "vendors"
    vendor_tree(vendors / "customize")
    vendor_tree(vendors / "mdc", name="mdc", op_types=("AddCustom", "MulCustom"))
    vendor_tree(root / "opt/new/vendors/newer", name="newer", kernel=b"kernel-v2")
    result = run(root, {"ASCEND_CUSTOM_OPP_PATH": "/opt/new/vendors/newer"})
    assert [(o.op_type, o.vendor, o.shadowed) for o in result.ops] == [
        ("AddCustom", "newer", ("customize", "mdc")),
        ("MulCustom", "mdc", ()),
    ]
    (shadow,) = [f for f in result.findings if f.id == "ASC-VENDOR-SHADOWED"]
    assert "vendor newer wins, customize, mdc never used" in shadow.title
    assert shadow.fix.startswith(f"to use customize's AddCustom: put {OPP}/vendors/customize first")


def test_custom_opp_path_at_the_package_root(tmp_path: Path) -> None:
    root = machine(tmp_path)
    vendor_tree(root / "opt/opp/vendors/customize")
    result = run(root, {"ASCEND_CUSTOM_OPP_PATH": "/opt/opp"})
    (f,) = [f for f in result.findings if f.id == "ASC-VENDOR-PKGROOT"]
    assert f.severity.value == "error"
    assert f.fix.startswith("replace /opt/opp with /opt/opp/vendors/customize in ASCEND_CUSTOM_OPP_PATH")
    assert result.ops == ()  # nothing found there, as CANN finds nothing


def test_only_the_named_optype_or_vendor(tmp_path: Path) -> None:
    root = machine(tmp_path)
    vendor_tree(root / OPP.lstrip("/") / "vendors" / "customize", op_types=("AddCustom", "SinhCustom"))
    assert [o.op_type for o in run(root, wanted="SinhCustom").ops] == ["SinhCustom"]
    assert len(run(root, wanted="customize").ops) == 2
    missing = run(root, wanted="NoSuchOp")
    assert [(f.id, f.title) for f in missing.findings] == [
        ("ASC-VENDOR-OPTYPE", "no searched vendor provides NoSuchOp")
    ]


def test_without_soc_only_arch_is_judged(tmp_path: Path) -> None:
    root = machine(tmp_path)
    vendor_tree(root / OPP.lstrip("/") / "vendors" / "customize", units=("ascend310p",))
    result = run(root, unit=None)
    assert result.findings == () and "no --soc given" in result.notes[0]


@pytest.mark.skipif(not (SHARED / "config.ini.multi_vendor").is_file(), reason="../shared/opproject-refdata is absent")
def test_real_multi_vendor_config_order(tmp_path: Path) -> None:
    config = (SHARED / "config.ini.multi_vendor").read_bytes().split(b"\n", 1)[1].decode()
    root = machine(tmp_path, config=config.strip())
    vendors = root / OPP.lstrip("/") / "vendors"
    for name in ("lhisi", "mdc", "customize"):
        vendor_tree(vendors / name, name=name)
    (op,) = run(root).ops
    assert (op.vendor, op.shadowed) == ("customize", ("mdc", "lhisi"))
