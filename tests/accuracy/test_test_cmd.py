"""`ascenv test` on kernels/add_custom's CPU target in the pinned builder-bookworm container
(marked engine: slow, run them rarely): a correct build passes every shape of the recipe, with
its seeds recorded and the inputs reproduced by a rerun; builds with a one-line bug — the tail
tile of each core skipped, a tiling that drops the remainder of lengths not divisible by the core
count — fail with their first bad indices, exit 1."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from ascenv import builder, errors
from ascenv.accuracy import inputs
from tests.cli_helpers import run_cli
from tests.test_builder import make_project

SHAPES = ["0", "1", "15", "16", "17", "16385", "4x4097", "1024001"]


def ascenv(cwd: Path, *argv: str) -> tuple[int, str, str]:
    home = cwd / ".home"
    home.mkdir(exist_ok=True)
    return run_cli(argv, {"PATH": os.environ.get("PATH", ""), "HOME": str(home)}, cwd)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, builder_image: str) -> Path:
    return make_project(tmp_path_factory.mktemp("accuracy") / "project", builder_image)


def build(project: Path, kernel: str) -> str:
    code, out, err = ascenv(project, "build", kernel, "--format", "json")
    assert code == 0, err
    return str(json.loads(out)["key"])


def bugged(project: Path, name: str, path: str, line: str, patched: str) -> str:
    """A copy of add_custom with one line changed, built; its key."""
    copy = project / name / "add_custom"
    shutil.copytree(project / "kernels" / "add_custom", copy)
    source = copy / path
    text = source.read_text(encoding="utf-8")
    assert text.count(line) == 1
    source.write_text(text.replace(line, patched), encoding="utf-8")
    return build(project, str(copy))


def checked_json(project: Path, *argv: str) -> tuple[int, dict]:
    code, out, err = ascenv(project, "test", *argv, "--format", "json")
    assert code in (0, 1), err
    return code, json.loads(out)


def first_bad(data: dict) -> dict[str, list[int]]:
    return {s["shape"]: [m["index"] for m in s["comparison"]["first"]] for s in data["shapes"] if not s["passed"]}


@pytest.mark.engine
@pytest.mark.slow
def test_add_custom_passes_every_shape_and_a_rerun_reproduces_its_inputs(project: Path, engine) -> None:
    key = build(project, "add_custom")
    code, data = checked_json(project, "add_custom")
    assert code == 0 and data["passed"] and data["build"] == key and data["seed"] == 0
    assert [s["shape"] for s in data["shapes"]] == SHAPES
    assert all(s["passed"] and s["comparison"]["beyond"] == 0 for s in data["shapes"])
    assert data["shapes"][-1]["comparison"]["elements"] == 1024001
    assert Path(data["path"]).parent == project / ".ascenv" / "store" / "add_custom" / key / "accuracy"
    assert engine.containers({builder.PURPOSE_LABEL: "test", builder.LABEL_KEY: key}) == []

    # seeds recorded; the same --seed gives the same bytes (sha256 of each input file), another not
    acc = builder.load_recipe(project / "kernels" / "add_custom").accuracy
    assert acc is not None
    code, first = checked_json(project, "add_custom", "--shapes", "16385,17", "--seed", "9", "--build", key[:8])
    code, again = checked_json(project, "add_custom", "--shapes", "16385", "--seed", "9")
    made = inputs.generate(acc, "16385", 9)
    assert first["seed"] == again["seed"] == 9
    assert first["shapes"][0]["seed"] == again["shapes"][0]["seed"] == inputs.shape_seed(9, "16385")
    assert [f["sha256"] for f in first["shapes"][0]["inputs"]] == [inputs.digest(made[n]) for n in "xy"]
    assert first["shapes"][0]["inputs"] == again["shapes"][0]["inputs"]
    assert first["run"] != again["run"]
    code, out, err = ascenv(project, "store", "show", key[:8])
    assert code == 0 and "3 accuracy checks in accuracy/:" in out, err


@pytest.mark.engine
@pytest.mark.slow
def test_a_kernel_skipping_each_cores_tail_tile_fails_with_the_first_bad_indices_exit_1(project: Path) -> None:
    # each core runs only its whole tiles: a core whose share is not a multiple of tileLength
    # leaves its last (partial) tile unwritten, NaN in the CPU program's output
    key = bugged(
        project,
        "tail",
        "op_kernel/add_custom.cpp",
        "const uint64_t tileNum = (coreLength + tileLength - 1) / tileLength;",
        "const uint64_t tileNum = coreLength / tileLength;",
    )
    code, data = checked_json(project, "add_custom", "--build", key, "--shapes", "16,17,16385")
    assert code == errors.EXIT_FINDINGS == 1 and not data["passed"]
    # 17 on 40 cores: two cores, 16 + 1 elements; the second core's single element is never written.
    # 16385: 25 cores of 416 and 15 of 400 with tileLength 416: the 400-element shares write
    # nothing, from core 25 at 25 * 416 = 10400.
    assert first_bad(data) == {"17": [16], "16385": list(range(10400, 10410))}
    bad = {s["shape"]: s["comparison"] for s in data["shapes"]}
    assert bad["16"]["beyond"] == 0
    assert bad["17"]["nonfinite"] == 1 and bad["17"]["first"][0]["actual"] == "nan"
    assert bad["16385"]["beyond"] == 16385 - 10400
    code, out, _ = ascenv(project, "test", "add_custom", "--build", key, "--shapes", "17")
    assert code == 1 and "FAIL" in out and "16: " in out and ", nan" in out


@pytest.mark.engine
@pytest.mark.slow
def test_a_tiling_dropping_the_remainder_of_lengths_not_divisible_by_the_cores_fails_exit_1(project: Path) -> None:
    # formerNum = 0: every core gets blocks / cores blocks, the remainder blocks are nobody's
    key = bugged(
        project,
        "tiling",
        "op_host/add_custom_tiling_math.h",
        "const uint64_t formerNum = blocks % used;",
        "const uint64_t formerNum = 0;",
    )
    code, data = checked_json(project, "add_custom", "--build", key, "--shapes", "640,16385,1024001")
    assert code == 1 and not data["passed"]
    # 640 = 40 blocks of 16 on 40 cores: divisible, correct. 16385 = 1025 blocks: 40 * 25 blocks
    # = 16000 elements written; 1024001 = 64001 blocks: 40 * 1600 * 16 = 1024000 written.
    assert first_bad(data) == {"16385": list(range(16000, 16010)), "1024001": [1024000]}
    assert [s["comparison"]["beyond"] for s in data["shapes"]] == [0, 385, 1]


def test_without_numpy_it_is_exit_4_naming_numpy_never_a_traceback(tmp_path):
    """A fleet node runs the shipped ascenv on its own python3, which may lack numpy: the test gate
    must read a clear exit 4, not exit 3 and a traceback."""
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['numpy'] = None\n"  # `import numpy` now raises ImportError
        "from ascenv import cli; sys.exit(cli.main(['test', 'add_custom', '--store', 'store']))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 4, done.stderr
    assert "needs numpy" in done.stderr and "Traceback" not in done.stderr
