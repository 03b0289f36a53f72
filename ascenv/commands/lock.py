"""Write the whole stack of this machine (or of a saved snapshot) to a TOML lock: platform, driver,
firmware, chips, every CANN install, kernels, the target Python and its packages, custom operator
vendors, pinned images. With --check, compare the machine with the lock, layer by layer: exit 0
in sync, 1 drift, 2 a lock for another platform or an unreadable lock."""

from __future__ import annotations

import argparse
import os

from ascenv import __version__, errors, lockfile, paths, serde
from ascenv.commands import _common as common
from ascenv.lockfile import Lock, LockedImage
from ascenv.model import Severity

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
        help=f"where to write the lock (default: {DEFAULT_LOCK})",
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
    common.add_format_option(parser)


def run(args: argparse.Namespace, ctx: common.Context) -> int:
    if args.check:
        return _check(args, ctx)
    machine = machine_lock(args, ctx)
    target = os.path.join(ctx.cwd, args.output)
    write_lock(target, machine)
    if args.format == "json":
        ctx.out.json({"path": args.output, "lock": lockfile.lock_data(machine)})
    else:
        from ascenv.output.lock import render_written

        render_written(ctx.out, args.output, machine)
    return errors.EXIT_OK


def _check(args: argparse.Namespace, ctx: common.Context) -> int:
    locked, warnings = read_lock(os.path.join(ctx.cwd, args.check), args.check)
    for warning in warnings:
        ctx.out.warn(warning)
    machine = machine_lock(args, ctx)
    changes = lockfile.check(locked, machine, strict=args.strict, source=args.check)
    code = errors.EXIT_FINDINGS if any(c.severity is Severity.ERROR for c in changes) else errors.EXIT_OK
    if args.format == "json":
        ctx.out.json(
            {
                "lock": args.check,
                "in_sync": not changes,
                "exit_code": code,
                "input_hash": {"lock": locked.input_hash, "machine": machine.input_hash},
                "changes": [serde.to_data(c) for c in changes],
            }
        )
    else:
        from ascenv.output.lock import render_check

        render_check(ctx.out, args.check, locked, machine, changes)
    return code


def machine_lock(args: argparse.Namespace, ctx: common.Context) -> Lock:
    """The lock of what is installed: the live machine (or --root), or a saved snapshot."""
    from ascenv.commands.snapshot import load_snapshot

    if args.from_file:
        snapshot = load_snapshot(os.path.join(ctx.cwd, args.from_file))
        source = args.from_file
    else:
        from ascenv.probe import collect

        snapshot = collect(common.root_argument(ctx, args.root), ctx.environ, ctx.run, python=args.python)
        source = ""
    return lockfile.lock_from_snapshot(snapshot, generator_version=__version__, source=source, images=pinned_images())


def pinned_images() -> tuple[LockedImage, ...]:
    """The project's image pins (containers/pins.toml, written by `ascenv image pin`); none while
    the container module is not part of this ascenv."""
    try:
        from ascenv.containers.pins import PINS_FILE, load_pins
    except ImportError:
        return ()
    pins = load_pins(paths.data_dir("containers") / PINS_FILE)
    return tuple(LockedImage(name, ref=pin.tag or pin.ref, digest=pin.digest) for name, pin in sorted(pins.items()))


def read_lock(path: str, shown: str) -> tuple[Lock, list[str]]:
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise errors.InputError(
            f"cannot read lock {shown}: {exc.strerror}", hint="write one with `ascenv lock -o FILE`"
        ) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise errors.InputError(
            f"{shown} is not a lock (not UTF-8 text)", hint="write one with `ascenv lock -o FILE`"
        ) from None
    return lockfile.loads_lock(text, shown)


def write_lock(path: str, lock: Lock) -> None:
    """Atomically (a temp file renamed over the target): a reader never sees half a lock; 0644,
    a lock is meant to be committed and shared."""
    from ascenv.fsutil import write_atomic

    write_atomic(path, lockfile.dumps_lock(lock), mode=0o644)
