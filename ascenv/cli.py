"""The command line: argparse, dispatch, and the one place that catches errors."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

from ascenv import __version__, errors, proc
from ascenv.output import Output


def _command_modules() -> list:
    """Every module in ascenv/commands/ with NAME, HELP, ORDER, add_arguments(parser) and
    run(args, ctx) -> exit code; ORDER sorts `ascenv --help`."""
    import pkgutil

    from ascenv import commands

    modules = [importlib.import_module(f"ascenv.commands.{m.name}") for m in pkgutil.iter_modules(commands.__path__)]
    return sorted((m for m in modules if hasattr(m, "NAME")), key=lambda m: (m.ORDER, m.NAME))


@dataclass(frozen=True)
class Context:
    """What a command may use of the outside world; tests build their own."""

    environ: Mapping[str, str]
    out: Output
    run: proc.Runner = proc.run
    cwd: str = "."


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ascenv",
        description="Audit, lock and reproducibly build the Huawei Ascend NPU software stack.",
    )
    parser.add_argument("--version", action="version", version=f"ascenv {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in _command_modules():
        command = sub.add_parser(module.NAME, help=module.HELP, description=module.__doc__)
        module.add_arguments(command)
        command.set_defaults(_module=module)
    return parser


def main(argv: Optional[Sequence[str]] = None, *, ctx: Optional[Context] = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on bad usage, 0 on --help
        return int(exc.code or 0)
    if args.command is None:
        parser.print_help(sys.stderr)
        return errors.EXIT_USAGE
    fmt = getattr(args, "format", "human")
    if ctx is None:
        ctx = Context(environ=dict(os.environ), out=Output(fmt), cwd=os.getcwd())
    elif ctx.out.format != fmt:
        ctx.out.format = fmt
    try:
        return int(args._module.run(args, ctx))
    except errors.AscenvError as exc:
        ctx.out.error(exc.message, exc.hint)
        if args.debug:
            traceback.print_exc()
        return exc.exit_code
    except KeyboardInterrupt:
        ctx.out.error("interrupted")
        return errors.EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - the one place that turns a bug into exit 3
        ctx.out.error(
            f"unexpected error: {type(exc).__name__}: {exc}",
            "this is a bug in ascenv; rerun with --debug and report the traceback",
        )
        if args.debug:
            traceback.print_exc()
        return errors.EXIT_INTERNAL


def add_format_option(parser: argparse.ArgumentParser, choices: Sequence[str] = ("human", "json")) -> None:
    parser.add_argument("--format", choices=list(choices), default="human", help="output format (default: human)")
