import contextlib
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from ascenv import proc
from tests.fixture_hosts import all_gone, daemon_then, flooding_program, hanging_program, pids_in, write_script

MIB = 1 << 20


def test_ok_captures_output():
    done = proc.run([sys.executable, "-c", "print('hi')"], timeout=30)
    assert done.ok and done.status == proc.OK
    assert done.stdout == "hi\n"


def test_missing_program_is_data_not_an_exception():
    done = proc.run(["/nonexistent/npu-smi", "info"], timeout=5)
    assert done.status == proc.NOT_FOUND and not done.ok
    assert "not found" in done.describe()


def test_nonzero_exit_keeps_streams():
    done = proc.run([sys.executable, "-c", "import sys; print('out'); sys.exit('boom')"], timeout=30)
    assert done.status == proc.EXIT and done.returncode == 1
    assert done.stdout == "out\n" and "boom" in done.stderr
    assert "exited 1" in done.describe()


def test_timeout_kills_and_reports():
    done = proc.run([sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.5)
    assert done.status == proc.TIMEOUT and done.duration < 10


def test_undecodable_output_is_replaced():
    done = proc.run([sys.executable, "-c", "import sys; sys.stdout.buffer.write(b'\\xff ok')"], timeout=30)
    assert done.stdout == "\ufffd ok"


def test_os_error_is_data(tmp_path):
    script = tmp_path / "not-executable"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o644)
    done = proc.run([str(script)], timeout=5)
    assert done.status == proc.OS_ERROR


def test_last_line_is_the_last_non_blank_line_stripped():
    describe = (
        "command: npu-smi info\nresult: exited 255\nstdout: (none)\nstderr:\n"
        "    dcmi model initialized failed, because the device is used. ret is -8020\n\n"
    )
    assert proc.last_line(describe) == "dcmi model initialized failed, because the device is used. ret is -8020"
    assert proc.last_line(" \n\n") == ""


# --- bounded output ------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_output_is_cut_at_the_limit_keeping_the_head(stream, tmp_path):
    script = flooding_program(tmp_path / "flood", 20 * MIB, stream, line="head")
    done = proc.run([str(script)], timeout=60, limit=MIB)
    text = getattr(done, stream)
    assert len(text.encode()) == MIB and text.startswith("head\nhead\n")
    assert done.truncated == (stream,)
    assert done.status == proc.EXIT and done.returncode == 1  # the program's own status, not ours
    assert f"{stream}: (cut at 1 MiB)" in done.describe()


def test_both_streams_are_cut_independently(tmp_path):
    script = write_script(tmp_path / "both", "yes out | head -c 3000000\nyes err | head -c 3000000 >&2\n")
    done = proc.run([str(script)], timeout=60, limit=MIB)
    assert done.truncated == ("stdout", "stderr")
    assert done.stdout.startswith("out\n") and done.stderr.startswith("err\n")


def test_default_limit_bounds_every_run(tmp_path):
    script = flooding_program(tmp_path / "flood", proc.OUTPUT_LIMIT + 4096)
    done = proc.run([str(script)], timeout=60)
    assert len(done.stdout.encode()) == proc.OUTPUT_LIMIT and done.truncated == ("stdout",)


def test_output_under_the_limit_is_whole_and_not_marked(tmp_path):
    done = proc.run([sys.executable, "-c", "print('x' * 1000)"], timeout=30, limit=1001)
    assert done.stdout == "x" * 1000 + "\n" and done.truncated == ()
    assert "cut at" not in done.describe()


def test_input_is_fed_to_stdin():
    done = proc.run([sys.executable, "-c", "import sys; print(sys.stdin.read().upper())"], timeout=30, input="abc")
    assert done.stdout == "ABC\n"


# --- process groups ------------------------------------------------------------------------------


