"""`ascenv test` without an engine: the NPU target's host path (a device node faked, the operator
a Python stand-in that reads and writes the files as the real program does) judges, stores and
reproduces; a failed, silent or short program; no NPU: the command for an NPU host; and what
`store show` lists of the runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Callable, Optional

import numpy as np
import pytest

from ascenv import builder, errors, proc
from ascenv.accuracy import compare, inputs, results, runner
from ascenv.store import Store
from tests.cli_helpers import run_cli
from tests.test_builder import GOOD, KERNEL
from tests.test_store import add_entry

KEY = "a" * 64
ARGV = '["{out}/app", "{elements}", "{data}/x.bin", "{data}/y.bin", "{data}/z.bin"]'
NPU = SimpleNamespace(devices=SimpleNamespace(nodes=(SimpleNamespace(path="/dev/davinci0", exists=True),)))


def npu_kernel(tmp_path: Path) -> Path:
    kernel = tmp_path / "kernels" / "add_custom"
    if kernel.exists():
        return kernel
    shutil.copytree(KERNEL, kernel)
    toml = kernel / "kernel.toml"
    text = toml.read_text(encoding="utf-8")
    line = 'outputs = ["custom_opp_*.run"]\n'
    assert line in text
    toml.write_text(text.replace(line, line + f"accuracy_argv = {ARGV}\n"), encoding="utf-8")
    return kernel


Operator = Callable[[np.ndarray, np.ndarray], Optional[np.ndarray]]


def fake_program(operator: Operator, calls: list[list[str]], status: int = 0) -> proc.Runner:
    """The argv run on the 'NPU host': x + y in fp16 as ``operator`` computes it (None: it
    writes nothing), exit ``status``."""

    def run(argv, timeout, **_):  # type: ignore[no-untyped-def]
        calls.append(list(argv))
        _, count, x, y, z = argv
        a = np.fromfile(x, dtype="<f2")
        b = np.fromfile(y, dtype="<f2")
        assert len(a) == int(count)
        out = operator(a, b)
        if out is not None:
            out.astype("<f2").tofile(z)
        return proc.Completed(tuple(argv), "exited", status, f"ran {count}\n", "", 0.01)

    return run


def good(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a + b


def request_for(kernel: Path, **options) -> runner.TestRequest:  # type: ignore[no-untyped-def]
    return runner.TestRequest(kernel, builder.load_recipe(kernel), "npu", **options)


def run_npu(tmp_path: Path, operator: Operator, status: int = 0, **options) -> runner.Tested:  # type: ignore[no-untyped-def]
    kernel = npu_kernel(tmp_path)
    st = Store(tmp_path / "st")
    if not (st.root / "add_custom" / KEY).exists():
        add_entry(st, "add_custom", KEY, target="npu")
    calls: list[list[str]] = []
    result = runner.run_test(
        request_for(kernel, **options),
        st,
        connect=lambda: pytest.fail("the NPU target starts no container"),
        resolve_image=lambda e, n: pytest.fail("no image"),
        probe=lambda: NPU,
        run=fake_program(operator, calls, status),
    )
    assert isinstance(result, runner.Tested)
    assert calls and all(c[0] == str(st.root / "add_custom" / KEY / "outputs" / "app") for c in calls)
    return result


def test_a_correct_operator_passes_every_shape_and_the_run_is_stored_beside_the_build(tmp_path: Path) -> None:
    tested = run_npu(tmp_path, good)
    run = tested.run
    assert run.passed and run.seed == 0 and run.reference == "numpy.add" and run.build_key == KEY
    assert [s.shape for s in run.shapes] == ["0", "1", "15", "16", "17", "16385", "4x4097", "1024001"]
    assert tested.path.parent == tmp_path / "st" / "add_custom" / KEY / "accuracy"
    assert results.loads(tested.path.read_text(encoding="utf-8"), "x") == run
    big = run.shapes[-1]
    assert big.comparison is not None and big.comparison.elements == 1024001 and big.comparison.beyond == 0
    assert big.seed == inputs.shape_seed(0, "1024001") and big.printed == "ran 1024001"


def test_seeds_are_recorded_and_a_rerun_reproduces_the_inputs_byte_for_byte(tmp_path: Path) -> None:
    first = run_npu(tmp_path, good, seed=11, shapes=("17", "16385")).run
    again = run_npu(tmp_path, good, seed=11, shapes=("16385",)).run
    other = run_npu(tmp_path, good, seed=12, shapes=("17", "16385")).run
    assert first.seed == 11 and first.shapes[1].seed == inputs.shape_seed(11, "16385")
    assert first.shapes[1].inputs == again.shapes[0].inputs  # the same bytes, whatever else ran
    assert [f.sha256 for f in first.shapes[1].inputs] != [f.sha256 for f in other.shapes[1].inputs]
    expected = inputs.generate(builder.load_recipe(KERNEL).accuracy, "16385", 11)  # type: ignore[arg-type]
    assert [f.sha256 for f in first.shapes[1].inputs] == [inputs.digest(expected[n]) for n in "xy"]
    assert first.id != again.id != other.id


def test_an_element_left_unwritten_fails_with_its_index(tmp_path: Path) -> None:
    def tail_lost(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        z = a + b
        z[len(z) - len(z) % 16 :] = np.nan  # the partial last block never written
        return z

    run = run_npu(tmp_path, tail_lost, shapes=("16", "17", "16385")).run
    assert [s.passed for s in run.shapes] == [True, False, False]
    c17, c16385 = run.shapes[1].comparison, run.shapes[2].comparison
    assert c17 is not None and c16385 is not None
    assert [m.index for m in c17.first] == [16] and c17.first[0].actual == "nan" and c17.nonfinite == 1
    assert c16385.first[0].index == 16384 and c16385.beyond == 1  # 1 of 16385 is within the share, NaN is not


def test_wrong_values_beyond_the_share_fail_and_within_it_pass(tmp_path: Path) -> None:
    def off_every_500th(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        z = (a + b).astype(np.float64)
        z[::500] += 1.0  # beyond rtol 1e-3 for values below 1000
        return z

    run = run_npu(tmp_path, off_every_500th, shapes=("16385", "1000")).run
    big, small = run.shapes
    assert big.comparison is not None and small.comparison is not None
    # 33 of 16385 (0.2 %) is beyond the 0.1 % share; 2 of 1000 too; the indices are reported
    assert not big.passed and big.comparison.beyond >= 33 and big.comparison.first[0].index == 0
    assert [m.index for m in small.comparison.first] == [0, 500]


@pytest.mark.parametrize(
    "operator, status, problem",
    [
        (good, 3, "the program exited 3"),
        (lambda a, b: None, 0, "z.bin: expected 17 float16 values, found no file"),
        (lambda a, b: (a + b)[:-1], 0, "z.bin: expected 17 float16 values, found 32 bytes"),
    ],
)
def test_a_program_that_fails_or_writes_no_whole_output_fails_the_shape(
    tmp_path: Path, operator: Operator, status: int, problem: str
) -> None:
    (shape,) = run_npu(tmp_path, operator, status, shapes=("17",)).run.shapes
    assert (shape.passed, shape.problem, shape.comparison) == (False, problem, None)
    assert shape.printed == "ran 17"


def test_the_judgement_of_a_shape_reads_what_the_program_left(tmp_path: Path) -> None:
    acc = builder.load_recipe(KERNEL).accuracy
    assert acc is not None
    case = runner.plan(request_for(KERNEL, shapes=("4x5",)), acc)[0]
    folder = tmp_path / "d"
    folder.mkdir()
    ref = inputs.load_reference("numpy.add", KERNEL)
    assert runner.judge(acc, case, folder, ref).problem == "the program did not run"
    (folder / "status").write_text("0\n")
    x, y = (compare.decode(case.inputs[n], "float16") for n in "xy")
    (folder / "z.bin").write_bytes(compare.encode(x + y, "float16"))
    judged = runner.judge(acc, case, folder, ref)
    assert judged.passed and judged.comparison is not None and judged.comparison.elements == 20


def test_the_container_script_runs_every_shape_and_keeps_each_status() -> None:
    acc = builder.load_recipe(KERNEL).accuracy
    assert acc is not None
    todo = runner.plan(request_for(KERNEL, shapes=("17", "2x3")), acc)
    argv = builder.load_recipe(KERNEL).targets["cpu"].accuracy_argv
    script = runner.test_script(argv, todo)
    assert "/ascenv/out/add_custom_cpu io 40 6 /ascenv/work/data/1/x.bin /ascenv/work/data/1/y.bin" in script
    assert 'echo "$?" > "/ascenv/work/data/0/status"' in script and "exit" not in script


@pytest.mark.live_host  # the command probes this machine's /dev for NPU device nodes
def test_no_npu_here_prints_the_test_command_for_an_npu_host_exit_4(tmp_path: Path) -> None:
    if any(p.name[len("davinci") :].isdigit() for p in Path("/dev").glob("davinci*")):
        pytest.skip("this machine has an NPU")
    npu_kernel(tmp_path)
    add_entry(Store(tmp_path / "st"), "add_custom", KEY, target="npu")
    code, out, err = ascenv(tmp_path, "test", "add_custom", "--target", "npu", "--store", "st", "--seed", "5")
    assert code == errors.EXIT_TOOL_MISSING == 4, err
    assert "no NPU here: no /dev/davinci<N> device node: nothing was run; on an NPU host, run:" in err
    assert out.splitlines() == [f"ascenv test add_custom --target npu --build {KEY} --seed 5 --store st"]
    code, out, _ = ascenv(tmp_path, "test", "add_custom", "--target", "npu", "--store", "st", "--format", "json")
    assert code == 4 and json.loads(out)["ran"] is False
    # --build KEY alone tests that build on its own target (fleet rollout runs it so on a node)
    code, out, err = ascenv(tmp_path, "test", "add_custom", "--build", KEY[:10], "--store", "st", "--format", "json")
    assert code == 4 and json.loads(out)["build"] == KEY, err
    code, _, err = ascenv(tmp_path, "test", "add_custom", "--build", KEY[:10], "--store", "st", "--target", "cpu")
    assert code == 2 and f"build {KEY[:12]} is of add_custom (npu), not add_custom (cpu)" in err
    assert not (tmp_path / "st" / "add_custom" / KEY / "accuracy").exists()


def ascenv(cwd: Path, *argv: str) -> tuple[int, str, str]:
    (cwd / ".home").mkdir(exist_ok=True)
    return run_cli(argv, {"PATH": "/usr/bin:/bin", "HOME": str(cwd / ".home")}, cwd)


# not live_host: the command reads this machine's /dev (for --target npu) only after these checks
@pytest.mark.parametrize(
    "recipe, argv, message",
    [
        (GOOD, (), "declares no [accuracy] table"),
        (KERNEL.joinpath("kernel.toml").read_text(), ("--target", "npu"), "targets.npu declares no accuracy_argv"),
        (KERNEL.joinpath("kernel.toml").read_text(), ("--shapes", "16,4*4"), "--shapes: expected dimensions"),
        (KERNEL.joinpath("kernel.toml").read_text(), ("--shapes", ","), "names no shape"),
        (KERNEL.joinpath("kernel.toml").read_text(), ("--seed", "-1"), "--seed -1: expected a seed"),
        (KERNEL.joinpath("kernel.toml").read_text(), ("--build", "bbbbbb"), "no build"),
    ],
)
def test_what_cannot_be_tested_is_a_usage_error_exit_2(tmp_path: Path, recipe: str, argv: tuple, message: str) -> None:
    kernel = tmp_path / "kernels" / "op"
    kernel.mkdir(parents=True)
    (kernel / "kernel.toml").write_text(recipe.replace('name = "add_custom"', 'name = "op"'))
    add_entry(Store(tmp_path / "st"), "op", KEY, target="cpu")
    add_entry(Store(tmp_path / "st"), "op", "c" * 64, target="npu")
    code, _, err = ascenv(tmp_path, "test", "op", "--store", "st", *argv)
    assert code == errors.EXIT_USAGE, err
    assert message in err and "Traceback" not in err


def test_store_show_lists_the_checks_of_a_build_and_a_damaged_file_by_name(tmp_path: Path) -> None:
    stored = run_npu(tmp_path, good, shapes=("16",)).path  # its errors are 0.0
    run_npu(tmp_path, lambda a, b: a - b, shapes=("17", "16"))
    folder = tmp_path / "st" / "add_custom" / KEY / "accuracy"
    (folder / "broken.json").write_text("{")
    text = stored.read_text()
    assert '"max_rel_error": 0.0' in text
    (folder / "nan.json").write_text(text.replace('"max_rel_error": 0.0', '"max_rel_error": NaN'))
    code, out, err = ascenv(tmp_path, "store", "show", KEY[:8], "--store", "st")
    assert code == 0, err
    assert "4 accuracy checks in accuracy/:" in out
    assert "failed on 17, 16" in out and "passed" in out and "damaged" in out
    code, out, _ = ascenv(tmp_path, "store", "show", KEY[:8], "--store", "st", "--format", "json")
    tests = json.loads(out)["tests"]
    assert [(t["passed"], t["failed"], t["shapes"]) for t in tests[:2]] == [(False, ["17", "16"], 2), (True, [], 1)]
    assert tests[2]["name"] == "broken.json" and "not an ascenv test run" in tests[2]["damaged"]
    assert tests[3]["name"] == "nan.json" and "NaN is not a JSON number" in tests[3]["damaged"]


def test_only_the_last_lines_of_what_a_program_printed_are_kept(tmp_path: Path) -> None:
    acc = builder.load_recipe(KERNEL).accuracy
    assert acc is not None
    case = runner.plan(request_for(KERNEL, shapes=("16",)), acc)[0]
    (tmp_path / "status").write_text("1\n")
    with open(tmp_path / "printed", "w", encoding="utf-8") as fh:
        fh.writelines(f"line {i}\n" for i in range(200_000))  # 2.5 MB: read from its end only
    judged = runner.judge(acc, case, tmp_path, inputs.load_reference("numpy.add", KERNEL))
    assert judged.printed.splitlines() == [f"line {i}" for i in range(199_990, 200_000)]
    assert judged.problem == "the program exited 1"


def test_an_accuracy_argv_reading_src_is_refused_beside_a_build_of_other_sources(tmp_path: Path) -> None:
    from ascenv import store as store_mod

    kernel = npu_kernel(tmp_path)
    toml = kernel / "kernel.toml"
    toml.write_text(toml.read_text().replace('"{data}/z.bin"]', '"{data}/z.bin", "{src}/table.bin"]'))
    st = Store(tmp_path / "st")
    add_entry(st, "add_custom", KEY, target="npu")  # made from other sources (digest 0...)
    with pytest.raises(errors.UsageError, match=r"targets.npu.accuracy_argv reads \{src\}.*its results would mix"):
        runner.run_test(request_for(kernel), st, connect=pytest.fail, resolve_image=pytest.fail, probe=lambda: NPU)
    # a build of these very sources runs it
    digest = store_mod.tree_digest(store_mod.hash_tree(kernel))
    add_entry(st, "add_custom", "b" * 64, target="npu", source_digest=digest)
    program = fake_program(good, [])  # it takes no table: the {src} argument is dropped
    result = runner.run_test(
        request_for(kernel, build="b" * 64, shapes=("16",)),
        st,
        connect=pytest.fail,
        resolve_image=pytest.fail,
        probe=lambda: NPU,
        run=lambda argv, timeout, **kw: program(argv[:-1], timeout),
    )
    assert isinstance(result, runner.Tested) and result.run.passed


def test_the_verdict_uses_the_tolerances_the_recipe_states(tmp_path: Path) -> None:
    def off_by_half_a_percent(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        z = (a + b).astype(np.float64)
        z[::100] *= 1.005  # 1 % of the elements, 0.5 % off each
        return z

    shape = ("16385",)
    (strict,) = run_npu(tmp_path / "a", off_by_half_a_percent, shapes=shape).run.shapes  # the fp16 defaults
    assert not strict.passed and strict.tolerance.rtol == 1e-3
    kernel = npu_kernel(tmp_path / "b")
    toml = kernel / "kernel.toml"
    text = toml.read_text()
    assert "rtol = 1e-3\natol = 1e-5\nmax_fraction = 0.001\n" in text
    toml.write_text(
        text.replace(
            "rtol = 1e-3\natol = 1e-5\nmax_fraction = 0.001\n", "rtol = 1e-2\natol = 0.0\nmax_fraction = 0.0\n"
        )
    )
    (loose,) = run_npu(tmp_path / "b", off_by_half_a_percent, shapes=shape).run.shapes
    assert loose.passed and (loose.tolerance.rtol, loose.tolerance.atol, loose.tolerance.max_fraction) == (1e-2, 0, 0)
    assert loose.comparison is not None and loose.comparison.max_rel_error > 4e-3  # measured, and within 1e-2
    toml.write_text(text.replace("max_fraction = 0.001\n", "max_fraction = 0.02\n"))  # 2 % may be beyond
    (share,) = run_npu(tmp_path / "b", off_by_half_a_percent, shapes=shape).run.shapes
    assert share.passed and share.comparison is not None and share.comparison.beyond > 100
