"""Explain what a doctor check (ASC-…) means, why it matters and where the fact comes from."""

from __future__ import annotations

import argparse

from ascenv import errors
from ascenv.checks import CheckInfo, load_checks
from ascenv.commands import _common as common

# Checks that grade with the compatibility data (compat/*.toml): explain says how old it is.
_USES_COMPAT = ("ascenv.checks.torch", "ascenv.checks.stack", "ascenv.checks.kernels", "ascenv.checks.custom_ops")

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
    as_of = _compat_as_of()
    if args.format == "json":
        ctx.out.json(
            {
                "checks": [
                    {
                        "id": c.id,
                        "layer": c.layer,
                        "title": c.title,
                        "explain": c.explain,
                        "compat_data_as_of": as_of if _uses_compat(c) else None,
                    }
                    for c in chosen
                ],
                "compat_data_as_of": as_of,
            }
        )
    else:
        for c in chosen:
            if not args.id:
                ctx.out.text(f"{c.id:<22} {c.layer:<10} {c.title}")
                continue
            dated = f"Compatibility data (compat/*.toml) as of {as_of}.\n" if as_of and _uses_compat(c) else ""
            ctx.out.text(f"{c.id}  ({c.layer}) {c.title}\n\n{c.explain}\n{dated}")
    return errors.EXIT_OK


def _uses_compat(check: CheckInfo) -> bool:
    return getattr(check.function, "__module__", "") in _USES_COMPAT


def _compat_as_of() -> str:
    """The day the shipped matrix was last compared with its sources ("" without the data)."""
    from ascenv import compat, paths

    if not (paths.data_dir("compat") / "cann.toml").is_file():
        return ""
    return compat.load().as_of
