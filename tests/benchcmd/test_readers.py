"""Every profiler sample of the corpus imported, with values read by eye from the files."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from ascenv.bench.readers import canonical_metric, metric_set, read_path, unquote_shapes
from ascenv.errors import InputError
from tests.conftest import SHARED

DATA = Path(__file__).resolve().parents[1] / "data" / "msprof"
REFERENCE = SHARED / "corpus" / "reference-only" / "msprof"


def body(path: Path) -> str:
    """The file without its ``# source:`` and ``# note:`` lines, byte for byte."""
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# source:")
    return text.split("\n", 2)[2]


def sample(tmp_path: Path, name: str, as_name: str = "", crlf: bool = False) -> Path:
    text = body(DATA / name)
    if text.startswith("PROF_LINES"):  # mskpp keeps its header and row as a Python literal
        text = "\n".join(ast.literal_eval(text.split("=", 1)[1].strip())) + "\n"
    if crlf:
        text = text.replace("\n", "\r\n")
    path = tmp_path / (as_name or "sample.csv")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode())
    return path


def reference(tmp_path: Path, name: str, as_name: str) -> Path:
    source = REFERENCE / name
    if not source.is_file():
        pytest.skip(f"{source} is reference-only material and not available here")
    path = tmp_path / as_name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body(source).encode())
    return path


def by(records, op, shapes=None):  # type: ignore[no-untyped-def]
    found = [r for r in records if r.op == op and (shapes is None or r.input_shapes == shapes)]
    assert len(found) == 1, [(r.op, r.input_shapes) for r in records if r.op == op]
    return found[0]


KD_L2 = "torch_npu-2.7.1_cann8.3.RC1_A2_kernel_details_L2-PipeUtil_EXCERPT_msinsight.txt"
KD_EDITED = "torch_npu_cann-unknown-2025-01_kernel_details_PipeUtil_HAND-EDITED-rows_msprof-analyze.txt"


def test_old_unprefixed_op_summary(tmp_path: Path) -> None:
    got = read_path(sample(tmp_path, "msprof_old-format_op_summary_PipeUtil-no-aic-aiv-prefix_mskpp-test-EXCERPT.txt"))
    (r,) = got.records
    assert got.tool == "msprof"
    assert (r.op, r.task_type, r.samples, r.duration_us, r.block_dim, r.input_shapes) == (
        "add_custom", "AI_CORE", 1, 82.11, 8, None,
    )  # fmt: skip
    assert r.metrics["vec_ratio"] == 0.0229 and r.metrics["cube_ratio"] == 0  # mac_ratio, renamed
    assert r.metrics["mte2_ratio"] == 0.3887 and r.metrics["memory_bound"] == 16.9677
    assert r.metric_set == "PipeUtilization"


def test_torch_npu_level2_kernel_details(tmp_path: Path) -> None:
    got = read_path(sample(tmp_path, KD_L2))
    assert got.tool == "torch_npu"
    mm = by(got.records, "MatMulV3", "4096,1024;4096,1024")
    assert (mm.input_shapes, mm.input_dtypes, mm.input_formats, mm.task_type) == (
        "4096,1024;4096,1024", "DT_BF16;DT_BF16", "ND;ND", "AI_CORE",
    )  # fmt: skip
    assert (mm.samples, mm.duration_us, mm.block_dim, mm.mix_block_dim) == (1, 170.4, 20, 0)
    assert mm.metrics["aic_cube_ratio"] == 0.78 and mm.metrics["aic_mte2_ratio"] == 0.815
    assert mm.metrics["cube_utilization(%)"] == 97.321
    zeros = by(got.records, "ZerosLike")
    assert (zeros.input_shapes, zeros.duration_us, zeros.block_dim) == ("375815680", 1892.92, 40)
    assert by(got.records, "Range").input_shapes == ";;"  # three scalar inputs
    assert {r.input_shapes for r in got.records if r.op == "RmsNorm"} >= {"4096,1,1024;1024", "4096,1,16,128;128"}
    assert sum(r.samples for r in got.records) == 32


