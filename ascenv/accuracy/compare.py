"""The pure core of ``ascenv test``: tensors to and from the raw files an operator program reads
and writes (little-endian, no header: numpy's ``tofile``/``fromfile``, as the CANN samples'
gen_data.py and verify_result.py use them), and an output compared with its reference.

An element is within tolerance when ``|out - ref| <= atol + rtol * |ref|`` (``numpy.isclose``,
the samples' test), NaN where the reference is NaN and an infinity of the same sign count as
equal. A NaN or infinity where the reference has none (or the other way round) is counted
apart and fails the check whatever the share allowed: an element the kernel never wrote (the
CPU program fills the output with NaN first) is a defect, not rounding the share allows for.
Errors are measured where both sides are finite, relative ones where the reference is not 0."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ascenv.accuracy.results import Comparison, Mismatch
from ascenv.accuracy.spec import ITEM_BYTES, Tolerance

FIRST = 10  # failing elements kept per shape, lowest index first


# Casting a signalling NaN or a value beyond the target's range is what IEEE 754 defines (a
# quiet NaN, an infinity); numpy warns of it, and the test suite runs warnings as errors.
_QUIET = {"invalid": "ignore", "over": "ignore"}


def decode(raw: bytes, dtype: str) -> Any:
    """Raw little-endian values -> float64 array. bfloat16 is the high half of a float32, which
    numpy has no type for: its bits shifted into place."""
    with np.errstate(**_QUIET):  # type: ignore[arg-type]
        return _decode(raw, dtype)


def _decode(raw: bytes, dtype: str) -> Any:
    if dtype == "bfloat16":
        bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
        return bits.view(np.float32).astype(np.float64)
    return np.frombuffer(raw, dtype="<f2" if dtype == "float16" else "<f4").astype(np.float64)


def encode(values: Any, dtype: str) -> bytes:
    """float values -> raw little-endian ``dtype``, rounded to nearest even (IEEE 754's default;
    numpy's casts for float16/float32, by hand for bfloat16, NaN kept a quiet NaN)."""
    with np.errstate(**_QUIET):  # type: ignore[arg-type]
        return _encode(values, dtype)


def _encode(values: Any, dtype: str) -> bytes:
    if dtype == "bfloat16":
        bits = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
        rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
        nan = np.isnan(np.asarray(values, dtype=np.float32))
        rounded[nan] = 0x7FC0
        return rounded.astype("<u2").tobytes()
    return np.asarray(values, dtype="<f2" if dtype == "float16" else "<f4").tobytes()


def round_to(values: Any, dtype: str) -> Any:
    """``values`` as the nearest ``dtype`` numbers, as float64: the reference the output is held
    to (the samples' golden file is written in the output's dtype)."""
    return decode(encode(values, dtype), dtype)


def as_argument(values: Any, dtype: str, shape: tuple[int, ...]) -> Any:
    """An input as the reference receives it: its own dtype, bfloat16 as float32 (exact)."""
    kind = {"float16": np.float16, "float32": np.float32, "bfloat16": np.float32}[dtype]
    return np.asarray(values, dtype=kind).reshape(shape)


def element_count(raw: bytes, dtype: str) -> float:
    return len(raw) / ITEM_BYTES[dtype]


def number_text(value: float) -> str:
    return repr(float(value)) if math.isfinite(value) else str(float(value))


def compare(actual: Any, expected: Any, tolerance: Tolerance, shape: tuple[int, ...]) -> Comparison:
    """``actual`` against ``expected`` (float64 arrays of one length)."""
    a = np.asarray(actual, dtype=np.float64).reshape(-1)
    e = np.asarray(expected, dtype=np.float64).reshape(-1)
    if a.shape != e.shape:
        raise ValueError(f"{a.size} values compared with {e.size}")
    close = np.isclose(a, e, rtol=tolerance.rtol, atol=tolerance.atol, equal_nan=True)
    finite = np.isfinite(a) & np.isfinite(e)
    nonfinite = int(np.count_nonzero(~close & ~finite))
    errors = np.abs(a[finite] - e[finite])
    refs = np.abs(e[finite])
    nonzero = refs > 0
    max_abs = float(errors.max()) if errors.size else 0.0
    max_rel = float((errors[nonzero] / refs[nonzero]).max()) if np.any(nonzero) else 0.0
    bad = np.flatnonzero(~close)
    allowed = tolerance.max_fraction * a.size
    first = tuple(
        Mismatch(int(i), tuple(int(d) for d in np.unravel_index(int(i), shape)), number_text(e[i]), number_text(a[i]))
        for i in bad[:FIRST]
    )
    passed = nonfinite == 0 and bad.size <= allowed
    return Comparison(a.size, max_abs, max_rel, int(bad.size), allowed, nonfinite, first, passed)
