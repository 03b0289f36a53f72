"""Build an operator project (kernels/OP/kernel.toml) in a fresh container of its pinned image and
keep the result in the store (.ascenv/store/ by default) with a manifest: inputs, recipe, toolchain,
outputs with sha256, timings. A build with the same key whose outputs still match their hashes is
reused, not rebuilt. --verify builds twice from different host paths and compares every byte.
An absent pinned image is bootstrapped (and must equal its pin) or pulled by its digest first;
--no-fetch refuses instead."""

from __future__ import annotations

import argparse
from pathlib import Path

from ascenv import __version__, builder, errors, paths
from ascenv.commands import _common as common
from ascenv.signals import termination_as_interrupt
from ascenv.store import Store

NAME = "build"
ORDER = 60
HELP = "build an operator project reproducibly in its pinned container; reuse identical builds"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "op", metavar="OP", help="operator project: a name under kernels/ (add_custom) or a directory with kernel.toml"
    )
    parser.add_argument("--target", default="cpu", metavar="TARGET", help="recipe target: cpu or npu (default: cpu)")
    parser.add_argument(
        "--image", metavar="NAME", help="build in this pinned image (containers/NAME) instead of the recipe's"
    )
    common.add_store_option(parser)
    parser.add_argument(
        "--no-fetch",
        action="store_true",
        help="refuse (exit 10) when the pinned image is absent instead of bootstrapping or pulling it",
    )
    parser.add_argument(
        "--verify",
        action="store_true",
        help="build twice in fresh containers from different host paths; fail if any byte differs",
    )
    parser.add_argument(
        "--timeout", type=float, default=3600.0, metavar="SECONDS", help="kill the build after SECONDS (default: 3600)"
    )
    common.add_format_option(parser)


def containers_dir(project: Path) -> Path:
    """The project's containers/ when it has one, else the recipes shipped with ascenv."""
    local = project / "containers"
    return local if local.is_dir() else paths.data_dir("containers")


@termination_as_interrupt()  # SIGTERM unwinds like Ctrl-C: staging dirs and containers are removed
def run(args: argparse.Namespace, ctx: common.Context) -> int:
    from ascenv.containers.engine import connect

    project = Path(ctx.cwd).resolve()
    kernel_dir, recipe = builder.load_target(project, args.op, args.target, paths.data_dir("kernels"))
    store = Store(common.store_dir(ctx, args.store))
    # before the engine and the build: the store is where the result goes (default .ascenv/store
    # in the cwd, which may be a read-only checkout)
    common.writable(
        store.root,
        f"the build store {store.root}",
        hint="run in a writable directory, or choose the store with --store DIR or ASCENV_STORE",
        directory=True,
    )
    engine = connect(ctx.environ)
    fetch = None if args.no_fetch else common.image_host(ctx)
    name = args.image or recipe.targets[args.target].image
    image = builder.resolve_image(containers_dir(project), name, engine, fetch)
    sde, sde_from = builder.source_date_epoch(kernel_dir, recipe.targets[args.target], ctx.run)
    if sde_from == "default":
        ctx.out.warn(f"{kernel_dir} is not in git and its recipe sets no source_date_epoch: using SOURCE_DATE_EPOCH=0")
    request = builder.Request(
        kernel_dir,
        recipe,
        args.target,
        image,
        __version__,
        sde,
        sde_from,
        host=lambda: builder.host_summary(ctx.environ, ctx.run),
        timeout=args.timeout,
    )
    from ascenv.output import build as render

    outcome = builder.build(
        request,
        engine,
        store,
        verify=args.verify,
        on_log=render.log_writer(ctx.out),
        on_event=ctx.out.message,
    )
    render.render(ctx.out, outcome, args.format)
    return errors.EXIT_OK
