"""kernels/add_custom: the CPU target built with the host's g++, golden runs compared bit for bit
with an fp16 reference, the two Ascend C bugs the CPU target must catch, the tiling header, the
recipe and the reproducibility of the CPU binary."""

from __future__ import annotations

import json
import math
import random
import re
import shutil
import struct
import sys
from pathlib import Path
from typing import Optional

import pytest

from ascenv import proc
from tests.conftest import SHARED

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python < 3.11
    import tomli as tomllib

KERNEL = Path(__file__).resolve().parents[2] / "kernels" / "add_custom"
GOLDEN_LENGTHS = [1, 15, 16, 17, 16384, 16385, 1024000, 1024001]
PLACEHOLDER = re.compile(r"\{(\w+)\}")

pytestmark = pytest.mark.skipif(
    shutil.which("g++") is None or shutil.which("make") is None,
    reason="the CPU target needs g++ and make on PATH",
)


def recipe() -> dict:
    return tomllib.loads((KERNEL / "kernel.toml").read_text(encoding="utf-8"))


def expand(argv: list[str], places: dict[str, Path]) -> list[str]:
    return [PLACEHOLDER.sub(lambda m: str(places[m.group(1)]), arg) for arg in argv]


def build_cpu(source: Path, root: Path, *extra: str) -> Path:
    """Build `source` (a copy of kernels/add_custom, or the real one) with the cpu recipe's argv."""
    places = {"src": source, "out": root / "out", "work": root / "work"}
    for directory in (places["out"], places["work"]):
        directory.mkdir(parents=True)
    done = proc.run(expand(recipe()["targets"]["cpu"]["build"], places) + ["-j4", *extra], timeout=300)
    assert done.ok, done.describe()
    return places["out"]


def variant(tmp: Path, path: str, old: str, new: str, *more: tuple[str, str]) -> Path:
    """A copy of the project with one deliberate bug: `old` (present exactly once) becomes `new`,
    and so for each further (old, new) pair of `more`."""
    copy = tmp / "add_custom"
    shutil.copytree(KERNEL, copy)
    target = copy / path
    text = target.read_text(encoding="utf-8")
    for before, after in ((old, new), *more):
        assert text.count(before) == 1, f"{path} no longer contains the line this test breaks: {before!r}"
        text = text.replace(before, after)
    target.write_text(text, encoding="utf-8")
    out = tmp / "build" / "out"
    return build_cpu(copy, tmp / "build", "CXXFLAGS=-O0", f"{out}/add_custom_cpu")  # -O0: compiles faster


def line_of(out: Path, path: str, code: str) -> str:
    """``../<path>:<line>`` of the one line holding `code` in the variant built into `out`, as the
    checker names source lines (relative to cpu/)."""
    lines = (out.parent.parent / "add_custom" / path).read_text(encoding="utf-8").splitlines()
    (number,) = [n for n, line in enumerate(lines, start=1) if code in line]
    return f"../{path}:{number}"


def run_cases(binary: Path, cores: int, cases: list[str]) -> proc.Completed:
    return proc.run([str(binary), str(cores), *cases], timeout=120)


def case_lines(output: str) -> dict[int, str]:
    """Case lines of the driver by length."""
    lines = {}
    for line in output.splitlines():
        found = re.match(r"(PASS|FAIL) len=(\d+) ", line)
        if found:
            lines[int(found.group(2))] = line
    return lines


def tiling(out: Path, length: int, cores: int, ub: Optional[int] = None) -> tuple[int, dict[str, str], list[tuple]]:
    argv = [str(out / "add_custom_tiling"), str(length), str(cores)] + ([] if ub is None else [str(ub)])
    done = proc.run(argv, timeout=30)
    lines = done.stdout.splitlines()
    fields = dict(item.split("=", 1) for item in lines[0].split())
    cores_out = [tuple(int(item.split("=", 1)[1]) for item in line.split()) for line in lines[1:]]
    return done.returncode, fields, cores_out


@pytest.fixture(scope="module")
def cpu_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_cpu(KERNEL, tmp_path_factory.mktemp("add_custom_cpu"))


# -- golden runs ------------------------------------------------------------------------------


