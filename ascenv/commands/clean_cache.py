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
import datetime
import os
import posixpath
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Optional

from ascenv import errors, paths
from ascenv.cache.entry import KINDS, CacheEntry, EntryOwner, display_path
from ascenv.cache.execute import Outcome, exclusive, execute
from ascenv.cache.machine import MachineFacts, gather_machine_facts, other_homes
from ascenv.cache.plan import Filters, Plan, make_plan, matches, parse_age
from ascenv.cache.roots import ascenv_state_dir
from ascenv.cache.survey import survey
from ascenv.commands import _common as common

NAME = "clean-cache"
ORDER = 80
HELP = "list Ascend compile caches and debris, and delete them safely"
JOURNAL = "clean-cache.jsonl"
LOCK = "clean-cache.lock"
STORE_OWNER = "store"  # cache.build_store.OWNER, named here so that no listing imports the store
ENGINE_OWNER = "engine"  # cache.containers.OWNER

ENGINE_TIMEOUT = 10  # seconds: an engine that does not answer must not hold up the scan


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", nargs="?", choices=["ls"], help="ls: list the caches and stop")
    parser.add_argument("--dry-run", action="store_true", help="show what would be deleted, delete nothing")
    parser.add_argument(
        "-y", "--yes", action="store_true", help="delete without asking (required when not interactive)"
    )
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
    parser.add_argument("--recent", default="10m", metavar="AGE", help="keep files changed within AGE (default 10m)")
    parser.add_argument(
        "--keep-builds",
        type=int,
        default=3,
        metavar="N",
        help="ascenv-store: keep the N newest builds of each operator and target (default 3), "
        "as `ascenv store gc --keep N`",
    )
    parser.add_argument(
        "--lock",
        action="append",
        default=[],
        metavar="FILE",
        help="ascenv-store: never delete a build this lock references (repeatable; ascenv.lock is read when present)",
    )
    parser.add_argument(
        "--pins",
        action="append",
        default=[],
        metavar="FILE",
        help="container: also keep every image built from a recipe this pins file pins by ID (repeatable; "
        "containers/pins.toml here and the one shipped with ascenv are always read)",
    )
    parser.add_argument(
        "--store",
        metavar="DIR",
        help="the build store (default: $ASCENV_STORE, else .ascenv/store in the current directory)",
    )
    common.add_format_option(parser)


def _store_dir(args: argparse.Namespace, ctx: common.Context) -> Path:
    chosen = args.store or ctx.environ.get("ASCENV_STORE") or os.path.join(".ascenv", "store")
    return Path(ctx.cwd, chosen).resolve()


