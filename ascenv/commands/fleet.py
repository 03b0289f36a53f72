"""Audit a fleet on Ansible: ship ascenv to every node of an inventory (no package index on the
nodes), take each node's snapshot with its own Python, gather them here and name the nodes whose
stack differs from the cluster lock (--lock) or from the majority. `fleet lock` writes the
majority stack's lock. Exit 0 all nodes match, 1 drift, 11 some nodes unreachable or failed.
`fleet rollout` installs a stored build wave by wave with gates and rolls it back on a failure
(ascenv.fleet.rollout): exit 0 every node verified, 1 a gate failed (rolled back or held), 11 a
node was not reached (rerun to continue)."""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from ascenv import errors, lockfile, signals
from ascenv.commands import _common as common
from ascenv.words import counted

if TYPE_CHECKING:
    from ascenv.fleet.rollout import Journal
    from ascenv.store import Entry

NAME = "fleet"
ORDER = 37
HELP = "audit every node of an Ansible inventory against a cluster lock or the majority; fleet lock; fleet rollout"


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
    _rollout_options(sub)


def _rollout_options(sub: argparse._SubParsersAction) -> None:
    roll = sub.add_parser(
        "rollout", help="install a stored build on every node in waves, with gates and automatic rollback"
    )
    roll.add_argument("op", metavar="OP", help="the operator project name (add_custom)")
    roll.add_argument("--build", required=True, metavar="KEY", help="the stored npu build (key or its first 6+)")
    roll.add_argument("-i", "--inventory", required=True, metavar="INVENTORY", help="an Ansible inventory")
    roll.add_argument("--canary", type=int, default=1, metavar="N", help="nodes of the first wave (default 1)")
    waves = roll.add_mutually_exclusive_group()
    waves.add_argument("--waves", metavar="SHARES", help="shares of the fleet each wave brings it to: 25%%,50%%,100%%")
    waves.add_argument(
        "--limit", action="append", metavar="GROUP", help="a group or host of the inventory per wave (repeat)"
    )
    roll.add_argument(
        "--install-path", metavar="DIR", help="install root on hosts without an ascenv_install_path host variable"
    )
    roll.add_argument("--clean-cache", action="store_true", help="clean stale kernel caches with op check's command")
    roll.add_argument(
        "--gate",
        action="append",
        choices=("op-check", "test"),
        default=[],
        help="a gate that must run (test: a node that cannot run it fails)",
    )
    roll.add_argument(
        "--fail-over",
        metavar="PCT",
        help="the bench gate: a node's run of the build slower than its baseline by more than PCT fails",
    )
    roll.add_argument(
        "--allow-unchecked-bench",
        action="store_true",
        help="with --fail-over: a node that cannot run the bench gate (no NPU, no baseline) passes, said as such",
    )
    roll.add_argument("--no-rollback", action="store_true", help="on a failed gate, hold the nodes for inspection")
    roll.add_argument("--status", action="store_true", help="show the journal of this rollout, change nothing")
    roll.add_argument("--journal", metavar="FILE", help="the journal (default ./ascenv-fleet-rollout/OP-KEY.json)")
    roll.add_argument("--forks", type=int, metavar="N", help="nodes at once (ansible-playbook --forks)")
    common.add_store_option(roll)
    common.add_format_option(roll)


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
    inventory = _inventory(args, ctx)
    if args.forks is not None and args.forks < 1:
        raise errors.UsageError(f"--forks {args.forks}: expected 1 or more")
    if args.fleet_command == "rollout":
        return _rollout(args, ctx, inventory)
    return _audit_run(args, ctx, inventory)


def _inventory(args: argparse.Namespace, ctx: common.Context) -> str:
    inventory = args.inventory
    if "," not in inventory:  # "h1,h2," is an inline host list to Ansible
        inventory = os.path.join(ctx.cwd, inventory)
        if not os.path.exists(inventory):
            raise errors.InputError(
                f"inventory {args.inventory} does not exist", hint="pass -i INVENTORY (a file or folder)"
            )
    return inventory


