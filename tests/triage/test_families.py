"""Generalisation (issue #24): each rule family ranks messages it was not written from — other
library names, other symbols of the same namespace, other numbers, other SoC names, Chinese text
around, ANSI colours, vLLM/MindIE/Ray log prefixes. None of these lines is from the corpus."""

from __future__ import annotations

import functools
import io

import pytest

from ascenv.checks import load_checks
from ascenv.triage import load, triage
from ascenv.triage.families import held_elsewhere, leading_name

ESC = "\x1b"


@functools.cache
def table():
    return load(known_checks=set(load_checks()))


def top(text: str) -> str:
    result = triage(io.BytesIO(text.encode()), None, None, table())
    assert result.causes, f"nothing recognised in {text!r}"
    return result.causes[0].cause


def top_detail(text: str) -> str:
    result = triage(io.BytesIO(text.encode()), None, None, table())
    return result.causes[0].detail or ""


# --- three more variants per family, none from the corpus (issue #24's list: another library,
# another symbol of the same namespace, other numbers, another SoC name, Chinese text around,
# ANSI colours, vLLM/MindIE/Ray prefixes) ---------------------------------------------------------

TORCH_NPU_LIB = "/usr/local/lib/python3.11/site-packages/torch_npu/lib/libtorch_npu.so"
MINDIE = "[2025-06-10 10:11:12.123+08:00] [1234] [ERROR] "


UNDEFINED_MORE = [
    # c10 / at / torch symbols wanted by torch_npu: torch and torch_npu are not a pair
    (
        f"(EngineCore_DP0 pid=412) ImportError: {TORCH_NPU_LIB}: undefined symbol: "
        "_ZN5torch3jit6tracer9addInputsEPNS0_4NodeEPKcRKN3c108optionalINS5_10ScalarTypeEEE",
        "torch_torch_npu_mismatch",
    ),
    (
        f"{ESC}[1;31mOSError{ESC}[0m: /opt/py/site-packages/torch_npu/_C.cpython-310-x86_64-linux-gnu.so: "
        "undefined symbol: _ZNK2at10TensorBase8toStringEv",
        "torch_torch_npu_mismatch",
    ),
    (
        "导入 torch_npu 报错：libtorch_npu.so: undefined symbol: _ZN3c1019UndefinedTensorImpl10_singletonE",
        "torch_torch_npu_mismatch",
    ),
    # atb / AsdOps symbols wanted by torch_npu's ATB plugin: NNAL and torch_npu are not a pair
    (
        "libop_plugin_atb.so: undefined symbol: _ZN3atb14SetExecuteTypeEPNS_7ContextENS_11ExecuteTypeE",
        "torch_npu_cann_mismatch",
    ),
    (
        f"{MINDIE}/usr/lib/python3.10/site-packages/torch_npu/lib/libop_plugin_atb.so: undefined symbol: "
        "_ZN3atb9CreateOpsEv",
        "torch_npu_cann_mismatch",
    ),
    (
        "OSError: libop_plugin_atb.so: undefined symbol: _ZN6AsdOps6Tensor5ResetEv（请检查 NNAL 版本）",
        "torch_npu_cann_mismatch",
    ),
    # acl / aclnn / hccl / ge symbols wanted by torch_npu: CANN and torch_npu are not a pair
    (
        f"ImportError: {TORCH_NPU_LIB}: undefined symbol: aclrtSynchronizeDeviceWithTimeout",
        "torch_npu_cann_mismatch",
    ),
    (
        f"(RayWorkerWrapper pid=9) ImportError: {TORCH_NPU_LIB}: undefined symbol: HcclCommInitClusterInfoMemConfig",
        "torch_npu_cann_mismatch",
    ),
    (
        f"{ESC}[31mImportError: libtorch_npu.so: undefined symbol: aclnnGroupedMatmulV4GetWorkspaceSize{ESC}[0m",
        "torch_npu_cann_mismatch",
    ),
    (
        "ERROR 05-02 10:11:12 [utils.py:88] libtorch_npu.so: undefined symbol: "
        "_ZN2ge5Graph10SaveToFileERKNS_12AscendStringE",
        "torch_npu_cann_mismatch",
    ),
]


