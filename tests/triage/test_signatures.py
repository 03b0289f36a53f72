"""compat/triage/signatures.toml: the shipped table is valid, and a bad one names its key path."""

from __future__ import annotations

import importlib.util
import re
import shutil
from dataclasses import dataclass
from typing import Optional

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
    # the causes signatures name (a log none names ranks `other`, unrecognised: tests/triage/test_rank.py)
    return [(c.cause, c.detail or "") for c in result.causes if c.signatures], summaries


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


# --- kinds from held-out batch B: three variants each (other SoCs, modules, devices, log prefixes,
# Chinese text, ANSI colours; none from the corpus or the held-out sets) and a log of another cause
# that keeps its own cause (the rule's near-miss text does not select it)

OOM = "RuntimeError: NPU out of memory. Tried to allocate 3.00 GiB (NPU 0; 29.50 GiB total capacity)\n"
LIBHCCL = "ImportError: libhccl.so: cannot open shared object file: No such file or directory\n"

BATCH_B = {
    "mindspore-op-info-soc": (
        ("soc_unsupported", ""),
        [
            "[ERROR] KERNEL(1234,ffff8a2c,python):2025-01-02-10:00:00.000.001 [mindspore/ccsrc/kernel/oplib/"
            "op_info_utils.cc:185] LoadOpInfoJson] Get op info json suffix path failed, soc_version: Ascend310B4\n",
            "\x1b[31mRuntimeError: Load op info form json config failed, version: Ascend310P1\x1b[0m\n",
            "训练报错：[ERROR] KERNEL(77,python) GenerateOpInfos] Load op info json failed, version: Ascend310B1\n",
        ],
    ),
    "mindspore-device-address-cpu": (
        ("soc_unsupported", ""),
        [
            "[ERROR] ME(4242:281473,MainProcess):2025-03-03 [ge_device_res_manager.cc:81] AllocateMemory] The device "
            "address type is wrong: type name in address:CPU, type name in context:Ascend\n",
            "(Worker pid=12) 导出失败：The device address type is wrong: type name in address:CPU, type name in "
            "context:Ascend\n",
            "\x1b[1;31mE   RuntimeError: The device address type is wrong: type name in address:CPU, type name in "
            "context:Ascend\x1b[0m\n",
        ],
    ),
    "pyacl-not-importable": (
        ("env_not_sourced", ""),
        [
            "(EngineCore_DP0 pid=311) ModuleNotFoundError: No module named 'acl'\n",
            '  File "/opt/app/infer.py", line 3, in <module>\n    import acl\nModuleNotFoundError: No module named '
            "'acl'\n",
            "推理进程启动失败：ModuleNotFoundError: No module named 'acl'\n",
        ],
    ),
    "cann-python-dependency-missing": (
        ("other", "cann_python_deps_missing"),
        [
            '  File "/usr/local/Ascend/cann-8.5.0/python/site-packages/tbe/common/utils/op_util.py", line 21\n'
            "ModuleNotFoundError: No module named 'sympy'\n",
            "[rank2]: ModuleNotFoundError: No module named 'attr'\n",
            "编译算子失败：ModuleNotFoundError: No module named 'absl'\n",
        ],
    ),
    "aicpu-package-verify-failed": (
        ("driver_cann_mismatch", ""),
        [
            "E30009: Failed to verify the signature of package Ascend-aicpu_syskernels.tar.gz on the device. "
            "Reason: Signature verification failed.\n",
            "[ERROR] TDT(2211,python):2025-05-05 [TSDaemon] checksum aicpu package failed, ret=103\n",
            "E39999 tsd client wait response fail, device response code[1]. load aicpu ops package failed, "
            "device[3], host pid[9001]\n        open device 3 failed, runtime result = 507033.\n",
        ],
    ),
    "mindspore-run-task-error": (
        ("framework_build_mismatch", ""),
        [
            "RuntimeError: Run task for graph:kernel_graph_12 error! The details refer to 'Ascend Error Message'.\n",
            "[ERROR] DEVICE(511,ffff,python):2024-06-01 [ascend_kernel_runtime.cc:900] RunTask] Run task for "
            "graph:kernel_graph_0 error! Please check the error message.\n",
            "训练中断：RuntimeError: Run task for graph kernel_graph_3 error\n",
        ],
    ),
    "megatron-nan-grad-norm": (
        ("other", "numerics"),
        [
            "AssertionError: Rank 3: found NaN in local grad norm in backward pass before data-parallel "
            "communication collective. Device: 0, node: worker-1\n",
            "RuntimeError: Rank 12: Unexpected result nan (found NaN in local grad norm for bucket #1 in backward "
            "pass before data-parallel communication collective)\n",
            "[rank7]: AssertionError: Rank 7: found Inf in local grad norm in backward pass\n",
        ],
    ),
    "build-cmake-too-new": (
        ("other", "build_tool_version"),
        [
            "CMake Error at third_party/googletest/CMakeLists.txt:4 (cmake_minimum_required):\n"
            "  Compatibility with CMake < 3.5 has been removed from CMake.\n",
            "  Compatibility with CMake < 3.5 has been removed from CMake.\n"
            "  Update the VERSION argument <min> value.  Or, use the <min>...<max> syntax\n",
            "编译失败：Compatibility with CMake < 3.5 has been removed from CMake.\n",
        ],
    ),
    "build-crlf-script": (
        ("other", "crlf_line_endings"),
        [
            "bash ci/build.sh\nci/build.sh: line 5: $'\\r': command not found\n",
            "/opt/MindSpeed/tests_extend/run.sh: line 9: $'\\r': command not found\n",
            "执行脚本报错：env.sh: line 2: $'\\r': command not found\n",
        ],
    ),
    "build-compiler-too-old": (
        ("other", "compiler_too_old"),
        [
            "/home/build/op-plugin/csrc/utils.cpp:3:10: fatal error: filesystem: No such file or directory\n"
            "    3 | #include <filesystem>\n",
            "src/main.cc:5:10: fatal error: 'filesystem' file not found\n#include <filesystem>\n",
            "[ 12%] Building CXX object 编译错误 fatal error: filesystem: No such file or directory\n",
        ],
    ),
    "build-link-dependency-not-found": (
        ("other", "link_path"),
        [
            "/usr/bin/ld: warning: libgfortran.so.5, needed by /opt/py/lib/python3.10/site-packages/numpy.libs/"
            "libopenblas64_p-r0.so, not found (try using -rpath or -rpath-link)\n",
            "  /opt/rh/devtoolset-9/root/usr/libexec/gcc/aarch64-redhat-linux/9/ld: warning: libmpi.so.40, needed by "
            "./libfoo.so, not found (try using -rpath or -rpath-link)\n",
            "链接警告: /usr/bin/ld: warning: libquadmath.so.0, needed by build/libbar.so, not found (try using  "
            "-rpath or -rpath-link)\n",
        ],
    ),
    "python-stdlib-module-missing": (
        ("other", "python_build_incomplete"),
        [
            "ModuleNotFoundError: No module named '_bz2'\n",
            '  File "/usr/local/python3.9.2/lib/python3.9/ctypes/__init__.py", line 7, in <module>\n'
            "    from _ctypes import Union, Structure, Array\nModuleNotFoundError: No module named '_ctypes'\n",
            "导入失败：ImportError: No module named '_sqlite3'\n",
        ],
    ),
    "extension-built-for-other-python": (
        ("other", "extension_built_for_other_python"),
        [
            "ImportError: Python version mismatch: module was compiled for Python 3.11, but the interpreter version "
            "is incompatible: 3.10.14 (main, Mar 21 2024).\n",
            "[rank0]: ImportError: Python version mismatch: module was compiled for version 3.9, while the "
            "interpreter is running version 3.10.\n",
            "导入算子库失败：ImportError: Python version mismatch: module was compiled for Python 3.8\n",
        ],
    ),
    "pip-index-untrusted": (
        ("other", "pip_index_ignored"),
        [
            "  WARNING: The repository located at 10.20.30.40 is not a trusted or secure host and is being ignored. "
            "If this repository is available via HTTPS we recommend you use HTTPS instead.\n"
            "ERROR: Could not find a version that satisfies the requirement sentencepiece==0.2.0 "
            "(from versions: none)\n",
            "\x1b[33mWARNING: The repository located at pypi.internal.lan is not a trusted or secure host and is being "
            "ignored.\x1b[0m\n",
            "安装依赖失败：WARNING: The repository located at mirrors.example.cn is not a trusted or secure host and "
            "is being ignored.\n",
        ],
    ),
    "ascend-backend-module-missing": (
        ("other", "ascend_backend_not_installed"),
        [
            "2025-02-02 10:00:00,001 - lmdeploy - ERROR - base.py:53 - ModuleNotFoundError: No module named "
            "'dlinfer'\n",
            "(APIServer pid=77) ModuleNotFoundError: No module named 'vllm_ascend'\n",
            "运行报错：ModuleNotFoundError: No module named 'paddle_custom_device'\n",
        ],
    ),
}

