"""The fixture machines: trees where the machine keeps its files, and a fake npu-smi that prints
the recorded captures (values read by eye from the corpus files)."""

from __future__ import annotations

import json
import os
import sys

import pytest

from ascenv import proc
from tests.cli_helpers import run_cli
from tests.fixture_hosts import HOST_NAMES, build_host


def npu_smi(host, *args):
    return proc.run([str(host.bin / "npu-smi"), *args], timeout=10, env=host.environ)


def test_six_hosts():
    assert HOST_NAMES == (
        "a2-cann800",
        "a3-cann850",
        "310p-duo",
        "container-no-devices",
        "two-canns-dangling-latest",
        "nonroot-home",
        "vllm-ascend-v0.12.0rc1",
        "vllm-ascend-v0.11.0",
    )


@pytest.mark.parametrize("name", HOST_NAMES)
def test_path_starts_with_the_fake_bin(name, tmp_path):
    host = build_host(name, tmp_path)
    assert host.name == name
    assert host.environ["PATH"].split(":")[0] == str(host.bin)
    assert host.root.is_dir() and not (host.root / "usr/local/bin/npu-smi").exists()


def test_a2_npu_smi_prints_the_captures(tmp_path):
    host = build_host("a2-cann800", tmp_path)
    info = npu_smi(host, "info")
    assert info.ok
    assert info.stdout.startswith("+----")
    assert "| npu-smi 25.0.rc1.1               Version: 25.0.rc1.1" in info.stdout
    assert info.stdout.count("910B4") == 8
    assert "| 7     910B4               | OK            | 81.6        37" in info.stdout
    m = npu_smi(host, "info", "-m")
    assert m.ok and m.stdout.count("Ascend 910B4") == 8 and m.stdout.count("Mcu") == 8
    assert host.captures["info -m"] == "other_cmds/npu-smi_info_-m_910b4_atlas800IA2_blog.txt"


def test_a2_unknown_arguments_and_bad_ids(tmp_path):
    host = build_host("a2-cann800", tmp_path)
    unknown = npu_smi(host, "frobnicate")
    assert unknown.status == proc.EXIT and unknown.returncode == 1
    assert unknown.stdout.startswith("Command or option is not found.\nUsage: npu-smi info")
    bad = npu_smi(host, "info", "-t", "board", "-i", "9")
    assert bad.returncode == 1 and bad.stdout.startswith("Invalid card id.\nError parameter of -i\n")
    unrecorded = npu_smi(host, "info", "-t", "board", "-i", "3")
    assert unrecorded.returncode == 1 and "no recorded capture" in unrecorded.stderr


def test_two_canns_host_has_a_board_for_npu_0(tmp_path):
    board = npu_smi(build_host("two-canns-dangling-latest", tmp_path), "info", "-t", "board", "-i", "0")
    assert board.ok
    assert "Software Version     : 24.1.0.b062" in board.stdout
    assert "PCI Device ID        : 0xD802" in board.stdout


def test_container_npu_smi_fails_with_8020(tmp_path):
    host = build_host("container-no-devices", tmp_path)
    for args in (["info"], ["info", "-m"], ["info", "-t", "board", "-i", "0"]):
        result = npu_smi(host, *args)
        assert result.returncode == 1
        assert result.stdout == (
            "DrvMngGetConsoleLogLevel failed. (g_conLogLevel=3)\n"
            "dcmi model initialized failed, because the device is used. ret is -8020\n"
        )
    assert (host.root / ".dockerenv").is_file()
    assert not (host.root / "dev").exists()
    assert not (host.root / "sys").exists()
    assert not (host.root / "usr/local/Ascend/driver").exists()


def test_nonroot_host_has_no_npu_smi(tmp_path):
    host = build_host("nonroot-home", tmp_path)
    assert list(host.bin.iterdir()) == []
    assert proc.which("npu-smi", host.environ["PATH"].split(":")[0]) is None
    assert host.home == "/home/dev"
    assert host.environ["ASCEND_HOME_PATH"] == "/home/dev/Ascend/ascend-toolkit/latest"
    info = (host.root / "home/dev/Ascend/ascend-toolkit/8.1.RC1/x86_64-linux/ascend_toolkit_install.info").read_text()
    assert "path=/home/dev/Ascend/ascend-toolkit/8.1.RC1/x86_64-linux\n" in info
    assert "innerversion=V100R001C21B081\n" in info


