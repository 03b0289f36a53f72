"""Check driver → firmware → CANN → kernels → torch_npu → torch → Python → SoC against the
compatibility matrix; say what is wrong and print the fix."""

from __future__ import annotations

import argparse
import os
from typing import Callable, Optional, TypeVar

from ascenv.checks import load_checks
from ascenv.checks.summary import diagnose
from ascenv.commands import _common as common
from ascenv.snapshot_io import load_snapshot

T = TypeVar("T")

NAME = "doctor"
ORDER = 10
HELP = "audit the whole Ascend stack and print exact fixes"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    common.add_machine_options(parser)
    parser.add_argument(
        "--from", dest="from_file", metavar="SNAPSHOT", help="check a saved snapshot (ascenv snapshot -o FILE) offline"
    )
    parser.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    common.add_format_option(parser, ("human", "json", "markdown"))


def run(args: argparse.Namespace, ctx: common.Context) -> int:
    # The matrix and the check modules load on a thread while the probes wait on npu-smi and the
    # target Python (start-up time); errors surface here as before.
    matrix = _in_background(lambda: (load_checks(), load_matrix(ctx.cache_dir))[1])
    if args.from_file:
        snapshot = load_snapshot(os.path.join(ctx.cwd, args.from_file), args.from_file)
    else:
        from ascenv.probe.snapshot import collect  # here: `doctor --from` re-checks offline and loads no probe

        snapshot = collect(common.root_argument(ctx, args.root), ctx.environ, ctx.run, python=args.python)
        if args.root != "/" and args.python is None and snapshot.python.executable:
            # --root never executes anything under DIR: its environments are read from their files
            ctx.out.message(
                f"note: the Python checked is {snapshot.python.executable} inside {args.root}, read from its files"
                " (--python PATH runs an interpreter instead)"
            )
    diagnosis = diagnose(snapshot, matrix(), strict=args.strict)
    from ascenv.output import doctor as render

    render.render(ctx.out, diagnosis, args.format)
    return diagnosis.exit_code


def load_matrix(cache_dir: Optional[str] = None) -> object:
    """The compat matrix when the data ships with this ascenv (checks without it skip)."""
    try:
        from ascenv import compat
    except ImportError:
        return None
    return compat.load_cached(cache_dir)


def _in_background(work: Callable[[], T]) -> Callable[[], T]:
    """Start ``work`` on a thread; the returned function waits for it and returns its result or
    raises its exception."""
    import threading

    outcome: dict = {}

    def target() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller by join()
            outcome["error"] = exc

    thread = threading.Thread(target=target, name="ascenv-matrix", daemon=True)
    thread.start()

    def join() -> T:
        thread.join()
        if "error" in outcome:
            raise outcome["error"]
        return outcome["value"]

    return join
