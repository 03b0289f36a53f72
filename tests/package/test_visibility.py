"""`op check` core on fixture roots: vendor trees generated in tmp_path in the package layout."""

from __future__ import annotations

import hashlib
import os
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


# --- kernel caches older than a vendor's install ------------------------------------------------

INSTALLED = 1_767_225_600  # 2026-01-01 00:00 UTC: when the fixture vendor was (re)installed
FIX = "ascenv clean-cache --kind kernel-cache --kind fuzzy-kernel-cache --soc Ascend910B4 --stale --yes"


def installed_vendor(tmp_path: Path, units: tuple[str, ...] = ("ascend910b",)) -> Path:
    root = machine(tmp_path)
    vendor = vendor_tree(root / OPP.lstrip("/") / "vendors" / "customize", units=units)
    os.utime(vendor / "version.info", (INSTALLED, INSTALLED))
    return root


def kernel_cache(base: Path, soc: str = "Ascend910B4", *, at: float, kind: str = "kernel_cache") -> Path:
    """A compile cache entry as CANN writes it (a kernel .o and its .json), all files dated ``at``."""
    entry = base / "atc_data" / kind / soc
    (entry / "te_add_custom_1a2b").mkdir(parents=True)
    for name in ("te_add_custom_1a2b/kernel.o", "te_add_custom_1a2b/kernel.json"):
        (entry / name).write_bytes(b"compiled")
        os.utime(entry / name, (at, at))
    (base / "atc_data" / kind / "op_cache.ini").write_text("[op_compiler_cache]\n")
    return entry


def tree_hash(top: Path) -> str:
    """Names, contents and mtimes of everything below ``top``: a read-only check leaves it equal."""
    digest = hashlib.sha256()
    for path in sorted(top.rglob("*")):
        st = path.lstat()
        digest.update(f"{path.relative_to(top)}\0{st.st_mtime_ns}\0".encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def stale(result) -> list:  # type: ignore[no-untyped-def]
    return [f for f in result.findings if f.id == "ASC-VENDOR-STALE-CACHE"]


def test_a_kernel_cache_older_than_the_vendor_install_is_reported(tmp_path: Path) -> None:
    root = installed_vendor(tmp_path)
    entry = kernel_cache(root / "home/dev", at=INSTALLED - 86400)
    before = tree_hash(root / "home")
    result = run(root, {"HOME": "/home/dev"})
    (f,) = stale(result)
    assert f.severity.value == "warn"
    assert (
        f.title == "kernel-cache Ascend910B4 predates the install of vendor customize: it may still serve old kernels"
    )
    assert f.found == (
        "/home/dev/atc_data/kernel_cache/Ascend910B4 (default $HOME/atc_data): files from 2025-12-31 00:00 UTC "
        "to 2025-12-31 00:00 UTC; "
        f"vendor customize installed 2026-01-01 00:00 UTC ({OPP}/vendors/customize/version.info)"
    )
    assert (
        f.expected == "no kernels in /home/dev/atc_data/kernel_cache/Ascend910B4 compiled before the vendor's install"
    )
    assert f.fix == f"in the system whose root is {root}: {FIX}"
    assert tree_hash(root / "home") == before and entry.is_dir()
    assert not any("kernel cache" in note for note in result.notes)


def test_kernels_compiled_after_the_install_or_no_cache_give_nothing(tmp_path: Path) -> None:
    root = installed_vendor(tmp_path)
    assert stale(run(root, {"HOME": "/home/dev"})) == []  # no atc_data at all
    kernel_cache(root / "home/dev", at=INSTALLED + 3600)
    assert stale(run(root, {"HOME": "/home/dev"})) == []
    assert stale(run(root)) == []  # no HOME: $HOME/atc_data unknown, not looked at


def test_the_cache_dir_the_environment_names_and_only_the_socs_judged(tmp_path: Path) -> None:
    root = installed_vendor(tmp_path, units=("ascend910b", "ascend310p"))
    kernel_cache(root / "home/dev", at=INSTALLED - 60)  # not read: ASCEND_CACHE_PATH moves the cache
    kernel_cache(root / "data", at=INSTALLED - 60, kind="fuzzy_kernel_cache")
    kernel_cache(root / "data", "Ascend910B1", at=INSTALLED - 60)
    kernel_cache(root / "data", "Ascend310P3", at=INSTALLED - 60)
    environ = {"HOME": "/home/dev", "ASCEND_CACHE_PATH": "/data/atc_data"}
    found = stale(run(root, environ))
    assert [f.found.split(" (")[0] for f in found] == [
        "/data/atc_data/kernel_cache/Ascend910B1",
        "/data/atc_data/fuzzy_kernel_cache/Ascend910B4",
    ]
    assert found[0].fix.endswith("--soc Ascend910B1 --stale --yes")
    assert len(stale(run(root, environ, unit=None))) == 3  # no --soc: every SoC's cache
    assert stale(run(root, environ, wanted="NoSuchOp")) == []  # a vendor not checked is not judged


def test_a_cache_for_a_unit_the_vendor_has_no_kernels_for_is_not_its_concern(tmp_path: Path) -> None:
    root = installed_vendor(tmp_path)  # kernels for ascend910b only
    kernel_cache(root / "home/dev", "Ascend310P3", at=INSTALLED - 60)
    assert stale(run(root, {"HOME": "/home/dev"}, unit=None)) == []


class HostPaths:
    """The parts of the host Root the cache check uses, without opening the real /: machine
    paths are host paths (the test's are all in tmp_path)."""

    is_host = True
    directory = Path("/")

    def resolve(self, path: str) -> str:
        return os.path.realpath(path)

    def host_path(self, path: str) -> Path:
        return Path(path)


def test_on_this_host_the_fix_is_the_bare_command(tmp_path: Path) -> None:
    from ascenv.model import Vendor
    from ascenv.package.stale_cache import stale_kernel_caches

    host = HostPaths()

    vendor = vendor_tree(tmp_path / "opt/vendors/customize")
    os.utime(vendor / "version.info", (INSTALLED, INSTALLED))
    entry = kernel_cache(tmp_path / "home", at=INSTALLED - 60)
    record = Vendor("customize", str(vendor), "ASCEND_CUSTOM_OPP_PATH", 0, compute_units=("ascend910b",))
    (f,) = stale_kernel_caches(host, {}, [record], home=str(tmp_path / "home"), compute_unit="ascend910b")  # type: ignore[arg-type]
    assert f.fix == FIX and f.found.startswith(f"{entry} (default $HOME/atc_data): ")
    other_unit = Vendor("customize", str(vendor), "ASCEND_CUSTOM_OPP_PATH", 0, compute_units=("ascend310p",))
    assert stale_kernel_caches(host, {}, [other_unit], home=str(tmp_path / "home")) == []  # type: ignore[arg-type]
