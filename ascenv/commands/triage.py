"""Read an error log, find the known Ascend error signatures in it, and say which cause this
machine confirms."""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import AbstractContextManager
from typing import IO

from ascenv import errors
from ascenv.commands import _common as common

NAME = "triage"
ORDER = 12
HELP = "find the cause of an Ascend error log and confirm it on this machine"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "log", nargs="?", default="-", metavar="LOGFILE", help="the log, traceback or paste (default: - = stdin)"
    )
    common.add_machine_options(parser)
    parser.add_argument(
        "--from", dest="from_file", metavar="SNAPSHOT", help="confirm on a saved snapshot (ascenv snapshot -o FILE)"
    )
    common.add_format_option(parser, ("human", "json", "markdown"))


def run(args: argparse.Namespace, ctx: common.Context) -> int:
    from ascenv import compat
    from ascenv.triage import exit_code, triage

    if args.from_file and args.root != "/":
        raise errors.UsageError("--from and --root both name the machine", hint="pass one of them")
    # the log is opened first: a mistyped file name fails before the machine is probed
    with _open_log(ctx, args.log) as stream:
        overlay = common.compat_overlay(ctx)
        # loaded on a thread while the machine is probed
        matrix = common.in_background(lambda: compat.load_cached(ctx.cache_dir, overlay=overlay))
        if args.from_file:
            from ascenv.snapshot_io import load_snapshot

            snapshot = load_snapshot(os.path.join(ctx.cwd, args.from_file), args.from_file)
            judged = f"the machine of snapshot {args.from_file}"
        else:
            from ascenv.probe.snapshot import collect

            root = common.root_argument(ctx, args.root)
            sought = lambda: common.jit_strings(matrix())  # noqa: E731
            snapshot = collect(root, ctx.environ, ctx.run, python=args.python, sought=sought)
            judged = "this machine" if args.root == "/" else f"the root {args.root}"
        result = triage(stream, snapshot, matrix(), judged=judged)
    code = exit_code(result)
    from ascenv.output import triage as render

    render.render(ctx.out, result, code, _name(args.log), args.format)
    return code


def _refuse_device_stdin() -> None:
    """``ascenv triage - < /dev/zero`` never ends: stdin redirected from a device is refused."""
    from ascenv.triage import refuse_device

    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return  # not a real file descriptor (a test's stand-in): nothing to judge
    refuse_device(mode, "stdin")


def _name(log: str) -> str:
    return "stdin" if log == "-" else log


def _open_log(ctx: common.Context, log: str) -> AbstractContextManager[IO[bytes]]:
    if log == "-":
        import contextlib

        if sys.stdin is None or sys.stdin.isatty():
            raise errors.UsageError(
                "no log given", hint="ascenv triage LOGFILE, or pipe the log: ... | ascenv triage -"
            )
        _refuse_device_stdin()

        # stdin stays open after the triage (the with-block must not close it)
        return contextlib.nullcontext(sys.stdin.buffer)
    from ascenv.triage import open_log

    return open_log(os.path.join(ctx.cwd, log), log)
