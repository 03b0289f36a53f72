"""Stream a log of any size through the signature table in bounded memory.

The log is read in fixed blocks; all literals of the table are found in one pass over a block
(``matcher``: an RE2 DFA of their alternation), and only a line that holds a literal is decoded, cleaned
(ANSI colours, CR, vLLM/MindIE/Ray/rank prefixes) and tested against the signatures. A line longer
than ``MAX_LINE`` is cut there. Matched lines are grouped: lines that differ only in their numbers
(timestamps, PIDs, ranks) are one group with a count, and a signature keeps at most ``MAX_GROUPS``
groups, so a log repeating one error a million times costs the same memory as one that has it once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import IO, Optional

from ascenv.triage.families import derive
from ascenv.triage.matcher import LiteralMatcher
from ascenv.triage.signatures import Signature, SignatureTable

BLOCK = 1 << 20
MAX_LINE = 64 * 1024
MAX_GROUPS = 5
MAX_QUOTE = 300

# ESC-form colour codes, and the same codes left as text when a paste dropped the ESC byte
# ("^[[36m", "[[36m": Ray's prefixes pasted from a terminal).
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]|\^?\[\[[0-9;]*m")
# Log prefixes that say nothing about the error, stripped before quoting and grouping. A line can
# carry several ("[rank0]: (RayWorker pid=1) ERROR 04-18 ..."): one alternation is matched at an
# advancing position, and the line is cut once at the end, so stripping is linear in the line
# (T1: applying each prefix with re.sub until none matched copied the line per prefix, and a 64 KiB
# line of "E  E  E  ..." took 0.28 s).
_PREFIX = re.compile(
    "|".join(
        (
            # vLLM: "ERROR 04-18 08:22:17 engine.py:400] " / "INFO 09-03 08:14:32 [default_loader.py:262] "
            r"(?:ERROR|WARNING|INFO|DEBUG|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? "
            r"(?:\[[^\]]{0,200}\]|\S{1,200}\])",
            # torch.distributed rank prefix "[rank0]: "
            r"\[rank\d+\]:",
            # Ray worker prefix "(TaskRunner pid=1513738) ", "(RayWorker pid=1, ip=10.0.0.1) "
            r"\([A-Za-z_]\w{0,80} pid=\d+[^)]{0,80}\)",
            # MindIE / plog bracket fields: "[2025-01-01 10:00:00.123+08:00] "
            r"\[\d{4}-\d\d-\d\d[ T][^\]]{0,60}\]",
            # pytest failure lines "E   ", GitHub CI "Error:   " (the spaces are part of the prefix)
            r"(?:E|Error:)\s{2}",
        )
    )
)
_SPACE = re.compile(r"\s*")
_DIGITS = re.compile(r"\d+")
_ZEROS = bytes(BLOCK)


@dataclass(frozen=True)
class LineGroup:
    text: str  # the first line of the group, cleaned
    count: int
    first_line: int  # 1-based line number in the log


@dataclass(frozen=True)
class SignatureHits:
    signature: Signature
    count: int  # matched lines, all groups
    groups: tuple[LineGroup, ...]
    first_line: int


@dataclass(frozen=True)
class ScanResult:
    hits: tuple[SignatureHits, ...]  # in order of first appearance
    bytes_read: int
    lines: int
    binary: bool  # NUL bytes in the first block


def clean_line(raw: bytes) -> str:
    """A log line as it should be quoted: decoded (bad UTF-8 replaced), colours and framework
    prefixes removed, whitespace trimmed."""
    text = raw.decode("utf-8", errors="replace")
    text = _ANSI.sub("", text).strip()
    position = 0
    while True:
        found = _PREFIX.match(text, position)
        if found is None:
            break
        position = _SPACE.match(text, found.end()).end()  # type: ignore[union-attr]  # \s* always matches
    return text[position:]


class _Accumulator:
    def __init__(self, signature: Signature, line_no: int) -> None:
        self.signature = signature
        self.count = 0
        self.first_line = line_no
        self.groups: dict[str, list] = {}  # key -> [text, count, first line]

    def add(self, text: str, line_no: int) -> None:
        self.count += 1
        key = _DIGITS.sub("#", text)
        group = self.groups.get(key)
        if group is not None:
            group[1] += 1
        elif len(self.groups) < MAX_GROUPS:
            quoted = text if len(text) <= MAX_QUOTE else text[: MAX_QUOTE - 1] + "…"
            self.groups[key] = [quoted, 1, line_no]

    def result(self) -> SignatureHits:
        groups = tuple(LineGroup(t, c, n) for t, c, n in self.groups.values())
        return SignatureHits(self.signature, self.count, groups, self.first_line)


def scan(stream: IO[bytes], table: SignatureTable, block_size: int = BLOCK) -> ScanResult:
    literals = tuple(lit.encode() for lit in table.literals)
    matcher = LiteralMatcher(literals)
    longest = max((len(lit) for lit in literals), default=1)
    found: dict[str, _Accumulator] = {}
    carry = b""
    line_base = 0  # newlines before ``block``
    total = 0
    binary: Optional[bool] = None
    while True:
        data = stream.read(block_size)
        total += len(data)
        if binary is None and data:
            binary = b"\x00" in data[:8192]
        block = carry + data
        if not block:
            break
        if data and _all_nul(data):
            # a run of NUL bytes (a sparse file's hole, a truncated core dump): no literal holds NUL
            # and there is no line in it, so it is skipped at memory speed
            if carry:
                _scan_block(carry, len(carry), matcher, table, found, line_base)
                carry = b""
            continue
        if data:
            end = block.rfind(b"\n") + 1
            if end == 0:  # no newline yet: a line longer than a block
                if len(block) < MAX_LINE:
                    carry = block
                    continue
                # cut the long line; keep a tail shorter than any literal so none is missed or doubled
                end = len(block) - (longest - 1)
        else:
            end = len(block)  # end of input: the last line has no newline
        _scan_block(block, end, matcher, table, found, line_base)
        line_base += block.count(b"\n", 0, end)
        carry = block[end:]
        if not data:
            break
    lines = line_base + (1 if carry else 0)
    hits = sorted((a.result() for a in found.values()), key=lambda h: h.first_line)
    return ScanResult(tuple(hits), total, lines, bool(binary))


def _all_nul(data: bytes) -> bool:
    # a comparison with a block of zeros is a memcmp; bytes.strip would walk byte by byte
    if len(data) != len(_ZEROS):
        return not data.strip(b"\x00")
    return data == _ZEROS


def _scan_block(
    block: bytes, end: int, matcher: LiteralMatcher, table: SignatureTable, found: dict, line_base: int
) -> None:
    starts = matcher.line_starts(block, end)
    line_no = line_base
    previous = 0
    for start in sorted(starts):
        line_no += block.count(b"\n", previous, start)
        previous = start
        stop = block.find(b"\n", start, end)
        stop = end if stop == -1 else stop
        raw = block[start : min(stop, start + MAX_LINE)]
        # a CR inside a line (progress bars, CRLF) ends a segment: test each segment on its own
        for segment in raw.split(b"\r"):
            if not segment.strip():
                continue
            text = clean_line(segment)
            for candidate in table.signatures:
                if candidate.matches(text):
                    signature = candidate
                    if candidate.family is not None:
                        # a rule over the kind of message: the line says which library, symbol
                        # or numbers, and so which concrete signature it is; a line it cannot
                        # read ("an undefined symbol was found") is not of the kind
                        derived = derive(candidate, text, table.layers)
                        if derived is None:
                            continue
                        signature = derived
                    acc = found.get(signature.id)
                    if acc is None:
                        acc = found[signature.id] = _Accumulator(signature, line_no + 1)
                    acc.add(text, line_no + 1)