@pytest.mark.parametrize("cores", [1, 8, 40])
def test_golden_lengths_match_the_reference_bit_for_bit(cpu_out: Path, cores: int) -> None:
    rng = random.Random(7)
    lengths = GOLDEN_LENGTHS + [rng.randrange(2, 300000) for _ in range(3)]
    cases = [f"{length}:{seed}" for seed, length in enumerate(lengths, start=1)]
    done = run_cases(cpu_out / "add_custom_cpu", cores, cases)
    assert done.ok, done.describe()
    lines = case_lines(done.stdout)
    assert sorted(lines) == sorted(lengths), done.stdout
    assert all(line.startswith("PASS") for line in lines.values()), done.stdout
    assert done.stdout.splitlines()[-1] == f"SUMMARY pass={len(lengths)} fail=0"


def test_golden_core_split(cpu_out: Path) -> None:
    # 17 halves = 34 bytes = 2 blocks of 32 bytes -> 2 cores; 1 half -> 1 core; 16385 on 8 cores:
    # 1025 blocks -> 1 core with 129 blocks (2064 halves, the tile) and 7 with 128.
    done = run_cases(cpu_out / "add_custom_cpu", 8, ["1:1", "17:1", "16385:1"])
    lines = case_lines(done.stdout)
    assert lines[1].split(" time_ns=")[0].endswith("blocks=1 tile=16")
    assert lines[17].split(" time_ns=")[0].endswith("blocks=2 tile=16")
    assert lines[16385].split(" time_ns=")[0].endswith("blocks=8 tile=2064")


def test_recipe_tests_pass(cpu_out: Path) -> None:
    for test in recipe()["targets"]["cpu"]["tests"]:
        done = proc.run(expand(test["argv"], {"out": cpu_out}), timeout=120)
        assert done.ok, done.describe()
        assert "fail=0" in done.stdout


def test_a_wrong_result_is_reported(tmp_path: Path) -> None:
    # Forgetting the last, partial tile leaves z untouched there (the NaN pattern 0x7e55).
    out = variant(
        tmp_path,
        "op_kernel/add_custom.cpp",
        "const uint64_t tileNum = (coreLength + tileLength - 1) / tileLength;",
        "const uint64_t tileNum = coreLength / tileLength;",
    )
    done = run_cases(out / "add_custom_cpu", 1, ["16384:1", "16400:1"])
    assert done.returncode == 1, done.describe()
    lines = case_lines(done.stdout)
    assert lines[16384].startswith("PASS")
    assert lines[16400].startswith("FAIL len=16400 cores=1 seed=1: z[16384] = 0x7e55, expected 0x")


# -- the two bugs the CPU target must catch ---------------------------------------------------


def test_misaligned_datacopy_fails_loudly(tmp_path: Path) -> None:
    # The classic tail bug: DataCopy for every tile, also the 15-element (30-byte) one.
    out = variant(
        tmp_path,
        "op_kernel/add_custom.cpp",
        "return (count * sizeof(half)) % BLOCK_BYTES == 0;",
        "(void)count;\n    return true;",
    )
    done = run_cases(out / "add_custom_cpu", 8, ["16:1", "15:1", "17:1"])
    assert done.returncode == 1, done.describe()
    lines = case_lines(done.stdout)
    assert lines[16].startswith("PASS")
    assert lines[15].startswith(
        "FAIL len=15 cores=8 seed=1: block 0/1: DataCopy GM->UB: 30 bytes (15 elements x 2 bytes) "
        "is not a multiple of 32 bytes"
    )
    assert "op_kernel/add_custom.cpp:" in lines[15]
    # 17 halves: core 1 gets the last block, holding 1 element (2 bytes).
    assert "block 1/2: DataCopy GM->UB: 2 bytes (1 elements x 2 bytes)" in lines[17]


def test_misaligned_ub_address_fails_loudly(tmp_path: Path) -> None:
    # DataCopy into a UB view that starts one half (2 bytes) into its buffer.
    out = variant(
        tmp_path,
        "op_kernel/add_custom.cpp",
        "AscendC::DataCopy(dst, src[offset], count);",
        "AscendC::DataCopy(dst[1], src[offset], count);",
    )
    done = run_cases(out / "add_custom_cpu", 1, ["16:1"])
    assert done.returncode == 1, done.describe()
    assert case_lines(done.stdout)[16].startswith(
        "FAIL len=16 cores=1 seed=1: block 0/1: DataCopy GM->UB: UB address (offset 2) is not 32-byte aligned"
    )


