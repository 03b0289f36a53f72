"""The program's own last error line, quoted when no Ascend error is recognised (ascenv/triage/last_error.py)."""

from __future__ import annotations

import io

import pytest

from ascenv.checks import load_checks
from ascenv.triage import load
from ascenv.triage.last_error import last_error
from ascenv.triage.scan import TAIL, scan


def _last(text: bytes) -> tuple[int, bytes] | None:
    lines = text.count(b"\n") + (0 if text.endswith(b"\n") or not text else 1)
    return last_error(text, lines)


@pytest.mark.parametrize(
    ("log", "line", "text"),
    [
        # a traceback's final line names the exception, even after a louder later line
        (
            b'Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n'
            b"    raise ValueError(cfg)\nValueError: num_layers 30 is not divisible by pp 4\n",
            4,
            b"ValueError: num_layers 30 is not divisible by pp 4",
        ),
        # chained exceptions: the last one raised
        (
            b"KeyError: 'llama4'\n\nDuring handling of the above exception, another exception occurred:\n\n"
            b"torch.OutOfMemoryError: ignored? no: the last\nINFO shutting down\n",
            5,
            b"torch.OutOfMemoryError: ignored? no: the last",
        ),
        # a bare exception name, indented, with no message and no final newline
        (b"step 1\n  AssertionError", 2, b"  AssertionError"),
        # Chinese text around it, a vLLM prefix in front of it
        (
            b"\xe8\xae\xad\xe7\xbb\x83\xe5\xa4\xb1\xe8\xb4\xa5\nERROR 05-02 10:11:12 [core.py:88] "
            b"RuntimeError: \xe5\x8f\x82\xe6\x95\xb0\xe9\x94\x99\xe8\xaf\xaf\n",
            2,
            b"ERROR 05-02 10:11:12 [core.py:88] RuntimeError: \xe5\x8f\x82\xe6\x95\xb0\xe9\x94\x99\xe8\xaf\xaf",
        ),
        # no exception: the last line that says error / failed (a build, a shell)
        (
            b"-- Configuring\nCMake Error at CMakeLists.txt:12 (find_package):\n-- Configuring incomplete\n",
            2,
            b"CMake Error at CMakeLists.txt:12 (find_package):",
        ),
        (b"cc -c a.c\nmake: *** [Makefile:3: a.o] Error 1\n", 2, b"make: *** [Makefile:3: a.o] Error 1"),
        (
            b"bash run.sh\nrun.sh: line 4: 1234 Killed  python serve.py\n",
            2,
            b"run.sh: line 4: 1234 Killed  python serve.py",
        ),
        # an exception quoted mid-line (a FAQ's markdown)
        (
            b"**Symptom**: `RuntimeError: tp_size exceeds num_key_value_heads`\n",
            1,
            b"**Symptom**: `RuntimeError: tp_size exceeds num_key_value_heads`",
        ),
        # a colour code glued to the word (\x1b[31merror) hides no error
        (
            b"\x1b[1m\x1b[31merror\x1b[0m: resolution-too-deep\nhint: retry\n",
            1,
            b"error: resolution-too-deep",
        ),
    ],
)
def test_the_last_error_line_and_its_number(log, line, text):
    found = _last(log)
    # colour codes are stripped before the search (prefixes are the caller's, clean_line)
    assert found == (line, text)


@pytest.mark.parametrize(
    "log",
    [b"", b"INFO loading model\nINFO ready\n", b"terror is a word without a boundary? no: interrors\n"],
)
def test_no_error_line(log):
    assert _last(log) is None


def test_the_scan_keeps_the_tail_from_a_line_boundary_and_numbers_the_last_line():
    # 50,000 lines, the error on the last one, which has no newline: the line number is the log's
    filler = b"".join(b"INFO step %d loss 1.0\n" % i for i in range(50_000))
    table = load(known_checks=set(load_checks()))
    result = scan(io.BytesIO(filler + b"ValueError: the end"), table, block_size=1 << 16)
    assert result.lines == 50_001 and len(result.tail) <= TAIL
    assert result.tail.startswith(b"INFO step ") and result.tail.endswith(b"ValueError: the end")
    assert last_error(result.tail, result.lines) == (50_001, b"ValueError: the end")


def test_an_error_before_the_tail_is_not_looked_for():
    # bounded: only the last TAIL bytes are kept, whatever the log's size
    log = b"RuntimeError: early\n" + b"INFO fine\n" * (TAIL // 10 + 10)
    result = scan(io.BytesIO(log), load(known_checks=set(load_checks())))
    assert last_error(result.tail, result.lines) is None
