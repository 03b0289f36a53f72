import argparse
import re
from pathlib import Path

import pytest

from ascenv import cli, errors

README = Path(__file__).resolve().parents[1] / "README.md"


def test_exit_code_table_in_readme_matches_errors_module():
    table = dict(re.findall(r"^\| (\d+) \| (.+?) \|$", README.read_text(), re.M))
    codes = {v for k, v in vars(errors).items() if k.startswith("EXIT_")}
    assert {int(c) for c in table} == codes


def test_no_command_is_usage_error(capsys):
    assert cli.main([]) == errors.EXIT_USAGE


def test_every_command_has_help_and_is_in_readme():
    text = README.read_text()
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert "snapshot" in sub.choices
    for name, command in sub.choices.items():
        assert f"ascenv {name}" in text, f"README does not mention `ascenv {name}`"
        assert command.description, f"{name} has no description"


def _ctx():
    import io

    from ascenv.output import Output

    err = io.StringIO()
    return cli.Context(environ={}, out=Output(stdout=io.StringIO(), stderr=err, interactive=False, color=False)), err


def test_a_bug_is_exit_3_with_a_pointer_not_a_traceback(monkeypatch):
    import ascenv.commands.explain as explain

    def broken(args, ctx):
        raise ZeroDivisionError("simulated bug")

    monkeypatch.setattr(explain, "run", broken)
    ctx, err = _ctx()
    assert cli.main(["explain"], ctx=ctx) == errors.EXIT_INTERNAL
    assert "unexpected error: ZeroDivisionError: simulated bug" in err.getvalue()
    assert "--debug" in err.getvalue() and "Traceback" not in err.getvalue()


def test_ctrl_c_is_exit_130(monkeypatch):
    import ascenv.commands.explain as explain

    def interrupted(args, ctx):
        raise KeyboardInterrupt

    monkeypatch.setattr(explain, "run", interrupted)
    ctx, err = _ctx()
    assert cli.main(["explain"], ctx=ctx) == errors.EXIT_INTERRUPTED
    assert "interrupted" in err.getvalue()


def test_bad_usage_is_exit_2(capsys):
    assert cli.main(["doctor", "--format", "yaml"]) == errors.EXIT_USAGE


# one option name for one meaning ---------------------------------------------------------------
def _parse(*argv: str):
    return cli.build_parser(list(argv)).parse_args(list(argv))


@pytest.mark.parametrize("spelling", ["--include-lock", "--lock"])
def test_report_takes_the_lock_to_bundle_as_include_lock_and_still_as_lock(spelling):
    assert _parse("report", spelling, "prod.lock").lock == "prod.lock"


def test_lock_means_locks_whose_builds_are_kept_in_store_gc_and_clean_cache():
    assert _parse("store", "gc", "--keep", "1", "--lock", "a.lock", "--lock", "b.lock").lock == ["a.lock", "b.lock"]
    assert _parse("clean-cache", "--lock", "a.lock", "--dry-run").lock == ["a.lock"]
    help_texts = {
        command: next(a.help for a in parser._actions if "--lock" in a.option_strings)
        for command, parser in (
            ("store", _subparser(_subparser(cli.build_parser(["store"]), "store"), "gc")),
            ("clean-cache", _subparser(cli.build_parser(["clean-cache"]), "clean-cache")),
        )
    }
    assert len(set(help_texts.values())) == 1 and "never delete a build this lock references" in help_texts["store"]


def _subparser(parser, name):
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices[name]


@pytest.mark.parametrize("argv", [["store"], ["store", "prune"], ["image"], ["clean-cache", "lss"]])
def test_sub_actions_are_argparse_sub_commands(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        _parse(*argv)
    assert exit_.value.code == errors.EXIT_USAGE
    err = capsys.readouterr().err
    assert "invalid choice" in err or "required" in err


def test_store_sub_commands_take_their_own_options():
    args = _parse("store", "show", "abcdef", "--store", "s", "--format", "json")
    assert (args.store_command, args.key, args.store, args.format) == ("show", "abcdef", "s", "json")
    with pytest.raises(SystemExit):
        _parse("store", "ls", "--keep", "3")  # --keep belongs to gc


def test_clean_cache_ls_is_a_sub_command_and_options_before_it_are_kept():
    before = _parse("clean-cache", "--kind", "log", "--recent", "0s", "ls")
    after = _parse("clean-cache", "ls", "--kind", "log", "--format", "json")
    assert (before.action, before.kind, before.recent, before.format) == ("ls", ["log"], "0s", "human")
    assert (after.action, after.kind, after.recent, after.format) == ("ls", ["log"], "10m", "json")
    plain = _parse("clean-cache", "--dry-run")
    assert (plain.action, plain.dry_run, plain.kind) == (None, True, None)


# standard output that fails --------------------------------------------------------------------
class _FailingStream:
    """A stdout whose writes (or only its flush, as a buffered stream's) fail with ``exc``."""

    def __init__(self, exc: OSError, *, on_flush_only: bool = False) -> None:
        self.exc, self.on_flush_only, self.written = exc, on_flush_only, []

    def write(self, text: str) -> int:
        if not self.on_flush_only:
            raise self.exc
        self.written.append(text)
        return len(text)

    def flush(self) -> None:
        if self.written:
            raise self.exc

    def isatty(self) -> bool:
        return False


def _failing_ctx(stream: _FailingStream):
    import io

    from ascenv.output import Output

    err = io.StringIO()
    return cli.Context(environ={}, out=Output(stdout=stream, stderr=err, interactive=False, color=False)), err


@pytest.mark.parametrize("on_flush_only", [False, True])
@pytest.mark.parametrize("argv", [["explain"], ["explain", "--format", "json"], ["explain", "ASC-NPU-SMI"]])
def test_a_broken_pipe_is_exit_141_and_quiet_through_rich_and_json(argv, on_flush_only):
    """rich turns a BrokenPipeError into SystemExit(1): "findings" in the exit-code table."""
    import errno

    ctx, err = _failing_ctx(_FailingStream(BrokenPipeError(errno.EPIPE, "Broken pipe"), on_flush_only=on_flush_only))
    assert cli.main(argv, ctx=ctx) == errors.EXIT_STDOUT_CLOSED == 141
    assert err.getvalue() == ""


@pytest.mark.parametrize(("number", "words"), [("ENOSPC", "No space left on device"), ("EIO", "Input/output error")])
@pytest.mark.parametrize("on_flush_only", [False, True])
def test_a_failing_stdout_is_exit_2_with_one_line(number, words, on_flush_only):
    import errno
    import os

    code = getattr(errno, number)
    ctx, err = _failing_ctx(_FailingStream(OSError(code, os.strerror(code)), on_flush_only=on_flush_only))
    assert cli.main(["explain"], ctx=ctx) == errors.EXIT_USAGE
    assert err.getvalue() == f"ascenv: cannot write standard output: {words}\n"