def test_timeout_kills_the_grandchildren_too(tmp_path):
    pids = tmp_path / "pids"
    script = hanging_program(tmp_path / "hang", pids)
    done = proc.run([str(script)], timeout=1)
    assert done.status == proc.TIMEOUT and done.duration < 10
    (shell, grandchild) = pids_in(pids)
    assert all_gone([shell, grandchild])


def test_a_daemon_holding_the_pipes_neither_holds_the_run_nor_survives_it(tmp_path):
    pids = tmp_path / "pids"
    script = daemon_then(tmp_path / "daemon", pids, "echo answered")
    start = time.monotonic()
    done = proc.run([str(script)], timeout=30)
    assert time.monotonic() - start < 5  # not the 30 s timeout waiting for the daemon's EOF
    assert done.status == proc.OK and done.stdout == "answered\n"
    (daemon,) = pids_in(pids)
    assert all_gone([daemon])


def test_leftover_background_processes_are_killed_after_a_normal_exit(tmp_path):
    pids = tmp_path / "pids"
    # the daemon's output goes elsewhere, so the pipes close: it is still part of the run's group
    script = write_script(tmp_path / "detach", f'sleep 100000 >/dev/null 2>&1 &\necho "$!" >> "{pids}"\n')
    assert proc.run([str(script)], timeout=30).ok
    (daemon,) = pids_in(pids)
    assert all_gone([daemon])


def test_keyboard_interrupt_kills_the_child_and_its_children(tmp_path):
    pids = tmp_path / "pids"
    script = hanging_program(tmp_path / "hang", pids)
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            proc.run([str(script)], timeout=60)
    finally:
        timer.cancel()  # never a stray SIGINT into a later test
    assert time.monotonic() - start < 10
    assert pids_in(pids) and all_gone(pids_in(pids))