@pytest.mark.parametrize(
    ("name", "device", "bus_ids", "nodes"),
    [
        (
            "a2-cann800",
            "0xd802",
            [
                "0000:01:00.0",
                "0000:02:00.0",
                "0000:41:00.0",
                "0000:42:00.0",
                "0000:81:00.0",
                "0000:82:00.0",
                "0000:c1:00.0",
                "0000:c2:00.0",
            ],
            8,
        ),
        ("a3-cann850", "0xd803", None, 16),
        ("310p-duo", "0xd500", ["0000:83:00.0"], 2),
    ],
)
def test_npu_hosts_have_pci_functions_and_device_nodes(name, device, bus_ids, nodes, tmp_path):
    host = build_host(name, tmp_path)
    pci = host.root / "sys/bus/pci/devices"
    found = sorted(os.listdir(pci))
    if bus_ids:
        assert found == bus_ids
    else:  # A3: 16 chips, first 0000:9D:00.0 and last 0000:83:00.0 in the capture
        assert len(found) == 16 and "0000:9d:00.0" in found and "0000:83:00.0" in found
    for address in found:
        assert (pci / address / "vendor").read_text() == "0x19e5\n"
        assert (pci / address / "device").read_text() == device + "\n"
        assert (pci / address / "subsystem_vendor").read_text() == "0x19e5\n"
    assert sorted(p.name for p in (host.root / "dev").iterdir()) == sorted(
        [f"davinci{i}" for i in range(nodes)] + ["davinci_manager", "devmm_svm", "hisi_hdc"]
    )


def test_files_are_the_captures(tmp_path):
    host = build_host("a2-cann800", tmp_path)
    root = host.root
    assert (
        (root / "usr/local/Ascend/driver/version.info")
        .read_text()
        .startswith("Version=25.0.rc1.1\nascendhal_version=7.35.23\n")
    )
    assert (root / "usr/local/Ascend/firmware/version.info").read_text() == (
        "Version=7.7.0.1.231\nfirmware_version=1.0\npackage_version=25.0.rc1.1\n"
        "compatible_version_drv=[23.0.0,23.0.0.],[24.0,24.0.],[24.1,24.1.],[25.0,25.0.]\n"
    )
    assert (root / "etc/ascend_install.info").read_text().splitlines()[2] == "Driver_Install_Type=full"
    assert os.readlink(root / "usr/local/Ascend/ascend-toolkit/latest") == "8.0.0"
    assert (
        (root / "usr/local/Ascend/ascend-toolkit/set_env.sh")
        .read_text()
        .startswith("export LD_LIBRARY_PATH=/usr/local/Ascend/driver/lib64:")
    )
    assert host.environ["ASCEND_OPP_PATH"] == "/usr/local/Ascend/ascend-toolkit/latest/opp"


# --- the Atlas 350 (Ascend 950PR), constructed: doctor end to end --------------------------------------


def test_doctor_on_an_atlas_350_without_its_ops_package_names_the_package(tmp_path):
    host = build_host("atlas350-cann910", tmp_path)
    argv = ["doctor", "--root", str(host.root), "--python", sys.executable, "--format", "json"]
    code, out, err = run_cli(argv, dict(host.environ, HOME="/root"))
    findings = {(f["id"], f["severity"]): f for f in json.loads(out)["findings"]}
    errors = sorted(key[0] for key in findings if key[1] == "error")
    assert code == 1 and errors == ["ASC-KERNELS-SOC"], (errors, err)
    missing = findings[("ASC-KERNELS-SOC", "error")]
    assert missing["title"] == "CANN 9.1.0 has no kernels for ascend950"
    assert missing["fix"] == "./Ascend-cann-950-ops_9.1.0_linux-aarch64.run --install"
    # its own HDK line: 25.7.RC1 is the Atlas 350 driver of CANN 9.1.0, never "install HDK 26.0.RC1"
    driver = findings[("ASC-CANN-DRIVER", "ok")]
    assert driver["title"].startswith("CANN 9.1.0 with driver 25.7.rc1: ")
    assert not any("26.0.RC1" in f.get("fix", "") for f in findings.values())


# --- the Atlas 200I DK A2 (Ascend 310B4): doctor end to end ----------------------------------------------


def test_doctor_on_a_310b_board_without_its_ops_package_names_the_package_from_the_install_guide(tmp_path):
    host = build_host("atlas200i-dk-a2-cann850", tmp_path)
    argv = ["doctor", "--root", str(host.root), "--python", sys.executable, "--format", "json"]
    code, out, err = run_cli(argv, dict(host.environ, HOME="/root"))
    findings = {(f["id"], f["severity"]): f for f in json.loads(out)["findings"]}
    assert code == 1, err
    # the other error: CANN 8.5.0 asks for a newer driver than the board's 23.0.rc3
    assert sorted(key[0] for key in findings if key[1] == "error") == ["ASC-CANN-DRIVER", "ASC-KERNELS-SOC"]
    missing = findings[("ASC-KERNELS-SOC", "error")]
    assert missing["title"] == "CANN 8.5.0 has no kernels for ascend310b"
    # documented by the 8.5.0 install guide's table: no "inferred" mark
    assert missing["fix"] == "./Ascend-cann-310b-ops_8.5.0_linux-aarch64.run --install"
    assert missing["expected"].endswith("/kernel/ascend310b from Ascend-cann-310b-ops")
    target = findings[("ASC-KERNELS-TARGET", "info")]
    assert target["title"] == "compile for --soc_version=Ascend310B4"
