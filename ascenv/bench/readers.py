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

A duration is a finite number of zero or more and a count or clock a whole one (``finite``);
anything else (``nan``, ``inf``, ``-5``, ``1e400``, ``1_000``) is an error naming the file, line
and column, where ``N/A`` or an empty duration is skipped as missing. A column named twice, a
UTF-16 or UTF-32 BOM and bytes that are not UTF-8 are errors too: each would be a guess.

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

import bisect
import codecs
import csv
import io
import json
import math
import operator
import os
import re
from array import array
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Callable, Optional

from ascenv.bench.records import Clock, Record
from ascenv.errors import InputError
from ascenv.fsutil import open_input

READ_LIMIT = 4 << 30  # a day of Level2 profiling of a large model stays well below this
# Launches one import keeps (8 bytes of duration and 8 of row position each, no object per launch):
# a 4 GiB file of 20-byte rows would be 200 M launches; a day of Level2 profiling is a few million.
MAX_LAUNCHES = 1 << 24
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


def finite(value: str) -> Optional[float]:
    """The finite decimal number ``value`` writes, or None. float() also reads "nan", "inf",
    "infinity", "1_000" and other scripts' digits, and turns "1e400" or 5000 digits into inf:
    none of them is a time or a count a profiler writes. ASCII without "_" and finite leaves
    float()'s decimal grammar (https://docs.python.org/3/library/functions.html#float)."""
    if "_" in value or not value.isascii():
        return None
    try:
        number = float(value)  # ignores surrounding whitespace as .strip() does
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _bad(shown: str, line: int, column: str, value: str, expected: str, of: str = "") -> InputError:
    text = value.strip()
    text = text if len(text) <= 40 else text[:40] + "..."
    of = f" of {of[:80]!r}" if of else ""
    return InputError(
        f"{shown}, line {line}, column {column!r}: {text!r}{of} is not {expected}",
        hint="the file is damaged or not written by a profiler; fix or remove the row",
    )


def _number(value: str, shown: str, line: int, column: str) -> float:
    """A time: a finite decimal number, zero or more."""
    number = finite(value)
    if number is None or number < 0:
        raise _bad(shown, line, column, value, "a time (a finite number, zero or more)")
    return number


def _int(value: str, shown: str, line: int, column: str) -> Optional[int]:
    """A count or a clock: a whole number, zero or more; None where the profiler wrote N/A."""
    if value.strip() in MISSING:
        return None
    number = finite(value)
    if number is None or number < 0 or number != int(number) or number > 1 << 53:
        raise _bad(shown, line, column, value, "a count (a whole number, zero or more)")
    return int(number)


# --- tables -----------------------------------------------------------------------------------
Row = list[str]
_BOMS = (  # UTF-32 first: its little-endian BOM starts with UTF-16's
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)


@contextmanager
def _lines(path: Path, shown: str) -> Iterator[Iterator[str]]:
    """The lines of a profiler CSV as text: UTF-8 (with or without its BOM), line ends as written
    (``\n``, ``\r\n`` or ``\r``: the csv module's rule). A UTF-16 or UTF-32 file (Excel's "Unicode
    text") and bytes that are not UTF-8 are errors naming the line: replacing them would split one
    operator into several records (its name spelled once in UTF-8, once in Latin-1)."""
    with open_input(path, what="profiler CSV", shown=shown, limit=READ_LIMIT, hint=HINT) as fh:
        start = fh.read(4)
        for bom, name in _BOMS:
            if start.startswith(bom):
                raise InputError(
                    f"{shown}: not UTF-8 ({name} BOM)", hint="save it as UTF-8 (CSV UTF-8), as the profilers write it"
                )
        fh.seek(0)
        try:
            yield io.TextIOWrapper(fh, encoding="utf-8-sig", newline="")
        except UnicodeDecodeError:
            fh.seek(0)
            raise _undecodable(fh, shown) from None


def _undecodable(fh: IO[bytes], shown: str) -> InputError:
    """The error naming the first line that is not UTF-8 (read again: the text layer decodes
    ahead of the line it gives, so it cannot say which)."""
    number = 1
    for raw in fh:  # split at b"\n", which no UTF-8 sequence holds
        try:
            raw.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            bom = 3 if number == 1 and raw.startswith(codecs.BOM_UTF8) else 0
            head = raw[: exc.start + bom]
            number += head.count(b"\r") - head.count(b"\r\n")  # lines that end in a lone CR
            return InputError(
                f"{shown}, line {number}: not UTF-8 (byte 0x{raw[exc.start + bom]:02x})",
                hint="save it as UTF-8, as the profilers write it",
            )
        number += 1 + raw.count(b"\r") - raw.count(b"\r\n")
    return InputError(f"{shown}: not UTF-8 (it ends inside a character)", hint="save it as UTF-8")


