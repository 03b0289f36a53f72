"""Forked workers for clean-cache (the scanner's, and the machine facts gathered beside it): a
pool lighter than ``concurrent.futures``.

Importing ``concurrent.futures.process`` and ``multiprocessing`` costs 30 to 45 ms and starting
a pool 10 more, on a command whose whole budget on 200,000 files is 1.5x ``du -s`` (about 0.45 s
on two cores, ``bench/bench_cache_scan.py``); its manager thread also competes with the caller,
which here scans too. A worker here is a plain ``fork()`` of the caller: it reads argument
tuples from its job pipe, calls one function on them and writes each result to its result pipe,
in order. Jobs and results are plain data (tuples, lists, str, bytes, numbers, None), framed
with ``marshal``: both ends are the same interpreter.

Nothing is left behind. A worker ignores SIGINT (the terminal's Ctrl-C is the caller's to act
on) and ends at EOF of its job pipe or when its result pipe is closed. ``close()`` ends it with
SIGTERM, which unwinds it like an interrupt (a program it runs through ``proc.run`` is killed on
the way out), then SIGKILL if it is still there, and reaps it. The caller never blocks on a write
(its ends are non-blocking and what does not fit waits in a buffer), so a worker stuck writing
a large result cannot deadlock it. A worker that dies, or whose call raises, hands its job back
for the caller to run itself, where a failure raises with its own traceback.
"""

from __future__ import annotations

import contextlib
import fcntl
import marshal
import os
import select
import signal
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from typing import Any, Callable, Optional

from ascenv.signals import held

DEPTH = 2  # jobs queued per worker: it never waits for the caller between two jobs
_HEADER = 8  # bytes of a frame's length
PIPE_SIZE = 1 << 20  # the unprivileged maximum by default (/proc/sys/fs/pipe-max-size)
GRACE = 2.0  # seconds a worker has to unwind after SIGTERM before it is killed
# The caller's ends of every worker's pipes: a worker forked later closes them, or a worker
# would never see EOF on its job pipe while another still held its write end.
_CALLER_ENDS: set[int] = set()


def can_fork() -> bool:
    """Whether a fork copies a whole working process: it copies only the calling thread, so
    with others running (Python's or a library's) their locks and state would be copied
    half-way."""
    try:
        return len(os.listdir("/proc/self/task")) == 1  # every thread, not only Python's
    except OSError:
        return threading.active_count() == 1


class _Ended(BaseException):
    """SIGTERM in a worker: unwinds it (``finally`` blocks run), caught nowhere but at its top."""


def _end_on_sigterm(signum: int, frame: object) -> None:
    raise _Ended


def _frame(value: Any) -> bytes:
    data = marshal.dumps(value)
    return len(data).to_bytes(_HEADER, "little") + data


def _read_exactly(fd: int, size: int) -> Optional[bytes]:
    parts = []
    while size:
        part = os.read(fd, min(size, 1 << 20))
        if not part:
            return None
        parts.append(part)
        size -= len(part)
    return b"".join(parts)


def _widen(fd: int) -> None:
    """Make a pipe hold a whole job (a chunk of names is some 70 kB; the default holds 64 kB):
    otherwise the worker waits for the rest until the caller, busy scanning, next writes."""
    try:
        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_SIZE)  # Linux, fcntl(2)
    except OSError:
        pass  # above /proc/sys/fs/pipe-max-size for this user: the default size still works


def _serve(jobs: int, results: int, function: Callable[..., Any]) -> None:
    """A worker's life: call ``function`` on each job until EOF; (True, result) or (False, why)."""
    while True:
        header = _read_exactly(jobs, _HEADER)
        if header is None:
            return
        data = _read_exactly(jobs, int.from_bytes(header, "little"))
        if data is None:
            return
        try:
            reply: tuple = (True, function(*marshal.loads(data)))
        except Exception as exc:  # noqa: BLE001 - handed back: the caller runs the job itself
            reply = (False, f"{type(exc).__name__}: {exc}")
        frame = memoryview(_frame(reply))
        while frame:
            frame = frame[os.write(results, frame) :]


class _Worker:
    def __init__(self, pid: int, jobs: int, results: int) -> None:
        self.pid = pid
        self.jobs = jobs  # our (non-blocking) write end of its job pipe
        self.results = results  # our read end of its result pipe
        self.sent: deque = deque()  # jobs given, oldest first: results come back in this order
        self.outgoing = bytearray()
        self.incoming = bytearray()


