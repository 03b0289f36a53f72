"""The compatibility matrix against the facts of an audit of primary sources (2026-12-01).

Each fact the matrix got wrong has its own test asserting the verdict its source gives; the facts
it got right are regression rows of the tables below. The number in each row is the fact's number
in that audit; the URL or repository path in the test names its source.
"""

from __future__ import annotations

import pytest

from ascenv import compat
from ascenv.compat import DriverFit, Status, TorchNpuFitGrade, TorchPin
from ascenv.model import Distribution
from tests.checks.helpers import a2_host, findings_of, shipped_matrix, with_install, with_packages

MI26 = "https://gitcode.com/Ascend/release-management/blob/master/MindIE/26.0.0/release.md"
RN920 = "https://www.hiascend.com/document/detail/en/CANNCommunityEdition/920/softwareinst/releasenote/9.2.0/release-notes.md"
V = TorchNpuFitGrade


@pytest.fixture(scope="module")
def matrix() -> compat.Matrix:
    return shipped_matrix()


def grade(matrix: compat.Matrix, torch_npu: str, cann: str) -> TorchNpuFitGrade:
    return matrix.torch_npu_cann_fit(torch_npu, cann).grade


def fit(matrix: compat.Matrix, cann: str, driver: str, **context: object) -> DriverFit:
    return matrix.driver_fit(cann, driver, **context).fit  # type: ignore[arg-type]


# --- facts the matrix got wrong ---------------------------------------------------------------------


def test_33_cann_8_3_rc2_with_pta_7_2_0_is_a_published_pairing(matrix: compat.Matrix) -> None:
    for torch_npu in ("2.6.0.post3", "2.7.1", "2.8.0"):  # the PTA 7.2.0 releases
        result = matrix.torch_npu_cann_fit(torch_npu, "8.3.RC2")
        assert result.grade is V.WINDOW and result.source.startswith(MI26)


def test_34_and_80_cann_8_2_rc2_is_a_release_paired_with_pta_7_1_0(matrix: compat.Matrix) -> None:
    release = matrix.cann_release("8.2.RC2")
    assert release is not None and any(s.startswith(MI26) for s in release.provenance.source)
    assert grade(matrix, "2.5.1.post1", "8.2.RC2") is V.WINDOW and grade(matrix, "2.6.0", "8.2.RC2") is V.WINDOW


def test_36_vllm_ascend_v0_11_0_stack(matrix: compat.Matrix) -> None:
    # Dockerfile FROM the CANN 8.3.rc2 image with torch-npu 2.7.1; its versioning policy: 2.7.1.post1
    assert grade(matrix, "2.7.1", "8.3.RC2") is V.WINDOW
    assert grade(matrix, "2.7.1.post1", "8.3.RC2") is V.VALIDATED


def test_37_vllm_ascend_v0_12_0rc1_stack_is_no_error(matrix: compat.Matrix) -> None:
    snap = with_install(
        with_packages(a2_host(), Distribution("torch", "2.8.0+cpu", "/s"), Distribution("torch_npu", "2.8.0", "/s")),
        version="8.3.RC2",
    )
    (finding,) = findings_of(snap, "ASC-TORCH-CANN", matrix)
    # a published pairing (MindIE 2.2.RC1 row): documented compatible is ok, with no fix
    assert finding.severity.value == "ok" and finding.fix == ""
    assert finding.source == MI26 and finding.data_as_of == matrix.as_of == "2026-12-01"


def test_39_41_47_off_pypi_versions_vendors_pin_have_rows(matrix: compat.Matrix) -> None:
    tags = {
        "2.6.0.post4": "v7.2.0.1-pytorch2.6.0",
        "2.7.1.post1": "v7.2.0.1-pytorch2.7.1",
        "2.8.0.post1": "v7.2.0.1-pytorch2.8.0",
        "2.7.1.post3": "v7.3.1-pytorch2.7.1",
        "2.8.0.post3": "v7.3.1-pytorch2.8.0",
        "2.9.0.post1": "v7.3.1-pytorch2.9.0",
    }
    for version, tag in tags.items():
        (row,) = matrix.torch_npu(version)
        assert not row.on_pypi and row.python_docs and any(tag in s for s in row.provenance.source)
    assert grade(matrix, "2.8.0.post1", "8.5.0") is V.VALIDATED  # vllm-ascend v0.13.0rc2
    assert grade(matrix, "2.9.0.post1+git4c901a4", "8.5.1") is V.VALIDATED  # vllm-ascend v0.18.0
    assert grade(matrix, "2.8.0.post3", "8.5.0") is V.WINDOW  # PTA 7.3.1 in the 7.3.X window


