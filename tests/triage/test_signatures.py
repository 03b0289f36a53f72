"""compat/triage/signatures.toml: the shipped table is valid, and a bad one names its key path."""

from __future__ import annotations

import importlib.util
import re
import shutil

import pytest

from ascenv import errors, paths
from ascenv.checks import load_checks
from ascenv.triage.families import DOCTOR_LAYER
from ascenv.triage.signatures import CAUSES, LAYERS, _backtracking_risk, load

SHIPPED = paths.data_dir("compat") / "triage" / "signatures.toml"

GOOD = """schema = 1

[[signature]]
id = "one"
layer = "npu"
literals = ["ret is -8020"]
summary = "s"
source = ["https://github.com/vllm-project/vllm-ascend/issues/632"]

[[signature.cause]]
cause = "device_busy"
weight = 0.9
checks = ["ASC-NPU-SMI"]
fix = "f"
"""


def write(tmp_path, text: str):
    (tmp_path / "signatures.toml").write_text(text)
    return tmp_path


def test_shipped_table_loads_with_every_check_registered():
    table = load(known_checks=set(load_checks()))
    assert len(table.signatures) >= 30
    for sig in table.signatures:
        assert sig.layer in LAYERS and sig.source and sig.causes
        assert all(url.startswith("https://") for url in sig.source)
        assert all(rule.cause in CAUSES for rule in sig.causes)
    # the codes the issue names each have an entry
    for code in ("EZ1001", "EZ3002", "EZ3003", "507008", "507899", "500001", "507033", "-8020", "-8005", "EL0004"):
        assert table.by_code(code), code


def test_shared_messages_list_several_causes():
    table = load()
    for code in ("500001", "EH9999", "507033", "-8005"):
        (sig,) = table.by_code(code)
        assert len(sig.causes) >= 2, code


def test_good_minimal_table(tmp_path):
    table = load(write(tmp_path, GOOD), known_checks={"ASC-NPU-SMI"})
    assert [s.id for s in table.signatures] == ["one"]


@pytest.mark.parametrize(
    "change, message",
    [
        (
            ('cause = "device_busy"', 'cause = "busy"'),
            "signature[0].cause[0].cause: expected one of driver_cann_mismatch",
        ),
        (('layer = "npu"', 'layer = "gpu"'), "signature[0].layer: expected one of npu"),
        (("weight = 0.9", "weight = 2"), "signature[0].cause[0].weight: expected a number from 0 to 1, found 2"),
        (("weight = 0.9", 'weight = "high"'), "signature[0].cause[0].weight: expected a number from 0 to 1"),
        (('checks = ["ASC-NPU-SMI"]', 'checks = ["ASC-NPU-SMY"]'), "signature[0].cause[0].checks[0]: no doctor check"),
        (('source = ["https://', 'source = ["http://'), "signature[0].source[0]: expected an https:// URL"),
        (('source = ["https://github.com/vllm-project/vllm-ascend/issues/632"]\n', ""), "signature[0].source: missing"),
        (('summary = "s"', 'summary = "s"\nregex = "(a+)+$"'), "signature[0].regex: nested quantifier"),
        (('summary = "s"', 'summary = "s"\nregex = "(a)\\\\1"'), "signature[0].regex: back-reference"),
        (('summary = "s"', 'summary = "s"\nregex = "(unclosed"'), "signature[0].regex: not a valid regular expression"),
        (
            ('summary = "s"', 'summary = "s"\nlitterals = ["x"]'),
            "signature[0].litterals: unknown key; perhaps you meant 'literals'",
        ),
        (('fix = "f"', 'fix = "f"\npackage = "numpy"'), "signature[0].cause[0].package_min: missing"),
        (("schema = 1", "schema = 2"), "schema: this ascenv reads schema 1"),
    ],
)
def test_bad_value_names_its_key_path(tmp_path, change, message):
    old, new = change
    assert old in GOOD
    with pytest.raises(errors.DataFileError) as caught:
        load(write(tmp_path, GOOD.replace(old, new, 1)), known_checks={"ASC-NPU-SMI"})
    assert message in str(caught.value)
    assert str(caught.value).startswith(f"{tmp_path.name}/signatures.toml: ")
    assert caught.value.exit_code == errors.EXIT_USAGE


