"""Install an NPU operator package into DIR, through the package's own --install-path option: the
newest (or --key) npu build of OP from the store, whose build manifest is then recorded in the
installed vendor directory (DIR/vendors/<vendor>/ascenv-manifest.toml), so `ascenv doctor` and
`ascenv lock` tie the vendor to its build and its CANN; or FILE.run built elsewhere, inspected as
`ascenv package inspect` does before anything in it runs (ascenv.installer)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ascenv import errors, installer
from ascenv.commands import _common as common
from ascenv.signals import termination_as_interrupt
from ascenv.store import Store

NAME = "install"
ORDER = 64
HELP = "install an NPU operator package (a stored build or a .run file) with --install-path; --rollback"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "op",
        nargs="?",
        metavar="OP|FILE.run",
        help="an operator project (add_custom): its newest npu build in the store; or a package file"
        " (a name ending in .run or holding a /), inspected before it runs",
    )
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


def is_package_file(name: str) -> bool:
    """A .run file rather than an operator project: an operator name is one directory name
    (ascenv.names), so a path holding a / or a name ending in .run is never one."""
    return name.endswith(".run") or "/" in name


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
            raise errors.UsageError("ascenv install needs OP or FILE.run (or --rollback VENDOR)")
        if is_package_file(args.op):
            if args.key:
                raise errors.UsageError(f"--key chooses a stored build; {args.op} is a package file")
            package = Path(ctx.cwd, args.op)
            result = installer.install_file(package, root, ctx.run, ctx.environ, on_wait=waiting)
        else:
            st = Store(common.store_dir(ctx, args.store))
            result = installer.install(st, args.op, args.key, root, ctx.run, ctx.environ, on_wait=waiting)
    render.render(ctx.out, result, args.format)
    return errors.EXIT_OK
