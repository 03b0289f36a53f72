"""``ascenv test OP``: per shape, inputs from the seed written to ``{data}/<input>.bin``, the
target's ``accuracy_argv`` run on the stored build, ``{data}/<output>.bin`` read back and
compared on the host with the recipe's reference under its tolerances; the run is kept beside
the build (``results``).

The CPU target runs in the build's own container, one container for every shape, as ``bench
run`` does (``ascenv.stored_build``). The NPU target, as ``bench run --target npu``: where a
``/dev/davinci<N>`` node is present the argv runs on this host with ``{out}`` the stored build's
outputs; elsewhere the command to run on an NPU host is returned. Nothing of it has run on an
NPU: no NPU was available where it was written."""

from __future__ import annotations

import datetime
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Optional, Union

from ascenv import builder, proc, store, stored_build
from ascenv.accuracy import compare, inputs, results
from ascenv.accuracy.spec import Accuracy, dims, elements, shape_problem
from ascenv.bench.runner import NpuCommands, npu_devices  # the same as bench run --target npu
from ascenv.containers.engine import Engine
from ascenv.errors import BuildFailed, UsageError

PROGRESS = "ascenv-test: "
DATA = f"{builder.WORK}/data"


@dataclass(frozen=True)
class TestRequest:
    kernel_dir: Path
    recipe: builder.KernelRecipe
    target: str
    shapes: Optional[tuple[str, ...]] = None  # --shapes: instead of the recipe's
    seed: Optional[int] = None  # --seed: instead of the recipe's
    build: Optional[str] = None
    store_option: str = ""
    timeout: float = 3600.0


@dataclass(frozen=True)
class Tested:
    run: results.TestRun
    path: Path


Result = Union[Tested, NpuCommands]


@dataclass(frozen=True)
class Case:
    shape: str
    seed: int
    inputs: dict[str, bytes]


def accuracy_of(request: TestRequest) -> tuple[Accuracy, tuple[str, ...]]:
    """The recipe's [accuracy] table and the target's accuracy_argv, or exit 2 saying what to add."""
    where = request.kernel_dir / builder.RECIPE_FILE
    acc = request.recipe.accuracy
    if acc is None:
        raise UsageError(
            f"{where} declares no [accuracy] table",
            hint="declare reference, inputs, output and shapes (see kernels/add_custom/kernel.toml)",
        )
    argv = request.recipe.targets[request.target].accuracy_argv
    if not argv:
        raise UsageError(
            f"{where}: targets.{request.target} declares no accuracy_argv",
            hint="the program that reads {data}/<input>.bin and writes {data}/<output>.bin for {shape}",
        )
    return acc, argv


def plan(request: TestRequest, acc: Accuracy) -> tuple[Case, ...]:
    shapes = request.shapes if request.shapes is not None else acc.shapes
    for shape in shapes:
        problem = shape_problem(shape)
        if problem:
            raise UsageError(f"--shapes: {problem}", hint="for example: --shapes 16385,4x4097")
    seed = acc.seed if request.seed is None else request.seed
    if seed < 0:
        raise UsageError(f"--seed {seed}: expected a seed, zero or more")
    return tuple(Case(s, inputs.shape_seed(seed, s), inputs.generate(acc, s, seed)) for s in dict.fromkeys(shapes))


def places(data: str, shape: str) -> dict[str, str]:
    return {**builder.PLACEHOLDERS, builder.SHAPE: shape, "elements": str(elements(shape)), "data": data}


def test_script(argv: Sequence[str], todo: Sequence[Case]) -> str:
    """The sh program run in the container: per shape the argv, its output and exit status kept
    beside its data; every shape runs, whatever an earlier one did."""
    lines = ["set -u"]
    for i, case in enumerate(todo):
        data = f"{DATA}/{i}"
        say = f"{PROGRESS}shape {case.shape} ({i + 1}/{len(todo)})"
        lines += [
            f"echo {shlex.quote(say)}",
            f'{shlex.join(builder.expand(tuple(argv), places(data, case.shape)))} > "{data}/printed" 2>&1',
            f'echo "$?" > "{data}/status"',
        ]
    return "\n".join(lines) + "\n"


def write_inputs(work: Path, todo: Sequence[Case]) -> None:
    for i, case in enumerate(todo):
        folder = work / "data" / str(i)
        folder.mkdir(parents=True)
        for name, raw in case.inputs.items():
            (folder / f"{name}.bin").write_bytes(raw)


def judge(acc: Accuracy, case: Case, folder: Path, reference: Callable[..., Any]) -> results.ShapeResult:
    """One shape: what the program left in ``folder`` against the reference."""
    status_file, printed_file = folder / "status", folder / "printed"
    status = status_file.read_text(encoding="utf-8").strip() if status_file.is_file() else ""
    printed = _tail(printed_file) if printed_file.is_file() else ""
    out = acc.result
    tolerance = acc.tolerance(out.dtype)
    files = tuple(results.InputFile(t.name, t.dtype, inputs.digest(case.inputs[t.name])) for t in acc.inputs)
    shown = results.ShapeResult(case.shape, case.seed, files, f"{out.name} {out.dtype}", tolerance, False)
    if status != "0":
        what = f"exited {status}" if status else "did not run"
        return replace(shown, problem=f"the program {what}", printed=printed)
    path = folder / f"{out.name}.bin"
    raw = path.read_bytes() if path.is_file() else b""
    if not path.is_file() or compare.element_count(raw, out.dtype) != elements(case.shape):
        found = f"{len(raw)} bytes" if path.is_file() else "no file"
        return replace(
            shown,
            problem=f"{out.name}.bin: expected {elements(case.shape)} {out.dtype} values, found {found}",
            printed=printed,
        )
    expected = inputs.expected(acc, case.shape, case.inputs, reference)
    judged = compare.compare(compare.decode(raw, out.dtype), expected, tolerance, dims(case.shape))
    return replace(shown, comparison=judged, passed=judged.passed, printed=printed)


