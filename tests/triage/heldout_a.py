"""Held-out set A: vllm-ascend, sglang, triton-ascend, tilelang, llama.cpp, HAMi, GPUStack threads.

Its known misses, each with why, and its floors, with how the set was measured before its rules;
what every set is checked for: tests/triage/heldout.py, run by tests/triage/test_heldout.py.
"""

from __future__ import annotations

from tests.triage.heldout import HeldOut

# Held-out logs triage does not rank right, each with why (the text alone, no machine).
KNOWN_MISSES = {
    # dcmi -8005 plus "Can't get ascend_hal device count": a busy card, a container without the
    # device, or a process that may not open the device nodes say the same; the text does not say
    # which (here: the pod dropped CAP_DAC_OVERRIDE); permission is listed third, ASC-DEV-NODES decides
    "hami-adp_dcmi-8005_cant-get-ascend_hal-device-count_all-capabilities-dropped_ascend-device-plugin-issue139.txt": (
        "not decidable from the text: who may open /dev/davinci* (capabilities of the pod)"
    ),
}
# the floor reached: a change that loses a held-out log fails here (session 33: batch 1 baseline
# 22/27 top-1, 23/27 top-3, 25/27 and 26/27 after the EJ0001, torch_npu-submodule and
# importer/Msprof rules; batch 2, six logs collected afterwards, 1/6 with those rules, 5/6 after
# the ASCEND_RT_VISIBLE_DEVICES, EI0006 and CUDA-path rules; batch 3, three logs collected after
# that, 0/3 before and 3/3 after the EZ1001-named-form, argparse-choice and TBE-exit-noise rules;
# whole set 33/36 top-1, 34/36 top-3)
# session 34: a log no signature names ranks `other`, unrecognised, with its last error (rank.py, the
# corpus vocabulary's other: outside the Ascend stack): 35/36 top-1, 36/36 top-3
SET = HeldOut("triage_heldout", "held-out", KNOWN_MISSES, top1_floor=35, top3_floor=36)
