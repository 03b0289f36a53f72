"""Stream a log of any size through the signature table in bounded memory.

The log is read in fixed blocks; all literals of the table are found in one pass over a block
(``matcher``: an RE2 DFA of their alternation), and only a line that holds a literal is decoded, cleaned
(ANSI colours, CR, vLLM/MindIE/Ray/rank prefixes) and tested against the signatures. A line longer
than ``MAX_LINE`` is cut there. Matched lines are grouped: lines that differ only in their numbers
(timestamps, PIDs, ranks) are one group with a count, and a signature keeps at most ``MAX_GROUPS``
groups, so a log repeating one error a million times costs the same memory as one that has it once.
A dense block (a service failing on every line) is read by line classes instead (``_bulk_block``:
lines alike but for their digits are decoded and tested once), with the same result.
"""

from __future__ import annotations

import functools
import importlib
import itertools
import operator
import re
from collections import Counter
from dataclasses import dataclass
from typing import IO, Any, Callable, Optional, Union

from ascenv.triage.families import derive
from ascenv.triage.matcher import LiteralMatcher
from ascenv.triage.signatures import Signature, SignatureTable

BLOCK = 1 << 20
MAX_LINE = 64 * 1024
MAX_GROUPS = 5
MAX_QUOTE = 300
TAIL = 64 * 1024  # the log's last bytes kept for last_error (the program's own last error line)
# cleaned lines whose signatures are remembered: a failing service repeats its error lines, and
# once their prefixes (time, pid, rank) are cleaned off they are the same text (bounded: cleared
# when full; only lines up to SEEN_LENGTH characters, so it stays under 4 MB)
SEEN_LINES = 4096
SEEN_LENGTH = 1024
# a block whose first BULK_LINES lines holding a literal come within BULK_LINES * BULK_BYTES
# bytes is read by line classes (_Classes): its fixed cost (translate, split, count: about 1.5 ms a MB) is what
# about 400 repeated matching lines cost line by line (4 us each when their cleaned text was seen
# before; bench_triage --dense, one per 34 lines, is faster line by line) or 80 distinct ones
BULK_LINES = 64
BULK_BYTES = 2048
# blocks read line by line after one whose classes were too many to be worth it
BULK_BACKOFF = 8
CONTEXT = 32  # bytes of text a side of a deciding digit run in its probe

# ESC-form colour codes, and the same codes left as text when a paste dropped the ESC byte
# ("^[[36m", "[[36m": Ray's prefixes pasted from a terminal).
ANSI = r"\x1b\[[0-9;]*[A-Za-z]|\^?\[\[[0-9;]*m"
_ANSI = re.compile(ANSI)
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
# every ASCII digit made 0: the class of a line (bytes, and str for the literals)
_TO_ZERO = bytes.maketrans(b"0123456789", b"0" * 10)
_TO_ZERO_STR = str.maketrans("0123456789", "0" * 10)
_RUN = re.compile(rb"[0-9]+")
_ASCII_DIGITS = frozenset(range(ord("0"), ord("9") + 1))
_HAS_DIGIT = re.compile("[0-9]").search


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
    tail: bytes = b""  # the log's last bytes from a line boundary (TAIL at most), for last_error


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


def quote(text: str) -> str:
    """A cleaned line as quoted in a result: cut at ``MAX_QUOTE`` characters."""
    return text if len(text) <= MAX_QUOTE else text[: MAX_QUOTE - 1] + "…"


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
            self.groups[key] = [quote(text), 1, line_no()]

    def add_many(self, text: str, key: str, count: int, line_no: int) -> None:
        """``count`` lines of group ``key``, the first of them ``text`` at ``line_no``: the same as
        ``count`` calls of ``add`` in line order (a group is made by its first line, or not at all)."""
        self.count += count
        group = self.groups.get(key)
        if group is not None:
            group[1] += count
        elif len(self.groups) < MAX_GROUPS:
            self.groups[key] = [quote(text), count, line_no]

    def result(self) -> SignatureHits:
        groups = tuple(LineGroup(t, c, n) for t, c, n in self.groups.values())
        return SignatureHits(self.signature, self.count, groups, self.first_line)


