"""Opening the log triage reads: a file, a pipe, or stdin, never something that never ends.

A device is refused: ``/dev/zero`` is an endless run of NUL bytes the scanner skips at memory speed,
forever (T2 of the second adversarial review). A FIFO is fine (``ascenv triage <(journalctl ...)``)
once a process writes to it; with no writer, ``open()`` would block forever, so it is opened
non-blocking and waited for, for a bounded time. ``max_bytes`` bounds what is read at all, for
callers that must finish (``report --log``): past it the input is refused, not silently cut.
"""

from __future__ import annotations

import os
import stat
import time
from typing import IO, Optional, cast

from ascenv import errors

WRITER_WAIT = 10.0  # seconds a FIFO may stay without a writer


def open_log(path: str, shown: str, max_bytes: Optional[int] = None, writer_wait: float = WRITER_WAIT) -> IO[bytes]:
    """The log file at ``path`` (named ``shown`` in errors), opened for streaming, read at most up
    to ``max_bytes`` (None: no limit). Errors are InputError (exit 2) saying what was found."""
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISFIFO(mode):
            stream: IO[bytes] = _open_fifo(path, shown, writer_wait)
        else:
            refuse_device(mode, shown)
            stream = open(path, "rb")
    except FileNotFoundError:
        raise errors.InputError(f"{shown}: no such file", hint="pass the log file, or - to read stdin") from None
    except IsADirectoryError:
        raise errors.InputError(f"{shown} is a directory, not a log file", hint="pass the log file itself") from None
    except OSError as exc:
        raise errors.InputError(f"{shown}: cannot read: {exc.strerror}") from None
    return stream if max_bytes is None else cast(IO[bytes], Bounded(stream, max_bytes, shown))


def refuse_device(mode: int, shown: str) -> None:
    """A character or block device is no log: /dev/zero and /dev/urandom never end, a terminal
    waits for typing, a disk is not text."""
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        kind = "character" if stat.S_ISCHR(mode) else "block"
        raise errors.InputError(
            f"{shown} is a {kind} device, not a log file (it may never end)",
            hint="save the log to a file first, or pipe it: ... | ascenv triage -",
        )


def _open_fifo(path: str, shown: str, writer_wait: float) -> IO[bytes]:
    # O_NONBLOCK: open() returns at once even without a writer. Then a read of b"" means "no
    # writer" (POSIX read(2) on a pipe: end of file when no process has it open for writing),
    # EAGAIN means a writer is there with nothing written yet: from then on a blocking read is fine.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    first = b""
    deadline = time.monotonic() + writer_wait
    try:
        while True:
            try:
                first = os.read(fd, 65536)
            except BlockingIOError:
                break  # a writer, nothing written yet
            if first:
                break
            if time.monotonic() >= deadline:
                raise errors.InputError(
                    f"{shown}: no process wrote to this FIFO within {writer_wait:g} s",
                    hint="start the program that writes the log first, or save the log to a file",
                )
            time.sleep(0.05)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return cast(IO[bytes], _Prefixed(first, os.fdopen(fd, "rb")))


class _Wrapper:
    """A stream around ``stream``: closing it closes that one; usable in ``with``."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream

    def close(self) -> None:
        self.stream.close()

    def __enter__(self) -> _Wrapper:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Prefixed(_Wrapper):
    """A stream that yields ``head`` (bytes already read) and then the rest of ``stream``."""

    def __init__(self, head: bytes, stream: IO[bytes]) -> None:
        super().__init__(stream)
        self.head = head

    def read(self, size: int = -1) -> bytes:
        if self.head:
            cut = len(self.head) if size < 0 else size
            data, self.head = self.head[:cut], self.head[cut:]
            return data
        return self.stream.read(size)


class Bounded(_Wrapper):
    """``stream`` read up to ``limit`` bytes; one more byte is an InputError (exit 2) that names
    the limit, so a caller that must finish (``report --log``) never reads an endless input."""

    def __init__(self, stream: IO[bytes], limit: int, shown: str) -> None:
        super().__init__(stream)
        self.limit = limit
        self.shown = shown
        self.read_so_far = 0

    def read(self, size: int = -1) -> bytes:
        room = self.limit - self.read_so_far + 1  # one byte past the limit tells "more"
        data = self.stream.read(room if size < 0 else min(size, room))
        self.read_so_far += len(data)
        if self.read_so_far > self.limit:
            raise errors.InputError(
                f"{self.shown}: longer than {self.limit} bytes, the most this command reads",
                hint="pass the part of the log around the error (tail -c, grep -C)",
            )
        return data
