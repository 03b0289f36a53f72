"""Per-shape performance baselines beside the builds: import what msprof, msprof op or the
torch_npu profiler wrote, keep it in the store with the stack it ran on, and compare two runs
with a verdict that knows the noise (exit 1 on a regression, exit 2 when the stacks differ)."""

from __future__ import annotations

import argparse
import datetime
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ascenv import errors
from ascenv.commands import _common as common
from ascenv.signals import termination_as_interrupt

if TYPE_CHECKING:
    from ascenv.bench.store import BenchStore
    from ascenv.store import Store

NAME = "bench"
ORDER = 64
HELP = "run or import per-shape performance baselines and compare runs with a noise-aware verdict"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    _add_run_arguments(sub)
    imp = sub.add_parser("import", help="read a profiler's output (directory or CSV) and store it as a run")
    imp.add_argument("path", metavar="PATH", help="PROF_*, OPPROF_*, *_ascend_pt directory or one of their CSVs")
    imp.add_argument("--op", required=True, metavar="OP", help="the operator project the run belongs to")
    imp.add_argument(
        "--all-ops",
        action="store_true",
        help="keep every op type the profile holds under OP (default: only OP's own, e.g. AddCustom for add_custom)",
    )
    imp.add_argument("--shape", metavar="LABEL", help="name the shape where the source records none (msprof op)")
    imp.add_argument(
        "--build", metavar="KEY", help="the stored build that was measured (key or its first 6+ characters)"
    )
    imp.add_argument(
        "--root",
        default="/",
        metavar="DIR",
        help="probe the machine's stack under DIR (default: /); nothing is run there",
    )
    imp.add_argument(
        "--no-probe", action="store_true", help="record no facts of this machine (the profile was taken elsewhere)"
    )
    common.add_store_option(imp)
    common.add_format_option(imp)

    cmp = sub.add_parser(
        "compare", help="per shape: faster, slower, same, inconclusive or undecidable (default: baseline latest)"
    )
    cmp.add_argument("a", nargs="?", default="baseline", metavar="A", help="run id, build key, baseline or latest")
    cmp.add_argument("b", nargs="?", default="latest", metavar="B", help="run id, build key, baseline or latest")
    cmp.add_argument("--op", metavar="OP", help="the operator whose baseline and latest run are meant")
    cmp.add_argument(
        "--fail-over", default="5%", metavar="PCT", help="exit 1 when a shape is slower by more than PCT (default: 5%%)"
    )
    cmp.add_argument(
        "--allow-env-change", action="store_true", help="compare runs of different stacks anyway, with a warning"
    )
    cmp.add_argument(
        "--chart",
        metavar="FILE",
        help="also draw the comparison to FILE.png or FILE.svg (1200 x (300 + 40 per shape) px; needs ascenv[chart])",
    )
    common.add_store_option(cmp)
    common.add_format_option(cmp, ("human", "json", "junit"))

    base = sub.add_parser("baseline", help="baseline set RUN: accept a run as its operator's baseline")
    base.add_argument("verb", choices=["set"], metavar="ACTION", help="set: accept RUN as the baseline")
    base.add_argument("run", metavar="RUN", help="run id (or its first 6+ characters) or latest")
    base.add_argument("--op", metavar="OP", help="the operator, when RUN is latest")
    common.add_store_option(base)
    common.add_format_option(base)

    hist = sub.add_parser("history", help="an operator's runs, newest first, with the verdict against the previous one")
    hist.add_argument("op", metavar="OP")
    hist.add_argument("--shape", metavar="SHAPES", help="only records with these input shapes")
    hist.add_argument("--limit", type=int, default=20, metavar="N", help="list the newest N runs (default: 20; 0: all)")
    common.add_store_option(hist)
    # benchmark-action: the newest run as github-action-benchmark's customSmallerIsBetter JSON
    common.add_format_option(hist, ("human", "json", "benchmark-action"))


def _add_run_arguments(sub: Any) -> None:
    ran = sub.add_parser("run", help="time the recipe's benchmarks per shape on a stored build and store the run")
    ran.add_argument(
        "op", metavar="OP", help="operator project: a name under kernels/ (add_custom) or a directory with kernel.toml"
    )
    ran.add_argument("--target", default="cpu", choices=["cpu", "npu"], help="recipe target (default: cpu)")
    ran.add_argument("--shapes", metavar="S,S,...", help="run these shapes instead of the recipe's (for {shape})")
    ran.add_argument("--repeat", type=int, default=10, metavar="N", help="timed runs per shape (default: 10)")
    ran.add_argument(
        "--warmup",
        type=int,
        default=2,
        metavar="N",
        help="runs per shape before the timed ones, discarded (default: 2)",
    )
    ran.add_argument(
        "--build", metavar="KEY", help="the stored build to run (key or its first 6+ characters; default: the newest)"
    )
    common.add_store_option(ran)
    common.add_format_option(ran)


@termination_as_interrupt()  # SIGTERM ends the children it runs, as Ctrl-C does (I4, F4)
def _run_benchmarks(args: argparse.Namespace, ctx: common.Context, store: Store, render: Any) -> int:
    import shutil

    from ascenv import builder, paths
    from ascenv.bench import runner
    from ascenv.probe.fs import Root
    from ascenv.probe.snapshot import collect

    project = Path(ctx.cwd).resolve()
    kernel_dir, recipe = builder.load_target(project, args.op, args.target, paths.data_dir("kernels"))
    connect, resolve_image = common.stored_build_engine(ctx, project)

    request = runner.RunRequest(
        kernel_dir,
        recipe,
        args.target,
        shapes=common.shapes_option(args.shapes, "16384,1024001"),
        repeat=args.repeat,
        warmup=args.warmup,
        build=args.build,
        store_option=f" --store {args.store}" if args.store else "",
    )
    result = runner.bench_run(
        request,
        store,
        connect=connect,
        resolve_image=resolve_image,
        snapshot=collect(Root("/"), ctx.environ, ctx.run),  # host CPU and cores, NPU device nodes
        msprof=shutil.which("msprof", path=ctx.environ.get("PATH", "")),
        run=ctx.run,
        on_event=ctx.out.message,
    )
    render.ran(ctx.out, result, args.format)
    return errors.EXIT_TOOL_MISSING if isinstance(result, runner.NpuCommands) else errors.EXIT_OK