def test_49_beta_label_of_the_new_form_is_read_as_its_release(matrix: compat.Matrix) -> None:
    # triton-ascend#326: on CANN 9.0.0-beta.2 the fix is torch_npu 2.7.1.post4, validated with 9.0.0
    assert grade(matrix, "2.7.1.post4", "9.0.0-beta.2") is V.VALIDATED
    assert matrix.torch_npu_for("9.0.0-beta.2", "2.7.1")[0].release.text == "2.7.1.post4"


@pytest.mark.parametrize(
    ("fact", "torch_npu", "torch"),
    [(52, "2.7.1.post11", "2.7.1"), (53, "2.9.1", "2.9.1"), (54, "2.10.0.post7", "2.10.0")],
)
def test_52_to_54_wheels_pinning_torch_cpu(matrix: compat.Matrix, fact: int, torch_npu: str, torch: str) -> None:
    (row,) = matrix.torch_npu(torch_npu)  # METADATA: Requires-Dist: torch==X+cpu (x86_64 wheel)
    assert row.torch_pin is TorchPin.CPU_LOCAL_ON_X86_64
    assert row.torch_requirement("x86_64") == f"torch=={torch}+cpu"
    assert row.torch_requirement("aarch64") == f"torch=={torch}"


def test_59_torch_npu_2_14_0_has_no_published_cann_which_is_a_note(matrix: compat.Matrix) -> None:
    for cann in ("9.1.0", "9.2.0"):
        result = matrix.torch_npu_cann_fit("2.14.0", cann)
        assert result.grade is V.UNKNOWN and "torch_npu 2.12.0 with CANN 9.1.0" in result.nearest
    snap = with_install(
        with_packages(a2_host(), Distribution("torch", "2.14.0", "/s"), Distribution("torch_npu", "2.14.0", "/s")),
        version="9.1.0",
    )
    (finding,) = findings_of(snap, "ASC-TORCH-CANN", matrix)
    assert finding.severity.value == "info"
    assert finding.found.startswith(
        "no pairing published for torch_npu 2.14.0 yet (compatibility data as of 2026-12-01)"
    )
    assert "the nearest documented are torch_npu 2.12.0 with CANN 9.1.0" in finding.found


def test_61_deployer_wheels_of_2_6_0_post6_cover_python_3_12(matrix: compat.Matrix) -> None:
    (row,) = matrix.torch_npu("2.6.0.post6")
    assert row.python_for("x86_64") == ("3.9", "3.10", "3.11", "3.12")


def test_64_cann_9_2_0_is_released_with_hdk_26_2_rc1(matrix: compat.Matrix) -> None:
    release = matrix.cann_release("9.2.0")
    assert release is not None and release.provenance.source == (RN920,)
    assert fit(matrix, "9.2.0", "26.2.rc1") is DriverFit.MATCHED


@pytest.mark.parametrize("driver", ["25.0.rc1.1", "25.2.0", "25.2.2"])
def test_65_cann_9_2_0_on_hdk_25_0_and_25_2_is_an_error(matrix: compat.Matrix, driver: str) -> None:
    assert fit(matrix, "9.2.0", driver) is DriverFit.INCOMPATIBLE
    snap = with_install(a2_host(**{"driver__version": driver, "npu__driver_version": driver}), version="9.2.0")
    (finding,) = findings_of(snap, "ASC-CANN-DRIVER", matrix)
    assert finding.severity.value == "error" and finding.source == RN920


@pytest.mark.parametrize("driver", ["25.3.rc1", "25.5.0", "26.0.rc1", "26.1.1"])
def test_66_cann_9_2_0_is_compatible_with_the_later_hdks(matrix: compat.Matrix, driver: str) -> None:
    assert fit(matrix, "9.2.0", driver) is DriverFit.COMPATIBLE


@pytest.mark.parametrize("cann", ["8.5.2", "9.0.0", "9.0.1", "9.1.0", "9.1.1"])
def test_67_hdk_26_2_rc1_is_compatible_with_8_5_2_9_0_and_9_1(matrix: compat.Matrix, cann: str) -> None:
    assert fit(matrix, cann, "26.2.rc1") is DriverFit.COMPATIBLE


def test_82_cann_8_5_0_install_info_is_known(matrix: compat.Matrix) -> None:
    release = matrix.cann_release("8.5.0")
    assert release is not None and release.innerversion is not None
    assert release.innerversion.raw == "V100R001C25SPC001B232" and len(release.toolkit_compatible_version) == 6