@contextmanager
def open_table(path: Path, shown: str) -> Iterator[tuple[Row, Iterator[tuple[Row, int]]]]:
    """Header (empty trailing names dropped) and the rows of one CSV as a stream, each row with
    the number of the line it starts on and as long as the header. Rows are not kept: a launch
    keeps its duration and its line, and the rest of the median launch is read again from that
    line (``rows_at``), so a 10 M-row op_summary is not held as millions of cells or lines.
    A column named twice is an error: which of the two would count is a guess."""
    with _lines(path, shown) as lines:
        reader = csv.reader(lines, strict=True)
        try:
            header = next(reader, None)
            while header is not None and not any(header):
                header = next(reader, None)
        except csv.Error as exc:
            raise InputError(f"{shown}: line {reader.line_num}: not valid CSV ({exc})", hint=HINT) from None
        if header is None:
            raise InputError(f"{shown}: the file is empty, no header and no rows", hint=HINT)
        width = len(header)

        def rows() -> Iterator[tuple[Row, int]]:
            number = 0
            last = reader.line_num
            try:
                for row in reader:
                    first, last = last + 1, reader.line_num
                    if not row:
                        continue
                    number += 1
                    if len(row) != width:
                        raise InputError(
                            f"{shown}: a row has {len(row)} fields where the header has {width} (row {number}, "
                            f"line {first}): the file is truncated or not one table",
                            hint=HINT,
                        )
                    yield row, first
            except csv.Error as exc:
                raise InputError(f"{shown}: line {reader.line_num}: not valid CSV ({exc})", hint=HINT) from None

        while header and header[-1] == "":
            header.pop()
        _refuse_duplicates(header, shown)
        yield header, rows()


def _refuse_duplicates(header: Sequence[str], shown: str) -> None:
    seen: dict[str, int] = {}
    for i, name in enumerate(header, 1):
        if name and name in seen:
            raise InputError(
                f"{shown}: column {name[:100]!r} appears twice (columns {seen[name]} and {i}): which counts is a guess",
                hint="remove one of them; a profiler writes each column once",
            )
        seen.setdefault(name, i)


def rows_at(path: Path, shown: str, starts: Collection[int]) -> dict[int, Row]:
    """The rows that start on the lines ``starts`` (as ``open_table`` numbered them), read again."""
    wanted = sorted(set(starts))
    found: dict[int, Row] = {}
    with _lines(path, shown) as lines:
        numbered = enumerate(lines, 1)
        for number, line in numbered:
            if len(found) == len(wanted):
                break
            if number == wanted[len(found)]:
                rest = (text for _, text in numbered)  # a quoted cell may hold line breaks
                try:
                    found[number] = next(csv.reader(_chain(line, rest), strict=True))
                except (csv.Error, StopIteration):
                    break
    if len(found) != len(wanted):
        raise InputError(f"{shown}: the file changed while it was read", hint="import it again once it is written")
    return found


def _chain(first: str, rest: Iterator[str]) -> Iterator[str]:
    yield first
    yield from rest


def read_table(path: Path, shown: str) -> tuple[Row, list[tuple[Row, int]]]:
    """Header and every row of one (small) CSV, each with its line."""
    with open_table(path, shown) as (header, rows):
        return header, list(rows)


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


class _Source:
    """What launches came from: gives the rest of a launch (metrics, Block Dim) by its line."""

    def __init__(self, rest: Rest = ({}, None, None, "none")) -> None:
        self._rest = rest

    def want(self, line: int) -> None:
        """``line``'s rest will be asked for (``fetch`` reads what is wanted, once)."""

    def fetch(self) -> None:
        pass

    def rest(self, line: int) -> Rest:
        return dict(self._rest[0]), *self._rest[1:]


class _Table(_Source):
    """A CSV whose rows are read again, for the median launches only (``rows_at``)."""

    def __init__(self, path: Path, shown: str, parse: Callable[[Row, int], Rest]) -> None:
        super().__init__()
        self.path, self.shown, self.parse = path, shown, parse
        self.wanted: set[int] = set()
        self.rows: dict[int, Row] = {}

    def want(self, line: int) -> None:
        self.wanted.add(line)

    def fetch(self) -> None:
        if self.wanted:
            self.rows = rows_at(self.path, self.shown, self.wanted)

    def rest(self, line: int) -> Rest:
        return self.parse(self.rows[line], line)


