"""Run external commands: the only module that imports ``subprocess``.

A command that is missing, times out or cannot be started is *data* (a ``Completed`` with a
status), never an exception: a missing ``npu-smi`` is a finding, not a traceback.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Optional

from ascenv.signals import held
from ascenv.words import counted

OK = "ok"  # ran and exited 0
EXIT = "exit"  # ran and exited non-zero, or was killed by a signal (a negative returncode)
NOT_FOUND = "not-found"  # the program is not on PATH (or the path does not exist)
TIMEOUT = "timeout"  # killed after the timeout
OS_ERROR = "os-error"  # could not be started (permission, bad format, ...)

# The most kept of each of stdout and stderr. npu-smi's largest real answers are tens of KB and the
# target-Python probe prints a few hundred; a tool that prints more is broken or hostile, and
# holding gigabytes of it (then copying them as text) cost gigabytes of memory. The head is kept:
# it holds the table or the first error, the rest is read and dropped so the program can finish.
OUTPUT_LIMIT = 4 << 20
# After the program exits, how long to wait for its pipes to reach EOF: a background child it left
# (``cmd &`` in a wrapper script) holds them open, and would otherwise hold the run until the timeout.
EXIT_GRACE = 0.5
# How long a process group that is ended gets between SIGTERM and SIGKILL. Long enough for a
# shell's trap to run: makeself's ``trap MS_cleanup 1 2 3 15`` removes its $TMPDIR/selfgzNNN
# extraction directory (makeself-header.sh, 2.4.5), which a bare SIGKILL leaves behind (I10);
# short enough that a Ctrl-C still feels immediate. systemd's default is 90 s (TimeoutStopSec),
# coreutils ``timeout -k`` takes the duration from its caller; a few seconds suits programs that
# only have temp files to remove.
TERM_GRACE = 3.0
_CHUNK = 1 << 16


@dataclass(frozen=True)
class Completed:
    argv: tuple[str, ...]
    status: str
    returncode: Optional[int]
    stdout: str
    stderr: str
    duration: float
    truncated: tuple[str, ...] = ()  # the streams cut at the limit: "stdout", "stderr"
    limit: int = OUTPUT_LIMIT  # where they were cut, in bytes

    @property
    def ok(self) -> bool:
        return self.status == OK

    @property
    def command(self) -> str:
        return " ".join(shlex.quote(a) for a in self.argv)

    @property
    def result(self) -> str:
        """How the run ended, in words: "exited 1", "killed by SIGSEGV", "timed out after 15.0 s"."""
        if self.status in (OK, EXIT) and self.returncode is not None:
            return exit_text(self.returncode)
        return {
            NOT_FOUND: "not found",
            TIMEOUT: f"timed out after {self.duration:.1f} s",
            OS_ERROR: "could not be started",
        }.get(self.status, self.status)

    def describe(self) -> str:
        """A complete, readable account of the run (the shape pre-commit uses)."""

        def block(name: str, text: str) -> str:
            cut = f" (cut at {_size(self.limit)})" if name in self.truncated else ""
            text = text.rstrip("\n")
            body = " (none)" if not text else "\n" + "\n".join("    " + line for line in _excerpt(text))
            return f"{name}:{cut}{body}"

        return "\n".join(
            (
                f"command: {self.command}",
                f"result: {self.result}",
                block("stdout", self.stdout),
                block("stderr", self.stderr),
            )
        )


# describe() quotes a stream's first and last lines, each cut to a width: the reason a tool gives
# for failing is at one end, and a message holding megabytes of output is no message.
QUOTED_LINES = 20
QUOTED_WIDTH = 500


def _excerpt(text: str) -> list[str]:
    lines = text.split("\n", QUOTED_LINES)  # the head without splitting all of a large output
    if len(lines) <= QUOTED_LINES:
        shown = lines
    else:
        tail = text.rsplit("\n", QUOTED_LINES)[1:]
        hidden = text.count("\n") + 1 - 2 * QUOTED_LINES
        if hidden <= 0:
            shown = text.split("\n")
        else:
            shown = lines[:QUOTED_LINES] + [f"... {counted(hidden, 'more line')} not shown ..."] + tail
    shown = [line.rstrip("\r") for line in shown]
    return [line if len(line) <= QUOTED_WIDTH else line[:QUOTED_WIDTH] + " ..." for line in shown]


def exit_text(returncode: int) -> str:
    """ "exited N", or "killed by SIGNAME" for a negative returncode (subprocess's convention for a
    child ended by a signal: https://docs.python.org/3/library/subprocess.html#subprocess.Popen.returncode)."""
    if returncode >= 0:
        return f"exited {returncode}"
    try:
        return f"killed by {signal.Signals(-returncode).name}"
    except ValueError:
        return f"killed by signal {-returncode}"


def cut_message(done: Completed, stream: str, name: Optional[str] = None) -> str:
    """What a probe says of output cut at the limit: the head was read, the rest is unknown.
    ``name`` stands for the program (default: the whole command line)."""
    size = _size(done.limit)
    return (
        f"{name or done.command} printed more than {size} on {stream}: "
        f"only the first {size} were read, the rest of what it said is unknown"
    )


def _size(count: int) -> str:
    if count >= 1 << 20:
        return f"{count / (1 << 20):.1f}".rstrip("0").rstrip(".") + " MiB"
    return f"{count} bytes"


class Deadline:
    """One time budget shared by several runs: each gets ``timeout(its own)``, the smaller of its
    own timeout and what is left, so a series of slow or hung commands ends at the deadline."""

    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + max(0.0, seconds)

    @property
    def left(self) -> float:
        return max(0.0, self.end - time.monotonic())

    @property
    def expired(self) -> bool:
        return self.left <= 0.0

    def timeout(self, own: float) -> float:
        return min(own, self.left)


Runner = Callable[..., Completed]

# Every child still running, by pid: kill_running() ends them when ascenv is interrupted while
# another thread waits on one (the main thread's own run kills its child as it unwinds).
_running: dict[int, subprocess.Popen] = {}
_running_lock = threading.Lock()


def run(
    argv: Sequence[str],
    *,
    timeout: float,
    env: Optional[Mapping[str, str]] = None,
    cwd: Optional[str] = None,
    input: Optional[str] = None,
    limit: int = OUTPUT_LIMIT,
    guard: bool = False,
) -> Completed:
    """Run ``argv`` with a timeout and capture its output as text (undecodable bytes replaced),
    at most ``limit`` bytes of each stream.

    The program runs in a session (and process group) of its own, and when the run ends (exit,
    timeout, or an exception such as KeyboardInterrupt in the waiting thread) whatever is left of
    that group is ended, SIGTERM then SIGKILL after ``TERM_GRACE``: a timed-out wrapper script's
    ``sleep`` or a daemon a tool forked must not outlive ascenv (``subprocess.run`` kills only the
    direct child). The child also gets SIGTERM should ascenv die without unwinding (``_dies_with``);
    with ``guard``, so does its whole group, then SIGKILL (``_Guard``): for a long run whose
    children must not outlive even a SIGKILL'd ascenv (an installer writing a vendor tree)."""
    argv = tuple(str(a) for a in argv)
    start = time.monotonic()

    def failed(status: str, message: str) -> Completed:
        return Completed(argv, status, None, "", message, time.monotonic() - start, (), limit)

    child: Optional[subprocess.Popen] = None
    watch: Optional[_Guard] = None
    try:
        if guard:  # ready before the child starts: no moment where ascenv's death goes unnoticed
            watch = _Guard.start()
        # Started and registered at once. Under the lock: an interrupt's kill_running() on another
        # thread must not miss a child that runs but is not registered yet. With the signals held:
        # a Ctrl-C or SIGTERM on this thread between the fork and the registration (inside Popen,
        # which does not kill the child it leaves) would leave it running, known to no clean-up;
        # it is acted on right after, here, where the ``finally`` kills the child.
        tell = watch.fd if watch is not None else None
        with held(), _running_lock:
            try:
                child = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL if input is None else subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    env=None if env is None else dict(env),
                    cwd=cwd,
                    start_new_session=True,
                    preexec_fn=_dies_with(os.getpid(), tell),
                )
            except FileNotFoundError as exc:
                return failed(NOT_FOUND, str(exc))
            except OSError as exc:
                return failed(OS_ERROR, f"{type(exc).__name__}: {exc}")
            _running[child.pid] = child
            if watch is not None and tell is None:
                watch.watch(child.pid)
        out, err, timed_out = _communicate(child, input, start + max(0.0, timeout), limit)
    finally:
        if child is not None:
            _kill_group(child)
            with _running_lock:
                _running.pop(child.pid, None)
        if watch is not None:
            watch.stop()
    code = child.returncode
    status = TIMEOUT if timed_out else OK if code == 0 else EXIT
    cut = tuple(name for name, data in (("stdout", out), ("stderr", err)) if data.overflowed)
    return Completed(
        argv,
        status,
        None if timed_out else code,
        _text(out.data),
        _text(err.data),
        time.monotonic() - start,
        cut,
        limit,
    )


