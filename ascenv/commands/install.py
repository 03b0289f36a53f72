"""Install an NPU operator package built by `ascenv build OP --target npu` into DIR, through the
package's own --install-path option, then record the build's manifest in the installed vendor
directory (DIR/vendors/<vendor>/ascenv-manifest.toml), so `ascenv doctor` and `ascenv lock` tie
the vendor to its build and its CANN (ascenv.installer)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ascenv import errors, installer
from ascenv.commands import _common as common
from ascenv.signals import termination_as_interrupt
from ascenv.store import Store

NAME = "install"
ORDER = 64
HELP = "install a stored NPU operator package with --install-path and record its build manifest"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("op", nargs="?", metavar="OP", help="the operator project name (add_custom)")
    parser.add_argument(
        "--install-path",
        required=True,
        metavar="DIR",
        help="install root: the package installs into DIR/vendors/<vendor>",
    )
    parser.add_argument(
        "--key",
        metavar="KEY",
        help="install this build (key or its first 6+ characters); default: the newest npu build of OP",
    )
    parser.add_argument(
        "--rollback",
        metavar="VENDOR",
        help="put back the VENDOR directory the last install replaced (kept in DIR/.ascenv-previous)",
    )
    common.add_store_option(parser)
    common.add_format_option(parser)


def run(args: argparse.Namespace, ctx: common.Context) -> int:
    from ascenv.output import install as render

    try:
        root = Path(ctx.cwd, args.install_path).resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop (Python < 3.13)
        raise errors.UsageError(f"--install-path {args.install_path} cannot be resolved: {exc}") from None

    def waiting(lock: Path) -> None:
        ctx.out.message(f"waiting for another ascenv install or rollback in {root} to finish (it holds {lock})")

    # SIGTERM and SIGHUP unwind like Ctrl-C: the installer's process group is ended and the lock
    # released, rather than ascenv dying at once with the installer running on (I4).
    with termination_as_interrupt():
        if args.rollback is not None:
            from ascenv.package import deploy

            render.render_rollback(ctx.out, deploy.rollback(root, args.rollback, on_wait=waiting), args.format)
            return errors.EXIT_OK
        if not args.op:
            raise errors.UsageError("ascenv install needs OP (or --rollback VENDOR)")
        st = Store(common.store_dir(ctx, args.store))
        result = installer.install(st, args.op, args.key, root, ctx.run, ctx.environ, on_wait=waiting)
    render.render(ctx.out, result, args.format)
    return errors.EXIT_OK
