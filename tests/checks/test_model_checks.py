"""Each check: a snapshot that triggers it and one that does not."""

from __future__ import annotations

import pytest

from ascenv import model
from ascenv.checks import REGISTRY, load_checks
from checks.helpers import TOOLKIT, a2_host, findings_of, replace, severities

OTHER = "/usr/local/Ascend/ascend-toolkit/8.1.RC1"


def test_healthy_host_has_no_error_or_warning():
    from ascenv.checks import run_checks

    bad = [f for f in run_checks(a2_host()) if f.severity in (model.Severity.ERROR, model.Severity.WARN)]
    assert bad == []


def test_ids_are_unique_and_explained():
    load_checks()
    for info in REGISTRY.values():
        assert info.id.startswith("ASC-") and info.explain and info.title


def test_npu_smi_missing_on_cpu_host_is_info_not_error():
    snap = model.Snapshot(
        npu=model.NpuInfo(errors=(model.ProbeError("npu-smi", "not-found", "npu-smi is not on PATH"),))
    )
    assert severities(snap, "ASC-NPU-SMI") == ["info"]


def test_npu_smi_missing_in_container_with_driver_gives_mount_flags():
    snap = a2_host(
        npu=model.NpuInfo(errors=(model.ProbeError("npu-smi", "not-found", "npu-smi is not on PATH"),)),
        devices__in_container=True,
    )
    (f,) = findings_of(snap, "ASC-NPU-SMI")
    assert f.severity is model.Severity.WARN and "-v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi" in f.fix


def test_npu_smi_device_busy_is_error_with_meaning():
    err = model.ProbeError(
        "npu-smi",
        "device-busy",
        "dcmi model initialized failed, because the device is used. ret is -8020",
        code="-8020",
        meaning="device used by another process",
    )
    (f,) = findings_of(a2_host(npu=model.NpuInfo(errors=(err,))), "ASC-NPU-SMI")
    assert f.severity is model.Severity.ERROR and "-8020" in f.title and "another process" in f.fix


def test_chip_health_alarm_is_error_warning_is_warn():
    chips = (model.Chip(0, 0, "310B4", "Alarm", None), model.Chip(1, 0, "910A", "Warning", None))
    snap = a2_host(npu__chips=chips)
    assert severities(snap, "ASC-NPU-HEALTH") == ["error", "warn"]
    assert severities(a2_host(), "ASC-NPU-HEALTH") == []


def test_device_nodes_missing_in_container_lists_device_flags():
    snap = a2_host(devices__nodes=(model.DeviceNode("/dev/davinci0", True, True),), devices__in_container=True)
    (f,) = findings_of(snap, "ASC-DEV-NODES")
    assert f.severity is model.Severity.ERROR
    assert "--device /dev/davinci_manager --device /dev/devmm_svm --device /dev/hisi_hdc" in f.fix


def test_toolkit_container_on_a_cpu_host_needs_no_device_nodes():
    not_found = model.ProbeError("npu-smi", "not-found", "npu-smi: command not found")
    cpu_container = model.Snapshot(devices=model.Devices(in_container=True), npu=model.NpuInfo(errors=(not_found,)))
    assert severities(cpu_container, "ASC-DEV-NODES") == []
    occupied = model.ProbeError(
        "npu-smi",
        "device-busy",
        "dcmi model initialized failed, because the device is used. ret is -8020",
        code="-8020",
    )
    mounted = replace(cpu_container, npu__errors=(occupied,))
    assert severities(mounted, "ASC-DEV-NODES") == ["error"]


def test_device_nodes_not_accessible():
    nodes = tuple(
        model.DeviceNode(p, True, p != "/dev/davinci0")
        for p in ("/dev/davinci0", "/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc")
    )
    (f,) = findings_of(a2_host(devices__nodes=nodes), "ASC-DEV-NODES")
    assert f.severity is model.Severity.ERROR and "HwHiAiUser" in f.fix and "/dev/davinci0" in f.found


def test_driver_installed_not_loaded_and_missing():
    assert severities(a2_host(driver__loaded=False), "ASC-DRIVER-LOADED") == ["error"]
    assert severities(a2_host(driver=model.DriverInfo()), "ASC-DRIVER-LOADED") == ["error"]
    assert severities(a2_host(), "ASC-DRIVER-LOADED") == []