def _rollout(args: argparse.Namespace, ctx: common.Context, inventory: str) -> int:
    from ascenv import installer
    from ascenv.fleet import journal as journal_file
    from ascenv.fleet import rollout, rollout_run
    from ascenv.output import fleet as render
    from ascenv.store import Store

    entry = installer.pick_build(Store(common.store_dir(ctx, args.store)), args.op, args.build)
    path = Path(ctx.cwd, args.journal) if args.journal else rollout_run.default_journal(ctx.cwd, args.op, entry.key)
    shown = args.journal or str(path)
    journal = journal_file.load(path, shown)
    if args.status:
        if journal is None:
            raise errors.UsageError(f"no rollout of {args.op} {entry.key[:12]} has started: {shown} does not exist")
        render.render_rollout(ctx.out, journal, shown, args.format)
        return rollout.exit_code(journal)
    if args.install_path is not None and not args.install_path.startswith("/"):
        raise errors.UsageError(f"--install-path {args.install_path}: expected an absolute path on the nodes")
    bench, recipe = None, None
    if args.fail_over is not None:
        from ascenv.bench.stats import threshold

        bench = rollout.BenchGate(threshold(args.fail_over), args.allow_unchecked_bench)
        recipe = _bench_recipe(args, ctx)
    elif args.allow_unchecked_bench:
        raise errors.UsageError("--allow-unchecked-bench is of the bench gate: give --fail-over PCT too")
    # the plan of a new rollout, made (and its options checked) before anything is written
    planned = _plan(args, ctx, inventory, entry) if journal is None else None
    options = rollout_run.Options(
        inventory,
        args.install_path,
        rollback=not args.no_rollback,
        clean_cache=args.clean_cache,
        require_test="test" in args.gate,
        forks=args.forks,
        bench=bench,
        bench_recipe=recipe,
    )
    with journal_file.held(path, shown):
        journal = journal_file.load(path, shown)  # again: as the run before this one left it
        if journal is None:
            journal = planned or _plan(args, ctx, inventory, entry)
        else:
            journal = rollout.resumed(journal, args.op, entry.key)
            ctx.out.message(f"continuing the rollout of {shown}: {journal.phase}, wave {journal.wave + 1}")
        journal = rollout_run.run_rollout(journal, path, entry, options, ctx.environ, ctx.run, ctx.out.message)
    render.render_rollout(ctx.out, journal, shown, args.format)
    code = rollout.exit_code(journal)
    if code == errors.EXIT_NODES_FAILED:
        raise errors.NodesFailed(
            rollout.stop_reason(journal),
            hint="the journal keeps every node's state; rerun the same command to continue",
        )
    return code


def _bench_recipe(args: argparse.Namespace, ctx: common.Context) -> Optional[Path]:
    """The operator's kernel.toml the nodes run the bench gate's benchmark from (found as `bench
    run` finds it: the project here, else the operators ascenv ships). A recipe with no npu
    benchmark can check no node: said before any node is touched, unless the user lets unchecked
    nodes pass (--allow-unchecked-bench), which ships no recipe (each node then says why)."""
    from ascenv import builder, paths

    try:
        kernel_dir, recipe = builder.load_target(Path(ctx.cwd), args.op, "npu", paths.data_dir("kernels"))
    except errors.UsageError as exc:
        if args.allow_unchecked_bench:
            return None
        raise errors.UsageError(
            f"--fail-over: the bench gate needs the recipe of {args.op}'s npu benchmarks: {exc.message}",
            hint="run from the operator's project, or pass --allow-unchecked-bench to let nodes that cannot check it"
            " pass",
        ) from None
    if not recipe.targets["npu"].benchmarks and not args.allow_unchecked_bench:
        raise errors.UsageError(
            f"--fail-over: {kernel_dir / builder.RECIPE_FILE} declares no npu benchmarks: the bench gate can check"
            " no node",
            hint="add a [[targets.npu.benchmarks]] table, or pass --allow-unchecked-bench (each node's gate then"
            " says it is not checkable)",
        )
    return kernel_dir / builder.RECIPE_FILE


