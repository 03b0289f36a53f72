from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from ascenv.probe.fs import Root
from ascenv.probe.vendors import parse_load_priority, probe_vendors
from tests.conftest import SHARED

REFDATA = SHARED / "opproject-refdata"
OPP = "/usr/local/Ascend/ascend-toolkit/latest/opp"
needs_refdata = pytest.mark.skipif(not REFDATA.is_dir(), reason="needs ../shared/opproject-refdata (reference-only)")


def _payload(name: str) -> str:
    """A refdata file without its '# source:' first line (opproject-refdata/README.md)."""
    return (REFDATA / name).read_bytes().split(b"\n", 1)[1].decode()


def _install_listing(top: Path, vendors_dir: str, vendor: str) -> None:
    """Lay out the files of the real SinhCustom .run listing as install.sh copies them:
    ./packages/vendors/<v>/... -> <vendors_dir>/<vendor>/..."""
    for line in _payload("run_listing_SinhCustom_cann8.0.RC3.txt").splitlines():
        prefix = "./packages/vendors/customize/"
        if not line.startswith(prefix):
            continue
        target = top / vendors_dir.lstrip("/") / vendor / line[len(prefix) :]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("")
    (top / vendors_dir.lstrip("/") / vendor / "version.info").write_text(_payload("vendor_version.info.cann-8.1.RC1"))


@pytest.fixture
def top(tmp_path: Path) -> Path:
    top = tmp_path / "root"
    (top / "usr/local/Ascend/ascend-toolkit/8.1.RC1/opp/vendors").mkdir(parents=True)
    (top / "usr/local/Ascend/ascend-toolkit/latest").symlink_to("8.1.RC1")
    return top


@needs_refdata
def test_config_ini_order_custom_path_first_and_real_package_layout(top):
    vendors_dir = f"{OPP}/vendors"
    (top / vendors_dir.lstrip("/") / "config.ini").write_text(_payload("config.ini.multi_vendor"))
    _install_listing(top, vendors_dir, "customize")
    _install_listing(top, "/opt/ops/vendors", "sinh")
    (top / vendors_dir.lstrip("/") / "mdc").mkdir()
    (top / vendors_dir.lstrip("/") / "old_vendor").mkdir()
    manifest = top / "opt/ops/vendors/sinh/ascenv-manifest.toml"
    manifest.write_bytes(b'schema = 1\nvendor = "sinh"\n')
    environ = {"ASCEND_CUSTOM_OPP_PATH": "/opt/ops/vendors/sinh::/opt/missing/vendors/x:"}

    vendors, config = probe_vendors(Root(top), environ, OPP)

    assert config.path == f"{vendors_dir}/config.ini"
    assert config.load_priority == ("customize", "mdc", "lhisi")
    assert config.problems == ()
    assert [(v.name, v.origin, v.priority, v.exists) for v in vendors] == [
        ("sinh", "ASCEND_CUSTOM_OPP_PATH", 0, True),
        ("x", "ASCEND_CUSTOM_OPP_PATH", 1, False),
        ("customize", "config.ini", 2, True),
        ("mdc", "config.ini", 3, True),
        ("lhisi", "config.ini", 4, False),
        ("old_vendor", "unlisted", -1, True),
    ]
    sinh, customize = vendors[0], vendors[2]
    assert sinh.path == "/opt/ops/vendors/sinh"
    assert customize.path == f"{vendors_dir}/customize"
    assert customize.version_info == {"custom_opp_compiler_version": "7.7.0.1.238"}
    assert customize.compute_units == ("ascend910b",)
    assert customize.manifest is None and customize.manifest_digest is None
    assert sinh.manifest == "/opt/ops/vendors/sinh/ascenv-manifest.toml"
    assert sinh.manifest_digest == hashlib.sha256(b'schema = 1\nvendor = "sinh"\n').hexdigest()
    assert vendors[3].compute_units == () and vendors[3].version_info == {}


def test_no_opp_path_and_no_custom_path(top):
    vendors, config = probe_vendors(Root(top), {}, None)
    assert vendors == () and config.path is None and config.load_priority == ()


def test_opp_without_config_ini_lists_vendor_dirs_as_unlisted(top):
    vendor = top / OPP.lstrip("/") / "vendors/customize"
    (vendor / "op_impl/ai_core/tbe/config/ascend310p").mkdir(parents=True)
    (vendor / "version.info").write_text("custom_opp_compiler_version=8.5.0")  # no newline, as written
    vendors, config = probe_vendors(Root(top), {}, OPP)
    assert config.path is None
    assert [(v.name, v.priority, v.compute_units) for v in vendors] == [("customize", -1, ("ascend310p",))]
    assert vendors[0].version_info == {"custom_opp_compiler_version": "8.5.0"}


def test_shared_library_entry_is_named_after_its_vendor(top):
    (top / "opt/v/vendors/fast/op_api/lib").mkdir(parents=True)
    vendors, _ = probe_vendors(Root(top), {"ASCEND_CUSTOM_OPP_PATH": "/opt/v/vendors/fast/op_api/lib/"}, None)
    assert [(v.name, v.path, v.exists) for v in vendors] == [("fast", "/opt/v/vendors/fast/op_api/lib/", True)]


@needs_refdata
def test_single_vendor_refdata():
    assert parse_load_priority(_payload("config.ini.single_vendor")) == (("customize",), ())


@pytest.mark.parametrize(
    "text, names, problem",
    [
        ("load_priority=a, b ,c\n", ("a", "b", "c"), None),
        ("load_priority=a,,b", ("a", "b"), None),
        ("\nload_priority=a\n", (), "first line is empty"),
        ("", (), "first line is empty"),
        ("load_priority\n", (), "is not 'load_priority=<vendor>,...'"),
        ("load_priority=a=b\n", (), "is not 'load_priority=<vendor>,...'"),
        ("load_priority=\n", (), "is not 'load_priority=<vendor>,...'"),
        ("load_priority=a\nload_priority=b,a\n", ("a",), "line 2 ('load_priority=b,a') is ignored"),
        ("priority=a\n", ("a",), "key 'priority', not 'load_priority'"),
        ("load_priority= , \n", (), "names no vendor"),
    ],
)
def test_parse_load_priority_reads_the_first_line_like_cann(text, names, problem):
    found, problems = parse_load_priority(text)
    assert found == names
    if problem is None:
        assert problems == ()
    else:
        assert any(problem in p for p in problems), problems