@pytest.mark.parametrize("soc", ["Ascend310P2", "Ascend310P4", "Ascend910_9363", "Ascend950PR"])
def test_84_socs_torch_npu_knows_are_in_hardware_toml(matrix: compat.Matrix, soc: str) -> None:
    row = matrix.soc(soc)
    assert row is not None and row.provenance.status is Status.INFERRED
    assert "NpuVariables.cpp" in row.provenance.source[0]


@pytest.mark.parametrize("torch_npu", ["2.12.0.post2", "2.11.0.post2", "2.10.0.post6", "2.9.0.post8", "2.7.1.post10"])
def test_24_to_28_releases_only_a_fork_documents_stay_inferred(matrix: compat.Matrix, torch_npu: str) -> None:
    (row,) = matrix.torch_npu(torch_npu)
    assert row.provenance.status is Status.INFERRED
    assert any("gitcode.com/wzyly/pytorch" in s for s in row.provenance.source)
    assert grade(matrix, torch_npu, "9.1.0") is V.UNVERIFIED


def test_a_cann_newer_than_the_data_is_a_note_with_its_date(matrix: compat.Matrix) -> None:
    assert grade(matrix, "2.12.0", "9.3.0") is V.NEWER_THAN_DATA
    snap = with_install(
        with_packages(a2_host(), Distribution("torch", "2.12.0", "/s"), Distribution("torch_npu", "2.12.0", "/s")),
        version="9.3.0",
    )
    (finding,) = findings_of(snap, "ASC-TORCH-CANN", matrix)
    assert finding.severity.value == "info" and "newer than every release" in finding.found
    assert "(as of 2026-12-01)" in finding.found


def test_a_torch_npu_newer_than_the_data_is_a_note_with_its_date(matrix: compat.Matrix) -> None:
    snap = with_install(
        with_packages(a2_host(), Distribution("torch", "2.15.0", "/s"), Distribution("torch_npu", "2.15.0", "/s")),
        version="9.2.0",
    )
    (finding,) = findings_of(snap, "ASC-TORCH-CANN", matrix)
    assert finding.severity.value == "info"
    assert finding.found.startswith("torch_npu 2.15.0 is newer than the compatibility data (as of 2026-12-01")


def test_a_cann_without_hdk_data_says_so(matrix: compat.Matrix) -> None:
    snap = with_install(a2_host(), version="8.3.RC2")
    (finding,) = findings_of(snap, "ASC-CANN-DRIVER", matrix)
    assert finding.severity.value == "info" and "is no HDK data" not in finding.found
    assert finding.found.startswith("no HDK compatibility published for CANN 8.3.RC2")


# --- facts the matrix got right (regressions) -------------------------------------------------------

TORCH_NPU_CANN = [
    (1, "2.12.0", "9.1.0", V.VALIDATED),
    (2, "2.11.0", "9.1.0", V.VALIDATED),
    (3, "2.10.0.post4", "9.1.0", V.VALIDATED),
    (4, "2.9.0.post6", "9.1.0", V.VALIDATED),
    (5, "2.7.1.post8", "9.1.0", V.VALIDATED),
    (6, "2.9.0.post2", "9.0.0", V.VALIDATED),
    (7, "2.8.0.post4", "9.0.0", V.VALIDATED),
    (8, "2.7.1.post4", "9.0.0", V.VALIDATED),
    (9, "2.9.0", "8.5.0", V.VALIDATED),
    (10, "2.8.0.post2", "8.5.0", V.VALIDATED),
    (11, "2.6.0.post5", "8.5.0", V.VALIDATED),
    (12, "2.8.0", "8.3.RC1", V.VALIDATED),
    (13, "2.7.1", "8.3.RC1", V.VALIDATED),
    (14, "2.6.0", "8.2.RC1", V.VALIDATED),
    (15, "2.5.1", "8.1.RC1", V.VALIDATED),
    (16, "2.1.0.post10", "8.0.0", V.VALIDATED),
    (17, "2.4.0", "8.0.RC3", V.VALIDATED),
    (18, "1.11.0.post14", "8.0.RC2", V.VALIDATED),
    (19, "2.1.0.post4", "8.0.RC1", V.UNVERIFIED),  # kept CONFLICT
    (22, "2.10.0.post2", "9.0.0", V.VALIDATED),
    (23, "2.10.0", "9.0.0", V.VALIDATED),
    (29, "2.1.0.post10", "8.3.RC1", V.WINDOW),  # PTA 6.0.0 window
    (30, "2.9.0", "9.1.0", V.WINDOW),  # 7.3.X / 26.0.X / 26.1.X window
    (31, "2.6.0.post3", "8.3.RC1", V.VALIDATED),
    (38, "2.8.0.post2", "8.5.0", V.VALIDATED),
    (40, "2.9.0", "8.5.1", V.WINDOW),
    (42, "2.10.0", "9.0.0", V.VALIDATED),
    (43, "2.10.0.post2", "9.0.1", V.WINDOW),
    (44, "2.10.0.post4", "9.1.0", V.VALIDATED),
    (45, "2.5.1.post1", "8.2.RC1", V.VALIDATED),
    (46, "2.5.1", "8.0.0", V.WINDOW),
    (48, "2.7.1", "9.0.0", V.OUTSIDE),  # the true error: MsprofSysCycleTime
    (48, "2.7.1", "9.0.0-beta.2", V.OUTSIDE),
    (62, "2.6.0.post6", "9.0.0", V.VALIDATED),
    (63, "2.3.1.post5", "8.2.RC1", V.UNVERIFIED),  # kept CONFLICT with the README's 8.1.RC1
]