def _plan(args: argparse.Namespace, ctx: common.Context, inventory: str, entry: Entry) -> Journal:
    """A new rollout's journal: the package's vendors and the waves over the inventory's hosts."""
    from ascenv import installer
    from ascenv.fleet import rollout, rollout_run

    # read, never run; a package with no packages/vendors/<vendor>/ is exit 2: nothing to check or roll back
    vendors = installer.package_vendors(installer.run_file(entry))
    groups = rollout_run.hosts_and_groups(inventory, ctx.environ, ctx.run)
    limits = rollout.limit_groups(groups, args.limit) if args.limit else None
    shares = rollout.parse_shares(args.waves) if args.waves else (100,)
    return rollout.new_journal(
        args.op, entry.key, vendors, rollout.plan_waves(groups["all"], args.canary, shares, limits)
    )


def _audit_run(args: argparse.Namespace, ctx: common.Context, inventory: str) -> int:
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

    def progress(host: str) -> None:  # as each result arrives: what it says, not a bare "done"
        node = results.read_host(folder, host, results.StackReader())
        ctx.out.message(f"{host}: {node.status}" + (f" ({node.message})" if node.status != results.OK else ""))

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
    result = verdicts.audit(gathered, cluster_lock, args.lock or "", _known_builds(ctx))
    render.render_audit(ctx.out, result, str(folder), args.format)
    if result.exit_code == errors.EXIT_NODES_FAILED:
        names = ", ".join(f"{v.host} ({v.status})" for v in result.unreachable[:8])
        more = f" and {len(result.unreachable) - 8} more" if len(result.unreachable) > 8 else ""
        raise errors.NodesFailed(
            f"{counted(len(result.unreachable), 'node')} not audited: {names}{more}",
            hint=_unreachable_hint(result.unreachable, folder),
        )
    return result.exit_code


def _known_builds(ctx: common.Context) -> dict[str, str]:
    """The store's build keys by the sha256 of their manifest.toml (a vendor installed by ascenv
    carries a byte copy of it), so the audit names the build each node's vendor is at."""
    import hashlib

    from ascenv.store import MANIFEST, Store

    st = Store(common.store_dir(ctx, None))
    known: dict[str, str] = {}
    try:
        entries = st.entries() if st.root.is_dir() else []
    except (errors.AscenvError, OSError):  # a store that does not read names no build: digests are shown
        return known
    for entry in entries:
        try:
            known[hashlib.sha256((entry.path / MANIFEST).read_bytes()).hexdigest()] = entry.key
        except OSError:
            continue
    return known


def _unreachable_hint(unreachable: Sequence[Any], folder: Path) -> str:
    """Where to look, and for the commonest cause of a fresh fleet, the two ways out: OpenSSH's
    "Host key verification failed" is Ansible's host key checking refusing a node not yet in
    known_hosts (Ansible docs, "Host key checking")."""
    hint = (
        f"see {folder}/<host>/result.json (ansible-playbook's output for a node without one);"
        " rerun on them with --limit"
    )
    if any("host key verification failed" in (v.message or "").lower() for v in unreachable):
        hint += (
            "; host keys were refused: add them with `ssh-keyscan HOST >> ~/.ssh/known_hosts` (check the"
            " fingerprints), or for throwaway nodes set ANSIBLE_HOST_KEY_CHECKING=False"
        )
    return hint


def _results_folder(args: argparse.Namespace, ctx: common.Context) -> Path:
    """-o DIR, else a new ``fleet/audit-<time>`` in ascenv's state directory (not the current
    folder: a run should not litter wherever it was started; the output names the folder). Made
    here, so a folder that cannot be made is a clear exit 2 naming -o, not a failure halfway."""
    from ascenv.cache.roots import ascenv_state_dir

    name = getattr(args, "output", None) if args.fleet_command == "audit" else None
    if not name:
        home = ctx.environ.get("HOME") or os.path.expanduser("~")
        state = ascenv_state_dir(ctx.environ, home=home, cwd=ctx.cwd)
        name = os.path.join(state, "fleet", time.strftime("audit-%Y%m%d-%H%M%S-") + f"{os.getpid()}")
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
            hint="pass -o DIR in a writable place (the default is a new folder in ascenv's state directory,"
            " $XDG_STATE_HOME/ascenv/fleet or ~/.local/state/ascenv/fleet)",
        ) from None
    return folder
