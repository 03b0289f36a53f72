"""Build an operator project (kernels/OP/kernel.toml) in a fresh container of its pinned image and
keep the result in the store (.ascenv/store/ by default) with a manifest: inputs, recipe, toolchain,
outputs with sha256, timings. A build with the same key whose outputs still match their hashes is
reused, not rebuilt. --verify builds twice from different host paths and compares every byte.
An absent pinned image is bootstrapped (and must equal its pin) or pulled by its digest first;
--no-fetch refuses instead."""

from __future__ import annotations

import argparse
import os
import platform
from collections.abc import Mapping
from pathlib import Path

from ascenv import __version__, builder, errors, paths
from ascenv.cache.roots import ascenv_cache_dir
from ascenv.commands import _common as common
from ascenv.containers import images
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
    add_store_option(parser)
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


def add_store_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        metavar="DIR",
        help="the build store (default: $ASCENV_STORE, else .ascenv/store in the current directory)",
    )


def store_dir(args: argparse.Namespace, ctx: common.Context) -> Path:
    chosen = args.store or ctx.environ.get("ASCENV_STORE") or os.path.join(".ascenv", "store")
    return Path(ctx.cwd, chosen).resolve()


def containers_dir(project: Path) -> Path:
    """The project's containers/ when it has one, else the recipes shipped with ascenv."""
    local = project / "containers"
    return local if local.is_dir() else paths.data_dir("containers")


def run(args: argparse.Namespace, ctx: common.Context) -> int:
    from ascenv.containers.engine import connect

    project = Path(ctx.cwd).resolve()
    kernel_dir = builder.find_kernel(project, args.op, paths.data_dir("kernels"))
    recipe = builder.load_recipe(kernel_dir)
    if args.target not in recipe.targets:
        raise errors.UsageError(
            f"{kernel_dir / builder.RECIPE_FILE} has no target {args.target!r}",
            hint=f"targets: {', '.join(sorted(recipe.targets))}",
        )
    engine = connect(ctx.environ)
    fetch = None if args.no_fetch else image_host(ctx)
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
        host=lambda: host_summary(ctx.environ, ctx),
        timeout=args.timeout,
    )
    from ascenv.output.build import log_writer, render_build

    outcome = builder.build(
        request,
        engine,
        Store(store_dir(args, ctx)),
        verify=args.verify,
        on_log=log_writer(ctx.out),
        on_event=ctx.out.message,
    )
    if args.format == "json":
        m = outcome.entry.manifest
        assert m is not None  # a committed or reused entry always has one
        ctx.out.json(
            {
                "op": m.op,
                "target": m.target,
                "key": m.key,
                "reused": outcome.reused,
                "raced": outcome.raced,
                "verified": outcome.verified,
                "replaced": list(outcome.replaced),
                "seconds": round(outcome.seconds, 3),
                "path": str(outcome.entry.path),
                "outputs": [{"path": o.path, "size": o.size, "sha256": o.sha256} for o in m.outputs],
            }
        )
    else:
        render_build(ctx.out, outcome, str(outcome.entry.path.parent.parent))
    return errors.EXIT_OK


def image_host(ctx: common.Context) -> images.Host:
    """Where an absent pinned image is bootstrapped (ascenv's cache) and how progress is told."""
    home = ctx.environ.get("HOME") or os.path.expanduser("~")
    cache = ascenv_cache_dir(ctx.environ, home=home, cwd=ctx.cwd)
    return images.Host(environ=ctx.environ, cache=Path(cache), run=ctx.run, on_event=ctx.out.message)


def host_summary(environ: Mapping[str, str], ctx: common.Context) -> dict[str, str]:
    """The host stack in one table of strings: ascenv.probe.collect (about 0.15 s) when it works,
    the platform basics otherwise. Asked only for a real build, never for a store hit."""
    basics = {"platform": platform.platform(), "python": platform.python_version()}
    try:
        from ascenv.probe import collect
        from ascenv.probe.fs import Root

        snap = collect(Root("/"), environ, ctx.run)
    except Exception as exc:  # noqa: BLE001 - the summary is informative, a failed probe must not stop a build
        return {**basics, "probe-error": f"{type(exc).__name__}: {exc}"}
    active = next((c for c in snap.cann.installs if c.path == snap.cann.active), None)
    chips = sorted({c.name for c in snap.npu.chips if c.name})
    found = {
        "os": snap.host.os_name,
        "kernel": snap.host.kernel,
        "arch": snap.host.arch,
        "glibc": snap.host.glibc,
        "driver": snap.driver.version,
        "firmware": snap.firmware.version,
        "cann": active.version if active else None,
        "cann-compiler": active.compiler_version if active else None,
        "npu": f"{len(snap.npu.chips)} x {', '.join(chips)}" if chips else None,
    }
    return {**basics, **{k: v for k, v in found.items() if v}}
