"""The streaming scanner: bounded memory and time on any input, lines cleaned and grouped."""

from __future__ import annotations

import importlib
import io
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from random import Random
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ascenv.triage import load, triage
from ascenv.triage.scan import MAX_GROUPS, clean_line, newlines, scan

DATA = Path(__file__).parent.parent / "data"
scan_module = importlib.import_module("ascenv.triage.scan")  # the package exports the function scan
TABLE = load()
# corpus errors/dcmi_-8020_...: the line npu-smi prints in a container whose NPU is held elsewhere
DCMI = b"dcmi model initialized failed, because the device is used. ret is -8020"


# Runs its arguments as a child and writes that child's peak RSS (KiB) to the file named first: the
# pytest process's own RUSAGE_CHILDREN already holds the largest child of every earlier test.
_MEASURE = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[2:]).returncode\n"
    "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
    "sys.exit(code)\n"
)


def run_measured(argv: list, tmp_path: Path, **kwargs) -> tuple[subprocess.CompletedProcess, int]:
    peak = tmp_path / "peak-rss"
    child = subprocess.run([sys.executable, "-c", _MEASURE, str(peak), *argv], **kwargs)
    return child, int(peak.read_text())


def triage_piped(writer: str, tmp_path: Path) -> tuple[dict, int]:
    """`ascenv triage -` of what the Python program ``writer`` prints, judged on an empty snapshot:
    its JSON and peak RSS (KiB)."""
    snapshot = tmp_path / "empty.json"
    snapshot.write_text(json.dumps({"schema": 1}))
    with subprocess.Popen([sys.executable, "-c", writer], stdout=subprocess.PIPE) as feed:
        child, peak_kib = run_measured(
            [sys.executable, "-m", "ascenv", "triage", "-", "--from", str(snapshot), "--format", "json"],
            tmp_path,
            stdin=feed.stdout,
            capture_output=True,
            text=True,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)},
            timeout=300,
        )
    return json.loads(child.stdout), peak_kib


def scanned(data: bytes, block_size: int = 1 << 20):
    return scan(io.BytesIO(data), TABLE, block_size=block_size)


def ids(result) -> list[str]:
    return [h.signature.id for h in result.hits]


def test_empty_input_matches_nothing():
    result = scanned(b"")
    assert result.hits == () and result.lines == 0 and result.bytes_read == 0 and not result.binary
    assert triage(io.BytesIO(b""), None, None, TABLE).causes == ()


def test_binary_input_is_scanned_as_text_and_said_so():
    junk = bytes(range(256)) * 64 + b"\n" + DCMI + b"\n" + bytes(range(255, -1, -1)) * 64
    result = scanned(junk)
    assert result.binary
    assert ids(result) == ["dcmi-device-used"]
    assert result.hits[0].first_line == 66  # each range(256) holds one newline (byte 10)


def test_invalid_utf8_and_chinese_text():
    line = "报错：".encode() + b"\xff\xfe " + DCMI + " 设备被占用".encode()
    result = scanned(line + b"\n")
    text = result.hits[0].groups[0].text
    assert text.startswith("报错：\ufffd\ufffd dcmi model") and text.endswith("设备被占用")


def test_crlf_ansi_and_framework_prefixes_are_removed_from_quotes():
    log = (
        b"\x1b[31mERROR 04-18 08:22:17 engine.py:400] " + DCMI + b"\x1b[0m\r\n"
        b"^[[36m(TaskRunner pid=1513738)^[[0m [rank3]: ImportError: libhccl.so: cannot open shared object file:"
        b" No such file or directory\r\n"
        b"[2025-01-01 10:00:00.123+08:00] [12345] [llm] [ERROR] EL0004: Failed to allocate memory.\r\n"
    )
    result = scanned(log)
    quotes = {h.signature.id: h.groups[0].text for h in result.hits}
    assert quotes["dcmi-device-used"] == DCMI.decode()
    assert quotes["missing-library:cann_not_on_path"].startswith("ImportError: libhccl.so")
    assert quotes["device-out-of-memory"].startswith("[12345] [llm] [ERROR] EL0004")
    assert result.lines == 3


def test_clean_line_strips_nested_prefixes():
    assert clean_line(b"INFO 09-03 08:14:32 [default_loader.py:262] [rank0]: x") == "x"
    assert clean_line(b"E           RuntimeError: y") == "RuntimeError: y"


