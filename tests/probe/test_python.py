from __future__ import annotations

import glob
import hashlib
import os
import platform
import re
import stat
import sys
import time
from pathlib import Path

import pytest

from ascenv import proc
from ascenv.probe.python import parse_target_output, probe_python
from tests.fixture_hosts import all_gone, hanging_program, pids_in

RECORD = b"torch_npu/__init__.py,sha256=abc,12\ntorch_npu-2.1.0.post3.dist-info/RECORD,,\n"


def _dist_info(site: Path, dirname: str, metadata: str, *, installer=None, wheel=None, record=None) -> None:
    folder = site / dirname
    folder.mkdir(parents=True)
    (folder / "METADATA").write_text(metadata)
    if installer is not None:
        (folder / "INSTALLER").write_text(installer)
    if wheel is not None:
        (folder / "WHEEL").write_text(wheel)
    if record is not None:
        (folder / "RECORD").write_bytes(record)


@pytest.fixture
def sites(tmp_path: Path) -> tuple[Path, Path]:
    """Two site dirs: the first wins on sys.path; each holds a torch_npu (a duplicate install)."""
    first, second = tmp_path / "site-a", tmp_path / "site-b"
    _dist_info(
        first,
        "torch_npu-2.1.0.post3.dist-info",
        "Metadata-Version: 2.1\nName: torch-npu\nVersion: 2.1.0.post3\nSummary: x\n\nName: not-this\n",
        installer="pip\n",
        wheel="Wheel-Version: 1.0\nGenerator: bdist_wheel (0.41.2)\nRoot-Is-Purelib: false\n"
        "Tag: cp310-cp310-manylinux_2_17_aarch64\nTag: cp310-cp310-manylinux2014_aarch64\n",
        record=RECORD,
    )
    _dist_info(
        first,
        "torch-2.1.0+cpu.dist-info",
        "Metadata-Version: 2.1\nName: torch\nVersion: 2.1.0+cpu\n",
        installer="uv",
        wheel="Wheel-Version: 1.0\nTag: cp310-cp310-linux_aarch64\n",
    )
    egg = first / "te-0.4.0-py3.10.egg-info"  # CANN's te/hccl wheels used to be egg installs
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Metadata-Version: 1.0\nName: te\nVersion: 0.4.0\n")
    (first / "single_file-1.0-py3.10.egg-info").write_text("Metadata-Version: 1.0\nName: single-file\nVersion: 1.0\n")
    _dist_info(second, "torch_npu-2.1.0.dist-info", "Metadata-Version: 2.1\nName: torch_npu\nVersion: 2.1.0\n")
    return first, second


def _interpreters() -> list[str]:
    """The venv's python plus every pyenv CPython from 3.7 on that exists on this machine."""
    found = [sys.executable]
    for candidate in sorted(glob.glob("/root/.pyenv/versions/*/bin/python3")):
        match = re.search(r"/versions/(\d+)\.(\d+)\.\d+/", candidate)
        if match and (int(match.group(1)), int(match.group(2))) >= (3, 7):
            found.append(candidate)
    return found


def _env(tmp_path: Path, *sites: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "PYTHONPATH": os.pathsep.join(map(str, sites))}


@pytest.mark.parametrize("interpreter", _interpreters())
def test_reads_metadata_keeping_duplicates_in_sys_path_order(interpreter, sites, tmp_path):
    first, second = sites
    info = probe_python(proc.run, interpreter, None, _env(tmp_path, first, second))
    assert info.errors == ()
    assert re.fullmatch(r"3\.\d+\.\d+", info.version)
    assert info.implementation == "CPython"
    assert info.platform.startswith("linux-")
    mine = [d for d in info.distributions if d.location in (str(first), str(second))]
    assert [(d.name, d.version, d.location) for d in mine] == [
        ("single-file", "1.0", str(first)),
        ("te", "0.4.0", str(first)),
        ("torch", "2.1.0+cpu", str(first)),
        ("torch-npu", "2.1.0.post3", str(first)),
        ("torch_npu", "2.1.0", str(second)),
    ]
    npu = mine[3]
    assert npu.installer == "pip"
    assert npu.wheel_tags == ("cp310-cp310-manylinux_2_17_aarch64", "cp310-cp310-manylinux2014_aarch64")
    assert npu.record_hash == hashlib.sha256(RECORD).hexdigest()
    assert mine[2].installer == "uv" and mine[2].record_hash is None
    assert mine[1].installer is None and mine[1].wheel_tags == ()
    assert info.packages["torch-npu"] == "2.1.0.post3"  # the first on sys.path wins


def test_torch_is_never_imported(tmp_path):
    """A torch package whose import would fail loudly: the probe must not trip over it."""
    site = tmp_path / "site"
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "__init__.py").write_text("raise SystemExit('torch was imported')\n")
    _dist_info(site, "torch-2.4.0.dist-info", "Name: torch\nVersion: 2.4.0\n")
    info = probe_python(proc.run, sys.executable, None, _env(tmp_path, site))
    assert info.errors == ()
    assert info.packages["torch"] == "2.4.0"