def test_repeated_launches_and_quoted_tab_timestamps(tmp_path: Path) -> None:
    got = read_path(sample(tmp_path, KD_EDITED))
    fa = by(got.records, "FlashAttentionScore", "4096,2,512;4096,2,512;4096,2,512;;;;4096,4096;;;;;")
    assert fa.samples == 4 and fa.task_type == "MIX_AIC" and (fa.block_dim, fa.mix_block_dim) == (20, 40)
    assert fa.duration_us == pytest.approx((406.128 + 407.008) / 2)
    assert (fa.duration_min_us, fa.duration_max_us) == (405.228, 410.188)
    # the metrics are those of the median launch (the lower middle one: 406.128)
    assert fa.metrics["aicore_time(us)"] == 358.77
    v2 = by(got.records, "MatMulV2")
    assert v2.samples == 4 and tuple(v2.durations) == (185.504, 186.823, 187.724, 190.544)
    v5 = by(got.records, "MatMulV3", "8192,15365;8192,4096")
    assert v5.samples == 4 and v5.spread == 0
    scalars = by(got.records, "Add", ";")
    assert scalars.samples == 4 and scalars.block_dim == 1


def test_memory_l0_with_exponent_timestamps_and_hccl(tmp_path: Path) -> None:
    name = "torch_npu_cann-unknown-2023-09_kernel_details_MemoryL0_EXCEL-MANGLED-timestamps_msinsight.txt"
    got = read_path(sample(tmp_path, name))
    fa = by(got.records, "FlashAttentionScore")
    assert fa.samples == 4 and fa.duration_us == pytest.approx((7023.5739 + 7119.9688) / 2)
    assert (fa.block_dim, fa.mix_block_dim, fa.metric_set) == (24, 48, "MemoryL0")
    hccl = by(got.records, "hcom_broadcast_")
    assert hccl.task_type == "HCCL" and hccl.samples == 2 and hccl.block_dim == 0
    assert by(got.records, "NonZero_MemSet").samples == 2  # its Type is "0": the name is used


def test_arithmetic_utilization_2023(tmp_path: Path) -> None:
    name = "torch_npu_cann-unknown-2023-11_kernel_details_ArithmeticUtil_EXCERPT_msprof-analyze.txt"
    got = read_path(sample(tmp_path, name))
    zeros = by(got.records, "ZerosLike", "544404480")
    assert (zeros.duration_us, zeros.block_dim, zeros.input_dtypes, zeros.input_formats) == (
        607.98, 48, "FLOAT16", "FORMAT_ND",
    )  # fmt: skip
    assert zeros.metrics["aiv_vec_int32_ratio"] == 0.0822 and zeros.metric_set == "ArithmeticUtilization"


def test_level0_kernel_details_lf_and_crlf_alike(tmp_path: Path) -> None:
    name = "torch_npu_cann-unknown-2025-01_kernel_details_L0_EXCERPT_msinsight.txt"
    lf = read_path(sample(tmp_path, name, "lf.csv"))
    crlf = read_path(sample(tmp_path, name, "crlf.csv", crlf=True))
    assert lf.records == crlf.records
    conv = by(lf.records, "Conv2D1")
    assert (conv.duration_us, conv.block_dim, conv.task_type, conv.metric_set, conv.metrics) == (
        315.746, 0, None, "none", {},
    )  # fmt: skip


def test_level0_like_without_step_id(tmp_path: Path) -> None:
    got = read_path(sample(tmp_path, "torch_npu_cann-unknown-2023-12_kernel_details_L0-like_msprof-analyze.txt"))
    cast = by(got.records, "Cast16")
    assert (cast.duration_us, cast.block_dim, cast.input_shapes) == (932.0498, 0, None)
    assert len(got.records) == 8


def test_level1_five_d_formats_and_shape_label(tmp_path: Path) -> None:
    name = "torch_npu_cann-unknown-2025-01_kernel_details_L1-PipeUtil_EXCERPT_msinsight.txt"
    got = read_path(sample(tmp_path, name), shape_label="ignored where shapes exist")
    conv = by(got.records, "Conv2D", "32,1,224,224,8;121,4,16,8;64")
    assert (conv.duration_us, conv.block_dim, conv.input_formats) == (313.886, 16, "NC1HWC0;FRACTAL_Z;NCHW")
    assert not any(r.input_shapes == "ignored where shapes exist" for r in got.records)


def test_op_statistic_keeps_means_only(tmp_path: Path) -> None:
    got = read_path(sample(tmp_path, "torch_npu-2.7.1_cann8.3.RC1_A2_op_statistic_msinsight.txt"))
    mm = by(got.records, "MatMulV3")
    assert (mm.samples, mm.duration_stat, tuple(mm.durations), mm.task_type) == (280, "mean", (), "AI_CORE")
    assert mm.duration_us == pytest.approx(48000.78 / 280)
    assert (mm.duration_min_us, mm.duration_max_us) == (76.66, 292.52)
    assert len(got.records) == 35


