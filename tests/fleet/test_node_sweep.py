"""node_main.sweep: a rollout step removes the folders earlier runs of the same rollout left in
the node's remote tmp (a controller SIGKILLed mid-wave never ran the playbook's last task), and
nothing else: not a live step's folder, not another run's, not a look-alike, not a symlink."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

from ascenv.fleet import node_main

DEAD, LIVE, OTHER, OWN = "0123456789ab", "aaaaaaaaaaaa", "bbbbbbbbbbbb", "cccccccccccc"


def _run_dir(tmp: Path, run: str, n: int = 0, *, made: bool = False, locked_file: bool = True) -> Path:
    """A run's folder as the playbook and the node step leave it: its Ansible tmp with the bundle."""
    d = tmp / f"ascenv-{run}-{n}"
    (d / "ansible-tmp-1-2").mkdir(parents=True)
    (d / "ansible-tmp-1-2" / "ascenv-node.pyz").write_bytes(b"PK")
    if locked_file:
        (d / node_main.STEP_LOCK).touch()
    if made:
        (d / node_main.MADE_TMP).touch()
    return d


def test_the_folders_of_dead_runs_are_removed_and_the_remote_tmp_mark_moves_to_the_own_run(tmp_path):
    tmp = tmp_path / ".ascenv-fleet-tmp"
    own = _run_dir(tmp, OWN, 2)
    _run_dir(tmp, DEAD, 0, made=True)
    _run_dir(tmp, DEAD, 3, locked_file=False)  # its step never started
    removed, kept = node_main.sweep(str(own), [DEAD], wait=0)
    assert removed == [f"ascenv-{DEAD}-0", f"ascenv-{DEAD}-3"] and kept == []
    assert sorted(p.name for p in tmp.iterdir()) == [own.name]
    assert (own / node_main.MADE_TMP).is_file()  # the own run's last task removes the remote tmp once empty


def test_a_foreign_look_alike_another_runs_folder_and_symlinks_are_never_removed(tmp_path):
    tmp = tmp_path / "t"
    own = _run_dir(tmp, OWN, 0)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep").write_text("x")
    other = _run_dir(tmp, OTHER, 0)  # a run the controller did not name (another rollout, an audit)
    lookalikes = [tmp / f"ascenv-{DEAD}-0x", tmp / f"ascenv-{DEAD.upper()}-0", tmp / f"ascenv-{DEAD}"]
    lookalikes += [tmp / f"xascenv-{DEAD}-1", tmp / f"ascenv-{DEAD}-1-"]
    for d in lookalikes:
        d.mkdir()
    (tmp / f"ascenv-{DEAD}-7").symlink_to(victim)  # the name of a dead run, a symlink
    (tmp / f"ascenv-{DEAD}-8").write_text("a file")
    before = sorted(p.name for p in tmp.iterdir())
    removed, kept = node_main.sweep(str(own), [DEAD, OWN], wait=0)
    assert removed == []
    assert sorted(kept) == [
        f"ascenv-{DEAD}-7: not a directory of this user",
        f"ascenv-{DEAD}-8: not a directory of this user",
    ]
    assert sorted(p.name for p in tmp.iterdir()) == before and (victim / "keep").read_text() == "x"
    assert (other / "ansible-tmp-1-2" / "ascenv-node.pyz").exists()


def test_the_own_run_is_never_removed_even_when_named(tmp_path):
    own = _run_dir(tmp_path / "t", OWN, 0)
    assert node_main.sweep(str(own), [OWN], wait=0) == ([], [])
    assert own.is_dir()


def test_a_live_steps_folder_is_kept_until_its_step_lets_go(tmp_path):
    tmp = tmp_path / "t"
    own = _run_dir(tmp, OWN, 0)
    live = _run_dir(tmp, DEAD, 1)
    fd = os.open(live / node_main.STEP_LOCK, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # as the step of that run holds it while it runs
    try:
        removed, kept = node_main.sweep(str(own), [DEAD], wait=0.3)
    finally:
        os.close(fd)
    assert removed == [] and kept == [f"ascenv-{DEAD}-1: a step still runs in it after 0 s"]
    assert (live / "ansible-tmp-1-2" / "ascenv-node.pyz").exists()
    # a step that ends while the sweep waits: its folder goes once it has ended
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import fcntl,os,time; fd=os.open({str(live / node_main.STEP_LOCK)!r}, os.O_RDWR);"
            "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(1.5)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    start = time.monotonic()
    removed, kept = node_main.sweep(str(own), [DEAD], wait=60)
    holder.wait()
    holder.stdout.close()
    assert removed == [f"ascenv-{DEAD}-1"] and kept == [] and not live.exists()
    assert time.monotonic() - start < 60


def test_the_step_lock_is_held_by_a_running_step(tmp_path):
    run_dir = _run_dir(tmp_path / "t", LIVE, 0, locked_file=False)
    bundle = run_dir / "ansible-tmp-1-2" / "ascenv-node.pyz"
    assert node_main.run_dir_of(str(bundle)) == str(run_dir)
    assert node_main.run_dir_of(str(tmp_path / "x" / "ansible-tmp-1" / "b.pyz")) is None  # by hand: no lock, no sweep
    probe = (
        "import sys; from ascenv.fleet import node_main as m; m._hold_step_lock(sys.argv[1]);"
        "print('held', flush=True); sys.stdin.read()"
    )
    step = subprocess.Popen(
        [sys.executable, "-c", probe, str(run_dir)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert step.stdout is not None and step.stdout.readline() == "held\n"
        fd = os.open(run_dir / node_main.STEP_LOCK, os.O_RDONLY)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held = False
            except BlockingIOError:
                held = True
        finally:
            os.close(fd)
        assert held
    finally:
        step.kill()
        step.communicate()
    own = _run_dir(tmp_path / "t", OWN, 1)
    assert node_main.sweep(str(own), [LIVE], wait=5) == ([f"ascenv-{LIVE}-0"], [])  # SIGKILL let go of it
