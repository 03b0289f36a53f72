"""Pure parsers for ``npu-smi`` output: ``info`` tables, ``info -m``, ``info -t board``, ``info -l``
and the error lines npu-smi prints instead of a table.

They read what users paste as well as what the tool prints: prompt lines, indentation (spaces or
TAB), annotations, gap markers, several captures in one text and captures cut short. Bad input
never raises; what could not be read becomes a ``warnings`` entry.

Formats measured on the public captures in tests/data/corpus/npu_smi/ and
tests/data/corpus/other_cmds/ (their first line names the source).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Optional

from ascenv.model import PROCESSES_UNKNOWN, Board, Chip, ChipMapEntry, NpuInfo, NpuProcess, ProbeError
from ascenv.model import processes_note as processes_note  # re-exported: snapshot output and tests use it here

PROBE = "npu-smi"

# "| npu-smi 22.0.0      Version: 22.0.2 |": the first is the tool, the second the driver
# (they differ in the 22.0.x 310P ModelZoo captures).
_TITLE = re.compile(r"npu-smi\s+(\S+)\s+Version:\s*(\S+)", re.IGNORECASE)
# A value is a "used / total" pair or one word; a 5-digit used value eats the space before the
# slash ("61825/ 65536"), a 3-digit one gets two spaces ("935  / 21534").
_TOKEN = re.compile(r"(\S+?)\s*/\s*(\S+)|(\S+)")
_ROW1_ID = re.compile(r"^(\d{1,9})\s+(\S+)$", re.ASCII)  # "0     910B4-1": NPU id and Name
_ROW2_IDS = re.compile(r"^(\d{1,9})?(?:\s+(\d{1,9}))?$", re.ASCII)  # "0", "0     1" (Chip Phy-ID / Chip Device) or ""
_PROC_IDS = re.compile(r"^(\d{1,9})(?:\s+(\d{1,9}))?$", re.ASCII)
_BUS_ID = re.compile(r"^[0-9A-Za-z]{4}:[0-9A-Za-z]{2}:[0-9A-Za-z]{2}\.[0-9A-Za-z]$")  # redacted "xx" too
_NO_PROCESS = re.compile(r"No running processes found in NPU(?:\s*(\d{1,9})\b)?", re.IGNORECASE | re.ASCII)
_SEPARATOR = re.compile(r"^\+[-=+]+$")
_ANNOTATION = re.compile(r"==>\s*(?=[|+])")  # npustat's docstring marks rows as "line 1 ==> | ..."
# What a paste puts before a table line: markdown quote markers ("> ", "> > " in a quoted reply) and a
# line number ("cat -n", an editor); npu-smi's own lines always start with "|" or "+".
_PASTE_PREFIX = re.compile(r"^(?:>\s?)*\s*(?:\d{1,6}(?:[:.)]|\s)\s*)?(?=[|+])")
_QUOTE = re.compile(r"^\s*(?:>\s?)+")  # the same quote markers before a "key : value" or -m line
# A reader's note after a row's closing border ("|   # card 0", "+----+  # NPU 1") or after a value
# aligned by at least two spaces ("131072        # 128 GB"): npu-smi prints no "#" there (npucli's
# printf formats).
_ROW_NOTE = re.compile(r"(?<=[|+])\s*#[^|]*$")
_VALUE_NOTE = re.compile(r"\s{2,}#.*$")
# Terminal escape sequences a colour terminal, `script` or `watch --color` log keeps (ECMA-48 CSI and OSC).
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_NOT_A_VALUE = {"", "NA", "N/A", "-", "--"}

# npucli's health words (verylucky01/driver @e29d066, npu_info_print*.c); others become UNKNOWN.
HEALTH_WORDS = ("OK", "Warning", "Alarm", "Critical", "UNKNOWN")
# A table typed again by hand (a screenshot retyped into an issue) has digit 0 for letter O ("0K").
# Only a health cell that is a health word once 0 is read as O is taken that way.
_RETYPED_O = str.maketrans("0", "O")


# --- errors npu-smi prints instead of a table ------------------------------------------------------
# Message texts: npucli's printf formats (verylucky01/driver @e29d066fd6ee84cae705e2000a0387d721d3aaa0,
# src/custom/dev_prod/user/npucli/src/npu_smi.c) and the captures in tests/data/corpus/errors/.
# DCMI return codes start at -8000; names from the same driver source (dcmi error code list).
DCMI_MEANINGS = {
    "-8001": "DCMI: invalid parameter",
    "-8002": "DCMI: operation not permitted",
    # the one public -8005 report is a driver 25.5.2 host whose device layer was unusable (catalog note)
    "-8005": "DCMI: inner error - npu-smi could not initialise the driver's device management; "
    "check that the driver is loaded and completely installed",
    "-8007": "DCMI: invalid device id",
    "-8008": "DCMI: the device does not exist",
    "-8012": "DCMI: the device is not ready",
    "-8013": "DCMI: the query is not supported inside a container",
    "-8020": "DCMI: resource occupied - the NPU is used by another process or another container "
    "(a container started with --device for NPUs that a second container also holds), so "
    "npu-smi cannot open it; stop the other user or start the container with free NPUs",
    "-8255": "DCMI: not supported",
}
BOARD_TYPE_MEANING = (
    "npu-smi could not read the board type (npu_get_board_type_by_board_id failed, npu_smi.c); "
    "printed after a failed DCMI initialisation, typically in a container that does not see or "
    "cannot open the NPUs (seen together with -8020)"
)
DRIVER_INCOMPLETE_MEANING = (
    "npu-smi prints this when /etc/ascend_install.info lacks Driver_Install_Status=complete; "
    "the table that follows is still valid"
)
NOT_ON_PATH = (
    "npu-smi is not on PATH; it ships with the NPU driver (/usr/local/bin/npu-smi on the host). "
    "In a container it must be mounted from the host, e.g. "
    "-v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi"
)
_ERROR_PATTERNS: tuple[tuple[re.Pattern[str], str, Optional[str], Optional[str]], ...] = (
    # (pattern, kind, code (None: the pattern's "code" group), meaning (None: from the code))
    (
        re.compile(r"dcmi model initiali[sz]ed failed, because the device is used\. ret is (?P<code>-?\d+)", re.I),
        "device-busy",
        None,
        None,
    ),
    (re.compile(r"dcmi module initiali[sz]e failed\. ret is (?P<code>-?\d+)", re.I), "driver-error", None, None),
    (re.compile(r"npu get board type failed\. ret is (?P<code>-?\d+)", re.I), "driver-error", None, BOARD_TYPE_MEANING),
    (re.compile(r"Failed to execute npu-smi .*?\. ret is (?P<code>-?\d+)", re.I), "tool-error", None, None),
    (
        re.compile(r"Invalid card id", re.I),
        "invalid-argument",
        "Invalid card id",
        "the -i argument is not an NPU id of this machine (ids come from `npu-smi info -l`, they are not 0..N-1)",
    ),
    (
        re.compile(r"Command or option is not found", re.I),
        "invalid-argument",
        "Command or option is not found",
        "this npu-smi version does not know the sub-command or option",
    ),
    (
        re.compile(r"There is no NPU (?:card on this server|chip on this card)", re.I),
        "no-device",
        None,
        "the driver sees no NPU: the card is not detected, or the container was started without --device /dev/davinciN",
    ),
    (
        re.compile(r"error while loading shared libraries: (?P<code>[^:\s]+)", re.I),
        "missing-library",
        None,
        "npu-smi cannot load a driver library; the driver is incompletely installed or, in a container, "
        "/usr/local/Ascend/driver/lib64 and /usr/local/dcmi are not mounted from the host or not on LD_LIBRARY_PATH",
    ),
    # HwHiAiUser: the driver's default run user and group (UserName/UserGroup of the
    # /etc/ascend_install.info samples in tests/data/corpus/version_files/)
    (
        re.compile(r"npu-smi\S*: (?:Permission denied|cannot execute)", re.I),
        "permission",
        None,
        "the current user may not run npu-smi; run it as root or as a member of the driver's group "
        "(HwHiAiUser by default)",
    ),
    (
        re.compile(r"Permission denied", re.I),
        "permission",
        None,
        "the current user may not open the NPU device nodes (/dev/davinci*, /dev/davinci_manager) or npu-smi itself",
    ),
    (
        re.compile(r"npu-smi\S*: (?:command not found|No such file or directory|not found)", re.I),
        "not-found",
        None,
        NOT_ON_PATH,
    ),
)


def plain(text: str) -> str:
    """``text`` without terminal escape sequences (colour, bold): what was printed, as a reader sees it."""
    return _ESCAPES.sub("", text) if "\x1b" in text else text


def parse_errors(text: str, source: str = "npu-smi info") -> tuple[ProbeError, ...]:
    """The npu-smi (and shell) error lines in ``text`` as ``ProbeError``s, each once."""
    found: list[ProbeError] = []
    for line in plain(text).splitlines():
        line = line.strip()
        for pattern, kind, code, meaning in _ERROR_PATTERNS:
            match = pattern.search(line)
            if match is None:
                continue
            the_code = code if code is not None else match.groupdict().get("code")
            error = ProbeError(
                probe=PROBE,
                kind=kind,
                message=line,
                source=source,
                code=the_code,
                meaning=meaning or DCMI_MEANINGS.get(the_code or "", _unknown_code_meaning(the_code)),
            )
            if error not in found:
                found.append(error)
            break
    return tuple(found)


def _unknown_code_meaning(code: Optional[str]) -> Optional[str]:
    if code is not None and code.startswith("-80"):
        return "a DCMI error code (base -8000) that ascenv does not know"
    return None


def parse_warnings(text: str) -> tuple[str, ...]:
    """Warnings npu-smi prints before a valid table (the driver-not-completely-installed line)."""
    warnings = []
    for line in plain(text).splitlines():
        if "driver package may not be completely installed" in line:
            warnings.append(f"{line.strip()} ({DRIVER_INCOMPLETE_MEANING})")
    return tuple(dict.fromkeys(warnings))


# --- npu-smi info ----------------------------------------------------------------------------------


@dataclass
class _Row:
    cells: list[str]
    complete: bool  # the line ends with its closing "|"
    raw: str
    first_width: int  # width of the first cell as printed (tells F2a from F2)
    last_width: int  # width of the last cell as printed (tells F4 from F3)


@dataclass
class _Pending:
    """Row 1 of a chip (NPU id, name, health, power, temp, hugepages) waiting for its row 2."""

    npu: int
    name: str
    health: Optional[str]
    values: list[tuple[str, ...]]


@dataclass
class _Table:
    end: int = -1  # index of its last line
    title: Optional[tuple[str, str]] = None
    header1: Optional[_Row] = None
    header2: Optional[_Row] = None
    in_processes: bool = False
    process_columns: int = 0
    process_npus: set[int] = field(default_factory=set)  # NPUs with process rows or a "No running" line
    processes_cut: bool = False  # a process row cut short, or lines skipped inside the process table
    closed: bool = False  # the last line seen is a complete separator
    rows_seen: int = 0
    pending: Optional[_Pending] = None
    chips: list[Chip] = field(default_factory=list)
    processes: list[NpuProcess] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def recognised(self) -> bool:
        return bool(self.title or self.header1 or self.chips or self.processes)

    @property
    def split_id_column(self) -> bool:
        # 950 "NPU_SMI_V2": "| NPU ID | Name |" are two cells where older layouts have one.
        return self.header1 is not None and self.header1.cells[0].upper() == "NPU ID"


def parse_info(text: str, source: str = "npu-smi info") -> NpuInfo:
    """The first ``npu-smi info`` table in ``text`` (a capture may hold several, see parse_info_all)."""
    infos = parse_info_all(text, source)
    first = infos[0]
    if len(infos) > 1:
        note = f"the text holds {len(infos)} npu-smi info tables; this is the first"
        first = replace(first, warnings=first.warnings + (note,))
    return first


def parse_info_all(text: str, source: str = "npu-smi info") -> list[NpuInfo]:
    """Every ``npu-smi info`` table in ``text``, in order; always at least one NpuInfo.

    Each table owns the non-table lines before it (prompts, error lines, driver warnings)."""
    text = plain(text)
    lines = text.splitlines()
    tables = [t for t in _split_tables(lines) if t.recognised]
    if not tables:
        errors = parse_errors(text, source)
        warnings = parse_warnings(text)
        if not errors:
            warnings += ("no npu-smi info table found in the text",)
        return [NpuInfo(source=source, warnings=warnings, errors=errors)]
    infos = []
    begin = 0
    for index, table in enumerate(tables):
        stop = len(lines) if index == len(tables) - 1 else table.end + 1
        own = "\n".join(lines[begin:stop])
        begin = stop
        infos.append(_to_info(table, source, parse_errors(own, source), parse_warnings(own)))
    return infos


def _to_info(table: _Table, source: str, errors: tuple[ProbeError, ...], warnings: tuple[str, ...]) -> NpuInfo:
    layout = _layout(table)
    unknown = _processes_unknown(table, layout)
    notes = (PROCESSES_UNKNOWN + unknown,) if unknown else ()
    return NpuInfo(
        source=source,
        npu_smi_version=table.title[0] if table.title else None,
        driver_version=table.title[1] if table.title else None,
        layout=layout,
        chips=tuple(table.chips),
        processes=tuple(table.processes),
        processes_complete=unknown is None,
        warnings=warnings + tuple(dict.fromkeys(table.warnings)) + notes,
        errors=errors,
    )


def _processes_unknown(table: _Table, layout: Optional[str]) -> Optional[str]:
    """Why the process list may be incomplete, or None when the process table is whole.

    npu-smi prints, under the chips, a process table in which every NPU has its process rows or
    a "No running processes found in NPU <id>" line; an NPU without either, a table cut short or
    no table at all leaves the processes unknown, not absent."""
    if not table.process_columns:
        if layout == "F1":
            return "this npu-smi (Atlas 300I, npu-smi 20.x/21.x) prints no process table"
        return "the output has no process table (cut, or npu-smi answered only in part)"
    missing = [npu for npu in dict.fromkeys(c.npu for c in table.chips) if npu not in table.process_npus]
    if missing:
        shown = ", ".join(map(str, missing[:8])) + (f" and {len(missing) - 8} more" if len(missing) > 8 else "")
        return f"the process table is cut: no row for NPU {shown}"
    if table.processes_cut or not table.closed:
        return "the process table is cut"
    return None


def _layout(table: _Table) -> Optional[str]:
    """The table family (F1, F2a, F2, F3, F4, F5), from the header words; widths only where the words agree."""
    h1, h2 = table.header1, table.header2
    if h1 is None:
        return None
    second = " ".join(h2.cells) if h2 else ""
    if table.split_id_column or "NPU Util" in second:
        return "F5"
    if "Hugepages" not in " ".join(h1.cells):
        return "F1"
    if h2 is not None and "Device" in h2.cells[0]:
        # F2a (npu-smi 22.0.x 310P) differs from F2 only by its 19-wide first column.
        return "F2a" if h1.first_width == 19 else "F2"
    # F4 (26.x) widened the value column from 52 to 70 and added a 5th process column.
    return "F4" if h1.last_width > 60 or table.process_columns >= 5 else "F3"


def _split_tables(lines: list[str]) -> list[_Table]:
    tables: list[_Table] = []
    table: Optional[_Table] = None
    skipped: list[str] = []  # non-table lines since the last table line
    held: list[tuple[int, str]] = []  # separators after skipped lines: they open the next table or go on this one
    for number, raw in enumerate(lines):
        line = _table_line(raw)
        if line is None:
            if raw.strip():
                skipped.append(raw.strip())
            continue
        if line.startswith("+") and (skipped or table is None):
            held.append((number, line))
            continue
        title = _TITLE.search(line) if line.startswith("|") else None
        if table is None or (title is not None and (table.title is not None or table.rows_seen)):
            if table is not None:
                _finish(table)
            table = _Table()
            tables.append(table)
        elif skipped:
            table.warnings.append(f"the capture skips lines here ({skipped[0]!r}): rows may be missing")
            table.processes_cut = table.processes_cut or table.in_processes
        skipped = []
        for held_number, separator in held:
            _read_separator(table, held_number, separator)
        held = []
        if line.startswith("+"):
            _read_separator(table, number, line)
            continue
        table.end = number
        table.closed = False
        if title is not None:
            table.title = (title.group(1), title.group(2))
            continue
        _read_row(table, _split_row(line))
    if table is not None:
        for held_number, separator in held:
            _read_separator(table, held_number, separator)
        _finish(table)
    return tables


def _read_separator(table: _Table, number: int, line: str) -> None:
    table.end = number
    table.closed = line.endswith("+")  # a separator cut mid-way does not close the table


def _table_line(raw: str) -> Optional[str]:
    """The table part of a line ("|..." or a "+---+" separator), or None for any other line."""
    line = _PASTE_PREFIX.sub("", raw.strip())
    if not line.startswith(("|", "+")):
        match = _ANNOTATION.search(line)
        if match is None:
            return None
        line = line[match.end() :]
    if "#" in line:
        line = _ROW_NOTE.sub("", line)
    if line.startswith("+") and not _SEPARATOR.match(line):
        return None
    return line


def _split_row(line: str) -> _Row:
    parts = line.split("|")[1:]
    complete = line.endswith("|")
    if complete:
        parts = parts[:-1]
    cells = [p.strip() for p in parts] or [""]
    return _Row(cells, complete, line, len(parts[0]) if parts else 0, len(parts[-1]) if parts else 0)


def _read_row(table: _Table, row: _Row) -> None:
    table.rows_seen += 1
    cells = row.cells
    joined = " ".join(cells)
    if not row.complete:
        table.warnings.append(f"row cut short: {row.raw.strip()!r}")
        table.processes_cut = table.processes_cut or table.in_processes
    if any(c.startswith("Process id") or c.startswith("Process name") for c in cells):
        _drop_pending(table)
        table.in_processes = True
        table.process_columns = len(cells)
        return
    if cells[0].startswith("NPU") and "Health" in joined:
        table.header1, table.in_processes = row, False
        return
    if "Bus-Id" in joined and (cells[0].startswith("Chip") or cells[0] == ""):
        table.header2 = row
        return
    no_process = _NO_PROCESS.search(joined)
    if no_process:
        if no_process.group(1) is not None:  # None when the line is cut before the id
            table.process_npus.add(int(no_process.group(1)))
        return
    if table.in_processes:
        _read_process(table, row)
    else:
        _read_device_row(table, row)


def _read_device_row(table: _Table, row: _Row) -> None:
    cells = list(row.cells)
    if table.split_id_column and len(cells) >= 2:
        cells = [f"{cells[0]} {cells[1]}".strip()] + cells[2:]
    row1 = _ROW1_ID.match(cells[0])
    second = cells[1] if len(cells) > 1 else None
    if second is None:  # a row cut after its first cell: row 1 only if it holds a name
        is_row1 = row1 is not None and re.search(r"[A-Za-z]", row1.group(2)) is not None
    else:  # row 1 has a Health word where row 2 has a Bus-Id ("NA" on 310B)
        is_row1 = (
            row1 is not None
            and second.upper() not in _NOT_A_VALUE
            and (re.fullmatch(r"[A-Za-z]+", second) is not None or _health_word(second) is not None)
        )
    if is_row1:
        assert row1 is not None
        _drop_pending(table)
        health = _health(second, table) if second is not None else None
        values = _tokens(cells[2]) if len(cells) > 2 else []
        table.pending = _Pending(int(row1.group(1)), row1.group(2), health, values)
        return
    ids = _ROW2_IDS.match(cells[0])
    if ids and (second is None or second.upper() in _NOT_A_VALUE or _BUS_ID.match(second) or ":" in second):
        if table.pending is None:
            if table.title or table.header1:
                table.warnings.append(f"a chip row without its NPU row (capture cut): {row.raw.strip()!r}")
            return
        _add_chip(table, ids, second, _tokens(cells[2]) if len(cells) > 2 else [])
        return
    if table.title or table.header1:
        table.warnings.append(f"row not understood: {row.raw.strip()!r}")


def _add_chip(table: _Table, ids: re.Match[str], bus: Optional[str], values: list[tuple[str, ...]]) -> None:
    pending = table.pending
    assert pending is not None
    table.pending = None
    chip = int(ids.group(1)) if ids.group(1) else 0  # 950 prints no chip row id: one chip per NPU
    second_id = int(ids.group(2)) if ids.group(2) else None
    header2 = " ".join(table.header2.cells) if table.header2 else ""
    # Row 2's second number is the logic Device id (310/310P/310B) or the physical chip id (A3);
    # without a header, only A3 prints the "Ascend" prefix in its name.
    is_phy = "Phy-ID" in header2 if header2 else pending.name.startswith("Ascend")
    words1 = [v[0] for v in pending.values if len(v) == 1]
    pairs1 = [v for v in pending.values if len(v) == 2]
    words2 = [v[0] for v in values if len(v) == 1]
    pairs2 = [v for v in values if len(v) == 2]
    table.chips.append(
        Chip(
            npu=pending.npu,
            chip=chip,
            name=pending.name,
            health=pending.health,
            bus_id=None if bus is None or bus.upper() in _NOT_A_VALUE else bus,
            device_id=None if is_phy else second_id,
            phy_id=second_id if is_phy else None,
            power_w=_float(_at(words1, 0)),
            temp_c=_int(_at(words1, 1)),
            aicore_percent=_int(_at(words2, 0)),
            hugepages_used=_int(_pair(pairs1, 0, 0)),
            hugepages_total=_int(_pair(pairs1, 0, 1)),
            memory_used_mb=_int(_pair(pairs2, 0, 0)),
            memory_total_mb=_int(_pair(pairs2, 0, 1)),
            hbm_used_mb=_int(_pair(pairs2, 1, 0)),
            hbm_total_mb=_int(_pair(pairs2, 1, 1)),
        )
    )


def _read_process(table: _Table, row: _Row) -> None:
    cells = row.cells
    ids = _PROC_IDS.match(cells[0])
    if ids is None or len(cells) < 2 or _int(cells[1]) is None:
        table.warnings.append(f"process row not understood: {row.raw.strip()!r}")
        return
    name = cells[2] if len(cells) > 2 and cells[2] else None
    npu = int(ids.group(1))
    chip = int(ids.group(2)) if ids.group(2) else None
    if chip is None and _layout(table) == "F5":
        chip = 0  # the 950 layout prints one chip per NPU and no chip id, as on its chip rows
    table.process_npus.add(npu)
    table.processes.append(
        NpuProcess(
            npu=npu,
            chip=chip,
            pid=_int(cells[1]),
            name=name,
            memory_mb=_int(_at(cells, 3)),
            container_pid=_int(_at(cells, 4)),
        )
    )


def _finish(table: _Table) -> None:
    _drop_pending(table)
    if table.recognised and not table.closed:
        table.warnings.append("capture ends before the closing line")


def _drop_pending(table: _Table) -> None:
    """A chip's row 1 whose row 2 never came: the chip index is unknown, so the chip is left out."""
    if table.pending is not None:
        table.warnings.append(f"NPU {table.pending.npu}: a chip's second row is missing (capture cut); chip left out")
        table.pending = None


