"""ascenv.checks.kernels: kernels for the SoC, the --soc_version to compile for, compiler vs opp."""

from __future__ import annotations

import dataclasses

import pytest

from ascenv import model
from tests.checks.helpers import TOOLKIT, a2_host, findings_of, replace, severities, shipped_matrix, with_install

A3_CANN = "/usr/local/Ascend/cann-8.5.0"


def a3_host(**install) -> model.Snapshot:
    """Atlas A3 as npu-smi prints it (name "Ascend910", no board info) with CANN 8.5.0 active."""
    cann = model.CannInstall(path=A3_CANN, kind="cann", version="8.5.0", arch="aarch64", **install)
    return replace(
        a2_host(),
        npu__chips=(model.Chip(npu=0, chip=0, name="Ascend910", health="OK", bus_id="0000:9D:00.0"),),
        devices__pci=(model.PciDevice("0000:9d:00.0", "0x19e5", "0xd803"),),
        cann__installs=(cann,),
        cann__active=A3_CANN,
    )


# --- ASC-KERNELS-SOC -----------------------------------------------------------------------------


def test_kernels_present_for_the_910b4():
    snap = with_install(a2_host(), kernels=("ascend910b",))
    assert severities(snap, "ASC-KERNELS-SOC", shipped_matrix()) == ["ok"]


def test_missing_kernels_name_the_package_of_the_release():
    snap = with_install(a2_host(), kernels=("ascend310p",), arch="aarch64")
    (f,) = findings_of(snap, "ASC-KERNELS-SOC", shipped_matrix())
    assert f.severity is model.Severity.ERROR and f.title == "CANN 8.0.0 has no kernels for ascend910b"
    assert f.fix == "./Ascend-cann-kernels-910b_8.0.0_linux-aarch64.run --install"
    assert "holds ascend310p" in f.found and f.evidence == (f"{TOOLKIT}/opp/built-in/op_impl/ai_core/tbe/kernel",)


def test_a3_unit_comes_from_the_pci_id_and_8_5_names_the_ops_package():
    (f,) = findings_of(a3_host(), "ASC-KERNELS-SOC", shipped_matrix())
    assert f.fix == "./Ascend-cann-A3-ops_8.5.0_linux-aarch64.run --install"
    assert severities(a3_host(kernels=("ascend910_93",)), "ASC-KERNELS-SOC", shipped_matrix()) == ["ok"]


def test_inferred_package_name_says_so():
    # A3 kernels before 8.3 are INFERRED from torch_npu's SoC table
    # (github:Ascend/pytorch:torch_npu/csrc/core/npu/NpuVariables.cpp, tags v6.0.rc3-*).
    snap = replace(
        a3_host(), cann__installs=(model.CannInstall(path=A3_CANN, kind="toolkit", version="8.0.0", arch="aarch64"),)
    )
    (f,) = findings_of(snap, "ASC-KERNELS-SOC", shipped_matrix())
    assert f.fix.endswith("# package name inferred") and "Atlas-A3-cann-kernels_8.0.0" in f.fix


@pytest.mark.parametrize(
    "cann, fix",
    [
        # named by the official CANN image of that release (was inferred from a neighbour)
        ("8.1.RC1", "./Atlas-A3-cann-kernels_8.1.RC1_linux-aarch64.run --install"),
        ("8.5.1", "./Ascend-cann-A3-ops_8.5.1_linux-aarch64.run --install"),
        ("9.0.1", "./Ascend-cann-A3-ops_9.0.1_linux-aarch64.run --install"),
        ("9.1.0-beta.3", "./Ascend-cann-A3-ops_9.1.0-beta.3_linux-aarch64.run --install"),
        ("8.5.0.alpha001", "./Atlas-A3-cann-kernels_8.5.0.alpha001_linux-aarch64.run --install"),  # not 8.5.0's name
    ],
)
def test_a3_missing_ops_package_is_named_per_release(cann, fix):
    install = model.CannInstall(path=A3_CANN, kind="cann", version=cann, arch="aarch64")
    (f,) = findings_of(replace(a3_host(), cann__installs=(install,)), "ASC-KERNELS-SOC", shipped_matrix())
    assert f.severity is model.Severity.ERROR and f.fix == fix