# a log of another cause whose text comes near the rule's (the rule must not select it; a wrapper
# may, and still ranks after the causal line): the other cause stays first
BATCH_B_NEAR_MISSES = {
    "mindspore-op-info-soc": (
        "[ERROR] KERNEL(1,python) LoadOpInfoJson] Get the path:/usr/local/Ascend/latest/opp/built-in/op_impl/ai_core/"
        "tbe/config/ascend910b/aic-ascend910b-ops-info.json failed.\n" + OOM,
        "out_of_memory",
    ),
    "mindspore-device-address-cpu": (
        "RuntimeError: The device address type is wrong: type name in address:GPU, type name in context:CPU\n"
        + LIBHCCL,
        "env_not_sourced",
    ),
    "pyacl-not-importable": ("ModuleNotFoundError: No module named 'acl_runtime_helper'\n" + OOM, "out_of_memory"),
    "cann-python-dependency-missing": ("ModuleNotFoundError: No module named 'decorators'\n" + OOM, "out_of_memory"),
    "aicpu-package-verify-failed": ("open device 0 failed, runtime result = 507033.\n", "device_busy"),
    "mindspore-run-task-error": (
        "RuntimeError: Run task for graph:kernel_graph_37 error! The details refer to 'Ascend Error Message'.\n" + OOM,
        "out_of_memory",
    ),
    "megatron-nan-grad-norm": ("found NaN in the loss at step 10, skipping\n" + OOM, "out_of_memory"),
    "build-cmake-too-new": (
        "CMake Error at CMakeLists.txt:1 (cmake_minimum_required):\n  CMake 3.18 or higher is required.  You are "
        "running version 3.16.3\n" + LIBHCCL,
        "env_not_sourced",
    ),
    "build-crlf-script": ("./build.sh: line 3: cmake: command not found\n" + LIBHCCL, "env_not_sourced"),
    "build-compiler-too-old": (
        "src/a.cc:2:10: fatal error: experimental/filesystem: No such file or directory\n" + OOM,
        "out_of_memory",
    ),
    "build-link-dependency-not-found": (
        "/usr/bin/ld: cannot find -lhccl_extra\ncollect2: error: ld returned 1 exit status\n" + LIBHCCL,
        "env_not_sourced",
    ),
    "python-stdlib-module-missing": ("ModuleNotFoundError: No module named '_lzma_helpers'\n" + OOM, "out_of_memory"),
    "extension-built-for-other-python": (
        "RuntimeError: Python C API version mismatch for module foo: This Python has API version 1013\n" + LIBHCCL,
        "env_not_sourced",
    ),
    "pip-index-untrusted": (
        "WARNING: Retrying (Retry(total=4)) after connection broken by 'ReadTimeoutError'\n" + OOM,
        "out_of_memory",
    ),
    "ascend-backend-module-missing": ("ModuleNotFoundError: No module named 'torch_npu_ext'\n" + OOM, "out_of_memory"),
}


def _result(text: str):
    import io

    from ascenv.triage import load as load_table
    from ascenv.triage import triage

    return triage(io.BytesIO(text.encode()), None, None, load_table(known_checks=set(load_checks())))


@pytest.mark.parametrize(
    ("sig_id", "text"), [(sig_id, text) for sig_id, (_, texts) in BATCH_B.items() for text in texts]
)
def test_batch_b_kind_recognised_in_a_new_variant(sig_id, text):
    (cause, detail), _ = BATCH_B[sig_id]
    result = _result(text)
    assert sig_id in {s.id for s in result.signatures}, [s.id for s in result.signatures]
    top = result.causes[0]
    assert top.cause == cause, [(c.cause, c.detail) for c in result.causes]
    assert (top.detail or "").startswith(detail), top.detail


@pytest.mark.parametrize("sig_id", sorted(BATCH_B_NEAR_MISSES))
def test_batch_b_rule_leaves_another_cause_first(sig_id):
    text, other = BATCH_B_NEAR_MISSES[sig_id]
    result = _result(text)
    sig = load(known_checks=set(load_checks())).by_id(sig_id)
    assert sig is not None
    if not sig.wrapper:
        assert sig_id not in {s.id for s in result.signatures}, [s.id for s in result.signatures]
    assert result.causes and result.causes[0].cause == other, [(c.cause, c.detail) for c in result.causes]


def test_batch_b_rules_each_have_variants_and_a_near_miss():
    table = load(known_checks=set(load_checks()))
    ids = {sig.id for sig in table.signatures}
    assert set(BATCH_B) == set(BATCH_B_NEAR_MISSES) and set(BATCH_B) <= ids
    assert all(len(texts) == 3 for _, texts in BATCH_B.values())


def test_an_ignored_index_for_an_ascend_package_is_the_missing_index_first():
    # the same warning before torch-npu "from versions: none": the Ascend package's index is not
    # usable (package_index_missing), the ignored http index is the detail that says why
    text = (
        "WARNING: The repository located at 10.20.30.40 is not a trusted or secure host and is being ignored.\n"
        "ERROR: Could not find a version that satisfies the requirement torch-npu==2.6.0 (from versions: none)\n"
    )
    causes = [(c.cause, c.detail or "") for c in _result(text).causes]
    assert causes[0][0] == "package_index_missing", causes
    assert ("other", "pip_index_ignored: an http index not declared as a trusted host") in causes[:2], causes


# --- kinds from held-out batch D (tests/data/triage_heldout_d): three variants each that neither
# corpus contains (other SoCs, ids, codes, packages, log prefixes, Chinese text, ANSI colours) and
# one log of another cause that names the kind's words without its failure


@pytest.mark.parametrize(
    "text",
    [
        "CMake Error at /usr/local/Ascend/cann-8.5.0/aarch64-linux/tikcpp/ascendc_kernel_cmake/host_config.cmake:31 "
        "(message):\n  SOC_VERSION ascend310b4 does not support, the support list is\n  ascend910b1;ascend910b2\n",
        f"{ESC}[31mCMake Error at /opt/Ascend/ascend-toolkit/8.2.RC1/compiler/tikcpp/ascendc_kernel_cmake/"
        f"host_config.cmake:20 (message):{ESC}[0m\n"
        "  SOC_VERSION ascend910_9391 does not support, the support list is\n",
        "编译失败：CMake Error at /home/u/Ascend/latest/compiler/tikcpp/ascendc_kernel_cmake/host_config.cmake:20 "
        "(message):\n  SOC_VERSION ascend310p5 does not support\n",
    ],
)
def test_a_cann_cmake_module_rejecting_the_soc_is_an_unsupported_soc_not_a_missing_module(text):
    causes = _top(text)
    assert causes[0][0] == "soc_unsupported", causes
    assert not any(d.startswith("build_script_cann_path") for _, d in causes), causes


def test_a_cann_cmake_module_not_found_by_include_is_still_the_build_script():
    causes = _top(
        "CMake Error at /home/u/cann-9.0.0/aarch64-linux/lib64/cmake/ASCConfig.cmake:12 (include):\n"
        "  include could not find requested file:\n    /home/u/cann-9.0.0/tikcpp/ascendc_kernel_cmake/x.cmake\n"
    )
    assert causes[0][0] == "other" and causes[0][1].startswith("build_script_cann_path"), causes


@pytest.mark.parametrize(
    "text",
    [
        "[ERROR] RUNTIME(881,python3):2026-02-01-10:00:00.000.001 rtSetDevice:ErrCode=107001, desc=[device id error]\n",
        f"{ESC}[31m(Worker_TP3 pid=4410) ERROR 07-01 09:00:00 [worker.py:90] aclrtSetDevice failed, error code "
        f"107001{ESC}[0m\n",
        "[rank5]: 初始化失败 RuntimeError: Invalid device ID. npu:5 is not in the visible devices\n",
    ],
)
def test_an_invalid_device_id_is_a_device_outside_the_process_view(text):
    causes = _top(text)
    assert causes[0][0] == "other" and causes[0][1].startswith("device_id_out_of_view"), causes
    assert "container_no_device" in [c for c, _ in causes], causes


@pytest.mark.parametrize(
    "text",
    [
        "RuntimeError: ACL stream synchronize failed, error code:507034\n",
        f"{ESC}[31m[rank2]: RuntimeError: npuSynchronizeDevice: NPU function error: "
        f"c10_npu::acl::AclrtSynchronizeDeviceWithTimeout, error code is 507017{ESC}[0m\n",
        "推理中断 [Error]: The aicore execution times out. Rectify the fault based on the error information\n",
    ],
)
def test_a_device_task_timeout_is_a_kernel_or_collective_that_did_not_finish(text):
    causes = _top(text)
    assert causes[0][0] == "other" and causes[0][1].startswith("device_task_timeout"), causes
    assert causes[1][0] == "framework_build_mismatch", causes


@pytest.mark.parametrize(
    "text",
    [
        "EZ9999: [PID: 9] Cannot find bin of op MoeGatingTopK, integral key 0/1/|bf16/ND/float/ND/.\n",
        f"{ESC}[31mERROR 01-02 03:04:05 [engine.py:10]         Cannot find binary for op GroupedMatmul.{ESC}[0m\n",
        "算子报错：Cannot find bin of op UpsampleNearest2d, integral key 0/1/|bf16/ND/bf16/ND/.\n",
    ],
)
def test_no_kernel_binary_for_an_op_names_the_kernels_package_dtype_and_custom_package(text):
    causes = [c for c, _ in _top(text)]
    assert causes[:3] == ["kernels_missing", "other", "custom_op_not_loaded"], causes


def test_torch_npus_operator_wrapper_leaves_the_cause_above_it_first():
    causes = _top(
        "call aclnnCast failed, detail:EZ1001: self not implemented for DT_BFLOAT16, should be in dtype support "
        "list [DT_FLOAT16,DT_FLOAT,].\nRuntimeError: The Inner error is reported as above. The process exits for "
        "this inner error, and the current working operator name is Cast.\n"
    )
    assert not causes[0][1].startswith("operator_failed"), causes