def test_duplicate_id(tmp_path):
    text = GOOD + GOOD.split("\n", 1)[1]
    with pytest.raises(errors.DataFileError, match=r"signature\[1\]\.id: 'one' used twice"):
        load(write(tmp_path, text))


def test_not_toml(tmp_path):
    with pytest.raises(errors.DataFileError, match="not valid TOML"):
        load(write(tmp_path, "[[signature]\n"))


def test_shipped_file_is_in_the_compat_data(tmp_path):
    # the compatibility loader reads only its own files and accepts this subdirectory beside them
    from ascenv import compat

    copy = tmp_path / "compat"
    shutil.copytree(paths.data_dir("compat"), copy)
    assert (copy / "triage" / "signatures.toml").is_file()
    compat.load(copy)


@pytest.mark.parametrize(
    "pattern, risky",
    [
        (r"error code is 500001", None),
        (r"(?:code is|ErrCode=)507033\b", None),
        (r"HCCL function error: \w+", None),
        (r"(a+)+", "nested quantifier"),
        (r"(?:x*y)*", "nested quantifier"),
        (r"(a|b+)*", "nested quantifier"),
        (r"(a)\1", "back-reference"),
    ],
)
def test_backtracking_risk(pattern, risky):
    re.compile(pattern)
    assert _backtracking_risk(pattern) == risky


def test_every_shipped_regex_is_linear():
    for sig in load().signatures:
        if sig.regex is not None:
            assert _backtracking_risk(sig.regex.pattern) is None, sig.id


LAYERS_GOOD = """schema = 1

[[meaning]]
id = "library_unknown"
summary = "s"
source = ["https://man7.org/linux/man-pages/man8/ld.so.8.html"]

[[meaning.cause]]
cause = "other"
weight = 0.4
checks = []
fix = "f"

[[meaning]]
id = "memory_held_elsewhere"
summary = "s"
source = ["https://man7.org/"]

[[meaning.cause]]
cause = "device_busy"
weight = 0.9
checks = ["ASC-NPU-SMI"]
fix = "f"

[[meaning]]
id = "memory_exhausted"
summary = "s"
source = ["https://man7.org/"]

[[meaning.cause]]
cause = "out_of_memory"
weight = 0.9
checks = []
fix = "f"

[[library]]
patterns = ["libascend_hal.so*"]
layer = "driver"
package = "driver"
missing = "library_unknown"
source = ["https://man7.org/"]

[[namespace]]
names = ["c10"]
layer = "torch"
source = ["https://man7.org/"]

[[importer]]
names = ["torch_npu"]
library = "libascend_hal.so"
source = ["https://man7.org/"]

[[undefined]]
symbol = ["torch"]
library = ["framework"]
meaning = "library_unknown"
""" + "".join(f'\n[[missing]]\nlayer = "{layer}"\nmeaning = "library_unknown"\n' for layer in DOCTOR_LAYER)

FAMILY = GOOD.replace('id = "one"', 'id = "one"\nfamily = "missing_library"')


def test_shipped_layers_table_loads():
    table = load(known_checks=set(load_checks()))
    assert table.layers is not None and table.layers.library("libascend_hal.so.1").layer == "driver"
    assert table.layers.library("/usr/local/Ascend/nnal/atb/latest/lib/libanything.so").layer == "nnal"
    assert table.layers.symbol_layer("_ZN7c10_npu9getDeviceEv") == "torch_npu"
    assert {s.family for s in table.signatures} >= {"missing_library", "undefined_symbol", "memory"}