def test_python3_is_looked_up_on_the_given_path(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python3").symlink_to(sys.executable)
    info = probe_python(proc.run, None, str(bindir), _env(tmp_path))
    assert info.errors == ()
    assert info.version == platform.python_version()


def test_no_python3_on_path_is_reported(tmp_path):
    info = probe_python(proc.run, None, str(tmp_path), None)
    assert info.distributions == ()
    (error,) = info.errors
    assert error.kind == "not-found" and "python3" in error.message and str(tmp_path) in error.message


def test_missing_executable_is_reported(tmp_path):
    info = probe_python(proc.run, str(tmp_path / "nope" / "python3"), None, None)
    (error,) = info.errors
    assert error.kind == "not-found" and "nope/python3" in error.message


def _script(tmp_path: Path, body: str) -> str:
    path = tmp_path / "fake-python"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_crash_quotes_the_last_line_of_stderr(tmp_path):
    fake = _script(
        tmp_path,
        "echo 'Fatal Python error: init_fs_encoding: failed to get the Python codec' >&2\n"
        "echo \"ModuleNotFoundError: No module named 'encodings'\" >&2\nexit 1\n",
    )
    (error,) = probe_python(proc.run, fake, None, None).errors
    assert error.kind == "exit-status"
    assert error.message.endswith("exited 1: ModuleNotFoundError: No module named 'encodings'")


def test_non_json_output_is_a_parse_error(tmp_path):
    fake = _script(tmp_path, "echo 'Python 2.7.18'\n")
    (error,) = probe_python(proc.run, fake, None, None).errors
    assert error.kind == "parse" and "Python 2.7.18" in error.message


def test_timeout_is_reported():
    def slow(argv, **kwargs):
        return proc.Completed(tuple(argv), proc.TIMEOUT, None, "", "", 20.0)

    (error,) = probe_python(slow, "/usr/bin/python3", None, None).errors
    assert error.kind == "timeout" and "20 s" in error.message


@pytest.mark.parametrize(
    "text, kind",
    [
        ("[1, 2]", "parse"),
        ('{"version": "3.9.1", "distributions": [{"name": "x"}]}', "parse"),
        ("", "parse"),
        ("[" * 100_000 + "]" * 100_000, "parse"),
        ('{"distributions": [{"name": "torch\\ud800", "version": "2.1", "location": "/s"}]}', "parse"),
    ],
    ids=["list", "no-version", "empty", "deep", "surrogate-name"],
)
def test_malformed_output_never_raises(text, kind):
    info = parse_target_output(text, "/usr/bin/python3")
    assert [e.kind for e in info.errors] == [kind]
    if "torch" in text:
        assert info.errors[0].message.startswith("distributions[0].name: not valid Unicode")


def test_a_lone_surrogate_in_the_version_is_kept_printable():
    info = parse_target_output('{"version": "3.11\\ud800", "executable": "/x/\\udcff"}', "/usr/bin/python3")
    assert info.version == "3.11\\ud800" and info.executable == "/x/\\udcff"
    (info.version + info.executable).encode("utf-8")


def test_huge_output_is_reported_as_too_large_not_as_garbage(tmp_path):
    # a sitecustomize or a wrapper that floods stdout: the head of it is no JSON to parse
    fake = _script(tmp_path, f'yes \'{{"version": "3.9"\' | head -c {proc.OUTPUT_LIMIT * 3}\n')
    (error,) = probe_python(proc.run, fake, None, None).errors
    assert error.kind == "too-large"
    assert error.message == (
        f"{fake} printed more than {proc.OUTPUT_LIMIT >> 20} MiB on stdout: only the first "
        f"{proc.OUTPUT_LIMIT >> 20} MiB were read, the rest of what it said is unknown"
    )


def test_valid_json_followed_by_a_flood_is_still_too_large(tmp_path):
    json_text = '{"version": "3.9.1", "distributions": []}'
    fake = _script(tmp_path, f"echo '{json_text}'\nyes | head -c {proc.OUTPUT_LIMIT * 2}\n")
    info = probe_python(proc.run, fake, None, None)
    assert [e.kind for e in info.errors] == ["too-large"]


def test_a_flood_on_stderr_keeps_the_json_of_stdout(tmp_path):
    json_text = '{"version": "3.9.1", "distributions": []}'
    fake = _script(tmp_path, f"echo '{json_text}'\nyes warning | head -c {proc.OUTPUT_LIMIT * 2} >&2\n")
    info = probe_python(proc.run, fake, None, None)
    assert info.version == "3.9.1" and info.errors == ()


@pytest.mark.parametrize("name", ["SEGV", "ABRT", "KILL"])
def test_a_crash_is_named_by_its_signal(tmp_path, name):
    fake = _script(tmp_path, f"echo 'Fatal Python error: Segmentation fault' >&2\nkill -{name} $$\n")
    (error,) = probe_python(proc.run, fake, None, None).errors
    assert error.kind == "exit-status"
    assert error.message == f"{fake} was killed by SIG{name}: Fatal Python error: Segmentation fault"


def test_the_timeout_is_what_the_deadline_leaves(tmp_path):
    fake = _script(tmp_path, "exec sleep 30\n")
    start = time.monotonic()
    (error,) = probe_python(proc.run, fake, None, None, deadline=proc.Deadline(0.5)).errors
    assert time.monotonic() - start < 5
    assert error.kind == "timeout" and error.message == f"{fake} did not answer within 0.5 s"


def test_a_hung_interpreter_leaves_no_process_behind(tmp_path):
    pids = tmp_path / "pids"
    fake = str(hanging_program(tmp_path / "hang", pids))
    (error,) = probe_python(proc.run, fake, None, None, deadline=proc.Deadline(0.5)).errors
    assert error.kind == "timeout"
    assert len(pids_in(pids)) == 2 and all_gone(pids_in(pids))