@pytest.mark.parametrize(
    "text",
    [
        "subprocess.CalledProcessError: Command '['npu-smi', 'info', '-t', 'memory', '-i', '7', '-c', '0']' "
        "returned non-zero exit status 1.\n",
        f"{ESC}[31mERROR{ESC}[0m subprocess.CalledProcessError: Command '['npu-smi', 'info', '-m']' returned "
        "non-zero exit status 255.\n",
        "查询失败 CalledProcessError: Command '['npu-smi', 'info', '-t', 'usages', '-i', '3']' returned non-zero "
        "exit status 8.\n",
    ],
)
def test_a_failed_npu_smi_query_of_a_program_names_the_id_then_the_container(text):
    causes = _top(text)
    assert causes[0][0] == "other" and causes[0][1].startswith("npu_smi_query_failed"), causes
    assert causes[1][0] == "container_no_device", causes


@pytest.mark.parametrize(
    ("text", "absent"),
    [
        ("ImportError: cannot import name 'AutoProcessor' from 'transformers'\n", "other"),
        ("INFO queried npu-smi info -t board -i 0: OK\n", "container_no_device"),
        ("INFO set device id 3 (visible devices 0-7)\n", "container_no_device"),
        ("INFO HCCL_EXEC_TIMEOUT=1800, HCCL_CONNECT_TIMEOUT=120\n", "other"),
        ("INFO op binary cache of 2048 entries ready\n", "kernels_missing"),
        ("DEBUG timeout of the aicore watchdog set to 68 s\n", "framework_build_mismatch"),
        ("INFO npu-smi found at /usr/local/sbin/npu-smi\n", "container_no_device"),
    ],
)
def test_the_batch_d_kinds_leave_a_log_of_another_cause_to_that_cause(text, absent):
    causes = _top(text + DISK)
    assert causes[0][0] == "disk_or_tmp_full", causes
    assert absent not in [c for c, _ in causes], causes


# --- kinds from held-out batch E: each with three variants neither corpus holds and a near miss ---


@pytest.mark.parametrize(
    ("text", "absent"),
    [
        ("INFO UB size 196608 bytes; tile 65536 bytes fits\n", "other"),
        ("usage: train.py [-h] [--lr LR]\nINFO parsed 12 arguments\n", "other"),
        ("AttributeError: 'NoneType' object has no attribute 'shape'\n", "other"),
        ("AttributeError: module 'numpy' has no attribute 'float'\n", "other"),
    ],
)
def test_the_batch_e_kinds_leave_a_log_of_another_cause_to_that_cause(text, absent):
    causes = _top(text + DISK)
    assert causes[0][0] == "disk_or_tmp_full", causes
    assert absent not in [c for c, _ in causes], causes


# --- kinds from held-out batch G: each with three variants neither corpus holds and a near miss ---


@pytest.mark.parametrize(
    ("text", "first"),
    [
        (
            "EZ9999: Op Gather does not has any binary.\n"
            "[ERROR] 2026-01-05-10:11:12 (PID:1, Device:0, RankID:-1) ERR01002 OPS invalid type\n",
            "kernels_missing",
        ),
        (
            "RuntimeError: Invalid device ID. Check the visible devices.\n"
            "[ERROR] 2026-01-05-10:11:12 (PID:1, Device:-1, RankID:-1) ERR00001 PTA invalid parameter\n",
            "container_no_device",
        ),
    ],
)
def test_the_torch_npu_code_after_a_causal_line_leaves_that_line_first(text, first):
    causes = _top(text)
    assert causes[-1][1].startswith("torch_npu_invalid_argument"), causes  # the wrapper: last
    assert first in [c for c, _ in causes[:-1]], causes


@pytest.mark.parametrize(
    ("text", "absent"),
    [
        ("[ERROR] 2026-01-05-10:11:12 (PID:1, Device:0, RankID:-1) ERR00100 PTA call acl api failed\n", "other"),
        ("INFO config: invalid type hints ignored, invalid value defaults used\n", "other"),
        ("INFO profiler: resource not found in cache, fetching\n", "env_not_sourced"),
        ("WARNING a permission error was retried and succeeded\n", "permission"),
        ("INFO port 29500 is free (not in use)\n", "other"),
    ],
)
def test_the_batch_g_kinds_leave_a_log_of_another_cause_to_that_cause(text, absent):
    causes = _top(text + DISK)
    assert causes[0][0] == "disk_or_tmp_full", causes
    assert absent not in [c for c, _ in causes], causes


# --- kinds from held-out batch H: each with three variants neither corpus holds and a near miss ---


@pytest.mark.parametrize(
    "text",
    [
        "/home/dev/acl_demo/src/main.cpp:2:10: fatal error: acl/acl.h: No such file or directory\n",
        f"{ESC}[1m/opt/ops/add_custom.cpp:1:10: {ESC}[31mfatal error: {ESC}[0m'kernel_operator.h' file not found\n",
        "[ 12%] 构建失败 op_host/matmul_tiling.cpp:5:10: 致命错误：aclnnop/aclnn_matmul.h：No such file or directory\n",
    ],
)
def test_a_cann_header_missing_from_a_build_is_the_toolkit_not_sourced_first(text):
    causes = _top(text)
    assert causes[0][0] == "env_not_sourced", causes
    assert "framework_build_mismatch" in [c for c, _ in causes[:3]], causes


@pytest.mark.parametrize(
    "text",
    [
        "RuntimeError: call aclnnMul failed, detail:EZ1001: [PID: 4321] 2025-09-01-10:00:00.000.000 other not "
        "implemented for DT_BFLOAT16, should be in dtype support list [DT_FLOAT16,DT_FLOAT,DT_INT32,DT_INT64,].\n",
        f"{ESC}[33m[rank1]:{ESC}[0m RuntimeError: call aclnnLayerNorm failed, detail:EZ1001: input not implemented "
        "for DT_BFLOAT16, should be in dtype support list [DT_FLOAT16,DT_FLOAT,].\n",
        "推理报错 EZ1001: The param out not implemented for DT_BFLOAT16, should be in dtype support list "
        "[DT_FLOAT16,DT_FLOAT,DT_INT8,].\n",
    ],
)
def test_bf16_rejected_by_an_aclnn_op_keeps_the_soc_without_bf16_in_the_top_three(text):
    causes = [c for c, _ in _top(text)]
    assert "soc_unsupported" in causes[:3], causes


@pytest.mark.parametrize(
    ("text", "absent"),
    [
        # a header of neither torch_npu nor CANN: a system / Python development header
        ("src/ext.cpp:1:10: fatal error: Python.h: No such file or directory\n", "framework_build_mismatch"),
        ("[OK] torch_npu version: 2.8.0.post2\n[OK] CANN version: 8.5.0\n", "framework_build_mismatch"),
        ("UserWarning: torch_npu must be imported before torch.compile is called\n", "framework_build_mismatch"),
    ],
)
def test_the_batch_h_kinds_leave_a_log_of_another_cause_to_that_cause(text, absent):
    causes = _top(text + DISK)
    assert causes[0][0] == "disk_or_tmp_full", causes
    assert absent not in [c for c, _ in causes], causes


def test_a_dtype_other_than_bf16_rejected_by_an_aclnn_op_stays_the_op_s_own_limit():
    text = (
        "RuntimeError: call aclnnCast failed, detail:EZ1001: self not implemented for DT_COMPLEX32, "
        "should be in dtype support list [DT_FLOAT,].\n"
    )
    causes = _top(text)
    assert causes[0][0] == "other" and "soc_unsupported" not in [c for c, _ in causes], causes


@pytest.mark.parametrize(
    ("text", "absent"),
    [
        # the same compiler message in a project's own source file (not a generated temporary one)
        ("/home/dev/ops/add_custom.cpp:12:3: error: use of undeclared identifier 'tiling'\n", "other"),
        ("INFO tvm script parsed 3 prim_funcs; AST visitors: For, If, Assign\n", "other"),
        ("RuntimeError: Expected one of cpu, cuda device type at start of device string: gpu\n", "other"),
    ],
)
def test_the_batch_h_front_end_kinds_leave_a_log_of_another_cause_to_that_cause(text, absent):
    causes = _top(text + DISK)
    assert causes[0][0] == "disk_or_tmp_full", causes
    assert absent not in [c for c, _ in causes], causes


# --- kinds from held-out batch I (tests/data/triage_heldout_i): three variants each that no set
# holds, and a near miss that stays with its own cause -----------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "The conflict is caused by:\n    The user requested torch==2.4.0\n    torch-npu 2.1.0.post10 depends on "
        "torch==2.1.0\n\nERROR: ResolutionImpossible: for help visit "
        "https://pip.pypa.io/en/latest/topics/dependency-resolution/#dealing-with-dependency-conflicts\n",
        "    sglang 0.5.5 depends on torch==2.8.0\n    sgl-kernel-npu 2025.11.5 depends on torch==2.7.1\n"
        f"{ESC}[31mERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/"
        f"dependency-resolution/#dealing-with-dependency-conflicts{ESC}[0m\n",
        "安装失败\nThe conflict is caused by:\n    mindspeed 2.2.0 depends on torch_npu==2.7.1\n    vllm-ascend 0.11.0 "
        "depends on torch-npu==2.7.1.dev20250724\nERROR: ResolutionImpossible: 请查看依赖冲突说明\n",
    ],
)
def test_pip_giving_up_on_two_pins_is_releases_not_made_for_each_other(text):
    causes = _top(text)
    assert causes[0][0] == "other" and causes[0][1].startswith("conflicting_pins"), causes
    assert "torch_torch_npu_mismatch" in [c for c, _ in causes[:3]], causes


def test_uv_s_incompatible_pins_are_conflicting_pins_too():
    text = (
        "  × No solution found when resolving dependencies:\n  ╰─▶ Because vllm==0.13.0 depends on torch==2.9.0 "
        "and vllm-ascend==0.13.0 depends on torch==2.8.0, we can conclude that vllm==0.13.0 and "
        "vllm-ascend==0.13.0 are incompatible.\n"
    )
    causes = _top(text)
    assert causes[0][0] == "other" and causes[0][1].startswith("conflicting_pins"), causes


