"""File-system helpers shared by the commands and the stores: reading a file the user names, and
writing a file atomically."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator
from typing import Any, Optional, Union

from ascenv.errors import InputError
from ascenv.signals import termination_as_interrupt

TEMP_PREFIX = ".ascenv-"  # temp files are ``.ascenv-<name>.<random>.tmp`` beside their target

# A snapshot is ~60 KB and a lock ~15 KB; 16 MiB leaves room for machines with thousands of
# Python distributions while a 2 GB sparse file or /dev/zero is refused before it is read.
INPUT_LIMIT = 16 << 20

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def file_kind(mode: int) -> str:
    """``st_mode`` in words: "a FIFO (named pipe)", "a directory", ..., "a regular file"."""
    for test, words in _KINDS:
        if test(mode):
            return words
    return "a regular file" if stat.S_ISREG(mode) else "not a regular file"


# --- names -----------------------------------------------------------------------------------

# Python decodes file names, arguments and environment values that are not UTF-8 with
# surrogateescape (PEP 383): byte 0x80-0xff becomes U+DC80-U+DCFF, which no UTF-8 output can encode.
_SURROGATE = re.compile("[\ud800-\udfff]")


def shown(text: str) -> str:
    """``text`` with every undecodable byte shown as ``\\xff`` (git shows ``\\377``) and any
    other lone surrogate (from a JSON ``\\ud800``) as ``\\ud800``: text any UTF-8 output takes."""
    if text.isascii():
        return text
    return _SURROGATE.sub(_show_surrogate, text)


def _show_surrogate(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


# --- reading ---------------------------------------------------------------------------------


def read_input(
    path: Union[str, os.PathLike[str]],
    *,
    what: str,
    shown: Optional[str] = None,
    limit: int = INPUT_LIMIT,
    hint: Optional[str] = None,
) -> bytes:
    """The bytes of an input file the user named (``what`` says which: "snapshot", "lock", or ""
    where the content decides), or an
    InputError (exit 2) naming it as ``shown`` (the name as given, not the cwd-joined path).

    Only a regular file is read: a FIFO would block ``open()`` until a writer comes, ``/dev/zero``
    never ends, a socket cannot be opened. A symlink is followed: the user chose the name and the
    file it leads to is checked like any other. The type is checked before the open (opening a
    device can have effects) and again on the descriptor, which is opened non-blocking, so a file
    swapped for a FIFO in between cannot hang the read either. Files above ``limit`` bytes are
    refused before they are read."""
    with open_input(path, what=what, shown=shown, limit=limit, hint=hint) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:  # it grew after the fstat
        raise _too_large(what, shown or os.fspath(path), limit, hint)
    return data


@contextlib.contextmanager
def open_input(
    path: Union[str, os.PathLike[str]],
    *,
    what: str,
    shown: Optional[str] = None,
    limit: int = INPUT_LIMIT,
    hint: Optional[str] = None,
) -> Iterator[Any]:
    """``read_input`` for a reader that wants the open binary file (to sniff its first bytes)."""
    path = os.fspath(path)
    shown = shown or path
    try:
        _refuse_special(os.stat(path).st_mode, what, shown, hint)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise InputError(f"cannot read {_named(what, shown)}: {_reason(exc)}", hint=hint) from None
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        _refuse_special(info.st_mode, what, shown, hint)
        if info.st_size > limit:
            raise _too_large(what, shown, limit, hint)
        os.set_blocking(fd, True)
        try:
            yield fh
        except OSError as exc:
            raise InputError(f"cannot read {_named(what, shown)}: {_reason(exc)}", hint=hint) from None


def _refuse_special(mode: int, what: str, shown: str, hint: Optional[str]) -> None:
    if not stat.S_ISREG(mode):
        raise InputError(
            f"{_named(what, shown)} is {file_kind(mode)}, not a file", hint=hint or f"name a {what or 'regular'} file"
        )


def _too_large(what: str, shown: str, limit: int, hint: Optional[str]) -> InputError:
    return InputError(
        f"{_named(what, shown)} is larger than {limit >> 20} MiB, the most ascenv reads for it: it is not an ascenv"
        f" {what or 'input'}",
        hint=hint,
    )


def _named(what: str, shown: str) -> str:
    return f"{what} {shown}" if what else shown


def _reason(exc: OSError) -> str:
    if exc.errno == errno.EACCES:
        return "permission denied"
    return exc.strerror or str(exc)


# --- writing ---------------------------------------------------------------------------------


def write_atomic(path: Union[str, os.PathLike[str]], data: Union[bytes, str], *, mode: int = 0o644) -> None:
    """Write ``data`` (str as UTF-8) to ``path`` so that a reader sees the old file or the new one,
    never half of one: a temp file in the same directory (so the rename stays on one file
    system), given ``mode``, fsynced, then renamed over ``path``. The temp file is removed on
    any failure, KeyboardInterrupt, SIGTERM and SIGHUP included; errors (OSError) propagate to
    the caller. See ``atomic_path`` for symlinks and special files."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    with atomic_path(path, mode=mode) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(payload)


@contextlib.contextmanager
def atomic_path(path: Union[str, os.PathLike[str]], *, mode: int = 0o644) -> Iterator[str]:
    """``write_atomic`` for a file written by someone else (a tar archive, a stream too large to
    hold in memory): yields the path of an empty temp file to write; when the block ends without
    an exception it is given ``mode``, fsynced and renamed over ``path``; on any exception it is
    removed and ``path`` is left as it was.

    ``mode`` is narrowed by the umask, as ``open()`` would (a ``umask 077`` user gets 0600).
    A symlink at ``path`` is kept: the file it leads to is replaced (renaming over the link
    would turn it into a regular file and leave its target stale). An existing ``path`` that is
    not a regular file (``/dev/stdout``, a FIFO, a terminal) cannot be replaced without
    breaking it: the finished temp file is copied into it instead, as a shell redirection would.
    SIGTERM and SIGHUP (``timeout``, a systemd stop, a Slurm cancel) raise KeyboardInterrupt
    while the block runs, so the temp file is removed then too."""
    path = os.fspath(path)
    special = _special_target(path)
    target = path if special else os.path.realpath(path) if os.path.islink(path) else path
    directory = None if special else os.path.dirname(os.path.abspath(target))
    with termination_as_interrupt():
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f"{TEMP_PREFIX}{os.path.basename(target)}.", suffix=".tmp")
        os.close(fd)
        try:
            yield tmp
            if special:
                with open(tmp, "rb") as src, open(path, "wb") as dst:
                    shutil.copyfileobj(src, dst)
                os.unlink(tmp)
                return
            fd = os.open(tmp, os.O_RDONLY)
            try:
                os.fchmod(fd, mode & ~current_umask())  # mkstemp makes 0600
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise


def _special_target(path: str) -> bool:
    """True when ``path`` (followed through symlinks) exists and is not a regular file."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False  # absent (or a dangling link): created by the rename


def current_umask() -> int:
    """The process umask, read without changing it (``os.umask`` can only set it, and setting
    it to read it would race with other threads creating files): Linux has printed it in
    /proc/self/status since 4.7 (https://man7.org/linux/man-pages/man5/proc_pid_status.5.html)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old