MISSING_LIBRARY_MORE = [
    (
        f"{ESC}[33mERROR 09-03 08:14:32 [worker.py:12] OSError: libhccl_plugin.so: "
        f"cannot open shared object file{ESC}[0m",
        "env_not_sourced",
    ),
    (
        f"{MINDIE}libatb_speed_torch.so: cannot open shared object file: No such file or directory",
        "env_not_sourced",
    ),
    (
        "python3: error while loading shared libraries: libascend_hal.so: cannot open shared object file",
        "container_no_device",
    ),
    ("/usr/bin/ld: cannot find -lhccl: No such file or directory", "env_not_sourced"),
]


MEMORY_MORE = [
    # 58 GiB of 61 held by no one this process knows: another process holds the card
    (
        f"{ESC}[31mRuntimeError: NPU out of memory. Tried to allocate 512.00 MiB (NPU 0; 60.96 GiB total "
        "capacity; 2.10 GiB already allocated; 2.20 GiB current active; 7.00 MiB free; 2.30 GiB reserved in "
        f"total by PyTorch){ESC}[0m 显存不足",
        "device_busy",
    ),
    # vLLM's start-up check with almost all memory free: this job asks for too much
    (
        "(EngineCore_DP0 pid=1) ValueError: Free memory on device (60.10/64.00 GiB) on startup is less than "
        "desired GPU memory utilization (0.95, 60.80 GiB).",
        "out_of_memory",
    ),
    # this process holds 18.5 of 29.5 GiB and asks for 20 more
    (
        "[rank3]: torch.OutOfMemoryError: NPU out of memory. Tried to allocate 20.00 GiB (NPU 3; 29.50 GiB total "
        "capacity; 18.00 GiB already allocated; 10.50 GiB free; 18.50 GiB reserved in total by PyTorch)",
        "out_of_memory",
    ),
    # MindSpore asks for less than the pool holds, and the pool is full
    (
        f"{MINDIE}Out of Memory!!! total[32212254720] (dynamic[0] memory poll[31138512896]) malloc[1073741824] failed!",
        "out_of_memory",
    ),
]


EARLIEST_MORE = [
    (
        f"{ESC}[31mERROR 04-18 08:22:17 [engine.py:400] OSError: [Errno 28] No space left on device{ESC}[0m\n"
        "ERROR 04-18 08:22:18 [engine.py:401] RuntimeError: GEInitialize failed\n",
        "disk_or_tmp_full",
    ),
    (
        "磁盘已满：OSError: [Errno 122] Disk quota exceeded: '/home/u/.cache/kernel_meta/a.o'\n"
        "RuntimeError: TbeInitialize failed\n[ERROR] HCCL function error: HcclCommInitRootInfo(...)\n",
        "disk_or_tmp_full",
    ),
    (
        "(RayWorker pid=3) ImportError: libascend_hal.so: cannot open shared object file\n"
        "(RayWorker pid=3) Segmentation fault (core dumped)\n",
        "container_no_device",
    ),
]


SOC_MORE = [
    # bishengir's target option: a SoC the toolchain does not know
    "bishengir-compile: for the --target option: Cannot find option named 'Ascend910_9382'!",
    f'{ESC}[31merror: Cannot find option named "Ascend310B4"{ESC}[0m',
    # EZ9903: an operator not implemented for this SoC
    f"{MINDIE}EZ9903: OP MoeInitRouting: support for Ascend310P3 is not implemented",
    # bfloat16 on a SoC without it
    "TypeError: aclnnCast: DT_BFLOAT16 is not supported on Ascend910A",
    "计算失败: data type DT_BFLOAT16 not support on Ascend310P3",
    # CMake SOC_VERSION checks
    "CMake Error at cmake/config.cmake:9 (message): SOC_VERSION Ascend310B1 does not support AscendC kernels",
    # "Unsupported soc version" with other SoC names and prefixes
    "[rank0]: RuntimeError: Unsupported soc version: Ascend910_9362",
    "初始化失败: ValueError: Unsupported soc_version: Ascend310P1",
    # a kernel package's binary_info_config for another SoC
    "The binary_info_config.json of socVersion [ascend910_93] does not support opType [MlaProlog]",
]