def test_a_pin_of_a_cpu_build_stays_the_missing_index_not_conflicting_pins():
    text = (
        "The conflict is caused by:\n    The user requested torch==2.5.1\n    torch-npu 2.5.1 depends on "
        "torch==2.5.1+cpu\n\nERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/\n"
    )
    causes = _top(text)
    assert causes[0][0] == "package_index_missing", causes


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ("INFO port 29500 is not being used by another process, binding\n", "port_in_use"),
        ("ModuleNotFoundError: No module named 'vllm_ascend.vllm_ascend_C'\n", "framework_submodule_missing"),
        ("ModuleNotFoundError: No module named 'numpy.core._multiarray_umath'\n", "framework_submodule_missing"),
        ("INFO pip resolved 42 packages, no conflict\n", "conflicting_pins"),
    ],
)
def test_the_batch_i_kinds_leave_a_log_of_another_cause_to_that_cause(text, detail):
    causes = _top(text + DISK)
    if "_C'" not in text:
        assert causes[0][0] == "disk_or_tmp_full", causes
    assert not [d for _, d in causes if d.startswith(detail)], causes


# --- kinds from held-out batch F (tests/data/triage_heldout_f): three variants each that no set
# holds (other packages, ports, codes, operators; Chinese text, ANSI colours, vLLM/MindIE prefixes)
# and a near miss per kind


def _detail_starts(causes: list[tuple[str, str]], prefix: str) -> bool:
    return causes[0][0] == "other" and (causes[0][1] or "").startswith(prefix)


@pytest.mark.parametrize(
    "text",
    [
        "[PID: 4411] 2026-01-02-03:04:05.678.901 Insufficient_Event_Resources(EL0008): The event resources are "
        "insufficient.\n",
        f"(Worker_TP3 pid=8812) ERROR 03-04 05:06:07 [multiproc_executor.py:671] {ESC}[31m[PID: 8812] "
        f"Insufficient_Notify_Resources(EL0010): The Notify resources are insufficient.{ESC}[0m\n",
        "图捕获失败 [PID: 77] 2026-05-05-05:05:05.555.555 Insufficient_Stream_Resources(EL0009): The stream resources "
        "are insufficient.\n",
        "[2026-02-19 09:59:12.384944] [917] [llm] [ERROR] [model.cpp:47] load model failed, EL0011: The model "
        "resources are insufficient.\n",
    ],
)
def test_exhausted_stream_event_notify_or_model_resources_are_the_programs_demand_then_other_processes(text):
    causes = _top(text)
    assert _detail_starts(causes, "device_runtime_resources_exhausted"), causes
    assert causes[1][0] == "device_busy", causes


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        (
            "ImportError: cannot import name 'Foo' from 'bar' (/usr/lib/python3/dist-packages/bar/__init__.py)\n",
            "package_shadowed_by_directory",
        ),
        ("INFO tokenizer class Qwen2TokenizerFast loaded from /models/qwen\n", "transformers_older_than_model"),
        ("WARNING: feature not supported by this terminal: true colour\n", "torch_npu_feature_not_supported"),
        ("INFO created 12 streams and 40 events (resources are sufficient)\n", "device_runtime_resources_exhausted"),
        ("INFO master port 29500 is free, binding\n", "port_in_use"),
        ("[FUNC:GetTiling][FILE:matmul_tiling.cc][LINE:10] tiling done\n", "operator_spec"),
        ("INFO LlamaDecoderLayer_graph infer shape ok, 3 outputs\n", "atb_operation_shape"),
    ],
)
def test_the_batch_f_kinds_leave_a_log_of_another_cause_to_that_cause(text, detail):
    causes = _top(text + DISK)
    assert causes[0][0] == "disk_or_tmp_full", causes
    assert not any((d or "").startswith(detail) for _, d in causes), causes


# --- kinds from held-out batch J ------------------------------------------------------------------


def test_a_library_outside_the_ascend_stack_whose_dependency_ld_misses_keeps_the_link_path():
    causes = _top(
        "/usr/bin/ld: warning: libgfortran.so.5, needed by /opt/venv/torch.libs/libopenblasp.so.0, not found "
        "(try using -rpath or -rpath-link)\n"
    )
    assert "env_not_sourced" not in [c for c, _ in causes], causes
    assert causes[0] == ("other", causes[0][1]) and causes[0][1].startswith("link_path"), causes


@pytest.mark.parametrize(
    "text",
    [
        "Loading checkpoint shards:  75%|███████▌  | 3/4 [01:02<00:20, 20.1s/it]\nKilled\n",
        "+ python quant.py --model /data/qwen\n  Killed  \n",
        "[2026-01-05 10:00:00] step 1200/5000 loss=1.83\n\tKilled\n",
    ],
)
def test_a_bare_killed_line_names_sigkill_and_host_memory_in_the_top_two(text):
    causes = _top(text)
    assert causes[0][0] == "other" and causes[0][1].startswith("killed_by_signal"), causes
    assert "out_of_memory" in [c for c, _ in causes[:2]], causes


def test_killed_inside_a_sentence_is_no_sigkill():
    causes = _top("INFO worker 3 finished; 2 stale jobs were Killed by the cleaner\n" + DISK)
    assert causes[0][0] == "disk_or_tmp_full", causes
    assert "out_of_memory" not in [c for c, _ in causes], causes


# --- kinds from held-out batch K: each with three variants neither corpus holds and a near miss ---


@pytest.mark.parametrize(
    "text",
    [
        "(EngineCore pid=9251) AttributeError: '_OpNamespace' '_C_ascend' object has no attribute "
        "'npu_apply_top_k_top_p'\n",
        f"{ESC}[31m(Worker_TP0 pid=12){ESC}[0m ERROR 03-02 10:11:12 [worker.py:88] AttributeError: "
        "'_OpNamespace' 'npu' object has no attribute 'npu_fused_infer_attention_v2'\n",
        "算子调用失败：AttributeError: '_OpNamespace' 'sgl_kernel_npu' object has no attribute "
        "'batch_matmul_transpose'\n",
    ],
)
def test_an_op_namespace_without_the_op_is_its_extension_not_loaded(text):
    causes = _top(text)
    assert causes[0][0] == "custom_op_not_loaded", causes
    assert "framework_build_mismatch" in [c for c, _ in causes], causes


@pytest.mark.parametrize(
    "text",
    [
        "[ERROR]    2026/02/03 04:05:06.070809 9  devmanager/devmanager.go:91  deviceManager init failed, "
        "prepare dcmi failed, err: dcmi init failed, error code: -8005\n",
        f"{ESC}[31mDrvMngGetConsoleLogLevel failed. (g_conLogLevel=3){ESC}[0m\n"
        "dcmi module initialize failed. ret is -8005\n",
        "npu-smi info 执行失败：dcmi module initialize failed. ret is -8005\n",
    ],
)
def test_dcmi_8005_in_either_form_keeps_a_pending_driver_upgrade_among_its_causes(text):
    causes = [c for c, _ in _top(text)]
    assert causes[0] == "device_busy" and "firmware_driver_mismatch" in causes, causes


@pytest.mark.parametrize(
    "text",
    [
        "RuntimeError: Malloc device memory failed, size[1073741824], ret[207001], Device 3 Available HBM "
        "size:34359738368 free size:1048576 may be other processes occupying this card, check as: ps -ef|grep python\n",
        f"{ESC}[31m[ERROR] DEVICE(4021,ffff8,python):2026-01-02-03:04:05.678.901{ESC}[0m Malloc device memory failed, "
        "free memory size is less than half of total memory size.Device 1 Device MOC total size:32212254720 Device MOC "
        "free size:2147483648 may be other processes occupying this card, check as: ps -ef|grep python\n",
        "训练启动失败：Malloc device memory failed ... may be other processes occupying this card, "
        "check as: ps -ef|grep python\n",
    ],
)
def test_mindspore_unable_to_reserve_device_memory_is_the_card_held_then_its_own_processes(text):
    causes = [c for c, _ in _top(text)]
    assert causes[:2] == ["device_busy", "out_of_memory"], causes


@pytest.mark.parametrize(
    ("text", "first", "absent"),
    [
        # the op registry of a module, not an op namespace: another kind
        (
            "AttributeError: module 'torch.ops' has no attribute '_C_ascend'\n" + DISK,
            "disk_or_tmp_full",
            "custom_op_not_loaded",
        ),
        ("INFO npu is idle, scheduling job 7 on npu:0\n" + DISK, "disk_or_tmp_full", "device_busy"),
        # an ACL sample's own message for aclrtMalloc failing: no word of other processes
        (
            "[ERROR] acl malloc device memory failed, dataSize=4096, ret=207001\n" + DISK,
            "disk_or_tmp_full",
            "device_busy",
        ),
        # DCMI -8020 (the device in use) is not the internal error -8005
        (
            "dcmi model initialized failed, because the device is used. ret is -8020\n",
            "device_busy",
            "firmware_driver_mismatch",
        ),
    ],
)
def test_the_batch_k_kinds_leave_a_log_of_another_cause_to_that_cause(text, first, absent):
    causes = _top(text)
    assert causes[0][0] == first, causes
    assert absent not in [c for c, _ in causes], causes


def test_a_path_owner_warning_of_a_tool_yields_to_the_stack_error_after_it():
    # msModelSlim / msit only warn with these words on some paths: the error after it names the cause
    text = "WARNING - The file path '/data/w' may be insecure because it does not belong to you.\n" + DISK
    causes = [c for c, _ in _top(text)]
    assert causes[0] == "disk_or_tmp_full" and "permission" in causes, causes


