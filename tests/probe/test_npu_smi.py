"""The npu-smi parsers against every recorded capture.

Every expected value below was read by eye from the table text of the named file
(tests/data/corpus/npu_smi/, other_cmds/, errors/), not printed by the parser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ascenv import serde
from ascenv.model import NpuInfo
from ascenv.probe.npu_smi import (
    DCMI_MEANINGS,
    PROCESSES_UNKNOWN,
    parse_board,
    parse_chip_map,
    parse_errors,
    parse_info,
    parse_info_all,
    parse_key_values,
    parse_list,
    processes_note,
)
from tests.conftest import CORPUS, SHARED, load_capture

NPU_SMI = CORPUS / "npu_smi"
OTHER = CORPUS / "other_cmds"
REFERENCE = SHARED / "corpus" / "reference-only"


@dataclass
class Expect:
    tool: Optional[str]
    driver: Optional[str]
    layout: Optional[str]
    npus: list[int]  # NPU id of every chip, in table order
    chips: list[int]  # chip index of every chip
    names: set[str]
    health: list[str]
    bus: list[Optional[str]]
    memory: list[tuple[Optional[int], Optional[int]]] = field(default_factory=list)  # used, total per chip
    hbm: list[tuple[Optional[int], Optional[int]]] = field(default_factory=list)
    hugepages: list[tuple[Optional[int], Optional[int]]] = field(default_factory=list)
    power: list[Optional[float]] = field(default_factory=list)
    temp: list[Optional[int]] = field(default_factory=list)
    device_ids: list[Optional[int]] = field(default_factory=list)
    phy_ids: list[Optional[int]] = field(default_factory=list)
    processes: list[tuple] = field(default_factory=list)  # (npu, chip, pid, name, memory[, container pid])
    process_count: Optional[int] = None  # when the list is too long to write out
    warnings: list[str] = field(default_factory=list)  # substrings that must appear
    clean: bool = False  # no warnings but the processes note
    processes_unknown: Optional[str] = None  # why the process list may be incomplete (None: it is whole)


NO_HBM = None
NO_TABLE = "the output has no process table (cut, or npu-smi answered only in part)"
F1_NO_TABLE = "this npu-smi (Atlas 300I, npu-smi 20.x/21.x) prints no process table"
CUT_AT = "the process table is cut: no row for NPU "
B = "0000:{}:00.0".format
EIGHT_910 = [0, 1, 2, 3, 4, 5, 6, 7]
A3_BUS = ["9D", "9F", "99", "9B", "95", "97", "91", "93", "8D", "8F", "89", "8B", "85", "87", "81", "83"]

EXPECTED: dict[str, Expect] = {
    "310_atlas300I-4chip_20.2.2_5cards_jsc-notes.txt": Expect(
        "20.2.2",
        "20.2.2",
        "F1",
        npus=[n for n in (2048, 2049, 2050, 2051, 2052) for _ in range(4)],
        chips=[0, 1, 2, 3] * 5,
        names={"310"},
        health=["OK"] * 20,
        bus=[B(x) for x in ("81 82 83 84 85 86 87 88 89 8A 8B 8C 8D 8E 8F 90 91 92 93 94").split()],
        memory=[(2621, 8192)] * 20,
        hbm=[(None, None)] * 20,
        hugepages=[(None, None)] * 20,
        power=[12.8] * 20,
        temp=[46, 46, 47, 45, 49, 50, 50, 49, 49, 50, 49, 50, 51, 50, 48, 48, 53, 54, 56, 52],
        device_ids=list(range(20)),
        clean=True,
        processes_unknown=F1_NO_TABLE,
    ),
    "310b4_23.0.0_ALARM_2row-excerpt_plus_health-i0-c0_diag-report.txt": Expect(
        None,
        None,
        None,
        npus=[0],
        chips=[0],
        names={"310B4"},
        health=["Alarm"],
        bus=[None],
        memory=[(6680, 15609)],
        hugepages=[(15, 15)],
        power=[0.0],
        temp=[64],
        device_ids=[0],
        warnings=["capture ends before the closing line"],
        processes_unknown=NO_TABLE,
    ),
    "310b4_23.0.0_and_24.1.0_before-after-driver-change_davinci-mini-log.txt": Expect(
        "23.0.0",
        "23.0.0",
        "F2",
        npus=[0],
        chips=[0],
        names={"310B4"},
        health=["OK"],
        bus=[None],
        memory=[(1350, 3514)],
        hugepages=[(15, 15)],
        power=[7.6],
        temp=[51],
        device_ids=[0],
        warnings=["the text holds 2 npu-smi info tables"],
        processes_unknown=NO_TABLE,
    ),
    "310b4_23.0.rc3_NARROWED-by-author_odd.txt": Expect(
        "23.0.rc3",
        "23.0.rc3",
        "F2",
        npus=[0],
        chips=[0],
        names={"310B4"},
        health=["OK"],
        bus=[None],
        memory=[(2166, 3513)],
        hugepages=[(15, 15)],
        power=[7.7],
        temp=[54],
        device_ids=[0],
        clean=True,
        processes_unknown=NO_TABLE,
    ),
    "310p3-300iduo_24.1.rc2_host_PARTIAL_ollama-issue5315.txt": Expect(
        "24.1.rc2",
        "24.1.rc2",
        "F2",
        npus=[1, 1],
        chips=[0, 1],
        names={"310P3"},
        health=["OK", "OK"],
        bus=[B("01"), B("01")],
        memory=[(1397, 44280), (1520, 43693)],
        hugepages=[(0, 0), (0, 0)],
        power=[None, None],
        temp=[59, 58],
        device_ids=[0, 1],
        warnings=["capture ends before the closing line", "NPU 2: a chip's second row is missing"],
        processes_unknown=NO_TABLE,
    ),
    "310p3-300iduo_25.0.rc1.1_2chips_proc_vllm-ascend-issue1993.txt": Expect(
        "25.0.rc1.1",
        "25.0.rc1.1",
        "F2",
        npus=[6, 6],
        chips=[0, 1],
        names={"310P3"},
        health=["OK", "OK"],
        bus=[B("83"), B("83")],
        memory=[(1175, 44280), (8322, 43693)],
        hugepages=[(0, 0), (3262, 3262)],
        power=[None, None],
        temp=[55, 52],
        device_ids=[0, 1],
        processes=[(6, 1, 293029, "python3.11", 6612)],
        clean=True,
    ),
    "310p3_22.0.0-tool_22.0.2-driver_3digit-mem-2spaces_modelzoo-Swin-readme.txt": Expect(
        "22.0.0",
        "22.0.2",
        "F2a",
        npus=[0],
        chips=[0],
        names={"310P3"},
        health=["OK"],
        bus=[B("5E")],
        memory=[(935, 21534)],
        hugepages=[(0, 0)],
        power=[16.6],
        temp=[56],
        device_ids=[0],
        clean=True,
        processes_unknown=NO_TABLE,
    ),
    "310p3_22.0.0-tool_22.0.2-driver_hugepages1236_modelzoo-FOMM-readme.txt": Expect(
        "22.0.0",
        "22.0.2",
        "F2a",
        npus=[0],
        chips=[0],
        names={"310P3"},
        health=["OK"],
        bus=[B("86")],
        memory=[(4066, 21534)],
        hugepages=[(1236, 1236)],
        power=[16.0],
        temp=[50],
        device_ids=[0],
        clean=True,
        processes_unknown=NO_TABLE,
    ),
    "310p3_22.0.0-tool_22.0.2-driver_total23054_modelzoo-srcnn-readme.txt": Expect(
        "22.0.0",
        "22.0.2",
        "F2a",
        npus=[0],
        chips=[0],
        names={"310P3"},
        health=["OK"],
        bus=[B("AF")],
        memory=[(934, 23054)],
        hugepages=[(0, 0)],
        power=[17.0],
        temp=[56],
        device_ids=[0],
        clean=True,
        processes_unknown=NO_TABLE,
    ),
    "310p3_23.0.rc3_2cards_MISALIGNED-by-author_odd.txt": Expect(
        "23.0.rc3",
        "23.0.rc3",
        "F2",
        npus=[0, 64],
        chips=[0, 0],
        names={"310P3"},
        health=["OK", "OK"],
        bus=[B("01"), B("06")],
        memory=[(3841, 21527), (1764, 21527)],
        hugepages=[(996, 996), (0, 0)],
        power=[None, None],
        temp=[51, 48],
        device_ids=[0, 1],
        clean=True,
        processes_unknown=NO_TABLE,
    ),
    "310p3_24.1.0.1_8cards_noproc_vllm-ascend-issue2809.txt": Expect(
        "24.1.0.1",
        "24.1.0.1",
        "F2",
        npus=[0, 32, 96, 32768, 32800, 32832, 32864, 32896],
        chips=[0] * 8,
        names={"310P3"},
        health=["OK"] * 8,
        bus=[B(x) for x in ("01", "02", "04", "81", "82", "83", "84", "85")],
        memory=[(u, 21527) for u in (1844, 1846, 1845, 1846, 1844, 1843, 1844, 1846)],
        hugepages=[(0, 0)] * 8,
        power=[None] * 8,
        temp=[56, 58, 60, 56, 59, 60, 60, 61],
        device_ids=EIGHT_910,
        processes=[],
        clean=True,
    ),
    "310p3_25.2.1_npuid32768_truncated_lmdeploy-issue4272.txt": Expect(
        "25.2.1",
        "25.2.1",
        "F2",
        npus=[0, 32, 32768, 32800],
        chips=[0] * 4,
        names={"310P3"},
        health=["OK"] * 4,
        bus=[B("01"), B("02"), B("81"), B("82")],
        memory=[(19435, 21527), (1910, 21527), (19562, 21527), (1909, 21527)],
        hugepages=[(8728, 8728), (0, 0), (8808, 8808), (0, 0)],
        temp=[49, 49, 46, 48],
        device_ids=[0, 1, 2, 3],
        warnings=["capture ends before the closing line"],
        processes_unknown=NO_TABLE,
    ),
    "910B-oldgen-910-family_24.1.0_8npu_1proc_rst-notes.txt": Expect(
        "24.1.0",
        "24.1.0",
        "F3",
        npus=EIGHT_910,
        chips=[0] * 8,
        names={"910B"},
        health=["OK"] * 8,
        bus=[B(x) for x in ("C1", "81", "41", "01", "C2", "82", "42", "02")],
        memory=[(u, 15038) for u in (2382, 2353, 2355, 2352, 2353, 2356, 2380, 2402)],
        hbm=[(0, 32768)] * 7 + [(124, 32768)],
        power=[68.5, 65.1, 67.9, 65.6, 67.5, 63.2, 66.6, 65.0],
        temp=[40, 41, 41, 41, 41, 41, 41, 40],
        device_ids=[None] * 8,
        phy_ids=[None] * 8,
        processes=[(7, 0, 87322, "python3", 109)],
        clean=True,
    ),
    "910B-oldgen_23.0.rc2_8npu_NO-PROC-TABLE_container_vllm-ascend-issue573.txt": Expect(
        "23.0.rc2",
        "23.0.rc2",
        "F3",
        npus=EIGHT_910,
        chips=[0] * 8,
        names={"910B"},
        health=["OK"] * 8,
        bus=[B(x) for x in ("C1", "81", "41", "01", "C2", "82", "42", "02")],
        memory=[
            (1452, 15137),
            (1824, 15137),
            (1857, 15137),
            (2624, 15039),
            (1273, 15137),
            (2021, 15137),
            (1761, 15137),
            (2413, 15039),
        ],
        hbm=[(1, 32768)] + [(0, 32768)] * 7,
        processes=[],
        clean=True,
        processes_unknown=NO_TABLE,
    ),
    "910b2_24.1.1_8npu_NO-PROC-TABLE_k8s-pod_500001-report.txt": Expect(
        "24.1.1",
        "24.1.1",
        "F3",
        npus=EIGHT_910,
        chips=[0] * 8,
        names={"910B2"},
        health=["OK"] * 8,
        bus=[B(x) for x in ("C1", "01", "C2", "02", "81", "41", "82", "42")],
        memory=[(0, 0)] * 8,
        hbm=[(u, 65536) for u in (3532, 3400, 3401, 3398, 3396, 3397, 3397, 3402)],
        power=[86.9, 93.7, 92.5, 90.7, 93.6, 92.0, 91.3, 95.7],
        processes=[],
        clean=True,
        processes_unknown=NO_TABLE,
    ),
    "910b3_24.1.rc1.b030_8npu_ms-swift-docs.txt": Expect(
        "24.1.rc1.b030",
        "24.1.rc1.b030",
        "F3",
        npus=EIGHT_910,
        chips=[0] * 8,
        names={"910B3"},
        health=["OK"] * 8,
        bus=[B(x) for x in ("C1", "C2", "81", "82", "01", "02", "41", "42")],
        hbm=[(u, 65536) for u in (3318, 3314, 3314, 3314, 3314, 3314, 3314, 3315)],
        power=[101.8, 92.0, 102.0, 99.8, 98.6, 99.7, 103.8, 98.2],
        processes=[],
        clean=True,
        processes_unknown=NO_TABLE,
    ),
    "910b3_26.1.0_wide114_proc-in-container_testfixture.txt": Expect(
        "26.1.0",
        "26.1.0",
        "F4",
        npus=EIGHT_910,
        chips=[0] * 8,
        names={"910B3"},
        health=["OK"] * 8,
        bus=[B(x) for x in ("C1", "C2", "81", "82", "01", "02", "41", "42")],
        memory=[(0, 0)] * 8,
        hbm=[(u, 65536) for u in (8676, 3403, 3403, 3407, 3403, 3402, 3402, 3403)],
        hugepages=[(0, 0)] * 8,
        power=[100.0, 94.8, 90.0, 96.5, 96.5, 97.4, 97.8, 93.3],
        temp=[50, 48, 49, 48, 52, 49, 49, 51],
        processes=[(0, 0, 485946, "pytest", 5175, None)],
        clean=True,
    ),
    "910b4-1_25.0.rc1.1_8npu_noproc_vllm-ascend-issue3029.txt": Expect(
        "25.0.rc1.1",
        "25.0.rc1.1",
        "F3",
        npus=EIGHT_910,
        chips=[0] * 8,
        names={"910B4-1"},
        health=["OK"] * 8,
        bus=[B(x) for x in ("C1", "C2", "81", "82", "01", "02", "41", "42")],
        hbm=[(u, 65536) for u in (3403, 3383, 3383, 3382, 3384, 3382, 3381, 3381)],
        processes=[],
        clean=True,
    ),
    "910b4-1_25.2.0_REDACTED-busid-xx_PARTIAL_hami-webui-issue47.txt": Expect(
        "25.2.0",
        "25.2.0",
        "F3",
        npus=[0, 1],
        chips=[0, 0],
        names={"910B4-1"},
        health=["OK", "OK"],
        bus=["0000:xx:00.0", "0000:xx:00.0"],
        hbm=[(3197, 65536)] * 2,
        power=[91.3, 88.1],
        temp=[33, 32],
        warnings=["capture ends before the closing line"],
        processes_unknown=NO_TABLE,
    ),
    "910b4-1_25.2.2_2npu_VLLMWorker_TP_vllm-ascend-issue5606.txt": Expect(
        "25.2.2",
        "25.2.2",
        "F3",
        npus=[0, 1],
        chips=[0, 0],
        names={"910B4-1"},
        health=["OK", "OK"],
        bus=[B("0E"), B("0F")],
        memory=[(0, 0)] * 2,
        hbm=[(61825, 65536)] * 2,
        processes=[(0, 0, 19334, "VLLMWorker_TP", 58472), (1, 0, 19341, "VLLMWorker_TP", 58472)],
        clean=True,
    ),
    "910b4-32G_24.1.1_PARTIAL_1panel-issue9472.txt": Expect(
        "24.1.1",
        "24.1.1",
        "F3",
        npus=[0, 1],
        chips=[0, 0],
        names={"910B4"},
        health=["OK", "OK"],
        bus=[B("C1"), B("C2")],
        hbm=[(26838, 32768), (29356, 32768)],
        power=[88.2, 87.0],
        warnings=["capture ends before the closing line"],
        processes_unknown=NO_TABLE,
    ),
    "910b4_atlas800IA2_25.0.rc1.1_8npu_noproc_blog-800IA2-driver-install.txt": Expect(
        "25.0.rc1.1",
        "25.0.rc1.1",
        "F3",
        npus=EIGHT_910,
        chips=[0] * 8,
        names={"910B4"},
        health=["OK"] * 8,
        bus=[B(x) for x in ("C1", "C2", "81", "82", "01", "02", "41", "42")],
        hbm=[(2654, 32768)] * 7 + [(2653, 32768)],
        temp=[33, 33, 33, 34, 39, 37, 38, 37],
        processes=[],
        clean=True,
    ),
    "910b_22.0.4.1_1npu_openEuler-GMEM-docs.txt": Expect(
        "22.0.4.1",
        "22.0.4.1",
        "F3",
        npus=[0],
        chips=[0],
        names={"910B"},
        health=["OK"],
        bus=[B("81")],
        memory=[(1979, 15039)],
        hbm=[(0, 32768)],
        power=[79.4],
        temp=[82],
        clean=True,
        processes_unknown=NO_TABLE,
    ),
    "a3-ascend910_25.2.0_busy_proc-empty-names_per-chip_vllm-ascend-issue3002.txt": Expect(
        "25.2.0",
        "25.2.0",
        "F3",
        npus=[n for n in EIGHT_910 for _ in (0, 1)],
        chips=[0, 1] * 8,
        names={"Ascend910"},
        health=["OK"] * 16,
        bus=[B(x) for x in A3_BUS],
        memory=[(0, 0)] * 16,
        hbm=[
            (u, 65536)
            for u in (
                61609,
                61625,
                61616,
                61619,
                61633,
                61623,
                61625,
                61628,
                61602,
                61618,
                61578,
                61603,
                61614,
                61623,
                61627,
                61631,
            )
        ],
        power=[211.3, None, 210.6, None, 205.7, None, 209.9, None, 219.9, None, 214.0, None, 201.9, None, 205.5, None],
        phy_ids=list(range(16)),
        device_ids=[None] * 16,
        process_count=23,
        clean=True,
    ),
    "a3-ascend910_26.0.rc2_wide114_proc_PARTIAL_vllm-ascend-issue12980.txt": Expect(
        "26.0.rc2",
        "26.0.rc2",
        "F4",
        npus=[0, 0, 7],
        chips=[0, 1, 1],
        names={"Ascend910"},
        health=["OK"] * 3,
        bus=[B("9D"), B("9F"), B("83")],
        hbm=[(3419, 65536), (2874, 65536), (31877, 65536)],
        power=[162.6, None, None],
        temp=[34, 34, 35],
        phy_ids=[0, 1, 15],
        processes=[(0, 0, 632268, "python3.1", 197, None)],
        warnings=["the capture skips lines here"],
        processes_unknown=CUT_AT + "7",
    ),
    "a3-ascend910_26.1.0.b061_wide114_proc-in-container_TWO-FRAGMENTS_nyaterm-issue268.txt": Expect(
        "26.1.0.b061",
        "26.1.0.b061",
        "F4",
        npus=[0, 7, 7],
        chips=[0, 0, 1],
        names={"Ascend910"},
        health=["OK"] * 3,
        bus=[B("9D"), B("81"), B("83")],
        hbm=[(15516, 65536), (15503, 65536), (15242, 65536)],
        power=[178.6, 172.0, None],
        temp=[50, 53, 52],
        phy_ids=[0, 14, 15],
        # the second process row is cut after its name: no memory
        processes=[(0, 0, 692318, "python3", 12417, None), (0, 1, 692318, "python3", None, None)],
        warnings=["capture ends before the closing line", "the capture skips lines here", "row cut short"],
        processes_unknown=CUT_AT + "7",
    ),
    "from_ascend_deployer_1.txt": Expect(
        "25.3.rc1.b020",
        "25.3.rc1.b020",
        "F3",
        npus=[0, 0],
        chips=[0, 1],
        names={"Ascend910"},
        health=["OK"] * 2,
        bus=[B("9D"), B("9F")],
        hbm=[(3099, 65536), (2885, 65536)],
        power=[161.9, None],
        phy_ids=[0, 1],
        processes=[],
        clean=True,
    ),
}

# other npu-smi captures holding a table, and the reference-only doc examples (read from /work/shared)
OTHER_EXPECTED: dict[Path, Expect] = {
    OTHER / "vllm-ascend_collect_env_FULL_910B4-1_25.2.2_CANN8.3.RC2_issue5606.txt": Expect(
        "25.2.2",
        "25.2.2",
        "F3",
        npus=[0, 1],
        chips=[0, 0],
        names={"910B4-1"},
        health=["OK", "OK"],
        bus=[B("0E"), B("0F")],
        hbm=[(61825, 65536)] * 2,
        processes=[(0, 0, 19334, "VLLMWorker_TP", 58472), (1, 0, 19341, "VLLMWorker_TP", 58472)],
        clean=True,
    ),
    REFERENCE / "npu_smi" / "ascend950_npu-smi-v2-layout_docs_driver-repo.txt": Expect(
        "x.x.x",
        "x.x.x",
        "F5",
        npus=[0],
        chips=[0],
        names={"xxx"},
        health=["OK"],
        bus=[B("91")],
        memory=[(0, 0)],
        hbm=[(4439, 86016)],
        hugepages=[(0, 0)],
        power=[204.4],
        temp=[56],
        processes=[],
        clean=True,
    ),
    REFERENCE / "npu_smi" / "910-class_23.0.5_Health-Warning_handedited_mind-cluster-docs.txt": Expect(
        "23.0.5",
        "23.0.5",
        "F3",
        npus=[0, 7],
        chips=[0, 0],
        names={"xxx"},
        health=["Warning", "OK"],
        bus=[B("61"), B("3D")],
        memory=[(920, 13553), (2346, 15567)],
        hbm=[(0, 32768)] * 2,
        power=[73.1, 67.0],
        warnings=["the capture skips lines here ('...')"],
        processes_unknown="the process table is cut",  # its rows are elided with '...'
    ),
}


def _table_files() -> set[str]:
    """Files of the npu_smi folder that hold table rows (lines starting with '|')."""
    return {
        p.name
        for p in NPU_SMI.glob("*.txt")
        if any(line.lstrip().startswith("|") for line in load_capture(p).splitlines())
    }


def test_every_table_capture_has_expectations() -> None:
    assert set(EXPECTED) == _table_files()


def _check(info: NpuInfo, want: Expect) -> None:
    assert info.npu_smi_version == want.tool
    assert info.driver_version == want.driver
    assert info.layout == want.layout
    chips = info.chips
    assert [c.npu for c in chips] == want.npus
    assert [c.chip for c in chips] == want.chips
    assert {c.name for c in chips} == want.names
    assert [c.health for c in chips] == want.health
    assert [c.bus_id for c in chips] == want.bus
    columns = {
        "memory": [(c.memory_used_mb, c.memory_total_mb) for c in chips],
        "hbm": [(c.hbm_used_mb, c.hbm_total_mb) for c in chips],
        "hugepages": [(c.hugepages_used, c.hugepages_total) for c in chips],
        "power": [c.power_w for c in chips],
        "temp": [c.temp_c for c in chips],
        "device_ids": [c.device_id for c in chips],
        "phy_ids": [c.phy_id for c in chips],
    }
    for name, got in columns.items():
        expected = getattr(want, name)
        if expected:
            assert got == expected, name
    procs = [(p.npu, p.chip, p.pid, p.name, p.memory_mb, p.container_pid) for p in info.processes]
    if want.process_count is not None:
        assert len(procs) == want.process_count
    else:
        assert [p[: len(w)] for p, w in zip(procs, want.processes)] == want.processes
        assert len(procs) == len(want.processes)
    for fragment in want.warnings:
        assert any(fragment in w for w in info.warnings), (fragment, info.warnings)
    notes = [w for w in info.warnings if w.startswith(PROCESSES_UNKNOWN)]
    assert processes_note(info) == want.processes_unknown
    assert info.processes_complete is (want.processes_unknown is None)
    assert notes == ([] if want.processes_unknown is None else [PROCESSES_UNKNOWN + want.processes_unknown])
    if want.clean:
        assert info.warnings == tuple(notes)
    assert info.errors == ()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_table(name: str) -> None:
    _check(parse_info(load_capture(NPU_SMI / name)), EXPECTED[name])


@pytest.mark.parametrize("path", sorted(OTHER_EXPECTED), ids=lambda p: p.name)
def test_other_table(path: Path) -> None:
    if not path.exists():
        pytest.skip(f"{path} is reference-only material and not available here")
    _check(parse_info(load_capture(path)), OTHER_EXPECTED[path])


def test_two_tables_in_one_capture() -> None:
    infos = parse_info_all(
        load_capture(NPU_SMI / "310b4_23.0.0_and_24.1.0_before-after-driver-change_davinci-mini-log.txt")
    )
    assert [i.driver_version for i in infos] == ["23.0.0", "24.1.0"]
    after = infos[1].chips[0]
    assert (after.power_w, after.temp_c, after.memory_used_mb, after.memory_total_mb) == (7.7, 53, 1327, 3514)
    # the "=== B ===" and prompt lines sit between two tables: not a gap inside one
    assert all("skips lines" not in w for i in infos for w in i.warnings)


def test_a3_process_table_details() -> None:
    info = parse_info(
        load_capture(NPU_SMI / "a3-ascend910_25.2.0_busy_proc-empty-names_per-chip_vllm-ascend-issue3002.txt")
    )
    procs = info.processes
    assert all(p.name is None for p in procs)  # the "Process name" cells are empty
    assert [(p.npu, p.chip, p.pid, p.memory_mb) for p in procs[:2]] == [(0, 0, 935440, 141), (0, 0, 936673, 141)]
    assert [(p.npu, p.chip) for p in procs].count((0, 0)) == 8
    assert (procs[8].npu, procs[8].chip, procs[8].pid, procs[8].memory_mb) == (0, 1, 929405, 58780)
    assert {p.npu for p in procs if p.pid == 930242} == {0, 1}  # same PID under two NPUs
    assert (procs[-1].npu, procs[-1].chip, procs[-1].pid, procs[-1].memory_mb) == (7, 1, 944268, 58782)


# --- "no process table" is not "no processes" -------------------------------------------------

ONE_PROC = "910B-oldgen-910-family_24.1.0_8npu_1proc_rst-notes.txt"  # NPUs 0-6 "No running", NPU 7 one process


def _lines(name: str) -> list[str]:
    return load_capture(NPU_SMI / name).splitlines(keepends=True)


def test_a_capture_cut_before_the_process_table_has_unknown_processes() -> None:
    lines = _lines(ONE_PROC)
    header = next(i for i, line in enumerate(lines) if "Process id" in line)
    info = parse_info("".join(lines[: header - 1]))  # up to the chips' closing line: looks whole
    assert len(info.chips) == 8 and info.processes == ()
    assert info.processes_complete is False
    assert processes_note(info) == NO_TABLE
    whole = parse_info("".join(lines))
    assert whole.processes_complete is True and processes_note(whole) is None


def test_a_process_table_cut_at_a_separator_names_the_npus_missing() -> None:
    lines = _lines(ONE_PROC)
    npu4 = next(i for i, line in enumerate(lines) if "No running processes found in NPU 4" in line)
    info = parse_info("".join(lines[:npu4]))  # ends on the "+====" line after NPU 3
    assert info.processes == () and info.processes_complete is False
    assert processes_note(info) == CUT_AT + "4, 5, 6, 7"
    assert not any("capture ends before the closing line" in w for w in info.warnings)  # it looks closed


def test_a_process_table_cut_inside_its_rows_is_unknown() -> None:
    lines = _lines("910b4-1_25.2.2_2npu_VLLMWorker_TP_vllm-ascend-issue5606.txt")
    assert lines[-1].startswith("+====")
    info = parse_info("".join(lines[:-1]))  # every NPU has its row, but the closing line is gone
    assert [(p.npu, p.pid) for p in info.processes] == [(0, 19334), (1, 19341)]
    assert info.processes_complete is False and processes_note(info) == "the process table is cut"
    row = next(i for i, line in enumerate(lines) if "19341" in line)
    cut = parse_info("".join(lines[:row]) + lines[row][:40])  # cut in the middle of NPU 1's row
    assert cut.processes_complete is False and processes_note(cut) == "the process table is cut"


def test_no_table_at_all_has_unknown_processes() -> None:
    info = parse_info(
        load_capture(CORPUS / "errors" / "dcmi_-8020_device_used_-9005_drvRetCode87_507899_container.txt")
    )
    assert info.processes == () and info.processes_complete is False
    assert processes_note(info) == "no whole npu-smi process table was read"


def test_950_process_rows_belong_to_chip_0() -> None:
    doc = REFERENCE / "npu_smi" / "ascend950_npu-smi-v2-layout_docs_driver-repo.txt"
    if not doc.exists():
        pytest.skip(f"{doc} is reference-only material and not available here")
    text = load_capture(doc)
    (line,) = [line for line in text.splitlines() if "No running processes found in NPU 0" in line]
    # a process row laid out on the process header's columns: | NPU ID | Process id | name | memory |
    header = next(line for line in text.splitlines() if "Process id" in line)
    bars = [i for i, ch in enumerate(header) if ch == "|"]
    values = ["0", "274911", "python3", "4021"]
    row = "".join(f"| {v}".ljust(bars[i + 1] - bars[i]) for i, v in enumerate(values)) + "|"
    assert len(row) == len(line)
    info = parse_info(text.replace(line, row))
    assert info.layout == "F5"
    assert [(p.npu, p.chip, p.pid, p.name, p.memory_mb) for p in info.processes] == [(0, 0, 274911, "python3", 4021)]
    assert {(p.npu, p.chip) for p in info.processes} <= {(c.npu, c.chip) for c in info.chips}
    assert info.processes_complete is True


# --- a table typed again by hand ---------------------------------------------------------------


def retyped(text: str) -> str:
    """What a user who retypes a table from a screenshot sends: runs of spaces collapsed to one,
    health "OK" typed with a zero."""
    return "".join(re.sub(r" {2,}", " ", line).replace("| OK |", "| 0K |") for line in text.splitlines(keepends=True))


RETYPED_NOTE = "health '0K' read as OK (digit 0 for letter O: a retyped table)"


def test_a_retyped_300i_duo_paste_gives_its_4_chips() -> None:
    # Two real 300I Duo tables (NPU 1 from ollama#5315, NPU 6 from vllm-ascend#1993) as one table
    # of two cards, then retyped.
    host = _lines("310p3-300iduo_24.1.rc2_host_PARTIAL_ollama-issue5315.txt")
    duo = _lines("310p3-300iduo_25.0.rc1.1_2chips_proc_vllm-ascend-issue1993.txt")
    closes = [i for i, line in enumerate(host) if line.startswith("+====")]
    npu1 = host[closes[0] + 1 : closes[1] + 1]  # NPU 1: chip 0, "+----", chip 1, "+===="
    first = next(i for i, line in enumerate(duo) if line.startswith("+===="))
    text = "".join(duo[: first + 1] + npu1 + duo[first + 1 :])
    assert parse_info(text).warnings == (PROCESSES_UNKNOWN + CUT_AT + "1",)
    info = parse_info(retyped(text))
    assert "| 1 310P3 | 0K | NA 59 0 / 0 |" in retyped(text)
    assert [(c.npu, c.chip, c.device_id, c.health, c.bus_id) for c in info.chips] == [
        (1, 0, 0, "OK", "0000:01:00.0"),
        (1, 1, 1, "OK", "0000:01:00.0"),
        (6, 0, 0, "OK", "0000:83:00.0"),
        (6, 1, 1, "OK", "0000:83:00.0"),
    ]
    assert info.chips == parse_info(text).chips
    assert [(p.npu, p.chip, p.pid, p.name, p.memory_mb) for p in info.processes] == [(6, 1, 293029, "python3.11", 6612)]
    assert info.warnings == (RETYPED_NOTE, PROCESSES_UNKNOWN + CUT_AT + "1")


@pytest.mark.parametrize("name", sorted(n for n, e in EXPECTED.items() if e.clean))
def test_retyped_tables_read_the_same(name: str) -> None:
    text = load_capture(NPU_SMI / name)
    plain, typed = parse_info(text), parse_info(retyped(text))
    assert typed.chips == plain.chips and typed.processes == plain.processes
    assert typed.processes_complete is plain.processes_complete
    assert typed.warnings == (RETYPED_NOTE,) + plain.warnings


@pytest.mark.parametrize(
    "text",
    [
        "status: 0K\nhealth 0K | all fine\n",
        "| 0K | 0K | 0K |\n| 0 | 0K |\n",
        "| 0 310P3 | 0N | NA 55 0 / 0 |\n| 0 0 | 0000:83:00.0 | 0 1175 / 44280 |\n",  # not a health word
        "| 0 310P3 | 00 | NA 55 0 / 0 |\n| 0 0 | 0000:83:00.0 | 0 1175 / 44280 |\n",
        "| 0 310P3 | 0 | NA 55 0 / 0 |\n| 0 0 | 0000:83:00.0 | 0 1175 / 44280 |\n",
    ],
)
def test_garbled_text_with_zeros_gives_no_chips(text: str) -> None:
    assert parse_info(text).chips == ()


PASTE_FORMS = {
    "tab-indented": lambda text: "".join("\t" + line for line in text.splitlines(keepends=True)),
    "markdown-indented": lambda text: "".join("    " + line for line in text.splitlines(keepends=True)),
    "crlf": lambda text: text.replace("\n", "\r\n"),
    "annotated": lambda text: "".join(f"line {n} ==> {line}" for n, line in enumerate(text.splitlines(keepends=True))),
    "prompt-and-sudo": lambda text: "$ sudo npu-smi info\n[sudo] password for user: \n" + text + "$ \n",
    # the shapes below are synthetic: none of the corpus or held-out captures has them
    "quoted-reply": lambda text: "".join("> " + line for line in text.splitlines(keepends=True)),
    "nested-quote": lambda text: "".join(">> " + line for line in text.splitlines(keepends=True)),
    "cat-n": lambda text: "".join(f"{n:6d}\t{line}" for n, line in enumerate(text.splitlines(keepends=True), 1)),
    "coloured": lambda text: (
        "\x1b]0;root@npu: ~\x07\x1b[1m"
        + re.sub(r"\b(OK|Warning|Alarm|Critical)\b", "\x1b[1;32m\\1\x1b[0m", text)
        + "\x1b[0m"
    ),
    "row-notes": lambda text: "".join(
        line.rstrip("\r\n") + "   # seen 10:42\n" if line.rstrip().endswith(("|", "+")) else line
        for line in text.splitlines(keepends=True)
    ),
}


@pytest.mark.parametrize("form", sorted(PASTE_FORMS))
@pytest.mark.parametrize("name", sorted(n for n, e in EXPECTED.items() if e.clean))
def test_pasted_forms_read_the_same(name: str, form: str) -> None:
    text = load_capture(NPU_SMI / name)
    plain, pasted = parse_info(text), parse_info(PASTE_FORMS[form](text))
    assert pasted.chips == plain.chips and pasted.processes == plain.processes
    assert (pasted.layout, pasted.driver_version, pasted.warnings) == (
        plain.layout,
        plain.driver_version,
        plain.warnings,
    )
    assert pasted.processes_complete is plain.processes_complete


# --- error outputs -------------------------------------------------------------------------------


def test_dcmi_8020_in_container() -> None:
    info = parse_info(
        load_capture(CORPUS / "errors" / "dcmi_-8020_device_used_-9005_drvRetCode87_507899_container.txt")
    )
    assert info.chips == ()
    assert [(e.kind, e.code) for e in info.errors] == [("device-busy", "-8020"), ("driver-error", "-9005")]
    busy = info.errors[0]
    assert busy.message == "dcmi model initialized failed, because the device is used. ret is -8020"
    assert "another process or another container" in (busy.meaning or "")
    assert "board type" in (info.errors[1].meaning or "")


def test_8020_then_other_output() -> None:
    text = load_capture(
        CORPUS / "errors" / "container_-8020_then_collect_env_drvRet87_507899_unknowsoctype_vllm-ascend-issue632.txt"
    )
    info = parse_info(text)
    assert [(e.kind, e.code) for e in info.errors] == [("device-busy", "-8020")]  # printed twice, reported once
    assert info.chips == ()


@pytest.mark.parametrize(
    ("line", "kind", "code", "meaning_part"),
    [
        ("dcmi module initialize failed. ret is -8005", "driver-error", "-8005", "inner error"),
        ("Invalid card id.", "invalid-argument", "Invalid card id", "npu-smi info -l"),
        (
            "npu-smi: error while loading shared libraries: libdrvdsmi_host.so: cannot open shared object file: "
            "No such file or directory",
            "missing-library",
            "libdrvdsmi_host.so",
            "/usr/local/Ascend/driver/lib64",
        ),
        ("bash: /usr/local/bin/npu-smi: Permission denied", "permission", None, "root"),
        (
            "bash: /usr/local/bin/npu-smi: No such file or directory",
            "not-found",
            None,
            "-v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi",
        ),
        ("bash: npu-smi: command not found", "not-found", None, "mounted from the host"),
        ("There is no NPU card on this server.", "no-device", None, "--device"),
        ("dcmi module initialize failed. ret is -8099", "driver-error", "-8099", "does not know"),
    ],
)
def test_error_lines(line: str, kind: str, code: Optional[str], meaning_part: str) -> None:
    (error,) = parse_info("root@host:~# npu-smi info\n" + line + "\n").errors
    assert (error.probe, error.kind, error.code, error.message) == ("npu-smi", kind, code, line)
    assert meaning_part in (error.meaning or "")


def test_driver_warning_keeps_the_table() -> None:
    table = load_capture(NPU_SMI / "910b4-1_25.2.2_2npu_VLLMWorker_TP_vllm-ascend-issue5606.txt")
    warning = (
        "[WARNING]The driver package may not be completely installed, which may cause function abnormal. "
        "Please reinstall it."
    )
    info = parse_info(warning + "\n" + table)
    assert len(info.chips) == 2 and info.errors == ()
    assert any(w.startswith(warning) and "Driver_Install_Status=complete" in w for w in info.warnings)


def test_every_message_of_the_npucli_catalog_is_recognised() -> None:
    catalog = REFERENCE / "errors" / "npu-smi_message_catalog_from_npucli_source.txt"
    if not catalog.exists():
        pytest.skip(f"{catalog} is reference-only material and not available here")
    formats = [line for line in load_capture(catalog).splitlines() if "ret is %d" in line]
    assert len(formats) == 4  # module initialize, model initialized (-8020), board type, failed to execute
    for fmt in formats:
        line = fmt.replace("%d", "-8005").replace("%s", "info")
        (error,) = parse_errors(line)
        assert error.code == "-8005" and error.meaning
    plain = [line for line in load_capture(catalog).splitlines() if line.startswith(("There is no", "Command or"))]
    assert len(plain) == 3
    for line in plain:
        (error,) = parse_errors(line)
        assert error.kind in ("no-device", "invalid-argument") and error.meaning
    (warning,) = [line for line in load_capture(catalog).splitlines() if line.startswith("[WARNING]")]
    assert parse_info(warning).warnings[0].startswith(warning)
    for code, meaning in DCMI_MEANINGS.items():  # every meaning is reachable through its message
        assert parse_errors(f"dcmi module initialize failed. ret is {code}")[0].meaning == meaning


# --- info -m, -t board, -l --------------------------------------------------------------------


def test_chip_map_910a1() -> None:
    entries = parse_chip_map(load_capture(NPU_SMI / "from_ascend_deployer_2.txt"))
    assert [(e.npu, e.chip, e.logic_id, e.name, e.phy_id) for e in entries] == [
        (0, 0, 0, "Ascend 910A", None),
        (1, 0, 1, "Ascend 910A", None),
        (2, 0, 2, "Ascend 910A", None),
    ]


def test_chip_map_with_mcu_rows() -> None:
    entries = parse_chip_map(load_capture(NPU_SMI / "from_ascend_deployer_3.txt"))
    assert [(e.npu, e.chip, e.logic_id, e.name) for e in entries] == [
        (0, 0, 0, "Ascend 910xx"),
        (0, 0, None, "MCU"),
        (1, 0, 1, "Ascend 910xx"),
        (1, 1, None, "MCU"),
        (2, 0, 2, "Ascend 910xx"),
        (2, 0, None, "MCU"),
    ]


def test_chip_map_a3_phy_id() -> None:
    entries = parse_chip_map(load_capture(NPU_SMI / "from_ascend_deployer_4.txt"))
    assert [(e.npu, e.chip, e.logic_id, e.phy_id, e.name) for e in entries] == [
        (0, 0, 0, 0, "Ascend910"),
        (0, 1, 1, 1, "Ascend910"),
        (0, 2, None, None, "Mcu"),
        (1, 0, 2, 2, "Ascend910"),
    ]


def test_chip_map_8_space_indent_and_padding() -> None:
    entries = parse_chip_map(load_capture(OTHER / "npu-smi_info_-m_910b4_atlas800IA2_blog.txt"))
    assert len(entries) == 16
    chips = [e for e in entries if e.logic_id is not None]
    assert [(e.npu, e.chip, e.logic_id, e.name) for e in chips] == [(n, 0, n, "Ascend 910B4") for n in range(8)]
    assert {(e.chip, e.name) for e in entries if e.logic_id is None} == {(1, "Mcu")}


def test_board_deployer() -> None:
    board = parse_board(load_capture(NPU_SMI / "from_ascend_deployer_5.txt"), 0)
    assert (board.npu, board.software_version, board.firmware_version, board.compatibility) == (
        0,
        "24.1.0.b062",
        "7.5.0.2.220",
        "OK",
    )
    assert (board.product_name, board.pci_device_id, board.pci_subsystem_id, board.chip_count) == (
        "IT21HMDC_Bin6x",
        "0xD802",
        "0x3002",
        1,
    )
    assert board.fields["PCIe Bus Info"] == "0000:C1:00.0"
    assert board.fields["Subsystem Vendor ID"] == "0x19E5"
    assert board.fields["Model"] == "NA"
    assert len(board.fields) == 19  # every key : value line kept


def _sections(path: Path) -> dict[str, str]:
    """The outputs of a multi-command fixture, keyed by the command in its '=== cmd ===' line."""
    sections: dict[str, str] = {}
    current = None
    for line in load_capture(path).splitlines():
        match = re.match(r"^=== (.*) ===$", line)
        if match:
            current = match.group(1)
            sections[current] = ""
        elif current is not None:
            sections[current] += line + "\n"
    return sections


TELEGRAF = OTHER / "npu-smi_info_-t_usages_board_temp_power_-l_910B-IT21HMDC_25.5.1_telegraf-fork-fixture.txt"


def test_board_telegraf_8_space_indent() -> None:
    board = parse_board(_sections(TELEGRAF)["npu-smi info -t board -i 0"], 0)
    assert (board.software_version, board.firmware_version, board.compatibility) == ("25.5.1", "7.8.0.6.201", "OK")
    assert (board.product_name, board.pci_device_id, board.pci_subsystem_id, board.chip_count) == (
        "IT21HMDC_Bin5",
        "0xD802",
        "0x3003",
        1,
    )
    assert board.fields["Serial Number"] == "1025C9048791"


def test_board_tab_indent() -> None:
    text = (
        "\tSoftware Version               : 23.0.5\n"
        "\tFirmware Version               : 7.1.0.7.220\n"
        "\tCompatibility                  : NOK\n"
    )
    board = parse_board(text, 3)
    assert (board.npu, board.software_version, board.firmware_version, board.compatibility) == (
        3,
        "23.0.5",
        "7.1.0.7.220",
        "NOK",
    )


def test_list() -> None:
    assert parse_list(load_capture(NPU_SMI / "from_ascend_deployer_6.txt")) == {8: 1}
    assert parse_list(load_capture(NPU_SMI / "from_ascend_deployer_7.txt")) == {0: 2}
    assert parse_list(_sections(TELEGRAF)["npu-smi info -l"]) == {n: 1 for n in range(8)}
    blog = load_capture(OTHER / "npu-smi_info_-l_and_upgrade_-b_mcu_910b4_atlas800IA2_blog.txt")
    assert parse_list(blog) == {n: 1 for n in range(8)}


def test_key_values_keep_values_with_colons() -> None:
    assert ("PCIe Bus Info", "0000:C1:00.0") in parse_key_values(load_capture(NPU_SMI / "from_ascend_deployer_5.txt"))


# A reader's "# ..." note after an aligned value (seen on a 950 -t board / -t memory capture in
# tests/data/npu_smi_heldout/); the three texts below are synthetic variants of it.
@pytest.mark.parametrize(
    ("line", "key", "value"),
    [
        ("Software Version               : 24.1.rc2     # the driver", "Software Version", "24.1.rc2"),
        ("\tHBM Capacity(MB)               : 32768  #32G, no DDR", "HBM Capacity(MB)", "32768"),
        ("> Board ID                       : 0x33\t\t# Atlas 300I Duo", "Board ID", "0x33"),
    ],
)
def test_key_values_drop_a_readers_note(line: str, key: str, value: str) -> None:
    assert parse_key_values(line) == [(key, value)]


def test_key_values_keep_a_hash_that_is_part_of_the_value() -> None:
    text = "Product Name                   : Card #2\nError Information              : code#1 at 0x1\n"
    assert parse_key_values(text) == [("Product Name", "Card #2"), ("Error Information", "code#1 at 0x1")]


@pytest.mark.parametrize(
    "text",
    [
        "\x1b[1m        Software Version               : \x1b[0m25.0.rc1.1\n",
        "> > \tSoftware Version               : 25.0.rc1.1\n",
        "\x1b[33m        Software Version               : 25.0.rc1.1   # from the host\x1b[0m\n",
    ],
)
def test_board_read_through_colour_quotes_and_notes(text: str) -> None:
    assert parse_board(text, 0).software_version == "25.0.rc1.1"


def test_chip_map_read_through_a_quoted_reply_and_colour() -> None:
    text = (
        ">     NPU ID   Chip ID   Chip Logic ID   Chip Name\n"
        ">     4        0         2               \x1b[32mAscend 910B1\x1b[0m\n"
        ">     4        1         -               Mcu\n"
    )
    assert [(e.npu, e.chip, e.logic_id, e.name) for e in parse_chip_map(text)] == [
        (4, 0, 2, "Ascend 910B1"),
        (4, 1, None, "Mcu"),
    ]


def test_coloured_error_lines_keep_their_code() -> None:
    text = (
        "\x1b[31mDrvMngGetConsoleLogLevel failed. (ret=4)\x1b[0m\n"
        "\x1b[31mdcmi module initialize failed. ret is -8005\x1b[0m\n"
    )
    assert [e.code for e in parse_info(text).errors] == ["-8005"]


@pytest.mark.parametrize(
    "text",
    [
        "1) + see the table below\n2) | then run it again\n",  # a numbered list is not a table
        "3 + 4 = 7\n> quoted prose | with a bar\n",
        "\x1b[32m+ done\x1b[0m\n",
    ],
)
def test_prefixed_prose_is_not_a_table(text: str) -> None:
    info = parse_info(text)
    assert info.chips == () and "no npu-smi info table found in the text" in info.warnings


def test_a_note_does_not_mend_a_cut_row() -> None:
    """A row cut before its closing border stays cut when a note follows (the note is not after a "|")."""
    text = (
        "| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|\n"
        "| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |\n"
        "| 3     910B1               | OK            | 101.2       40                0    / 0             |\n"
        "| 0                         | 0000:C1:00.0  | 0           0    / 0          4017 /   # rest lost\n"
    )
    info = parse_info(text)
    assert [(c.npu, c.bus_id, c.hbm_total_mb) for c in info.chips] == [(3, "0000:C1:00.0", None)]
    assert any(w.startswith("row cut short") for w in info.warnings)


ALL_NPU_SMI_TEXTS = (
    sorted(NPU_SMI.glob("*.txt")) + sorted(OTHER.glob("*.txt")) + sorted((CORPUS / "errors").glob("*.txt"))
)


@pytest.mark.parametrize("path", ALL_NPU_SMI_TEXTS, ids=lambda p: p.name)
def test_every_parser_accepts_every_capture(path: Path) -> None:
    """The topo and template captures, whole multi-command files, error logs: nothing crashes."""
    text = load_capture(path)
    assert isinstance(parse_info(text), NpuInfo)
    assert all(isinstance(i, NpuInfo) for i in parse_info_all(text))
    parse_chip_map(text)
    parse_board(text, 0)
    parse_list(text)


def test_non_table_captures_give_no_chips() -> None:
    for name in (
        "npu-smi_info_-t_template-info_and_info-vnpu_310P3_22.0.4_hami-website.txt",
        "npu-smi_info_-t_topo_910b3_ms-swift-docs.txt",
    ):
        info = parse_info(load_capture(OTHER / name))
        assert info.chips == () and info.processes == ()
        assert info.warnings == ("no npu-smi info table found in the text",)


def test_parsed_info_survives_serde() -> None:
    info = parse_info(
        load_capture(NPU_SMI / "a3-ascend910_26.1.0.b061_wide114_proc-in-container_TWO-FRAGMENTS_nyaterm-issue268.txt")
    )
    info = NpuInfo(
        **{**info.__dict__, "boards": (parse_board(load_capture(NPU_SMI / "from_ascend_deployer_5.txt"), 0),)}
    )
    assert serde.from_data(NpuInfo, serde.to_data(info)) == info


# --- property tests: never raise, always an NpuInfo -----------------------------------------------

TEXTS = [load_capture(p) for p in ALL_NPU_SMI_TEXTS]
TABLE_TEXTS = [load_capture(NPU_SMI / name) for name in sorted(EXPECTED)]


def test_huge_numbers_are_not_ids() -> None:
    text = "| " + "9" * 5000 + "  310P3 | OK | NA  50  0 / 0 |\n| 0  0 | NA | 0  " + "1" * 5000 + " / 3 |\n"
    assert parse_info(text).chips == ()


def _parse_everything(text: str) -> None:
    info = parse_info(text)
    assert isinstance(info, NpuInfo)
    assert all(isinstance(c.npu, int) and isinstance(c.chip, int) for c in info.chips)
    assert parse_info_all(text)
    parse_chip_map(text)
    parse_board(text, 0)
    parse_list(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])  # a loaded CI machine
@given(st.text())
def test_arbitrary_text_never_raises(text: str) -> None:
    _parse_everything(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet="|+-= /:\t\n0123456789.ANOKBPabcdeHhlmnpsuVrio()%", max_size=400))
def test_table_like_text_never_raises(text: str) -> None:
    _parse_everything(text)


@pytest.mark.parametrize("index", range(len(TABLE_TEXTS)))
def test_every_line_prefix_of_every_table_parses(index: int) -> None:
    lines = TABLE_TEXTS[index].splitlines(keepends=True)
    for stop in range(len(lines) + 1):
        _parse_everything("".join(lines[:stop]))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_truncated_prefixes_never_raise(data: st.DataObject) -> None:
    text = data.draw(st.sampled_from(TEXTS))
    _parse_everything(text[: data.draw(st.integers(0, len(text)))])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_garbled_captures_never_raise(data: st.DataObject) -> None:
    chars = list(data.draw(st.sampled_from(TABLE_TEXTS)))
    for _ in range(data.draw(st.integers(1, 30))):
        if not chars:
            break
        at = data.draw(st.integers(0, len(chars) - 1))
        if data.draw(st.booleans()):
            del chars[at]
        else:
            chars[at] = data.draw(st.sampled_from("|+-=/ \t\n0123456789xNA:"))
    _parse_everything("".join(chars))
