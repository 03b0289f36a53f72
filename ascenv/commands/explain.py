"""Explain what a doctor check (ASC-…) means, why it matters and where the fact comes from."""

from __future__ import annotations

import argparse

from ascenv import errors
from ascenv.commands import _common as common
from ascenv.explain import explain

NAME = "explain"
ORDER = 11
HELP = "explain a doctor finding id or an Ascend error code, e.g. ascenv explain ASC-ENV-SOURCED, EZ1001"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", nargs="?", help="a finding id; without one, list them all")
    common.add_format_option(parser)


def run(args: argparse.Namespace, ctx: common.Context) -> int:
    from ascenv.output import explain as render

    render.render(ctx.out, explain(args.id), args.format)
    return errors.EXIT_OK
