"""SIGTERM and SIGHUP unwind like Ctrl-C while ascenv holds something it must clean up.

Python's default action for both ends the process at once, without ``finally`` blocks: a
half-written temp file, a container or a child in its own session would be left behind. Inside
``termination_as_interrupt()`` they raise ``errors.Terminated`` (a ``KeyboardInterrupt``), so the
same clean-up runs as for Ctrl-C and ``cli.main`` exits 130.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

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
