"""The [accuracy] table of kernel.toml and accuracy_argv: loaded, defaults, and every mistake
refused at load with its key path (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascenv import builder
from ascenv.accuracy.spec import DEFAULT_TOLERANCES, Tolerance, elements
from ascenv.errors import DataFileError
from tests.test_builder import GOOD, KERNEL, write_recipe

ACCURACY = (
    'accuracy_argv = ["{out}/a", "{elements}", "{data}/x.bin", "{shape}"]\n'
    '[accuracy]\nreference = "numpy.add"\nshapes = ["16", "4x3"]\n'
    '[[accuracy.inputs]]\nname = "x"\ndtype = "float16"\nlow = -100\nhigh = 100\n'
    '[[accuracy.inputs]]\nname = "y"\ndtype = "bfloat16"\n'
    '[accuracy.result]\nname = "z"\ndtype = "float32"\n'
    "[accuracy.tolerances.float32]\nrtol = 1e-3\natol = 0.0\nmax_fraction = 0.5\n"
)


def test_the_add_custom_recipe_declares_its_accuracy_check() -> None:
    recipe = builder.load_recipe(KERNEL)
    acc = recipe.accuracy
    assert acc is not None and acc.reference == "numpy.add"
    assert [(t.name, t.dtype, t.low, t.high) for t in acc.inputs] == [
        ("x", "float16", -100.0, 100.0),
        ("y", "float16", -100.0, 100.0),
    ]
    assert (acc.result.name, acc.result.dtype, acc.seed) == ("z", "float16", 0)
    assert acc.tolerance("float16") == Tolerance(1e-3, 1e-5, 1e-3)
    assert "0" in acc.shapes and "4x4097" in acc.shapes  # an empty shape and two dimensions
    assert recipe.targets["cpu"].accuracy_argv[:2] == ("{out}/add_custom_cpu", "io")
    assert recipe.targets["npu"].accuracy_argv == ()


def test_tolerances_are_read_from_the_recipe_over_the_defaults(tmp_path: Path) -> None:
    acc = builder.load_recipe(write_recipe(tmp_path, GOOD + ACCURACY)).accuracy
    assert acc is not None
    assert acc.tolerance("float32") == Tolerance(1e-3, 0.0, 0.5)  # the recipe's
    assert acc.tolerance("bfloat16") == DEFAULT_TOLERANCES["bfloat16"]  # not given: the default
    assert [t.low for t in acc.inputs] == [-100.0, -1.0]  # an integer in TOML is a number
    assert elements("4x3") == 12 and elements("0") == 0 and elements("4x0x2") == 0


@pytest.mark.parametrize(
    "edit, message",
    [
        (('reference = "numpy.add"', 'reference = "os.system"'), r"accuracy.reference: expected numpy.<function>"),
        (('reference = "numpy.add"', 'reference = "../ref.py:add"'), r"accuracy.reference: .*inside the project"),
        (('reference = "numpy.add"', 'reference = "/etc/ref.py:add"'), r"accuracy.reference: .*inside the project"),
        (('reference = "numpy.add"', 'reference = "ref.py"'), r"accuracy.reference: expected numpy.<function>"),
        (('shapes = ["16", "4x3"]', 'shapes = ["16", "4*3"]'), r"accuracy.shapes\[1\]: expected dimensions joined"),
        (('shapes = ["16", "4x3"]', 'shapes = ["16", "16"]'), r"accuracy.shapes\[1\]: '16' is declared twice"),
        (('shapes = ["16", "4x3"]', "shapes = []"), r"accuracy.shapes: list at least one shape"),
        (
            ('shapes = ["16", "4x3"]', 'shapes = ["16", "33554433"]'),
            r"accuracy.shapes\[1\]: 33554433 is 33554433 elements, more than the 33554432",
        ),
        (('dtype = "bfloat16"', 'dtype = "float64"'), r"accuracy.inputs\[1\].dtype: expected one of float16"),
        (('name = "y"', 'name = "x"'), r"accuracy.inputs\[1\].name: 'x' is declared twice"),
        (('name = "z"', 'name = "../z"'), r"accuracy.result.name: expected a word"),
        (("low = -100", "low = 100"), r"accuracy.inputs\[0\]: expected finite low < high, found low = 100.0"),
        (("high = 100", "high = inf"), r"accuracy.inputs\[0\]: expected finite low < high"),
        (("max_fraction = 0.5", "max_fraction = 2.0"), r"accuracy.tolerances.float32.max_fraction: .*between 0"),
        (("rtol = 1e-3", "rtol = -1e-3"), r"accuracy.tolerances.float32.rtol: expected a number finite"),
        (("[accuracy.tolerances.float32]", "[accuracy.tolerances.half]"), r"accuracy.tolerances.half: expected a"),
        (("atol = 0.0", "atol = 0.0\nulp = 1"), r"accuracy.tolerances.float32.ulp: unknown key"),
        (('dtype = "float32"\n', ""), r"accuracy.result.dtype: missing"),
        (
            ('"{data}/x.bin"', '"{input}/x.bin"'),
            r"targets.cpu.accuracy_argv: unknown placeholder \{input\} .*\{shape\}, \{elements\}, \{data\}",
        ),
    ],
)
def test_accuracy_mistakes_are_refused_with_their_key_path(tmp_path: Path, edit: tuple, message: str) -> None:
    text = GOOD + ACCURACY
    assert edit[0] in text
    with pytest.raises(DataFileError, match=message):
        builder.load_recipe(write_recipe(tmp_path, text.replace(edit[0], edit[1], 1)))


def test_accuracy_placeholders_stay_out_of_the_build_argv(tmp_path: Path) -> None:
    text = GOOD.replace('"OUT={out}"', '"{data}"')
    with pytest.raises(DataFileError, match=r"targets.cpu.build: unknown placeholder \{data\}"):
        builder.load_recipe(write_recipe(tmp_path, text))
