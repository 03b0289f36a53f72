"""Triage measured on real error logs it was not built with, batch C (tests/data/triage_heldout_c/).

The held-out logs come from public threads outside the shared corpus; their causes were
established in the thread (labels.json, with the quote and URL). Rules are never written from
these files: the point is that the next unseen log of a known kind is recognised. The fraction is
printed (pytest -s) and a floor is asserted, so a regression fails and an improvement is noticed
(raise the floor, move the log out of KNOWN_MISSES).
"""

from __future__ import annotations

import functools
import io
import json
from pathlib import Path

import pytest

from ascenv import compat
from ascenv.checks import load_checks
from ascenv.triage import TriageResult, load, triage

HELDOUT = Path(__file__).parent.parent / "data" / "triage_heldout_c"
LABELS = json.loads((HELDOUT / "labels.json").read_text(encoding="utf-8"))


@functools.cache
def table():
    return load(known_checks=set(load_checks()))


@functools.cache
def matrix():
    return compat.load()


def payload(path: Path) -> bytes:
    """The log without its two leading ``#`` metadata lines (source, note), byte for byte."""
    lines = path.read_bytes().splitlines(keepends=True)
    while lines and lines[0].startswith(b"# source:") or lines and lines[0].startswith(b"# note:"):
        lines.pop(0)
    return b"".join(lines)


@functools.cache
def run(name: str) -> TriageResult:
    return triage(io.BytesIO(payload(HELDOUT / name)), None, matrix(), table())


def ranked(name: str) -> list[str]:
    return [c.cause for c in run(name).causes]


# Held-out logs triage does not rank right, each with why (the text alone, no machine).
KNOWN_MISSES: dict[str, str] = {
    "gpustack_mindie-310P_halMemAlloc-drvRetCode-6_device-malloc-failed_OOM_gpustack-issue1909.txt": (
        "baseline miss, measured before any batch-C rule"
    ),
    "lmcache-ascend_Failed-to-register-memory-HCCL-Error-Code-19_cpu-cache-too-big_LMCache-Ascend-pr184.txt": (
        "baseline miss, measured before any batch-C rule"
    ),
    "lmcache-ascend_Unable-to-pin-host-memory-error-code-1_memlock-ulimit_LMCache-Ascend-issue5.txt": (
        "baseline miss, measured before any batch-C rule"
    ),
    "lmcache-ascend_register-ptr-failed_halHostRegister_driver-23.0.6-before-24.1_LMCache-Ascend-issue91.txt": (
        "baseline miss, measured before any batch-C rule"
    ),
    "npu-smi_dcmi-module-initialize-failed-ret-8005_container-without-privileged_vllm-ascend-issue2698.txt": (
        "baseline miss, measured before any batch-C rule"
    ),
    "sglang-npu_NameError-torch_npu-is-not-defined_missing-import-in-sglang_Ascend-sglang-issue86.txt": (
        "baseline miss, measured before any batch-C rule"
    ),
    "sglang-npu_check_env-traceback-_get_cann_version_info_bisheng-path-moved-in-CANN-8.5_sglang-issue22843.txt": (
        "baseline miss, measured before any batch-C rule"
    ),
    "sglang-npu_libtorch_npu-undefined-symbol-c10-TensorImpl_torch-2.12-vs-torch_npu-2.8_sglang-issue28628.txt": (
        "baseline miss, measured before any batch-C rule"
    ),
    "torch_npu-inductor_No-module-triton.language.extra.ascend_torch-npu-2.9.0-needs-post2_FlagGems-issue5791.txt": (
        "baseline miss, measured before any batch-C rule"
    ),
    "triton-ascend_AttrsDescriptor-0-active-drivers_triton-3.6.0-with-triton-ascend-3.2.0_issue277.txt": (
        "baseline miss, measured before any batch-C rule"
    ),
    "triton-ascend_bishengir-compile-GLIBC_2.29-not-found_system-glibc-2.28_Ascend-triton-ascend-issue1.txt": (
        "baseline miss, measured before any batch-C rule"
    ),
    "uv_No-solution-found-no-version-of-triton-ascend-3.2.1_extra-index-not-configured_triton-ascend-issue900.txt": (
        "baseline miss, measured before any batch-C rule"
    ),
    "verl-omni_Expects-tensor-on-npu15-was-on-npu0_Ray-NOSET-ASCEND_RT_VISIBLE_DEVICES_verl-omni-pr227.txt": (
        "baseline miss, measured before any batch-C rule"
    ),
    "vllm-ascend_camem-Failed-to-import-vllm_ascend_C_custom-ops-not-built_vllm-ascend-issue703.txt": (
        "baseline miss, measured before any batch-C rule"
    ),
    "vllm-ascend_check_ascend_device_type-RuntimeError-Can-not-support-soc_version-104_vllm-ascend-issue6796.txt": (
        "baseline miss, measured before any batch-C rule"
    ),
}
# the floor reached: batch C, 20 logs collected and measured before any rule was written for
# them (session 33, rules of s33-integ 363b16c): 5/20 top-1, 6/20 top-3
TOP1_FLOOR = 5
TOP3_FLOOR = 6


def test_every_heldout_log_is_labelled():
    assert sorted(p.name for p in HELDOUT.glob("*.txt")) == sorted(LABELS)
    assert len(LABELS) >= 10
    for name, label in LABELS.items():
        head = (HELDOUT / name).read_text(encoding="utf-8").splitlines()[:2]
        assert head[0].startswith("# source: https://") and head[1].startswith("# note: "), name
        assert "https://" in label["evidence"] and label["confidence"] in ("high", "medium"), name


def test_heldout_top1_fraction(capsys):
    """The share of held-out logs whose labelled cause triage ranks first / in the top three."""
    n = len(LABELS)
    top1 = sorted(name for name in LABELS if ranked(name)[:1] == [LABELS[name]["cause"]])
    top3 = sorted(name for name in LABELS if LABELS[name]["cause"] in ranked(name)[:3])
    misses = sorted(set(LABELS) - set(top1))
    with capsys.disabled():
        print(f"\ntriage held-out C top-1: {len(top1)}/{n}, top-3: {len(top3)}/{n}; misses: {misses}")
        for name in misses:
            print(f"  {LABELS[name]['cause']:<24} got {ranked(name)[:3]}  {name}")
    assert len(top1) >= TOP1_FLOOR and len(top3) >= TOP3_FLOOR
    assert set(misses) <= set(KNOWN_MISSES), sorted(set(misses) - set(KNOWN_MISSES))


@pytest.mark.parametrize("name", sorted(LABELS))
def test_heldout_log_triaged_without_traceback(name):
    result = run(name)
    assert all(c.cause for c in result.causes)
