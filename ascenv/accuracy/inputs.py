"""Inputs of an accuracy check from a seed, and the reference output computed from them.

Each shape draws from its own numpy ``Generator`` (PCG64, whose stream numpy keeps stable
across versions for a given seed: NEP 19, https://numpy.org/neps/nep-0019-rng-policy.html),
seeded with a number derived from the run's seed and the shape text, so a shape's inputs do not
depend on which other shapes run and a rerun with the same seed gives the same bytes. The
per-shape seed is recorded with the result."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ascenv.accuracy import compare
from ascenv.accuracy.spec import Accuracy, dims, elements
from ascenv.errors import InputError


def shape_seed(seed: int, shape: str) -> int:
    """64 bits of sha256("<seed>/<shape>")."""
    return int.from_bytes(hashlib.sha256(f"{seed}/{shape}".encode()).digest()[:8], "big")


def generate(acc: Accuracy, shape: str, seed: int) -> dict[str, bytes]:
    """Per input, in declaration order from one generator: uniform in [low, high), rounded to
    the input's dtype, as raw bytes."""
    rng = np.random.default_rng(shape_seed(seed, shape))
    count = elements(shape)
    return {t.name: compare.encode(rng.uniform(t.low, t.high, size=count), t.dtype) for t in acc.inputs}


def digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def load_reference(reference: str, kernel_dir: Path) -> Callable[..., Any]:
    """``numpy.<name>`` or ``<file>.py:<function>``, the file inside the operator project."""
    if reference.startswith("numpy."):
        found: Any = np
        for part in reference.split(".")[1:]:
            found = getattr(found, part, None)
            if found is None:
                raise InputError(f"accuracy.reference {reference!r}: numpy has no {part!r}")
    else:
        name, function = reference.rsplit(":", 1)
        path = (kernel_dir / name).resolve()
        if not path.is_relative_to(kernel_dir.resolve()) or not path.is_file():
            raise InputError(f"accuracy.reference {reference!r}: no file {name} in {kernel_dir}")
        spec = importlib.util.spec_from_file_location(f"ascenv_reference_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as exc:  # noqa: BLE001 - the project's code: any failure is its own
            raise InputError(f"accuracy.reference {reference!r}: {path} failed to load: {exc!r}") from None
        found = getattr(module, function, None)
    if not callable(found):
        raise InputError(f"accuracy.reference {reference!r} is not a function")
    return found


def expected(acc: Accuracy, shape: str, inputs: Mapping[str, bytes], reference: Callable[..., Any]) -> Any:
    """The reference's output on ``inputs``, rounded to the output's dtype (float64 values)."""
    size = dims(shape)
    args = [compare.as_argument(compare.decode(inputs[t.name], t.dtype), t.dtype, size) for t in acc.inputs]
    try:
        with np.errstate(all="ignore"):  # an overflow to inf is a value to compare, not a warning
            result = np.asarray(reference(*args), dtype=np.float64)
    except Exception as exc:  # noqa: BLE001 - the reference is the project's code
        raise InputError(f"accuracy.reference {acc.reference} failed on shape {shape}: {exc!r}") from None
    if result.size != elements(shape):
        raise InputError(
            f"accuracy.reference {acc.reference} returned {result.size} values for shape {shape}, "
            f"expected {elements(shape)}"
        )
    return compare.round_to(result.reshape(-1), acc.result.dtype)