def test_kill_running_stops_runs_of_other_threads(tmp_path):
    pids = tmp_path / "pids"
    script = hanging_program(tmp_path / "hang", pids)
    results: list[proc.Completed] = []
    worker = threading.Thread(target=lambda: results.append(proc.run([str(script)], timeout=60)))
    worker.start()
    deadline = time.monotonic() + 10
    while len(pids_in(pids)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.kill_running()
    worker.join(10)
    assert not worker.is_alive() and results[0].duration < 10
    assert all_gone(pids_in(pids))


# --- how a run ended -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["SIGSEGV", "SIGABRT", "SIGKILL"])
def test_a_signal_death_is_named(name, tmp_path):
    script = write_script(tmp_path / "crash", f"echo before\nkill -{name[3:]} $$\n")
    done = proc.run([str(script)], timeout=30)
    number = int(getattr(signal, name))
    assert done.status == proc.EXIT and done.returncode == -number
    assert done.result == f"killed by {name}"
    assert f"result: killed by {name}" in done.describe() and f"exited -{number}" not in done.describe()


def test_exit_status_wording():
    assert proc.exit_text(0) == "exited 0" and proc.exit_text(3) == "exited 3"
    assert proc.exit_text(-11) == "killed by SIGSEGV"
    assert proc.exit_text(-200) == "killed by signal 200"  # no such signal: the number, still not "exited"


# --- one deadline for several runs ---------------------------------------------------------------


def test_deadline_gives_each_call_what_is_left():
    deadline = proc.Deadline(2.0)
    assert 1.5 < deadline.timeout(15.0) <= 2.0  # the budget is smaller than the call's own timeout
    assert deadline.timeout(0.5) == 0.5  # the call's own timeout is smaller
    assert not deadline.expired


def test_an_expired_deadline_leaves_nothing():
    deadline = proc.Deadline(0.0)
    assert deadline.expired and deadline.timeout(15.0) == 0.0


def test_describe_quotes_both_ends_of_a_long_output():
    lines = [f"line {n}" for n in range(1000)]
    done = proc.Completed(("tool",), proc.EXIT, 1, "\n".join(lines) + "\n", "x" * 100_000, 0.1)
    text = done.describe()
    quoted = [line.strip() for line in text.splitlines()]
    assert quoted[3:5] == ["line 0", "line 1"] and quoted[-3] == "line 999"  # head, tail, then stderr
    assert f"... {1000 - 2 * proc.QUOTED_LINES} more lines not shown ..." in quoted
    assert len(text) < 5000  # the 100 kB line is cut too


def test_describe_keeps_a_short_output_whole():
    done = proc.Completed(("tool",), proc.EXIT, 2, "a\r\nb\n", "", 0.1)
    assert done.describe() == "command: tool\nresult: exited 2\nstdout:\n    a\n    b\nstderr: (none)"


def test_a_ctrl_c_inside_popen_still_kills_the_child_it_started(tmp_path, monkeypatch):
    """Popen raises an interrupt that lands between its fork and its return without killing the
    child; run() holds the signal over that window and acts on it once the child is registered,
    so the child (and its grandchild) is killed, not left running."""
    pids = tmp_path / "pids"
    script = hanging_program(tmp_path / "hang.sh", pids)
    real = proc.subprocess.Popen

    def popen_then_ctrl_c(*args, **kwargs):
        child = real(*args, **kwargs)
        deadline = time.monotonic() + 10
        while len(pids_in(pids)) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGINT)  # as if it came before Popen returned
        time.sleep(0.05)  # a handler that raises would have run by now
        return child

    monkeypatch.setattr(proc.subprocess, "Popen", popen_then_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        proc.run([str(script)], timeout=30)
    assert all_gone(pids_in(pids))
    assert proc._running == {}


def test_held_signals_are_acted_on_when_the_block_ends():
    from ascenv import errors
    from ascenv.signals import held, termination_as_interrupt

    reached = []
    with pytest.raises(KeyboardInterrupt):
        with held():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
            reached.append("end of block")
    assert reached == ["end of block"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with termination_as_interrupt(), pytest.raises(errors.Terminated):
        with held():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)
            reached.append("again")
    assert reached[-1] == "again" and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


# --- ending a group: SIGTERM, a grace, then SIGKILL -----------------------------------------------


def trapping_program(path, pids, marker, trap="cleanup"):
    """A wrapper whose grandchild sleeps; on SIGTERM it cleans up (writes ``marker``, as makeself's
    trap removes its extraction directory) or, with ``trap="ignore"``, ignores it (and so does the
    grandchild, which inherits the ignored signal)."""
    handler = f"'echo cleaned > \"{marker}\"; exit 15'" if trap == "cleanup" else "''"
    return write_script(path, f'trap {handler} TERM\nsleep 100000 &\necho "$$ $!" >> "{pids}"\nwait\nwait\n')


def wait_for_pids(pids, count):
    deadline = time.monotonic() + 10
    while len(pids_in(pids)) < count and time.monotonic() < deadline:
        time.sleep(0.02)
    return pids_in(pids)


def test_a_timed_out_group_gets_sigterm_first_so_its_trap_cleans_up(tmp_path):
    pids, marker = tmp_path / "pids", tmp_path / "cleaned"
    done = proc.run([str(trapping_program(tmp_path / "trap.sh", pids, marker))], timeout=1)
    assert done.status == proc.TIMEOUT
    assert marker.read_text() == "cleaned\n"  # a bare SIGKILL never lets the trap run
    assert all_gone(pids_in(pids))


def test_an_interrupted_run_ends_its_group_with_sigterm_first(tmp_path):
    pids, marker = tmp_path / "pids", tmp_path / "cleaned"
    script = trapping_program(tmp_path / "trap.sh", pids, marker)
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            proc.run([str(script)], timeout=60)
    finally:
        timer.cancel()
    assert marker.read_text() == "cleaned\n" and all_gone(pids_in(pids))


def test_kill_running_ends_other_threads_runs_with_sigterm_first(tmp_path):
    pids, marker = tmp_path / "pids", tmp_path / "cleaned"
    script = trapping_program(tmp_path / "trap.sh", pids, marker)
    results: list[proc.Completed] = []
    worker = threading.Thread(target=lambda: results.append(proc.run([str(script)], timeout=60)))
    worker.start()
    wait_for_pids(pids, 2)
    proc.kill_running()
    worker.join(10)
    assert not worker.is_alive() and results[0].returncode == 15  # the trap's own exit status
    assert marker.read_text() == "cleaned\n" and all_gone(pids_in(pids))


def test_a_group_that_ignores_sigterm_is_killed_after_the_grace(tmp_path, monkeypatch):
    monkeypatch.setattr(proc, "TERM_GRACE", 0.5)
    pids, marker = tmp_path / "pids", tmp_path / "cleaned"
    start = time.monotonic()
    done = proc.run([str(trapping_program(tmp_path / "deaf.sh", pids, marker, trap="ignore"))], timeout=0.5)
    took = time.monotonic() - start
    assert done.status == proc.TIMEOUT and not marker.exists()
    assert all_gone(pids_in(pids))  # SIGKILL after the grace, for the shell and its grandchild
    assert 1.0 <= took < 15  # the timeout, then the whole grace: SIGTERM was not enough


def test_a_run_that_leaves_a_daemon_does_not_wait_the_grace(tmp_path, monkeypatch):
    monkeypatch.setattr(proc, "TERM_GRACE", 60.0)  # waiting it out would be unmistakable
    pids = tmp_path / "pids"
    script = write_script(tmp_path / "detach", f'sleep 100000 >/dev/null 2>&1 &\necho "$!" >> "{pids}"\n')
    start = time.monotonic()
    assert proc.run([str(script)], timeout=30).ok
    assert time.monotonic() - start < 20  # the daemon ended at SIGTERM, at once
    assert all_gone(pids_in(pids))
    start = time.monotonic()
    for _ in range(5):  # nothing left at all: no signal, no wait
        assert proc.run(["true"], timeout=30).ok
    assert time.monotonic() - start < 20


# --- a child does not outlive an ascenv killed with SIGKILL (PR_SET_PDEATHSIG) --------------------

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PARENT = """
import sys, threading
from ascenv import proc
if sys.argv[2] == "no-pdeathsig":
    proc._dies_with = lambda parent, tell=None: None
if sys.argv[2] == "guard-killed-at-start":
    import os, signal
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # inherited through exec: the script and its sleep ignore it

    class Dying(dict):
        def __setitem__(self, key, value):  # just after Popen returns, before ascenv tells the guard anything
            os.kill(os.getpid(), signal.SIGKILL)

    proc._running = Dying()
if sys.argv[2] == "thread":
    worker = threading.Thread(target=proc.run, args=([sys.argv[1]],), kwargs={"timeout": 100})
    worker.start()
    worker.join()
else:
    proc.run([sys.argv[1]], timeout=100, guard=sys.argv[2].startswith("guard"))
"""


def killed_parent(tmp_path, body, mode="main", count=1):
    """Start a Python process that runs ``body`` (a script) through proc.run, SIGKILL it once the
    script has written its pid (and ``count`` - 1 more); returns the script's pid (with them)."""
    pids = tmp_path / "pids"
    script = write_script(tmp_path / "child.sh", f'echo "$$" >> "{pids}"\n{body}\n')
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, str(script), mode],
        cwd=REPO,
        env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": REPO},
    )
    try:
        found = wait_for_pids(pids, count)
        assert len(found) == count
    finally:
        parent.kill()
        parent.wait(30)
    return found[0] if count == 1 else found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux only")