@pytest.mark.parametrize(
    "change, message",
    [
        (('layer = "driver"', 'layer = "drivers"'), "library[0].layer: expected one of driver"),
        (('missing = "library_unknown"', 'missing = "nope"'), "library[0].missing: no [[meaning]] with id 'nope'"),
        (('names = ["c10"]', "names = []"), "namespace[0].names: expected names or prefixes"),
        (('symbol = ["torch"]', 'symbol = ["tensor"]'), "undefined[0].symbol[0]: expected one of driver"),
        (('library = ["framework"]', 'library = ["x"]'), "undefined[0].library[0]: expected one of driver"),
        (('cause = "out_of_memory"', 'cause = "oom"'), "meaning[2].cause[0].cause: expected one of"),
        (('id = "memory_exhausted"', 'id = "memory_gone"'), "meaning: no [[meaning]] with id 'memory_exhausted'"),
        (('patterns = ["libascend_hal.so*"]', 'paterns = ["x"]'), "library[0].patterns: missing"),
        (('layer = "system"\nmeaning', 'layer = "driver"\nmeaning'), "missing[8].layer: 'driver' listed twice"),
        (
            ('layer = "python"\nmeaning = "library_unknown"', 'layer = "python"\nmeaning = "gone"'),
            "missing[7].meaning: no",
        ),
        (('[[missing]]\nlayer = "system"', '[[other]]\nlayer = "system"'), "no [[missing]] row for layer 'system'"),
        (('library = "libascend_hal.so"', 'library = "libnothing.so"'), "importer[0].library: no library row"),
        (('names = ["torch_npu"]', "names = []"), "importer[0].names"),
        (
            ('source = ["https://man7.org/"]\n\n[[undefined]]', 'source = ["ftp://x"]\n\n[[undefined]]'),
            "importer[0].source",
        ),
    ],
)
def test_bad_layers_value_names_its_key_path(tmp_path, change, message):
    old, new = change
    assert old in LAYERS_GOOD
    (tmp_path / "layers.toml").write_text(LAYERS_GOOD.replace(old, new, 1))
    with pytest.raises(errors.DataFileError) as caught:
        load(write(tmp_path, FAMILY), known_checks={"ASC-NPU-SMI"})
    assert message in str(caught.value)
    assert str(caught.value).startswith(f"{tmp_path.name}/layers.toml: ")


def test_family_signature_needs_the_layers_table(tmp_path):
    with pytest.raises(errors.DataFileError, match="layers.toml: missing"):
        load(write(tmp_path, FAMILY), known_checks={"ASC-NPU-SMI"})
    bad = FAMILY.replace('family = "missing_library"', 'family = "spelling"')
    with pytest.raises(errors.DataFileError, match=r"signature\[0\]\.family: expected one of undefined_symbol"):
        load(write(tmp_path, bad), known_checks={"ASC-NPU-SMI"})


# --- rules over a kind of message the text alone cannot decide: three variants each, none of them
# from the corpus (other device ids, other HCCL calls, log prefixes, Chinese text, ANSI colours)


def _ranked(text: str) -> tuple[list[tuple[str, str]], str]:
    import io

    from ascenv.triage import load as load_table
    from ascenv.triage import triage

    result = triage(io.BytesIO(text.encode()), None, None, load_table(known_checks=set(load_checks())))
    summaries = " ".join(s.summary for s in result.signatures)
    return [(c.cause, c.detail or "") for c in result.causes], summaries


@pytest.mark.parametrize(
    "text",
    [
        "[rank3]: RuntimeError: HcclCommInitRootInfoConfig(numRanks, &rootInfo, rank, config), error code is 19\n",
        "\x1b[31mERROR 05-02 11:20:07 [worker.py:88] ra init failed, return[19] devicePhyId_[0], "
        "nicPosition[1]\x1b[0m\n",
        "(EngineCore pid=91) 初始化失败：HcclGetRootInfo(&rootId), error code is 19\n",
    ],
)
def test_hccp_start_failure_names_the_user_first_and_says_what_would_decide(text):
    causes, summaries = _ranked(text)
    assert [c for c, _ in causes[:3]] == ["permission", "device_busy", "other"], causes
    assert causes[2][1].startswith("hccl_nic_config")
    assert "not decidable from the text" in summaries and "/etc/passwd" in summaries