DEVICE_MORE = [
    f"{ESC}[31m[ERROR] dcmi_init failed: DCMI Library Not Found{ESC}[0m",
    "(RayWorkerWrapper pid=3) /bin/bash: line 1: npu-smi: command not found",
    "ls: cannot access '/dev/davinci_manager': No such file or directory",
    f"{MINDIE}未找到设备 /dev/davinci7: No such file or directory",
]


PACKAGE_INDEX_MORE = [
    "ERROR: Could not find a version that satisfies the requirement torch_npu==2.6.0rc1 (from versions: none)",
    "  ╰─▶ Because torch-npu==2.8.0 depends on torch==2.8.0+cpu and you require torch-npu==2.8.0, we can conclude",
    f"{ESC}[31mERROR: No matching distribution found for triton-ascend==3.2.0rc4{ESC}[0m 安装失败",
]


KERNEL_BINARY_MORE = [
    "EZ1001: [PID: 99] Op GroupedMatmul does not has any binary.",
    "ERROR 05-02 10:11:12 [model_runner.py:9] RuntimeError: aclnnIncreFlashAttentionV4 failed, error code 561003",
    "算子执行失败：kernel config file /usr/local/Ascend/opp/built-in/op_impl/ai_core/tbe/kernel/config/ascend910b/"
    "rms_norm.json not exist",
]


@pytest.mark.parametrize(
    "symbol, name",
    [
        ("_ZN3c1010TensorImpl4sizeEl", "c10"),
        ("_ZNK3c1010TensorImpl5sizesEv", "c10"),
        ("_ZN2at6native5emptyEN3c108ArrayRefIlEE", "at"),
        ("_ZN5torch8autograd4NodeD2Ev", "torch"),
        ("_ZN7c10_npu3acl20AclrtPeekAtLastErrorE17aclrtLastErrLevel", "c10_npu"),
        ("_ZTVN7c10_npu16NPUGuardImplBaseE", "c10_npu"),
        ("_ZN3atb15CreateOperationERKNS_5infer9LinearParamEPPNS_9OperationE", "atb"),
        ("_ZN2ge8Operator7SetAttrEPKcb", "ge"),
        ("_ZN4hccl12HcclCommBase4InitEv", "hccl"),
        ("_ZNKSt6vectorIiSaIiEE4sizeEv", "std"),
        ("aclnnAddGetWorkspaceSize", "aclnnAddGetWorkspaceSize"),
        ("HcclCommInitRootInfo@VER_1", "HcclCommInitRootInfo"),
    ],
)
def test_leading_name_of_a_symbol(symbol, name):
    assert leading_name(symbol) == name


@pytest.mark.parametrize(
    "line, cause",
    [
        # torch symbol wanted by torch_npu: torch and torch_npu not a pair
        (
            "ImportError: /usr/lib/python3.10/site-packages/torch_npu/lib/libtorch_npu.so: undefined symbol: "
            "_ZNK3c1010TensorImpl23is_contiguous_customENS_12MemoryFormatE",
            "torch_torch_npu_mismatch",
        ),
        ("[rank2]: OSError: libtorch_npu.so: undefined symbol: _ZN2at4_ops5empty4callEv", "torch_torch_npu_mismatch"),
        # torch_npu / CANN symbols wanted by a framework's own extension
        (
            "导入失败：ImportError: /opt/venv/lib/python3.11/site-packages/my_ext/_C.cpython-311-aarch64-linux-gnu.so: "
            "undefined symbol: _ZN7c10_npu9getDeviceEv，请检查版本",
            "framework_build_mismatch",
        ),
        (
            f"{ESC}[31mOSError: /usr/local/lib/libfoo_plugin.so: undefined symbol: _ZN2ge5Graph9SetInputsEv{ESC}[0m",
            "framework_build_mismatch",
        ),
        (
            "ERROR 05-02 10:11:12 [worker.py:88] ImportError: /x/ext.so: undefined symbol: _ZN3atb9Operation5SetupEv",
            "framework_build_mismatch",
        ),
        # NNAL / CANN symbols wanted by torch_npu's ATB plugin
        (
            "OSError: libop_plugin_atb.so: undefined symbol: _ZN3atb15CreateOperationERKNS_5infer9LinearParamE",
            "torch_npu_cann_mismatch",
        ),
        # a CANN library wanting a CANN symbol: two CANNs mixed
        ("libhccl.so: undefined symbol: _ZN2ge15GEThreadLocalContextEv", "env_not_sourced"),
    ]
    + UNDEFINED_MORE,
)
def test_undefined_symbol_family(line, cause):
    assert top(line + "\n") == cause