@pytest.mark.parametrize("mode", ["main", "thread"])
def test_a_child_does_not_survive_a_sigkill_of_ascenv(tmp_path, mode):
    child = killed_parent(tmp_path, "exec sleep 100000", mode)  # the signal setting survives exec
    assert all_gone([child])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux only")
def test_the_child_of_a_sigkilled_ascenv_gets_sigterm_and_cleans_up(tmp_path):
    marker = tmp_path / "cleaned"
    child = killed_parent(tmp_path, f"trap 'echo cleaned > \"{marker}\"; exit 0' TERM\nwhile :; do sleep 0.05; done")
    assert all_gone([child])
    deadline = time.monotonic() + 5
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert marker.read_text() == "cleaned\n"


def test_without_pdeathsig_the_child_would_survive(tmp_path):
    """The control for the two tests above: they fail when the setting is not made."""
    child = killed_parent(tmp_path, "exec sleep 100000", "no-pdeathsig")
    try:
        assert not all_gone([child], within=1.0)
    finally:
        os.kill(child, signal.SIGKILL)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux only")
def test_a_guarded_run_leaves_no_grandchild_after_a_sigkill_of_ascenv(tmp_path):
    """PR_SET_PDEATHSIG reaches the direct child only; the guard ends its whole group."""
    pids = tmp_path / "pids"
    found = killed_parent(tmp_path, f'sleep 100000 &\necho "$!" >> "{pids}"\nwait', "guard", count=2)
    assert all_gone(found, within=10)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux only")