def test_oversized_tile_fails_loudly(tmp_path: Path) -> None:
    # The classic UB bug: the tiling forgets double buffering, so 3 x 2 buffers need twice the UB.
    out = variant(
        tmp_path,
        "op_host/add_custom_tiling_math.h",
        "ubBytes / (kTensorsInUb * kBufferNum)",
        "ubBytes / kTensorsInUb",
    )
    done = run_cases(out / "add_custom_cpu", 8, ["16:1", "1024000:1"])
    assert done.returncode == 1, done.describe()
    lines = case_lines(done.stdout)
    assert lines[16].startswith("PASS")  # a tiny input never reaches the oversized tile
    # 1024000 halves on 8 cores: 128000 each, tile 65536 bytes; x's 2 buffers fit (131072), y's do not.
    assert lines[1024000].startswith(
        "FAIL len=1024000 cores=8 seed=1: block 0/8: UB budget exceeded: InitBuffer(VECIN queue, num=2, "
        "len=65536 bytes) asks for 131072 bytes while 131072 are already taken: 262144 > UB size 196608 bytes"
    )


# -- the two NPU races the CPU target must catch although the values come out right -------------


def test_a_missing_enque_deque_hand_over_is_a_race(tmp_path: Path) -> None:
    # CopyIn keeps its tensors in members instead of EnQue-ing them, Compute uses them without
    # DeQue: on the CPU the values are right, on the NPU the vector unit may read x and y before
    # MTE2 has finished copying them.
    kernel = "op_kernel/add_custom.cpp"
    out = variant(
        tmp_path,
        kernel,
        "        inQueueX.EnQue(xLocal);\n        inQueueY.EnQue(yLocal);\n",
        "        xIn = xLocal;\n        yIn = yLocal;\n",
        (
            "        AscendC::LocalTensor<half> xLocal = inQueueX.DeQue<half>();\n"
            "        AscendC::LocalTensor<half> yLocal = inQueueY.DeQue<half>();\n",
            "        AscendC::LocalTensor<half> xLocal = xIn;\n        AscendC::LocalTensor<half> yLocal = yIn;\n",
        ),
        (
            "    uint32_t tileLength = 0;\n",
            "    uint32_t tileLength = 0;\n    AscendC::LocalTensor<half> xIn;\n    AscendC::LocalTensor<half> yIn;\n",
        ),
    )
    done = run_cases(out / "add_custom_cpu", 8, ["16:1", "16385:1"])
    assert done.returncode == 1, done.describe()
    copy_in = line_of(out, kernel, "AscendC::DataCopy(dst, src[offset], count);")
    add = line_of(out, kernel, "AscendC::Add(zLocal, xLocal, yLocal")
    race = (
        f"Add src0: the vector unit reads a UB buffer that MTE2 (the GM->UB copy unit) wrote "
        f"(DataCopy GM->UB at {copy_in}) with no EnQue/DeQue hand-over in between: on the NPU the units "
        f"run in parallel, so the data may not be there yet (EnQue the tensor after the write, DeQue it "
        f"before this use) [{add}]"
    )
    lines = case_lines(done.stdout)
    assert lines[16] == f"FAIL len=16 cores=8 seed=1: block 0/1: {race}"
    assert lines[16385] == f"FAIL len=16385 cores=8 seed=1: block 0/8: {race}"


def test_a_copy_out_before_its_hand_over_is_a_race(tmp_path: Path) -> None:
    # Compute keeps z in a member instead of EnQue-ing it and CopyOut uses it without DeQue: MTE3
    # may copy z to GM before the vector unit has finished writing it.
    kernel = "op_kernel/add_custom.cpp"
    out = variant(
        tmp_path,
        kernel,
        "        outQueueZ.EnQue(zLocal);\n",
        "        zOut = zLocal;\n",
        (
            "        AscendC::LocalTensor<half> zLocal = outQueueZ.DeQue<half>();\n",
            "        AscendC::LocalTensor<half> zLocal = zOut;\n",
        ),
        ("    uint32_t tileLength = 0;\n", "    uint32_t tileLength = 0;\n    AscendC::LocalTensor<half> zOut;\n"),
    )
    done = run_cases(out / "add_custom_cpu", 1, ["32:1"])
    assert done.returncode == 1, done.describe()
    add = line_of(out, kernel, "AscendC::Add(zLocal, xLocal, yLocal")
    copy_out = line_of(out, kernel, "AscendC::DataCopy(zGm[offset], zLocal, count);")
    assert case_lines(done.stdout)[32] == (
        f"FAIL len=32 cores=1 seed=1: block 0/1: DataCopy UB->GM: MTE3 (the UB->GM copy unit) reads a UB buffer "
        f"that the vector unit wrote (Add dst at {add}) with no EnQue/DeQue hand-over in between: on the NPU "
        f"the units run in parallel, so the data may not be there yet (EnQue the tensor after the write, "
        f"DeQue it before this use) [{copy_out}]"
    )