class _Launches:
    """The launches of one key without an object per launch: durations and the line each started
    on in two arrays (16 bytes a launch), the sources as runs of launches (one per file), the
    clock as its lowest current and highest rated frequency."""

    __slots__ = ("durations", "lines", "starts", "sources", "last", "current", "rated")

    def __init__(self) -> None:
        self.durations = array("d")
        self.lines = array("q")
        self.starts: list[int] = []  # the first launch of each source
        self.sources: list[_Source] = []
        self.last: Optional[_Source] = None
        self.current: Optional[int] = None
        self.rated: Optional[int] = None

    def begin(self, source: _Source) -> None:
        """The launches added next come from ``source``."""
        self.starts.append(len(self.durations))
        self.sources.append(source)
        self.last = source

    def add(self, duration: float, line: int, source: _Source, clock: Clock = NO_CLOCK) -> None:
        if self.last is not source:
            self.begin(source)
        self.durations.append(duration)
        self.lines.append(line)
        if clock.current_mhz is not None:
            self.current = clock.current_mhz if self.current is None else min(self.current, clock.current_mhz)
        if clock.rated_mhz is not None:
            self.rated = clock.rated_mhz if self.rated is None else max(self.rated, clock.rated_mhz)

    def source_of(self, launch: int) -> _Source:
        return self.sources[bisect.bisect_right(self.starts, launch) - 1]


@dataclass(frozen=True)
class _Summary:  # one op_statistic row
    count: int
    total: float
    low: float
    high: float