def _stores(args: argparse.Namespace, ctx: common.Context) -> tuple[Store, BenchStore]:
    from ascenv.bench.store import BenchStore
    from ascenv.store import Store

    store = Store(common.store_dir(ctx, args.store))
    return store, BenchStore(store)


def run(args: argparse.Namespace, ctx: common.Context) -> int:
    from ascenv.output import bench as render

    store, bench = _stores(args, ctx)
    if args.action == "run":
        return _run_benchmarks(args, ctx, store, render)
    if args.op is not None:  # it names <store>/<op>/: one safe directory name, said before any work
        from ascenv.bench.store import check_op

        check_op(args.op, "--op" if args.action != "history" else "OP")
    if args.action == "import":
        return _import(args, ctx, store, bench, render)
    if args.action == "compare":
        from ascenv.bench.stats import HISTORY, compare_runs, in_history

        if args.chart:  # a bad name or a missing matplotlib is said before any work
            from ascenv.output import bench_chart

            bench_chart.chart_format(args.chart)
            bench_chart.require_matplotlib()
        from ascenv.bench.stats import threshold

        limit = threshold(args.fail_over)
        from ascenv.bench.pick import pick

        picked = pick(bench, args.a, args.b, args.op)
        a, b = picked.a.run, picked.b.run  # the noise between runs: from the stored runs of A's stack up to B
        earlier = bench.up_to(a.op, b, lambda r: in_history(a, b, r), HISTORY)
        result = compare_runs(a, b, limit, earlier)
        refused = bool(result.differences) and not args.allow_env_change
        if args.chart and not refused:  # no picture of a comparison that is refused
            bench_chart.write(os.path.join(ctx.cwd, args.chart), result, shown=args.chart)
        render.comparison(
            ctx.out, result, args.format, args.allow_env_change, None if refused else args.chart, picked=picked
        )
        if refused:
            return errors.EXIT_USAGE
        return errors.EXIT_FINDINGS if result.regressions else errors.EXIT_OK
    if args.action == "baseline":
        chosen = bench.resolve(args.run, args.op)
        bench.set_baseline(chosen)
        render.baseline(ctx.out, chosen, args.format)
        return errors.EXIT_OK
    from ascenv.bench.history import history, source_commits

    if args.limit < 0:
        raise errors.UsageError(f"--limit {args.limit}: expected a number of runs, 0 for all")
    if args.limit:  # the runs listed and the one the oldest of them is judged against
        newest, total = bench.newest(args.op, args.limit + 1)
    else:
        newest = bench.runs(args.op)
        total = len(newest)
    runs = [s.run for s in newest]
    commits = source_commits(store, args.op, (r.fingerprint.build_key for r in runs))
    listing = history(args.op, runs, args.shape, args.limit, total, commits=commits)
    render.history(ctx.out, listing, args.format)
    return errors.EXIT_OK


def _import(args: argparse.Namespace, ctx: common.Context, store: Store, bench: BenchStore, render: Any) -> int:
    from ascenv.bench import fingerprint, readers
    from ascenv.bench.records import of_op
    from ascenv.bench.store import new_run

    manifest = None
    if args.build:
        entry = store.find(args.build)
        if entry.op != args.op:
            raise errors.UsageError(f"build {entry.key[:12]} is of {entry.op}, not {args.op}")
        if entry.manifest is None:
            raise errors.InputError(f"build {entry.key[:12]}: {entry.error}")
        manifest = entry.manifest
    path = Path(ctx.cwd, args.path)
    imported = readers.read_path(path, args.shape, shown=args.path)
    records = imported.records
    left_out: tuple[str, ...] = ()
    if not args.all_ops:  # a model's profile holds every kernel it ran: only OP's are OP's run
        chosen = of_op(records, args.op)
        if not chosen.kept:  # as `pip show NAME` of a package not installed: a warning, exit 1
            render.absent(ctx.out, args.op, args.path, chosen.left_out, args.format)
            return errors.EXIT_FINDINGS
        records, left_out = chosen.kept, chosen.left_out
    snapshot = None
    if not args.no_probe:
        from ascenv.probe.snapshot import collect

        snapshot = collect(common.root_argument(ctx, args.root), ctx.environ, ctx.run)
    sets = sorted({r.metric_set for r in records})
    downclocked = [r.clock.downclocked for r in records if r.clock.downclocked is not None]
    print_ = fingerprint.gather(
        target="npu",
        manifest=manifest,
        snapshot=snapshot,
        profiler_info=imported.profiler_info,
        metric_set="+".join(sets),
        downclocked=any(downclocked) if downclocked else None,
    )
    created = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    new = new_run(
        op=args.op,
        target="npu",
        tool=imported.tool,
        created=created,
        source=args.path,
        files=imported.files,
        skipped_rows=imported.skipped_rows,
        fingerprint=print_,
        records=records,
    )
    stored = bench.write(new)
    render.imported(ctx.out, new, stored, args.format, left_out)
    return errors.EXIT_OK
