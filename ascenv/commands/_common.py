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
from typing import TYPE_CHECKING, Any, Callable, Optional, TypeVar, Union

from ascenv import errors, proc
from ascenv.output import Output

if TYPE_CHECKING:
    from ascenv.checks.summary import Diagnosis
    from ascenv.containers import images
    from ascenv.model import Finding, Snapshot
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


FILE_NAME_PLACEHOLDER = "FILE"  # in the hint for an -o that names a directory
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
        # as cp and tar users expect to be told: a directory needs a file name inside it
        named = f"{what.rstrip('/')}/{FILE_NAME_PLACEHOLDER}"
        raise _unwritable(what, errno.EISDIR, f"{what} is a directory: name a file inside it: -o {named}")
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
    if not ctx.environ.get("ASCENV_CACHE_DIR") and not ctx.environ.get("XDG_CACHE_HOME") and not os.path.isdir(home):
        raise errors.UsageError(
            f"the home directory {home} does not exist, and images are bootstrapped into ascenv's cache under it",
            hint="set ASCENV_CACHE_DIR (or XDG_CACHE_HOME) to a writable directory, or HOME to an existing one",
        )
    cache = ascenv_cache_dir(ctx.environ, home=home, cwd=ctx.cwd)
    return images.Host(
        environ=ctx.environ, cache=Path(cache), run=ctx.run, on_event=ctx.out.message, on_status=ctx.out.status
    )


def shapes_option(value: Optional[str], example: str) -> Optional[tuple[str, ...]]:
    """``--shapes S,S,...`` as a tuple (None: not given); one naming no shape is exit 2."""
    if value is None:
        return None
    shapes = tuple(s.strip() for s in value.split(",") if s.strip())
    if not shapes:
        raise errors.UsageError(f"--shapes {value!r} names no shape", hint=f"for example: --shapes {example}")
    return shapes


def stored_build_engine(ctx: Context, project: Path) -> tuple[Callable[[], Any], Callable[[Any, str], Any]]:
    """How ``bench run`` and ``test`` reach a stored build's image: the engine, connected when
    first needed, and the pinned image of a name from the project's ``containers/`` (else
    ascenv's), fetched as ``build`` fetches it."""
    from ascenv import builder, paths

    local = project / "containers"
    containers = local if local.is_dir() else paths.data_dir("containers")

    def connect() -> Any:
        from ascenv.containers.engine import connect as connect_engine

        return connect_engine(ctx.environ)

    def resolve(engine: Any, name: str) -> Any:
        return builder.resolve_image(containers, name, engine, image_host(ctx))

    return connect, resolve


# --- doctor and check: one machine (or a saved snapshot) judged ---------------------------------

DIAGNOSIS_FORMATS = ("human", "json", "markdown", "junit")
T = TypeVar("T")


def add_diagnosis_options(parser: argparse.ArgumentParser) -> None:
    """What ``doctor`` and ``check`` judge and how they report it. Pair with ``diagnose_machine``."""
    add_machine_options(parser)
    parser.add_argument(
        "--from", dest="from_file", metavar="SNAPSHOT", help="check a saved snapshot (ascenv snapshot -o FILE) offline"
    )
    parser.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    add_format_option(parser, DIAGNOSIS_FORMATS)
    parser.add_argument(
        "--summary",
        nargs="?",
        const="",
        metavar="FILE",
        help="also append the markdown report to FILE (default: $GITHUB_STEP_SUMMARY, the CI job summary)",
    )


def summary_file(ctx: Context, value: Optional[str]) -> Optional[str]:
    """``--summary FILE``, checked before any work; a bare ``--summary`` is the CI job summary
    file GitHub Actions names in $GITHUB_STEP_SUMMARY (docs.github.com, "Adding a job summary")."""
    if value is None:
        return None
    chosen = value or ctx.environ.get("GITHUB_STEP_SUMMARY", "")
    if not chosen:
        raise errors.UsageError(
            "--summary without FILE needs $GITHUB_STEP_SUMMARY", hint="pass --summary FILE outside GitHub Actions"
        )
    writable(Path(ctx.cwd, chosen), shown_path(chosen), hint="--summary takes a file in a writable directory")
    return chosen


def diagnose_machine(
    ctx: Context, args: argparse.Namespace, extra: Optional[Callable[[Snapshot, Any], Sequence[Finding]]] = None
) -> Diagnosis:
    """The doctor's checks (and ``extra`` findings, from the snapshot and the matrix) on this
    machine, ``--root DIR`` or ``--from SNAPSHOT``."""
    from ascenv.checks import load_checks
    from ascenv.checks.summary import diagnose
    from ascenv.snapshot_io import load_snapshot

    # The matrix and the check modules load on a thread while the probes wait on npu-smi and the
    # target Python (start-up time); errors surface here as before.
    overlay = compat_overlay(ctx)
    matrix = in_background(lambda: (load_checks(), load_matrix(ctx.cache_dir, overlay))[1])
    if args.from_file:
        snapshot = load_snapshot(os.path.join(ctx.cwd, args.from_file), args.from_file)
    else:
        from ascenv.probe.snapshot import collect  # here: `doctor --from` re-checks offline and loads no probe

        root = root_argument(ctx, args.root)
        snapshot = collect(root, ctx.environ, ctx.run, python=args.python, sought=lambda: jit_strings(matrix()))
        if args.root != "/" and args.python is None and snapshot.python.executable:
            # --root never executes anything under DIR: its environments are read from their files
            ctx.out.message(
                f"note: the Python checked is {snapshot.python.executable} inside {args.root}, read from its files"
                " (--python PATH runs an interpreter instead)"
            )
    judged = matrix()
    return diagnose(snapshot, judged, strict=args.strict, extra=extra(snapshot, judged) if extra else ())


def jit_strings(matrix: object) -> Mapping[str, Sequence[str]]:
    """What the probe looks for in JIT front-ends' sources (none without the compat data)."""
    strings = getattr(matrix, "jit_strings", None)
    return strings() if strings else {}


def load_matrix(cache_dir: Optional[str] = None, overlay: Optional[Path] = None) -> object:
    """The compat matrix when the data ships with this ascenv (checks without it skip), with the
    user's newer files (`ascenv compat update`) in place of the shipped ones."""
    try:
        from ascenv import compat
    except ImportError:
        return None
    return compat.load_cached(cache_dir, overlay=overlay)


def in_background(work: Callable[[], T]) -> Callable[[], T]:
    """Start ``work`` on a thread; the returned function waits for it and returns its result or
    raises its exception."""
    import threading

    outcome: dict = {}

    def target() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller by join()
            outcome["error"] = exc

    thread = threading.Thread(target=target, name="ascenv-matrix", daemon=True)
    thread.start()

    def join() -> T:
        thread.join()
        if "error" in outcome:
            raise outcome["error"]
        return outcome["value"]

    return join


def compat_overlay(ctx: Context) -> Path:
    """Where `ascenv compat update` keeps the user's newer data files: ``$XDG_DATA_HOME/ascenv/compat``,
    else ``~/.local/share/ascenv/compat`` (XDG Base Directory Specification 0.8: a relative
    XDG_DATA_HOME is invalid and ignored)."""
    data_home = ctx.environ.get("XDG_DATA_HOME", "")
    if not data_home.startswith("/"):
        home = ctx.environ.get("HOME") or os.path.expanduser("~")
        data_home = os.path.join(home, ".local", "share")
    return Path(data_home, "ascenv", "compat")
