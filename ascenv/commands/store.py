"""Look after the build store (.ascenv/store/ by default): `ls` lists the builds and checks each
output against its sha256, `show KEY` prints a build's manifest, `gc --keep N` keeps the N newest
builds of each operator and target and every build a lock file references, and deletes the rest."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ascenv import errors, serde
from ascenv.commands import _common as common
from ascenv.commands.build import add_store_option, store_dir
from ascenv.store import MANIFEST, Store

NAME = "store"
ORDER = 62
HELP = "list, show and garbage-collect the builds in the store"
DEFAULT_LOCK = "ascenv.lock"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["ls", "show", "gc"], help="ls | show KEY | gc --keep N")
    parser.add_argument("key", nargs="?", metavar="KEY", help="show: the build key, or its first 6+ characters")
    parser.add_argument(
        "--keep", type=int, metavar="N", help="gc: keep the N newest builds of each operator and target"
    )
    parser.add_argument(
        "--lock",
        action="append",
        default=[],
        metavar="FILE",
        help=f"gc: never delete a build this lock references (repeatable; {DEFAULT_LOCK} is read when present)",
    )
    add_store_option(parser)
    common.add_format_option(parser)


def run(args: argparse.Namespace, ctx: common.Context) -> int:
    st = Store(store_dir(args, ctx))
    if args.action == "ls":
        entries = st.entries()
        problems = {e.key: st.verify(e) for e in entries}
        if args.format == "json":
            ctx.out.json({"store": str(st.root), "builds": [_entry_json(e, problems[e.key]) for e in entries]})
        else:
            from ascenv.output.build import render_ls

            render_ls(ctx.out, entries, problems)
        return errors.EXIT_FINDINGS if any(problems.values()) else errors.EXIT_OK
    if args.action == "show":
        if not args.key:
            raise errors.UsageError("ascenv store show needs a KEY", hint="list the builds with: ascenv store ls")
        entry = st.find(args.key)
        problems = st.verify(entry)
        if args.format == "json":
            ctx.out.json(
                {
                    **_entry_json(entry, problems),
                    "manifest": serde.to_data(entry.manifest) if entry.manifest else None,
                }
            )
        else:
            from ascenv.output.build import render_show

            render_show(ctx.out, entry, (entry.path / MANIFEST).read_text(encoding="utf-8", errors="replace"), problems)
        return errors.EXIT_FINDINGS if problems else errors.EXIT_OK
    if args.keep is None:
        raise errors.UsageError("ascenv store gc needs --keep N", hint="for example: ascenv store gc --keep 3")
    result = st.gc(args.keep, referenced_builds(args.lock, ctx.cwd))
    if args.format == "json":
        ctx.out.json(
            {
                "removed": [f"{e.op}/{e.key}" for e in result.removed],
                "kept_referenced": [f"{e.op}/{e.key}" for e in result.kept_referenced],
                "swept_tmp": list(result.swept_tmp),
                "freed": result.freed,
            }
        )
    else:
        from ascenv.output.build import render_gc

        render_gc(ctx.out, result)
    return errors.EXIT_OK


def referenced_builds(locks: list, cwd: str) -> set:
    """Manifest digests of the vendors the locks list (``vendors[].manifest_digest``: the sha256 of
    the ascenv-manifest.toml that `ascenv install` copies, byte for byte, from the store)."""
    from ascenv.lockfile import read_lock

    paths = [os.path.join(cwd, p) for p in locks]
    default = os.path.join(cwd, DEFAULT_LOCK)
    if not locks and os.path.exists(default):
        paths.append(default)
    found = set()
    for path in paths:
        lock, _ = read_lock(path, str(Path(path)))
        found |= {v.manifest_digest for v in lock.vendors if v.manifest_digest}
    return found


def _entry_json(e, problems: list) -> dict:  # type: ignore[no-untyped-def]
    m = e.manifest
    return {
        "op": e.op,
        "key": e.key,
        "path": str(e.path),
        "ok": not problems,
        "problems": problems,
        "target": m.target if m else None,
        "finished": m.timings.finished if m else None,
        "image_id": m.toolchain.image_id if m else None,
        "manifest_sha256": e.manifest_sha256,
        "outputs": [{"path": o.path, "size": o.size, "sha256": o.sha256} for o in m.outputs] if m else [],
    }