def test_listings_that_disagree_on_the_package_say_so():
    matrix = shipped_matrix()
    (listed,) = [p for p in matrix.ops_packages if str(p.cann) == "8.5.1" and p.compute_unit == "ascend910_93"]
    other = dataclasses.replace(listed, package="Atlas-A3-cann-ops")
    disagreeing = dataclasses.replace(matrix, ops_packages=(listed, other))
    install = model.CannInstall(path=A3_CANN, kind="cann", version="8.5.1", arch="aarch64")
    (f,) = findings_of(replace(a3_host(), cann__installs=(install,)), "ASC-KERNELS-SOC", disagreeing)
    assert f.fix == "./Ascend-cann-A3-ops_8.5.1_linux-aarch64.run --install  # package name: the sources disagree"


def test_unknown_release_and_odd_versions_still_report_the_missing_directory():
    for version in ("8.0.T63", None):
        (f,) = findings_of(with_install(a2_host(), version=version, kernels=()), "ASC-KERNELS-SOC", shipped_matrix())
        assert f.severity is model.Severity.ERROR and f.fix.startswith("install the kernels/ops package for ascend910b")
    # a release the data does not list gets the name its neighbours of the same packaging give, marked inferred
    (f,) = findings_of(with_install(a2_host(), version="7.9.9", kernels=()), "ASC-KERNELS-SOC", shipped_matrix())
    assert f.fix == "./Ascend-cann-kernels-910b_7.9.9_linux-aarch64.run --install  # package name inferred"


def a950_host(cann="9.1.0", kernels=(), name="Ascend950PR", subsystem="0x4003") -> model.Snapshot:
    """An Atlas 350 as npu-smi 25.7.rc1 prints it (Name "Ascend950PR", SwanLab#1719), PCI 0xd806."""
    install = model.CannInstall(path=f"/usr/local/Ascend/cann-{cann}", kind="cann", version=cann, arch="aarch64")
    return replace(
        a2_host(),
        npu__chips=(model.Chip(npu=0, chip=0, name=name, health="OK", bus_id="0000:01:00.0"),),
        devices__pci=(model.PciDevice("0000:01:00.0", "0x19e5", "0xd806", "0x19e5", subsystem),),
        cann__installs=(dataclasses.replace(install, kernels=kernels),),
        cann__active=install.path,
    )


@pytest.mark.parametrize(
    "cann, name, fix",
    [
        ("9.1.0", "Ascend950PR", "./Ascend-cann-950-ops_9.1.0_linux-aarch64.run --install"),  # release note
        ("9.1.0", "Ascend950DT", "./Ascend-cann-950-ops_9.1.0_linux-aarch64.run --install"),
        ("9.2.0", "Ascend950PR", "./Ascend-cann-950-ops_9.2.0_linux-aarch64.run --install  # package name inferred"),
        ("9.0.0", "Ascend950PR", "./Ascend-cann-950-ops_9.0.0_linux-aarch64.run --install"),  # conda listing
        ("9.0.1", "Ascend950DT", "./Ascend-cann-950-ops_9.0.1_linux-aarch64.run --install"),  # the official image
    ],
)
def test_a_950_without_its_ops_package_names_it(cann, name, fix):
    (f,) = findings_of(a950_host(cann, name=name), "ASC-KERNELS-SOC", shipped_matrix())
    assert f.severity is model.Severity.ERROR and f.title == f"CANN {cann} has no kernels for ascend950"
    assert "from Ascend-cann-950-ops" in f.expected and f.fix == fix
    assert severities(a950_host(cann, kernels=("ascend950",), name=name), "ASC-KERNELS-SOC", shipped_matrix()) == ["ok"]


