"""Stream a log of any size through the signature table in bounded memory.

The log is read in fixed blocks; all literals of the table are found in one pass over a block
(``matcher``: an RE2 DFA of their alternation), and only a line that holds a literal is decoded, cleaned
(ANSI colours, CR, vLLM/MindIE/Ray/rank prefixes) and tested against the signatures. A line longer
than ``MAX_LINE`` is cut there. Matched lines are grouped: lines that differ only in their numbers
(timestamps, PIDs, ranks) are one group with a count, and a signature keeps at most ``MAX_GROUPS``
groups, so a log repeating one error a million times costs the same memory as one that has it once.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import IO, Callable, Optional

from ascenv.triage.families import derive
from ascenv.triage.matcher import LiteralMatcher
from ascenv.triage.signatures import Signature, SignatureTable

BLOCK = 1 << 20
MAX_LINE = 64 * 1024
MAX_GROUPS = 5
MAX_QUOTE = 300
# cleaned lines whose signatures are remembered: a failing service repeats its error lines, and
# once their prefixes (time, pid, rank) are cleaned off they are the same text (bounded: cleared
# when full; only lines up to SEEN_LENGTH characters, so it stays under 4 MB)
SEEN_LINES = 4096
SEEN_LENGTH = 1024

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
    if "\x1b" in text or "[[" in text:  # most lines have no colour: no regex pass over them
        text = _ANSI.sub("", text)
    text = text.strip()
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

    def add(self, text: str, key: str, line_no: Callable[[], int]) -> None:
        """One more line ``text``; ``key``: the text with its numbers replaced (group_key);
        ``line_no()`` its line number, asked only for the first line of a group (counting the
        newlines up to each repeated line was a third of the scan of a log that repeats one error)."""
        self.count += 1
        group = self.groups.get(key)
        if group is not None:
            group[1] += 1
        elif len(self.groups) < MAX_GROUPS:
            quoted = text if len(text) <= MAX_QUOTE else text[: MAX_QUOTE - 1] + "…"
            self.groups[key] = [quoted, 1, line_no()]

    def result(self) -> SignatureHits:
        groups = tuple(LineGroup(t, c, n) for t, c, n in self.groups.values())
        return SignatureHits(self.signature, self.count, groups, self.first_line)


def scan(stream: IO[bytes], table: SignatureTable, block_size: int = BLOCK) -> ScanResult:
    literals = tuple(lit.encode() for lit in table.literals)
    matcher = LiteralMatcher(literals)
    longest = max((len(lit) for lit in literals), default=1)
    found: dict[str, _Accumulator] = {}
    seen: dict[str, tuple[tuple[Signature, ...], str]] = {}
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
                _scan_block(carry, len(carry), matcher, table, found, line_base, seen)
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
        _scan_block(block, end, matcher, table, found, line_base, seen)
        line_base += newlines(block, 0, end)
        carry = block[end:]
        if not data:
            break
    lines = line_base + (1 if carry else 0)
    hits = sorted((a.result() for a in found.values()), key=lambda h: h.first_line)
    return ScanResult(tuple(hits), total, lines, bool(binary))


def newlines(data: bytes, start: int, end: int) -> int:
    """The newlines in ``data[start:end]``. ``bytes.count`` of one byte walks it byte by byte
    (CPython's stringlib count loop), ``bytes.replace`` finds each newline with memchr: on a 1 MB
    block of serving-log lines 1.2 ms against 3.4 ms, the largest cost of the scan after the RE2
    search itself (bench/bench_triage.py)."""
    end = max(start, min(end, len(data)))
    if start == 0 and end > len(data) // 2:
        # most of a block: the whole block, less the newlines of its short tail (no 1 MB slice copy)
        return len(data) - len(data.replace(b"\n", b"")) - data.count(b"\n", end)
    part = data[start:end]
    return len(part) - len(part.replace(b"\n", b""))


def _all_nul(data: bytes) -> bool:
    # a comparison with a block of zeros is a memcmp; bytes.strip would walk byte by byte
    if len(data) != len(_ZEROS):
        return not data.strip(b"\x00")
    return data == _ZEROS


def _scan_block(
    block: bytes,
    end: int,
    matcher: LiteralMatcher,
    table: SignatureTable,
    found: dict,
    line_base: int,
    seen: dict[str, tuple[tuple[Signature, ...], str]],
) -> None:
    starts = matcher.line_starts(block, end)
    counted = [0, line_base]  # newlines are counted up to this offset; the lines before it

    def line_no(start: int) -> int:
        if counted[0] != start:
            counted[1] += newlines(block, counted[0], start)
            counted[0] = start
        return counted[1] + 1

    for start in sorted(starts):
        stop = block.find(b"\n", start, end)
        stop = end if stop == -1 else stop
        raw = block[start : min(stop, start + MAX_LINE)]
        # a CR inside a line (progress bars, CRLF) ends a segment: test each segment on its own
        for segment in raw.split(b"\r"):
            if not segment.strip():
                continue
            text = clean_line(segment)
            known = seen.get(text)
            if known is None:
                known = (_signatures_of(text, table), group_key(text))
                if len(text) <= SEEN_LENGTH:
                    if len(seen) >= SEEN_LINES:
                        seen.clear()
                    seen[text] = known
            matched, key = known
            at = functools.partial(line_no, start)
            for signature in matched:
                acc = found.get(signature.id)
                if acc is None:
                    acc = found[signature.id] = _Accumulator(signature, at())
                acc.add(text, key, at)


def group_key(text: str) -> str:
    """Lines that differ only in their numbers (timestamps, PIDs, ranks) are one group."""
    return _DIGITS.sub("#", text)


def _signatures_of(text: str, table: SignatureTable) -> tuple[Signature, ...]:
    """The signatures a cleaned line matches, family signatures made concrete."""
    matched = []
    for candidate in table.candidates(text):
        if candidate.matches(text):
            if candidate.family is None:
                matched.append(candidate)
                continue
            # a rule over the kind of message: the line says which library, symbol or numbers,
            # and so which concrete signature it is; a line it cannot read ("an undefined symbol
            # was found") is not of the kind
            derived = derive(candidate, text, table.layers)
            if derived is not None:
                matched.append(derived)
    return tuple(matched)