def test_an_hccl_code_ending_in_19_is_not_network():
    causes, _ = _ranked("HcclCommInitRootInfo(n, &info, r, &comm), error code is 195\n")
    assert "permission" not in [c for c, _ in causes]


@pytest.mark.parametrize(
    "text",
    [
        "RuntimeError: SetDevice:torch_npu/csrc/core/npu/NPUFunctions.cpp:96 NPU function error: "
        "c10_npu::SetDevice(device), error code is 507033\n        open device 5 failed, runtime result = 507033.\n",
        "[2026-03-01 10:00:01] [ERROR] [mindie] aclrtSetDevice failed : 507033, open device 2 failed\n",
        "设备打开失败：open device 7 failed, runtime result = 507033.\n",
    ],
)
def test_device_setup_error_keeps_the_container_in_the_top_three(text):
    causes, summaries = _ranked(text)
    assert "container_no_device" in [c for c, _ in causes[:3]], causes
    assert "not decidable from the text" in summaries and "ASCEND_RT_VISIBLE_DEVICES" in summaries


@pytest.mark.parametrize(
    "text",
    [
        "RuntimeError: SUSPECT REMOTE ERROR, error code is 507057\n",
        "[rank1]: E0407 acl::AclrtSynchronizeStreamWithTimeout(stream), error code is 507057\n",
        "\x1b[33m(Worker_TP2 pid=77)\x1b[0m rtStreamSynchronize execute failed, reason=[suspect remote error]\n",
    ],
)
def test_suspect_remote_error_lists_the_peer_and_a_kernel_fault(text):
    causes, summaries = _ranked(text)
    assert [c for c, _ in causes[:2]] == ["other", "framework_build_mismatch"], causes
    assert causes[0][1].startswith("peer_device_fault")
    assert "not decidable from the text" in summaries


def test_507057_inside_another_number_is_no_remote_error():
    causes, _ = _ranked("allocated block at offset 15070570 failed: error code is 15070571\n")
    assert "framework_build_mismatch" not in [c for c, _ in causes]


def test_the_literal_set_names_the_same_candidates_as_one_in_per_literal():
    import dataclasses
    import random

    table = load()
    plain = dataclasses.replace(table)
    plain.__dict__["_literal_set"] = None  # the fallback without google-re2
    literals = [literal for literal, _ in table._by_literal]
    rng = random.Random(24)
    lines = [*literals, "", "no literal here", "找不到 数据 \x1b[0m"]
    for _ in range(300):
        lines.append(" ".join(rng.choice([*literals, "noise", "19", "(", "数据"]) for _ in range(rng.randint(1, 4))))
    for line in lines:
        assert table.candidates(line) == plain.candidates(line), line
    if importlib.util.find_spec("re2") is not None:
        assert table._literal_set is not None


# --- a kernel that faulted on this device (issue #24: tilelang-ascend#334's kind), a JIT front-end
# as context, HCCL's device-side timeouts, Ascend C's per-product types: three variants each, none
# from the corpus, and the other cause's log still ranked to the other cause

ESC = "\x1b"
TRITON_FRAME = (
    '  File "/usr/local/lib/python3.11/site-packages/triton/backends/ascend/driver.py", line 310, in __call__\n'
)


@pytest.mark.parametrize(
    "text",
    [
        f"{ESC}[33m(Worker_TP1 pid=55){ESC}[0m WARNING: there might be a device assert failure or timeout.\n"
        "RuntimeError: ACL stream synchronize failed, error code is 507057\n",
        "内核执行失败：device-side assert triggered in kernel add_kernel_0d1d2d\n",
        "[2026-02-10 10:11:12.123+08:00] [4321] [ERROR] [model] Device assert failed in fused_rope, stream 3\n",
    ],
)
def test_a_device_assert_names_the_kernel_s_own_check_first_and_a_build_for_another_cann_second(text):
    causes, summaries = _ranked(text)
    assert [c for c, _ in causes[:2]] == ["other", "framework_build_mismatch"], causes
    assert causes[0][1].startswith("kernel_fault"), causes
    assert "not decidable from the text" in summaries


