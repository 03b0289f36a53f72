"""The ``[accuracy]`` table of an operator's recipe (``kernel.toml``): what ``ascenv test``
feeds the operator, which reference it compares with and the tolerances per dtype.

Default tolerances (an element passes when ``|out - ref| <= atol + rtol * |ref|``, numpy's
``isclose``; the check passes when at most ``max_fraction`` of the elements do not):

- float16: rtol 1e-3, atol 1e-5, 0.1 % of elements: the CANN samples' verification,
  github:cannmirror/asc-devkit examples/00_introduction/11_vectoradd/add/scripts/verify_result.py
  (RELATIVE_TOL = 1e-3, ABSOLUTE_TOL = 1e-5, ERROR_TOL = 1e-3, applied to a half-width type);
  CANN's operator examples say it in words: "一般fp16要求绝对误差和相对误差均不超过千分之一"
  (github:Hayden727/cann-ops src/math/tril/examples/.../verify_result.py).
- float32: rtol 1e-4, atol 1e-5, 0.01 % of elements: the same samples' float32 check,
  github:cannmirror/asc-devkit examples/00_introduction/01_add/scripts/verify_result.py.
- bfloat16: rtol 4e-3, atol 1e-5, 0.1 %: project choice. bf16 keeps 8 significant bits, so one
  rounding to it moves a value by up to 2**-8 = 3.9e-3 of itself (half a unit in the last
  place): 4e-3 admits a kernel that rounds once more than the reference (computing in fp32
  and rounding at the end, or the other way round), not an error of a whole unit. The samples'
  1e-3 for bf16 (11_vectoradd/add) compares with a golden computed in bf16 by the same steps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from ascenv.errors import DataFileError

DTYPES = ("float16", "bfloat16", "float32")
ITEM_BYTES = {"float16": 2, "bfloat16": 2, "float32": 4}
SHAPE_TEXT = re.compile(r"^\d+(?:x\d+)*$")  # 16385, 4x4097, 0 (empty)
# 32 Mi elements: the host holds each input and the output as float64 too (256 MiB apiece), so
# a typo in a shape (an extra digit) is refused rather than exhausting the memory
MAX_ELEMENTS = 1 << 25
_REFERENCE = re.compile(r"^(?:numpy\.[A-Za-z_][\w.]*|[\w./-]+\.py:[A-Za-z_]\w*)$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")  # a file name {data}/<name>.bin, safe as is


@dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float
    max_fraction: float  # the share of elements allowed beyond rtol/atol (0.001 = 0.1 %)


DEFAULT_TOLERANCES = {
    "float16": Tolerance(1e-3, 1e-5, 1e-3),
    "float32": Tolerance(1e-4, 1e-5, 1e-4),
    "bfloat16": Tolerance(4e-3, 1e-5, 1e-3),
}


@dataclass(frozen=True)
class Tensor:
    name: str
    dtype: str
    low: float = -1.0  # inputs only: uniform in [low, high), then rounded to dtype
    high: float = 1.0


@dataclass(frozen=True)
class Accuracy:
    reference: str  # "numpy.add", or "ref.py:add": a function in a file of the project
    inputs: tuple[Tensor, ...]
    result: Tensor  # the operator's output
    shapes: tuple[str, ...]
    seed: int = 0
    tolerances: dict[str, Tolerance] = field(default_factory=dict)  # per dtype, over the defaults

    def tolerance(self, dtype: str) -> Tolerance:
        return self.tolerances.get(dtype, DEFAULT_TOLERANCES[dtype])


def dims(shape: str) -> tuple[int, ...]:
    return tuple(int(d) for d in shape.split("x"))


def elements(shape: str) -> int:
    count = 1
    for d in dims(shape):
        count *= d
    return count


def shape_problem(shape: str) -> Optional[str]:
    if not SHAPE_TEXT.match(shape):
        return f"expected dimensions joined by x (16385, 4x4097), found {shape!r}"
    if elements(shape) > MAX_ELEMENTS:
        return f"{shape} is {elements(shape)} elements, more than the {MAX_ELEMENTS} an accuracy check takes"
    return None


def validate(acc: Accuracy, where: str) -> None:
    """What the types cannot say, each message naming the key path."""
    file = acc.reference.split(":")[0]
    if not _REFERENCE.match(acc.reference) or file.startswith("/") or ".." in file.split("/"):
        raise DataFileError(
            f"{where}.reference: expected numpy.<function> or <file>.py:<function> inside the project, "
            f"found {acc.reference!r}"
        )
    if not acc.inputs:
        raise DataFileError(f"{where}.inputs: declare at least one [[accuracy.inputs]] table")
    tensors = [(f"inputs[{i}]", t) for i, t in enumerate(acc.inputs)] + [("result", acc.result)]
    seen: set[str] = set()
    for key, t in tensors:
        if not _NAME.match(t.name):
            raise DataFileError(f"{where}.{key}.name: expected a word (letters, digits, _), found {t.name!r}")
        if t.name in seen:
            raise DataFileError(f"{where}.{key}.name: {t.name!r} is declared twice")
        seen.add(t.name)
        if t.dtype not in DTYPES:
            raise DataFileError(f"{where}.{key}.dtype: expected one of {', '.join(DTYPES)}, found {t.dtype!r}")
        if not t.low < t.high or max(abs(t.low), abs(t.high)) == float("inf"):
            raise DataFileError(f"{where}.{key}: expected finite low < high, found low = {t.low}, high = {t.high}")
    if not acc.shapes:
        raise DataFileError(f"{where}.shapes: list at least one shape")
    for i, shape in enumerate(acc.shapes):
        problem = shape_problem(shape)
        if problem:
            raise DataFileError(f"{where}.shapes[{i}]: {problem}")
        if shape in acc.shapes[:i]:
            raise DataFileError(f"{where}.shapes[{i}]: {shape!r} is declared twice")
    if acc.seed < 0:
        raise DataFileError(f"{where}.seed: expected a seed, zero or more, found {acc.seed}")
    for dtype, tol in acc.tolerances.items():
        if dtype not in DTYPES:
            raise DataFileError(f"{where}.tolerances.{dtype}: expected a dtype, one of {', '.join(DTYPES)}")
        for name in ("rtol", "atol", "max_fraction"):
            value = getattr(tol, name)
            if not 0 <= value < float("inf") or (name == "max_fraction" and value > 1):
                bound = "between 0 and 1" if name == "max_fraction" else "finite, zero or more"
                raise DataFileError(f"{where}.tolerances.{dtype}.{name}: expected a number {bound}, found {value}")