def test_undefined_symbol_of_the_library_itself_is_a_build_defect():
    line = "ImportError: /home/u/proj/build/libproj_ops.so: undefined symbol: _ZN6myproj7kernels3fooEv\n"
    assert top(line) == "other" and top_detail(line).startswith("extension_incomplete")


@pytest.mark.parametrize(
    "line, cause",
    [
        (
            "ImportError: libdrvdsmi_host.so: cannot open shared object file: No such file or directory",
            "container_no_device",
        ),
        (
            "(RayWorker pid=77) OSError: libdcmi.so: cannot open shared object file: No such file or directory",
            "container_no_device",
        ),
        (
            "ERROR 04-18 08:22:17 engine.py:400] OSError: libopapi_math.so: cannot open shared object file",
            "env_not_sourced",
        ),
        ("加载失败: libasdops_aicpu_kernels.so: cannot open shared object file: 没有那个文件或目录", "env_not_sourced"),
        ("/usr/bin/ld: cannot find -lascendcl", "env_not_sourced"),
        (
            "Failed to import sgl_kernel_npu: libsgl_kernel_npu_ops.so: cannot open shared object file",
            "custom_op_not_loaded",
        ),
        (
            "Load dynamic library: libmy_backend.so failed. libcann_kb.so: cannot open shared object file",
            "framework_build_mismatch",
        ),
    ]
    + MISSING_LIBRARY_MORE,
)
def test_missing_library_family(line, cause):
    assert top(line + "\n") == cause


@pytest.mark.parametrize(
    "line, cause",
    [
        # another process holds most of the card: 3.3 GiB reserved by us, 120 MiB free of 31.5 GiB
        (
            "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 3; 31.50 GiB total capacity; 3.10 GiB "
            "already allocated; 3.20 GiB current active; 120.00 MiB free; 3.30 GiB reserved in total by PyTorch)",
            "device_busy",
        ),
        # this process holds it: 28 GiB reserved, 1 GiB free of 31.5
        (
            "[rank1]: RuntimeError: NPU out of memory. Tried to allocate 4.00 GiB (NPU 1; 31.50 GiB total capacity; "
            "27.90 GiB already allocated; 1.00 GiB free; 28.00 GiB reserved in total by PyTorch)",
            "out_of_memory",
        ),
        (
            "[2025-01-01 10:00:00.123+08:00] ValueError: Free memory on device (10.50/64.00 GiB) on startup is less "
            "than desired GPU memory utilization (0.9, 57.60 GiB).",
            "device_busy",
        ),
        (
            "训练报错：Out of Memory!!! total[1073741824] (dynamic[0] memory poll[0]) malloc[4294967296] failed!",
            "out_of_memory",
        ),
    ]
    + MEMORY_MORE,
)
def test_memory_numbers_family(line, cause):
    assert top(line + "\n") == cause


def test_memory_numbers_read():
    other, total = held_elsewhere(
        "Tried to allocate 1 GiB (NPU 0; 8.00 GiB total capacity; 1.00 GiB already "
        "allocated; 1.00 GiB free; 2.00 GiB reserved in total by PyTorch)"
    ) or (0, 0)
    assert total == 8 * 2**30 and other == 5 * 2**30