def test_the_950_unit_comes_from_the_pci_id_when_npu_smi_gives_no_name():
    (f,) = findings_of(replace(a950_host(), npu__chips=()), "ASC-KERNELS-SOC", shipped_matrix())
    assert f.title == "CANN 9.1.0 has no kernels for ascend950"


def a310b_host(cann: str, chip: str = "310B4", pci: tuple = ()) -> model.Snapshot:
    """An Atlas 200I/500 A2 (310B) with CANN ``cann`` and no ops package: named ``chip`` by
    npu-smi, or (``chip=""``) found only by its PCI devices ``pci``."""
    install = model.CannInstall(path=f"/usr/local/Ascend/cann-{cann}", kind="cann", version=cann, arch="aarch64")
    chips = (model.Chip(npu=0, chip=0, name=chip, health="OK", bus_id="0000:01:00.0"),) if chip else ()
    return replace(a2_host(), npu__chips=chips, devices__pci=pci, cann__installs=(install,), cann__active=install.path)


@pytest.mark.parametrize(
    "cann, fix",
    [
        ("9.1.0", "./Ascend-cann-310b-ops_9.1.0_linux-aarch64.run --install"),
        ("9.0.0", "./Ascend-cann-310b-ops_9.0.0_linux-aarch64.run --install"),  # the conda channel lists it
        ("9.2.0", "./Ascend-cann-310b-ops_9.2.0_linux-aarch64.run --install  # package name inferred"),
        ("8.3.RC1", "./Ascend-cann-kernels-310b_8.3.RC1_linux-aarch64.run --install"),
        ("8.5.0", "./Ascend-cann-310b-ops_8.5.0_linux-aarch64.run --install"),  # the 8.5.0 install guide's table
        ("9.0.0-beta.2", "./Ascend-cann-310b-ops_9.0.0-beta.2_linux-aarch64.run --install"),  # same, 9.0.0.beta2
    ],
)
def test_a_310b_without_its_ops_package_names_it(cann, fix):
    (f,) = findings_of(a310b_host(cann), "ASC-KERNELS-SOC", shipped_matrix())
    assert f.title == f"CANN {cann} has no kernels for ascend310b" and f.fix == fix


def test_no_npu_or_no_matrix_no_kernels_finding():
    cpu_box = replace(a2_host(), npu__chips=(), devices__pci=())
    assert findings_of(cpu_box, "ASC-KERNELS-SOC", shipped_matrix()) == []
    assert findings_of(a2_host(), "ASC-KERNELS-SOC") == []


# --- ASC-KERNELS-TARGET ---------------------------------------------------------------------------------


def test_soc_version_for_atc():
    (f,) = findings_of(a2_host(), "ASC-KERNELS-TARGET", shipped_matrix())
    assert f.severity is model.Severity.INFO and f.fix == "atc ... --soc_version=Ascend910B4"
    assert "compute unit ascend910b" in f.found


def test_cann_without_platform_config_for_the_soc_warns():
    snap = with_install(a2_host(), socs=("Ascend310P3",))
    assert severities(snap, "ASC-KERNELS-TARGET", shipped_matrix()) == ["warn", "info"]
    fits = with_install(a2_host(), socs=("Ascend910B4",))
    assert severities(fits, "ASC-KERNELS-TARGET", shipped_matrix()) == ["info"]


def test_a3_needs_the_board_info():
    (f,) = findings_of(a3_host(), "ASC-KERNELS-TARGET", shipped_matrix())
    assert "unknown" in f.title and f.fix.startswith("npu-smi info -t board -i 0")
    board = model.Board(npu=0, fields={"Chip Name": "Ascend910", "NPU Name": "9392"})
    (f,) = findings_of(replace(a3_host(), npu__boards=(board,)), "ASC-KERNELS-TARGET", shipped_matrix())
    assert f.fix == "atc ... --soc_version=Ascend910_9392" and "ascend910_93" in f.found