class Workers:
    """``count`` forked workers calling ``function``. ``submit`` queues a job on the least busy
    worker with room; ``collect`` waits for results. Fork failures raise OSError (the caller
    then works alone)."""

    def __init__(self, count: int, function: Callable[..., Any]) -> None:
        self._workers: list[_Worker] = []
        try:
            for _ in range(count):
                with held():  # a Ctrl-C between the fork and the registration would orphan it
                    self._workers.append(self._start(function))
        except BaseException:
            self.close()
            raise

    def _start(self, function: Callable[..., Any]) -> _Worker:
        job_read, job_write = os.pipe()
        result_read, result_write = os.pipe()
        for fd in (job_write, result_write):
            _widen(fd)
        try:
            pid = os.fork()
        except OSError:
            for fd in (job_read, job_write, result_read, result_write):
                os.close(fd)
            raise
        if pid == 0:  # the worker: never returns into the caller's code
            status = 1
            try:
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                signal.signal(signal.SIGHUP, signal.SIG_IGN)
                signal.signal(signal.SIGTERM, _end_on_sigterm)
                for fd in (job_write, result_read, *_CALLER_ENDS):  # this pool's and every other's
                    os.close(fd)
                _serve(job_read, result_write, function)
                status = 0
            except (BrokenPipeError, _Ended):
                status = 0  # the caller closed its end or ended it: nothing more is wanted
            finally:
                os._exit(status)
        os.close(job_read)
        os.close(result_write)
        os.set_blocking(job_write, False)
        _CALLER_ENDS.update((job_write, result_read))
        return _Worker(pid, job_write, result_read)

    @property
    def busy(self) -> bool:
        return any(w.sent for w in self._workers)

    def submit(self, job: Any, arguments: Sequence[Any]) -> bool:
        """Queue ``function(*arguments)``; False (nothing queued) when every worker has DEPTH
        jobs. ``job`` is what ``collect`` hands back with the result."""
        worker = min(self._workers, key=lambda w: len(w.sent), default=None)
        if worker is None or len(worker.sent) >= DEPTH:
            return False
        worker.sent.append(job)
        worker.outgoing += _frame(tuple(arguments))
        self._flush(worker)
        return True

    def collect(self, timeout: Optional[float]) -> tuple[list[tuple[Any, Any]], list[Any]]:
        """Wait up to ``timeout`` seconds (None: until something happens) for results:
        ((job, result) in the order they came, jobs handed back to run in the caller)."""
        waiting = [w for w in self._workers if w.sent]
        if not waiting:
            return [], []
        poller = select.poll()  # not select(): a busy caller may hold descriptors past FD_SETSIZE
        for worker in waiting:
            poller.register(worker.results, select.POLLIN)
            if worker.outgoing:
                poller.register(worker.jobs, select.POLLOUT)
        ready = {fd for fd, _ in poller.poll(None if timeout is None else int(timeout * 1000))}
        done: list[tuple[Any, Any]] = []
        returned: list[Any] = []
        for worker in waiting:
            if worker.jobs in ready:
                self._flush(worker)
            if worker.results in ready:  # readable, at EOF, or in error: _receive tells them apart
                self._receive(worker, done, returned)
        return done, returned

    def _flush(self, worker: _Worker) -> None:
        try:
            while worker.outgoing:
                del worker.outgoing[: os.write(worker.jobs, worker.outgoing)]
        except BlockingIOError:
            pass  # the pipe is full: the rest goes when the worker has read some
        except BrokenPipeError:
            pass  # it died: its result pipe says so at EOF

    def _receive(self, worker: _Worker, done: list, returned: list) -> None:
        data = os.read(worker.results, 1 << 20)
        if not data:  # it died: its jobs are the caller's
            returned.extend(worker.sent)
            self._workers.remove(worker)
            self._end(worker)
            return
        worker.incoming += data
        while len(worker.incoming) >= _HEADER:
            size = int.from_bytes(worker.incoming[:_HEADER], "little")
            if len(worker.incoming) < _HEADER + size:
                break
            ok, value = marshal.loads(worker.incoming[_HEADER : _HEADER + size])
            del worker.incoming[: _HEADER + size]
            job = worker.sent.popleft()
            if ok:
                done.append((job, value))
            else:
                returned.append(job)

    @staticmethod
    def _end(worker: _Worker) -> None:
        for fd in (worker.jobs, worker.results):
            os.close(fd)
            _CALLER_ENDS.discard(fd)
        if not _reaped(worker.pid, signal.SIGTERM, GRACE):
            _reaped(worker.pid, signal.SIGKILL, None)  # a hung NFS stat: it ends when the kernel lets it

    def close(self) -> None:
        while self._workers:
            self._end(self._workers.pop())

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _reaped(pid: int, signum: int, within: Optional[float]) -> bool:
    """Send ``signum`` and reap ``pid``: False if it is still running after ``within`` seconds."""
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass  # exited (a zombie, not yet reaped, would still take the signal)
    try:
        if within is None:
            os.waitpid(pid, 0)
            return True
        end = time.monotonic() + within
        while os.waitpid(pid, os.WNOHANG) == (0, 0):
            if time.monotonic() > end:
                return False
            time.sleep(0.002)
    except ChildProcessError:
        pass  # already reaped (by a SIGCHLD handler of the caller's, say)
    return True


@contextlib.contextmanager
def in_background(function: Callable[[], Any]) -> Iterator[Callable[[], Any]]:
    """Start ``function()`` (returning plain data) in a forked worker at once, and yield what
    waits for its result (called once, however often it is asked for). It runs in this process
    instead, when the result is asked for, if no worker can be forked or it died or raised.
    Leaving the block ends the worker."""
    pool = None
    if can_fork():
        try:
            pool = Workers(1, function)
        except OSError:
            pool = None
    answers: list = []

    def result() -> Any:
        while not answers:
            done, returned = pool.collect(None) if pool is not None else ([], [])
            if done:
                answers.append(done[0][1])
            elif pool is None or returned or not pool.busy:
                answers.append(function())
        return answers[0]

    if pool is None:
        yield result
        return
    with pool:
        pool.submit(None, ())
        yield result