def test_a_guard_ends_the_group_of_a_child_started_just_before_ascenv_was_sigkilled(tmp_path):
    """ascenv killed right after starting the child, before it could tell the guard the group: the
    child tells it itself, before its exec. Told by ascenv, the guard left without ending anything
    (1 run in 5 of the trap test below beside two busy loops: its sleep survived). SIGTERM is ignored
    here from the start (inherited through exec), so only the guard's SIGKILL ends the two."""
    pids = tmp_path / "pids"
    found = killed_parent(tmp_path, f'sleep 100000 &\necho "$!" >> "{pids}"\nwait', "guard-killed-at-start", count=2)
    try:
        assert all_gone(found, within=3 * proc.TERM_GRACE)
    finally:
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def test_without_a_guard_the_grandchild_of_a_sigkilled_ascenv_survives(tmp_path):
    """The control: only the direct child got the signal."""
    pids = tmp_path / "pids"
    shell, grandchild = killed_parent(tmp_path, f'sleep 100000 &\necho "$!" >> "{pids}"\nwait', "main", count=2)
    try:
        assert all_gone([shell]) and not all_gone([grandchild], within=1.0)
    finally:
        os.kill(grandchild, signal.SIGKILL)


def test_a_guarded_run_that_ends_normally_leaves_no_guard(tmp_path):
    before = set(os.listdir("/proc")) if os.path.isdir("/proc") else set()
    done = proc.run(["true"], timeout=30, guard=True)
    assert done.ok
    guards = [
        pid
        for pid in set(os.listdir("/proc")) - before
        if pid.isdigit() and os.path.exists(f"/proc/{pid}/cmdline") and b"signal.pause" in _cmdline(pid)
    ]
    assert all_gone([int(pid) for pid in guards])


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read()
    except OSError:
        return b""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux only")
def test_a_guarded_childs_cleanup_trap_may_still_print_after_a_sigkill_of_ascenv(tmp_path):
    """The trap's message goes to a pipe whose reader, ascenv, is dead: the guard holds a read end,
    so the message does not kill the trap with SIGPIPE before its clean-up (makeself's MS_cleanup)."""
    pids, marker = tmp_path / "pids", tmp_path / "cleaned"
    body = (
        f"trap 'echo cleaning up >&2; echo done >&1; echo cleaned > \"{marker}\"; exit 0' TERM\n"
        f'sleep 100000 &\necho "$!" >> "{pids}"\nwait'
    )
    found = killed_parent(tmp_path, body, "guard", count=2)
    assert all_gone(found, within=10)
    assert marker.read_text() == "cleaned\n"
