"""The command line: argparse, dispatch, and the one place that catches errors."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import difflib
import importlib
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, Optional

from ascenv import __version__, errors
from ascenv.commands._common import Context
from ascenv.output import GuardedStdout, Output


@dataclass(frozen=True)
class CommandSpec:
    """What ``ascenv --help`` shows of a command, without importing it."""

    module: str  # ascenv.commands.<file>
    name: str
    order: int
    help: str


_HEADER = re.compile(r"^(NAME|ORDER|HELP) = (.+)$", re.M)


def command_specs() -> list[CommandSpec]:
    """Every module in ascenv/commands/ with NAME, HELP, ORDER, add_arguments(parser) and
    run(args, ctx) -> exit code; ORDER sorts `ascenv --help`.

    NAME, ORDER and HELP are read from each module's source (top-level literal assignments), so
    that a run imports only the command it runs: importing all of them cost more than half of
    `ascenv doctor`'s start-up time. A module whose values are not plain literals is
    imported to read them."""
    import ast
    import pkgutil

    from ascenv import commands

    specs = []
    for info in pkgutil.iter_modules(commands.__path__):
        if info.name.startswith("_"):  # shared helpers, not commands
            continue
        module = f"ascenv.commands.{info.name}"
        values: dict = {}
        try:
            with open(
                os.path.join(getattr(info.module_finder, "path", ""), info.name + ".py"), encoding="utf-8"
            ) as handle:
                text = handle.read()
        except OSError:  # installed without sources
            text = ""
        for key, literal in _HEADER.findall(text):
            try:
                values.setdefault(key, ast.literal_eval(literal.strip()))
            except (ValueError, SyntaxError):
                pass
        if set(values) != {"NAME", "ORDER", "HELP"}:
            loaded = importlib.import_module(module)
            if not hasattr(loaded, "NAME"):
                continue
            values = {"NAME": loaded.NAME, "ORDER": loaded.ORDER, "HELP": loaded.HELP}
        specs.append(CommandSpec(module, values["NAME"], values["ORDER"], values["HELP"]))
    return sorted(specs, key=lambda c: (c.order, c.name))


class _Parser(argparse.ArgumentParser):
    """argparse drops an OSError writing ``--help`` or ``--version`` (``_print_message``), losing
    the text with exit 0: through ``GuardedStdout`` a full or closed stdout decides the exit code
    there as everywhere else. Sub-command parsers are of the same class (``add_subparsers``).

    Two conveniences git and pip users expect: a mistyped command or action gets "did you
    mean" (``git stass`` → ``stash``), and a command of actions given none (``ascenv store``)
    shows its actions rather than only "the following arguments are required: ACTION"."""

    def _print_message(self, message: str, file: Any = None) -> None:
        if message and file is not None and file is sys.stdout:
            GuardedStdout(file).write(message)
        else:
            super()._print_message(message, file)

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        choices = action.choices
        if choices is None or value in choices or not isinstance(value, str):
            super()._check_value(action, value)
            return
        named = ", ".join(repr(c) for c in choices)
        close = difflib.get_close_matches(value, [str(c) for c in choices], n=3, cutoff=0.6)
        guess = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        # argparse's own words for the argument, then the guess (parse_args would add the usage)
        self.error(
            f"argument {argparse._get_action_name(action)}: invalid choice: {value!r}{guess} (choose from {named})"
        )

    def error(self, message: str) -> NoReturn:
        actions = [a for a in self._actions if isinstance(a, argparse._SubParsersAction)]
        if (
            actions
            and message.startswith("the following arguments are required")
            and str(actions[0].metavar) in message
        ):
            self.print_help(sys.stderr)
            self.exit(
                errors.EXIT_USAGE, f"\n{self.prog}: error: an ACTION is required: name one of the actions above\n"
            )
        super().error(message)


def build_parser(argv: Optional[Sequence[str]] = None) -> argparse.ArgumentParser:
    """The full parser. With ``argv``, only the command it names is imported and gets its
    arguments; the others are listed with their help line only (``ascenv --help`` is unchanged)."""
    parser = _Parser(
        prog="ascenv",
        description="Audit, lock and reproducibly build the Huawei Ascend NPU software stack.",
    )
    parser.add_argument("--version", action="version", version=f"ascenv {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    _add_verbosity(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    # The top-level options take no value: the first other word names the command.
    chosen = next((a for a in argv if not a.startswith("-")), None) if argv is not None else None
    for spec in command_specs():
        if argv is not None and spec.name != chosen:
            sub.add_parser(spec.name, help=spec.help)
            continue
        module = importlib.import_module(spec.module)
        command = sub.add_parser(spec.name, help=spec.help, description=module.__doc__)
        module.add_arguments(command)
        _add_verbosity_everywhere(command)  # after the command too: `ascenv doctor -q`, `store ls -v`
        command.set_defaults(_module=module)
    return parser


def _add_verbosity(parser: argparse.ArgumentParser, where: str = "") -> None:
    """``-q``/``-v``, counted as pip counts them, accepted before and after the command
    (``where="_after"``: argparse parses a command's options into a namespace of its own, so the
    two places count apart and ``verbosity`` adds them up: ``ascenv -q doctor -q`` is ``-qq``)."""
    group = parser.add_argument_group("verbosity")
    group.add_argument(
        "-q",
        "--quiet",
        action="count",
        dest="quiet" + where,
        default=0,
        help="less on stderr: -q no progress or notes, -qq no warnings",
    )
    group.add_argument(
        "-v",
        "--verbose",
        action="count",
        dest="verbose" + where,
        default=0,
        help="more on stderr: the commands ascenv runs",
    )


def _add_verbosity_everywhere(parser: argparse.ArgumentParser, depth: int = 1) -> None:
    _add_verbosity(parser, f"_after{depth}")
    for action in parser._actions:  # argparse has no public way to list a parser's sub-parsers
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                _add_verbosity_everywhere(child, depth + 1)


def verbosity(args: argparse.Namespace) -> tuple[int, int]:
    """(quiet, verbose) counted before the command and after it at each level."""
    counts = vars(args)
    return (
        sum(v for k, v in counts.items() if k == "quiet" or k.startswith("quiet_after")),
        sum(v for k, v in counts.items() if k == "verbose" or k.startswith("verbose_after")),
    )


def _traced(run: Any, out: Output) -> Any:
    """``ctx.run`` that tells each command it runs and how it ended (``--verbose``): what a user
    debugging a probe asks first is which command ascenv ran to find a version."""
    import shlex

    def traced(argv: Sequence[str], **kwargs: Any) -> Any:
        done = run(argv, **kwargs)
        ended = f"exit {done.returncode}" if done.returncode is not None else done.status
        out.detail(f"ran: {shlex.join(_short(str(a)) for a in argv)}  ({ended}, {done.duration:.2f} s)")
        return done

    return traced


def _short(arg: str) -> str:
    """An argument as a user can read it in one line: a ``python -c`` script is named, not shown."""
    if "\n" in arg or len(arg) > 120:
        return f"<{len(arg):,} characters: {arg.splitlines()[0][:40] if arg.strip() else ''}…>"
    return arg


def main(argv: Optional[Sequence[str]] = None, *, ctx: Optional[Context] = None) -> int:
    """Run one command; its exit code. Standard output is flushed here, before returning, so that
    a write error of the last buffered bytes (``> /dev/full``, ``| head``) still decides the exit
    code: left to the interpreter's exit it would only print "Exception ignored" and exit 120."""
    stdouts = [GuardedStdout(sys.stdout)]  # argparse prints --help there, whatever the context
    try:
        code = _run(argv, ctx, stdouts)
        for stream in stdouts:
            stream.flush()
        return code
    except errors.OutputClosed as exc:  # the reader is gone: nothing to say, and nobody to say it to
        _discard(stdouts)
        return exc.exit_code
    except errors.OutputFailed as exc:
        _discard(stdouts)
        # one line, no hint: the error itself is what to do about it; stderr may be failing too
        with contextlib.suppress(OSError, ValueError, AttributeError):
            (ctx.out.stderr if ctx is not None else sys.stderr).write(f"ascenv: {exc.message}\n")
        return exc.exit_code


