"""Standard output that fails, for every command (issue 28, X1/X2 of the second adversarial round):
stdout on ``/dev/full`` is exit 2 with one line "cannot write standard output: …"; stdout whose
reader is gone (``| head``) is exit 141 (128 + SIGPIPE, README's table), quietly; never exit 3 or
1, never a traceback. Each command runs as a user runs it, in its own process, with arguments
that make it print (on a fixture host)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ascenv import cli, errors
from tests.cli_helpers import run_cli
from tests.fixture_hosts import build_host

REPO = Path(__file__).resolve().parents[1]

# Commands whose printing run needs what a test machine lacks (a Docker engine, Ansible nodes, a
# built operator): their --help is what they print here, through the same parser and stdout.
HELP_ONLY = {"build", "fleet", "install", "image"}


@pytest.fixture(scope="module")
def machine(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("stdout")
    host = build_host("a2-cann800", tmp / "hosts")
    environ = {**os.environ, **host.environ, "PYTHONPATH": str(REPO)}
    code, _, err = run_cli(["snapshot", "--root", str(host.root), "-o", str(tmp / "snap.json")], host.environ, tmp)
    assert code == 0, err
    code, _, err = run_cli(["lock", "--from", "snap.json", "-o", "good.lock"], host.environ, tmp)
    assert code == 0, err
    (tmp / "app.log").write_text("RuntimeError: EZ3002 the op is not supported\n" * 50)
    root = str(host.root)
    argv = {
        "doctor": ["doctor", "--from", "snap.json"],
        "explain": ["explain"],
        "triage": ["triage", "app.log"],
        "snapshot": ["snapshot", "--root", root],
        "lock": ["lock", "--from", "snap.json", "--format", "json", "-o", "again.lock"],
        "diff": ["diff", "snap.json", "good.lock"],
        "report": ["report", "--from", "snap.json", "--format", "json", "-o", "r.tar.gz"],
        "store": ["store", "ls", "--store", "store"],
        "bench": ["bench", "history", "add_custom", "--store", "store"],
        "package": ["package", "--help"],
        "op": ["op", "check", "--root", root],
        "clean-cache": ["clean-cache", "ls"],
        **{name: [name, "--help"] for name in HELP_ONLY},
    }
    return {"cwd": tmp, "environ": environ, "argv": argv}


def _names() -> list[str]:
    return [spec.name for spec in cli.command_specs()]


def test_every_command_is_exercised(machine: dict) -> None:
    assert set(machine["argv"]) == set(_names())


def _ascenv(machine: dict, argv: list[str], stdout: object) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ascenv", *argv],
        cwd=machine["cwd"],
        env=machine["environ"],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("name", _names())
def test_a_full_stdout_is_exit_2_with_one_line(machine: dict, name: str) -> None:
    printed = _ascenv(machine, machine["argv"][name], subprocess.PIPE)
    assert printed.stdout, f"{name} prints nothing: the test would not test it"
    with open("/dev/full", "w") as full:
        done = _ascenv(machine, machine["argv"][name], full)
    assert done.returncode == errors.EXIT_USAGE, done.stderr
    assert done.stderr == "ascenv: cannot write standard output: No space left on device\n"


@pytest.mark.parametrize("name", _names())
def test_a_closed_reader_is_exit_141_quietly(machine: dict, name: str) -> None:
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first byte: every write is EPIPE
    try:
        done = _ascenv(machine, machine["argv"][name], write)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (errors.EXIT_STDOUT_CLOSED, "")


@pytest.mark.parametrize("name", ["doctor", "explain", "snapshot", "diff", "triage"])
def test_head_c_1_ends_with_the_command_s_own_code_or_141(machine: dict, name: str) -> None:
    """``| head -c 1``: head exits after one byte; whether ascenv had written everything into the
    pipe by then is a race, so either code is right, and nothing else is."""
    own = _ascenv(machine, machine["argv"][name], subprocess.DEVNULL).returncode
    argv = [sys.executable, "-m", "ascenv", *machine["argv"][name]]
    popen = {"cwd": machine["cwd"], "env": machine["environ"], "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    with subprocess.Popen(argv, **popen) as first:  # type: ignore[call-overload]
        with subprocess.Popen(["head", "-c", "1"], stdin=first.stdout, stdout=subprocess.DEVNULL) as head:
            first.stdout.close()
            err = first.stderr.read()
            assert first.wait(timeout=120) in (own, errors.EXIT_STDOUT_CLOSED)
            assert head.wait(timeout=30) == 0
    assert err == b""


def test_a_closed_descriptor_is_exit_2(machine: dict) -> None:
    """``ascenv doctor >&-``: Python starts with ``sys.stdout = None``."""
    done = subprocess.run(
        [sys.executable, "-m", "ascenv", *machine["argv"]["doctor"]],
        cwd=machine["cwd"],
        env=machine["environ"],
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        preexec_fn=lambda: os.close(1),
    )
    assert done.returncode == errors.EXIT_USAGE
    assert done.stderr == "ascenv: cannot write standard output: Bad file descriptor\n"


@pytest.mark.parametrize("argv", [["--help"], ["explain", "--help"], ["--version"], ["store", "gc", "--help"]])
def test_help_and_version_on_a_full_stdout_are_exit_2(machine: dict, argv: list[str]) -> None:
    """argparse drops the OSError of printing --help and exits 0: the text is lost silently."""
    with open("/dev/full", "w") as full:
        done = _ascenv(machine, argv, full)
    assert (done.returncode, done.stderr) == (
        errors.EXIT_USAGE,
        "ascenv: cannot write standard output: No space left on device\n",
    )