def test_progress_bar_cr_segments_are_separate():
    result = scanned(b"loading 10%\rloading 20%\r" + DCMI + b"\rloading 30%\n")
    assert result.hits[0].groups[0].text == DCMI.decode()


def test_thousands_of_repeats_are_one_group_with_a_count():
    lines = [
        f"[ERROR] RUNTIME({pid},python):2025-03-06-01:09:07.{pid:06d} [driver.cc:65]{pid} "
        "GetDeviceCount:Call drvGetDevNum, drvRetCode=87."
        for pid in range(5000)
    ]
    result = scanned("\n".join(lines).encode(), block_size=4096)
    (hit,) = result.hits
    assert hit.count == 5000
    assert len(hit.groups) == 1 and hit.groups[0].count == 5000 and hit.groups[0].first_line == 1
    cause = triage(io.BytesIO("\n".join(lines).encode()), None, None, TABLE).causes[0]
    assert cause.cause == "device_busy" and len(cause.lines) == 1 and cause.lines[0].count == 5000


def test_distinct_lines_of_one_signature_are_capped():
    log = b"".join(
        f"ImportError: lib{n}x: libhccl.so: cannot open shared object file ({'ab'[n % 2] * n})\n".encode()
        for n in range(50)
    )
    (hit,) = scanned(log).hits
    assert hit.count == 50 and len(hit.groups) == MAX_GROUPS


def test_literal_across_a_block_boundary_is_found_once():
    for cut in range(1, len(DCMI)):
        data = b"x" * (4096 - cut) + b"\n" + DCMI + b"\n" + b"y" * 5000 + b"\n"
        result = scanned(data, block_size=4096)
        assert ids(result) == ["dcmi-device-used"] and result.hits[0].count == 1, cut
        assert result.hits[0].first_line == 2


def test_line_longer_than_a_block_without_newline():
    data = b"z" * 300_000 + DCMI + b"z" * 300_000
    result = scanned(data, block_size=4096)
    assert ids(result) == ["dcmi-device-used"] and result.hits[0].count == 1


def test_last_line_without_newline():
    assert ids(scanned(b"first\n" + DCMI)) == ["dcmi-device-used"]


def test_error_before_a_hole_of_nul_bytes():
    data = b"start\n" + DCMI + bytes(3 << 20) + b"\nend\n"
    assert ids(scanned(data)) == ["dcmi-device-used"]


def test_2gb_log_streams_in_bounded_memory_and_time(tmp_path):
    """A 2 GiB log (a sparse file: 2 GiB of NUL bytes, as a truncated dump leaves them) with a real
    failure appended at its end, triaged by a child `ascenv triage`: its peak RSS and wall time."""
    log = tmp_path / "huge.log"
    with open(log, "wb") as out:
        out.truncate(2 << 30)
        out.seek(2 << 30)
        out.write(
            b"\n" + (DATA / "corpus/errors/dcmi_-8020_device_used_-9005_drvRetCode87_507899_container.txt").read_bytes()
        )
    snapshot = tmp_path / "empty.json"
    snapshot.write_text(json.dumps({"schema": 1}))
    environ = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}
    start = time.monotonic()
    child, peak_kib = run_measured(
        [sys.executable, "-m", "ascenv", "triage", str(log), "--from", str(snapshot), "--format", "json"],
        tmp_path,
        capture_output=True,
        text=True,
        env=environ,
        timeout=300,
    )
    elapsed = time.monotonic() - start
    assert child.returncode in (0, 1), child.stderr
    result = json.loads(child.stdout)
    assert result["input"]["bytes"] == log.stat().st_size
    assert result["causes"][0]["cause"] == "device_busy"
    print(f"2 GiB log: peak RSS {peak_kib} KiB, {elapsed:.1f} s")
    assert peak_kib < 200 * 1024, f"peak RSS {peak_kib} KiB"  # the log is 2 GiB
    assert elapsed < 120, f"{elapsed:.1f} s"


def test_generated_log_through_a_pipe_in_bounded_memory(tmp_path):
    """64 MB of serving-log noise with the failure in the middle, piped to `ascenv triage -`."""
    writer = (
        "import sys\n"
        "noise = b'INFO 04-23 09:25:12 [metrics.py:455] Avg prompt throughput: 0.0 tokens/s\\n' * 10_000\n"
        "out = sys.stdout.buffer\n"
        "for i in range(90):\n"
        "    out.write(noise)\n"
        f"    if i == 45: out.write({DCMI!r} + b'\\n')\n"
    )
    result, peak_kib = triage_piped(writer, tmp_path)
    assert result["input"]["bytes"] > 60_000_000
    assert result["input"]["lines"] == 900_001
    (sig,) = result["signatures"]
    assert sig["id"] == "dcmi-device-used" and sig["first_line"] == 460_001
    assert peak_kib < 200 * 1024, f"peak RSS {peak_kib} KiB"


