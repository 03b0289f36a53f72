"""Inputs from a seed (per shape, reproducible byte for byte) and the reference: numpy's or a
function in a file of the project, its result rounded to the output's dtype."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from ascenv import builder
from ascenv.accuracy import compare, inputs
from ascenv.accuracy.spec import Accuracy, Tensor
from ascenv.errors import InputError
from tests.test_builder import KERNEL

ACC = builder.load_recipe(KERNEL).accuracy
assert ACC is not None


def _hashes(shape: str, seed: int) -> dict[str, str]:
    return {k: hashlib.sha256(v).hexdigest() for k, v in inputs.generate(ACC, shape, seed).items()}


def test_a_seed_gives_the_same_inputs_byte_for_byte_and_another_seed_others() -> None:
    first = _hashes("16385", 7)
    assert first == _hashes("16385", 7)
    assert first != _hashes("16385", 8)
    assert first["x"] != first["y"]  # one generator, drawn in declaration order
    # a shape's inputs do not depend on which other shapes run: its seed is its own
    assert inputs.shape_seed(7, "16385") != inputs.shape_seed(7, "16386")
    assert inputs.shape_seed(7, "17") == int.from_bytes(hashlib.sha256(b"7/17").digest()[:8], "big")


def test_inputs_are_the_declared_dtype_and_range() -> None:
    made = inputs.generate(ACC, "4x4097", 0)
    assert {k: len(v) for k, v in made.items()} == {"x": 2 * 16388, "y": 2 * 16388}
    x = compare.decode(made["x"], "float16")
    assert x.min() >= -100 and x.max() <= 100 and len(set(x.tolist())) > 5000
    acc = Accuracy("numpy.add", (Tensor("a", "bfloat16", 2.0, 3.0),), Tensor("z", "float32"), ("8",))
    a = compare.decode(inputs.generate(acc, "8", 1)["a"], "bfloat16")
    assert len(a) == 8 and a.min() >= 2 and a.max() <= 3
    assert inputs.generate(acc, "0", 1) == {"a": b""}


def test_numpy_add_on_float16_is_the_correctly_rounded_sum() -> None:
    made = inputs.generate(ACC, "1000", 3)
    expected = inputs.expected(ACC, "1000", made, inputs.load_reference("numpy.add", KERNEL))
    x, y = (compare.decode(made[n], "float16") for n in "xy")
    assert np.array_equal(expected, (x + y).astype(np.float16).astype(np.float64))


def test_a_reference_in_a_file_of_the_project_gets_the_inputs_shaped(tmp_path: Path) -> None:
    (tmp_path / "ref").mkdir()
    (tmp_path / "ref" / "golden.py").write_text(
        "import numpy as np\ndef shapes_seen(x, y):\n    assert x.shape == (4, 3) and x.dtype == np.float16\n"
        "    return (x.astype(np.float32) * 2 + y).astype(np.float32)\n"
    )
    reference = inputs.load_reference("ref/golden.py:shapes_seen", tmp_path)
    acc = Accuracy(
        "ref/golden.py:shapes_seen",
        (Tensor("x", "float16"), Tensor("y", "float16")),
        Tensor("z", "bfloat16"),
        ("4x3",),
    )
    made = inputs.generate(acc, "4x3", 0)
    got = inputs.expected(acc, "4x3", made, reference)
    x, y = (compare.decode(made[n], "float16") for n in "xy")
    # rounded to the output's dtype, bfloat16
    assert np.array_equal(got, compare.round_to((x * 2 + y).astype(np.float32), "bfloat16"))


@pytest.mark.parametrize(
    "reference, message",
    [
        ("numpy.no_such_function", "numpy has no 'no_such_function'"),
        ("numpy.pi", "is not a function"),
        ("missing.py:add", "no file missing.py in"),
        ("../outside.py:add", "no file ../outside.py in"),
        ("bad.py:add", "failed to load: ZeroDivisionError"),
        ("ok.py:nothing", "is not a function"),
    ],
)
def test_a_reference_that_cannot_be_called_is_an_input_error(tmp_path: Path, reference: str, message: str) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (tmp_path / "outside.py").write_text("def add(x, y):\n    return x + y\n")
    (project / "bad.py").write_text("1 / 0\n")
    (project / "ok.py").write_text("nothing = 3\n")
    with pytest.raises(InputError, match=message):
        inputs.load_reference(reference, project)


@pytest.mark.parametrize(
    "function, message",
    [
        ("lambda x, y: x[:3] + y[:3]", "returned 3 values for shape 16, expected 16"),
        ("lambda x, y: 1 / 0", "failed on shape 16: ZeroDivisionError"),
    ],
)
def test_a_reference_that_fails_or_returns_another_size_is_an_input_error(function: str, message: str) -> None:
    made = inputs.generate(ACC, "16", 0)
    with pytest.raises(InputError, match=message):
        inputs.expected(ACC, "16", made, eval(function))