def scan(stream: IO[bytes], table: SignatureTable, block_size: int = BLOCK, by_class: bool = True) -> ScanResult:
    """The signatures of the lines of ``stream``; ``by_class=False``: every block line by line (the
    same result, slower on a dense log; the tests compare the two)."""
    literals = tuple(lit.encode() for lit in table.literals)
    matcher = LiteralMatcher(literals)
    classes = _Classes(table, literals) if by_class else None
    longest = max((len(lit) for lit in literals), default=1)
    found: dict[str, _Accumulator] = {}
    seen: dict[str, tuple[tuple[Signature, ...], str]] = {}
    raws: dict[bytes, tuple[str, tuple[Signature, ...], str]] = {}  # raw line -> cleaned, as seen
    carry = b""
    line_base = 0  # newlines before ``block``
    total = 0
    binary: Optional[bool] = None
    tail = b""
    open_line = False  # the log ends in a line without a newline
    while True:
        data = stream.read(block_size)
        total += len(data)
        if data:
            tail = (tail + data)[-TAIL:] if len(data) < TAIL else data[-TAIL:]
        if binary is None and data:
            binary = b"\x00" in data[:8192]
        block = carry + data
        if not block:
            break
        if data and _all_nul(data):
            # a run of NUL bytes (a sparse file's hole, a truncated core dump): no literal holds NUL
            # and there is no line in it, so it is skipped at memory speed
            if carry:
                _scan_block(carry, len(carry), matcher, table, found, line_base, seen, classes, raws)  # (its last line)
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
            open_line = True
        counted = _scan_block(block, end, matcher, table, found, line_base, seen, classes, raws)
        line_base += newlines(block, 0, end) if counted is None else counted
        carry = block[end:]
        if not data:
            break
    lines = line_base + (1 if open_line else 0)
    hits = sorted((a.result() for a in found.values()), key=lambda h: h.first_line)
    if total > len(tail):  # the tail starts mid-line: from its first whole line on
        tail = tail[tail.find(b"\n") + 1 :] if b"\n" in tail else b""
    return ScanResult(tuple(hits), total, lines, bool(binary), tail)


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
    classes: Optional[_Classes] = None,
    raws: Optional[dict[bytes, tuple[str, tuple[Signature, ...], str]]] = None,
) -> Optional[int]:
    """Adds the signatures of the lines of ``block[:end]`` to ``found``; returns the newlines in
    ``block[:end]`` when they were counted on the way (None: not)."""
    if classes is not None and classes.backoff == 0:
        starts = matcher.line_starts(block, end, limit=BULK_LINES)
        if len(starts) >= BULK_LINES:  # the search stopped there: the rest is still to find
            if max(starts) < BULK_LINES * BULK_BYTES:
                breaks = _bulk_block(block, end, matcher, table, found, line_base, seen, classes)
                if breaks is not None:
                    return breaks
                classes.backoff = BULK_BACKOFF
            starts = matcher.line_starts(block, end)
    else:
        if classes is not None:
            classes.backoff -= 1
        starts = matcher.line_starts(block, end)
    if raws is None:
        raws = {}
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
        for segment in raw.split(b"\r") if b"\r" in raw else (raw,):
            known = raws.get(segment)
            if known is None:
                if not segment.strip():
                    continue
                text = clean_line(segment)
                matched, key = _judged(text, table, seen)
                # a repeated line is not even decoded again (bench --dense: 4 -> 2 us a line)
                if len(segment) <= SEEN_LENGTH:
                    if len(raws) >= SEEN_LINES:
                        raws.clear()
                    raws[segment] = (text, matched, key)
            else:
                text, matched, key = known
            if not matched:
                continue
            at = functools.partial(line_no, start)
            for signature in matched:
                acc = found.get(signature.id)
                if acc is None:
                    acc = found[signature.id] = _Accumulator(signature, at())
                acc.add(text, key, at)
    return None