def _tail(path: Path, lines: int = 10, limit: int = 64 << 10) -> str:
    """The last ``lines`` lines of what a program printed, read from its last ``limit`` bytes
    (a program may print without end)."""
    with open(path, "rb") as fh:
        fh.seek(max(0, fh.seek(0, 2) - limit))
        text = fh.read().decode("utf-8", errors="replace")
    return "\n".join(text.rstrip().splitlines()[-lines:])


def run_test(
    request: TestRequest,
    st: store.Store,
    *,
    connect: Callable[[], Engine],
    resolve_image: Callable[[Engine, str], builder.PinnedImage],
    probe: Callable[[], Optional[Any]],
    run: proc.Runner = proc.run,
    on_event: Callable[[str], None] = lambda _: None,
) -> Result:
    acc, argv = accuracy_of(request)
    entry = stored_build.chosen_build(st, request.recipe.name, request.target, request.build, request.store_option)
    assert entry.manifest is not None
    if any("{src}" in a for a in argv):
        stored_build.refuse_other_sources(
            request.kernel_dir,
            entry,
            f"targets.{request.target}.accuracy_argv",
            "its results",
            f"ascenv build {request.recipe.name} --target {request.target}{request.store_option}",
            "make accuracy_argv use only {out} and {data}",
        )
    reference = inputs.load_reference(acc.reference, request.kernel_dir)
    todo = plan(request, acc)
    seed = acc.seed if request.seed is None else request.seed
    if request.target == "npu":
        if not npu_devices(probe()):  # the machine's /dev, read only for the NPU target
            return NpuCommands(
                entry.op, entry.key, "no NPU here: no /dev/davinci<N> device node", npu_commands(request, entry, seed)
            )
        shapes = _on_this_host(request, argv, todo, st, entry, reference, run, on_event)
    else:
        image = entry.manifest.toolchain.image
        on_event(f"testing build {entry.key[:12]} of {entry.op} ({request.target}) in {image}")
        with stored_build.run_script(
            request.kernel_dir,
            request.recipe,
            st,
            entry,
            test_script(argv, todo),
            purpose="test",
            connect=connect,
            resolve=resolve_image,
            timeout=request.timeout,
            prepare=lambda work: write_inputs(work, todo),
            on_log=stored_build.progress(PROGRESS, on_event),
        ) as (work, result):
            if result.timed_out:
                raise BuildFailed(f"the accuracy check of {entry.op} timed out after {request.timeout:.0f} s")
            shapes = tuple(judge(acc, c, work / "data" / str(i), reference) for i, c in enumerate(todo))
    made = results.new_run(
        op=entry.op,
        target=request.target,
        build_key=entry.key,
        created=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        seed=seed,
        reference=acc.reference,
        argv=argv,
        shapes=shapes,
    )
    return Tested(made, results.write(st.root, entry.path, made))


def _on_this_host(
    request: TestRequest,
    argv: tuple[str, ...],
    todo: Sequence[Case],
    st: store.Store,
    entry: store.Entry,
    reference: Callable[..., Any],
    run: proc.Runner,
    on_event: Callable[[str], None],
) -> tuple[results.ShapeResult, ...]:
    """The NPU target where an NPU is present: the argv on this host (not verified on an NPU)."""
    acc, found = accuracy_of(request)[0], []
    with st.staging(f"test-{entry.op}") as stage:
        write_inputs(stage, todo)
        for i, case in enumerate(todo):
            on_event(f"shape {case.shape} ({i + 1}/{len(todo)})")
            folder = stage / "data" / str(i)
            host: Mapping[str, str] = {
                **places(str(folder), case.shape),
                "src": str(request.kernel_dir),
                "out": str(entry.outputs),
                "work": str(stage),
            }
            done = run(builder.expand(argv, host), timeout=request.timeout)
            status = "" if done.returncode is None else str(done.returncode)  # None: it did not run
            (folder / "status").write_text(f"{status}\n", encoding="utf-8")
            (folder / "printed").write_text(done.stdout + done.stderr, encoding="utf-8")
            found.append(judge(acc, case, folder, reference))
    return tuple(found)


def npu_commands(request: TestRequest, entry: store.Entry, seed: int) -> tuple[str, ...]:
    """``ascenv test`` itself, on the NPU host, with this build and seed: it writes the inputs,
    runs the argv there and compares (the same inputs: the seed gives the bytes)."""
    shapes = ["--shapes", ",".join(request.shapes)] if request.shapes else []
    argv = ["ascenv", "test", request.recipe.name, "--target", "npu", "--build", entry.key, "--seed", str(seed)]
    return (shlex.join([*argv, *shapes]) + request.store_option,)
