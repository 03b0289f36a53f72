"""`op check [OPTYPE|VENDOR]`: for every custom operator vendor CANN searches, in its order
(ASCEND_CUSTOM_OPP_PATH, then vendors/config.ini), the OpTypes it provides and whether ATC, the
runtime and aclnn / torch_npu can use each on this arch and SoC; which vendor wins an OpType two
provide; ASCEND_CUSTOM_OPP_PATH entries naming an install root; the ABI gate; kernel caches
compiled before a vendor's install. Read from the files only: nothing is loaded, run or deleted."""

from __future__ import annotations

import argparse
import os
import platform

from ascenv import errors
from ascenv.commands import _common as common

NAME = "op"
ORDER = 66
HELP = "check which vendor provides each custom OpType and whether ATC, the runtime and aclnn see it"
DEFAULT_OPP = "/usr/local/Ascend/ascend-toolkit/latest/opp"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = sub.add_parser("check", help="OpType visibility per vendor, in CANN's search order")
    check.add_argument("name", nargs="?", metavar="OPTYPE|VENDOR", help="only this OpType or vendor")
    check.add_argument(
        "--root", default="/", metavar="DIR", help="read files under DIR instead of / (nothing there is executed)"
    )
    check.add_argument(
        "--soc", metavar="SOC", help="the SoC (Ascend910B4) or compute unit (ascend910b) to judge kernels for"
    )
    check.add_argument("--arch", help=f"host arch of the libraries (default: this machine's, {platform.machine()})")
    common.add_format_option(check, ("human", "json", "junit"))


def compute_unit(soc: str) -> str:
    """Ascend910B4 -> ascend910b (the compat SoC table); a lower-case compute unit is taken as
    given: "ascend910b" is a unit, while the SoC "Ascend910B" belongs to unit ascend910."""
    if soc == soc.lower():
        return soc
    from ascenv import compat

    row = compat.load().soc(soc)
    if row is None:
        raise errors.UsageError(
            f"--soc {soc} is not a SoC ascenv knows",
            hint="pass the soc_version ATC takes (Ascend910B4) or the compute unit (ascend910b)",
        )
    return row.compute_unit


def run(args: argparse.Namespace, ctx: common.Context) -> int:
    from ascenv.output import op as render
    from ascenv.package.visibility import check_ops

    root = common.root_argument(ctx, args.root)
    opp = ctx.environ.get("ASCEND_OPP_PATH") or (DEFAULT_OPP if root.is_dir(DEFAULT_OPP) else None)
    result = check_ops(
        root,
        ctx.environ,
        opp_path=opp,
        arch=args.arch or platform.machine(),
        compute_unit=compute_unit(args.soc) if args.soc else None,
        wanted=args.name,
        home=ctx.environ.get("HOME") or (os.path.expanduser("~") if root.is_host else None),
        cwd=os.path.abspath(ctx.cwd),
    )
    render.render_op_check(ctx.out, result, args.format)
    return errors.EXIT_FINDINGS if any(f.severity.value == "error" for f in result.findings) else errors.EXIT_OK