def _judged(
    text: str, table: SignatureTable, seen: dict[str, tuple[tuple[Signature, ...], str]]
) -> tuple[tuple[Signature, ...], str]:
    """The signatures of the cleaned line ``text`` and its group key, remembered (bounded)."""
    known = seen.get(text)
    if known is None:
        known = (_signatures_of(text, table), group_key(text))
        if len(text) <= SEEN_LENGTH:
            if len(seen) >= SEEN_LINES:
                seen.clear()
            seen[text] = known
    return known


# A dense block (a service failing over and over, every line an error) is read by line classes.
# The class of a line is the line with every ASCII digit made 0. Cleaning (decoding, the prefix
# and space patterns) and the group key see a digit only as a digit, so every line of a class has
# the same cleaned shape and the same group key, and only the literals' and regexes' own digits
# ("507033", "= 507008", r"\b561003\b") can tell two lines of a class apart: such a digit string
# lies inside one digit run of the line, so only the runs at least as long as the shortest digit
# string of the signatures the class may hold decide its signatures. Lines are then counted per
# class and per value of those runs with C loops (split, translate, Counter), and a line is
# decoded, cleaned and tested only when it is the first of its class and values.
_EXACT = "exact"  # a class read line by line (colours, CR, long lines, a family's numbers)
_NOTHING = "nothing"  # a class no line of which holds a literal once cleaned


@dataclass
class _Class:
    key: str  # the group key of every line of the class
    signatures: Optional[tuple[Signature, ...]]  # of every line (no digit run decides them), or
    runs: Optional[Callable[[bytes], Any]]  # the digit runs that decide them (an itemgetter)
    # each deciding run (start, end) with the text around it up to the next digits (at most
    # CONTEXT bytes a side): a probe that finds the lines whose run holds another value
    contexts: tuple[tuple[int, int, bytes, bytes], ...] = ()


_Info = Union[_Class, str]


class _Classes:
    """What a scan knows of line classes: the literals with their digits made 0 (a prefilter over
    classes), each signature's digit strings, and the classes seen (bounded as ``seen``)."""

    def __init__(self, table: SignatureTable, literals: tuple[bytes, ...]) -> None:
        self.table = table
        self.matcher = LiteralMatcher(tuple(sorted({lit.translate(_TO_ZERO) for lit in literals})))
        # per signature: its literals made 0 (str, and bytes when they hold a digit) and the
        # literal strings of its regex that hold a digit, made 0 (None: a character class that
        # holds some digits only, so any digit may decide)
        self.rows = tuple(
            (
                sig,
                tuple(
                    (lit.translate(_TO_ZERO_STR), lit.translate(_TO_ZERO_STR).encode() if _HAS_DIGIT(lit) else None)
                    for lit in sig.literals
                ),
                _regex_anchors(sig.regex),
            )
            for sig in table.signatures
        )
        self.known: dict[bytes, _Info] = {}
        self.combos: dict[tuple[bytes, Any], tuple[Signature, ...]] = {}
        self.backoff = 0

    def info(self, shape: bytes) -> _Info:
        if len(shape) > SEEN_LENGTH or b"\r" in shape or b"\x1b" in shape or b"[[" in shape:
            return _EXACT
        text = clean_line(shape)
        anchors: list[bytes] = []  # strings made 0 whose digits may fall on a run of the line
        possible = False
        for sig, literals, regex_anchors in self.rows:
            held = [anchor for lit, anchor in literals if lit in text]
            if not held:
                continue
            if sig.family is not None:  # its numbers and names are read from the line itself
                return _EXACT
            possible = True
            anchors.extend(anchor for anchor in held if anchor is not None)
            anchors.extend((b"0",) if regex_anchors is None else regex_anchors)
        if not possible:
            return _NOTHING
        deciding = bytearray(len(shape))  # 1: a byte of the line an anchor may cover
        for anchor in set(anchors):
            at = shape.find(anchor)
            while at != -1:
                deciding[at : at + len(anchor)] = b"\x01" * len(anchor)
                at = shape.find(anchor, at + 1)
        runs = [slice(*found.span()) for found in _RUN.finditer(shape) if 1 in deciding[found.start() : found.end()]]
        if not runs:  # the class's own line (digits 0) is one of its lines
            return _Class(group_key(text), _signatures_of(text, self.table), None)
        contexts = []
        for run in runs:
            before = shape.rfind(b"0", max(0, run.start - CONTEXT), run.start)
            after = shape.find(b"0", run.stop, run.stop + CONTEXT)
            left = shape[before + 1 if before != -1 else max(0, run.start - CONTEXT) : run.start]
            right = shape[run.stop : after if after != -1 else run.stop + CONTEXT]
            contexts.append((run.start, run.stop, left, right))
        return _Class(group_key(text), None, operator.itemgetter(*runs), tuple(contexts))

    def remember(self, shape: bytes, info: _Info) -> None:
        if len(shape) <= SEEN_LENGTH:
            if len(self.known) >= SEEN_LINES:
                self.known.clear()
            self.known[shape] = info


