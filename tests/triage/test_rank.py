"""Ranking: a log no signature knows ranks `other`, unrecognised, with its own last error (ascenv/triage/rank.py)."""

from __future__ import annotations

import io

import pytest

from ascenv.checks import load_checks
from ascenv.triage import exit_code, load, triage
from ascenv.triage.rank import UNRECOGNISED
from tests.triage.machines import machine


def _triage(text: str, snapshot=None):
    return triage(io.BytesIO(text.encode()), snapshot, None, load(known_checks=set(load_checks())))


@pytest.mark.parametrize(
    ("log", "quoted"),
    [
        # an application's configuration error in a training framework, after Ascend INFO lines
        (
            "[INFO] npu-smi 25.2.0 found 8 NPUs\nTraceback (most recent call last):\n"
            "AssertionError: global batch size 96 is not divisible by micro batch 5 x dp 4\n",
            "AssertionError: global batch size 96 is not divisible by micro batch 5 x dp 4",
        ),
        # a MindIE-style bracket prefix and colours around the exception, Chinese text after it
        # ("model loading failed": the exception says more than the words around it)
        (
            "[2026-03-01 10:00:00.123+08:00] \x1b[31mKeyError: 'model_type'\x1b[0m\n模型加载失败\n",
            "KeyError: 'model_type'",
        ),
        # a shell script's error, no Python at all
        (
            "$ bash pretrain.sh\npretrain.sh: line 12: syntax error near unexpected token `fi'\n",
            "pretrain.sh: line 12: syntax error near unexpected token `fi'",
        ),
    ],
)
def test_a_log_no_signature_knows_ranks_other_with_its_last_error(log, quoted):
    result = _triage(log)
    assert not result.recognised and result.signatures == ()
    [cause] = result.causes
    assert (cause.cause, cause.detail, cause.layer) == ("other", UNRECOGNISED, "application")
    assert [g.text for g in cause.lines] == [quoted]
    assert cause.confirmed is None and cause.verdicts == () and cause.signatures == ()


def test_a_log_without_an_error_line_ranks_other_and_quotes_nothing():
    [cause] = _triage("INFO ready\nINFO serving on :8000\n").causes
    assert cause.cause == "other" and cause.lines == ()


def test_an_empty_log_has_no_cause():
    assert _triage("").causes == ()


def test_a_recognised_cause_has_no_unrecognised_other_beside_it():
    # near miss: a known Ascend error with an application traceback after it ranks the known cause
    result = _triage(
        "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 0; 60.00 GiB total capacity;"
        " 58.10 GiB already allocated; 1.02 GiB free)\nValueError: retry failed\n"
    )
    assert result.recognised and result.causes[0].cause == "out_of_memory"
    assert all(c.signatures for c in result.causes)


def test_unrecognised_is_never_confirmed_and_the_exit_code_is_the_doctors(tmp_path):
    # a machine with the stack's faults: `other` unrecognised is not a finding; the doctor's errors
    # decide the exit code as before
    faulty = machine("env_not_sourced", tmp_path / "faulty")  # the doctor errs: set_env.sh not sourced
    result = _triage("ValueError: bad config\n", faulty)
    assert result.causes[0].cause == "other" and result.causes[0].confirmed is None
    assert result.doctor_errors and exit_code(result) == 1
    healthy = _triage("ValueError: bad config\n", machine(None, tmp_path / "healthy"))
    assert exit_code(healthy) == 0 and not healthy.doctor_errors