def _health_word(word: str) -> Optional[str]:
    """The npucli health word ``word`` spells, also when retyped with digit 0 for letter O."""
    for candidate in (word, word.translate(_RETYPED_O)):
        for known in HEALTH_WORDS:
            if candidate.lower() == known.lower():
                return known
    return None


def _health(word: str, table: _Table) -> str:
    known = _health_word(word)
    if known is None:
        table.warnings.append(f"unknown health {word!r} read as UNKNOWN")
        return "UNKNOWN"
    if known.lower() != word.lower():
        table.warnings.append(f"health {word!r} read as {known} (digit 0 for letter O: a retyped table)")
    return known


def _tokens(cell: str) -> list[tuple[str, ...]]:
    return [(m.group(1), m.group(2)) if m.group(1) is not None else (m.group(3),) for m in _TOKEN.finditer(cell)]


def _at(items: list[str], index: int) -> Optional[str]:
    return items[index] if index < len(items) else None


def _pair(pairs: Sequence[tuple[str, ...]], index: int, part: int) -> Optional[str]:
    return pairs[index][part] if index < len(pairs) else None


def _int(text: Optional[str]) -> Optional[int]:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _float(text: Optional[str]) -> Optional[float]:
    try:
        value = float(text) if text is not None else None
    except ValueError:
        return None
    return value if value is not None and math.isfinite(value) else None


