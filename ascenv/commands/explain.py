"""Explain what a doctor check (ASC-…) means, why it matters and where the fact comes from."""

from __future__ import annotations

import argparse

from ascenv import errors
from ascenv.checks import RENAMED, CheckInfo, load_checks, resolve
from ascenv.commands import _common as common

# Checks that grade with the compatibility data (compat/*.toml): explain says how old it is.
_USES_COMPAT = frozenset(
    (
        *("ASC-TORCH-PAIR", "ASC-TORCH-CANN", "ASC-TORCH-SUGGEST", "ASC-TORCH-PYTHON"),
        *("ASC-FW-DRIVER", "ASC-DRIVER-REBOOT", "ASC-CANN-DRIVER", "ASC-DRIVER-CANN", "ASC-CANN-LATEST"),
        *("ASC-KERNELS-SOC", "ASC-KERNELS-TARGET", "ASC-KERNELS-ABI", "ASC-VENDOR-ABI", "ASC-VENDOR-UNITS"),
    )
)

NAME = "explain"
ORDER = 11
HELP = "explain a doctor finding id or an Ascend error code, e.g. ascenv explain ASC-ENV-SOURCED, EZ1001"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", nargs="?", help="a finding id; without one, list them all")
    common.add_format_option(parser)


def run(args: argparse.Namespace, ctx: common.Context) -> int:
    checks = load_checks()
    renamed = ""  # the old ID asked for, when a check was renamed since
    if args.id is None:
        chosen = list(checks.values())
    else:
        wanted = args.id.upper()
        found = resolve(wanted)
        if found is None:
            from ascenv.triage.signatures import load as load_signatures

            codes = load_signatures().by_code(wanted)
            if codes:  # an Ascend error code (EZ1001, 507899): what triage knows of it
                from ascenv.output.triage import explain_code

                return explain_code(ctx.out, wanted, codes, args.format)
            import difflib

            close = difflib.get_close_matches(wanted, [*checks, *RENAMED], n=1)
            raise errors.UsageError(
                f"no check named {args.id}",
                hint=f"perhaps you meant {RENAMED.get(close[0], close[0])}?"
                if close
                else "run `ascenv explain` to list every check",
            )
        chosen = [found]
        renamed = wanted if found.id != wanted else ""
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
                        "renamed_from": sorted(old for old, new in RENAMED.items() if new == c.id),
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
            note = f"{renamed} was renamed {c.id}; the old ID still works here.\n\n" if renamed else ""
            ctx.out.text(f"{note}{c.id}  ({c.layer}) {c.title}\n\n{c.explain}\n{dated}")
    return errors.EXIT_OK


def _uses_compat(check: CheckInfo) -> bool:
    return check.id in _USES_COMPAT


def _compat_as_of() -> str:
    """The day the shipped matrix was last compared with its sources ("" without the data)."""
    from ascenv import compat, paths

    if not (paths.data_dir("compat") / "cann.toml").is_file():
        return ""
    return compat.load().as_of
