"""End to end on the fixture machines: probe (collect) -> lock -> change one layer -> lock --check."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ascenv import errors
from ascenv.probe.fs import Root
from ascenv.probe.snapshot import collect
from tests.cli_helpers import run_cli
from tests.fixture_hosts import HOST_NAMES, build_host


def ascenv(host, tmp_path, *argv):
    return run_cli([*argv, "--root", str(host.root), "--python", sys.executable], dict(host.environ), tmp_path)


def host_with_site(name, tmp_path, torch_npu="2.8.0"):
    """Fixture machine ``name``, its target Python seeing a torch_npu distribution (PYTHONPATH)."""
    host = build_host(name, tmp_path)
    site = tmp_path / "site"
    set_torch_npu(site, torch_npu)
    host.environ["PYTHONPATH"] = f"{site}:{host.environ.get('PYTHONPATH', '')}"
    return host


def set_torch_npu(site: Path, version: str) -> None:
    for old in site.glob("torch_npu-*.dist-info"):
        for f in old.iterdir():
            f.unlink()
        old.rmdir()
    info = site / f"torch_npu-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch_npu\nVersion: {version}\n")
    (info / "RECORD").write_text(f"torch_npu-{version}.dist-info/METADATA,,\n")


@pytest.fixture(autouse=True)
def _collect_is_wired(tmp_path_factory):
    host = build_host("a2-cann800", tmp_path_factory.mktemp("probe"))
    snap = collect(Root(host.root), host.environ)
    if not snap.cann.installs or not snap.npu.chips:
        pytest.skip("ascenv.probe.snapshot.collect does not fill CANN and npu-smi yet")


def check(host, tmp_path, *extra):
    code, out, err = ascenv(host, tmp_path, "lock", "--check", "--format", "json", *extra)
    return code, (json.loads(out) if out else None), err


@pytest.mark.parametrize("name", HOST_NAMES)
def test_lock_then_check_is_in_sync(name, tmp_path):
    host = host_with_site(name, tmp_path)
    code, _, err = ascenv(host, tmp_path, "lock")
    assert code == 0, err
    code, report, err = check(host, tmp_path)
    assert code == 0 and report["in_sync"] is True, (err, report)


def test_driver_upgrade_is_driver_drift(tmp_path):
    host = host_with_site("a2-cann800", tmp_path)
    assert ascenv(host, tmp_path, "lock")[0] == 0
    version_info = host.root / "usr/local/Ascend/driver/version.info"
    version_info.write_text(version_info.read_text().replace("Version=25.0.rc1.1", "Version=25.2.0"))
    code, report, _ = check(host, tmp_path)
    assert code == errors.EXIT_FINDINGS
    assert {c["layer"] for c in report["changes"]} == {"driver"}
    assert [(c["old"], c["new"]) for c in report["changes"]] == [("25.0.rc1.1", "25.2.0")]


def test_cann_change_is_cann_drift(tmp_path):
    host = host_with_site("a2-cann800", tmp_path)
    assert ascenv(host, tmp_path, "lock")[0] == 0
    info = host.root / "usr/local/Ascend/ascend-toolkit/8.0.0/aarch64-linux/ascend_toolkit_install.info"
    info.write_text(
        info.read_text().replace("innerversion=V100R001C20SPC001B251", "innerversion=V100R001C20SPC002B300")
    )
    code, report, _ = check(host, tmp_path)
    assert code == 1
    assert {c["layer"] for c in report["changes"]} == {"cann"}
    assert all(c["severity"] == "error" for c in report["changes"])


def test_torch_npu_change_is_package_drift(tmp_path):
    host = host_with_site("a2-cann800", tmp_path)
    assert ascenv(host, tmp_path, "lock")[0] == 0
    set_torch_npu(tmp_path / "site", "2.9.0")
    code, report, _ = check(host, tmp_path)
    assert code == 1
    assert [(c["layer"], c["item"], c["old"], c["new"]) for c in report["changes"] if c["item"] == "torch-npu"] == [
        ("packages", "torch-npu", "2.8.0", "2.9.0")
    ]
    assert {c["layer"] for c in report["changes"]} == {"packages"}


def test_vendor_change_is_vendor_drift(tmp_path):
    host = host_with_site("a2-cann800", tmp_path)
    vendors = host.root / "usr/local/Ascend/ascend-toolkit/8.0.0/opp/vendors"
    (vendors / "customize/op_impl/ai_core/tbe/kernel/ascend910b").mkdir(parents=True)
    (vendors / "config.ini").write_text("load_priority=customize\n")
    (vendors / "customize/version.info").write_text("custom_opp_compiler_version=7.6.0.1.220\n")
    assert ascenv(host, tmp_path, "lock")[0] == 0
    (vendors / "customize/version.info").write_text("custom_opp_compiler_version=7.7.0.1.231\n")
    code, report, _ = check(host, tmp_path)
    assert code == 1
    assert [(c["layer"], c["old"], c["new"]) for c in report["changes"]] == [("vendors", "7.6.0.1.220", "7.7.0.1.231")]


def test_a3_lock_on_an_x86_310p_host_is_another_platform(tmp_path):
    a3 = host_with_site("a3-cann850", tmp_path / "a3")
    assert ascenv(a3, tmp_path, "lock", "-o", "a3.lock")[0] == 0
    p310 = host_with_site("310p-duo", tmp_path / "p310")
    # this copy of the Duo host runs x86_64 CANN (its install.info says so, under x86_64-linux)
    toolkit = p310.root / "usr/local/Ascend/ascend-toolkit/8.1.RC1"
    info = toolkit / "aarch64-linux/ascend_toolkit_install.info"
    (toolkit / "x86_64-linux").mkdir()
    (toolkit / "x86_64-linux/ascend_toolkit_install.info").write_text(info.read_text().replace("aarch64", "x86_64"))
    info.unlink()
    code, out, err = ascenv(p310, tmp_path, "lock", "--check", "a3.lock")
    assert code == errors.EXIT_USAGE and out == ""
    assert (
        "a3.lock is for another platform (arch aarch64 vs x86_64; "
        "SoC family ascend910_93 (Ascend910) vs ascend310p (310P3))" in err
    )
