"""What every command shares: the context it runs in and the options that mean the same everywhere.

Commands import this module and nothing else of ``ascenv.commands`` (tests/test_imports.py).
"""

from __future__ import annotations

import argparse
import errno
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Union

from ascenv import errors, proc
from ascenv.output import Output

if TYPE_CHECKING:
    from ascenv.containers import images
    from ascenv.probe.fs import Root


@dataclass(frozen=True)
class Context:
    """What a command may use of the outside world; tests build their own."""

    environ: Mapping[str, str]
    out: Output
    run: proc.Runner = proc.run
    cwd: str = "."
    cache_dir: Optional[str] = None  # ascenv's own cache (main() sets it; tests leave it off)


def root_argument(ctx: Context, value: str) -> Root:
    """``--root DIR`` (relative to the command's cwd) as a ``Root``. A mistyped DIR must not be
    audited as an empty machine ("no NPU, no CANN": a clean bill of health for nothing)."""
    from ascenv.probe.fs import Root

    directory = os.path.join(ctx.cwd, value)
    if not os.path.isdir(directory):
        what = "is not a directory" if os.path.exists(directory) else "does not exist"
        raise errors.UsageError(
            f"--root {value} {what}", hint="pass the directory that holds the machine's file system (its /)"
        )
    return Root(directory)


STDOUT = "-"  # -o -: standard output, as POSIX utilities read a "-" operand (XBD 12.2, guideline 13)


def to_stdout(value: Optional[str]) -> bool:
    return value == STDOUT


def check_output_option(ctx: Context, value: Optional[str], fmt: str, what: str, binary: Optional[str] = None) -> None:
    """Refuse, before any work is done, an ``-o -`` that cannot be honoured: with ``--format
    json`` (two documents on one stdout), or for binary data (``binary`` names it) on a terminal;
    and an ``-o FILE`` that cannot be created (``check_output_path``)."""
    if not to_stdout(value):
        check_output_path(ctx, value)
        return
    if fmt == "json":
        raise errors.UsageError(
            f"-o - writes the {what} to standard output, where --format json would print its summary too",
            hint=f"write the {what} to a file with -o FILE, or drop --format json",
        )
    if binary:
        ctx.out.data(b"", binary=binary)  # refuses a terminal; writes nothing


def check_output_path(ctx: Context, value: Optional[str]) -> None:
    """``-o FILE`` that cannot be created is refused before the work (``writable``)."""
    if value is not None and not to_stdout(value):
        writable(Path(ctx.cwd, value), shown_path(value), hint=OUTPUT_HINT)


OUTPUT_HINT = "-o takes a file path in a writable directory, or - for standard output"


def writable(path: Path, what: str, *, hint: str, directory: bool = False) -> None:
    """Refuse, before any work is done, an output ``path`` that cannot be created, in the words
    of the OS error the write would meet: a file needs an existing, writable directory; a
    ``directory`` (made with its parents) a writable nearest existing ancestor. ``os.access``
    answers for a read-only file system (EROFS) even to root, who passes every permission check
    (access(2)). An existing file that is not a regular one (/dev/stdout, a FIFO) is written into,
    not replaced: its directory does not matter."""
    try:
        info = os.stat(path)
    except OSError:
        info = None
    if info is not None and not stat.S_ISDIR(info.st_mode) and not stat.S_ISREG(info.st_mode):
        return
    if info is not None and stat.S_ISDIR(info.st_mode) and not directory:
        raise _unwritable(what, errno.EISDIR, hint)
    existing = path if directory and info is not None else path.parent
    if not directory and not os.path.lexists(existing):
        raise _unwritable(what, errno.ENOENT, hint, f"{shown_path(str(existing))} does not exist")
    while not os.path.lexists(existing) and existing != existing.parent:
        existing = existing.parent
    if not os.path.isdir(existing):
        raise _unwritable(what, errno.ENOTDIR, hint, f"{shown_path(str(existing))} is a file")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise _unwritable(what, errno.EROFS if _read_only(existing) else errno.EACCES, hint, shown_path(str(existing)))


def _unwritable(what: str, number: int, hint: str, where: str = "") -> errors.UsageError:
    detail = f" ({where})" if where else ""
    return errors.UsageError(f"cannot write {what}: {os.strerror(number)}{detail}", hint=hint)


