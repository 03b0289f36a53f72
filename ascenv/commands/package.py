"""Operator packages (makeself .run files): `inspect PKG.run` reads the header and the payload in
Python (nothing in the package is executed; `--check` of a CANN package would run its installer)
and says what it holds: vendors, OpTypes, compute units with kernels, library arches, compiler
version. `normalize PKG.run -o OUT.run` repacks it so that two builds of the same inputs give the
same bytes."""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
from pathlib import Path

from ascenv import errors
from ascenv.commands import _common as common

NAME = "package"
ORDER = 65
HELP = "inspect an operator package without running it, or repack it reproducibly"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    inspect = sub.add_parser("inspect", help="header, verified checksums, files and vendors of PKG.run")
    inspect.add_argument("package", metavar="PKG.run")
    _add_limits(inspect)
    common.add_format_option(inspect)
    normalize = sub.add_parser("normalize", help="repack PKG.run deterministically into OUT.run")
    normalize.add_argument("package", metavar="PKG.run")
    normalize.add_argument(
        "-o", "--output", required=True, metavar="OUT.run", help="the repacked package (- for standard output)"
    )
    normalize.add_argument(
        "--source-date-epoch",
        type=int,
        metavar="SECONDS",
        help="packaging date and newest mtime (default: $SOURCE_DATE_EPOCH, else 0)",
    )
    _add_limits(normalize)
    common.add_format_option(normalize)


def _add_limits(parser: argparse.ArgumentParser) -> None:
    from ascenv.package.contents import MAX_BYTES, MAX_MEMBERS

    parser.add_argument(
        "--max-bytes",
        type=int,
        default=MAX_BYTES,
        metavar="N",
        help=f"refuse payloads larger than N bytes ({MAX_BYTES})",
    )
    parser.add_argument(
        "--max-members",
        type=int,
        default=MAX_MEMBERS,
        metavar="N",
        help=f"refuse more than N members ({MAX_MEMBERS})",
    )


def run(args: argparse.Namespace, ctx: common.Context) -> int:
    for option, value in (("--max-bytes", args.max_bytes), ("--max-members", args.max_members)):
        if value < 1:
            raise errors.UsageError(f"{option} {value}: a limit is at least 1", hint=f"{option} N with N >= 1")
    package = Path(ctx.cwd, args.package)
    if not package.is_file():
        raise errors.UsageError(f"{args.package} is not a file", hint="pass the custom_opp_<os>_<arch>.run to read")
    if args.action == "inspect":
        from ascenv.output import package as render
        from ascenv.package.inspection import inspect_package

        found = inspect_package(package, max_bytes=args.max_bytes, max_members=args.max_members)
        render.render_inspection(ctx.out, found, args.format)
        return errors.EXIT_OK
    from ascenv.output import package as render
    from ascenv.package.normalize import epoch_from, normalize

    epoch = args.source_date_epoch if args.source_date_epoch is not None else epoch_from(ctx.environ)
    limits = {"max_bytes": args.max_bytes, "max_members": args.max_members}
    if not common.to_stdout(args.output):
        result = normalize(package, Path(ctx.cwd, args.output), epoch, **limits)
        render.render_normalized(ctx.out, result, args.format)
        return errors.EXIT_OK
    # -o -: repacked into a private temporary file (the repack seeks), then streamed to stdout;
    # the summary goes to stderr, as for lock, report and snapshot
    common.check_output_option(ctx, args.output, args.format, "package", binary=_BINARY)
    with tempfile.TemporaryDirectory(prefix="ascenv-normalize-") as scratch:
        result = normalize(package, Path(scratch, package.name), epoch, **limits)
        with open(Path(scratch, package.name), "rb") as repacked:
            for chunk in iter(lambda: repacked.read(1 << 20), b""):
                ctx.out.data(chunk, binary=_BINARY)
    shown = dataclasses.replace(result, output=common.output_name(args.output))
    render.render_normalized(common.summary_output(ctx, args.output), shown, args.format)
    return errors.EXIT_OK


_BINARY = "an operator package"