# --- kinds whose variants only need their cause ranked first (with the start of its detail) -----
@dataclass(frozen=True)
class Kind:
    name: str  # what the variants show (the test id)
    cause: str  # ranked first
    detail: Optional[str]  # the start of its detail, when the cause's detail names the kind
    texts: list[str]  # variants neither corpus holds: other names, numbers, SoCs, languages, prefixes


RANKED_FIRST = [
    Kind(
        "tensors_on_two_npus_name_the_device_mapping",
        "other",
        "npu_device_mapping",
        [
            "RuntimeError: Expected all tensors to be on the same device, "
            "but found at least two devices, npu:3 and npu:0!\n",
            f"{ESC}[36m(WorkerDict pid=5123){ESC}[0m AssertionError: Expects tensor to be on the compute device npu:7, "
            "was on npu:1\n",
            "[rank4]: 设备不一致: Expected all tensors to be on the same device, "
            "but found at least two devices, npu:4 and npu:5!\n",
        ],
    ),
    Kind(
        "a_missing_compiled_extension_is_a_custom_op_build",
        "custom_op_not_loaded",
        None,
        [
            "ModuleNotFoundError: No module named 'sgl_kernel_npu.sgl_kernel_npu_C'\n",
            "WARNING 07-01 09:00:00 [utils.py:33] Failed to import mindie_ops_C:"
            "No module named 'mindie_llm.mindie_ops_C'\n",
            "导入自定义算子失败：No module named 'lmcache_ascend.c_ops_C'\n",
        ],
    ),
    Kind(
        "a_missing_glibc_or_libstdcxx_version_is_a_c_runtime_too_old",
        "other",
        "c_runtime_too_old",
        [
            "/usr/local/Ascend/ascend-toolkit/latest/bin/atc: /lib64/libc.so.6: version `GLIBC_2.34' not found "
            "(required by /usr/local/Ascend/ascend-toolkit/latest/lib64/libge_runner.so)\n",
            "ImportError: /opt/conda/lib/libstdc++.so.6: version `GLIBCXX_3.4.30' not found (required by "
            "/usr/local/lib/python3.10/site-packages/torch_npu/lib/libtorch_npu.so)\n",
            "编译器启动失败：bisheng: /lib/aarch64-linux-gnu/libc.so.6: version 'GLIBC_2.32' not found\n",
        ],
    ),
    Kind(
        "a_tool_that_cannot_support_the_soc_version_is_an_unsupported_soc",
        "soc_unsupported",
        None,
        [
            "ValueError: cannot support soc_version Ascend310B4\n",
            "(EngineCore_DP0 pid=9) ERROR 02-25 03:11:49 [utils.py:700] RuntimeError: Can not support soc_version: "
            "225.\n",
            "不支持：this build does not support soc_version 260\n",
        ],
    ),
    Kind(
        "uv_finding_no_version_of_an_ascend_package_is_a_missing_index",
        "package_index_missing",
        None,
        [
            "  ╰─▶ Because there is no version of torch-npu==2.9.0.post1 and you require torch-npu==2.9.0.post1, "
            "we can "
            "conclude that your requirements are unsatisfiable.\n",
            f"{ESC}[31m  ╰─▶ Because there is no version of triton_ascend==3.3.0 and you require it{ESC}[0m\n",
            "依赖解析失败：Because there is no version of triton-ascend==3.2.2 and vllm-ascend==0.20.0 depends on "
            "triton-ascend==3.2.2\n",
        ],
    ),
    Kind(
        "npu_smi_missing_from_a_programs_search_paths_is_a_container_without_the_npu",
        "container_no_device",
        None,
        [
            "E0412 device_plugin.go:88] Allocate failed: npu-smi not found in [/usr/local/bin/npu-smi] or PATH\n",
            f"{ESC}[33mWARN{ESC}[0m npu-smi not found in PATH, cannot query Ascend310P3 devices\n",
            "Pod 启动失败：npu-smi not found in [/usr/local/sbin/npu-smi]\n",
        ],
    ),
    Kind(
        "an_hccl_execution_timeout_points_at_the_rank_that_failed_first",
        "other",
        "collective_timeout",
        [
            "EI0002: [PID: 12] 2026-03-03-01:02:03.000.000 The wait execution of the Notify register times out. "
            "Reason: The Notify register has not received the Notify record from remote rank [3].\n",
            f"{ESC}[36m(WorkerDict pid=77){ESC}[0m Cluster Exception Location[IP/ID]:[10.0.0.8/6], "
            "ExceptionType:[Stuck Occurred], Possible Reason:1. Process has exited\n",
            "[rank0]: 通信超时 ExceptionType:[Heartbeat Lost Occurred], Possible Reason:1. Process has exited\n",
        ],
    ),
    Kind(
        "torch_npus_operator_wrapper_alone_names_an_operator_failure",
        "other",
        "operator_failed",
        [
            "RuntimeError: The Inner error is reported as above. The process exits for this inner error, "
            "and the current working operator name is GridSampler2D.\n",
            f"{ESC}[31mERROR 05-06 07:08:09 [engine.py:400] The Inner error is reported as above. The process exits "
            "for "
            f"this inner error, and the current working operator name is RopeOperation.{ESC}[0m\n",
            "报错 RuntimeError: ... current working operator name is aclnnIndexPutImpl.\n",
        ],
    ),
    Kind(
        "a_name_missing_from_an_ascend_package_is_a_release_mismatch_of_the_pair",
        "other",
        "companion_package_release_mismatch",
        [
            "ImportError: cannot import name 'NPUPlatform' from 'vllm_ascend.platform' "
            "(/usr/local/lib/python3.11/site-packages/vllm_ascend/platform.py)\n",
            f"{ESC}[31m(EngineCore pid=9) ImportError: cannot import name 'npu_fused_infer_attention_score_v2' from "
            f"'torch_npu' (/usr/local/lib/python3.10/site-packages/torch_npu/__init__.py){ESC}[0m\n",
            "导入失败 ImportError: cannot import name 'AscendAttentionBackendImpl'\n",
        ],
    ),
    Kind(
        "a_kernel_tile_too_big_for_the_unified_buffer_is_the_kernel_s_tiling",
        "other",
        "kernel_tile_exceeds_ub",
        [
            'loc("/opt/vllm_ascend/ops/triton/rope.py":77:0): error: ub overflow, requires 2359296 bits while '
            "1572864 bits available!\n[ERROR] Failed to run BiShengIR pipeline\n",
            f"{ESC}[31mE0412 triton.compiler.errors.MLIRCompilationError:{ESC}[0m\n"
            "error: ub overflow, requires 3145728 bits while 2097152 bits available! (tilelang kernel gemm_v2)\n",
            "编译失败 算子 fused_moe_kernel: UB overflow, please reduce BLOCK_M / BLOCK_N\n",
        ],
    ),
    Kind(
        "options_the_parser_does_not_define_are_a_usage_error",
        "other",
        "cli_usage",
        [
            "usage: llamafactory-cli train [-h]\nllamafactory-cli: error: unrecognized arguments: --npu_jit_compile "
            "--use_fused_rmsnorm\n",
            f"{ESC}[33m[rank0]:{ESC}[0m ValueError: Some specified arguments are not used by the HfArgumentParser: "
            "['--ascend_rt_visible_devices', '0,1']\n",
            "参数错误 ValueError: remaining_argv: ['--tensor-model-parallel-size', '8', '--sequence-parallel']\n",
        ],
    ),
    Kind(
        "an_attribute_missing_from_an_ascend_package_is_a_release_mismatch_or_its_bug",
        "other",
        "ascend_package_attribute_missing",
        [
            "AttributeError: 'AscendAttentionMetadataBuilder' object has no attribute 'chunked_prefill_enabled'\n",
            f"{ESC}[31m(EngineCore_DP0 pid=412) AttributeError: module 'vllm_ascend.envs' has no attribute "
            f"'VLLM_ASCEND_ENABLE_MLAPO'{ESC}[0m\n",
            "导入内核失败 AttributeError: module 'mindspeed.ops' has no attribute 'npu_rotary_position_embedding'\n",
        ],
    ),
    Kind(
        "torch_npus_invalid_argument_codes_name_the_script_s_tensors",
        "other",
        "torch_npu_invalid_argument",
        [
            "RuntimeError: expected scalar type Half but found Float\n"
            "[ERROR] 2026-01-05-10:11:12 (PID:4242, Device:3, RankID:3) ERR01001 OPS invalid parameter\n",
            f"(EngineCore_DP0 pid=77) ERROR 01-05 10:11:12 [core.py:700] {ESC}[31m[ERROR] 2026-01-05-10:11:12 "
            f"(PID:77, Device:0, RankID:-1) ERR04002 PROF invalid type{ESC}[0m\n",
            "训练报错：索引越界\n[ERROR] 2026-02-01-08:00:00 (PID:9, Device:1, RankID:1) ERR00003 PTA invalid value\n",
        ],
    ),
    Kind(
        "torch_npus_feature_not_supported_code_is_an_unsupported_call",
        "other",
        "torch_npu_feature_not_supported",
        [
            "[W compiler_depend.ts:51] Warning: CAUTION: The operator 'aten::_linalg_svd.U' is not currently "
            "supported\n[ERROR] 2026-03-02-11:00:01 (PID:31, Device:0, RankID:-1) ERR01007 OPS feature not supported\n",
            f"{ESC}[31m[rank5]: [ERROR] 2026-03-02-11:00:01 (PID:88, Device:5, RankID:5) ERR02007 DIST feature not "
            f"supported{ESC}[0m\n",
            "调用失败：npu does not support [sparse_coo]. ERR00007 PTA feature not supported.\n",
        ],
    ),
    Kind(
        "torch_npus_resource_not_found_code_is_an_environment_not_set_up",
        "env_not_sourced",
        None,
        [
            "[ERROR] 2026-04-09-09:09:09 (PID:5, Device:-1, RankID:-1) ERR00008 PTA resource not found\n",
            f"{ESC}[31m(Worker_TP1 pid=600) ERROR 04-09 09:09:09 [ERROR] 2026-04-09-09:09:09 (PID:600, Device:1, "
            f"RankID:1) ERR04008 PROF resource not found{ESC}[0m\n",
            "找不到资源 [ERROR] 2026-04-09-09:09:09 (PID:7, Device:0, RankID:0) ERR02008 DIST resource not found\n",
        ],
    ),
    Kind(
        "torch_npus_permission_code_is_a_file_permission",
        "permission",
        None,
        [
            "[ERROR] 2026-05-01-12:00:00 (PID:17, Device:0, RankID:-1) ERR00012 PTA permission error\n",
            f"{ESC}[33m[rank2]:{ESC}[0m [ERROR] 2026-05-01-12:00:00 (PID:19, Device:2, RankID:2) ERR04012 PROF "
            "permission error\n",
            "保存失败：/data/prof 目录权限不对。ERR00012 PTA permission error\n",
        ],
    ),
    Kind(
        "a_port_held_by_another_process_is_named_with_its_fix",
        "other",
        "port_in_use",
        [
            "[W socket.cpp:464] [c10d] The server socket has failed to bind to 0.0.0.0:29611 (errno: 98 - Address "
            "already in use).\n",
            f"(APIServer pid=3101) ERROR 06-01 08:00:00 [api_server.py:1] {ESC}[31mOSError: [Errno 98] error while "
            f"attempting to bind on address ('0.0.0.0', 8000): address already in use{ESC}[0m\n"
            "OSError: [Errno 98] Address already in use\n",
            "启动失败：端口被占用 listen tcp :30000: bind: EADDRINUSE\n",
        ],
    ),
    Kind(
        "a_torch_npu_header_missing_from_an_extension_build_is_a_build_for_another_torch_npu",
        "framework_build_mismatch",
        None,
        [
            "/root/build/sgl_custom/csrc/ops/rope.cpp:3:10: fatal error: torch_npu/csrc/framework/OpCommand.h: "
            "No such file or directory\ncompilation terminated.\n",
            f"{ESC}[31mninja: build stopped{ESC}[0m\n/work/mmcv/mmcv/ops/csrc/npu/nms_npu.cpp:12:10: fatal error: "
            "'op_plugin/utils/OpAdapter.h' file not found\n",
            "编译扩展失败 kernels/npu_ops.cpp:8:10: "
            "致命错误：torch_npu/csrc/core/npu/NPUStream.h：没有那个文件或目录\n",
        ],
    ),
    Kind(
        "a_framework_refusing_the_installed_torch_npu_or_cann_is_a_pair_not_validated",
        "framework_build_mismatch",
        None,
        [
            "RuntimeError: vllm-ascend 0.13.0 requires torch_npu>=2.8.0.post1, found 2.7.1\n",
            f"{ESC}[31m[FAIL]{ESC}[0m CANN must be 9.1.0 or newer for the A5 kernels; got 8.5.0\n",
            "环境检查失败：MindSpeed requires CANN version 8.3.RC1 or later, 当前 8.2.RC1\n",
        ],
    ),
    Kind(
        "a_compile_error_in_a_jit_generated_temporary_source_is_the_front_end_s_code",
        "other",
        "jit_generated_source_error",
        [
            "/tmp/tmpa81kq2zd.cpp:58:12: error: no member named 'BlockReduceMax' in namespace 'AscendC'\n"
            "1 error generated.\n",
            f"{ESC}[31m/tmp/tmp_x9c1mfe/kernel.cpp:104:5: error:{ESC}[0m use of undeclared identifier 'vid_'\n",
            "生成代码编译失败 /tmp/torchinductor_root/ab/cab3k2.cpp:21:9: error: "
            "'npu_stream' was not declared in this scope\n",
        ],
    ),
    Kind(
        "a_construct_the_tvmscript_parser_lacks_is_the_kernel_source_not_the_machine",
        "other",
        "dsl_construct_unsupported",
        [
            "error: Visitor of AST node is not implemented: Continue\n --> /work/kernels/topk.py:41:17\n",
            f"{ESC}[31merror:{ESC}[0m Visitor of AST node is not implemented: While\n",
            "tilelang 编译内核失败 error: Visitor of AST node is not implemented: Try\n",
        ],
    ),
    Kind(
        "torch_not_knowing_the_npu_device_is_torch_npu_not_loaded",
        "other",
        "torch_npu_not_loaded",
        [
            "RuntimeError: Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, "
            "maia, xla, "
            "lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device string: npu:0\n",
            f"{ESC}[31m(EngineCore pid=7){ESC}[0m RuntimeError: Expected one of cpu, cuda, xpu, mps, meta, "
            "privateuseone device type at start of device string: npu\n",
            "模型加载失败 RuntimeError: Expected one of cpu, cuda device type at start of device string: npu:3\n",
        ],
    ),
    Kind(
        "a_port_held_by_another_process_is_a_deployment_conflict",
        "other",
        "port_in_use",
        [
            "RuntimeError: The server socket has failed to listen on any local network address. The server socket "
            "has failed to bind to [::]:29500 (errno: 98 - Address already in use).\n",
            f"{ESC}[31m(APIServer pid=77) ERROR 03-02 10:11:12 [api_server.py:955] OSError: [Errno 98] error while "
            f"attempting to bind on address ('0.0.0.0', 8000): address already in use{ESC}[0m\n",
            "端口冲突 [ERROR] HCCL(1234,python):2026-03-01-10:00:00.000.000 "
            "[hccl_socket.cc:106] [1234][HcclSocket][Listen]"
            " socket type[0], listen on ip[10.0.0.5] and specific port[60001] fail. Please check the port status and "
            "whether the port is being used by other process.\n",
        ],
    ),
    Kind(
        "a_missing_submodule_of_an_installed_framework_is_a_release_mismatch",
        "other",
        "framework_submodule_missing",
        [
            "ModuleNotFoundError: No module named 'vllm_ascend.distributed'\n",
            f"{ESC}[31m(EngineCore_DP0 pid=31) ModuleNotFoundError: No module named "
            f"'vllm.v1.attention.backends.mla.prefill'{ESC}[0m\n",
            "导入失败：ModuleNotFoundError: No module named 'mindspeed_llm.tasks.megatron_adaptor'\n",
        ],
    ),
    Kind(
        "an_import_from_an_unknown_location_is_a_directory_shadowing_the_package",
        "other",
        "package_shadowed_by_directory",
        [
            "(EngineCore_DP0 pid=311) ImportError: cannot import name 'npu_format_cast' from 'torch_npu' "
            "(unknown location)\n",
            f"{ESC}[31mImportError: cannot import name 'AutoModelForCausalLM' from 'transformers' "
            f"(unknown location){ESC}[0m\n",
            "导入失败：ImportError: cannot import name 'pipeline' from 'mindspeed_llm.tasks' (unknown location)\n",
        ],
    ),
    Kind(
        "a_tokenizer_class_or_model_type_transformers_lacks_is_transformers_older_than_the_model",
        "other",
        "transformers_older_than_model",
        [
            "ValueError: Tokenizer class Glm4MoeTokenizer does not exist or is not currently imported.\n",
            f"{ESC}[1;31mERROR 08-02 11:22:33 [core.py:586]{ESC}[0m ValueError: The checkpoint you are trying to "
            "load has model type `qwen3_next` but Transformers does not recognize this architecture. This could "
            "be because of an issue with the checkpoint, or because your version of Transformers is out of date.\n",
            "[2026-02-19 09:59:12.384944] [917] [llm] [ERROR] "
            "加载分词器失败 ValueError: Tokenizer class Ernie4_5Tokenizer "
            "does not exist or is not currently imported.\n",
        ],
    ),
    Kind(
        "torch_npus_feature_not_supported_code_is_an_operator_without_npu_implementation",
        "other",
        "torch_npu_feature_not_supported",
        [
            "RuntimeError: [npu_fusion_attention] does not support [sparse_mode=8]. ERR00007 PTA feature not "
            "supported.\n",
            f"{ESC}[31m[ERROR] 2026-03-02-10:11:12 (PID:9911, Device:3, RankID:3) ERR01007 OPS feature "
            f"not supported{ESC}[0m\n",
            "算子不支持 [ERROR] 2025-12-01-08:00:00 (PID:123, Device:0, "
            "RankID:-1) ERR02007 DIST feature not supported\n",
        ],
    ),
    Kind(
        "a_port_already_in_use_is_another_process_holding_it",
        "other",
        "port_in_use",
        [
            "[W socket.cpp:464] [c10d] The server socket has failed to bind to 0.0.0.0:29611 (errno: 98 - Address "
            "already in use).\n",
            f"{ESC}[31m(APIServer pid=1) ERROR 07-01 10:00:00 [api_server.py:1100] OSError: [Errno 98] error while "
            f"attempting to bind on address ('0.0.0.0', 8000): address already in use{ESC}[0m\n",
            "服务启动失败：zmq.error.ZMQError: Address already in use (addr='tcp://*:5557')\n",
        ],
    ),
    Kind(
        "an_operators_host_tiling_check_is_a_shape_outside_its_specification",
        "other",
        "operator_spec",
        [
            "EZ9999: [PID: 1201] 2026-04-01-10:00:00.000.001 headDim:576 cannot be greater than 512.[FUNC:CheckInput"
            "FormatAndLimits][FILE:fused_infer_attention_score_tiling_check.cc][LINE:402]\n",
            f"{ESC}[31m[rank3]: RuntimeError: EZ9999: [PID: 88] blockSize=20, it need align to 16 when kv dtype is "
            f"fp16/bf16.[FUNC:CheckPABlockSize][FILE:sparse_paged_fusion_attention_tiling_check.cc][LINE:57]{ESC}[0m\n",
            "算子校验失败 EZ9999: numHeads:32 of key must be equal to numHeads:8 of kv when 310P.[FUNC:CheckInputFormat"
            "AndLimits][FILE:prompt_flash_attention_tiling_check.cpp][LINE:88]\n",
        ],
    ),
    Kind(
        "an_atb_infer_shape_failure_is_a_tensor_the_operation_does_not_support",
        "other",
        "atb_operation_shape",
        [
            "[2026-03-01 10:00:00.000000] [2211] [llm] [ERROR] [operation_base.cpp:273] LlamaDecoderLayer_graph infer "
            "shape fail, error code: 6\n",
            f"{ESC}[31m(Worker_TP1 pid=902) ERROR 04-05 06:07:08 [model.py:120]{ESC}[0m node[12] infer shape fail, "
            "error "
            "code: 9\n",
            "推理失败 [dicp] model_7 nodes[3]  infer shape fail, error code: 5\n",
        ],
    ),
    Kind(
        "a_library_of_the_ascend_stack_whose_dependency_ld_misses_is_the_cann_environment",
        "env_not_sourced",
        None,
        [
            "/usr/bin/ld: warning: libgraph.so, needed by "
            "/usr/local/Ascend/ascend-toolkit/latest/lib64/libge_runner.so, "
            "not found (try using -rpath or -rpath-link)\n",
            "[ 92%] Linking CXX executable main\n"
            "/usr/bin/ld: warning: libascend_hal.so, needed by /opt/cann/lib64/libascendcl.so, not found\n",
            "链接失败：ld: warning: libc_sec.so, needed by libtorch_npu.so, "
            "not found (try using -rpath or -rpath-link)\n",
        ],
    ),
    Kind(
        "a_start_script_finding_the_npu_held_is_device_busy",
        "device_busy",
        None,
        [
            "2026-03-01 10:00:05 npu is busy, check again\n",
            f"{ESC}[33m[train_start.sh]{ESC}[0m npu is busy, check again\n",
            "启动检查：npu is occupied by others too long, please release it\n",
        ],
    ),
    Kind(
        "an_ascend_tool_refusing_a_path_for_its_owner_or_mode_is_permission",
        "permission",
        None,
        [
            "2026-05-02 11:22:33,444 ERROR : The file path '/home/u/model.om' may be insecure because is does not "
            "belong to you.\n",
            f"{ESC}[31m[ERROR]{ESC}[0m    2026/01/02 03:04:05.060708 1  devmanager/devmanager.go:83  deviceManager "
            "init failed, prepare dcmi failed, err: lib path is invalid, "
            "[/usr/local/dcmi: check uid or mode failed;]\n",
            "量化脚本退出：The input path may be insecure because it can be written by others.\n",
        ],
    ),
    # batch R: a CANN error behind a torch_npu operator call, nothing more specific (other ops, codes,
    # prefixes, Chinese text); with a line that says why, that line's cause goes first
    Kind(
        "a_cann_error_behind_a_torch_npu_op_call_is_first_a_cann_older_than_torch_npu",
        "torch_npu_cann_mismatch",
        None,
        [
            "RuntimeError: InnerRun:torch_npu/csrc/framework/OpParamMaker.cpp:208 OPS function error: "
            "MaxPool3DWithArgmax, error code is 500002\n"
            "[ERROR] 2026-03-02-10:11:12 (PID:812, Device:0, RankID:-1) ERR01100 OPS call acl api failed\n",
            f"{ESC}[36m(VllmWorker rank=1 pid=401){ESC}[0m ERROR 03-02 10:11:12 [multiproc_executor.py:470] "
            "RuntimeError: InnerRun:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:218 OPS function error: "
            "Im2col, error code is 500003\n",
            "训练报错：[ERROR] 2026-01-05-08:00:00 (PID:77, Device:2, RankID:2) ERR01100 OPS call acl api failed\n",
        ],
    ),
    Kind(
        "an_op_call_error_after_the_line_that_says_why_ranks_that_cause",
        "kernels_missing",
        None,
        [
            "EZ9999: Inner Error!\nEZ9999: [PID: 9] Cannot find bin of op SoftmaxV2, integral key 0/1/|float16/ND/\n"
            "RuntimeError: OPS function error: SoftmaxV2, error code is 500002\n",
            "Cannot find bin of op Cumsum, integral key 0/1/|bf16/ND/\n"
            "[ERROR] 2026-02-02-02:02:02 (PID:1, Device:0, RankID:-1) ERR01100 OPS call acl api failed\n",
            f"{ESC}[31m[rank0]: Cannot find bin of op GatherV2{ESC}[0m\n[rank0]: ERR01100 OPS call acl api failed\n",
        ],
    ),
]


