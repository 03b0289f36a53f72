"""Facts published after (or beside) the saved copies of compat/sources, each checked against ascenv's
verdict: source line -> verdict. Collected 2026-12-05 (round s33). No newer copy of the saved documents
themselves was found (the Ascend/pytorch and vllm-ascend mirrors end at the saved commits of
2026-08-22; the search stores hold no CANN 9.3 / TorchNPU 26.2 / vllm-ascend 0.26 release table), so
these come from dated issues, pull requests and the torch_npu wheels of the package index. A fact
that is only a user's report or a wheel is never turned into "incompatible": nothing documented stays
unknown / info.
"""

from __future__ import annotations

import pytest

from ascenv import compat, model, paths
from ascenv.compat import TorchNpuFitGrade
from tests.checks.helpers import findings_of, shipped_matrix
from tests.checks.test_stack import _dist, host

PYTORCH_MASTER_NOTES = (
    # github:Ascend/pytorch@35dc37cfbbe7e08757fd1baf1a2a0087fab8b364 docs/zh/release_notes.md (master,
    # 2026-08-07), 版本配套说明: |TorchNPU代码分支名称|PyTorch版本|TorchNPU版本|TorchNPU安装包版本|CANN版本|
    "github:Ascend/pytorch@35dc37cf docs/zh/release_notes.md"
)


@pytest.fixture(scope="module")
def matrix() -> compat.Matrix:
    return compat.load(paths.data_dir("compat"))


@pytest.mark.parametrize(
    ("line", "torch_npu", "cann", "grade"),
    [
        # PYTORCH_MASTER_NOTES rows of TorchNPU 26.1.0 (released 2026年7月)
        ("|v2.7.1-26.1.0|2.7.1|26.1.0|2.7.1.post8|9.1.0|", "2.7.1.post8", "9.1.0", TorchNpuFitGrade.VALIDATED),
        ("|v2.9.0-26.1.0|2.9.0|26.1.0|2.9.0.post6|9.1.0|", "2.9.0.post6", "9.1.0", TorchNpuFitGrade.VALIDATED),
        ("|v2.10.0-26.1.0|2.10.0|26.1.0|2.10.0.post4|9.1.0|", "2.10.0.post4", "9.1.0", TorchNpuFitGrade.VALIDATED),
        ("|v2.11.0-26.1.0|2.11.0|26.1.0|2.11.0|9.1.0|", "2.11.0", "9.1.0", TorchNpuFitGrade.VALIDATED),
        ("|v2.12.0-26.1.0|2.12.0|26.1.0|2.12.0|9.1.0|", "2.12.0", "9.1.0", TorchNpuFitGrade.VALIDATED),
        # github:sgl-project/sgl-kernel-npu#476 (2026-05-14, merged "cann9.0.0 Adapt"): the v26.0.0 wheels
        # torch_npu-2.8.0.post4 and torch_npu-2.10.0 installed for CANN 9.0.0
        (
            "releases/download/v26.0.0-pytorch2.8.0/torch_npu-2.8.0.post4",
            "2.8.0.post4",
            "9.0.0",
            TorchNpuFitGrade.VALIDATED,
        ),
        ("releases/download/v26.0.0-pytorch2.10.0/torch_npu-2.10.0", "2.10.0", "9.0.0", TorchNpuFitGrade.VALIDATED),
        # github:triton-lang/triton-ascend#1099 (2026-07-17): "only torch-npu==2.7.1.post4 matches CANN 9.0"
        ("only `torch-npu==2.7.1.post4` matches CANN 9.0", "2.7.1.post4", "9.0.0", TorchNpuFitGrade.VALIDATED),
        # github:triton-lang/triton-ascend#326 (2026-05-30): torch-npu==2.7.1 on CANN 9.0.0-beta.2,
        # "undefined symbol: MsprofSysCycleTime"
        (
            "torch-npu==2.7.1导入时报错undefined symbol: MsprofSysCycleTime",
            "2.7.1",
            "9.0.0.beta2",
            TorchNpuFitGrade.OUTSIDE,
        ),
    ],
)
def test_torch_npu_with_cann(
    matrix: compat.Matrix, line: str, torch_npu: str, cann: str, grade: TorchNpuFitGrade
) -> None:
    assert matrix.torch_npu_cann_fit(torch_npu, cann).grade is grade, line


