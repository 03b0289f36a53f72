"""Read the whole Ascend stack of this machine (or of --root DIR) into one snapshot."""

from __future__ import annotations

import argparse

from ascenv import errors
from ascenv.commands import _common as common
from ascenv.probe.snapshot import collect
from ascenv.snapshot_io import dumps_snapshot

NAME = "snapshot"
ORDER = 20
HELP = "read driver, firmware, CANN, devices, environment and Python into one snapshot"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    common.add_machine_options(parser)
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="also write the JSON snapshot to FILE; - writes it to standard output instead of the summary",
    )
    common.add_format_option(parser)


def run(args: argparse.Namespace, ctx: common.Context) -> int:
    common.check_output_path(ctx, args.output)
    # not the cached matrix: a snapshot writes nothing but its output (fleet nodes run it, and are
    # left as they were found); parsed on a thread while the probes run
    overlay = common.compat_overlay(ctx)
    matrix = common.in_background(lambda: common.load_matrix(None, overlay))
    root = common.root_argument(ctx, args.root)
    snapshot = collect(root, ctx.environ, ctx.run, python=args.python, sought=lambda: common.jit_strings(matrix()))
    if args.output:
        # 0600: a snapshot names serial numbers and home paths (report redacts them)
        common.write_output(ctx, args.output, dumps_snapshot(snapshot), mode=0o600)
    if common.to_stdout(args.output):
        return errors.EXIT_OK  # the snapshot is what stdout carries: nothing else goes there
    from ascenv.output import snapshot as render

    render.render(ctx.out, snapshot, args.format)
    return errors.EXIT_OK