@pytest.mark.parametrize(
    ("kind", "text"),
    [(kind, text) for kind in RANKED_FIRST for text in kind.texts],
    ids=[f"{kind.name}-{i}" for kind in RANKED_FIRST for i in range(len(kind.texts))],
)
def test_each_kind_ranks_its_cause_first(kind, text):
    causes = _top(text)
    assert causes[0][0] == kind.cause, causes
    assert kind.detail is None or (causes[0][1] or "").startswith(kind.detail), causes


def test_every_kind_has_three_variants():
    assert all(len(kind.texts) >= 3 for kind in RANKED_FIRST), [k.name for k in RANKED_FIRST if len(k.texts) < 3]
    assert len({kind.name for kind in RANKED_FIRST}) == len(RANKED_FIRST)


# --- kinds from held-out batch L (tests/data/triage_heldout_l): three variants each that no set
# holds (other CANN APIs / op types / SoCs, log prefixes, ANSI colours, Chinese text) and a near miss ---


@pytest.mark.parametrize(
    "text",
    [
        "(EngineCore pid=311) RuntimeError: Failed to find function HcclCommInitClusterInfoConfig\n",
        f"{ESC}[31m[rank5]: RuntimeError: Failed to find function aclrtGetDeviceInfo{ESC}[0m\n",
        "创建通信域失败：RuntimeError: Failed to find function HcclGetCommName\n",
    ],
)
def test_torch_npu_missing_a_cann_api_is_a_cann_older_than_it_needs(text):
    causes = [c for c, _ in _top(text)]
    assert causes[0] == "torch_npu_cann_mismatch" and "env_not_sourced" in causes, causes


