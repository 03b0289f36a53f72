"""The program's own last error line, read from the end of the log.

When no line of a log is an error of the Ascend stack ascenv knows (the driver, CANN, torch_npu,
kernels, devices, package indexes), the cause is the one the vocabulary calls ``other``: the
application, its configuration or an upstream bug. Triage then ranks ``other`` and quotes the line
a reader looks at first: the last exception of a Python traceback (its final line names the error,
https://docs.python.org/3/library/traceback.html), else the last line that says error, fatal or
failed (compilers, CMake, make, pip, shells). Only the log's tail is read (``TAIL`` bytes, kept by
``scan.TAIL``), so a log of any size costs the same.
"""

from __future__ import annotations

import re
from typing import Optional

from ascenv.triage.scan import ANSI

_ANSI = re.compile(ANSI.encode())
# "RuntimeError: ...", "torch.OutOfMemoryError: ...", "AssertionError", "KeyboardInterrupt",
# "subprocess.CalledProcessError: ...": a dotted name ending in a Python exception class suffix
# at the start of a line (after indentation), then ":" or the end of the line
_EXCEPTION = re.compile(
    rb"^[ \t]*(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|Failure|Warning)(?::[^\n]*)?[ \t\r]*$",
    re.M,
)
# any other line that says it failed: "error: ...", "CMake Error at", "make: *** [x] Error 1",
# "FATAL ...", "... failed", "Segmentation fault", "Killed", an exception quoted mid-line
# ("**Symptom**: `RuntimeError: ...`": a capital Error ends a CamelCase name, a small one is a word)
_FAILED = re.compile(
    rb"^[^\n]*(?:\b(?:error|ERROR)s?\b|(?:Error|Exception)s?\b"
    rb"|\b(?:[Ff]atal|FATAL|[Ff]ailed|FAILED|Killed)\b|Segmentation fault)[^\n]*$",
    re.M,
)


def last_error(tail: bytes, lines: int) -> Optional[tuple[int, bytes]]:
    """The 1-based line number and raw text of the last error line in ``tail``, the last bytes of a
    log of ``lines`` lines (starting at a line boundary), or None when no line says error."""
    if b"\x1b" in tail or b"[[" in tail:  # colours glued to a word hide it ("\x1b[31merror:")
        tail = _ANSI.sub(b"", tail)  # (no newline in a colour code: line numbers stay)
    found = _last(_EXCEPTION, tail) or _last(_FAILED, tail)
    if found is None:
        return None
    start, end = found
    in_tail = tail.count(b"\n") + (0 if tail.endswith(b"\n") else 1)
    return lines - in_tail + 1 + tail.count(b"\n", 0, start), tail[start:end]


def _last(pattern: re.Pattern[bytes], tail: bytes) -> Optional[tuple[int, int]]:
    last = None
    for last in pattern.finditer(tail):  # noqa: B007 (the loop keeps the last match)
        pass
    return None if last is None else (last.start(), last.end())
