"""Held-out set T: logs from vision, speech, diffusion and cluster-tooling threads on Ascend (here the
PaddlePaddle NPU plugin, paddle-custom-npu, behind PaddleOCR/PaddleX), none in another set, each with an
Ascend-stack cause (no `other`), measured on the rules of A to P before any rule was written for it.

Its known misses, each with why, and its floors, with how the set was measured before its rules;
what every set is checked for: tests/triage/heldout.py, run by tests/triage/test_heldout.py.
"""

from __future__ import annotations

from tests.triage.heldout import HeldOut

# Held-out logs triage does not rank right, each with why (the text alone, no machine).
KNOWN_MISSES: dict[str, str] = {}
# baseline: batch T, 2 logs collected and measured before any rule was written for them (session 35,
# rules of s35 084d214, with rank.py's `other` fallback): 0/2 top-1, 0/2 top-3; misses: both matched no
# stack signature (pip "No matching distribution found for paddle-custom-npu" on Python 3.9: ranked
# `other`). Collection stopped at 2 logs: most vision/speech/diffusion/cluster threads of this round
# had their error in a screenshot, no established cause, or were already in another set.
# after the batch-T kind (signature vendor-plugin-wheel-not-found: pip finds no wheel of a vendor's
# CPython-specific Ascend plugin, from Paddle's NPU install guides): 2/2 top-1, 2/2 top-3.
SET = HeldOut("triage_heldout_t", "held-out T", KNOWN_MISSES, top1_floor=2, top3_floor=2)