def test_a_missing_function_of_the_users_own_code_is_not_a_cann_mismatch():
    text = "ValueError: Failed to find function get_train_step in module 'my_trainer'\n"
    causes = [c for c, _ in _top(text)]
    assert "torch_npu_cann_mismatch" not in causes, causes


EZ3003_ONLINE = (
    "EZ3003: [PID: 812] 2026-02-03-04:05:06.789.012 No supported Ops kernel and engine are found for [{node}], "
    "optype [{op}].\n"
    "        Possible Cause: The operator is not supported by the system. Therefore, no hit is found in any "
    "operator information library.\n"
    "        [Build][SingleOpModel]call ge interface generator.BuildSingleOpModel failed. ge result = 4294967295\n"
)


@pytest.mark.parametrize(
    "text",
    [
        "[ERROR] 2026-02-03 04:05:06 (MindSpore) " + EZ3003_ONLINE.format(node="Im2col7", op="Im2col"),
        f"{ESC}[31m" + EZ3003_ONLINE.format(node="UpsampleNearest3d2", op="UpsampleNearest3d") + f"{ESC}[0m",
        "310B 上推理报错：\n" + EZ3003_ONLINE.format(node="ResizeBicubic41", op="ResizeBicubic"),
    ],
)
def test_a_framework_building_an_op_no_store_knows_is_the_soc_not_supporting_it(text):
    causes = [c for c, _ in _top(text)]
    assert causes[0] == "soc_unsupported" and "kernels_missing" in causes, causes


def test_ez3003_of_an_offline_atc_build_still_reads_as_its_custom_op_not_loaded():
    text = (
        "ATC run failed, Please check the detail log, Try 'atc --help' for more information\n"
        "EZ3003: No supported Ops kernel and engine are found for [MyMatmulCustom], optype [MyMatmulCustom].\n"
        "        build graph failed, graph id:0, ret:-1[FUNC:BuildModel][FILE:ge_generator.cc][LINE:148]\n"
    )
    causes = [c for c, _ in _top(text)]
    assert causes[0] == "custom_op_not_loaded" and "soc_unsupported" in causes, causes


# --- held-out batch N: the device's AI CPU executor (TSD) not starting; an AI CPU inner error (E39999) alone


@pytest.mark.parametrize(
    "text",
    [
        "E39999: Inner Error!\n"
        "E39999 TsdOpen failed. devId=3, tdt error=1[FUNC:PrintfTsdError][FILE:runtime.cc][LINE:2638]\n",
        "推理进程启动失败：Start aicpu executor failed, retCode=0x7020009 devId=1"
        "[FUNC:DeviceRetain][FILE:runtime.cc][LINE:3810]\n",
        f"(EngineCore_DP0 pid=311) ERROR 01-02 03:04:05 [core.py:708] {ESC}[31mTsdOpen failed, devId=7, tdt "
        f"error=1[FUNC:startAicpuExecutor][FILE:runtime.cc][LINE:1702]{ESC}[0m\n",
    ],
)
def test_the_aicpu_executor_not_starting_is_the_driver_cann_pair_or_the_aicpu_environment(text):
    causes = [c for c, _ in _top(text)]
    assert causes[0] == "driver_cann_mismatch", causes
    assert {"env_not_sourced", "device_busy"} <= set(causes[:3]), causes


