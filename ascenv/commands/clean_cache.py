"""Find every Ascend compile cache (kernel_cache/<soc>, kernel_meta/, fusion_result.json, logs,
dumps, profiling output, AOE work directories, ascenv's own store and build debris, containers and
images labelled ascenv.*), show what each holds and whether it is stale, and delete the ones you
choose, safely.

`ascenv clean-cache ls` lists; `ascenv clean-cache --dry-run` shows the plan ("would free ...");
`ascenv clean-cache` shows the plan, asks, deletes and appends to a journal. AOE tuning banks,
installed operator packages, CANN itself, pinned images and builds a lock references are never
deleted."""

from __future__ import annotations

import argparse
import contextlib
import os
import posixpath
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Optional

from ascenv import errors, paths
from ascenv.cache.entry import KINDS, EntryOwner
from ascenv.cache.machine import MachineFacts, gather_machine_facts, gathered_in_background, other_homes
from ascenv.cache.plan import Filters, make_plan, matches, parse_age, recent_cutoff
from ascenv.cache.result import DELETE, DRY_RUN, LS, CleanCache
from ascenv.cache.roots import ascenv_state_dir
from ascenv.cache.survey import survey
from ascenv.commands import _common as common
from ascenv.signals import termination_as_interrupt
from ascenv.words import counted

NAME = "clean-cache"
ORDER = 80
HELP = "list Ascend compile caches and debris, and delete them safely"
JOURNAL = "clean-cache.jsonl"
LOCK = "clean-cache.lock"
STORE_OWNER = "store"  # cache.build_store.OWNER, named here so that no listing imports the store
ENGINE_OWNER = "engine"  # cache.containers.OWNER

