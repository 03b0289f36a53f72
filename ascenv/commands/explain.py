"""Explain what a doctor check (ASC-…) means, why it matters and where the fact comes from."""

from __future__ import annotations

import argparse

from ascenv import errors
from ascenv.checks import load_checks
from ascenv.commands import _common as common

NAME = "explain"
ORDER = 11
HELP = "explain a doctor finding id or an Ascend error code, e.g. ascenv explain ASC-ENV-SOURCED, EZ1001"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", nargs="?", help="a finding id; without one, list them all")
    common.add_format_option(parser)


def run(args: argparse.Namespace, ctx: common.Context) -> int:
    checks = load_checks()
    if args.id is None:
        chosen = list(checks.values())
    else:
        wanted = args.id.upper()
        if wanted not in checks:
            from ascenv.triage.signatures import load as load_signatures

            codes = load_signatures().by_code(wanted)
            if codes:  # an Ascend error code (EZ1001, 507899): what triage knows of it
                from ascenv.output.triage import explain_code

                return explain_code(ctx.out, wanted, codes, args.format)
            import difflib

            close = difflib.get_close_matches(wanted, list(checks), n=1)
            raise errors.UsageError(
                f"no check named {args.id}",
                hint=f"perhaps you meant {close[0]}?" if close else "run `ascenv explain` to list every check",
            )
        chosen = [checks[wanted]]
    if args.format == "json":
        ctx.out.json(
            {
                "checks": [{"id": c.id, "layer": c.layer, "title": c.title, "explain": c.explain} for c in chosen],
            }
        )
    else:
        for c in chosen:
            ctx.out.text(
                f"{c.id}  ({c.layer}) {c.title}\n\n{c.explain}\n" if args.id else f"{c.id:<22} {c.layer:<10} {c.title}"
            )
    return errors.EXIT_OK