def kill_running() -> None:
    """End every child this process is running, with its process group (an interrupt's clean-up):
    SIGTERM, up to ``TERM_GRACE`` seconds, then SIGKILL."""
    with _running_lock:
        children = list(_running.values())
    _end_groups(children)


class _Capture:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.chunks: list[bytes] = []
        self.kept = 0
        self.overflowed = False

    def add(self, chunk: bytes) -> None:
        room = self.limit - self.kept
        if len(chunk) > room:
            self.overflowed = True
            chunk = chunk[:room]
        if chunk:
            self.chunks.append(chunk)
            self.kept += len(chunk)

    @property
    def data(self) -> bytes:
        return b"".join(self.chunks)


def _communicate(
    child: subprocess.Popen, input: Optional[str], end: float, limit: int
) -> tuple[_Capture, _Capture, bool]:
    """Read both pipes until EOF, the deadline ``end``, or ``EXIT_GRACE`` after the child exited.
    Returns (stdout, stderr, timed out); the child is reaped unless it timed out."""
    assert child.stdout is not None and child.stderr is not None
    captures = {child.stdout.fileno(): _Capture(limit), child.stderr.fileno(): _Capture(limit)}
    out, err = captures.values()
    pending = input.encode() if input is not None else b""
    with selectors.DefaultSelector() as selector:
        for fd in captures:
            selector.register(fd, selectors.EVENT_READ)
        stdin = child.stdin.fileno() if child.stdin is not None else None
        if child.stdin is not None and stdin is not None:
            if pending:
                os.set_blocking(stdin, False)
                selector.register(stdin, selectors.EVENT_WRITE)
            else:
                child.stdin.close()
        exited_at: Optional[float] = None
        while selector.get_map():
            now = time.monotonic()
            if exited_at is None and _exited(child):
                exited_at = now
            wait = end - now if exited_at is None else min(end, exited_at + EXIT_GRACE) - now
            if wait <= 0:
                break
            # a short wait while the child runs: its exit is noticed without a SIGCHLD handler
            for key, _ in selector.select(min(wait, 0.1) if exited_at is None else wait):
                fd = key.fd
                if fd == stdin and child.stdin is not None:
                    try:
                        written = os.write(fd, pending[:_CHUNK])
                    except BrokenPipeError:
                        written = len(pending)
                    pending = pending[written:]
                    if not pending:
                        selector.unregister(fd)
                        child.stdin.close()
                    continue
                chunk = os.read(fd, _CHUNK)
                if chunk:
                    captures[fd].add(chunk)
                else:
                    selector.unregister(fd)
    for stream in (child.stdin, child.stdout, child.stderr):
        if stream is not None:
            stream.close()
    # Both pipes at EOF a moment before the child is a zombie, or closed by a child still running:
    # wait for its exit, up to the deadline.
    pause = 0.001
    while not _exited(child):
        left = end - time.monotonic()
        if left <= 0:
            return out, err, True
        time.sleep(min(left, pause))
        pause = min(pause * 2, 0.05)
    return out, err, False