def test_no_cann_on_npu_host_is_error():
    snap = a2_host(cann=model.CannInfo())
    assert severities(snap, "ASC-CANN-FOUND") == ["error"]
    assert severities(model.Snapshot(), "ASC-CANN-FOUND") == ["info"]


def test_dangling_latest_is_error_with_relink_fix():
    link = model.Link("/usr/local/Ascend/ascend-toolkit/latest", "8.2.RC1", None, True)
    (f,) = findings_of(a2_host(cann__links=(link,)), "ASC-CANN-LINK")
    assert f.severity is model.Severity.ERROR and f.fix.startswith(f"ln -sfn {TOOLKIT} ")


def test_dangling_link_is_relinked_only_to_an_install_beside_it():
    cann85 = model.CannInstall(path="/usr/local/Ascend/cann-8.5.0", kind="cann")
    toolkit_link = model.Link("/usr/local/Ascend/ascend-toolkit/latest", "8.2.RC1", None, True)
    snap = a2_host(cann__installs=(cann85,), cann__links=(toolkit_link,))
    (f,) = findings_of(snap, "ASC-CANN-LINK")
    assert f.fix.startswith("rm /usr/local/Ascend/ascend-toolkit/latest ")
    cann_link = model.Link("/usr/local/Ascend/cann", "cann-8.5.1", None, True)
    (f,) = findings_of(replace(snap, cann__links=(cann_link,)), "ASC-CANN-LINK")
    assert f.fix.startswith("ln -sfn /usr/local/Ascend/cann-8.5.0 /usr/local/Ascend/cann ")


def test_not_sourced_prints_exact_source_line():
    snap = a2_host(cann__active=None, cann__active_reason="")
    (f,) = findings_of(snap, "ASC-ENV-SOURCED")
    assert f.severity is model.Severity.ERROR
    assert f.fix == "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
    assert f.title == "CANN is installed but set_env.sh is not sourced"


def test_variable_leading_nowhere_is_named_not_called_unset():
    reason = "ASCEND_HOME_PATH=/opt/cann does not lead to a CANN installation"
    (f,) = findings_of(a2_host(cann__active=None, cann__active_reason=reason), "ASC-ENV-SOURCED")
    assert f.severity is model.Severity.ERROR and f.found == reason
    assert f.fix == "source /usr/local/Ascend/ascend-toolkit/set_env.sh"