@given(
    st.lists(st.sampled_from([b"\n", b"a", b"\r", b"\x00"]), max_size=300).map(b"".join),
    st.integers(0, 320),
    st.integers(0, 320),
)
def test_newlines_counts_like_bytes_count(data, start, end):
    assert newlines(data, start, end) == data.count(b"\n", start, end)


# Lines of the recorded logs (tests/data: the labelled triage corpus and the error corpus), with
# their digits changed, colours, CRs, framework prefixes and long lines: scanned by line classes
# (a dense block) they give what the line-by-line scan gives, counts, groups and first lines.
_CORPUS_LINES = sorted(
    {
        line
        for path in sorted((DATA / "triage").glob("*.txt")) + sorted((DATA / "corpus/errors").glob("*.txt"))
        for line in path.read_bytes().splitlines()
        if line.strip()
    }
)
_MATCHING = [line for line in _CORPUS_LINES if TABLE.literals and any(lit.encode() in line for lit in TABLE.literals)]
_DIGITS = st.text("0123456789", min_size=1, max_size=8)


@st.composite
def _variant(draw) -> bytes:
    line = draw(st.sampled_from(_MATCHING) if draw(st.integers(0, 3)) else st.sampled_from(_CORPUS_LINES))
    parts = re.split(rb"([0-9]+)", line)
    for i in range(1, len(parts), 2):
        choice = draw(st.integers(0, 4))
        if choice == 1:
            parts[i] = draw(_DIGITS).encode()  # another number, maybe of another length
        elif choice == 2:
            parts[i] = draw(st.sampled_from([b"0", b"5", b"9"])) * len(parts[i])  # same length, same class
    line = b"".join(parts)
    decoration = draw(st.integers(0, 9))
    if decoration == 1:
        line = b"\x1b[31m" + line + b"\x1b[0m"
    elif decoration == 2:
        line = b"progress 10%\r" + line
    elif decoration == 3:
        line = (
            f"ERROR 04-18 08:{draw(st.integers(0, 59)):02d}:17 [engine.py:{draw(st.integers(0, 999))}] ".encode() + line
        )
    elif decoration == 4:
        line = f"[rank{draw(st.integers(0, 15))}]: ".encode() + line
    elif decoration == 5:
        line = line + b" " + b"x" * draw(st.integers(1000, 1100))
    return line


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(_variant(), st.integers(1, 300)), min_size=1, max_size=12), st.integers(0, 2**32))
def test_dense_blocks_by_class_give_the_line_by_line_result(runs, seed):
    random = Random(seed)
    # copies of a line keep its class; half of them get other digits of the same lengths, so a
    # class holds lines whose digits decide differently ("= 507033" / "= 507034")
    lines = [
        re.sub(rb"[0-9]+", lambda run: bytes(random.choice(b"0123456789") for _ in run[0]), line)
        if random.random() < 0.5
        else line
        for line, repeat in runs
        for _ in range(repeat)
    ]
    random.shuffle(lines)
    data = b"\n".join(lines) + b"\n"
    for block_size in (4096, 1 << 16):
        expected = scan(io.BytesIO(data), TABLE, block_size=block_size, by_class=False)
        assert scan(io.BytesIO(data), TABLE, block_size=block_size) == expected