def _regex_anchors(regex: Optional[re.Pattern]) -> Optional[tuple[bytes, ...]]:
    """The strings a regex matches literally that hold a digit, digits made 0 (for
    "(?:code is|ErrCode=)507033\\b": 000000; for ", error code is 19\\b": ", error code is 00"),
    or None when a class or a negation holds some digits but not all (then any digit may decide).
    A match that uses one of its literal digits holds the whole string around it (its adjacent
    literal characters); under IGNORECASE only the digits themselves (the letters may differ in
    case). Digits matched through \\d, \\w, ``.`` or a class holding all of 0-9 decide nothing."""
    if regex is None:
        return ()
    try:
        parser: Any = importlib.import_module("re._parser")  # Python >= 3.11
    except ImportError:  # pragma: no cover - Python 3.9/3.10
        parser = importlib.import_module("sre_parse")
    c = parser
    digits_of_category = {c.CATEGORY_DIGIT: True, c.CATEGORY_WORD: True, c.CATEGORY_NOT_SPACE: True}
    found: list[str] = []
    tree = parser.parse(regex.pattern)
    folded = [bool((regex.flags | tree.state.flags) & re.IGNORECASE)]

    def covered(items: Any) -> Optional[bool]:  # True: all digits, False: none, None: some
        hit: set[int] = set()
        for op, arg in items:
            if op is c.LITERAL and arg in _ASCII_DIGITS:
                hit.add(arg)
            elif op is c.RANGE:
                hit.update(d for d in _ASCII_DIGITS if arg[0] <= d <= arg[1])
            elif op is c.CATEGORY:
                if digits_of_category.get(arg):
                    hit.update(_ASCII_DIGITS)
            elif op is not c.NEGATE and op is not c.LITERAL:
                return None
        return True if hit == _ASCII_DIGITS else (False if not hit else None)

    def emit(run: str) -> None:
        if folded[0]:
            found.extend(re.findall("[0-9]+", run))
        elif _HAS_DIGIT(run):
            found.append(run)

    def walk(items: Any) -> bool:
        run = ""
        for op, arg in items:
            if op is c.LITERAL:
                run += chr(arg)
                continue
            if op is c.BRANCH:
                # alternatives of literals alike but for their digits continue the run: the parser
                # factors "(?:507015|507035)" into "5070" and a branch of "15" and "35", whose
                # shapes alone ("00") would let any two-digit run of a line decide
                texts = [_literal_text(c, branch) for branch in arg[1]]
                alternatives = [text for text in texts if text is not None]
                if len(alternatives) == len(texts) and len({a.translate(_TO_ZERO_STR) for a in alternatives}) == 1:
                    run += alternatives[0]
                    continue
            emit(run)
            run = ""
            if op is c.ANY or op is c.AT:
                continue
            if op is c.NOT_LITERAL:
                if arg in _ASCII_DIGITS:
                    return False
            elif op is c.IN:
                if covered(arg) is None:
                    return False
            elif op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", None)):
                if not walk(arg[2]):
                    return False
            elif op is c.SUBPATTERN:
                if arg[1] & re.IGNORECASE:
                    folded[0] = True  # (?i:...): from here on, the digits only (conservative)
                if not walk(arg[-1]):
                    return False
            elif op is c.BRANCH:
                if not all(walk(branch) for branch in arg[1]):
                    return False
            elif op in (c.ASSERT, c.ASSERT_NOT):
                if not walk(arg[1]):
                    return False
            elif op is getattr(c, "ATOMIC_GROUP", None):
                if not walk(arg):
                    return False
            else:  # anything else (a back-reference, a conditional): any digit may decide
                return False
        emit(run)
        return True

    if not walk(tree):
        return None
    return tuple(dict.fromkeys(anchor.translate(_TO_ZERO_STR).encode() for anchor in found))