@pytest.mark.parametrize(
    ("text", "first", "absent"),
    [
        # an AI CPU kernel failing while it runs: the executor did start
        (
            "Aicpu kernel execute failed, device_id=0, stream_id=116, task_id=2, fault so_name=libaicpu_kernels.so, "
            "fault kernel_name=GetNext\n" + DISK,
            "disk_or_tmp_full",
            "env_not_sourced",
        ),
        # HCCP refusing while the last training process runs: no TsdOpen of the runtime
        (
            "EJ0001: Failed to initialize the HCCP process. Reason: Maybe the last training process is running.\n"
            "        tsd client wait response fail, device response code[1]. unknown device error.\n",
            "device_busy",
            "env_not_sourced",
        ),
        # E39999 is a wrapper: the causal line after it (a full disk) ranks first
        ("E39999: Inner Error, Please contact support engineer!\n" + DISK, "disk_or_tmp_full", None),
    ],
)
def test_the_batch_n_kinds_leave_a_log_of_another_cause_to_that_cause(text, first, absent):
    causes = _top(text)
    assert causes[0][0] == first, causes
    assert absent is None or absent not in [c for c, _ in causes], causes


@pytest.mark.parametrize(
    "text",
    [
        "RuntimeError: Call aclnnArgMaxWithValue failed, detail:E39999: Inner Error\n",
        "服务拉起失败：E39999: Inner Error, Please contact support engineer!\n",
        f"{ESC}[31m[ERROR]{ESC}[0m 2026-01-02 03:04:05 [mindie] E39999: [PID: 4321] 2026-01-02-03:04:05.678.901 "
        "Inner Error!\n",
    ],
)
def test_an_aicpu_inner_error_alone_is_a_cann_the_framework_was_not_built_for(text):
    causes = [c for c, _ in _top(text)]
    assert causes[0] == "framework_build_mismatch" and "driver_cann_mismatch" in causes[:3], causes


# --- kinds from held-out batch M: each with three variants neither corpus holds and a near miss ---


@pytest.mark.parametrize(
    "text",
    [
        "[ACL ERROR] EE1001: [PID: 4410] 2026-01-02-03:04:05.678.901 The argument is invalid.Reason: "
        "ModelCheckCompatibility failed, supported socVersion=Ascend310P3, but the model socVersion=Ascend310B1\n",
        f"{ESC}[31m[ERROR]{ESC}[0m GE(7781,python3):2026-02-03-04:05:06.070.809 [om_file_helper.cc:265]7781 "
        "CheckModelCompatibility: Call rtModelCheckCompatibility(model_soc_version.c_str(), model_arch_type.c_str()) "
        "fail\n        rtModelCheckCompatibility execute failed, reason=[soc version error]\n",
        "模型加载失败：Check model compatibility failed.[FUNC:LoadModelData][FILE:model_helper.cc][LINE:1266]\n",
    ],
)
def test_an_om_model_converted_for_another_soc_is_soc_unsupported(text):
    causes = _top(text)
    assert causes[0][0] == "soc_unsupported", causes


@pytest.mark.parametrize(
    "text",
    [
        "EZ9999: Inner Error!\nThe error from device(0), serial number is 7, there is an aivec error, core id is 2, "
        "error code = 0x10, dump info: pc start: 0x124080131000, errorStr: Illegal instruction, which is usually "
        "caused by unaligned UUB addresses.[FUNC:PrintCoreErrorInfo][FILE:device_error_proc.cc][LINE:537]\n",
        f"{ESC}[31m[ERROR] RUNTIME(3312,main):2026-03-04-05:06:07.080.910{ESC}[0m The extend info: "
        "errcode:(0x10, 0, 0) errorStr: Illegal instruction, which is usually caused by unaligned UUB addresses. "
        "fsmId:1, tslot:6\n",
        "推理报错：there is an aivec error exception, core id is 41, error code = 0x10 ... "
        "errorStr:Illegal instruction\n",
    ],
)
def test_a_vector_core_illegal_instruction_keeps_another_socs_kernels_in_the_top_three(text):
    causes = [c for c, _ in _top(text)]
    assert causes[0] == "other" and "soc_unsupported" in causes[:3], causes


@pytest.mark.parametrize(
    ("text", "first", "absent"),
    [
        # the host CPU's SIGILL (a wheel built for a newer ARM/x86 ISA), not the AI Core's
        ("Illegal instruction (core dumped)\n" + DISK, "disk_or_tmp_full", "soc_unsupported"),
        # a log line naming the model's SoC without the check failing
        (
            "INFO model socVersion=Ascend910B2 matches the device, loading model.om\n" + DISK,
            "disk_or_tmp_full",
            "soc_unsupported",
        ),
    ],
)
def test_the_batch_m_kinds_leave_a_log_of_another_cause_to_that_cause(text, first, absent):
    causes = _top(text)
    assert causes[0][0] == first, causes
    assert absent not in [c for c, _ in causes], causes


# --- kinds from held-out batch T: each with three variants neither corpus holds and a near miss ---


@pytest.mark.parametrize(
    "text",
    [
        "ERROR: Could not find a version that satisfies the requirement paddle_custom_npu==3.1.1 "
        "(from versions: none)\nERROR: No matching distribution found for paddle_custom_npu==3.1.1\n",
        "安装失败：ERROR: No matching distribution found for paddle-custom-npu==3.2.0（Python 3.12，x86_64）\n",
        f"{ESC}[31mERROR: No matching distribution found for PADDLE-CUSTOM-NPU{ESC}[0m\nPython version: 3.11.9\n",
    ],
)
def test_pip_finding_no_paddle_npu_plugin_wheel_is_a_python_without_wheel(text):
    causes = [c for c, _ in _top(text)]
    assert causes[0] == "python_no_wheel" and "package_index_missing" in causes[:3], causes


@pytest.mark.parametrize(
    ("text", "first", "absent"),
    [
        # the plugin installed fine: its name alone names no cause
        ("Successfully installed paddle-custom-npu-3.0.0\n" + DISK, "disk_or_tmp_full", "python_no_wheel"),
        # torch-npu not found stays the missing index it was
        (
            "ERROR: No matching distribution found for torch-npu==2.1.0.post3\n",
            "package_index_missing",
            None,
        ),
    ],
)
def test_the_batch_t_kind_leaves_a_log_of_another_cause_to_that_cause(text, first, absent):
    causes = _top(text)
    assert causes[0][0] == first, causes
    assert absent is None or absent not in [c for c, _ in causes], causes


# --- kinds from held-out batch S: each with three variants neither corpus holds and a near miss ---


@pytest.mark.parametrize(
    "text",
    [
        "RuntimeError: ACL stream synchronize failed, error code:507014\n[Error]: The aicore execution times out.\n",
        f"(Worker_TP3 pid=4242) {ESC}[31mERROR{ESC}[0m 02-03 04:05:06 [multiproc_executor.py:700] RuntimeError: "
        "synchronize:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:467 NPU function error: "
        "AclrtSynchronizeDeviceWithTimeout, error code is 507014\n",
        "推理卡住后报错：rtStreamSynchronize execute failed, reason=[aicore timeout] 同步流失败，"
        "runtime result = 507014\n",
    ],
)
def test_a_device_task_timeout_keeps_a_driver_older_than_the_cann_in_the_top_three(text):
    causes = [c for c, _ in _top(text)]
    assert causes[0] == "other" and "driver_cann_mismatch" in causes[:3], causes


@pytest.mark.parametrize(
    "text",
    [
        "RuntimeError: aclnnMoeInitRoutingV3 or aclnnMoeInitRoutingV3GetWorkspaceSize not in libopapi.so, "
        "or libopapi.so not found.\n",
        f"(EngineCore_DP0 pid=77) {ESC}[31mERROR{ESC}[0m 03-04 05:06:07 [core.py:866] RuntimeError: "
        "aclnnGroupedMatmulSwigluQuant or aclnnGroupedMatmulSwigluQuantGetWorkspaceSize not in libopapi.so, "
        "or libopapi.sonot found.\n",
        "启动失败：aclnnDispatchLayout or aclnnDispatchLayoutGetWorkspaceSize not in libopapi.so, "
        "or libopapi.so not found.（升级 CANN 之后）\n",
    ],
)
def test_an_aclnn_op_missing_from_libopapi_keeps_a_framework_built_for_another_cann_in_the_top_three(text):
    causes = [c for c, _ in _top(text)]
    assert causes[0] == "custom_op_not_loaded" and "framework_build_mismatch" in causes[:3], causes


@pytest.mark.parametrize(
    ("text", "first", "absent"),
    [
        # a number that is not a runtime code, next to a full disk
        ("INFO processed 507014 tokens in 12.3 s\n" + DISK, "disk_or_tmp_full", "driver_cann_mismatch"),
        # libopapi.so itself not found by the loader (CANN's environment not sourced): not an op
        # missing from it, so not the aclnn kind's causes
        (
            "ImportError: libopapi.so: cannot open shared object file: No such file or directory\n",
            "env_not_sourced",
            "custom_op_not_loaded",
        ),
    ],
)
def test_the_batch_s_kinds_leave_a_log_of_another_cause_to_that_cause(text, first, absent):
    causes = _top(text)
    assert causes[0][0] == first, causes
    assert absent not in [c for c, _ in causes], causes