@pytest.mark.parametrize(
    "install, fix",
    [
        # legacy layout, no `latest` leading here: ascend-toolkit/set_env.sh would activate `latest`
        (
            model.CannInstall(path="/usr/local/Ascend/ascend-toolkit/8.2.RC1", kind="toolkit"),
            "ln -sfn /usr/local/Ascend/ascend-toolkit/8.2.RC1 /usr/local/Ascend/ascend-toolkit/latest"
            " && source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        ),
        # 8.5 layout: the script is inside the version directory
        (
            model.CannInstall(path="/usr/local/Ascend/cann-8.5.0", kind="cann"),
            "source /usr/local/Ascend/cann-8.5.0/set_env.sh",
        ),
    ],
)
def test_not_sourced_without_a_known_script(install, fix):
    snap = a2_host(cann=model.CannInfo(installs=(install,), active=None, active_reason=""))
    (f,) = findings_of(snap, "ASC-ENV-SOURCED")
    assert f.fix == fix


def test_paths_into_two_canns_and_duplicates():
    entries = (
        model.PathEntry(f"{TOOLKIT}/lib64", True, False, TOOLKIT),
        model.PathEntry(f"{OTHER}/lib64", True, False, OTHER),
        model.PathEntry(f"{TOOLKIT}/lib64", True, True, TOOLKIT),
    )
    snap = a2_host(env=model.EnvInfo(paths={"LD_LIBRARY_PATH": entries}))
    assert severities(snap, "ASC-ENV-PATHS") == ["error", "warn"]
    clean = a2_host(env=model.EnvInfo(paths={"LD_LIBRARY_PATH": entries[:1]}))
    assert severities(clean, "ASC-ENV-PATHS") == []
    outside_cann = (model.PathEntry("/root/.cargo/bin", True, False), model.PathEntry("/root/.cargo/bin", True, True))
    assert severities(a2_host(env=model.EnvInfo(paths={"PATH": outside_cann})), "ASC-ENV-PATHS") == []


def test_custom_opp_path_trailing_colon_and_missing_dir():
    entries = (model.PathEntry("/opt/vendors/mine", False), model.PathEntry("", None))
    snap = a2_host(
        env=model.EnvInfo(
            variables={"ASCEND_CUSTOM_OPP_PATH": "/opt/vendors/mine:"}, paths={"ASCEND_CUSTOM_OPP_PATH": entries}
        )
    )
    found = findings_of(snap, "ASC-ENV-CUSTOM-OPP")
    assert [f.severity.value for f in found] == ["error", "warn"]  # errors first
    assert found[1].fix == "export ASCEND_CUSTOM_OPP_PATH=/opt/vendors/mine"


def test_vendor_config_problem_and_missing_vendor():
    snap = a2_host(
        vendor_config=model.VendorConfig(
            path="/x/vendors/config.ini", load_priority=("customize",), problems=("first line is empty",)
        ),
        vendors=(model.Vendor("gone", "/x/vendors/gone", "config.ini", 0, exists=False),),
    )
    assert severities(snap, "ASC-VENDOR-CONFIG") == ["error"]
    assert severities(snap, "ASC-VENDOR-PRESENT") == ["error"]


def test_duplicate_dist_info():
    dists = (
        model.Distribution("torch_npu", "2.1.0.post10", "/a"),
        model.Distribution("torch-npu", "2.1.0.post8", "/b"),
    )
    snap = a2_host(python__distributions=dists)
    (f,) = findings_of(snap, "ASC-PY-DUPLICATE")
    assert "2.1.0.post10 in /a" in f.found and "2.1.0.post8 in /b" in f.found


def test_same_release_twice_in_one_directory_is_not_a_duplicate():
    # /usr/lib/python3/dist-packages on Debian 12: cryptography-38.0.4.dist-info + cryptography.egg-info
    dists = (model.Distribution("cryptography", "38.0.4", "/usr/lib/python3/dist-packages"),) * 2
    assert findings_of(a2_host(python__distributions=dists), "ASC-PY-DUPLICATE") == []


def test_cuda_torch_and_torch_without_npu():
    dists = (
        model.Distribution("torch", "2.1.0+cu121", "/s"),
        model.Distribution("nvidia-cublas-cu12", "12.1.3.1", "/s"),
    )
    snap = a2_host(python__distributions=dists, host=model.HostInfo(arch="x86_64"))
    found = findings_of(snap, "ASC-TORCH-PLUGIN")
    assert [f.severity.value for f in found] == ["error", "warn"]
    assert "torch==2.1.0+cpu" in found[0].expected and "nvidia-cublas-cu12" in found[0].fix


def test_python_probe_error_is_reported():
    snap = a2_host(python=model.PythonInfo(errors=(model.ProbeError("python", "not-found", "python3 is not on PATH"),)))
    assert severities(snap, "ASC-PY-PROBE") == ["warn"]


def test_replace_helper_changes_only_what_it_names():
    assert replace(a2_host(), driver__loaded=False).driver.version == "25.0.rc1.1"


def test_npu_smi_without_a_whole_process_table_says_processes_are_unknown():
    from ascenv.probe.npu_smi import parse_info
    from tests.conftest import CORPUS, load_capture

    lines = load_capture(CORPUS / "npu_smi" / "910b4-1_25.2.2_2npu_VLLMWorker_TP_vllm-ascend-issue5606.txt")
    lines = lines.splitlines(keepends=True)
    header = next(i for i, line in enumerate(lines) if "Process id" in line)
    cut = parse_info("".join(lines[: header - 1]))  # the chips, then the capture stops
    found = {(f.severity, f.title, f.found) for f in findings_of(a2_host(npu=cut), "ASC-NPU-SMI")}
    assert found == {
        (model.Severity.OK, "npu-smi lists 2 chips", ""),
        (
            model.Severity.INFO,
            "processes on the NPUs unknown",
            "the output has no process table (cut, or npu-smi answered only in part)",
        ),
    }
    whole = parse_info("".join(lines))
    assert severities(a2_host(npu=whole), "ASC-NPU-SMI") == ["ok"]