def test_torch_npu_tree_reads_kernel_details_and_profiler_info(tmp_path: Path) -> None:
    single = read_path(sample(tmp_path, KD_L2, "single.csv"))
    rank = tmp_path / "tree" / "rank_0_ascend_pt"
    sample(rank, KD_L2, "ASCEND_PROFILER_OUTPUT/kernel_details.csv")
    sample(rank, "torch_npu-2.7.1_cann8.3.RC1_A2_op_statistic_msinsight.txt", "ASCEND_PROFILER_OUTPUT/op_statistic.csv")
    (rank / "profiler_info_0.json").write_text(
        body(DATA / "torch_npu-2.7.1_cann8.3.RC1_A2_profiler_info_0.json_msinsight.txt")
    )
    # the msprof raw export below the same run holds the same kernels once more: not counted twice
    sample(rank, KD_L2, "PROF_000001_20251127_ABCDEFGHIJKLMNOP/mindstudio_profiler_output/op_summary_20251127.csv")
    tree = read_path(tmp_path / "tree")
    assert tree.records == single.records
    assert tree.files == ("rank_0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",)
    assert tree.profiler_info == {"torch_npu": "2.7.1", "cann": "8.3.RC1", "aic_metrics": "ACL_AICORE_PIPE_UTILIZATION"}


def test_sliced_op_summary_merges_to_the_whole(tmp_path: Path) -> None:
    whole = read_path(sample(tmp_path, KD_EDITED, "whole.csv"))
    lines = body(DATA / KD_EDITED).splitlines(keepends=True)
    out = tmp_path / "PROF_000001_20250109_ABCDEFGHIJKLMNOP" / "mindstudio_profiler_output"
    out.mkdir(parents=True)
    (out / "op_summary_slice_0_20250109.csv").write_text("".join(lines[:10]))
    (out / "op_summary_slice_1_20250109.csv").write_text(lines[0] + "".join(lines[10:]))
    merged = read_path(tmp_path / "PROF_000001_20250109_ABCDEFGHIJKLMNOP")
    assert [(r.key, r.samples, r.duration_us) for r in merged.records] == [
        (r.key, r.samples, r.duration_us) for r in whole.records
    ]


# --- reference-only samples, read from ../shared ------------------------------------------------
OP_SUMMARY_TAB = "msprof_cann-unrecorded_910B_op_summary_TAB-timestamps_tilelang_neo-pan.txt"


def test_msprof_op_summary_with_tab_timestamps(tmp_path: Path) -> None:
    got = read_path(reference(tmp_path, OP_SUMMARY_TAB, "op_summary.csv"))
    (r,) = got.records
    assert (r.op, r.task_type, r.samples, tuple(r.durations)) == (
        "main_kernel",
        "MIX_AIC",
        3,
        (87139.38, 86808.42, 86846.72),
    )
    assert (r.duration_us, r.block_dim, r.mix_block_dim, r.input_shapes) == (86846.72, 256, 512, None)
    assert r.metrics["aiv_scalar_ratio"] == 0.999  # of the median launch (86846.720)


def test_msprof_trees_new_and_old_layout_import_the_same(tmp_path: Path) -> None:
    single = read_path(reference(tmp_path, OP_SUMMARY_TAB, "single.csv"))
    new = tmp_path / "new" / "PROF_000001_20260605161708478_FRJKORBPFMHQMGLA"
    reference(new, OP_SUMMARY_TAB, "mindstudio_profiler_output/op_summary_20260605161737.csv")
    reference(new, "msprof_cann-unrecorded_910B_task_time_TAB-timestamps_tilelang_neo-pan.txt",
              "mindstudio_profiler_output/task_time_20260605161737.csv")  # fmt: skip
    reference(new, OP_SUMMARY_TAB, "device_0/summary/op_summary_0_1.csv")  # the older export of one run
    old = tmp_path / "old" / "PROF_000001_20260605161708478_FRJKORBPFMHQMGLA"
    reference(old, OP_SUMMARY_TAB, "device_0/summary/op_summary_0_1.csv")
    assert read_path(tmp_path / "new").records == single.records
    assert read_path(tmp_path / "old").records == single.records