@pytest.mark.parametrize(
    "line",
    [
        "bishengir-compile: for the --target option: Cannot find option named 'Ascend310P3'!",
        "EZ9903: [PID: 12] 2025-01-01 OP AddCustom: support for Ascend910 is not implemented",
        "CMake Error at CMakeLists.txt:20 (message): SOC_VERSION ascend910_9391 does not support this kernel",
        "RuntimeError: DT_BFLOAT16 is not supported on Ascend310P (aclnnMatmul)",
        f"{ESC}[36m(EngineCore pid=9){ESC}[0m ValueError: Unsupported soc_version: Ascend910_9579",
        "报错: The binary_info_config.json of socVersion [ascend310b] does not support opType [FlashAttentionScore]",
    ]
    + SOC_MORE,
)
def test_soc_unsupported_family(line):
    assert top(line + "\n") == "soc_unsupported"


@pytest.mark.parametrize(
    "line",
    [
        "bash: npu-smi: command not found",
        "[ERROR] DCMI: dcmi_init failed: libdcmi Library Not Found",
        "ls: cannot access '/dev/davinci3': No such file or directory",
        "容器内报错: /bin/sh: 1: npu-smi: not found",
    ]
    + DEVICE_MORE,
)
def test_device_not_visible_family(line):
    assert top(line + "\n") == "container_no_device"


@pytest.mark.parametrize(
    "line",
    [
        "ERROR: Could not find a version that satisfies the requirement triton-ascend==3.2.0 (from versions: none)",
        "  `-> Because torch-npu==2.6.0 depends on torch==2.6.0+cpu and there is no version of torch==2.6.0+cpu",
        "ERROR: No matching distribution found for torch==2.5.1+cpu",
        "pip 报错：ERROR: No matching distribution found for torch_npu==2.4.0.post2",
    ]
    + PACKAGE_INDEX_MORE,
)
def test_package_index_family(line):
    assert top(line + "\n") == "package_index_missing"


@pytest.mark.parametrize(
    "line",
    [
        "EZ1001: op MatMulV3 does not has any binary for this soc",
        "RuntimeError: call aclnnGroupedMatmul failed, error code 561003",
        "[ERROR] OP(1,python):get kernel config failed: binary_info_config.json not found for ascend910b",
    ]
    + KERNEL_BINARY_MORE,
)
def test_kernel_binary_missing_family(line):
    assert top(line + "\n") == "kernels_missing"


@pytest.mark.parametrize(
    "log, first",
    [
        # the root cause first, its louder consequence after
        (
            "OSError: [Errno 28] No space left on device: '/tmp/kernel_meta/x.o'\n"
            "RuntimeError: TbeInitialize failed\nGEInitialize failed\n",
            "disk_or_tmp_full",
        ),
        (
            "ImportError: libhccl.so: cannot open shared object file\nRuntimeError: EZ3003 No supported Ops kernel\n",
            "env_not_sourced",
        ),
        # a generic wrapper before the line that says why
        (
            "HCCL function error: HcclCommInitRootInfo(...), error code is 7\n"
            "ls: cannot access '/dev/davinci1': No such file or directory\n",
            "container_no_device",
        ),
    ]
    + EARLIEST_MORE,
)
def test_earliest_causal_line_first(log, first):
    assert top(log) == first


