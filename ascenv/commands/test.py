"""``ascenv test OP``: an accuracy check of a stored operator build against the recipe's
reference (exit 0 pass, 1 an accuracy failure, 4 the NPU commands printed for an NPU host)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from ascenv import errors
from ascenv.commands import _common as common
from ascenv.signals import termination_as_interrupt

if TYPE_CHECKING:
    from ascenv.store import Store

NAME = "test"
ORDER = 65
HELP = "check a stored operator build's output against its reference, per shape, under dtype tolerances"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "op", metavar="OP", help="operator project: a name under kernels/ (add_custom) or a directory with kernel.toml"
    )
    parser.add_argument(
        "--target", choices=["cpu", "npu"], help="recipe target (default: the target of --build KEY, else cpu)"
    )
    parser.add_argument("--shapes", metavar="S,S,...", help="test these shapes instead of the recipe's (16385,4x4097)")
    parser.add_argument(
        "--build", metavar="KEY", help="the stored build to test (key or its first 6+ characters; default: the newest)"
    )
    parser.add_argument(
        "--seed", type=int, metavar="N", help="seed of the inputs (default: the recipe's accuracy.seed, else 0)"
    )
    common.add_store_option(parser)
    common.add_format_option(parser)


@termination_as_interrupt()  # SIGTERM ends the children it runs, as Ctrl-C does
def run(args: argparse.Namespace, ctx: common.Context) -> int:
    try:  # a dependency of the package, but a node's bundle (fleet rollout) runs on the node's own Python
        import numpy  # noqa: F401
    except ImportError:
        raise errors.ToolMissing(
            "ascenv test needs numpy (the inputs, the reference and the comparison), and this Python has none",
            hint="pip install numpy (it comes with `pip install ascenv`)",
        ) from None
    from ascenv import builder, paths
    from ascenv.accuracy import runner
    from ascenv.output import test as render
    from ascenv.probe.fs import Root
    from ascenv.probe.snapshot import collect
    from ascenv.store import Store

    store = Store(common.store_dir(ctx, args.store))
    project = Path(ctx.cwd).resolve()
    # `test OP --build KEY` (as fleet rollout runs it on a node) tests that build on its own target
    target = args.target or (_target_of(store, args.build) if args.build else "cpu")
    kernel_dir, recipe = builder.load_target(project, args.op, target, paths.data_dir("kernels"))
    connect, resolve_image = common.stored_build_engine(ctx, project)

    request = runner.TestRequest(
        kernel_dir,
        recipe,
        target,
        shapes=common.shapes_option(args.shapes, "16385,4x4097"),
        seed=args.seed,
        build=args.build,
        store_option=f" --store {args.store}" if args.store else "",
    )
    result = runner.run_test(
        request,
        store,
        connect=connect,
        resolve_image=resolve_image,
        probe=lambda: collect(Root("/"), ctx.environ, ctx.run),  # NPU device nodes
        run=ctx.run,
        on_event=ctx.out.message,
    )
    render.tested(ctx.out, result, args.format)
    if isinstance(result, runner.NpuCommands):
        return errors.EXIT_TOOL_MISSING
    return errors.EXIT_OK if result.run.passed else errors.EXIT_FINDINGS


def _target_of(store: Store, build: str) -> str:
    entry = store.find(build)
    return entry.manifest.target if entry.manifest is not None else "cpu"  # a damaged one is refused later
