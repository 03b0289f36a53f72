"""Look after the build store (.ascenv/store/ by default): `ls` lists the builds and checks each
output against its sha256, `show KEY` prints a build's manifest and bench runs, `gc --keep N` keeps
the N newest builds of each operator and target, every build a lock file references and every
build holding a bench baseline, and deletes the rest (with their bench runs; never <op>/.bench/).
Only in a store ascenv made (its CACHEDIR.TAG), only builds (<op>/<64-hex key>/manifest.toml);
everything else is listed as left alone. No store: `ls` says so (exit 0), `show` and `gc` exit 2;
a build gc could not fully delete is exit 1."""

from __future__ import annotations

import argparse

from ascenv import errors, store, store_listing
from ascenv.commands import _common as common

NAME = "store"
ORDER = 62
HELP = "list, show and garbage-collect the builds in the store"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="store_command", metavar="ACTION", required=True)

    def action(name: str, text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=text, description=text)
        common.add_store_option(p)
        common.add_format_option(p)
        return p

    action("ls", "list the builds and check every output against its sha256 (exit 1 when one is damaged)")
    show = action("show", "print a build's manifest.toml and bench runs and check its outputs")
    show.add_argument("key", nargs="?", metavar="KEY", help="the build key, or its first 6+ characters")
    gc = action(
        "gc",
        "keep the N newest builds of each operator and target, every build a lock references and every build"
        " holding a bench baseline; delete the rest",
    )
    gc.add_argument("--keep", type=int, metavar="N", help="keep the N newest builds of each operator and target")
    common.add_lock_option(gc)


def run(args: argparse.Namespace, ctx: common.Context) -> int:
    from ascenv.output import store as render

    st = store.Store(common.store_dir(ctx, args.store))
    if args.store_command == "ls":
        listing = store_listing.list_builds(st)
        render.render_ls(ctx.out, listing, args.format)
        return errors.EXIT_OK if listing.ok else errors.EXIT_FINDINGS
    if args.store_command == "show":
        if not args.key:
            raise errors.UsageError("ascenv store show needs a KEY", hint="list the builds with: ascenv store ls")
        shown = store_listing.show_build(st, args.key)
        render.render_show(ctx.out, shown, args.format)
        return errors.EXIT_FINDINGS if shown.build.problems else errors.EXIT_OK
    if args.keep is None:
        raise errors.UsageError("ascenv store gc needs --keep N", hint="for example: ascenv store gc --keep 3")
    st.require()  # no store, or a directory ascenv did not make: exit 2 before any lock is read
    result = st.gc(args.keep, store.referenced_builds(args.lock, ctx.cwd))
    render.render_gc(ctx.out, result, args.format)
    return errors.EXIT_OK if result.ok else errors.EXIT_FINDINGS