def test_a_remote_error_without_a_local_fault_is_still_the_peer_first():
    # the negative: a multi-device job whose peer failed, no assert or kernel exception here
    causes, _ = _ranked(
        "[rank2]: RuntimeError: SUSPECT REMOTE ERROR, EE8888: Inner Error!\n"
        "[rank2]: rtStreamSynchronize execute failed, reason=[suspect remote error]\n"
        "  tl.device_assert(pid >= 0)  # a source line quoted in the traceback is no assert failure\n"
    )
    assert causes[0] == ("other", causes[0][1]) and causes[0][1].startswith("peer_device_fault"), causes


@pytest.mark.parametrize(
    "text",
    [
        "RuntimeError: ACL stream synchronize failed, error code:507035\n",
        "算子执行异常：Kernel task happen error, retCode=0x26, [aicore exception].\n",
        f"{ESC}[31m(EngineCore pid=8) [Error]: The vector core execution is abnormal.{ESC}[0m\n",
    ],
)
def test_a_kernel_exception_alone_is_a_kernel_fault_first(text):
    causes, summaries = _ranked(text)
    assert [c for c, _ in causes[:2]] == ["other", "framework_build_mismatch"], causes
    assert causes[0][1].startswith("kernel_fault") and "not decidable from the text" in summaries


@pytest.mark.parametrize(
    "text",
    [
        TRITON_FRAME + "RuntimeError: NPU function error: error code is 507015\n",
        "(Worker_TP0 pid=12) INFO compiling with torch_npu/_inductor ...\n"
        "(Worker_TP0 pid=12) ERROR there is an exception of aivec error, core id is 3\n",
        # the JIT front-end after the fault, and a remote error instead of a kernel exception
        "RuntimeError: SUSPECT REMOTE ERROR, EE8888: Inner Error!\n"
        '  File "/opt/tilelang-ascend/tilelang/jit/adapter/npu.py", line 88, in run\n',
    ],
)
def test_a_jit_front_end_in_the_log_ranks_the_build_for_another_cann_first(text):
    causes, _ = _ranked(text)
    assert causes[0][0] == "framework_build_mismatch", causes


@pytest.mark.parametrize(
    "text",
    [
        "bishengir-compile --target=Ascend910B3 kernel.ttadapter.mlir -o kernel.o\n",
        TRITON_FRAME,
        # a cause of another kind in a triton-ascend log keeps its rank: the context raises only
        # a build for another CANN
        TRITON_FRAME + "OSError: [Errno 28] No space left on device: '/root/.triton/cache/ab/kernel.o'\n",
    ],
)
def test_a_jit_front_end_alone_names_no_cause(text):
    causes, _ = _ranked(text)
    assert "framework_build_mismatch" not in [c for c, _ in causes], causes


HCCL_AICPU = [
    "[WARNING] HCCL(1201,aicpu_scheduler):2026-03-02-10:00:01.000.001 [aicpu_kfc_rpc_server.cc:412] "
    "[1210][AicpuKfcRpcServer][ReadAddrMsg] ReadValidMsg[3] timeout 120s\n",
    "通信超时告警：[aicpu_kfc_process.cc:90] AicpuKfc wait host msg timed out\n",
    f"{ESC}[33m[WARNING]{ESC}[0m HCCL(77,aicpu_scheduler): [aicpu_kfc_utils.cc:201] recv TimeOut 1800 s\n",
]


