"""SIGTERM and SIGHUP unwind like Ctrl-C in every command that runs long children (install,
fleet, bench run, build, image build): exit 130, the children ended, temp files removed. Without
it SIGTERM killed ascenv at once, no ``finally`` ran, and `fleet audit` left ansible-playbook
running and its bundle in /tmp (F4), `install` its installer (I4)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ascenv import errors, signals
from tests.fixture_hosts import all_gone, pids_in, write_script

REPO = Path(__file__).resolve().parents[1]


def ascenv_process(argv: list[str], cwd: Path, **env: str) -> subprocess.Popen:
    environ = {"PATH": os.environ.get("PATH", ""), "HOME": str(cwd), "PYTHONPATH": str(REPO), **env}
    return subprocess.Popen(
        [sys.executable, "-m", "ascenv", *argv], cwd=cwd, env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_during_fleet_audit_ends_ansible_playbook_and_removes_the_bundle(tmp_path: Path, signum: int) -> None:
    """F4: `kill -TERM` gave exit 143; ansible-playbook ran on until the node timeout and
    /tmp/ascenv-fleet-XXXX/ascenv-node.pyz stayed."""
    pids = tmp_path / "pids"
    write_script(tmp_path / "bin" / "ansible-playbook", f'sleep 100000 &\necho "$$ $!" >> "{pids}"\nwait\n')
    (tmp_path / "inventory").write_text("n1 ansible_host=127.0.0.1\n")
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    path = f"{tmp_path / 'bin'}:{os.environ.get('PATH', '')}"
    with ascenv_process(["fleet", "audit", "-i", "inventory"], tmp_path, PATH=path, TMPDIR=str(tmpdir)) as run:
        deadline = time.monotonic() + 60
        while len(pids_in(pids)) < 2 and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.05)
        assert len(pids_in(pids)) == 2, run.communicate()
        assert [p.name for p in tmpdir.iterdir()] and all(p.name.startswith("ascenv-fleet-") for p in tmpdir.iterdir())
        run.send_signal(signum)
        _, err = run.communicate(timeout=60)
    assert run.returncode == errors.EXIT_INTERRUPTED, err
    assert b"interrupted" in err and b"Traceback" not in err
    assert all_gone(pids_in(pids))
    assert list(tmpdir.iterdir()) == []


# Each command's first step sends SIGTERM to ascenv itself, then waits: the command must unwind
# (exit 130), not die of the signal (-15) nor go on.
SIGTERM_AT_FIRST_STEP = """
import os, signal, sys, time
from ascenv import builder, cli
import ascenv.commands.image as image_command

def first_step(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(10)
    raise SystemExit("SIGTERM was ignored")

builder.load_target = first_step
image_command.load_pins = first_step
sys.exit(cli.main(sys.argv[1:]))
"""


@pytest.mark.parametrize(
    "argv", [["bench", "run", "add_custom"], ["build", "add_custom"], ["image", "build", "ascend-cann"]]
)
def test_sigterm_unwinds_the_commands_that_run_long_children(tmp_path: Path, argv: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SIGTERM_AT_FIRST_STEP, *argv],
        cwd=tmp_path,
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "PYTHONPATH": str(REPO)},
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == errors.EXIT_INTERRUPTED, done.stderr
    assert b"interrupted" in done.stderr and b"SIGTERM was ignored" not in done.stderr


def test_termination_as_interrupt_as_a_decorator_restores_the_handlers_every_call() -> None:
    seen = []

    @signals.termination_as_interrupt()
    def work() -> None:
        seen.append(signal.getsignal(signal.SIGTERM))

    for _ in range(2):
        work()
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    assert len(seen) == 2 and all(callable(h) and h is not signal.SIG_DFL for h in seen)