def _exited(child: subprocess.Popen) -> bool:
    """Whether the child has exited, *without* reaping it: while it is a zombie its pid (and so
    its process group id) cannot be reused, so the group can still be killed safely."""
    if child.returncode is not None:
        return True
    try:
        return os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _kill_group(child: subprocess.Popen) -> None:
    """End what is left of the child's process group, then reap the child. Signals are held
    meanwhile: a second Ctrl-C or SIGTERM must not cut the clean-up short (it is acted on after)."""
    with held():
        _end_groups([child])
        for stream in (child.stdin, child.stdout, child.stderr):
            if stream is not None:
                stream.close()
        child.wait()


def _end_groups(children: Iterable[subprocess.Popen], grace: Optional[float] = None) -> None:
    """SIGTERM to the process group of each child that still has a live member, up to ``grace``
    (default ``TERM_GRACE``) seconds for the groups to empty, then SIGKILL to what is left. A
    group whose only member is its exited (unreaped) leader is left alone, so a run that ended
    normally costs one look at /proc and no wait."""
    grace = TERM_GRACE if grace is None else grace
    # start_new_session: a group's id is its leader's pid. A reaped child's pid may belong to
    # someone else by now; an unreaped one (a zombie at worst) still holds it.
    leaders = {child.pid: child for child in children if child.returncode is None}
    alive = _live_groups(leaders)
    for group in alive:
        _signal_group(group, signal.SIGTERM)
    end = time.monotonic() + grace
    pause = 0.005
    while alive and time.monotonic() < end:
        time.sleep(min(pause, max(0.0, end - time.monotonic())))
        pause = min(pause * 2, 0.1)
        alive = _live_groups({group: leaders[group] for group in alive})
    for group in alive:
        _signal_group(group, signal.SIGKILL)