@pytest.mark.parametrize(
    "literal", ["undefined symbol: _ZN3c104HaltEv", "cannot open shared object file", "Tried to allocate"]
)
def test_family_rules_stay_linear_on_a_hostile_line(literal):
    import time

    from ascenv.triage.scan import MAX_LINE

    hostile = ("a" * (MAX_LINE - 100) + literal + "\n").encode()
    plain = ("a b " * ((MAX_LINE - 100) // 4) + "EZ3002 x\n").encode()

    def cost(data: bytes) -> float:
        started = time.perf_counter()
        triage(io.BytesIO(data * 4), None, None, table())
        return time.perf_counter() - started

    assert cost(hostile) < 20 * max(cost(plain), 0.01)


@pytest.mark.parametrize(
    "line",
    [
        "open /dev/davinci0 failed: Permission denied",
        "[rank1]: RuntimeError: drvDeviceOpen: /dev/davinci_manager: Operation not permitted",
        "设备打开失败 Permission denied: '/dev/devmm_svm'",
    ],
)
def test_device_node_permission_family(line):
    assert top(line + "\n") == "permission"


@pytest.mark.parametrize(
    "text, other, total",
    [
        (
            "Tried to allocate 2 MiB (NPU 1; 32.00 GB total capacity; 1.00 GB already allocated; 0.50 GB free; 1.50 GB "
            "reserved in total by PyTorch)",
            30e9,
            32e9,
        ),
        ("Free memory on device (1.50/32.00 GiB) on startup", 30.5 * 2**30, 32 * 2**30),
        (
            "Tried to allocate 1 KiB (NPU 0; 1024.00 KiB total capacity; 0 B already allocated; 1024.00 KiB free; "
            "0 B reserved in total by PyTorch)",
            0.0,
            2**20,
        ),
    ],
)
def test_memory_numbers_more_units(text, other, total):
    numbers = held_elsewhere(text)
    assert numbers is not None
    assert numbers[0] == pytest.approx(other) and numbers[1] == pytest.approx(total)


# --- session 33, from the held-out misses (tests/data/triage_heldout): three new variants of each
# widened kind plus one log of another cause that keeps its own ---------------------------------


# an undefined symbol with no library in the message, next to the package being imported: the
# package stands for its library (layers.toml [[importer]]), CANN's C APIs (acl*, Msprof*) are CANN's
@pytest.mark.parametrize(
    "line",
    [
        "(EngineCore_DP0 pid=88) ERROR 11-02 09:12:40 import torch_npu failed: undefined symbol: "
        "MsprofReportCompactInfo",
        "导入torch_npu时报错：undefined symbol: aclrtGetDeviceInfo，请检查版本配套",
        f"{ESC}[31mtorch-npu 2.6.0.post3{ESC}[0m raised undefined symbol: MsprofGetHashId",
    ],
)
def test_undefined_cann_symbol_next_to_torch_npu_is_the_torch_npu_cann_pair(line):
    assert top(line + "\n") == "torch_npu_cann_mismatch"


def test_undefined_cann_symbol_next_to_another_package_keeps_the_framework_meaning():
    # no torch_npu around: some framework's own build wants the CANN symbol
    assert top("import mindspore failed: undefined symbol: MsprofReportApi\n") == "framework_build_mismatch"
    # a torch symbol next to torch_npu is still the torch/torch_npu pair, not CANN
    assert top("import torch_npu: undefined symbol: _ZN3c104impl3cow11is_cow_dataERKNS_7StorageE\n") == (
        "torch_torch_npu_mismatch"
    )


# EJ0001, CANN's HCCP-process-initialisation error: the last process on the device still runs
@pytest.mark.parametrize(
    "line",
    [
        "[ERROR] HCCL(20417,python):2025-03-02-10:11:12.123.456 EJ0001: [PID: 20417] Failed to initialize the "
        "HCCP process. Reason: Maybe the last training process is running.",
        "(RayWorkerWrapper pid=7781) 训练启动失败 EJ0001: Failed to initialize the HCCP process.",
        f"{ESC}[1;31mERROR{ESC}[0m 04-01 08:00:00 [worker.py:310] Failed to initialize the HCCP process. "
        "Reason: Maybe the last training process is running.",
    ],
)
def test_hccp_process_busy(line):
    assert top(line + "\n") == "device_busy"


def test_hccl_port_in_use_keeps_its_cause_next_to_the_hccp_rule():
    log = "EJ0003: Failed to bind the IP port. Reason: The IP address and port have been bound already.\n"
    assert top(log) == "other" and top_detail(log).startswith("hccl_port_in_use")


# Python's module AttributeError for torch_npu and any of its submodules
@pytest.mark.parametrize(
    "line",
    [
        "AttributeError: module 'torch_npu.npu' has no attribute 'graph_task_group_begin'",
        "(NPURayWorkerWrapper pid=311) AttributeError: module 'torch_npu.contrib.transfer_to_npu' has no attribute "
        "'_del_nccl_device_backend_map'",
        "报错：AttributeError: module 'torch_npu.dynamo' has no attribute 'torchair'，升级后解决",
    ],
)
def test_torch_npu_submodule_missing_attribute(line):
    assert top(line + "\n") == "other"
    assert top_detail(line + "\n").startswith("unpaired_torch_npu")


def test_torch_npu_c_missing_is_not_a_missing_attribute():
    log = "ModuleNotFoundError: No module named 'torch_npu._C'\n"
    assert top_detail(log).startswith("source_tree_shadows_package")


# ASCEND_RT_VISIBLE_DEVICES rejected by the runtime or by the launcher that computes it
@pytest.mark.parametrize(
    "line",
    [
        "EE1001: [PID: 5] 2026-01-02-03:04:05.678.901 The argument is invalid.Reason: "
        "set ASCEND_RT_VISIBLE_DEVICES:7,6 error, it must be configured in ascending order",
        f"{MINDIE}The argument is invalid.Reason: set ASCEND_RT_VISIBLE_DEVICES:8 error, input data rang[0-8)",
        '(raylet) Exception: Error setting ASCEND_RT_VISIBLE_DEVICES: local range: [4, 8) base value: "0,1,2,3"',
    ],
)
def test_visible_devices_rejected(line):
    assert top(line + "\n") == "other"
    assert top_detail(line + "\n").startswith("visible_devices_misconfigured")


def test_visible_devices_in_an_env_dump_is_not_a_rejection():
    log = (
        "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3\n"
        "RuntimeError: NPU out of memory. Tried to allocate 4.00 GiB (NPU 0; 60.96 GiB total capacity; 58.10 GiB "
        "already allocated; 58.10 GiB current active; 0.90 GiB free; 59.20 GiB reserved in total by PyTorch)\n"
    )
    assert top(log) == "out_of_memory"


# EI0006, HCCL's connection-setup timeout
@pytest.mark.parametrize(
    "line",
    [
        "[rank3]: EI0006: [PID: 99] 2026-02-02-10:00:00.000.000 Getting socket times out. Reason: Remote Rank did not "
        "send the data in time.",
        "[ERROR] HCCL(4410,python3):2026-05-01-08:00:00.000.001 [hccl_socket_manager.cc:801] "
        "[4420][Wait][LinkEstablish]wait socket establish timeout, role[0] rank[5] timeout[1800 s]",
        "双机训练报错 Communication_Error_Get_Socket(EI0006)，另一台机器的进程已退出",
    ],
)
def test_hccl_socket_timeout(line):
    assert top(line + "\n") == "other"
    assert top_detail(line + "\n").startswith("hccl_connect_timeout")


def test_hccl_socket_timeout_after_an_earlier_cause_ranks_second():
    log = (
        "[rank0]: RuntimeError: NPU out of memory. Tried to allocate 8.00 GiB (NPU 0; 60.96 GiB total capacity; "
        "55.00 GiB already allocated; 55.00 GiB current active; 1.20 GiB free; 57.00 GiB reserved in total by "
        "PyTorch)\n"
        "[rank1]: EI0006: Getting socket times out. Reason: Remote Rank did not send the data in time.\n"
    )
    assert top(log) == "out_of_memory"


# torch's "Torch not compiled with CUDA enabled" on an Ascend machine: a CUDA-only call
@pytest.mark.parametrize(
    "line",
    [
        "(VllmWorker rank=0 pid=77) ERROR 05-05 10:00:00 [worker.py:12] AssertionError: Torch not compiled with CUDA "
        "enabled",
        "训练时报错：AssertionError: Torch not compiled with CUDA enabled，换成 .npu() 后正常",
        f"{ESC}[31mAssertionError{ESC}[0m: Torch not compiled with CUDA enabled",
    ],
)
def test_cuda_code_path(line):
    assert top(line + "\n") == "other"
    assert top_detail(line + "\n").startswith("cuda_code_path")


def test_cuda_path_after_a_failed_torch_npu_import_keeps_the_import_cause():
    # torch_npu did not load, so the code fell back to CUDA: the missing library comes first
    log = (
        "ImportError: libhccl.so: cannot open shared object file: No such file or directory\n"
        "AssertionError: Torch not compiled with CUDA enabled\n"
    )
    assert top(log) == "env_not_sourced"


# EZ1001, the aclnn parameter check, in CANN's named form and in its dtype-list wording
@pytest.mark.parametrize(
    "line",
    [
        "(EngineCore_DP0 pid=9) AclNN_Parameter_Error(EZ1001): Tensor self not implemented for DT_INT8, "
        "should be in dtype support list [DT_FLOAT16, DT_BFLOAT16].",
        "算子报错 AclNN_Parameter_Error(EZ1001): Expected a proper Tensor but got null for argument weight",
        "[PID: 77] 2026-03-03-11:11:11.111.111 Tensor bias not implemented for DT_INT32, should be in dtype "
        "support list [DT_FLOAT].",
    ],
)
def test_aclnn_parameter_check_named_form(line):
    assert top(line + "\n") == "other"
    assert top_detail(line + "\n").startswith("operator_usage")


def test_ez1001_missing_kernel_package_keeps_its_cause():
    log = (
        "AclNN_Parameter_Error(EZ1001): Get path and read binary_info_config.json failed, please check if the "
        "opp_kernel package is installed!\n"
    )
    assert top(log) == "kernels_missing"


# argparse rejecting an Ascend value: the framework release does not know the option
@pytest.mark.parametrize(
    "line",
    [
        "lmdeploy serve api_server: error: argument --device: invalid choice: 'ascend' (choose from 'cuda', 'maca')",
        "usage: launch_server.py [-h] ... error: argument --device: invalid choice: 'npu' (choose from 'cuda', 'cpu')",
        f"启动失败：{ESC}[31mvllm serve: error: argument --quantization/-q: invalid choice: 'ascend_w8a8'{ESC}[0m",
    ],
)
def test_framework_option_unknown(line):
    assert top(line + "\n") == "other"
    assert top_detail(line + "\n").startswith("framework_lacks_ascend_option")


def test_an_invalid_choice_of_another_value_is_not_the_ascend_option():
    result = triage(
        io.BytesIO(b"error: argument --dtype: invalid choice: 'bf16' (choose from 'auto', 'half', 'bfloat16')\n"),
        None,
        None,
        table(),
    )
    assert not any((c.detail or "").startswith("framework_lacks_ascend_option") for c in result.causes)


# TBE's "main process disappeared": exit noise, ranked after any real cause above it
@pytest.mark.parametrize(
    "line",
    [
        "(RayWorker pid=1234) [ERROR] TBE Subprocess[task_distribute] raise error[], main process disappeared! "
        "[repeated 64x across cluster]",
        "退出时打印 [ERROR] TBE Subprocess[task_distribute] raise error[], main process disappeared!",
        f"{ESC}[31m[ERROR]{ESC}[0m TBE Subprocess[task_distribute] raise error[], main process disappeared!",
    ],
)
def test_tbe_subprocess_exit_noise(line):
    assert top(line + "\n") == "other"
    assert top_detail(line + "\n").startswith("exit_noise")


def test_tbe_exit_noise_after_a_real_cause_ranks_second():
    log = (
        "ImportError: libhccl.so: cannot open shared object file: No such file or directory\n"
        "[ERROR] TBE Subprocess[task_distribute] raise error[], main process disappeared!\n"
    )
    assert top(log) == "env_not_sourced"


# --- batch H: a CANN library missing keeps "built for another CANN" in the top three -------------


@pytest.mark.parametrize(
    "log",
    [
        "/opt/llama-box/llama-box: error while loading shared libraries: libruntime.so: cannot open shared "
        "object file: No such file or directory\n",
        f"{ESC}[31mImportError{ESC}[0m: libopapi.so: cannot open shared object file: No such file or directory\n",
        MINDIE + "加载失败 OSError: libhccl.so: cannot open shared object file: No such file or directory\n",
    ],
)
def test_a_missing_cann_library_lists_a_build_for_another_cann_after_the_environment(log):
    result = triage(io.BytesIO(log.encode()), None, None, table())
    causes = [c.cause for c in result.causes]
    assert causes[0] in ("env_not_sourced", "container_no_device"), causes
    assert "framework_build_mismatch" in causes[:3], causes


def test_a_missing_torch_library_is_not_read_as_a_build_for_another_cann():
    log = "ImportError: libc10.so: cannot open shared object file: No such file or directory\n"
    result = triage(io.BytesIO(log.encode()), None, None, table())
    assert "framework_build_mismatch" not in [c.cause for c in result.causes]
