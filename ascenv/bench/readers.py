"""Readers for what Ascend's profilers write, as a directory tree or a single CSV:

- ``msprof``: ``PROF_*/mindstudio_profiler_output/op_summary_*.csv`` (slices merged),
  ``task_time_*.csv``, ``op_statistic_*.csv``, and the older ``PROF_*/device_*/summary/`` layout
  (https://www.hiascend.com/document/detail/zh/mindstudio/70RC1/mscommandtoolug/mscommandug/atlasprofiling_16_0061.html);
- ``msprof op``: ``OPPROF_*/OpBasicInfo.csv`` plus the per-block metric CSVs beside it
  (https://www.hiascend.com/document/detail/zh/CANNCommunityEdition/850/devaids/optool/atlasopdev_16_0098.html);
- the torch_npu profiler: ``ASCEND_PROFILER_OUTPUT/kernel_details.csv`` (op_summary with
  renamed columns), ``op_statistic.csv`` and ``profiler_info_*.json``.

A file is recognised by its header, not its name. Columns are found through an alias table
(``Task Duration(us)``/``Duration(us)``, ``Block Dim``/``Block Num``, ...); ``N/A`` and ``NA``
are missing values; trailing commas give an empty column that is dropped; the start-time column
(TAB-suffixed, quoted, or spreadsheet-mangled to ``1.69512E+15``) is never read, so its forms
cannot matter. A header ascenv does not know, an empty file, a header without rows or a row cut
short is an error naming the file; never a silent zero.

Folds, so that a record's numbers come from real launches:

- launches of one key: the duration's median, min and max over all launches; the metrics and
  Block Dim of the *median launch* (the launch whose duration is the median; the lower of the
  two middle ones for an even count), so a record's ratios are one consistent set measured
  together, never medians of different launches mixed;
- per-block rows of msprof op (one per block and sub-core; ``NA`` on the other core type):
  a time in ``(us)`` is the maximum over blocks (the slowest block bounds the kernel); cycles,
  instruction counts, fops and data volumes ``(KB)`` are summed; ratios, rates, ``(%)`` and
  bandwidths are the mean over the blocks that report them.
"""

from __future__ import annotations

import csv
import io
import json
import operator
import os
import re
import statistics
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional, Union

from ascenv.bench.records import Clock, Record
from ascenv.errors import InputError
from ascenv.fsutil import open_input

READ_LIMIT = 4 << 30  # a day of Level2 profiling of a large model stays well below this
MISSING = frozenset(("", "N/A", "NA", "n/a"))
HINT = (
    "pass an msprof PROF_* or OPPROF_* directory, a torch_npu *_ascend_pt directory, or one of their "
    "op_summary / kernel_details / task_time / op_statistic / OpBasicInfo CSV files"
)

_ALIASES = {
    "name": ("Op Name", "Name"),
    "type": ("OP Type", "Type"),
    "task_type": ("Task Type", "Accelerator Core"),
    "duration": ("Task Duration(us)", "Duration(us)"),
    "block_dim": ("Block Dim", "Block Num"),
    "mix_block_dim": ("Mix Block Dim", "Mix Block Num"),
    "shapes": ("Input Shapes",),
    "dtypes": ("Input Data Types",),
    "formats": ("Input Formats",),
}
# op_summary / kernel_details columns that are not metrics
_BASE = frozenset(
    n for names in _ALIASES.values() for n in names
) | {
    "Step Id", "Device_id", "Model ID", "Model Name", "Infer ID", "Task ID", "Stream ID", "OP State",
    "Task Start Time(us)", "Task Start Time", "Start Time(us)", "Task Wait Time(us)", "Wait Time(us)",
    "HF32 Eligible", "Output Shapes", "Output Data Types", "Output Formats", "Context ID",
}  # fmt: skip
_BLOCK_BASE = frozenset(("block_id", "sub_block_id"))
# msprof op per-block metric files (``--aic-metrics``), possibly ``<Name>_<timestamp>.csv``
METRIC_FILES = (
    "PipeUtilization", "ArithmeticUtilization", "Memory", "MemoryL0", "MemoryUB", "L2Cache",
    "ResourceConflictRatio",
)  # fmt: skip
_METRIC_FILE = re.compile(r"^(" + "|".join(METRIC_FILES) + r")(?:_\d+)?\.csv$")
_OP_TYPE_TASK = {"vector": "AI_VECTOR_CORE", "cube": "AI_CORE", "mix": "MIX_AIC"}
_MIX_SUFFIX = re.compile(r"_mix_(aic|aiv)$")


