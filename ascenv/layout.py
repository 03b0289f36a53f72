"""Names of CANN's on-disk layout that the probe reads and the checks cite: pure constants."""

from __future__ import annotations

# Where a CANN install keeps the built-in operator binaries, one directory per compute unit
# (ascend910b, ascend310p, ...); the per-chip kernels/ops package fills it.
KERNEL_DIR = "opp/built-in/op_impl/ai_core/tbe/kernel"
