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
import datetime
import os
import posixpath
import time
from dataclasses import replace
from pathlib import Path
from typing import Optional

from ascenv import errors, paths
from ascenv.cache import build_store, containers
from ascenv.cache.entry import CACHE_SCHEMA, KINDS, CacheEntry, EntryOwner, display_path
from ascenv.cache.execute import Outcome, execute
from ascenv.cache.machine import MachineFacts, gather_machine_facts
from ascenv.cache.plan import Filters, Plan, assess, make_plan, matches, parse_age
from ascenv.cache.roots import ascenv_state_dir, resolve_roots
from ascenv.cache.scan import find_named_dirs, scan
from ascenv.commands import _common as common
from ascenv.commands.build import add_store_option, containers_dir, store_dir

NAME = "clean-cache"
ORDER = 80
HELP = "list Ascend compile caches and debris, and delete them safely"
SEARCHED_NAMES = {"kernel_meta": "kernel-meta", "aoe_workspace": "aoe-workspace"}
JOURNAL = "clean-cache.jsonl"

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
        help="ascenv-store: keep the N newest builds of each operator and target (default 3), as `ascenv store gc --keep N`",
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
    add_store_option(parser)
    common.add_format_option(parser)


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
    facts = gather_machine_facts(ctx.environ, home=home, run=ctx.run, uid=uid)
    for note in facts.notes:
        ctx.out.warn(note)

    started = time.monotonic()
    named_pins = [os.path.abspath(os.path.join(ctx.cwd, p)) for p in args.pins]
    for path in named_pins:
        if not os.path.isfile(path):
            raise errors.UsageError(
                f"--pins {path}: no such file", hint="name a pins.toml written by `ascenv image pin`"
            )
    owners, notes = _owners(args, ctx, filters, uid, recent_cutoff, [Path(p) for p in named_pins])
    report = scan_machine(
        ctx.environ,
        home=home,
        cwd=cwd,
        search_paths=args.path,
        facts=facts,
        uid=uid,
        recent_cutoff=recent_cutoff,
        one_file_system=args.one_file_system,
        owners=owners,
    )
    report = replace(report, warnings=report.warnings + notes)
    seconds = time.monotonic() - started
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

    pins_files = getattr(owners.get(containers.OWNER), "pins_files", None)  # None: no image was listed
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
    if not args.yes and not ctx.out.confirm(f"Delete {len(plan.entries)} entries and free {size(plan.bytes)}?"):
        ctx.out.message("Nothing was deleted.")
        return errors.EXIT_OK
    journal = posixpath.join(ascenv_state_dir(ctx.environ, home=home, cwd=cwd), JOURNAL)
    outcome = execute(
        plan,
        uid=uid,
        recent_cutoff=recent_cutoff,
        one_file_system=args.one_file_system,
        journal=journal,
        remove_other=lambda e: owners[e.owner].remove(e),
    )
    if args.format == "json":
        ctx.out.json(_payload("delete", listed, report.warnings, seconds, now, plan, outcome, journal, pins_files))
    else:
        from ascenv.output.clean_cache import render_outcome

        render_outcome(ctx.out, outcome, journal)
    return errors.EXIT_OK


def _owners(
    args: argparse.Namespace,
    ctx: common.Context,
    filters: Filters,
    uid: Optional[int],
    recent_cutoff: float,
    named_pins: list[Path],
) -> tuple[dict[str, EntryOwner], tuple[str, ...]]:
    """What lists and removes the entries that are not plain paths: the build store and the
    container engine, each asked only when its kind is wanted; notes say what could not be asked."""
    owners: dict[str, EntryOwner] = {}
    notes: list[str] = []
    wanted = lambda kind: filters.kinds is None or kind in filters.kinds
    if wanted("ascenv-store"):
        from ascenv.commands.store import referenced_builds
        from ascenv.store import Store

        st = Store(store_dir(args, ctx))
        if st.root.is_dir():
            owners[build_store.OWNER] = build_store.StoreDebris(
                st,
                keep=args.keep_builds,
                referenced=referenced_builds(args.lock, ctx.cwd),
                uid=uid,
                recent_cutoff=recent_cutoff,
                one_file_system=args.one_file_system,
            )
    if wanted("container"):
        from ascenv.containers.engine import connect
        from ascenv.containers.pins import PINS_FILE

        try:
            engine = connect(ctx.environ, timeout=ENGINE_TIMEOUT)
        except errors.EngineError as exc:
            notes.append(f"containers and images labelled ascenv.* not listed: {exc.message}")
        else:
            pins = {containers_dir(Path(ctx.cwd)) / PINS_FILE, paths.data_dir("containers") / PINS_FILE}
            read = sorted(p for p in pins if p.exists()) + [p for p in named_pins if p not in pins]
            pinned, unreadable = containers.pinned_refs(read)
            notes += unreadable
            owners[containers.OWNER] = containers.EngineObjects(
                engine,
                pinned,
                recent_cutoff,
                pins_unreadable=bool(unreadable),
                recipes=containers.pinned_recipes(named_pins),
                pins_files=tuple(str(p) for p in read),
            )
    return owners, tuple(notes)