def _read_only(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def write_output(ctx: Context, value: str, data: Union[bytes, str], *, mode: int, binary: Optional[str] = None) -> None:
    """Write a command's output file, ``-o VALUE``: ``-`` is standard output (binary data, named
    by ``binary``, is refused on a terminal); any other value a path relative to the cwd, written
    atomically with ``mode`` (a Ctrl-C or a full disk never leaves half a file). A target that
    cannot be written (a directory, a missing or read-only directory, a full disk) is exit 2."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    if to_stdout(value):
        ctx.out.data(payload, binary=binary)
        return
    from ascenv import fsutil

    try:
        fsutil.write_atomic(os.path.join(ctx.cwd, value), payload, mode=mode)
    except OSError as exc:
        raise errors.UsageError(
            f"cannot write {shown_path(value)}: {exc.strerror or exc}",
            hint=OUTPUT_HINT,
        ) from None


def summary_output(ctx: Context, value: Optional[str]) -> Output:
    """Where a command tells what it wrote: stdout, or stderr when stdout carries the file."""
    return ctx.out.on_stderr() if to_stdout(value) else ctx.out


def output_name(value: str) -> str:
    """``-o VALUE`` in a message: "standard output" for ``-``, else the path as given."""
    return "standard output" if to_stdout(value) else shown_path(value)


def shown_path(path: str) -> str:
    """A path as the user gave it, for a message or a recorded field (``fsutil.shown``)."""
    from ascenv.fsutil import shown

    return shown(path)


def add_machine_options(parser: argparse.ArgumentParser) -> None:
    """``--root DIR`` and ``--python PATH``: which machine and which interpreter a probe reads
    (doctor, snapshot, lock, report). Pair with ``root_argument``."""
    parser.add_argument(
        "--root", default="/", metavar="DIR", help="read files under DIR instead of / (nothing there is executed)"
    )
    parser.add_argument("--python", metavar="PATH", help="the Python interpreter to read (default: python3 on PATH)")


def add_format_option(parser: argparse.ArgumentParser, choices: Sequence[str] = ("human", "json")) -> None:
    parser.add_argument("--format", choices=list(choices), default="human", help="output format (default: human)")


def add_store_option(parser: argparse.ArgumentParser) -> None:
    """``--store DIR``: the build store (build, store, install, clean-cache). Pair with ``store_dir``."""
    parser.add_argument(
        "--store",
        metavar="DIR",
        help="the build store (default: $ASCENV_STORE, else .ascenv/store in the current directory)",
    )


def store_dir(ctx: Context, value: Optional[str]) -> Path:
    """Where the build store is: ``--store DIR``, else ``$ASCENV_STORE``, else ``.ascenv/store``,
    relative to the command's cwd. Only a path: the store module is not imported (clean-cache
    without the store kind must stay light)."""
    chosen = value or ctx.environ.get("ASCENV_STORE") or os.path.join(".ascenv", "store")
    return Path(ctx.cwd, chosen).resolve()


def add_lock_option(parser: argparse.ArgumentParser) -> None:
    """``--lock FILE`` (repeatable): locks whose builds are kept (store gc, clean-cache). Pair with
    ``ascenv.store.referenced_builds``."""
    parser.add_argument(
        "--lock",
        action="append",
        default=[],
        metavar="FILE",
        help="never delete a build this lock references (repeatable; ascenv.lock is read when present)",
    )


def image_host(ctx: Context) -> images.Host:
    """Where an absent pinned image is bootstrapped (ascenv's cache) and how progress is told
    (image build/pin, build)."""
    from ascenv.cache.roots import ascenv_cache_dir
    from ascenv.containers import images

    home = ctx.environ.get("HOME") or os.path.expanduser("~")
    cache = ascenv_cache_dir(ctx.environ, home=home, cwd=ctx.cwd)
    return images.Host(environ=ctx.environ, cache=Path(cache), run=ctx.run, on_event=ctx.out.message)


def compat_overlay(ctx: Context) -> Path:
    """Where `ascenv compat update` keeps the user's newer data files: ``$XDG_DATA_HOME/ascenv/compat``,
    else ``~/.local/share/ascenv/compat`` (XDG Base Directory Specification 0.8: a relative
    XDG_DATA_HOME is invalid and ignored)."""
    data_home = ctx.environ.get("XDG_DATA_HOME", "")
    if not data_home.startswith("/"):
        home = ctx.environ.get("HOME") or os.path.expanduser("~")
        data_home = os.path.join(home, ".local", "share")
    return Path(data_home, "ascenv", "compat")