@pytest.mark.parametrize("text", HCCL_AICPU)
def test_hccl_aicpu_timeouts_list_the_driver_without_deciding(text):
    causes, summaries = _ranked(text)
    assert causes[0][0] == "other" and causes[0][1].startswith("collective_stall"), causes
    assert "driver_cann_mismatch" in [c for c, _ in causes[:3]], causes
    assert "not decidable from the text" in summaries


def test_hccl_aicpu_lines_without_a_timeout_name_nothing():
    causes, _ = _ranked("[WARNING] HCCL(9,aicpu_scheduler): [aicpu_kfc_utils.cc:397] ErrToWarn: SendMsg[0]: 18,0,0x0\n")
    assert causes == [], causes


def test_hccl_aicpu_timeout_driver_ruled_out_on_a_healthy_machine(tmp_path):
    import io

    from ascenv import compat
    from ascenv.triage import load as load_table
    from ascenv.triage import triage
    from tests.triage.machines import machine

    table = load_table(known_checks=set(load_checks()))
    result = triage(io.BytesIO(HCCL_AICPU[0].encode()), machine(None, tmp_path), compat.load(), table)
    driver = next(c for c in result.causes if c.cause == "driver_cann_mismatch")
    assert driver.confirmed is False and result.causes[-1] is driver, [(c.cause, c.confirmed) for c in result.causes]


@pytest.mark.parametrize(
    "text",
    [
        'kernel_operator.h:120: error: static_assert failed: "fp8_e4m3fn_t is not supported."\n',
        "编译失败：hifloat8_t not supported，当前 SOC_VERSION=Ascend910B3\n",
        "[ 45%] Building CCE object ops/quant.cpp.o\n"
        "/src/ops/quant.cpp:12: error: int4x2_t unsupported for this target\n",
    ],
)
def test_an_ascendc_type_the_target_lacks_lists_the_soc_and_the_build_target(text):
    causes, summaries = _ranked(text)
    assert [c for c, _ in causes[:2]] == ["soc_unsupported", "other"], causes
    assert causes[1][1].startswith("build_target_soc") and "not decidable from the text" in summaries


def test_an_ascendc_type_named_without_a_failure_is_nothing():
    causes, _ = _ranked("using Int4 = AscendC::int4b_t;  // int4b_t is supported on Ascend950\n")
    assert causes == [], causes


def test_a_context_signature_cannot_be_of_a_family(tmp_path):
    bad = GOOD.replace('summary = "s"', 'summary = "s"\nboost = true\nfamily = "memory"')
    with pytest.raises(errors.DataFileError, match=r"signature\[0\]\.boost: a context signature cannot be of a family"):
        load(write(tmp_path, bad), known_checks={"ASC-NPU-SMI"})


# --- kinds from held-out batch C (tests/data/triage_heldout_c): three variants each that neither
# corpus contains (other names, numbers, SoCs, releases, log prefixes, Chinese text, ANSI colours)
# and one log of another cause that names the kind's words without its failure

DISK = "OSError: [Errno 28] No space left on device: '/root/.cache/x'\n"


def _top(text: str) -> list[tuple[str, str]]:
    return _ranked(text)[0]


@pytest.mark.parametrize(
    "text",
    [
        "ImportError: cannot import name 'JITFunction' from 'triton.runtime.jit' "
        "(/usr/local/lib/python3.10/site-packages/triton/runtime/jit.py)\n",
        f"{ESC}[31m(Worker_TP2 pid=812) ERROR 11-02 10:01:02 [multiproc_executor.py:611] RuntimeError: 2 active "
        f"drivers ([CudaDriver, NPUDriver]). There should only be one.{ESC}[0m\n",
        "导入失败：ImportError: cannot import name 'get_npu_properties' from 'triton.backends.ascend.utils'\n",
    ],
)
def test_a_triton_api_missing_from_the_installed_triton_is_a_triton_release_mismatch(text):
    causes = _top(text)
    assert causes[0] == ("framework_build_mismatch", causes[0][1]) and causes[0][1].startswith("triton_release"), causes