@pytest.mark.parametrize(
    ("line", "torch_npu", "cann"),
    [
        # the package index's torch_npu 2.13.0 / 2.14.0 wheels (uploaded 2026-10-15): no release note or
        # table names their CANN; nothing documented must stay unknown, never "outside"
        ("torch_npu-2.14.0 METADATA: no CANN stated", "2.14.0", "9.1.0"),
        ("torch_npu-2.13.0 METADATA: no CANN stated", "2.13.0", "9.2.0"),
    ],
)
def test_newest_wheels_without_a_table_are_not_documented(
    matrix: compat.Matrix, line: str, torch_npu: str, cann: str
) -> None:
    fit = matrix.torch_npu_cann_fit(torch_npu, cann)
    assert fit.grade in (TorchNpuFitGrade.UNKNOWN, TorchNpuFitGrade.NEWER_THAN_DATA), line
    assert fit.grade is not TorchNpuFitGrade.OUTSIDE


@pytest.mark.parametrize(
    ("line", "version", "torch"),
    [
        # torch_npu-2.14.0-cp3*-manylinux_2_28_{aarch64,x86_64}.whl METADATA (2026-10-15)
        ("Requires-Dist: torch==2.14.0.*", "2.14.0", "torch==2.14.0"),
        # torch_npu-2.13.0-…whl METADATA; x86_64 resolves to the index's torch 2.13.0+cpu, which PEP 440's
        # == without a local label accepts
        ("Requires-Dist: torch==2.13.0.*", "2.13.0", "torch==2.13.0"),
    ],
)
def test_newest_wheels_pin_their_torch_release(matrix: compat.Matrix, line: str, version: str, torch: str) -> None:
    (row,) = matrix.torch_npu(version)
    assert row.torch_requirement("aarch64") == row.torch_requirement("x86_64") == torch, line
    # the wheels of both lines are cp310 … cp314 on both machines (no cp39)
    assert row.python_for("aarch64") == row.python_for("x86_64") == ("3.10", "3.11", "3.12", "3.13", "3.14")


def test_vllm_ascend_0_23_0_final_row(matrix: compat.Matrix) -> None:
    # github:vllm-project/vllm-ascend#14556 (2026-08-19) and #13421 (2026-08-03):
    # "| v0.23.0 | v0.23.0 | >= 3.10, < 3.13 | 9.1.0 | 2.10.0 / 2.10.0.post4 | 3.2.2 |"
    (row,) = [r for r in matrix.vllm_ascend if r.text == "0.23.0"]
    assert (str(row.cann), str(row.torch_npu), str(row.triton_ascend)) == ("9.1.0", "2.10.0.post4", "3.2.2")


def test_triton_ascend_3_2_0_on_cann_9_1_0_is_not_called_compatible() -> None:
    # github:triton-lang/triton-ascend#2018 (2026-09-07): CANN 9.1.0 with triton-ascend 3.2.0 failed at
    # training start, 3.2.2 fixed it. The data lists 3.2.0 for CANN 8.5.0 only: never "ok" on 9.1.0,
    # and a user's report is not a documented incompatibility either (info, not error)
    (f,) = findings_of(host("9.1.0", _dist("triton-ascend", "3.2.0")), "ASC-STACK-TRITON", shipped_matrix())
    assert f.severity is model.Severity.INFO and "not documented" in f.title


@pytest.mark.parametrize(
    ("line", "cann", "triton", "severity"),
    [
        # github:vllm-project/vllm-ascend#13421 (2026-08-03, merged): "Upgrade CANN from 9.0.1 to 9.1.0 …
        # Upgrade Triton Ascend from 3.2.1 to 3.2.2" (the images it builds): known-good
        ("Upgrade Triton Ascend from 3.2.1 to 3.2.2", "9.1.0", "3.2.2", model.Severity.OK),
        # github:triton-lang/triton-ascend#2257 (2026-09-18): CI images of CANN 9.2.0 are built, no table
        # pairs a triton-ascend with 9.2.0 yet: info, never an error
        ("add the image build of version 9.2.0", "9.2.0", "3.2.2", model.Severity.INFO),
        # triton-ascend#2018 again: the release it upgraded from, 3.2.1, on 9.1.0 is not documented
        ("更新triton-ascend版本为3.2.2后问题解决", "9.1.0", "3.2.1", model.Severity.INFO),
    ],
)
def test_triton_ascend_with_cann(line: str, cann: str, triton: str, severity: model.Severity) -> None:
    (f,) = findings_of(host(cann, _dist("triton-ascend", triton)), "ASC-STACK-TRITON", shipped_matrix())
    assert f.severity is severity, (line, f.title)