def test_cores_writing_the_same_gm_bytes_are_a_race(tmp_path: Path) -> None:
    # Every core takes formerLength elements from its (right) start: a latter core's share runs
    # one 32-byte block into the next core's. The values written twice are equal, so z comes out
    # right on the CPU; on the NPU the two cores write those bytes at the same time.
    kernel = "op_kernel/add_custom.cpp"
    out = variant(tmp_path, kernel, "coreLength = tiling.latterLength;", "coreLength = tiling.formerLength;")
    done = run_cases(out / "add_custom_cpu", 8, ["16:1", "17:1", "16385:1"])
    assert done.returncode == 1, done.describe()
    lines = case_lines(done.stdout)
    assert lines[16].startswith("PASS")  # one core: nothing to overlap
    aligned = line_of(out, kernel, "AscendC::DataCopy(zGm[offset], zLocal, count);")
    padded = line_of(out, kernel, "AscendC::DataCopyPad(zGm[offset], zLocal, params);")
    tail = (
        "on the NPU the cores run at the same time and which write lands is undefined; "
        "the tiling must give every core a GM range of its own"
    )
    # 17 halves on 2 cores: core 0 takes 32 elements (clamped to 17), core 1 starts at 16.
    assert lines[17] == (
        f"FAIL len=17 cores=8 seed=1: block 1/2: blocks 0 and 1 both write z bytes [32, 34) "
        f"(block 0: DataCopyPad UB->GM at {padded}; block 1: DataCopyPad UB->GM at {padded}): {tail}"
    )
    # 16385 halves: core 1 (a latter core, 2048 elements) starts at 2064 and writes 2064, up to
    # element 4128; core 2 starts at 4112: elements [4112, 4128) = bytes [8224, 8256).
    assert lines[16385] == (
        f"FAIL len=16385 cores=8 seed=1: block 2/8: blocks 1 and 2 both write z bytes [8224, 8256) "
        f"(block 1: DataCopy UB->GM at {aligned}; block 2: DataCopy UB->GM at {aligned}): {tail}"
    )


# -- the tiling header ------------------------------------------------------------------------