@dataclass(frozen=True)
class Imported:
    tool: str
    records: tuple[Record, ...]
    files: tuple[str, ...]
    skipped_rows: int
    profiler_info: dict[str, str]  # torch_npu's profiler_info_*.json: torch_npu, cann, aic_metrics


# --- naming -----------------------------------------------------------------------------------
def canonical_metric(name: str) -> str:
    """One name per quantity across tools: msprof op says ``aic_cube_*`` where op_summary says
    ``aic_mac_*`` (the cube pipe); the unprefixed pre-A2 names keep their form."""
    if name.startswith("aic_mac_"):
        return "aic_cube_" + name[len("aic_mac_") :]
    if name.startswith("mac_"):
        return "cube_" + name[len("mac_") :]
    return name


def metric_set(names: Iterable[str]) -> str:
    """Which ``--aic-metrics`` group produced these columns (one group per op_summary run):
    PipeUtilization, ArithmeticUtilization, Memory, MemoryL0, MemoryUB, L2Cache,
    ResourceConflictRatio, or "none" (Level0, ``--task-time=l0``: no PMU columns)."""
    cols = " ".join(names)
    if not cols:
        return "none"
    for group, marker in (
        ("ArithmeticUtilization", r"fp16_ratio|_fops\b"),
        ("MemoryL0", r"l0a_read_bw"),
        ("MemoryUB", r"ub_read_bw_(vector|scalar)"),
        ("Memory", r"main_mem_read_bw"),
        ("L2Cache", r"cache_hit"),
        ("ResourceConflictRatio", r"cflt_ratio"),
        ("PipeUtilization", r"(vec|cube|scalar)_ratio"),
    ):
        if re.search(marker, cols):
            return group
    return "other"


def unquote_shapes(value: str) -> Optional[str]:
    """``"4096,1024;4096,1024"`` (msprof writes the quotes into the field) to its text; N/A to None."""
    value = value.strip()
    if value in MISSING:
        return None
    if len(value) >= 2 and value[0] == '"' and value[-1] == '"':
        value = value[1:-1]
    return value


def _missing(value: str) -> Optional[str]:
    value = value.strip()
    return None if value in MISSING else value


