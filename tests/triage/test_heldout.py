"""Triage measured on real error logs it was not built with: every held-out set (tests/triage/heldout.py)
is labelled and cited, shares no thread with another set, holds its floors and triages without a
traceback. ``pytest -s`` prints each set's fraction ranked first and in the top three."""

from __future__ import annotations

import pytest

from tests.triage import heldout_a, heldout_b, heldout_c, heldout_d, heldout_e, heldout_g, heldout_j

SETS = [module.SET for module in (heldout_a, heldout_b, heldout_c, heldout_d, heldout_e, heldout_g, heldout_j)]
each_set = pytest.mark.parametrize("held", SETS, ids=[s.folder for s in SETS])


@each_set
def test_every_log_is_labelled_and_cited(held):
    held.check_labelled()


@each_set
def test_no_thread_is_in_another_set(held):
    held.check_no_thread_shared()


@each_set
def test_fraction_ranked_first(held, capsys):
    held.check_fraction(capsys)


@each_set
def test_every_log_triaged_without_traceback(held):
    held.check_no_traceback()
