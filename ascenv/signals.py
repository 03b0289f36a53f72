"""SIGTERM and SIGHUP unwind like Ctrl-C while ascenv holds something it must clean up.

Python's default action for both ends the process at once, without ``finally`` blocks: a
half-written temp file, a container or a child in its own session would be left behind. Inside
``termination_as_interrupt()`` they raise ``errors.Terminated`` (a ``KeyboardInterrupt``), so the
same clean-up runs as for Ctrl-C and ``cli.main`` exits 130.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from typing import Any

from ascenv import errors


@contextlib.contextmanager
def termination_as_interrupt() -> Iterator[None]:
    """Only where Python's default action is in place (a signal ignored under ``nohup``, or
    handled by an enclosing block, is left as it is), and only on the main thread: the only
    one that may set handlers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise errors.Terminated(f"killed by {signal.Signals(signum).name}")

    saved = {}
    for signum in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) is signal.SIG_DFL:
            saved[signum] = signal.signal(signum, interrupt)
    try:
        yield
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)


_HELD: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def held() -> Iterator[None]:
    """Defer SIGINT, SIGTERM and SIGHUP over a few statements that must not be cut in two (a child
    started but not yet registered for clean-up); one that arrives meanwhile is acted on when the
    block ends, by the handler that was in place. Main thread only (Python runs signal handlers
    there, and only there may they be set); elsewhere a no-op."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    saved: dict[int, Any] = {}
    try:
        for number in _HELD:
            previous = signal.getsignal(number)
            if previous is not None and previous is not signal.SIG_IGN:
                saved[number] = signal.signal(number, lambda got, frame: caught.append(got))
        yield
    finally:
        for number, handler in saved.items():
            signal.signal(number, handler)
        if caught:
            first = saved[caught[0]]
            if callable(first):
                first(caught[0], None)  # KeyboardInterrupt, or Terminated (termination_as_interrupt)
            else:  # the default action, now that it is back in place
                os.kill(os.getpid(), caught[0])