def _live_groups(leaders: Mapping[int, subprocess.Popen]) -> set[int]:
    """The groups among ``leaders`` (group id -> leader) with a member still running: read from
    /proc/<pid>/stat (pgrp is its 5th field, state its 3rd; a zombie, Z, has finished: proc(5),
    https://man7.org/linux/man-pages/man5/proc_pid_stat.5.html). Without /proc, a group counts
    as live while its leader runs."""
    if not leaders:
        return set()
    try:
        names = os.listdir("/proc")
    except OSError:
        return {group for group, leader in leaders.items() if not _exited(leader)}
    live: set[int] = set()
    for name in names:
        if not name.isdigit():
            continue
        try:  # os.open/os.read: a buffered file object per process costs twice the time
            fd = os.open(f"/proc/{name}/stat", os.O_RDONLY)
            try:
                fields = os.read(fd, 1024).rpartition(b")")[2].split()
            finally:
                os.close(fd)
            group = int(fields[2])
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
        if group in leaders and fields[0] not in (b"Z", b"X"):
            live.add(group)
    return live


def _signal_group(group: int, signum: int) -> None:
    try:
        os.killpg(group, signum)
    except (ProcessLookupError, PermissionError):
        pass


PR_SET_PDEATHSIG = 1  # <linux/prctl.h>

# The guard of a run: a process of its own (in its own session, out of the child's group) that
# gets SIGTERM when ascenv dies (PR_SET_PDEATHSIG) and then ends the child's whole group as
# ``_end_groups`` would. PR_SET_PDEATHSIG reaches only the direct child (the setting is cleared
# by fork), and a child that is a shell waits for its own child before its trap runs: makeself's
# bash would let install.sh write on. Python, not sh: dash's ``kill`` takes no negative group id.
_GUARD = """
import os, signal, sys, time
group, grace = None, float(sys.argv[1])
# The child's stdout and stderr, opened anew from /proc (a pipe opened there read-only is a new
# read end): once ascenv is dead a cleanup trap's message must not die of SIGPIPE (makeself's
# MS_cleanup echoes to stderr before it removes its directory). Read only to be drained.
held = []
def drain():
    for fd in held:
        try:
            while os.read(fd, 65536):
                pass
        except OSError:
            pass
def end(signum, frame):
    if group is None:  # ascenv died before it started the child
        os._exit(0)
    for number in (signal.SIGTERM, signal.SIGKILL):
        end = time.monotonic() + grace
        try:
            os.killpg(group, number)
            while time.monotonic() < end:  # its leader, orphaned, is reaped by init: then ESRCH
                drain()
                time.sleep(0.05)
                os.killpg(group, 0)
        except OSError:
            break
    os._exit(0)
signal.signal(signal.SIGTERM, end)
# SIGTERM waits until the group is known: ascenv's death while the line is on its way (the
# child wrote it, this process was not scheduled yet) must not make the guard leave unknowing.
# The line comes from the child itself, before its exec; the read ends at EOF when ascenv died
# before starting it (the child closes its copy of the pipe at exec).
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
sys.stdout.write("ready\\n")
sys.stdout.flush()
line = sys.stdin.readline()  # the group to guard
if line.strip():
    for number in (1, 2):
        try:
            held.append(os.open(f"/proc/{int(line)}/fd/{number}", os.O_RDONLY | os.O_NONBLOCK))
        except OSError:
            pass
    group = int(line)
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
if group is None:
    os._exit(0)
while True:
    signal.pause()
"""


