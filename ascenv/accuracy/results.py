"""What ``ascenv test`` found, and where it keeps it: ``<store>/<op>/<key>/accuracy/<id>.json``,
beside the build's ``bench/`` runs, one file per run, ``{"schema": 1, "test": {...}}``, written
atomically through no symlink (``bench.store.write_in_store``); read back by ``store show``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ascenv import serde
from ascenv.accuracy.spec import Tolerance
from ascenv.bench.store import check_op, run_id, write_in_store
from ascenv.errors import InputError, SchemaError
from ascenv.fsutil import read_input

SCHEMA = 1
FOLDER = "accuracy"
LIMIT = 16 << 20  # a run holds hashes, errors and ten indices per shape: kilobytes


@dataclass(frozen=True)
class Mismatch:
    index: int  # flat, C order
    at: tuple[int, ...]  # the same, per dimension
    expected: str  # text: a NaN or an infinity is no JSON number
    actual: str


@dataclass(frozen=True)
class Comparison:
    elements: int
    max_abs_error: float
    max_rel_error: float
    beyond: int  # elements beyond rtol/atol, the non-finite mismatches included
    allowed: float  # max_fraction * elements
    nonfinite: int  # NaN or infinity on one side only, or infinities of other signs
    first: tuple[Mismatch, ...]
    passed: bool


@dataclass(frozen=True)
class InputFile:
    name: str
    dtype: str
    sha256: str  # of the bytes the program read: a rerun with the same seed gives the same


@dataclass(frozen=True)
class ShapeResult:
    shape: str
    seed: int  # this shape's generator seed (inputs.shape_seed of the run's seed and the shape)
    inputs: tuple[InputFile, ...]
    output: str  # name and dtype, "z float16"
    tolerance: Tolerance
    passed: bool
    comparison: Optional[Comparison] = None  # None: the program gave no output to compare
    problem: Optional[str] = None  # why there is nothing to compare, or what else failed
    printed: str = ""  # the last lines the program printed


@dataclass(frozen=True)
class TestRun:
    id: str
    op: str
    target: str
    build_key: str
    created: str
    seed: int
    reference: str
    argv: tuple[str, ...]
    shapes: tuple[ShapeResult, ...]

    @property
    def passed(self) -> bool:
        return all(s.passed for s in self.shapes)


def new_run(
    *,
    op: str,
    target: str,
    build_key: str,
    created: str,
    seed: int,
    reference: str,
    argv: tuple[str, ...],
    shapes: tuple[ShapeResult, ...],
) -> TestRun:
    payload = json.dumps(serde.to_data(shapes), sort_keys=True) + build_key + created
    return TestRun(run_id(created, payload), op, target, build_key, created, seed, reference, argv, tuple(shapes))


def dumps(run: TestRun) -> str:
    data = {"schema": SCHEMA, "test": serde.to_data(run)}
    return json.dumps(data, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def loads(text: str, source: str) -> TestRun:
    try:
        data = json.loads(text, parse_constant=_no_constant)  # strict JSON, as it was written
    except (RecursionError, ValueError) as exc:
        raise InputError(f"{source}: not an ascenv test run: {exc}") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        found = data.get("schema") if isinstance(data, dict) else None
        raise InputError(f"{source}: schema: this ascenv reads test runs of schema {SCHEMA}, found {found!r}")
    try:
        return serde.from_data(TestRun, data.get("test"), "test")
    except SchemaError as exc:
        raise InputError(f"{source}: {exc}") from None


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def write(store_root: Path, entry_path: Path, run: TestRun) -> Path:
    check_op(run.op, "test.op")
    path = entry_path / FOLDER / f"{run.id}.json"
    write_in_store(store_root, path, dumps(run), "the test run")
    return path


@dataclass(frozen=True)
class BuildTest:
    """One file of a build's ``accuracy/`` folder as ``store show`` lists it (``damaged``: why
    it does not read, the other fields then None)."""

    name: str
    id: Optional[str] = None
    created: Optional[str] = None
    target: Optional[str] = None
    passed: Optional[bool] = None
    shapes: Optional[int] = None
    failed: tuple[str, ...] = ()  # the shapes that failed
    damaged: Optional[str] = None


def build_tests(entry_path: Path) -> tuple[BuildTest, ...]:
    """The test runs of a build, newest first, damaged ones (by name) last."""
    good: list[BuildTest] = []
    damaged: list[BuildTest] = []
    for path in sorted((entry_path / FOLDER).glob("*.json")):
        try:
            raw = read_input(path, what="test run", limit=LIMIT)
            run = loads(raw.decode("utf-8", errors="replace"), str(path))
        except InputError as exc:
            damaged.append(BuildTest(path.name, damaged=exc.message))
            continue
        failed = tuple(s.shape for s in run.shapes if not s.passed)
        good.append(BuildTest(path.name, run.id, run.created, run.target, run.passed, len(run.shapes), failed))
    good.sort(key=lambda t: (t.created or "", t.id or ""), reverse=True)
    return tuple(good + damaged)