def _number(value: str, shown: str, column: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise InputError(f"{shown}: {column} {value!r} is not a number", hint=HINT) from None


def _int(value: str) -> Optional[int]:
    value = value.strip()
    if value in MISSING:
        return None
    try:
        return int(float(value))
    except ValueError:
        return None


# --- tables -----------------------------------------------------------------------------------
Row = list[str]
# the text a row was parsed from: its line, or its lines where a quoted cell holds a line break
Raw = Union[str, tuple[str, ...]]


@contextmanager
def open_table(path: Path, shown: str) -> Iterator[tuple[Row, Iterator[tuple[Row, Raw]]]]:
    """Header (empty trailing names dropped) and the rows of one CSV as a stream, each row with
    the text it was parsed from and as long as the header. Rows are not kept: a launch keeps its
    text (one string where the parsed row is one string per cell) and only the median launch is
    parsed again, so a 200,000-row kernel_details.csv is not held as millions of cells."""
    with open_input(path, what="profiler CSV", shown=shown, limit=READ_LIMIT, hint=HINT) as fh:
        text = io.TextIOWrapper(fh, encoding="utf-8-sig", errors="replace", newline="")
        pending: list[str] = []  # the lines the reader took for the row it is building

        def lines() -> Iterator[str]:
            for line in text:
                pending.append(line)
                yield line

        reader = csv.reader(lines(), strict=True)
        try:
            header = next(reader, None)
            while header is not None and not any(header):
                header = next(reader, None)
        except csv.Error as exc:
            raise InputError(f"{shown}: line {reader.line_num}: not valid CSV ({exc})", hint=HINT) from None
        if header is None:
            raise InputError(f"{shown}: the file is empty, no header and no rows", hint=HINT)
        pending.clear()
        width = len(header)

        def rows() -> Iterator[tuple[Row, Raw]]:
            number = 0
            try:
                for row in reader:
                    raw: Raw = pending[0] if len(pending) == 1 else tuple(pending)
                    pending.clear()
                    if not row:
                        continue
                    number += 1
                    if len(row) != width:
                        raise InputError(
                            f"{shown}: a row has {len(row)} fields where the header has {width} (row {number}): "
                            "the file is truncated or not one table",
                            hint=HINT,
                        )
                    yield row, raw
            except csv.Error as exc:
                raise InputError(f"{shown}: line {reader.line_num}: not valid CSV ({exc})", hint=HINT) from None

        while header and header[-1] == "":
            header.pop()
        yield header, rows()


def parse_raw(raw: Raw) -> Row:
    """The row again from the text ``open_table`` gave with it."""
    return next(csv.reader((raw,) if isinstance(raw, str) else raw, strict=True))


def read_table(path: Path, shown: str) -> tuple[Row, list[Row]]:
    """Header and every row of one (small) CSV."""
    with open_table(path, shown) as (header, rows):
        return header, [row for row, _ in rows]


def kind_of(header: Sequence[str]) -> Optional[str]:
    cols = set(header)

    def has(field: str) -> bool:
        return any(n in cols for n in _ALIASES[field])

    if _BLOCK_BASE <= cols or (header and header[0] in ("aic_time(us)", "aiv_time(us)")):
        return "per-block"
    if {"Op Name", "Current Freq", "Rated Freq"} <= cols and has("duration"):
        return "op-basic-info"
    if {"kernel_name", "kernel_type", "task_time(us)"} <= cols:
        return "task-time"
    if {"OP Type", "Core Type", "Count", "Avg Time(us)", "Min Time(us)", "Max Time(us)"} <= cols:
        return "op-statistic"
    if has("name") and has("duration"):
        return "tasks"
    return None


def _unknown(shown: str, header: Sequence[str]) -> InputError:
    text = ",".join(header)
    text = text if len(text) <= 300 else text[:300] + "..."
    return InputError(f"{shown}: not a profiler output ascenv reads; its header is: {text}", hint=HINT)


# --- accumulation -----------------------------------------------------------------------------
Key = tuple[str, Optional[str], Optional[str], Optional[str], Optional[str]]
Rest = tuple[dict[str, float], Optional[int], Optional[int], str]  # metrics, Block Dim, Mix Block Dim, set
NO_CLOCK = Clock()


class _Launches:
    """The launches of one key as parallel lists (no object per launch): the duration, what the
    launch came from and what reads the rest of it (metrics, Block Dim; called for the median
    launch only), the clock."""

    __slots__ = ("durations", "sources", "rests", "clocks")

    def __init__(self) -> None:
        self.durations: list[float] = []
        self.sources: list[Any] = []
        self.rests: list[Callable[[Any], Rest]] = []
        self.clocks: list[Clock] = []

    def add(self, duration: float, source: Any, rest: Callable[[Any], Rest], clock: Clock) -> None:
        self.durations.append(duration)
        self.sources.append(source)
        self.rests.append(rest)
        self.clocks.append(clock)


@dataclass(frozen=True)
class _Summary:  # one op_statistic row
    count: int
    total: float
    low: float
    high: float


class _Acc:
    def __init__(self, shape_label: Optional[str]) -> None:
        self.shape_label = shape_label
        self.launches: dict[Key, _Launches] = {}
        self.summaries: dict[Key, list[_Summary]] = {}
        self.tool_of: dict[Key, str] = {}
        self.tools: list[str] = []
        self.files: list[str] = []
        self.skipped = 0
        self.info: dict[str, str] = {}

    def used(self, tool: str, shown: str) -> None:
        if tool not in self.tools:
            self.tools.append(tool)
        self.files.append(shown)

    def launches_of(self, key: Key, tool: str) -> _Launches:
        found = self.launches.get(key)
        if found is None:
            found = self.launches[key] = _Launches()
        self.tool_of[key] = tool
        return found

    def records(self) -> tuple[Record, ...]:
        found = [self._fold(key, launches) for key, launches in self.launches.items()]
        found += [self._summary(key, rows) for key, rows in self.summaries.items() if key not in self.launches]
        return tuple(sorted(found, key=lambda r: tuple(x or "" for x in r.key)))

    def _fold(self, key: Key, launches: _Launches) -> Record:
        durations = launches.durations
        order = sorted(range(len(durations)), key=durations.__getitem__)
        middle = order[(len(order) - 1) // 2]
        metrics, block_dim, mix_block_dim, group = launches.rests[middle](launches.sources[middle])
        currents = [c.current_mhz for c in launches.clocks if c.current_mhz is not None]
        rateds = [c.rated_mhz for c in launches.clocks if c.rated_mhz is not None]
        clock = Clock(min(currents) if currents else None, max(rateds) if rateds else None)
        return Record(
            *key,
            samples=len(durations),
            durations=tuple(durations),
            duration_us=statistics.median(durations),
            duration_min_us=min(durations),
            duration_max_us=max(durations),
            block_dim=block_dim,
            mix_block_dim=mix_block_dim,
            metrics=metrics,
            metric_set=group,
            clock=clock,
            tool=self.tool_of[key],
        )

    def _summary(self, key: Key, rows: list[_Summary]) -> Record:
        count = sum(r.count for r in rows)
        return Record(
            *key,
            samples=count,
            durations=(),
            duration_us=sum(r.total for r in rows) / count if count else 0.0,
            duration_min_us=min(r.low for r in rows),
            duration_max_us=max(r.high for r in rows),
            duration_stat="mean",
            tool=self.tool_of[key],
        )

    def key(
        self, op: str, shapes: Optional[str], dtypes: Optional[str], formats: Optional[str], task: Optional[str]
    ) -> Key:
        if shapes is None and self.shape_label is not None:
            shapes = self.shape_label
        return (op, shapes, dtypes, formats, task)


# --- one file of each kind --------------------------------------------------------------------
def _read_tasks(acc: _Acc, header: Row, rows: Iterable[tuple[Row, Raw]], shown: str, tool: str) -> int:
    """op_summary / kernel_details rows: one launch each. Returns the number of rows read."""
    idx = {name: i for i, name in enumerate(header)}

    def col(field: str) -> Optional[int]:
        return next((idx[n] for n in _ALIASES[field] if n in idx), None)

    ni, ti, ki, di = col("name"), col("type"), col("task_type"), col("duration")
    si, dti, fi, bi, mi = col("shapes"), col("dtypes"), col("formats"), col("block_dim"), col("mix_block_dim")
    assert ni is not None and di is not None  # kind_of checked
    metric_cols = [(i, canonical_metric(n)) for i, n in enumerate(header) if n and n not in _BASE]
    group = metric_set(name for _, name in metric_cols)
    duration_name = header[di]

    def rest(raw: Raw) -> Rest:
        row = parse_raw(raw)
        metrics = {}
        for i, name in metric_cols:
            value = row[i].strip()
            if value not in MISSING:
                try:
                    metrics[name] = float(value)
                except ValueError:
                    pass  # a text column ascenv does not know is not a metric
        return (
            metrics,
            _int(row[bi]) if bi is not None else None,
            _int(row[mi]) if mi is not None else None,
            group,
        )

    def key_of(row: Row) -> Key:
        kind = row[ti].strip() if ti is not None else ""
        # a type of "0" (torch_npu's MemSet helper tasks) names nothing: the task name does
        op = kind if kind not in MISSING and not kind.isdigit() else row[ni].strip()
        return acc.key(
            op,
            unquote_shapes(row[si]) if si is not None else None,
            _missing(row[dti]) if dti is not None else None,
            _missing(row[fi]) if fi is not None else None,
            _missing(row[ki]) if ki is not None else None,
        )

    # the key is worked out once per distinct set of its cells, not once per launch; itemgetter of
    # one index gives the cell, not a tuple, hence the name column twice
    key_cells = [i for i in (ni, ti, si, dti, fi, ki) if i is not None]
    cells_of = operator.itemgetter(*key_cells, ni)
    keys: dict[tuple[str, ...], _Launches] = {}
    count = 0
    for row, raw in rows:
        count += 1
        try:
            value = float(row[di])  # float() ignores surrounding whitespace as .strip() does
        except ValueError:
            duration = row[di].strip()
            if duration in MISSING:
                acc.skipped += 1
                continue
            raise InputError(
                f"{shown}: {duration_name} {duration!r} of {key_of(row)[0]} is not a number", hint=HINT
            ) from None
        cells = cells_of(row)
        found = keys.get(cells)
        if found is None:
            key = key_of(row)
            found = acc.launches.get(key)
            if found is None:  # the first file that has the key names its tool
                found = acc.launches[key] = _Launches()
                acc.tool_of[key] = tool
            keys[cells] = found
        found.durations.append(value)
        found.sources.append(raw)
        found.rests.append(rest)
        found.clocks.append(NO_CLOCK)
    acc.used(tool, shown)
    return count


def _read_task_time(acc: _Acc, header: Row, rows: Iterable[tuple[Row, Raw]], shown: str) -> int:
    idx = {name: i for i, name in enumerate(header)}
    ni, ki, di = idx["kernel_name"], idx["kernel_type"], idx["task_time(us)"]

    def rest(_raw: object) -> Rest:
        return {}, None, None, "none"

    count = 0
    for row, _ in rows:
        count += 1
        name = row[ni].strip()
        if name in MISSING:  # PROFILING_ENABLE, EVENT_RECORD, ...: not a kernel
            continue
        key = acc.key(name, None, None, None, _missing(row[ki]))
        acc.launches_of(key, "msprof").add(_number(row[di], shown, "task_time(us)"), None, rest, NO_CLOCK)
    acc.used("msprof", shown)
    return count


def _read_op_statistic(acc: _Acc, header: Row, rows: Iterable[tuple[Row, Raw]], shown: str, tool: str) -> int:
    idx = {name: i for i, name in enumerate(header)}
    count = 0
    for row, _ in rows:
        count += 1
        count_ = _int(row[idx["Count"]]) or 0
        key = acc.key(row[idx["OP Type"]].strip(), None, None, None, _missing(row[idx["Core Type"]]))
        acc.summaries.setdefault(key, []).append(
            _Summary(
                count_,
                _number(row[idx["Total Time(us)"]], shown, "Total Time(us)"),
                _number(row[idx["Min Time(us)"]], shown, "Min Time(us)"),
                _number(row[idx["Max Time(us)"]], shown, "Max Time(us)"),
            )
        )
        acc.tool_of[key] = tool
    acc.used(tool, shown)
    return count


def fold_blocks(header: Sequence[str], rows: Iterable[Sequence[str]]) -> dict[str, float]:
    """One value per metric from msprof op's per-block rows (see the module docstring)."""
    columns = [(i, n) for i, n in enumerate(header) if n and n not in _BLOCK_BASE]
    values: dict[str, list[float]] = {}
    for row in rows:
        for i, name in columns:
            value = row[i].strip()
            if value not in MISSING:
                try:
                    values.setdefault(canonical_metric(name), []).append(float(value))
                except ValueError:
                    pass
    folded = {}
    for name, found in values.items():
        if name.endswith("(us)"):
            folded[name] = max(found)
        elif re.search(r"cycles|instructions|instr_number|fops|\(KB\)", name):
            folded[name] = sum(found)
        else:
            folded[name] = sum(found) / len(found)
    return folded


def _read_opprof(acc: _Acc, directory: Path, basic: Path, shown_of: Callable[[Path], str]) -> None:
    """One msprof op launch: OpBasicInfo plus the metric files beside it."""
    header, rows = read_table(basic, shown_of(basic))
    if kind_of(header) != "op-basic-info":
        raise _unknown(shown_of(basic), header)
    metrics: dict[str, float] = {}
    groups = []
    for path in sorted(directory.iterdir()):
        found = _METRIC_FILE.match(path.name)
        if not found or not path.is_file():
            continue
        block_header, block_rows = read_table(path, shown_of(path))
        if kind_of(block_header) != "per-block":
            raise _unknown(shown_of(path), block_header)
        for name, value in fold_blocks(block_header, block_rows).items():
            metrics.setdefault(name, value)
        groups.append(found.group(1))
        acc.files.append(shown_of(path))
    group = "+".join(sorted(set(groups))) or "none"
    idx = {name: i for i, name in enumerate(header)}
    shown = shown_of(basic)
    for row in rows:
        name = row[idx["Op Name"]].strip()
        suffix = _MIX_SUFFIX.search(name)
        op = _MIX_SUFFIX.sub("", name)
        task: Optional[str]
        if suffix:
            task = f"MIX_{suffix.group(1).upper()}"
        else:
            task = _OP_TYPE_TASK.get(row[idx["Op Type"]].strip().lower()) if "Op Type" in idx else None
        duration_col = next(n for n in _ALIASES["duration"] if n in idx)
        block = next((idx[n] for n in _ALIASES["block_dim"] if n in idx), None)
        mix = next((idx[n] for n in _ALIASES["mix_block_dim"] if n in idx), None)
        dims = (_int(row[block]) if block is not None else None, _int(row[mix]) if mix is not None else None)

        def rest(_source: object, dims: tuple[Optional[int], Optional[int]] = dims) -> Rest:
            return dict(metrics), dims[0], dims[1], group

        clock = Clock(_int(row[idx["Current Freq"]]), _int(row[idx["Rated Freq"]]))
        key = acc.key(op, None, None, None, task)
        acc.launches_of(key, "msprof op").add(_number(row[idx[duration_col]], shown, duration_col), None, rest, clock)
    acc.used("msprof op", shown)


def _read_file(acc: _Acc, path: Path, shown: str, tool: Optional[str] = None) -> None:
    if path.suffix == ".json":
        raise InputError(
            f"{shown}: a JSON file; ascenv reads the CSVs a profiler writes (profiler_info_*.json is "
            "read from the directory that holds ASCEND_PROFILER_OUTPUT)",
            hint=HINT,
        )
    with open_table(path, shown) as (header, rows):
        kind = kind_of(header)
        count = 0
        if kind in (None, "op-basic-info", "per-block"):
            count = sum(1 for _ in rows)  # a short row is reported before what the header says
        if kind is None:
            raise _unknown(shown, header)
        if kind == "tasks":
            chosen = tool or ("torch_npu" if "Accelerator Core" in header else "msprof")
            count = _read_tasks(acc, header, rows, shown, chosen)
        elif kind == "task-time":
            count = _read_task_time(acc, header, rows, shown)
        elif kind == "op-statistic":
            count = _read_op_statistic(acc, header, rows, shown, tool or "msprof")
    if not count:
        raise InputError(f"{shown}: the header is there but no rows follow", hint=HINT)
    if kind == "op-basic-info":
        _read_opprof(acc, path.parent, path, lambda p: shown if p == path else str(p))
    elif kind == "per-block":
        raise InputError(
            f"{shown}: a per-block msprof op metric file, which names no kernel and no duration",
            hint="import the OPPROF_* directory that holds it (its OpBasicInfo.csv gives both)",
        )


def _profiler_info(path: Path, shown: str) -> dict[str, str]:
    with open_input(path, what="profiler info", shown=shown, hint=HINT) as fh:
        try:
            data = json.loads(fh.read().decode("utf-8", errors="replace"))
        except ValueError as exc:
            raise InputError(f"{shown}: not valid JSON ({exc})", hint=HINT) from None
    if not isinstance(data, dict):
        raise InputError(f"{shown}: expected a JSON object", hint=HINT)
    found = {}
    for key, name in (("torch_npu_version", "torch_npu"), ("cann_version", "cann")):
        if isinstance(data.get(key), str):
            found[name] = data[key]
    experimental = (data.get("config") or {}).get("experimental_config") or {}
    if isinstance(experimental, dict) and isinstance(experimental.get("_aic_metrics"), str):
        found["aic_metrics"] = experimental["_aic_metrics"]
    return found


# --- trees ------------------------------------------------------------------------------------
def _read_tree(acc: _Acc, root: Path) -> None:
    def shown_of(p: Path) -> str:
        return str(p.relative_to(root))

    dirs: dict[Path, list[str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        dirs[Path(dirpath)] = sorted(filenames)
    torch_roots = {d.parent for d in dirs if d.name == "ASCEND_PROFILER_OUTPUT"}

    def under_torch(d: Path) -> bool:
        return any(d == t or t in d.parents for t in torch_roots)

    for t in sorted(torch_roots):
        out = t / "ASCEND_PROFILER_OUTPUT"
        names = dirs.get(out, [])
        chosen = [n for n in names if n.startswith("kernel_details") and n.endswith(".csv")] or [
            n for n in names if n.startswith("op_statistic") and n.endswith(".csv")
        ]
        for name in chosen:
            _read_file(acc, out / name, shown_of(out / name), "torch_npu")
        for name in dirs.get(t, []):
            if re.fullmatch(r"profiler_info(_\d+)?\.json", name):
                acc.info.update(_profiler_info(t / name, shown_of(t / name)))
    for d, names in dirs.items():
        if under_torch(d):
            continue
        if any(re.fullmatch(r"OpBasicInfo(_\d+)?\.csv", n) for n in names):
            for n in names:
                if re.fullmatch(r"OpBasicInfo(_\d+)?\.csv", n):
                    _read_opprof(acc, d, d / n, shown_of)
            continue
        if (
            d.name == "summary"
            and d.parent.name.startswith("device")
            and (d.parent.parent / "mindstudio_profiler_output").is_dir()
        ):
            continue  # the same run's newer export is read instead
        csvs = [n for n in names if n.endswith(".csv")]
        for prefix in ("op_summary", "kernel_details", "task_time", "op_statistic"):
            chosen = [n for n in csvs if n.startswith(prefix)]
            if chosen:
                for name in chosen:
                    _read_file(acc, d / name, shown_of(d / name))
                break


def read_path(path: Path, shape_label: Optional[str] = None, shown: Optional[str] = None) -> Imported:
    """Everything a profiler wrote below ``path`` (a directory or one file), folded into records."""
    shown = shown or str(path)
    acc = _Acc(shape_label)
    if path.is_dir():
        _read_tree(acc, path)
        if not acc.files:
            raise InputError(
                f"{shown}: no profiler output found below it (looked for op_summary*, task_time*, "
                "op_statistic*, kernel_details*.csv and OPPROF_*/OpBasicInfo.csv)",
                hint=HINT,
            )
    else:
        _read_file(acc, path, shown)
    records = acc.records()
    if not records:
        raise InputError(f"{shown}: no kernel launches in {', '.join(acc.files)}", hint=HINT)
    return Imported("+".join(acc.tools), records, tuple(acc.files), acc.skipped, acc.info)