def _literal_text(parser: Any, items: Any) -> Optional[str]:
    """The string a regex part matches when it is literals only, else None."""
    if any(op is not parser.LITERAL for op, _ in items):
        return None
    return "".join(chr(arg) for _, arg in items)


def _bulk_block(
    block: bytes,
    end: int,
    matcher: LiteralMatcher,
    table: SignatureTable,
    found: dict,
    line_base: int,
    seen: dict[str, tuple[tuple[Signature, ...], str]],
    classes: _Classes,
) -> Optional[int]:
    """``block[:end]`` read by line classes, with the same result as line by line; returns its
    newlines, or None (nothing done) when its lines that may hold a literal are not repetitive
    enough for it to pay. ``block[end:]`` (the start of a line the next block ends) holds no
    newline: the block is split whole, without a copy of ``block[:end]``, and that piece dropped."""
    part = block
    mapped = block.translate(_TO_ZERO)
    shapes = mapped.split(b"\n")
    breaks = len(shapes) - 1
    if end < len(block):
        del shapes[-1]
    counts = Counter(shapes)  # in order of first appearance
    known = classes.known
    new = [shape for shape in counts if shape not in known]
    possible: set[bytes] = set()
    if new:
        joined = b"\n".join(new)
        for start in classes.matcher.line_starts(joined, len(joined)):
            stop = joined.find(b"\n", start)
            possible.add(joined[start : len(joined) if stop == -1 else stop])
    candidates = [shape for shape in counts if shape in possible or known.get(shape, _NOTHING) is not _NOTHING]
    if len(candidates) * 4 > sum(counts[shape] for shape in candidates):
        return None
    for shape in new:
        if shape not in possible:
            classes.remember(shape, _NOTHING)
    infos: list[tuple[bytes, _Info]] = []
    wanted: dict[bytes, list[int]] = {}
    for shape in candidates:
        info = known.get(shape)
        if info is None:
            info = classes.info(shape)
            classes.remember(shape, info)
        if info is not _NOTHING:
            infos.append((shape, info))
    # (line index, order, count, signatures, group key, cleaned first line)
    events: list[tuple[int, int, int, tuple[Signature, ...], str, str]] = []
    at = _Offsets(part, shapes)
    probes: dict[tuple[bool, bytes], int] = {}  # (in the block itself, probe) -> its count
    for shape, info in infos:
        if isinstance(info, _Class) and info.runs is not None:
            index = shapes.index(shape)
            first_line = at.line(index)
            if _same_runs(first_line, info, part, mapped, end, probes):
                # every line of the class holds its first line's values in its deciding runs
                text = clean_line(first_line)
                matched = _combo(classes, shape, info.runs(first_line), text, table, seen)
                if matched:
                    events.append((index, len(events), counts[shape], matched, info.key, text))
                continue
        if info is _EXACT or (isinstance(info, _Class) and info.runs is not None):
            wanted[shape] = []
    line: Callable[[int], bytes]
    if sum(counts[shape] for shape in wanted) * 8 >= len(shapes):
        # most lines are wanted (every line an error): one pass over the classes of all lines
        lines = part.split(b"\n")
        line = lines.__getitem__
        get = wanted.get
        for index, shape in enumerate(shapes):
            where = get(shape)
            if where is not None:
                where.append(index)
    else:  # a few: found by C scans of the class list, cut out of the block by their offsets
        for shape, where in wanted.items():
            index = -1
            for _ in range(counts[shape]):
                index = shapes.index(shape, index + 1)
                where.append(index)
        offsets = list(itertools.accumulate(map(len, shapes), initial=0))

        def line(index: int) -> bytes:
            start = offsets[index] + index  # the lengths of the lines before it, and their newlines
            return part[start : start + len(shapes[index])]

    for shape, info in infos:
        if isinstance(info, str):  # _EXACT: line by line, as _scan_block does
            for index in wanted[shape]:
                text_bytes = line(index)
                if not matcher.line_starts(text_bytes, len(text_bytes), limit=1):
                    continue
                for segment in text_bytes[:MAX_LINE].split(b"\r"):
                    if segment.strip():
                        text = clean_line(segment)
                        matched, key = _judged(text, table, seen)
                        if matched:
                            events.append((index, len(events), 1, matched, key, text))
        elif info.runs is None:
            if info.signatures:
                index = shapes.index(shape)
                events.append((index, len(events), counts[shape], info.signatures, info.key, clean_line(line(index))))
        elif shape in wanted:  # (else: every line holds its first line's values, counted above)
            where = wanted[shape]
            values = list(map(info.runs, map(line, where)))
            first = dict(zip(reversed(values), reversed(where)))  # the earliest line of each value
            for value, count in Counter(values).items():
                index = first[value]
                text = clean_line(line(index))
                matched_ = _combo(classes, shape, value, text, table, seen)
                if matched_:
                    events.append((index, len(events), count, matched_, info.key, text))
    events.sort(key=lambda event: (event[0], event[1]))
    for index, _, count, matched, key, text in events:
        line_no = line_base + index + 1
        for signature in matched:
            acc = found.get(signature.id)
            if acc is None:
                acc = found[signature.id] = _Accumulator(signature, line_no)
            acc.add_many(text, key, count, line_no)
    return breaks