ENGINE_TIMEOUT = 10  # seconds: an engine that does not answer must not hold up the scan


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``clean-cache [--dry-run | --yes]`` plans and deletes; ``clean-cache ls`` only lists. The
    scan options are accepted before and after ``ls``."""
    parser.add_argument("--dry-run", action="store_true", help="show what would be deleted, delete nothing")
    parser.add_argument(
        "-y", "--yes", action="store_true", help="delete without asking (required when not interactive)"
    )
    add_scan_options(parser)
    sub = parser.add_subparsers(dest="action", metavar="[ls]")
    text = "list the caches with their size, age and state, and stop (deletes nothing)"
    ls = sub.add_parser("ls", help=text, description=text)
    add_scan_options(ls)
    for action in ls._actions:  # argparse has no public way to list a parser's options
        action.default = argparse.SUPPRESS  # an option not given after `ls` keeps its value from before it


def add_scan_options(parser: argparse.ArgumentParser) -> None:
    """Which caches are scanned and chosen, and the output format."""
    parser.add_argument(
        "--kind",
        action="append",
        choices=sorted(KINDS) + ["all"],
        metavar="KIND",
        help="only these kinds (repeatable; 'all' = every kind). Default: compile caches and "
        "debris; logs, dumps, profiling and ascenv's store only when named. "
        f"Kinds: {', '.join(sorted(KINDS))}",
    )
    parser.add_argument(
        "--older-than", metavar="AGE", help="only entries whose newest file is older than AGE (7d, 12h, 30m)"
    )
    parser.add_argument(
        "--soc", action="append", metavar="SOC", help="only this SoC (Ascend910B4) or compute unit (ascend910b)"
    )
    parser.add_argument(
        "--stale",
        action="store_true",
        help="only stale entries (older than the CANN or an operator package they serve)",
    )
    parser.add_argument("--all-users", action="store_true", help="also other users' files (default: only yours)")
    parser.add_argument(
        "--follow",
        action="append",
        default=[],
        metavar="DIR",
        help="also clean cache roots that lead through a symlink to DIR or below it (repeatable; "
        "without it such roots are listed and left alone)",
    )
    parser.add_argument(
        "--path",
        action="append",
        default=[],
        metavar="DIR",
        help="also look for kernel_meta/ and aoe_workspace/ below DIR (repeatable)",
    )
    parser.add_argument(
        "--one-file-system",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="stay on each cache's file system (default: yes)",
    )
    parser.add_argument(
        "--recent",
        default="10m",
        metavar="AGE",
        help="keep files modified (mtime) within AGE (default 10m; 0: keep none for being recent)",
    )
    parser.add_argument(
        "--keep-builds",
        type=int,
        default=3,
        metavar="N",
        help="ascenv-store: keep the N newest builds of each operator and target (default 3), "
        "as `ascenv store gc --keep N`",
    )
    common.add_lock_option(parser)
    parser.add_argument(
        "--pins",
        action="append",
        default=[],
        metavar="FILE",
        help="container: an extra pins file (only read) whose pinned images are kept, as are those built from a "
        "recipe it pins (repeatable; containers/pins.toml here and the one shipped with ascenv are always read)",
    )
    common.add_store_option(parser)
    common.add_format_option(parser)


def run(args: argparse.Namespace, ctx: common.Context) -> int:
    now = time.time()
    filters = Filters(
        kinds=None if not args.kind else frozenset(KINDS if "all" in args.kind else args.kind),
        older_than=parse_age(args.older_than) if args.older_than else None,
        socs=frozenset(s.lower() for s in args.soc) if args.soc else None,
        stale=args.stale,
    )
    cutoff = recent_cutoff(now, parse_age(args.recent))
    uid = None if args.all_users else os.getuid()
    home = os.path.realpath(ctx.environ.get("HOME") or os.path.expanduser("~"))
    cwd = os.path.realpath(ctx.cwd)
    named_pins = [os.path.abspath(os.path.join(ctx.cwd, p)) for p in args.pins]
    for path in named_pins:
        if not os.path.isfile(path):
            raise errors.UsageError(
                f"--pins {path}: no such file", hint="name a pins.toml written by `ascenv image pin`"
            )
    state_dir = ascenv_state_dir(ctx.environ, home=home, cwd=cwd)
    started = time.monotonic()
    ours = os.getpid()  # this process: its forked workers are not users of the caches they scan

    def gather() -> MachineFacts:
        return gather_machine_facts(ctx.environ, home=home, run=ctx.run, uid=uid, ours=ours)

    # forked now, the facts are gathered while the engine is asked and the scan starts; SIGTERM
    # unwinds like Ctrl-C, so that the processes of both are ended
    with termination_as_interrupt(), gathered_in_background(gather) as facts:
        owners, notes = _owners(args, ctx, filters, uid, cutoff, [Path(p) for p in named_pins])
        report = survey(
            ctx.environ,
            home=home,
            cwd=cwd,
            search_paths=args.path,
            facts=facts,
            uid=uid,
            recent_cutoff=cutoff,
            one_file_system=args.one_file_system,
            owners=owners,
            follow=[os.path.realpath(os.path.join(ctx.cwd, f)) for f in args.follow],
            homes=other_homes(uid if uid is not None else os.getuid()),
        )
        machine_notes = facts().notes
    report = replace(report, warnings=report.warnings + notes)
    seconds = time.monotonic() - started
    for note in machine_notes:
        ctx.out.warn(note)
    for warning in report.warnings:
        ctx.out.warn(warning)
    listed = tuple(e for e in report.entries if matches(e, filters, now, listing=True))
    from ascenv.output import clean_cache as render

    if args.action == "ls":
        render.render(ctx.out, CleanCache(LS, listed, report.warnings, seconds, now), args.format)
        return errors.EXIT_OK

    plan = make_plan(report, filters, now)
    dry = args.dry_run
    if not dry and plan.entries and not args.yes and not render.can_confirm(ctx.out, args.format):
        raise errors.UsageError(
            "refusing to delete without confirmation: this is not an interactive terminal",
            hint="review with --dry-run, then rerun with --yes",
        )
    pins_files = getattr(owners.get(ENGINE_OWNER), "pins_files", None)  # None: no image was listed
    result = CleanCache(DRY_RUN if dry else DELETE, listed, report.warnings, seconds, now, plan, pins_files)
    render.render_plan(ctx.out, result, args.format)
    if dry or not plan.entries:
        render.render(ctx.out, result, args.format)
        return errors.EXIT_OK
    count = len(plan.entries)
    question = f"Delete {counted(count, 'entry', 'entries')} and free {render.size(plan.bytes)}?"
    if not args.yes and not ctx.out.confirm(question):
        ctx.out.message("Nothing was deleted.")
        return errors.EXIT_OK
    journal = posixpath.join(state_dir, JOURNAL)
    from ascenv.cache.execute import exclusive, execute  # only a delete needs the deleter

    with exclusive(posixpath.join(state_dir, LOCK)), _terminate_as_interrupt():
        outcome = execute(
            plan,
            uid=uid,
            recent_cutoff=cutoff,
            one_file_system=args.one_file_system,
            journal=journal,
            remove_other=lambda e: owners[e.owner or ""].remove(e),
        )
    render.render(ctx.out, result.with_outcome(outcome, journal), args.format)
    # C1, C2: an entry that failed or changed since the plan (skipped, or only partly deleted: an
    # immutable file) is a plan not carried out; what is left alone by rule (a mount) is not
    return errors.EXIT_OK if outcome.complete else errors.EXIT_FINDINGS


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM (and SIGHUP) during the delete stop it as Ctrl-C does, so that the entry under
    way is journaled with what was already removed."""
    import signal

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = {}
    try:
        for sig in (signal.SIGTERM, signal.SIGHUP):
            previous[sig] = signal.signal(sig, interrupt)
    except ValueError:  # not the main thread: signals stay as they are
        pass
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _owners(
    args: argparse.Namespace,
    ctx: common.Context,
    filters: Filters,
    uid: Optional[int],
    recent_cutoff: float,
    named_pins: list[Path],
) -> tuple[dict[str, EntryOwner], tuple[str, ...]]:
    """What lists and removes the entries that are not plain paths: the build store (when it
    exists and its kind is wanted) and the container engine (only when ``--kind container`` or
    ``all`` asks for it: the engine is never contacted, nor its SDK imported, otherwise); notes
    say what could not be asked."""
    owners: dict[str, EntryOwner] = {}
    notes: list[str] = []
    store_dir = common.store_dir(ctx, args.store)
    if (filters.kinds is None or "ascenv-store" in filters.kinds) and store_dir.is_dir():
        from ascenv.cache import build_store
        from ascenv.store import Store, referenced_builds
        from ascenv.store_tag import tag_problem

        st = Store(store_dir)
        problem = tag_problem(st.root)
        if problem is not None:  # S2: only a store ascenv made holds debris; nothing else is planned
            notes.append(f"not cleaning {st.root} (build store): not an ascenv store: {problem}")
        else:
            owners[STORE_OWNER] = build_store.StoreDebris(
                st,
                keep=args.keep_builds,
                referenced=referenced_builds(args.lock, ctx.cwd),
                uid=uid,
                recent_cutoff=recent_cutoff,
                one_file_system=args.one_file_system,
            )
    if filters.kinds is not None and "container" in filters.kinds:
        from ascenv.cache import containers
        from ascenv.containers.engine import connect
        from ascenv.containers.pins import PINS_FILE

        try:
            engine = connect(ctx.environ, timeout=ENGINE_TIMEOUT)
        except errors.EngineError as exc:
            notes.append(f"containers and images labelled ascenv.* not listed: {exc.message}")
        else:
            local = Path(ctx.cwd) / "containers"  # the project's recipes, else those shipped with ascenv
            recipes = local if local.is_dir() else paths.data_dir("containers")
            pins = {recipes / PINS_FILE, paths.data_dir("containers") / PINS_FILE}
            read = sorted(p for p in pins if p.exists()) + [p for p in named_pins if p not in pins]
            pinned, unreadable = containers.pinned_refs(read)
            notes += unreadable
            owners[ENGINE_OWNER] = containers.EngineObjects(
                engine,
                pinned,
                recent_cutoff,
                pins_unreadable=bool(unreadable),
                recipes=containers.pinned_recipes(named_pins),
                pins_files=tuple(str(p) for p in read),
            )
    return owners, tuple(notes)
