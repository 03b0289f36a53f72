"""Write the whole stack of this machine (or of a saved snapshot) to a TOML lock: platform, driver,
firmware, chips, every CANN install, kernels, the target Python and its packages, custom operator
vendors, pinned images. With --check, compare the machine with the lock, layer by layer: exit 0
in sync, 1 drift, 2 a lock for another platform or an unreadable lock."""

from __future__ import annotations

import argparse
import os

from ascenv import __version__, errors, lockfile
from ascenv.commands import _common as common
from ascenv.lockfile import Lock
from ascenv.snapshot_io import load_snapshot

NAME = "lock"
ORDER = 30
HELP = "lock driver, firmware, CANN, kernels, Python packages and vendors; --check for drift"
DEFAULT_LOCK = "ascenv.lock"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-o",
        "--output",
        default=DEFAULT_LOCK,
        metavar="FILE",
        help=f"where to write the lock; - for standard output (default: {DEFAULT_LOCK})",
    )
    parser.add_argument(
        "--from",
        dest="from_file",
        metavar="SNAPSHOT",
        help="lock (or check) a saved snapshot (ascenv snapshot -o FILE) instead of this machine",
    )
    parser.add_argument(
        "--check",
        nargs="?",
        const=DEFAULT_LOCK,
        metavar="LOCK",
        help=f"compare with LOCK (default: {DEFAULT_LOCK}) instead of writing",
    )
    parser.add_argument(
        "--strict", action="store_true", help="with --check: every difference is an error (patch releases too)"
    )
    common.add_machine_options(parser)
    common.add_format_option(parser, ("human", "json", "junit"))  # junit: with --check


def run(args: argparse.Namespace, ctx: common.Context) -> int:
    from ascenv.output import lock as render

    render.refuse_format(args.format, checking=bool(args.check))
    if args.check:
        locked, warnings = lockfile.read_lock(os.path.join(ctx.cwd, args.check), args.check)
        machine = machine_lock(args, ctx)
        result = lockfile.check_lock(locked, machine, source=args.check, strict=args.strict, warnings=warnings)
        render.render_check(ctx.out, result, args.format, accept=_accept_command(args))
        return result.exit_code
    common.check_output_option(ctx, args.output, args.format, "lock")
    machine = machine_lock(args, ctx)
    # 0644 (narrowed by the umask): a lock is meant to be committed and shared
    common.write_output(ctx, args.output, lockfile.dumps_lock(machine), mode=0o644)
    render.render_written(
        common.summary_output(ctx, args.output), common.output_name(args.output), machine, args.format
    )
    return errors.EXIT_OK


def _accept_command(args: argparse.Namespace) -> str:
    """``ascenv lock`` with the same machine options as this check, writing over the lock."""
    import shlex

    given = [
        (option, value)
        for option, value in (
            ("--from", args.from_file),
            ("--root", None if args.root == "/" else args.root),
            ("--python", args.python),
        )
        if value
    ]
    return shlex.join(["ascenv", "lock", *(w for pair in given for w in pair), "-o", args.check])


def machine_lock(args: argparse.Namespace, ctx: common.Context) -> Lock:
    """The lock of what is installed: the live machine (or --root), or a saved snapshot."""
    if args.from_file:
        snapshot = load_snapshot(os.path.join(ctx.cwd, args.from_file), args.from_file)
        source = args.from_file
    else:
        from ascenv.probe.snapshot import collect

        snapshot = collect(common.root_argument(ctx, args.root), ctx.environ, ctx.run, python=args.python)
        source = ""
    return lockfile.lock_from_snapshot(
        snapshot, generator_version=__version__, source=source, images=lockfile.pinned_images()
    )