@pytest.mark.parametrize(
    "text",
    [
        "ModuleNotFoundError: No module named 'triton.backends.ascend'\n",
        "(EngineCore_DP0 pid=77) ERROR 03-01 10:00:00 [core.py:700] ModuleNotFoundError: No module named 'triton'\n",
        "torch._inductor.exc.InductorError: 模块缺失 ModuleNotFoundError: "
        "No module named 'triton.language.extra.cann'\n",
    ],
)
def test_a_missing_triton_module_names_triton_ascend_first_and_a_shadowing_triton_second(text):
    causes = _top(text)
    assert causes[0][0] == "other" and causes[0][1].startswith("triton_ascend_release"), causes
    assert causes[1][0] == "framework_build_mismatch", causes


@pytest.mark.parametrize(
    "text",
    [
        "RuntimeError: Expected all tensors to be on the same device, "
        "but found at least two devices, npu:3 and npu:0!\n",
        f"{ESC}[36m(WorkerDict pid=5123){ESC}[0m AssertionError: Expects tensor to be on the compute device npu:7, "
        "was on npu:1\n",
        "[rank4]: 设备不一致: Expected all tensors to be on the same device, "
        "but found at least two devices, npu:4 and npu:5!\n",
    ],
)
def test_tensors_on_two_npus_name_the_device_mapping(text):
    causes = _top(text)
    assert causes[0][0] == "other" and causes[0][1].startswith("npu_device_mapping"), causes


@pytest.mark.parametrize(
    "text",
    [
        "NameError: name 'acl' is not defined\n",
        "[2026-01-02 10:00:00 TP0] Scheduler hit an exception: NameError: name 'npu_format_cast' is not defined\n",
        f"{ESC}[31mERROR 02-03 12:00:00 [worker.py:12] 运行失败 "
        f"NameError: name 'get_ascend_config' is not defined{ESC}[0m\n",
    ],
)
def test_a_name_error_is_a_code_defect_not_the_environment(text):
    causes = _top(text)
    assert causes == [("other", causes[0][1])] and causes[0][1].startswith("code_defect"), causes


@pytest.mark.parametrize(
    "text",
    [
        "RuntimeError: aclrtHostRegister failed, error code 107000\n",
        "[2026-02-01 08:00:00,000] LMCache ERROR: Unable to pin host memory (size 64 GiB), errno -12\n",
        "锁页内存失败：halHostRegister failed, ret=65534\n",
    ],
)
def test_host_memory_that_cannot_be_pinned_names_the_memlock_limit_then_the_driver(text):
    causes = _top(text)
    assert causes[0][0] == "other" and causes[0][1].startswith("host_memory_lock"), causes
    assert "driver_cann_mismatch" in [c for c, _ in causes[:3]], causes


@pytest.mark.parametrize(
    "text",
    [
        "[ERROR] RUNTIME(1234,python3):2026-03-03-10:00:00.000.000 [api_error.cc:1052]5678 DevMalloc:[INIT][DEFAULT]"
        "Device malloc failed, size=2147483648(Byte), type=2.\n",
        "RuntimeError: call aclrtMalloc failed, error code is 207001\n",
        f"{ESC}[31m[mindie] 内存申请失败 halMemAlloc failed: size=1024(Byte), drvRetCode=6, device_id=3{ESC}[0m\n",
    ],
)
def test_a_runtime_allocation_failure_is_device_memory_first(text):
    causes = _top(text)
    assert causes[0][0] == "out_of_memory" and "device_busy" in [c for c, _ in causes[:2]], causes


@pytest.mark.parametrize(
    "text",
    [
        "ModuleNotFoundError: No module named 'sgl_kernel_npu.sgl_kernel_npu_C'\n",
        "WARNING 07-01 09:00:00 [utils.py:33] Failed to import mindie_ops_C:"
        "No module named 'mindie_llm.mindie_ops_C'\n",
        "导入自定义算子失败：No module named 'lmcache_ascend.c_ops_C'\n",
    ],
)
def test_a_missing_compiled_extension_is_a_custom_op_build(text):
    causes = _top(text)
    assert causes[0][0] == "custom_op_not_loaded", causes