def test_task_time_and_op_statistic_alone(tmp_path: Path) -> None:
    tt = read_path(
        reference(tmp_path, "msprof_cann-unrecorded_910B_task_time_TAB-timestamps_tilelang_neo-pan.txt", "t.csv")
    )
    (r,) = tt.records
    assert (r.op, r.task_type, tuple(r.durations), r.duration_us) == (
        "main_kernel",
        "MIX_AIC",
        (83404.54, 83084.2, 83122.52),
        83122.52,
    )
    st = read_path(reference(tmp_path, "msprof_cann8.3.RC2_910B_op_statistic_SANITIZED_neo-pan.txt", "s.csv"))
    (s,) = st.records
    assert (s.op, s.samples, s.duration_us, s.duration_min_us, s.duration_max_us) == (
        "sanitized_kernel", 2, 42228.8, 42058.48, 42399.12,
    )  # fmt: skip


def _opprof(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, as_name in files.items():
        reference(tmp_path, name, as_name)
    return tmp_path


def test_msprof_op_directory_folds_blocks(tmp_path: Path) -> None:
    root = _opprof(
        tmp_path / "reports",
        {
            "msprofop_cann-unrecorded_910B_vector-add_Default_OpBasicInfo_neo-pan.txt": "OPPROF_001/OpBasicInfo.csv",
            "msprofop_cann-unrecorded_910B_vector-add_Default_PipeUtilization_PARTIAL_neo-pan.txt": (
                "OPPROF_001/PipeUtilization.csv"
            ),
        },
    )
    got = read_path(root, shape_label="n=8192")
    (r,) = got.records
    assert got.tool == "msprof op"
    assert (r.op, r.task_type, r.duration_us, r.block_dim, r.mix_block_dim, r.input_shapes) == (
        "sanitized_add_custom_vector", "AI_VECTOR_CORE", 9.22, 8, None, "n=8192",
    )  # fmt: skip
    assert r.metrics["aiv_time(us)"] == 8.661667  # the slowest block
    assert r.metrics["aiv_total_cycles"] == 14219 + 15190 + 15591  # summed
    assert r.metrics["aiv_vec_ratio"] == pytest.approx((0.057740 + 0.057077 + 0.064460) / 3)  # mean
    assert "aic_time(us)" not in r.metrics  # NA on every row of a vector-only kernel
    assert (r.clock.current_mhz, r.clock.rated_mhz, r.clock.downclocked) == (1800, 1800, False)
    assert r.metric_set == "PipeUtilization"


def test_msprof_op_all_metric_files_and_mix_suffix(tmp_path: Path) -> None:
    files = {"msprofop_cann8.3.RC2_910B_OpBasicInfo_SANITIZED_neo-pan.txt": "OPPROF_X/OpBasicInfo.csv"}
    for m in ("ArithmeticUtilization", "MemoryL0", "MemoryUB", "Memory", "PipeUtilization", "ResourceConflictRatio"):
        files[f"msprofop_cann8.3.RC2_910B_{m}_neo-pan.txt"] = f"OPPROF_X/{m}_20240603022812284.csv"
    (r,) = read_path(_opprof(tmp_path, files)).records
    assert (r.op, r.task_type, r.duration_us, r.block_dim, r.mix_block_dim) == (
        "sanitized_operator_kernel",
        "MIX_AIC",
        5.740459,
        1,
        2,
    )
    assert r.metric_set == "ArithmeticUtilization+Memory+MemoryL0+MemoryUB+PipeUtilization+ResourceConflictRatio"
    assert r.metrics["aiv_vec_fops"] == 640 and r.metrics["aiv_mte3_wait_ratio"] == 0.228333
    assert r.metrics["aiv_ub_read_bw_vector(GB/s)"] == 7.5


def test_msprof_op_mix_kernel_joins_op_summary_name(tmp_path: Path) -> None:
    (r,) = read_path(
        reference(tmp_path, "msprofop_cann-unrecorded_910B_OpBasicInfo_tilelang_neo-pan.txt", "OpBasicInfo.csv")
    ).records
    (s,) = read_path(reference(tmp_path, OP_SUMMARY_TAB, "op_summary.csv")).records
    assert r.key == s.key == ("main_kernel", None, None, None, "MIX_AIC")


def test_downclocked_launch_is_flagged(tmp_path: Path) -> None:
    path = reference(tmp_path, "msprofop_cann8.3.RC2_910B_OpBasicInfo_SANITIZED_neo-pan.txt", "OpBasicInfo.csv")
    path.write_text(path.read_text().replace(",1800,1800,", ",800,1800,"))
    (r,) = read_path(path).records
    assert (r.clock.current_mhz, r.clock.rated_mhz, r.clock.downclocked) == (800, 1800, True)


# --- errors -------------------------------------------------------------------------------------
def test_unknown_csv_names_the_file_and_its_header(tmp_path: Path) -> None:
    path = tmp_path / "step_trace_time.csv"
    path.write_text("Step,Computing,Communication(Not Overlapped),Overlapped\n1,2,3,4\n")
    with pytest.raises(
        InputError, match=r"step_trace_time.csv: not a profiler output ascenv reads; its header is: Step,Computing"
    ):
        read_path(path)


@pytest.mark.parametrize(
    ("text", "words"),
    [("", "the file is empty"), ("\n\n", "the file is empty"), ("Name,Duration(us)\n", "no rows follow")],
)
def test_empty_files_are_errors(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "kernel_details.csv"
    path.write_text(text)
    with pytest.raises(InputError, match=words):
        read_path(path)


def test_truncated_file_is_an_error(tmp_path: Path) -> None:
    path = sample(tmp_path, KD_EDITED)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 200])
    with pytest.raises(InputError, match=r"fields where the header has 46 .*truncated"):
        read_path(path)