def test_the_bench_shapes_by_class_give_the_line_by_line_result():
    # every line an error, 1 in 7 with another code; a line whose code only the regex reads
    # (literal "AclSetCompileopt", regex "error code is 500001"), and one read by the regex's
    # string around the digits ("), error code is 19")
    every = "".join(
        f"ERROR 04-18 08:{i // 60 % 60:02d}:{i % 60:02d} [worker.py:{i % 997}] (pid={i % 5000}) "
        f"open device {i % 8} failed, runtime result = {507033 if i % 7 else 507034 + i % 3}.\n"
        + (f"[pid {i}] AclSetCompileopt failed, error code is {500001 + i % 2}\n" if i % 5 == 0 else "")
        + (f"[pid {i}] HcclCommInitRootInfo(comm), error code is {19 + i % 2}\n" if i % 11 == 0 else "")
        for i in range(30_000)
    ).encode()
    expected = scan(io.BytesIO(every), TABLE, by_class=False)
    read_by_class, real = [], scan_module._bulk_block

    def bulk(*args):
        read_by_class.append(real(*args))
        return read_by_class[-1]

    with mock.patch.object(scan_module, "_bulk_block", bulk):
        with mock.patch.object(scan_module, "clean_line", wraps=scan_module.clean_line) as cleaned:
            assert scan(io.BytesIO(every), TABLE) == expected
    assert len(read_by_class) == 4 and None not in read_by_class  # 3.3 MB: every block read by classes
    # and a line is decoded only when first of its class and code: a signature whose regex let a
    # two-digit run decide (device-kernel-exception's "5070(?:15|35)" gave the anchor "00") made
    # every time, pid and device a deciding run, each line its own class value: 42x rg, not 1.9x
    assert cleaned.call_count < 200, cleaned.call_count
    counts = {hit.signature.id: hit.count for hit in expected.hits}
    assert counts["device-setup-error"] == 30_000 - 4_286
    assert counts["acl-compile-opt-500001"] == 3_000 and counts["hccp-init-failed"] == 1_364


def test_a_class_whose_first_line_holds_zeros_in_its_deciding_run():
    # the first line's code is "00": its probe is the class's own zeros, and the three lines with
    # "error code is 19" (hccp-init-failed) must still be told apart
    line = "[rank{}]: RuntimeError: HCCL function error: HcclGetRootInfo(&hcclID), error code is {:02d}\n"
    data = "".join(line.format(i % 8, 19 if i in (70, 150, 230) else 0) for i in range(300)).encode()
    expected = scan(io.BytesIO(data), TABLE, by_class=False)
    assert [h.count for h in expected.hits if h.signature.id == "hccp-init-failed"] == [3]
    assert scan(io.BytesIO(data), TABLE) == expected


def test_a_block_dense_but_not_enough_for_classes_is_read_whole():
    # 64 matching lines spread over more than 128 KiB of a 1 MiB block: read line by line, every
    # one of its 400 matching lines counted (the density probe stops its search at 64)
    noise = b"INFO 04-23 09:25:12 [metrics.py:455] Avg prompt throughput: 0.0 tokens/s\n" * 40
    data = (noise + DCMI + b"\n") * 400
    (hit,) = scanned(data).hits
    assert hit.count == 400 and scanned(data) == scan(io.BytesIO(data), TABLE, by_class=False)


def test_every_line_an_error_through_a_pipe_in_bounded_memory(tmp_path):
    """30 MB where every line is an error with its own time, pid and device (read by classes)."""
    writer = (
        "import sys\n"
        "out = sys.stdout.buffer\n"
        "def line(i):\n"
        "    return (f'ERROR 04-18 08:{i // 60 % 60:02d}:{i % 60:02d} [worker.py:{i % 997}] (pid={i})'\n"
        "            f' open device {i % 8} failed, runtime result = 507033.\\n')\n"
        "for k in range(30):\n"
        "    out.write(''.join(line(i) for i in range(k * 10_000, (k + 1) * 10_000)).encode())\n"
    )
    result, peak_kib = triage_piped(writer, tmp_path)
    assert result["input"]["lines"] == 300_000
    (sig,) = result["signatures"]
    assert sig["id"] == "device-setup-error" and sig["count"] == 300_000 and sig["first_line"] == 1
    assert peak_kib < 200 * 1024, f"peak RSS {peak_kib} KiB"


@pytest.mark.parametrize(
    ("pattern", "anchors"),
    [
        # the parser factors a common prefix out of an alternation: the run goes on through it
        (r"(?i)(?:code is|retCode=) ?(?:507015|507035)\b", (b"000000",)),
        (r"error code is (?:19|20)\b", (b"error code is 00",)),
        (r"result = (?:561003|561103)", (b"result = 000000",)),
        # alternatives that differ in more than digits stay apart; a digit class still says "any"
        (r"(?:a1|b2)c", (b"a0", b"b0")),
        (r"code [13]5", None),
    ],
)
def test_regex_anchors_keep_a_code_whole(pattern, anchors):
    assert scan_module._regex_anchors(re.compile(pattern)) == anchors