class _Guard:
    def __init__(self, process: subprocess.Popen) -> None:
        self.process = process

    @property
    def fd(self) -> Optional[int]:
        """The guard's stdin, for the child to write its group to before its exec (``_dies_with``):
        told by ascenv after ``Popen`` returns, a guard missed the group of a child started just
        before ascenv was SIGKILLed, and its grandchildren outlived both (1 run in 5 beside two busy
        loops). None when the descriptor is 0, 1 or 2, which the child replaces by its own streams."""
        assert self.process.stdin is not None
        fd = self.process.stdin.fileno()
        return fd if fd > 2 else None

    @classmethod
    def start(cls) -> Optional[_Guard]:
        """A guard, once it is ready to act (``watch`` tells it the group); None where it cannot
        be had (not Linux, no prctl, no interpreter): the run goes on without one."""
        set_up = _dies_with(os.getpid())
        if set_up is None or not sys.executable:
            return None
        try:
            process = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _GUARD, str(TERM_GRACE)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                preexec_fn=set_up,
            )
        except OSError:
            return None
        guard = cls(process)
        try:
            assert process.stdout is not None
            with selectors.DefaultSelector() as selector:  # ready: its handler is in place
                selector.register(process.stdout, selectors.EVENT_READ)
                if selector.select(10.0):
                    return guard
        except BaseException:  # an interrupt meanwhile: the run's clean-up does not know it yet
            guard.stop()
            raise
        guard.stop()
        return None

    def watch(self, group: int) -> None:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(f"{group}\n".encode())
            self.process.stdin.flush()
        except OSError:  # the guard is gone: the run goes on without one
            pass

    def stop(self) -> None:
        _signal_group(self.process.pid, signal.SIGKILL)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        self.process.wait()


@lru_cache(maxsize=1)
def _prctl() -> Optional[Callable[..., int]]:
    """libc's prctl(2), looked up once in the parent (a child between fork and exec should call
    nothing that may take a lock); None off Linux or where it cannot be found."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # imported on first use: commands that run nothing do not pay for it

    try:
        function = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    function.restype = ctypes.c_int
    return function


def _dies_with(parent: int, tell: Optional[int] = None) -> Optional[Callable[[], None]]:
    """The child's set-up (run after fork, before exec): PR_SET_PDEATHSIG, so the child gets
    SIGTERM when ascenv dies, even by SIGKILL, when no ``finally`` of ours can run (prctl(2):
    the signal is kept across execve, cleared by fork). SIGTERM rather than SIGKILL: no one is
    left to send a SIGKILL after a grace, and SIGTERM lets the child clean up, as makeself's
    trap does. Only the direct child is covered (its own children do not inherit the setting).
    If the parent died before the prctl, the child is already an orphan: it ends itself.
    ``tell``: a guard's stdin, told the child's pid (its group) here, before the exec closes it."""
    prctl = _prctl()
    if prctl is None:
        return None
    line = b"" if tell is None else b"%d\n"

    def set_up() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if tell is not None:
            try:
                os.write(tell, line % os.getpid())
            except OSError:
                pass
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGTERM)

    return set_up


def last_line(text: str) -> str:
    """The last non-blank line of a command's output, stripped ("" when there is none): a tool's
    own last words, the reason it gives for failing."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _text(data: bytes | str | None) -> str:
    if data is None:
        return ""
    if isinstance(data, str):
        return data
    return data.decode("utf-8", errors="replace")


def which(name: str, path: Optional[str]) -> Optional[str]:
    """``shutil.which`` against an explicit PATH string (the snapshot's, not ours)."""
    import shutil

    return shutil.which(name, path=path if path is not None else os.defpath)
