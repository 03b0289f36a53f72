"""The forked workers of clean-cache: every job answered, failures handed back, nothing left."""

import os
import signal
import time

import pytest

from ascenv import proc
from ascenv.cache import workers as workers_module
from ascenv.cache.workers import Workers, in_background


@pytest.fixture(autouse=True)
def no_hang():
    """A deadlock fails the test instead of holding up the suite."""

    def hung(signum, frame):
        raise TimeoutError("the workers did not answer within 60 s")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def echo(kind, payload):
    if kind == "die":
        os._exit(3)
    if kind == "raise":
        raise ValueError("a bug in the job")
    if kind == "pid":
        return os.getpid()
    return [s.upper() for s in payload]


def drain(pool, jobs):
    """Submit every (job, arguments) and collect until done: {job: result}, [handed back]."""
    pending = list(jobs)
    results, returned = {}, []
    while pending or pool.busy:
        while pending and pool.submit(pending[0][0], pending[0][1]):
            pending.pop(0)
        done, back = pool.collect(None)
        results.update(done)
        returned += back
        if back and not pool.busy and pending and not pool.submit(pending[0][0], pending[0][1]):
            break  # no worker left
    return results, returned


def gone(pid):
    """The process has exited (reaped, or a zombie waiting for a parent that is not us)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def test_every_job_is_answered_whatever_its_size():
    big = [f"kernel_{i}_0123456789abcdef.o" for i in range(300_000)]  # ~10 MB each way
    jobs = [(i, ("echo", big if i % 7 == 0 else [f"n{i}"] * (i % 5))) for i in range(40)]
    with Workers(2, echo) as pool:
        results, returned = drain(pool, jobs)
    assert returned == []
    assert results == {i: [s.upper() for s in args[1]] for i, args in jobs}


def test_a_worker_that_dies_or_raises_hands_its_job_back_and_the_others_go_on():
    with Workers(2, echo) as pool:
        results, returned = drain(pool, [("a", ("echo", ["x"])), ("dead", ("die", [])), ("bug", ("raise", []))])
        results2, _ = drain(pool, [(n, ("echo", [n])) for n in "bcdef"])
    assert sorted(returned) == ["bug", "dead"]
    assert results == {"a": ["X"]} and results2 == {n: [n.upper()] for n in "bcdef"}


def test_workers_ignore_ctrl_c_and_close_ends_and_reaps_them():
    with Workers(2, echo) as pool:
        results, _ = drain(pool, [(i, ("pid", [])) for i in range(8)])
        pids = set(results.values())
        assert len(pids) == 2 and os.getpid() not in pids
        for pid in pids:
            os.kill(pid, signal.SIGINT)  # the terminal's Ctrl-C reaches the whole process group
        after, returned = drain(pool, [(i, ("pid", [])) for i in range(4)])
        assert returned == [] and set(after.values()) == pids
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # already reaped by close()


def test_in_background_gives_the_result_of_a_forked_process():
    with in_background(os.getpid) as result:
        pid = result()
        assert pid != os.getpid() and result() == pid


def test_in_background_runs_here_when_no_fork_can_be_made_and_only_once(monkeypatch):
    monkeypatch.setattr(workers_module, "can_fork", lambda: False)
    calls = []

    def counted():
        calls.append(os.getpid())
        return os.getpid()

    with in_background(counted) as result:
        assert calls == []  # not before it is asked for
        assert result() == result() == os.getpid()
    assert calls == [os.getpid()]  # the machine facts run npu-smi: not twice


def test_in_background_runs_here_when_the_worker_dies():
    caller = os.getpid()

    def dies_in_the_worker():
        if os.getpid() != caller:
            os._exit(9)
        return os.getpid()

    with in_background(dies_in_the_worker) as result:
        assert result() == os.getpid()


def test_leaving_the_block_ends_what_the_background_worker_runs(tmp_path):
    """A hung helper program (npu-smi) run by the background worker is killed with it: the
    worker unwinds on SIGTERM and proc.run kills the program's process group."""
    pid_file = tmp_path / "pid"

    def hangs():
        proc.run(["sh", "-c", f"echo $$ > {pid_file}; exec sleep 120"], timeout=300)
        return "finished"

    started = time.monotonic()
    with in_background(hangs):
        while not (pid_file.exists() and pid_file.read_text().strip()):
            time.sleep(0.01)
        program = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while not gone(program) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert gone(program), "the program the worker ran outlived it"
    assert time.monotonic() - started < 10  # ended at once, not after the program's own timeout