# --- key : value outputs (-t board, -l) and the chip map (-m) -------------------------------------

_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9 ()%/_.\-]*$")


def parse_key_values(text: str) -> list[tuple[str, str]]:
    """``TAB + "%-30s" + " : " + value`` lines (also 8-space or 20-wide keys) in order, as printed."""
    pairs = []
    for line in plain(text).splitlines():
        key, colon, value = _QUOTE.sub("", line).strip().partition(":")
        key = key.strip()
        if colon and _KEY.match(key):
            pairs.append((key, _VALUE_NOTE.sub("", value).strip()))
    return pairs


def parse_board(text: str, npu: int) -> Board:
    """``npu-smi info -t board -i <npu>``. Software Version is the driver version."""
    fields: dict[str, str] = {}
    for key, value in parse_key_values(text):
        fields.setdefault(key, value)

    def get(key: str) -> Optional[str]:
        value = fields.get(key)
        return None if value is None or value.upper() in _NOT_A_VALUE else value

    return Board(
        npu=npu,
        software_version=get("Software Version"),
        firmware_version=get("Firmware Version"),
        compatibility=get("Compatibility"),
        product_name=get("Product Name"),
        pci_device_id=get("PCI Device ID"),
        pci_subsystem_id=get("Subsystem Device ID"),  # Subsystem Vendor ID stays in fields
        chip_count=_int(get("Chip Count")),
        fields=fields,
    )


