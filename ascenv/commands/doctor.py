"""Check driver → firmware → CANN → kernels → torch_npu → torch → Python → SoC against the
compatibility matrix; say what is wrong and print the fix."""

from __future__ import annotations

import argparse
from pathlib import Path

from ascenv.commands import _common as common

NAME = "doctor"
ORDER = 10
HELP = "audit the whole Ascend stack and print exact fixes"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    common.add_diagnosis_options(parser)


def run(args: argparse.Namespace, ctx: common.Context) -> int:
    summary = common.summary_file(ctx, args.summary)
    diagnosis = common.diagnose_machine(ctx, args)
    from ascenv.output import doctor as render

    render.render(ctx.out, diagnosis, args.format)
    if summary is not None:
        render.append_markdown(Path(ctx.cwd, summary), diagnosis)
    return diagnosis.exit_code
