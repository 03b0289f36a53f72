"""Compare snapshots and locks, in any mix. Two inputs: a side-by-side table of what differs. More
(a fleet: one snapshot per node, gathered by ssh, Ansible or Slurm): nodes grouped by identical
stack, outliers first, each with the layers where it differs. Exit 0 when all stacks are
identical, 1 when they differ."""

from __future__ import annotations

import argparse
import os

from ascenv import __version__, errors, fsutil, lockfile
from ascenv.commands import _common as common
from ascenv.diff import Node, StackReader, fleet, pair
from ascenv.report import GZIP_MAGIC, load_bundle
from ascenv.snapshot_io import read_snapshot_json, snapshot_from_json

# A bundle is read by the report module, within its own bounds; this only caps the sniff.
MAX_BUNDLE = 1 << 40

NAME = "diff"
ORDER = 35
HELP = "compare snapshots and locks: two side by side, or a fleet grouped by stack"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "inputs",
        nargs="+",
        metavar="FILE",
        help="snapshots (ascenv snapshot -o FILE), locks (ascenv lock -o FILE) and report bundles (ascenv report)",
    )
    common.add_format_option(parser, ("human", "json", "markdown"))


def run(args: argparse.Namespace, ctx: common.Context) -> int:
    if len(args.inputs) < 2:
        raise errors.UsageError("ascenv diff needs at least two snapshots or locks", hint="ascenv diff A B [C ...]")
    reader = StackReader()
    nodes = [load_node(os.path.join(ctx.cwd, name), name, ctx, reader) for name in args.inputs]
    from ascenv.output import diff as render

    if len(nodes) == 2:
        changes = pair(nodes[0], nodes[1])
        render.render_pair(ctx.out, (args.inputs[0], args.inputs[1]), changes, args.format)
        return errors.EXIT_FINDINGS if changes else errors.EXIT_OK
    groups = fleet(nodes)
    render.render_fleet(ctx.out, len(nodes), groups, args.format)
    return errors.EXIT_FINDINGS if len(groups) > 1 else errors.EXIT_OK


def load_node(path: str, name: str, ctx: common.Context, reader: StackReader) -> Node:
    """A snapshot (JSON), a lock (TOML) or a report bundle (.tar.gz), told apart by content, as a Lock."""
    with fsutil.open_input(path, what="", shown=name, limit=MAX_BUNDLE) as fh:
        head = fh.read(64)
    first = head.lstrip()[:1]
    if head.startswith(GZIP_MAGIC) or name.endswith((".tar.gz", ".tgz")):  # an `ascenv report` bundle
        snapshot = load_bundle(path, name)
        return Node(
            name, lockfile.lock_from_snapshot(snapshot, generator_version=__version__, source=name), images_known=False
        )
    if first in (b"{", b"["):  # JSON; TOML starts with a comment, a key or a [table] header
        if first == b"{" or _json_array(path, name):
            data = read_snapshot_json(path, name)
            if isinstance(data, dict):
                return Node(name, reader.lock(data, name), images_known=False)
            snapshot_from_json(data, name)  # not a table: raises, naming what was found
            raise errors.InputError(f"{name} is not an ascenv snapshot")
    lock, warnings = lockfile.read_lock(path, name)
    for warning in warnings:
        ctx.out.warn(warning)
    return Node(name, lock)


def _json_array(path: str, name: str) -> bool:
    """A ``[`` opens a JSON array or a TOML table header (``[platform]``): only the JSON parses."""
    import json

    try:
        json.loads(fsutil.read_input(path, what="", shown=name))
    except (ValueError, RecursionError):
        return False
    return True