@pytest.mark.parametrize(
    "text",
    [
        "/usr/local/Ascend/ascend-toolkit/latest/bin/atc: /lib64/libc.so.6: version `GLIBC_2.34' not found "
        "(required by /usr/local/Ascend/ascend-toolkit/latest/lib64/libge_runner.so)\n",
        "ImportError: /opt/conda/lib/libstdc++.so.6: version `GLIBCXX_3.4.30' not found (required by "
        "/usr/local/lib/python3.10/site-packages/torch_npu/lib/libtorch_npu.so)\n",
        "编译器启动失败：bisheng: /lib/aarch64-linux-gnu/libc.so.6: version 'GLIBC_2.32' not found\n",
    ],
)
def test_a_missing_glibc_or_libstdcxx_version_is_a_c_runtime_too_old(text):
    causes = _top(text)
    assert causes[0][0] == "other" and causes[0][1].startswith("c_runtime_too_old"), causes


@pytest.mark.parametrize(
    "text",
    [
        "ValueError: cannot support soc_version Ascend310B4\n",
        "(EngineCore_DP0 pid=9) ERROR 02-25 03:11:49 [utils.py:700] RuntimeError: Can not support soc_version: 225.\n",
        "不支持：this build does not support soc_version 260\n",
    ],
)
def test_a_tool_that_cannot_support_the_soc_version_is_an_unsupported_soc(text):
    causes = _top(text)
    assert causes[0][0] == "soc_unsupported", causes


@pytest.mark.parametrize(
    "text",
    [
        "  ╰─▶ Because there is no version of torch-npu==2.9.0.post1 and you require torch-npu==2.9.0.post1, we can "
        "conclude that your requirements are unsatisfiable.\n",
        f"{ESC}[31m  ╰─▶ Because there is no version of triton_ascend==3.3.0 and you require it{ESC}[0m\n",
        "依赖解析失败：Because there is no version of triton-ascend==3.2.2 and vllm-ascend==0.20.0 depends on "
        "triton-ascend==3.2.2\n",
    ],
)
def test_uv_finding_no_version_of_an_ascend_package_is_a_missing_index(text):
    causes = _top(text)
    assert causes[0][0] == "package_index_missing", causes


@pytest.mark.parametrize(
    ("text", "absent"),
    [
        ("ImportError: cannot import name 'AutoTokenizer' from 'transformers'\n", "framework_build_mismatch"),
        ("ModuleNotFoundError: No module named 'tritonclient'\n", "other"),
        ("the tensor was on npu:0 before the move\n", "other"),
        ("INFO LMCache: pin host memory pool of 4 GiB ready\n", "other"),
        ("RuntimeError: aclrtSynchronizeStream failed, error code is 2070015\n", "out_of_memory"),
        (
            "WARNING 08-25 13:15:16 [_custom_ops.py:20] Failed to import from vllm._C with "
            "ModuleNotFoundError(\"No module named 'vllm._C'\")\n",
            "custom_op_not_loaded",
        ),
        ("checking for GLIBC_2.17 in libc.so.6 ... yes\n", "other"),
        ("INFO device soc_version: 104 supported by this build\n", "soc_unsupported"),
        ("  ╰─▶ Because there is no version of numpy==9.9 and you require numpy==9.9\n", "package_index_missing"),
    ],
)
def test_the_batch_c_kinds_leave_a_log_of_another_cause_to_that_cause(text, absent):
    causes = _top(text + DISK)
    assert causes[0][0] == "disk_or_tmp_full", causes
    assert absent not in [c for c, _ in causes], causes


def test_a_name_error_after_a_full_disk_still_ranks_the_disk_first():
    causes = _top(DISK + "NameError: name 'write_cache' is not defined\n")
    assert causes[0][0] == "disk_or_tmp_full", causes
