"""Triage measured on a second slice of real error logs it was not built with
(tests/data/triage_heldout_b/, MindSpore / MindSpeed / Paddle / LLaMA-Factory / torch_npu sources).

The causes were established in each thread or documentation page (labels.json, with the quote and
URL). Rules are never written from these files; the fraction is printed (pytest -s) and a floor is
asserted, so a regression fails and an improvement is noticed (raise the floor, move the log out
of KNOWN_MISSES).
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

HELDOUT = Path(__file__).parent.parent / "data" / "triage_heldout_b"
LABELS = json.loads((HELDOUT / "labels.json").read_text(encoding="utf-8"))
CAUSES = {
    "driver_cann_mismatch", "torch_npu_cann_mismatch", "torch_torch_npu_mismatch", "python_no_wheel",
    "env_not_sourced", "kernels_missing", "soc_unsupported", "device_busy", "container_no_device",
    "permission", "custom_op_not_loaded", "stale_kernel_cache", "hccl_inconsistent_versions",
    "firmware_driver_mismatch", "out_of_memory", "disk_or_tmp_full", "other",
    "package_index_missing", "framework_build_mismatch",
}  # fmt: skip


@functools.cache
def table():
    return load(known_checks=set(load_checks()))


@functools.cache
def matrix():
    return compat.load()


def payload(path: Path) -> bytes:
    """The log without its two leading metadata lines (source, note), byte for byte otherwise."""
    lines = path.read_bytes().splitlines(keepends=True)
    while lines and lines[0].startswith((b"# source:", b"# note:")):
        lines.pop(0)
    return b"".join(lines)


@functools.cache
def run(name: str) -> TriageResult:
    return triage(io.BytesIO(payload(HELDOUT / name)), None, matrix(), table())


def ranked(name: str) -> list[str]:
    return [c.cause for c in run(name).causes]


# Held-out logs triage does not rank first (text alone, no machine), each with why; keyed by a
# file-name prefix unique in the set.
KNOWN_MISSES: dict[str, str] = {
    # 507033 with EL0002 "The device ID is invalid" from InitRawDriver on the only visible card: the
    # maintainer's reading (driver vs CANN) is not in the text; device-setup-error keeps busy card,
    # driver/CANN pair (second) and container as its three readings
    "paddle-custom-npu_ru": "not decidable from the text: who fails to open the card (driver second)",
    # pip's resolver note "X has requirement torch==1.5.0, but you'll have torch 1.5.0a0+1977093":
    # harmless only because the versions differ by a local tag, which a literal rule cannot compare
    "torch_install_ERROR-t": "no rule: pip's requirement note is harmless or not depending on the versions",
    # a file missing inside a source checkout ("The path does not exist: .../third_party/op-plugin/..."):
    # the text names no submodule, and no public definition ties the message to git submodules
    "torch_npu_build_Runt": "no rule: a missing file in a source checkout names no cause",
    # batch 2 (ten logs collected after the batch-B rules, measured before any further change:
    # 1/10 top-1, 2/10 top-3). TsdOpen "tdt error=31" / "Start aicpu executor failed" then 507033:
    # the device's AICPU executor did not start; no public definition of the tdt codes ties it to
    # the driver/CANN pair over a busy card (driver second)
    "mindspore_E39999-Tsd": "not decidable from the text: why the AICPU executor did not start (driver second)",
    "mindspore-dataset_No": "batch 2: a MindSpore dataset-transform defect has no rule",
    "mindspore_No-module-named-m": "batch 2: a directory shadowing an installed package (not torch_npu) has no rule",
    "mindspore_import-can": "batch 2: two builds of MindSpore in one environment have no rule",
    "mindspeed-mm_AssertionError-l": "batch 2: a training-configuration error (a PP stage without layers) has no rule",
    "mindspeed-mm_RuntimeError-tp": "batch 2: a training-configuration error (TP above the KV heads) has no rule",
    # batch 3 (five logs collected after the batch-2 rules, measured before any change: 0/5). A
    # FAQ row naming only "syntax error near unexpected token": bash says so for any syntax error;
    # only a $'...\\r' in it makes it a CRLF script, and the row quotes none
    "mindspeed-mm_script-": "not decidable from the text: a bash syntax error without the \\r that marks CRLF",
    "gensim_ValueError-nu": "batch 3: an extension built against another numpy ABI has no rule",
    "mindspore_op_MemoryE": "batch 3: an operator parameter exhausting host memory (std::bad_alloc) has no rule",
    "mindspore-lite_Save-": "batch 3: a Cloud-side MindIR / converter version problem has no rule",
    "mindspore-lite_conve": "batch 3: a MindIR exported on an inference device has no rule",
}
# the floor reached: a change that loses a held-out log fails here (session 33, batch 1: 11/30 top-1,
# 13/30 top-3 before any rule change, 24/30 and 25/30 after the batch-B kinds of signatures.toml;
# batch 2, ten logs collected afterwards: 1/10 and 2/10 with those rules, 4/10 and 5/10 after three
# more kinds (pybind11's Python-version guard, pip ignoring an untrusted http index, a framework's
# Ascend backend package not installed); batch 3, five logs collected afterwards: 0/5 with all of
# them; whole set 28/45 top-1, 30/45 top-3; merged with the other slices' kinds, 30/45 and 32/45:
# EJ0001 (hccp-process-busy) and "Torch not compiled with CUDA enabled" (cuda-code-path), both
# written from their public definitions on another slice); 31/45 and 33/45 with held-out D's
# kinds: runtime-invalid-device-id (107001 / "invalid device id", from rt_error_codes.h) now ranks
# the device id outside the process's view first for the MindSpeed-LLM FAQ's "Invalid device ID")
TOP1_FLOOR = 31
TOP3_FLOOR = 33


def known_misses() -> set[str]:
    return {n for n in LABELS if n.startswith(tuple(KNOWN_MISSES))}


def test_every_heldout_log_is_labelled():
    assert sorted(p.name for p in HELDOUT.glob("*.txt")) == sorted(LABELS)
    assert len(LABELS) >= 45
    for prefix in KNOWN_MISSES:  # each key names exactly one log
        assert len([n for n in LABELS if n.startswith(prefix)]) == 1, prefix
    for name, label in LABELS.items():
        head = (HELDOUT / name).read_text(encoding="utf-8").splitlines()[:2]
        assert head[0].startswith("# source: https://") and head[1].startswith("# note: "), name
        assert label["cause"] in CAUSES, name
        assert "https://" in label["evidence"] and label["confidence"] in ("high", "medium"), name


def test_no_log_shared_with_the_other_sets():
    data = HELDOUT.parent
    seen = {
        line.split()[2]
        for folder in ("triage", "triage_heldout", "triage_heldout_c", "corpus/errors")
        for p in (data / folder).glob("*.txt")
        for line in p.read_text(encoding="utf-8").splitlines()[:1]
    }
    ours = {(HELDOUT / n).read_text(encoding="utf-8").splitlines()[0].split()[2] for n in LABELS}
    # a documentation page may be shared (another question on it), a thread never
    assert not {u for u in ours & seen if "/issues/" in u or "/pull/" in u}


def test_heldout_b_top1_fraction(capsys):
    """The share of held-out logs whose labelled cause triage ranks first / in the top three."""
    n = len(LABELS)
    top1 = sorted(name for name in LABELS if ranked(name)[:1] == [LABELS[name]["cause"]])
    top3 = sorted(name for name in LABELS if LABELS[name]["cause"] in ranked(name)[:3])
    misses = sorted(set(LABELS) - set(top1))
    with capsys.disabled():
        print(f"\ntriage held-out B top-1: {len(top1)}/{n}, top-3: {len(top3)}/{n}; misses: {misses}")
        for name in misses:
            print(f"  {LABELS[name]['cause']:<24} got {ranked(name)[:3]}  {name}")
    assert len(top1) >= TOP1_FLOOR and len(top3) >= TOP3_FLOOR
    assert set(misses) <= known_misses(), sorted(set(misses) - known_misses())


@pytest.mark.parametrize("name", sorted(LABELS))
def test_heldout_b_log_triaged_without_traceback(name):
    assert all(c.cause for c in run(name).causes)
