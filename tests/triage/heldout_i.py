"""Held-out set I: any thread not in the other sets (vllm-ascend on 310P / Ray / Mooncake / pip,
Paddle custom device, ONNX Runtime CANN EP, FlagTree's Ascend image), measured on every rule of A to H.

Its known misses, each with why, and its floors, with how the set was measured before its rules;
what every set is checked for: tests/triage/heldout.py, run by tests/triage/test_heldout.py.
"""

from __future__ import annotations

from tests.triage.heldout import HeldOut

# Held-out logs triage does not rank right, each with why (the text alone, no machine).
KNOWN_MISSES: dict[str, str] = {
    "vllm-ascend_mooncake-PD-same-host": "no signature: HCCL's socket listen failure on a port in use",
    "vllm-ascend_pip-ResolutionImpossible_vllm-0.13": "no signature: pip's conflict between two packages' torch pins",
    "vllm-ascend_310P3_bin-package-socversion": "custom_op_not_loaded first: custom ops built for another SoC",
    "vllm-ascend_310P_Atlas800-3000": "kernels_missing/other: 'Cannot find bin of op' with a bf16 key on a 310P",
    "paddle-custom-npu_Fail-to-open-library_libatb": "env_not_sourced first: libatb.so missing, NNAL absent",
    "onnxruntime-cann_Atlas200DK": "no signature: EE9999 'get device msg feature can not support offline mode'",
    "vllm-ascend_v0.11.0rc0_Atlas300I": "no signature: SDMA/SMMU 507013 of a release without 310P support",
    "vllm-ascend_main-image_Failed-to-import-torch_npu": "no signature: 'Failed to import torch_npu.' alone",
    "vllm_source-install_No-module-named-vllm.benchmarks": "no signature: a missing submodule of vLLM itself",
}
# baseline: batch I, 12 logs collected and measured before any rule was written for them (session 34,
# rules of main 5b793be): 3/12 top-1, 3/12 top-3
SET = HeldOut("triage_heldout_i", "held-out I", KNOWN_MISSES, top1_floor=3, top3_floor=3)