def parse_list(text: str) -> dict[int, Optional[int]]:
    """``npu-smi info -l``: NPU id -> Chip Count (None when the block omits it)."""
    result: dict[int, Optional[int]] = {}
    current: Optional[int] = None
    for key, value in parse_key_values(text):
        if key == "NPU ID":
            current = _int(value)
            if current is not None:
                result.setdefault(current, None)
        elif key == "Chip Count" and current is not None:
            result[current] = _int(value)
    return result


def parse_chip_map(text: str) -> tuple[ChipMapEntry, ...]:
    """``npu-smi info -m``: which logic id (what torch sees) each NPU/chip is; MCU rows have None."""
    columns: Optional[list[str]] = None
    entries = []
    for line in plain(text).splitlines():
        fields = re.split(r"\s{2,}", _QUOTE.sub("", line).strip())
        if "NPU ID" in fields and "Chip Logic ID" in fields:
            columns = fields
            continue
        if columns is None or len(fields) < len(columns):
            continue
        row = dict(zip(columns, fields))
        npu, chip = _int(row.get("NPU ID")), _int(row.get("Chip ID"))
        name = row.get("Chip Name") or fields[-1]
        if npu is None or chip is None or not name:
            continue
        entries.append(
            ChipMapEntry(
                npu=npu,
                chip=chip,
                logic_id=_int(row.get("Chip Logic ID")),
                name=name,
                phy_id=_int(row.get("Chip Phy-ID")),
            )
        )
    return tuple(entries)


def distinct_npus(chips: Iterable[Chip]) -> tuple[int, ...]:
    """NPU ids in first-seen order (the ``-i`` arguments of the per-card queries)."""
    return tuple(dict.fromkeys(chip.npu for chip in chips))