def scan_machine(
    environ,
    *,
    home: str,
    cwd: str,
    search_paths,
    facts: MachineFacts,
    uid: Optional[int],
    recent_cutoff: float,
    one_file_system: bool,
    owners: Optional[dict[str, EntryOwner]] = None,
):
    """Resolve the roots, look below --path for kernel_meta/aoe_workspace, scan, add what the
    owners (engine, store) list, judge."""

    def roots(discovered=()):
        return resolve_roots(
            environ,
            home=home,
            cwd=cwd,
            search_paths=search_paths,
            discovered=discovered,
            protected_paths=facts.protected,
            realpath=os.path.realpath,
        )

    first = roots()
    tops = [r.path for r in first if r.kind == "search"]
    found = find_named_dirs(tops, SEARCHED_NAMES, one_file_system=one_file_system) if tops else []
    report = scan(roots(found), uid=uid, recent_cutoff=recent_cutoff, one_file_system=one_file_system)
    owned: list[CacheEntry] = []
    notes: list[str] = []
    for name, owner in (owners or {}).items():
        try:
            owned += owner.entries()
        except Exception as exc:  # noqa: BLE001 - an engine or store failing mid-listing must not stop the scan
            notes.append(f"{name}: listing failed ({type(exc).__name__}: {exc}); its entries are not shown")
    report = replace(report, entries=report.entries + tuple(owned), warnings=report.warnings + tuple(notes))
    return assess(report, canns=facts.canns, vendors=facts.vendors, npu_pids=facts.npu_pids, busy=facts.busy)


def _iso(ts: Optional[float]) -> Optional[str]:
    return (
        None if ts is None else datetime.datetime.fromtimestamp(ts, datetime.timezone.utc).isoformat(timespec="seconds")
    )


def entry_json(e: CacheEntry, now: float) -> dict:
    return {
        "kind": e.kind,
        "path": display_path(e.path),
        "root": display_path(e.root),
        "source": e.source,
        "size": e.allocated,
        "apparent_size": e.apparent,
        "files": e.files,
        "dirs": e.dirs,
        "newest": _iso(e.newest),
        "oldest": _iso(e.oldest),
        "age_seconds": None if e.newest is None else round(now - e.newest, 1),
        "soc": e.soc,
        "cann_version": e.cann_version,
        "stale": e.stale,
        "stale_reasons": list(e.stale_reasons),
        "protected": e.protected,
        "in_use": e.in_use,
        "kept_files": e.kept_files,
        "kept_size": e.kept_bytes,
        "errors": list(e.errors),
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
    data: dict = {
        "schema": CACHE_SCHEMA,
        "mode": mode,
        "size_unit": "bytes allocated on disk (du -B1)",
        "scan_seconds": round(seconds, 3),
        "entries": [entry_json(e, now) for e in listed],
        "warnings": list(warnings),
    }
    if plan is not None:
        data["plan"] = {
            "entries": [display_path(e.path) for e in plan.entries],
            "size": plan.bytes,
            "files": plan.files,
            "skipped": [{"path": display_path(s.entry.path), "reason": s.reason} for s in plan.skipped],
        }
        if pins_files is not None:  # images were listed: the pins files that said which to keep
            data["plan"]["pins_files"] = list(pins_files)
    if outcome is not None:
        data["result"] = {
            "freed": outcome.freed,
            "files": outcome.files,
            "kept_recent": outcome.kept_recent,
            "kept_foreign": outcome.kept_foreign,
            "errors": outcome.errors,
            "journal": journal,
        }
    return data