def run(args: argparse.Namespace, ctx: common.Context) -> int:
    now = time.time()
    filters = Filters(
        kinds=None if not args.kind else frozenset(KINDS if "all" in args.kind else args.kind),
        older_than=parse_age(args.older_than) if args.older_than else None,
        socs=frozenset(s.lower() for s in args.soc) if args.soc else None,
        stale=args.stale,
    )
    recent_cutoff = now - parse_age(args.recent)
    uid = None if args.all_users else os.getuid()
    home = os.path.realpath(ctx.environ.get("HOME") or os.path.expanduser("~"))
    cwd = os.path.realpath(ctx.cwd)
    gathered: list[MachineFacts] = []

    def facts() -> MachineFacts:
        gathered.append(gather_machine_facts(ctx.environ, home=home, run=ctx.run, uid=uid))
        return gathered[-1]

    named_pins = [os.path.abspath(os.path.join(ctx.cwd, p)) for p in args.pins]
    for path in named_pins:
        if not os.path.isfile(path):
            raise errors.UsageError(
                f"--pins {path}: no such file", hint="name a pins.toml written by `ascenv image pin`"
            )
    state_dir = ascenv_state_dir(ctx.environ, home=home, cwd=cwd)
    started = time.monotonic()
    owners, notes = _owners(args, ctx, filters, uid, recent_cutoff, [Path(p) for p in named_pins])
    report = survey(
        ctx.environ,
        home=home,
        cwd=cwd,
        search_paths=args.path,
        facts=facts,
        uid=uid,
        recent_cutoff=recent_cutoff,
        one_file_system=args.one_file_system,
        owners=owners,
        follow=[os.path.realpath(os.path.join(ctx.cwd, f)) for f in args.follow],
        homes=other_homes(uid if uid is not None else os.getuid()),
    )
    report = replace(report, warnings=report.warnings + notes)
    seconds = time.monotonic() - started
    for note in gathered[0].notes if gathered else ():
        ctx.out.warn(note)
    for warning in report.warnings:
        ctx.out.warn(warning)
    listed = [e for e in report.entries if matches(e, filters, now, listing=True)]

    if args.action == "ls":
        if args.format == "json":
            ctx.out.json(_payload("ls", listed, report.warnings, seconds, now))
        else:
            from ascenv.output.clean_cache import render_listing

            render_listing(ctx.out, listed, now)
        return errors.EXIT_OK

    plan = make_plan(report, filters, now)
    dry = args.dry_run
    if not dry and plan.entries and not args.yes:
        if not ctx.out.interactive or args.format == "json":
            raise errors.UsageError(
                "refusing to delete without confirmation: this is not an interactive terminal",
                hint="review with --dry-run, then rerun with --yes",
            )
    from ascenv.output.clean_cache import render_plan, size

    pins_files = getattr(owners.get(ENGINE_OWNER), "pins_files", None)  # None: no image was listed
    if args.format != "json":
        render_plan(ctx.out, plan, dry, pins_files)
    if dry or not plan.entries:
        if args.format == "json":
            ctx.out.json(
                _payload(
                    "dry-run" if dry else "delete", listed, report.warnings, seconds, now, plan, pins_files=pins_files
                )
            )
        return errors.EXIT_OK
    count = len(plan.entries)
    question = f"Delete {count} entr{'y' if count == 1 else 'ies'} and free {size(plan.bytes)}?"
    if not args.yes and not ctx.out.confirm(question):
        ctx.out.message("Nothing was deleted.")
        return errors.EXIT_OK
    journal = posixpath.join(state_dir, JOURNAL)
    with exclusive(posixpath.join(state_dir, LOCK)), _terminate_as_interrupt():
        outcome = execute(
            plan,
            uid=uid,
            recent_cutoff=recent_cutoff,
            one_file_system=args.one_file_system,
            journal=journal,
            remove_other=lambda e: owners[e.owner or ""].remove(e),
        )
    if args.format == "json":
        ctx.out.json(_payload("delete", listed, report.warnings, seconds, now, plan, outcome, journal, pins_files))
    else:
        from ascenv.output.clean_cache import render_outcome

        render_outcome(ctx.out, outcome, journal)
    return errors.EXIT_OK


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
    if (filters.kinds is None or "ascenv-store" in filters.kinds) and _store_dir(args, ctx).is_dir():
        from ascenv.cache import build_store
        from ascenv.commands.store import referenced_builds
        from ascenv.store import Store

        st = Store(_store_dir(args, ctx))
        if st.root.is_dir():
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


def _iso(ts: Optional[float]) -> Optional[str]:
    return (
        None if ts is None else datetime.datetime.fromtimestamp(ts, datetime.timezone.utc).isoformat(timespec="seconds")
    )


def entry_json(e: CacheEntry, now: float) -> dict:
    return {
        "kind": e.kind,
        "path": display_path(e.path),
        "root": display_path(e.root),
        "source": display_path(e.source),
        "size": e.allocated,
        "apparent_size": e.apparent,
        "files": e.files,
        "dirs": e.dirs,
        "newest": _iso(e.newest),
        "oldest": _iso(e.oldest),
        "age_seconds": None if e.newest is None else round(now - e.newest, 1),
        "soc": None if e.soc is None else display_path(e.soc),
        "cann_version": e.cann_version,
        "stale": e.stale,
        "stale_reasons": list(e.stale_reasons),
        "protected": e.protected,
        "in_use": e.in_use,
        "kept_files": e.kept_files,
        "kept_size": e.kept_bytes,
        "errors": [display_path(x) for x in e.errors],
    }


def _payload(
    mode: str,
    listed,
    warnings,
    seconds: float,
    now: float,
    plan: Optional[Plan] = None,
    outcome: Optional[Outcome] = None,
    journal: Optional[str] = None,
    pins_files: Optional[tuple[str, ...]] = None,
) -> dict:
    data: dict = {  # Output.json adds the schema version
        "mode": mode,
        "size_unit": "bytes allocated on disk (du -B1)",
        "scan_seconds": round(seconds, 3),
        "entries": [entry_json(e, now) for e in listed],
        "warnings": [display_path(w) for w in warnings],
    }
    if plan is not None:
        data["plan"] = {
            "entries": [display_path(e.path) for e in plan.entries],
            "size": plan.bytes,
            "files": plan.files,
            "skipped": [{"path": display_path(s.entry.path), "reason": display_path(s.reason)} for s in plan.skipped],
        }
        if pins_files is not None:  # images were listed: the pins files that said which to keep
            data["plan"]["pins_files"] = list(pins_files)
    if outcome is not None:
        data["result"] = {
            "freed": outcome.freed,
            "files": outcome.files,
            "kept_recent": outcome.kept_recent,
            "kept_foreign": outcome.kept_foreign,
            "errors": [display_path(x) for x in outcome.errors],
            "journal": None if journal is None else display_path(journal),
        }
    return data