# --- ASC-KERNELS-ABI ----------------------------------------------------------------------------------

# CANN 8.1.RC1 compiler/version.info (github:leideng/CANN-8.1.RC1@551ed27c:.../compiler/version.info):
# required_opp_abi_version=">=6.3, <=7.7"; its opp/version.info Version=7.7.0.1.238.
REQUIRED_81 = ">=6.3, <=7.7"


@pytest.mark.parametrize(
    "opp, severity",
    [
        ("7.7.0.1.238", "ok"),
        ("6.3.0.1.100", "ok"),  # lower bound inclusive
        ("8.2.0.0.201", "error"),  # 8.2.RC1's operators under an 8.1.RC1 compiler
        ("6.2.9", "error"),
        ("garbage", "warn"),
    ],
)
def test_opp_against_the_compilers_abi_range(opp, severity):
    snap = with_install(a2_host(), required_opp_abi_version=REQUIRED_81, opp_version=opp)
    assert severities(snap, "ASC-KERNELS-ABI") == [severity]


def test_no_range_no_finding():
    assert findings_of(with_install(a2_host(), opp_version="7.7.0.1.238"), "ASC-KERNELS-ABI") == []


def test_every_check_survives_an_install_with_nothing_readable():
    bare = replace(
        a2_host(), cann__installs=(dataclasses.replace(a2_host().cann.installs[0], version=None, arch=None),)
    )
    for check_id in ("ASC-KERNELS-SOC", "ASC-KERNELS-TARGET", "ASC-CANN-LATEST", "ASC-KERNELS-ABI"):
        findings_of(bare, check_id, shipped_matrix())


@pytest.mark.parametrize(
    "cann, basis",
    [
        # none of these releases has a table or listing naming the 310B package: the error says
        # which release's naming the name follows and that nothing was saved for this one
        ("9.2.0", "the naming of compat/cann.toml's CANN 9.1.0 row (first source https://www.hiascend.com/"),
        ("9.1.1", "compat/cann.toml's CANN 9.1.1 row (Chips INFERRED to be those of 9.1.0)"),
        ("8.0.0", "the naming of compat/cann.toml's CANN 7.0.0 row (first source https://github.com/Ascend/docs/"),
    ],
)
def test_an_inferred_310b_package_name_says_where_it_comes_from(cann, basis):
    (f,) = findings_of(a310b_host(cann, "310B1"), "ASC-KERNELS-SOC", shipped_matrix())
    assert f.fix.endswith("# package name inferred")
    assert f"(name inferred from {basis}" in f.expected
    assert f.expected.endswith(f"; no install guide table or package listing saved for CANN {cann})")


def test_a_documented_package_name_carries_no_inference_note():
    (f,) = findings_of(a950_host("9.1.0"), "ASC-KERNELS-SOC", shipped_matrix())
    assert f.expected.endswith("from Ascend-cann-950-ops") and "inferred" not in f.expected


@pytest.mark.parametrize("device", ["0xd105", "0xd107"])
def test_the_310b_unit_comes_from_the_pci_id_when_npu_smi_gives_no_name(device):
    # an Atlas 200I A2 module in EP mode (ascend-deployer 26.0.0 card_map: 0xd105/0xd107 → A200i-a2 → a310b)
    snap = a310b_host("8.5.0", chip="", pci=(model.PciDevice("0000:01:00.0", "0x19e5", device, "0x19e5", None),))
    (f,) = findings_of(snap, "ASC-KERNELS-SOC", shipped_matrix())
    assert f.title == "CANN 8.5.0 has no kernels for ascend310b"
    assert f.fix == "./Ascend-cann-310b-ops_8.5.0_linux-aarch64.run --install"
