"""Export this machine's stack (or a saved snapshot's) to a monitoring system: `ascenv export
prometheus` writes the text exposition format for node-exporter's textfile collector, atomically
(a scrape never reads half a file; the collector skips the temp file, which does not end in
.prom)."""

from __future__ import annotations

import argparse
import os
import time

from ascenv import __version__, errors, lockfile
from ascenv.commands import _common as common
from ascenv.snapshot_io import load_snapshot

NAME = "export"
ORDER = 75
HELP = "export the stack as metrics: `export prometheus` for node-exporter's textfile collector"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    kinds = parser.add_subparsers(dest="kind", metavar="ACTION", required=True)
    prom = kinds.add_parser(
        "prometheus",
        help="the text exposition format (node-exporter --collector.textfile)",
        description="Write ascenv_stack_info, ascenv_findings, ascenv_lock_in_sync, ascenv_vendor_info and "
        "ascenv_last_run_timestamp_seconds in the text exposition format, atomically.",
    )
    prom.add_argument(
        "-o",
        "--output",
        default=common.STDOUT,
        metavar="FILE",
        help="where to write, e.g. <textfile dir>/ascenv.prom; - for standard output (default)",
    )
    prom.add_argument(
        "--from", dest="from_file", metavar="SNAPSHOT", help="a snapshot (ascenv snapshot -o FILE), not this machine"
    )
    prom.add_argument(
        "--lock",
        action="append",
        default=[],
        metavar="LOCK",
        help="report ascenv_lock_in_sync against this lock (repeatable; one of another platform is left out)",
    )
    common.add_machine_options(prom)


def run(args: argparse.Namespace, ctx: common.Context) -> int:
    from ascenv.checks import load_checks
    from ascenv.checks.summary import diagnose
    from ascenv.metrics import stack_metrics
    from ascenv.output import export as render

    common.check_output_path(ctx, args.output)
    # the locks first: a missing or unreadable one is refused before the machine is probed
    locks = [(name, lockfile.read_lock(os.path.join(ctx.cwd, name), name)[0]) for name in args.lock]
    if args.from_file:
        snapshot = load_snapshot(os.path.join(ctx.cwd, args.from_file), args.from_file)
    else:
        from ascenv.probe.snapshot import collect

        snapshot = collect(common.root_argument(ctx, args.root), ctx.environ, ctx.run, python=args.python)
    # as `ascenv lock` makes it (its pinned images too), so that a lock just written is in sync
    machine = lockfile.lock_from_snapshot(
        snapshot, generator_version=__version__, source=args.from_file or "", images=lockfile.pinned_images()
    )
    load_checks()
    findings = diagnose(snapshot, _matrix(ctx)).findings
    checks = []
    for name, locked in locks:
        try:
            checks.append(lockfile.check_lock(locked, machine, source=name))
        except errors.PlatformMismatch:
            # one DaemonSet, one lock per platform (--lock a2.lock --lock a3.lock): a node reports
            # the locks of its own platform; another's would only be false drift
            ctx.out.message(f"note: {name} is for another platform: no ascenv_lock_in_sync for it")
    metrics = stack_metrics(snapshot, machine, findings, checks, now=time.time())
    # 0644: node-exporter runs as its own user and must read the file
    common.write_output(ctx, args.output, render.exposition(metrics), mode=0o644)
    if not common.to_stdout(args.output):  # on stdout the metrics are the whole output (a pipe, a redirect)
        render.render_written(ctx.out, common.output_name(args.output), metrics)
    return errors.EXIT_OK


def _matrix(ctx: common.Context) -> object:
    """The compat matrix when the data ships with this ascenv (checks without it skip), as doctor."""
    try:
        from ascenv import compat
    except ImportError:
        return None
    return compat.load_cached(ctx.cache_dir)