def _run(argv: Optional[Sequence[str]], ctx: Optional[Context], stdouts: list[GuardedStdout]) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on bad usage, 0 on --help
        return int(exc.code or 0)
    if args.command is None:
        parser.print_help(sys.stderr)
        return errors.EXIT_USAGE
    fmt = getattr(args, "format", "human")
    if ctx is None:
        out = Output(fmt, color=False if os.environ.get("NO_COLOR") else None)  # no-color.org: set and not empty
        ctx = Context(environ=dict(os.environ), out=out, cwd=os.getcwd(), cache_dir=_cache_dir(os.environ))
    elif ctx.out.format != fmt:
        ctx.out.format = fmt
    stdouts.insert(0, ctx.out.stdout)  # type: ignore[arg-type]
    ctx.out.quiet, ctx.out.verbose = verbosity(args)
    if ctx.out.verbose:
        ctx = dataclasses.replace(ctx, run=_traced(ctx.run, ctx.out))
    try:
        return int(args._module.run(args, ctx))
    except (errors.OutputClosed, errors.OutputFailed):
        raise  # main's: told on stderr without rich, which may be what failed
    except errors.AscenvError as exc:
        ctx.out.error(exc.message, exc.hint)
        if args.debug:
            _print_traceback()
        return exc.exit_code
    except KeyboardInterrupt:
        ctx.out.error("interrupted")
        return errors.EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - the one place that turns a bug into exit 3
        ctx.out.error(
            f"unexpected error: {type(exc).__name__}: {exc}",
            "this is a bug in ascenv; rerun with --debug and report the traceback",
        )
        if args.debug:
            _print_traceback()
        return errors.EXIT_INTERNAL


def _discard(stdouts: list[GuardedStdout]) -> None:
    """After a failed write, what is still buffered for the process's own stdout would fail
    again at exit ("Exception ignored", exit 120): point descriptor 1 at /dev/null, as Python's
    documentation advises (https://docs.python.org/3/library/signal.html#note-on-sigpipe).
    Only for the real standard output: a test's stream is left alone."""
    for stream in stdouts:
        real = stream.stream
        if real is not None and real is sys.__stdout__:
            with contextlib.suppress(OSError, ValueError):
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, 1)  # sys.__stdout__ is descriptor 1
                os.close(devnull)
            return


def _print_traceback() -> None:
    import traceback  # only for --debug after an error: not worth its import on every run

    traceback.print_exc()


def _cache_dir(environ: Mapping[str, str]) -> Optional[str]:
    """ascenv's cache, or None (no cache kept) when it would live under a home directory that
    does not exist: as git and pip do, a missing ``$HOME`` is not created for a cache."""
    from ascenv.cache.roots import ascenv_cache_dir

    home = os.path.expanduser("~")
    if not environ.get("ASCENV_CACHE_DIR") and not environ.get("XDG_CACHE_HOME") and not os.path.isdir(home):
        return None
    return ascenv_cache_dir(environ, home=home, cwd=os.getcwd()) if home.startswith("/") else None