def test_cut_inside_a_quoted_field_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "k.csv"
    path.write_text('Name,Duration(us),Input Shapes\nAdd,1.5,"""4096;')
    with pytest.raises(InputError, match="not valid CSV"):
        read_path(path)


def test_a_duration_that_is_not_a_number(tmp_path: Path) -> None:
    path = tmp_path / "k.csv"
    path.write_text("Name,Duration(us)\nAdd,fast\n")
    with pytest.raises(InputError, match=r"k.csv, line 2, column 'Duration\(us\)': 'fast' of 'Add' is not a time"):
        read_path(path)


def test_a_per_block_file_alone_and_an_empty_tree(tmp_path: Path) -> None:
    path = tmp_path / "PipeUtilization.csv"
    path.write_text("block_id,sub_block_id,aiv_time(us),\n0,vector0,1.0,\n")
    with pytest.raises(InputError, match="per-block msprof op metric file"):
        read_path(path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no profiler output found"):
        read_path(tmp_path / "empty")


def test_helpers() -> None:
    assert unquote_shapes('"4096,1024;4096,1024"') == "4096,1024;4096,1024"
    assert unquote_shapes('""') == "" and unquote_shapes("N/A") is None
    assert (
        canonical_metric("aic_mac_ratio") == "aic_cube_ratio" and canonical_metric("aiv_vec_ratio") == "aiv_vec_ratio"
    )
    assert metric_set([]) == "none" and metric_set(["aic_l2_cache_hit_rate(%)"]) == "L2Cache"


def test_fixtures_keep_their_source_lines() -> None:
    for path in DATA.glob("*.txt"):
        first, second = path.read_text().splitlines()[:2]
        assert first.startswith("# source: ") and second.startswith("# note: ") and "Mulan" in second
    assert shutil.which  # the module under test imports nothing optional


def test_median_launch_read_again_from_its_lines_where_a_quoted_cell_breaks_the_line(tmp_path: Path) -> None:
    """Launches keep the text they were parsed from; the median launch's row is parsed again from
    it, also when a quoted cell holds a line break (its text is then several lines)."""
    header = "Name,Type,Accelerator Core,Duration(us),Block Dim,Input Shapes,Note,aiv_vec_ratio,aiv_mte2_ratio\n"
    rows = [
        'add,Add,AI_VECTOR_CORE,3.0,8,"""4,4""","line one\r\nline two",0.3,0.7\r\n',
        'add,Add,AI_VECTOR_CORE,1.0,2,"""4,4""",plain,0.1,0.9\n',
        'add,Add,AI_VECTOR_CORE,2.0,4,"""4,4""","a\nb\nc",0.2,0.8\n',
        'add,Add,AI_VECTOR_CORE,NA,4,"""4,4""",x,0.5,0.5\n',
    ]
    path = tmp_path / "kernel_details.csv"
    path.write_bytes((header + "".join(rows)).encode())
    got = read_path(path)
    (r,) = got.records
    assert (r.input_shapes, r.samples, tuple(r.durations), got.skipped_rows) == ("4,4", 3, (3.0, 1.0, 2.0), 1)
    assert r.block_dim == 4 and r.metrics == {"aiv_vec_ratio": 0.2, "aiv_mte2_ratio": 0.8}  # the 2.0 launch