@pytest.mark.parametrize("cores", [1, 8, 20, 40])
def test_tiling_invariants_around_boundaries(cpu_out: Path, cores: int) -> None:
    lengths = {0, 1, 15, 16, 17, 31, 32, 33, 16383, 16384, 16385, 1024000, 1024001}
    lengths |= {cores * 16 - 1, cores * 16, cores * 16 + 1, cores * 16384 * 2 + 1}
    for length in sorted(lengths):
        code, fields, ranges = tiling(cpu_out, length, cores)
        assert code == 0 and fields["status"] == "ok", (length, fields)
        blocks = -(-length // 16)
        assert int(fields["usedCoreNum"]) == max(1, min(cores, blocks)), (length, fields)
        tile = int(fields["tileLength"])
        assert tile % 16 == 0 and tile * 2 * 3 * 2 <= 196608, (length, fields)
        assert [start for _, start, _ in ranges] == [sum(n for _, _, n in ranges[:i]) for i in range(len(ranges))]
        assert sum(n for _, _, n in ranges) == length
        assert all(start % 16 == 0 for _, start, _ in ranges)  # every core starts on a 32-byte block
        full = [n for _, _, n in ranges[:-1]]
        assert all(n % 16 == 0 for n in full)  # only the last core may end in a partial block
        if length:
            per_core_blocks = [-(-n // 16) for _, _, n in ranges]
            assert max(per_core_blocks) - min(per_core_blocks) <= 1, (length, ranges)  # balanced
            assert tile <= max(per_core_blocks) * 16, (length, fields)  # no tile beyond the largest share


def test_tiling_values_worked_by_hand(cpu_out: Path) -> None:
    # 16385 halves = 1025 blocks on 8 cores: 1 former core of 129 blocks, 7 latter of 128;
    # the last core starts at 2064 + 6 * 2048 = 14352 and holds 16385 - 14352 = 2033.
    code, fields, ranges = tiling(cpu_out, 16385, 8)
    assert (fields["formerNum"], fields["formerLength"], fields["latterLength"]) == ("1", "2064", "2048")
    assert fields["tileLength"] == "2064"
    assert ranges[-1] == (7, 14352, 2033)
    # 1024001 halves = 64001 blocks on 40 cores: the tile is UB-bound, 196608 / 6 / 2 = 16384.
    code, fields, ranges = tiling(cpu_out, 1024001, 40)
    assert (fields["formerNum"], fields["formerLength"], fields["latterLength"]) == ("1", "25616", "25600")
    assert fields["tileLength"] == "16384"
    assert ranges[-1] == (39, 25616 + 38 * 25600, 1024001 - 25616 - 38 * 25600)
    # 16384 halves = 1024 blocks on 20 cores: 4 cores of 52 blocks, 16 of 51.
    code, fields, ranges = tiling(cpu_out, 16384, 20)
    assert (fields["formerNum"], fields["formerLength"], fields["latterLength"]) == ("4", "832", "816")
    # One element: one core, one 16-element tile.
    code, fields, ranges = tiling(cpu_out, 1, 40)
    assert (fields["usedCoreNum"], fields["tileLength"]) == ("1", "16") and ranges == [(0, 0, 1)]
    # Nothing to add: one idle core (a launch needs block dim >= 1).
    code, fields, ranges = tiling(cpu_out, 0, 8)
    assert (code, fields["usedCoreNum"], fields["tileLength"], ranges) == (0, "1", "0", [(0, 0, 0)])


def test_tiling_errors(cpu_out: Path) -> None:
    code, fields, _ = tiling(cpu_out, 100, 0)
    assert (code, fields["status"]) == (1, "no-cores")
    # 191 bytes / 6 buffers = 31 bytes: not one 32-byte block per buffer.
    code, fields, _ = tiling(cpu_out, 100, 1, ub=191)
    assert (code, fields["status"]) == (1, "ub-too-small")
    code, fields, _ = tiling(cpu_out, 100, 1, ub=192)
    assert (code, fields["status"], fields["tileLength"]) == (0, "ok", "16")


# -- reproducibility, recipe, op description ---------------------------------------------------


def test_cpu_binary_does_not_depend_on_the_build_path(cpu_out: Path, tmp_path: Path) -> None:
    # The fixture built from the repository into one temp dir; this builds a copy elsewhere.
    copy = tmp_path / "some" / "deeper" / "checkout" / "add_custom"
    shutil.copytree(KERNEL, copy)
    out_copy = build_cpu(copy, tmp_path / "elsewhere")
    for name in recipe()["targets"]["cpu"]["outputs"]:
        binary = (cpu_out / name).read_bytes()
        assert binary == (out_copy / name).read_bytes(), name
        assert str(KERNEL).encode() not in binary and str(cpu_out.parent).encode() not in binary, name


def test_recipe_shape() -> None:
    data = recipe()
    assert (data["schema"], data["name"], data["op_type"]) == (1, "add_custom", "AddCustom")
    assert sorted(data["targets"]) == ["cpu", "npu"]
    assert data["targets"]["cpu"]["image"] == "builder-bookworm"
    for name, target in data["targets"].items():
        assert target["image"] and target["outputs"], name
        argvs = [(target["build"], set())] + [(t["argv"], set()) for t in target.get("tests", [])]
        argvs += [(b[key], {"shape"}) for b in target.get("benchmarks", []) for key in ("argv", "tiling") if key in b]
        argvs += [(target["accuracy_argv"], {"shape", "elements", "data"})] if "accuracy_argv" in target else []
        for argv, extra in argvs:
            assert all(isinstance(arg, str) for arg in argv), (name, argv)
            assert {m for arg in argv for m in PLACEHOLDER.findall(arg)} <= {"src", "out", "work"} | extra, (name, argv)


def test_op_description_matches_the_op_definition() -> None:
    (op,) = json.loads((KERNEL / "add_custom.json").read_text(encoding="utf-8"))
    host = (KERNEL / "op_host" / "add_custom.cpp").read_text(encoding="utf-8")
    assert op["op"] == "AddCustom" and "OP_ADD(AddCustom);" in host
    for kind, descs in (("Input", op["input_desc"]), ("Output", op["output_desc"])):
        for desc in descs:
            assert (desc["type"], desc["format"], desc["param_type"]) == (["float16"], ["ND"], "required")
            assert f'this->{kind}("{desc["name"]}").ParamType(REQUIRED).DataType({{ge::DT_FLOAT16}})' in host


def test_op_description_has_the_shape_of_the_ascend_sample() -> None:
    sample = SHARED / "opproject-refdata" / "samples-2024_AddCustom.json"
    if not sample.exists():
        pytest.skip("reference data /work/shared/opproject-refdata is not present")
    reference = json.loads(sample.read_bytes().split(b"\n", 1)[1])
    ours = json.loads((KERNEL / "add_custom.json").read_text(encoding="utf-8"))
    assert ours == reference


# -- the io mode (`ascenv test`) -------------------------------------------------------------


def halves(path: Path, values: list[float]) -> Path:
    path.write_bytes(struct.pack(f"<{len(values)}e", *values))
    return path


def test_the_io_mode_adds_the_files_it_is_given(cpu_out: Path, tmp_path: Path) -> None:
    count = 16385
    x = [((i * 37) % 200 - 100) / 8 for i in range(count)]
    y = [((i * 11) % 50) / 4 for i in range(count)]
    argv = [str(cpu_out / "add_custom_cpu"), "io", "40", str(count)]
    files = [str(halves(tmp_path / "x.bin", x)), str(halves(tmp_path / "y.bin", y)), str(tmp_path / "z.bin")]
    done = proc.run([*argv, *files], timeout=60)
    assert done.ok and done.stdout == "RAN len=16385 cores=40 blocks=40 tile=416\n", done.describe()
    z = struct.unpack(f"<{count}e", (tmp_path / "z.bin").read_bytes())
    assert list(z) == [a + b for a, b in zip(x, y)]  # exact: every sum is a multiple of 1/8 below 2048
    # an empty input is a run of nothing, and an empty output
    for name in ("x0", "y0"):
        halves(tmp_path / name, [])
    empty = [str(tmp_path / "x0"), str(tmp_path / "y0"), str(tmp_path / "z0")]
    done = proc.run([*argv[:3], "0", *empty], timeout=60)
    assert done.ok and (tmp_path / "z0").read_bytes() == b""


@pytest.mark.parametrize(
    "length, extra, message",
    [
        ("17", [], "cannot read 17 fp16 values from each of"),  # x.bin holds 16 values
        ("15", [], "cannot read 15 fp16 values"),  # nor fewer: a longer file is refused too
        ("16", ["more"], "usage: "),
        ("x", [], "usage: "),
    ],
)
def test_the_io_mode_refuses_files_of_another_length_and_bad_usage_exit_2(
    cpu_out: Path, tmp_path: Path, length: str, extra: list, message: str
) -> None:
    x = halves(tmp_path / "x.bin", [1.0] * 16)
    argv = [str(cpu_out / "add_custom_cpu"), "io", "8", length, str(x), str(x), str(tmp_path / "z.bin"), *extra]
    done = proc.run(argv, timeout=60)
    assert done.returncode == 2 and message in done.stderr, done.describe()
    assert not (tmp_path / "z.bin").exists()


def test_the_io_mode_leaves_what_the_kernel_never_wrote_nan(tmp_path: Path) -> None:
    out = variant(
        tmp_path,
        "op_kernel/add_custom.cpp",
        "const uint64_t tileNum = (coreLength + tileLength - 1) / tileLength;",
        "const uint64_t tileNum = coreLength / tileLength;",
    )
    x = halves(tmp_path / "x.bin", [1.0] * 17)
    done = proc.run([str(out / "add_custom_cpu"), "io", "40", "17", str(x), str(x), str(tmp_path / "z.bin")], timeout=60)
    assert done.ok, done.describe()
    z = struct.unpack("<17e", (tmp_path / "z.bin").read_bytes())
    assert z[:16] == (2.0,) * 16 and math.isnan(z[16])