@dataclass(frozen=True)
class _Middle:  # what one key's launches fold to before the median launch's row is read
    source: _Source
    line: int
    median: float
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
        self.launched = 0
        self.info: dict[str, str] = {}

    def used(self, tool: str, shown: str) -> None:
        if tool not in self.tools:
            self.tools.append(tool)
        self.files.append(shown)

    def room(self, shown: str) -> int:
        """How many more rows of launches this import may keep (``MAX_LAUNCHES``)."""
        left = MAX_LAUNCHES - self.launched
        if left <= 0:
            raise _too_many(shown)
        return left

    def launches_of(self, key: Key, tool: str) -> _Launches:
        found = self.launches.get(key)
        if found is None:
            found = self.launches[key] = _Launches()
        self.tool_of[key] = tool
        return found

    def records(self) -> tuple[Record, ...]:
        middles = {key: _middle(launches) for key, launches in self.launches.items()}
        for source in {id(m.source): m.source for m in middles.values()}.values():
            source.fetch()  # one more pass over each file, for its median launches only
        found = [self._fold(key, launches, middles[key]) for key, launches in self.launches.items()]
        found += [self._summary(key, rows) for key, rows in self.summaries.items() if key not in self.launches]
        return tuple(sorted(found, key=lambda r: tuple(x or "" for x in r.key)))

    def _fold(self, key: Key, launches: _Launches, middle: _Middle) -> Record:
        metrics, block_dim, mix_block_dim, group = middle.source.rest(middle.line)
        return Record(
            *key,
            samples=len(launches.durations),
            durations=launches.durations,
            duration_us=middle.median,
            duration_min_us=middle.low,
            duration_max_us=middle.high,
            block_dim=block_dim,
            mix_block_dim=mix_block_dim,
            metrics=metrics,
            metric_set=group,
            clock=Clock(launches.current, launches.rated),
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


def _too_many(shown: str) -> InputError:
    return InputError(
        f"{shown}: more than {MAX_LAUNCHES:,} kernel launches in one import",
        hint="import one PROF_* directory (or one device's) of a shorter session at a time",
    )


def _middle(launches: _Launches) -> _Middle:
    """The median, min and max of the launches, and the median launch: the first launch whose
    duration is the median (the lower middle one for an even count). The sorted copy lives for
    this key only."""
    ordered = sorted(launches.durations)
    n = len(ordered)
    middle = launches.durations.index(ordered[(n - 1) // 2])
    median = ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2
    source = launches.source_of(middle)
    line = launches.lines[middle]
    source.want(line)
    return _Middle(source, line, median, ordered[0], ordered[-1])


# --- one file of each kind --------------------------------------------------------------------
def _read_tasks(acc: _Acc, header: Row, rows: Iterable[tuple[Row, int]], path: Path, shown: str, tool: str) -> int:
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
    counts = [(i, header[i]) for i in (bi, mi) if i is not None]

    def rest(row: Row, line: int) -> Rest:
        metrics = {}
        for i, name in metric_cols:
            value = finite(row[i])
            if value is not None:  # text, N/A, nan or inf: not a metric
                metrics[name] = value
        return (
            metrics,
            _int(row[bi], shown, line, header[bi]) if bi is not None else None,
            _int(row[mi], shown, line, header[mi]) if mi is not None else None,
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
    source = _Table(path, shown, rest)
    room = acc.room(shown)
    count = 0
    for row, line in rows:
        count += 1
        value = finite(row[di])
        if value is None or value < 0:
            if row[di].strip() in MISSING:
                acc.skipped += 1
                continue
            raise _bad(shown, line, duration_name, row[di], "a time (a finite number, zero or more)", key_of(row)[0])
        for i, name in counts:  # the median launch's are read again; any launch's may be bad
            if not (len(row[i]) < 16 and row[i].isdigit() and row[i].isascii()):
                _int(row[i], shown, line, name)
        if count > room:
            raise _too_many(shown)
        cells = cells_of(row)
        found = keys.get(cells)
        if found is None:
            key = key_of(row)
            found = acc.launches.get(key)
            if found is None:  # the first file that has the key names its tool
                found = acc.launches[key] = _Launches()
                acc.tool_of[key] = tool
            keys[cells] = found
        if found.last is not source:
            found.begin(source)
        found.durations.append(value)
        found.lines.append(line)
    acc.launched += count
    acc.used(tool, shown)
    return count


def _read_task_time(acc: _Acc, header: Row, rows: Iterable[tuple[Row, int]], shown: str) -> int:
    idx = {name: i for i, name in enumerate(header)}
    ni, ki, di = idx["kernel_name"], idx["kernel_type"], idx["task_time(us)"]
    source = _Source()
    room = acc.room(shown)
    count = 0
    for row, line in rows:
        count += 1
        if count > room:
            raise _too_many(shown)
        name = row[ni].strip()
        if name in MISSING:  # PROFILING_ENABLE, EVENT_RECORD, ...: not a kernel
            continue
        key = acc.key(name, None, None, None, _missing(row[ki]))
        acc.launches_of(key, "msprof").add(_number(row[di], shown, line, "task_time(us)"), line, source)
    acc.launched += count
    acc.used("msprof", shown)
    return count


def _read_op_statistic(acc: _Acc, header: Row, rows: Iterable[tuple[Row, int]], shown: str, tool: str) -> int:
    idx = {name: i for i, name in enumerate(header)}
    count = 0
    for row, line in rows:
        count += 1
        count_ = _int(row[idx["Count"]], shown, line, "Count") or 0
        key = acc.key(row[idx["OP Type"]].strip(), None, None, None, _missing(row[idx["Core Type"]]))
        acc.summaries.setdefault(key, []).append(
            _Summary(
                count_,
                *(_number(row[idx[c]], shown, line, c) for c in ("Total Time(us)", "Min Time(us)", "Max Time(us)")),
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
            value = finite(row[i])
            if value is not None:  # text, N/A (the other core type), nan or inf: not a value
                values.setdefault(canonical_metric(name), []).append(value)
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
        for name, value in fold_blocks(block_header, (row for row, _ in block_rows)).items():
            metrics.setdefault(name, value)
        groups.append(found.group(1))
        acc.files.append(shown_of(path))
    group = "+".join(sorted(set(groups))) or "none"
    idx = {name: i for i, name in enumerate(header)}
    shown = shown_of(basic)
    acc.room(shown)
    for row, line in rows:
        name = row[idx["Op Name"]].strip()
        suffix = _MIX_SUFFIX.search(name)
        op = _MIX_SUFFIX.sub("", name)
        task: Optional[str]
        if suffix:
            task = f"MIX_{suffix.group(1).upper()}"
        else:
            task = _OP_TYPE_TASK.get(row[idx["Op Type"]].strip().lower()) if "Op Type" in idx else None
        duration_col = next(n for n in _ALIASES["duration"] if n in idx)
        block, mix = (next((n for n in _ALIASES[f] if n in idx), None) for f in ("block_dim", "mix_block_dim"))
        block_dim, mix_dim = (_int(row[idx[n]], shown, line, n) if n is not None else None for n in (block, mix))
        clock = Clock(*(_int(row[idx[n]], shown, line, n) for n in ("Current Freq", "Rated Freq")))
        key = acc.key(op, None, None, None, task)
        duration = _number(row[idx[duration_col]], shown, line, duration_col)
        acc.launches_of(key, "msprof op").add(duration, line, _Source((metrics, block_dim, mix_dim, group)), clock)
    acc.launched += len(rows)
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
            count = _read_tasks(acc, header, rows, path, shown, chosen)
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