def _combo(
    classes: _Classes,
    shape: bytes,
    value: Any,
    text: str,
    table: SignatureTable,
    seen: dict[str, tuple[tuple[Signature, ...], str]],
) -> tuple[Signature, ...]:
    """The signatures of the lines of class ``shape`` whose deciding runs hold ``value`` (``text``:
    one of them, cleaned), remembered (bounded)."""
    matched = classes.combos.get((shape, value))
    if matched is None:
        matched = _judged(text, table, seen)[0]
        if len(classes.combos) >= SEEN_LINES:
            classes.combos.clear()
        classes.combos[(shape, value)] = matched
    return matched


class _Offsets:
    """Lines of ``part`` by their index in ``shapes`` (its lines, digits 0), asked in increasing
    order: the lengths of the lines before one are summed from the last one asked (C loops)."""

    def __init__(self, part: bytes, shapes: list[bytes]) -> None:
        self.part, self.shapes = part, shapes
        self.index, self.start = 0, 0

    def line(self, index: int) -> bytes:
        if index < self.index:
            self.index, self.start = 0, 0
        self.start += sum(map(len, itertools.islice(self.shapes, self.index, index))) + index - self.index
        self.index = index
        return self.part[self.start : self.start + len(self.shapes[index])]


def _same_runs(
    first_line: bytes, info: _Class, part: bytes, mapped: bytes, end: int, probes: dict[tuple[bool, bytes], int]
) -> bool:
    """Whether every line of the class holds ``first_line``'s values in its deciding runs, told by
    two C counts a run: its probe (text, value, text) in the block and the probe with its digits
    0 in the block with its digits 0. A line of the class holds the latter where its run is, so
    when both counts agree every place holding the latter holds the former. A probe that could
    overlap itself (bytes.count counts without overlaps) proves nothing: False."""
    for start, stop, left, right in info.contexts:
        probe, zeros = left + first_line[start:stop] + right, left + b"0" * (stop - start) + right
        if any(zeros[:k] == zeros[-k:] for k in range(1, len(zeros))):
            return False
        # (the two counts are remembered apart: a value of zeros makes the two probes equal)
        if (False, zeros) not in probes:
            probes[(False, zeros)] = mapped.count(zeros, 0, end)
        if (True, probe) not in probes:
            probes[(True, probe)] = part.count(probe, 0, end)
        if probes[(False, zeros)] != probes[(True, probe)]:
            return False
    return True


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
