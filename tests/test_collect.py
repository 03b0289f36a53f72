"""collect() on the six fixture machines: every probe together, values read from the captures."""

from __future__ import annotations

import json
import sys

import pytest

from ascenv import model
from ascenv.probe.fs import Root
from ascenv.probe.snapshot import collect
from ascenv.snapshot_io import snapshot_from_json, snapshot_to_json
from tests.fixture_hosts import HOST_NAMES, build_host


def snap_of(name: str, tmp_path) -> model.Snapshot:
    host = build_host(name, tmp_path)
    return collect(Root(host.root), dict(host.environ, HOME=host.home or "/root"), python=sys.executable)


def test_a2_training_server_legacy_cann(tmp_path):
    snap = snap_of("a2-cann800", tmp_path)
    # npu-smi table of the Atlas 800I A2 blog capture: 8 x 910B4, 32768 MB HBM, driver 25.0.rc1.1
    assert [c.name for c in snap.npu.chips] == ["910B4"] * 8
    assert {c.hbm_total_mb for c in snap.npu.chips} == {32768}
    assert snap.npu.driver_version == snap.driver.version == "25.0.rc1.1"
    assert snap.firmware.version == "7.7.0.1.231"
    assert [(i.version, i.kind) for i in snap.cann.installs] == [("8.0.0", "toolkit")]
    assert snap.cann.active == "/usr/local/Ascend/ascend-toolkit/8.0.0"
    assert len(snap.devices.pci) == 8 and snap.devices.in_container is not True
    assert snap.driver.loaded is True
    assert snap.errors == ()  # no probe crashed


def test_a3_host_on_the_85_layout(tmp_path):
    snap = snap_of("a3-cann850", tmp_path)
    assert len(snap.npu.chips) == 16 and {c.name for c in snap.npu.chips} == {"Ascend910"}
    assert {c.chip for c in snap.npu.chips} == {0, 1}
    (install,) = snap.cann.installs
    assert (install.version, install.kind, install.path) == ("8.5.0", "cann", "/usr/local/Ascend/cann-8.5.0")
    assert snap.cann.active == install.path
    assert "/usr/local/Ascend/cann" in install.links


def test_310p_duo_two_chips_on_one_npu(tmp_path):
    snap = snap_of("310p-duo", tmp_path)
    assert [(c.npu, c.chip, c.name) for c in snap.npu.chips] == [(6, 0, "310P3"), (6, 1, "310P3")]
    assert snap.cann.installs[0].version == "8.1.RC1"


def test_container_without_devices(tmp_path):
    snap = snap_of("container-no-devices", tmp_path)
    assert snap.devices.in_container is True
    assert not [n for n in snap.devices.nodes if n.exists]
    assert snap.npu.chips == () and snap.npu.errors[0].code == "-8020"
    # the toolkit is readable although npu-smi failed (vllm-ascend#632)
    assert snap.cann.installs[0].version == "8.0.0"


def test_two_canns_and_a_dangling_latest(tmp_path):
    snap = snap_of("two-canns-dangling-latest", tmp_path)
    assert [i.version for i in snap.cann.installs] == ["8.1.RC1", "8.2.RC1"]
    assert snap.cann.active is None
    (latest,) = snap.cann.links
    assert latest.dangling and latest.path == "/usr/local/Ascend/ascend-toolkit/latest"


def test_non_root_home_install(tmp_path):
    snap = snap_of("nonroot-home", tmp_path)
    assert snap.cann.installs[0].path == "/home/dev/Ascend/ascend-toolkit/8.1.RC1"
    assert snap.npu.errors[0].kind == "not-found" and snap.npu.chips == ()


def test_target_python_is_read_without_importing_torch(tmp_path):
    snap = snap_of("a2-cann800", tmp_path)
    assert snap.python.executable and snap.python.version == ".".join(map(str, sys.version_info[:3]))
    assert snap.python.packages["packaging"]  # a dependency of ascenv, installed in this interpreter


@pytest.mark.parametrize("name", HOST_NAMES)
def test_snapshot_saved_to_json_loads_back_equal(name, tmp_path):
    snap = snap_of(name, tmp_path)
    text = json.dumps(snapshot_to_json(snap))
    assert snapshot_from_json(json.loads(text), "saved.json") == snap


def test_one_failing_probe_does_not_abort_the_others(tmp_path, monkeypatch):
    import ascenv.probe.snapshot as probe

    def broken(*args, **kwargs):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(probe, "probe_cann", broken)
    snap = snap_of("a2-cann800", tmp_path)
    assert len(snap.npu.chips) == 8 and snap.driver.version == "25.0.rc1.1"
    (error,) = snap.errors
    assert error.probe == "cann" and "simulated bug" in error.message


@pytest.mark.parametrize("kind", ["fifo", "socket"])
def test_special_files_met_by_the_probe_are_listed_as_errors(tmp_path, kind):
    from tests.probe.test_fs import plant

    host = build_host("a2-cann800", tmp_path)
    (host.root / "etc/os-release").unlink(missing_ok=True)
    plant(host.root, "/etc/os-release", kind)
    snap = collect(Root(host.root), dict(host.environ, HOME=host.home or "/root"), python=sys.executable)
    (special,) = [e for e in snap.errors if e.probe == "files"]
    assert special.kind == "not-a-file" and special.source == "/etc/os-release"
    assert special.message.startswith("/etc/os-release is a ") and special.message.endswith(": read as absent")
