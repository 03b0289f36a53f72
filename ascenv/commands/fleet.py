"""Audit a fleet on Ansible: ship ascenv to every node of an inventory (no package index on the
nodes), take each node's snapshot with its own Python, gather them here and name the nodes whose
stack differs from the cluster lock (--lock) or from the majority. `fleet lock` writes the
majority stack's lock. Exit 0 all nodes match, 1 drift, 11 some nodes unreachable or failed."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Optional

from ascenv import errors, lockfile, signals
from ascenv.commands import _common as common

NAME = "fleet"
ORDER = 37
HELP = "audit every node of an Ansible inventory against a cluster lock or the majority; fleet lock"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="fleet_command", metavar="ACTION", required=True)
    audit = sub.add_parser("audit", help="snapshot every node and name the drifted, unreachable and failed ones")
    _common_options(audit)
    audit.add_argument("--lock", metavar="CLUSTER.lock", help="judge every node against this lock (ascenv lock)")
    audit.add_argument("-o", "--output", metavar="DIR", help="keep the results here, one folder per host")
    common.add_format_option(audit, ("human", "json", "markdown"))
    lock = sub.add_parser("lock", help="write the lock of the stack more than half of the nodes share")
    _common_options(lock)
    lock.add_argument("-o", "--output", required=True, metavar="CLUSTER.lock", help="where to write the lock")
    common.add_format_option(lock)


def _common_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-i", "--inventory", required=True, metavar="INVENTORY", help="an Ansible inventory")
    parser.add_argument("--limit", metavar="PATTERN", help="only these hosts (ansible-playbook --limit)")
    parser.add_argument("--forks", type=int, metavar="N", help="nodes at once (ansible-playbook --forks)")
    parser.add_argument("--serial", type=int, metavar="N", help="nodes per batch (the play's serial)")


def run(args: argparse.Namespace, ctx: common.Context) -> int:
    # SIGTERM unwinds like Ctrl-C: ansible-playbook's process group is ended and the bundle's
    # temporary folder removed (the `finally`s of proc.run and playbook.run_audit)
    with signals.termination_as_interrupt():
        return _run(args, ctx)


def _run(args: argparse.Namespace, ctx: common.Context) -> int:
    inventory = args.inventory
    if "," not in inventory:  # "h1,h2," is an inline host list to Ansible
        inventory = os.path.join(ctx.cwd, inventory)
        if not os.path.exists(inventory):
            raise errors.InputError(
                f"inventory {args.inventory} does not exist", hint="pass -i INVENTORY (a file or folder)"
            )
    if args.forks is not None and args.forks < 1:
        raise errors.UsageError(f"--forks {args.forks}: expected 1 or more")
    cluster_lock = None
    lock_text = None
    if getattr(args, "lock", None):
        cluster_lock, warnings = lockfile.read_lock(os.path.join(ctx.cwd, args.lock), args.lock)
        for warning in warnings:
            ctx.out.warn(warning)
        lock_text = lockfile.dumps_lock(cluster_lock)
    if args.fleet_command == "lock":  # the snapshots are only a means here: not kept
        import shutil
        import tempfile

        folder = Path(tempfile.mkdtemp(prefix="ascenv-fleet-lock-"))
        try:
            return _audit(args, ctx, inventory, folder, cluster_lock, lock_text)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return _audit(args, ctx, inventory, _results_folder(args, ctx), cluster_lock, lock_text)


def _audit(
    args: argparse.Namespace,
    ctx: common.Context,
    inventory: str,
    folder: Path,
    cluster_lock: Optional[lockfile.Lock],
    lock_text: Optional[str],
) -> int:
    from ascenv.fleet import playbook, results, verdicts
    from ascenv.output import fleet as render

    def progress(host: str) -> None:
        ctx.out.message(f"{host}: done")

    ran = playbook.run_audit(
        inventory,
        folder,
        ctx.environ,
        run=ctx.run,
        cluster_lock=lock_text,
        limit=args.limit,
        forks=args.forks,
        serial=args.serial,
        on_node=progress,
    )
    # the play's hosts as the playbook wrote them first: every one gets a verdict, a result or not
    hosts = results.played_hosts(folder)
    gathered = results.read_results(folder, hosts) if hosts is not None else ()
    if not gathered:
        raise errors.UsageError(
            f"no host of {args.inventory} was audited"
            + (f" (--limit {args.limit})" if args.limit else "")
            + f": {playbook.last_words(ran.completed)}",
            hint="ansible-playbook -i INVENTORY --list-hosts shows which hosts the inventory names",
        )
    if args.fleet_command == "lock":
        _, group = verdicts.majority_lock(gathered)
        # the lock `ascenv lock` would write on one of those nodes: with the project's image pins
        from ascenv import __version__
        from ascenv.snapshot_io import load_snapshot

        host = group.nodes[0]
        snapshot = load_snapshot(folder / results.host_key(host) / results.SNAPSHOT, host)
        lock = lockfile.lock_from_snapshot(
            snapshot, generator_version=__version__, source=host, images=lockfile.pinned_images()
        )
        lockfile.write_lock(os.path.join(ctx.cwd, args.output), lock, args.output)
        render.render_locked(ctx.out, args.output, group, gathered, args.format)
        return errors.EXIT_OK
    result = verdicts.audit(gathered, cluster_lock, args.lock or "")
    render.render_audit(ctx.out, result, str(folder), args.format)
    if result.exit_code == errors.EXIT_NODES_FAILED:
        names = ", ".join(f"{v.host} ({v.status})" for v in result.unreachable[:8])
        more = f" and {len(result.unreachable) - 8} more" if len(result.unreachable) > 8 else ""
        raise errors.NodesFailed(
            f"{len(result.unreachable)} node(s) not audited: {names}{more}",
            hint=f"see {folder}/<host>/result.json (ansible-playbook's output for a node without one);"
            " rerun on them with --limit",
        )
    return result.exit_code


def _results_folder(args: argparse.Namespace, ctx: common.Context) -> Path:
    """-o DIR, else ascenv-fleet-<time> in the current folder; made here, so a read-only current
    folder is a clear exit 2 naming -o, not a failure halfway through the run."""
    name = getattr(args, "output", None) if args.fleet_command == "audit" else None
    if not name:
        name = time.strftime("ascenv-fleet-%Y%m%d-%H%M%S")
    folder = Path(ctx.cwd) / name
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise errors.UsageError(
            f"-o {name} is not an empty folder: results of an earlier run would mix with this one's",
            hint="pass a new or empty folder",
        )
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise errors.UsageError(
            f"cannot make the results folder {name}: {exc.strerror}",
            hint="pass -o DIR in a writable place (the default is a new folder in the current one)",
        ) from None
    return folder
