"""The pure core of `ascenv test`: raw files to values and back per dtype, and the comparison
under tolerances (the samples' isclose, a share of elements allowed, NaN/inf apart)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ascenv.accuracy import compare
from ascenv.accuracy.spec import DEFAULT_TOLERANCES, Tolerance

FP16 = DEFAULT_TOLERANCES["float16"]


def test_float16_within_the_samples_tolerance_passes_and_one_element_beyond_fails() -> None:
    expected = np.full(1000, 100.0)
    actual = expected.copy()
    actual[3] = 100.0 * (1 + 0.9e-3)  # within rtol 1e-3
    assert compare.compare(actual, expected, FP16, (1000,)).passed
    actual[7] = 100.0 * (1 + 2e-3)  # beyond: 1 of 1000 is at the 0.1 % allowed
    found = compare.compare(actual, expected, FP16, (1000,))
    assert (found.passed, found.beyond, found.allowed) == (True, 1, 1.0)
    actual[8] = 100.0 * (1 + 2e-3)  # 2 of 1000: beyond the share
    found = compare.compare(actual, expected, FP16, (1000,))
    assert not found.passed and found.beyond == 2
    assert [m.index for m in found.first] == [7, 8]
    assert found.first[0].expected == "100.0" and found.first[0].actual == repr(100.0 * (1 + 2e-3))
    assert found.max_abs_error == pytest.approx(0.2) and found.max_rel_error == pytest.approx(2e-3)


def test_float32_holds_a_tenth_of_the_float16_share() -> None:
    tol = DEFAULT_TOLERANCES["float32"]
    assert (tol.rtol, tol.atol, tol.max_fraction) == (1e-4, 1e-5, 1e-4)
    expected = np.ones(10000)
    actual = expected.copy()
    actual[:2] = 1 + 5e-4  # 2 of 10000 beyond rtol 1e-4: 0.02 % > 0.01 %
    assert not compare.compare(actual, expected, tol, (10000,)).passed
    assert compare.compare(actual, expected, FP16, (10000,)).passed  # within fp16's 1e-3


def test_bfloat16_values_round_to_nearest_even_and_its_tolerance_is_one_ulp() -> None:
    # 1 + 2**-8 is halfway between bf16 1 and 1 + 2**-7: ties go to the even one, 1.0
    values = np.array([1.0, 1 + 2**-8, 1 + 3 * 2**-8, -2.5, 0.0, math.inf, -math.inf], dtype=np.float32)
    raw = compare.encode(values, "bfloat16")
    assert len(raw) == 2 * len(values)
    assert list(compare.decode(raw, "bfloat16")) == [1.0, 1.0, 1 + 2**-6, -2.5, 0.0, math.inf, -math.inf]
    assert np.isnan(compare.decode(compare.encode(np.array([math.nan]), "bfloat16"), "bfloat16")[0])
    # 4e-3 admits one rounding to bf16 (half a unit in the last place, 2**-8 of the value at
    # most), not a whole unit (2**-7 at 1.0)
    tol = DEFAULT_TOLERANCES["bfloat16"]
    assert compare.compare(np.array([1 + 2**-8]), np.ones(1), tol, (1,)).passed
    one_ulp = compare.decode(compare.encode(np.array([1 + 2**-7]), "bfloat16"), "bfloat16")
    assert one_ulp[0] == 1 + 2**-7
    assert not compare.compare(one_ulp, np.ones(1), tol, (1,)).passed
    assert compare.compare(one_ulp, np.ones(1), FP16, (1,)).passed is False


@given(st.integers(0, 0xFFFF))
def test_every_bfloat16_bit_pattern_but_nan_survives_decode_and_encode(bits: int) -> None:
    raw = bits.to_bytes(2, "little")
    value = compare.decode(raw, "bfloat16")
    if np.isnan(value[0]):
        assert compare.encode(value, "bfloat16") == b"\xc0\x7f"  # a quiet NaN
    else:
        assert compare.encode(value, "bfloat16") == raw


@given(st.integers(0, 0xFFFF))
def test_every_float16_bit_pattern_survives_decode_and_encode(bits: int) -> None:
    raw = bits.to_bytes(2, "little")
    value = compare.decode(raw, "float16")
    if not np.isnan(value[0]):
        assert compare.encode(value, "float16") == raw


def test_nan_and_infinities_equal_on_both_sides_pass_and_any_other_is_a_failure_whatever_the_share() -> None:
    expected = np.concatenate([[math.nan, math.inf, -math.inf], np.ones(5997)])
    assert compare.compare(expected.copy(), expected, FP16, (6000,)).passed
    for i, value in ((0, 1.0), (1, -math.inf), (2, 1.0), (3, math.nan), (4, math.inf)):
        actual = expected.copy()
        actual[i] = value
        found = compare.compare(actual, expected, FP16, (6000,))
        # one element of 6000 is within the 0.1 % share, but a NaN/inf that differs fails it
        assert (found.passed, found.beyond, found.nonfinite) == (False, 1, 1), (i, value)
        assert found.first[0].index == i
        assert math.isfinite(found.max_abs_error) and math.isfinite(found.max_rel_error)
    actual = expected.copy()
    actual[3] = math.nan  # the CPU program's poison: an element never written
    assert compare.compare(actual, expected, FP16, (6000,)).first[0].actual == "nan"


def test_an_empty_shape_passes_with_no_error() -> None:
    found = compare.compare(np.zeros(0), np.zeros(0), FP16, (0,))
    assert found == compare.Comparison(0, 0.0, 0.0, 0, 0.0, 0, (), True)
    found = compare.compare(np.zeros(0), np.zeros(0), FP16, (4, 0))
    assert found.passed and found.elements == 0


def test_failing_indices_are_given_flat_and_per_dimension_lowest_first() -> None:
    expected = np.zeros(12)
    actual = expected.copy()
    actual[[11, 5]] = 1.0
    found = compare.compare(actual, expected, Tolerance(0, 0, 0), (3, 4))
    assert [(m.index, m.at) for m in found.first] == [(5, (1, 1)), (11, (2, 3))]
    many = compare.compare(np.ones(100), np.zeros(100), Tolerance(0, 0, 0), (100,))
    assert len(many.first) == compare.FIRST == 10 and many.beyond == 100


def test_relative_error_is_measured_where_the_reference_is_not_zero() -> None:
    found = compare.compare(np.array([1e-6, 2.2]), np.array([0.0, 2.0]), FP16, (2,))
    assert found.max_rel_error == pytest.approx(0.1)  # 0 -> 1e-6 is within atol and no ratio
    assert found.max_abs_error == pytest.approx(0.2)
    assert [m.index for m in found.first] == [1]


def test_lengths_that_differ_are_a_bug_of_the_caller() -> None:
    with pytest.raises(ValueError, match="3 values compared with 2"):
        compare.compare(np.zeros(3), np.zeros(2), FP16, (2,))


@given(st.lists(st.integers(0, 0xFFFF), max_size=64), st.sampled_from(["float16", "bfloat16"]))
def test_any_output_equals_itself_nan_and_infinities_included(bits: list[int], dtype: str) -> None:
    values = compare.decode(b"".join(b.to_bytes(2, "little") for b in bits), dtype)
    found = compare.compare(values, values.copy(), DEFAULT_TOLERANCES[dtype], (len(bits),))
    assert found.passed and found.beyond == 0 and found.nonfinite == 0 and found.first == ()
    assert math.isfinite(found.max_abs_error) and found.max_abs_error == 0.0


@given(st.integers(1, 300), st.data())
def test_one_element_moved_beyond_tolerance_is_found_at_its_index(count: int, data: st.DataObject) -> None:
    expected = np.linspace(-50.0, 50.0, count)
    index = data.draw(st.integers(0, count - 1))
    actual = expected.copy()
    actual[index] += 1.0 + 2e-3 * abs(expected[index])  # beyond atol + rtol * |ref| for fp16
    found = compare.compare(actual, expected, FP16, (count,))
    assert [m.index for m in found.first] == [index] and found.beyond == 1
    assert found.passed == (1 <= 1e-3 * count)  # one element is within the 0.1 % share from 1000 on
