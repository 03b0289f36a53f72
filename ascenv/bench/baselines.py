"""``<store>/<op>/.bench/baselines.json``, the accepted baseline run of each target, read below
``bench.store``: the build store's gc keeps every build holding a baseline and reads this file
through here, so ``ascenv.store`` never imports ``bench.store``, which stands on it (no cycle)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ascenv.errors import InputError, UsageError
from ascenv.fsutil import read_input
from ascenv.names import name_problem

LOOSE = ".bench"
BASELINES = "baselines.json"
BASELINES_LIMIT = 1 << 20  # target -> run id: a few lines
DAMAGED = "a damaged file in the store can be removed: only ascenv bench import, run and baseline write them"


def check_op(op: str, source: str = "--op") -> str:
    """``op`` where it is one safe path component (it names ``<store>/<op>/``), else exit 2."""
    problem = name_problem(op)
    if problem:
        raise UsageError(f"{source} {op[:100]!r}: an operator name is one directory name: {problem}")
    return op


def no_constant(name: str) -> None:
    """``parse_constant`` of json.loads: NaN and Infinity are not JSON (a strict reader fails on them)."""
    raise ValueError(f"{name} is not a JSON number")


def read_baselines(root: Path, op: str) -> dict[str, str]:
    """``<op>/.bench/baselines.json`` of the store at ``root`` (target -> run id)."""
    path = root / check_op(op) / LOOSE / BASELINES
    if not os.path.lexists(path):
        return {}
    raw = read_input(path, what="bench baselines", limit=BASELINES_LIMIT, hint=DAMAGED)
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=no_constant)
    except RecursionError:
        raise InputError(f"{path}: not ascenv's baselines (JSON nested too deep)") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise InputError(f"{path}: expected an object of target -> run id")
    return data