@pytest.mark.parametrize(("fact", "torch_npu", "cann", "expected"), TORCH_NPU_CANN)
def test_torch_npu_cann_regressions(
    matrix: compat.Matrix, fact: int, torch_npu: str, cann: str, expected: TorchNpuFitGrade
) -> None:
    assert grade(matrix, torch_npu, cann) is expected


TORCH_PINS = [
    (55, "2.11.0", TorchPin.CPU_LOCAL_ON_X86_64),
    (56, "2.12.0.post3", TorchPin.EXACT),
    (57, "2.13.0", TorchPin.EXACT),
    (58, "2.14.0", TorchPin.EXACT),
]


@pytest.mark.parametrize(("fact", "torch_npu", "pin"), TORCH_PINS)
def test_torch_pin_regressions(matrix: compat.Matrix, fact: int, torch_npu: str, pin: TorchPin) -> None:
    assert matrix.torch_npu(torch_npu)[0].torch_pin is pin


DRIVER = [
    (68, "9.1.1", "26.1.1", DriverFit.MATCHED, {}),
    (68, "9.1.0", "25.0.rc1.1", DriverFit.INCOMPATIBLE, {}),
    (68, "8.5.2", "26.1.1", DriverFit.COMPATIBLE, {}),
    (68, "9.0.0", "26.1.1", DriverFit.COMPATIBLE, {}),
    (69, "9.1.0", "26.0.rc1", DriverFit.MATCHED, {}),
    (70, "9.1.0", "25.7.rc1", DriverFit.MATCHED, {"applies_to": ("Atlas 350",), "hdk_line": "ascend950"}),
    (71, "9.0.1", "26.0.rc3", DriverFit.MATCHED, {}),
    (72, "9.0.0", "25.5.1", DriverFit.MATCHED, {}),
    (73, "8.5.2", "25.5.2", DriverFit.MATCHED, {}),
    (74, "9.1.0-beta.3", "26.0.rc1", DriverFit.MATCHED, {}),
    (75, "8.5.0", "25.3.rc1", DriverFit.COMPATIBLE, {}),
    (76, "8.5.0.alpha001", "25.2.0", DriverFit.COMPATIBLE, {}),
    (77, "8.5.1", "25.5.0", DriverFit.MATCHED, {}),
    (78, "8.2.RC1", "24.1.rc3", DriverFit.COMPATIBLE, {}),
]


@pytest.mark.parametrize(("fact", "cann", "driver", "expected", "context"), DRIVER)
def test_driver_regressions(
    matrix: compat.Matrix, fact: int, cann: str, driver: str, expected: DriverFit, context: dict
) -> None:
    assert fit(matrix, cann, driver, **context) is expected


def test_50_every_pypi_version_has_a_row(matrix: compat.Matrix) -> None:
    assert len(matrix.pypi.versions) == 67 and all(
        any(r.on_pypi for r in matrix.torch_npu(v)) for v in matrix.pypi.versions
    )


def test_81_cann_8_5_0_packages_are_ops(matrix: compat.Matrix) -> None:
    release = matrix.cann_release("8.5.0")
    assert release is not None and release.package_for("ascend910b") == ("Ascend-cann-910b-ops", Status.DOCUMENTED)


def test_explain_carries_the_data_date() -> None:
    import json

    from tests.cli_helpers import run_cli

    code, out, _ = run_cli(["explain", "ASC-TORCH-CANN"], {"PATH": "/usr/bin:/bin"})
    assert code == 0 and "Compatibility data (compat/*.toml) as of 2026-12-01." in out
    code, out, _ = run_cli(["explain", "ASC-TORCH-CANN", "--format", "json"], {"PATH": "/usr/bin:/bin"})
    report = json.loads(out)
    assert report["compat_data_as_of"] == "2026-12-01" and report["checks"][0]["compat_data_as_of"] == "2026-12-01"
