"""Judge this machine (or ``--root``, or a snapshot) against a project's declared stack
(``[tool.ascenv]`` in pyproject.toml, or ascenv.toml) and the doctor's checks; or write the
project's import guard."""

from __future__ import annotations

import argparse
from pathlib import Path

from ascenv import errors
from ascenv.commands import _common as common

NAME = "check"
ORDER = 11
HELP = "check the stack a project declares ([tool.ascenv]) and the doctor's checks"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "path", nargs="?", default=".", metavar="PATH", help="the project directory or its TOML file (default: .)"
    )
    common.add_diagnosis_options(parser)
    parser.add_argument(
        "--emit-guard", metavar="FILE", help="write a dependency-free module that fails at import on a wrong stack"
    )


def run(args: argparse.Namespace, ctx: common.Context) -> int:
    from ascenv import constraints

    path = Path(ctx.cwd, args.path)
    file = constraints.find(path)
    declared = constraints.load(file, common.shown_path(constraints.shown_path(str(file), ctx.cwd)))
    if args.emit_guard:
        common.check_output_path(ctx, args.emit_guard)
        common.write_output(ctx, args.emit_guard, constraints.guard_module(declared), mode=0o644)
        ctx.out.message(f"wrote {common.output_name(args.emit_guard)}: import it first in your package")
        return errors.EXIT_OK
    summary = common.summary_file(ctx, args.summary)
    diagnosis = common.diagnose_machine(ctx, args, extra=lambda snap, matrix: constraints.judge(snap, declared, matrix))
    from ascenv.output import doctor as render

    render.render(ctx.out, diagnosis, args.format, command=NAME)
    if summary is not None:
        render.append_markdown(Path(ctx.cwd, summary), diagnosis, command=NAME)
    return diagnosis.exit_code
