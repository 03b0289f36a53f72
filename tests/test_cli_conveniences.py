"""What pip, git and docker users expect of a command line: "did you mean" for a mistyped
command or action, a command of actions given none lists them, one placeholder for actions,
NO_COLOR means plain text, and a home directory that does not exist is not created."""

from __future__ import annotations

import argparse
import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

from ascenv import cli, errors

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("argv", "guess"),
    [
        (["doctr"], "'doctor'"),
        (["snapshto"], "'snapshot'"),
        (["clean-cahce"], "'clean-cache'"),
        (["store", "lss"], "'ls'"),
        (["fleet", "adit"], "'audit'"),
        (["bench", "comapre"], "'compare'"),
        (["bench", "baseline", "sett", "latest"], "'set'"),
    ],
)
def test_a_mistyped_command_or_action_gets_did_you_mean(argv, guess, capsys):
    assert cli.main(argv) == errors.EXIT_USAGE
    err = capsys.readouterr().err
    assert f"did you mean {guess}?" in err
    assert "invalid choice" in err  # the choices are still listed after the guess


def test_nothing_close_gets_no_guess(capsys):
    assert cli.main(["zzzzqq"]) == errors.EXIT_USAGE
    err = capsys.readouterr().err
    assert "did you mean" not in err and "'doctor'" in err


@pytest.mark.parametrize(
    ("command", "actions"),
    [("store", ["ls", "show", "gc"]), ("fleet", ["audit"]), ("image", []), ("bench", ["compare", "history", "run"])],
)
def test_a_command_of_actions_given_none_lists_them(command, actions, capsys):
    assert cli.main([command]) == errors.EXIT_USAGE
    err = capsys.readouterr().err
    assert "name one of the actions above" in err
    assert "the following arguments are required" not in err
    for action in actions:
        assert f"\n    {action} " in err or f"\n    {action}\n" in err, err


def _subparser_actions(parser: argparse.ArgumentParser, path: str = "ascenv"):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield path, action
            for name, child in action.choices.items():
                yield from _subparser_actions(child, f"{path} {name}")


def test_every_required_choice_of_actions_is_called_action():
    parser = cli.build_parser()
    seen = 0
    for path, action in _subparser_actions(parser):
        if path == "ascenv":
            assert action.metavar == "COMMAND"
        elif action.required:
            seen += 1
            assert action.metavar == "ACTION", f"{path}: placeholder {action.metavar!r}"
    for name, command in next(_subparser_actions(parser))[1].choices.items():
        for sub in command._actions:
            if isinstance(sub, argparse._SubParsersAction):
                for child_name, child in sub.choices.items():
                    for positional in child._actions:
                        if (
                            positional.choices
                            and not positional.option_strings
                            and not isinstance(positional, argparse._SubParsersAction)
                        ):
                            assert positional.metavar == "ACTION", f"{name} {child_name}: {positional.dest}"
    assert seen >= 5


def _run_on_a_terminal(argv, env):
    """Run ascenv with stdout and stderr on a pseudo-terminal, as a user's shell would."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "ascenv", *argv], stdout=slave, stderr=slave, stdin=subprocess.DEVNULL, env=env, cwd=ROOT
    )
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(master)
    return proc.returncode, b"".join(chunks).decode("utf-8", "replace")


def _env(tmp_path, **extra):
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "TERM")}
    env.update(PYTHONPATH=str(ROOT), HOME=str(tmp_path), TERM="xterm-256color", COLUMNS="100")
    env.update(extra)
    return env


@pytest.mark.parametrize(
    "argv",
    [
        ["store", "show", "abcdef", "--store", "missing-store"],  # "error:" is bold red
        ["explain", "ASC-NO-SUCH-CHECK"],
        ["lock", "--check", "missing.lock"],
    ],
)
def test_no_color_means_no_escape_codes_at_all_not_even_bold(argv, tmp_path):
    _, styled = _run_on_a_terminal(argv, _env(tmp_path))
    assert "\x1b[" in styled and "error" in styled  # on a terminal: styled
    _, plain = _run_on_a_terminal(argv, _env(tmp_path, NO_COLOR="1"))
    assert "\x1b[" not in plain, plain[:400]
    assert "error" in plain


def test_an_empty_no_color_is_not_set(tmp_path):
    _, styled = _run_on_a_terminal(["store", "show", "abcdef", "--store", "missing"], _env(tmp_path, NO_COLOR=""))
    assert "\x1b[" in styled


@pytest.mark.parametrize("command", [["doctor", "--format", "json"], ["triage", "-"]])
def test_a_home_that_does_not_exist_is_not_created(command, tmp_path):
    home = tmp_path / "nowhere" / "home"
    env = _env(tmp_path, HOME=str(home))
    env.pop("XDG_CACHE_HOME", None)
    env.pop("ASCENV_CACHE_DIR", None)
    done = subprocess.run(
        [sys.executable, "-m", "ascenv", *command],
        input="ImportError: libhccl.so: cannot open shared object file\n",
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode != errors.EXIT_INTERNAL, done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "nowhere").exists()


def test_an_existing_home_still_gets_its_cache(tmp_path):
    env = _env(tmp_path)
    env.pop("XDG_CACHE_HOME", None)
    env.pop("ASCENV_CACHE_DIR", None)
    subprocess.run(
        [sys.executable, "-m", "ascenv", "doctor", "--format", "json"],
        capture_output=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert (tmp_path / ".cache" / "ascenv").is_dir()


def _counts(argv):
    return cli.verbosity(cli.build_parser(argv).parse_args(argv))


@pytest.mark.parametrize(
    ("argv", "counts"),
    [
        (["doctor"], (0, 0)),
        (["-q", "doctor"], (1, 0)),
        (["doctor", "-q"], (1, 0)),
        (["-q", "doctor", "-q"], (2, 0)),
        (["--verbose", "store", "ls", "-v"], (0, 2)),
        (["store", "ls", "-qq"], (2, 0)),
    ],
)
def test_quiet_and_verbose_count_before_and_after_the_command(argv, counts):
    assert _counts(argv) == counts


def _output(quiet=0, verbose=0):
    import io

    from ascenv.output import Output

    err = io.StringIO()
    out = Output(stdout=io.StringIO(), stderr=err, interactive=False, color=False)
    out.quiet, out.verbose = quiet, verbose
    return out, err


@pytest.mark.parametrize(
    ("quiet", "verbose", "shown"), [(0, 0, "mwe"), (1, 0, "we"), (2, 0, "e"), (0, 1, "mdwe"), (1, 1, "we")]
)
def test_what_each_level_says_on_stderr(quiet, verbose, shown):
    out, err = _output(quiet, verbose)
    out.message("m-line")
    out.detail("d-line")
    out.warn("w-line")
    out.error("e-line")
    said = "".join(k for k in "mdwe" if f"{k}-line" in err.getvalue())
    assert said == shown


def test_verbose_tells_each_command_ascenv_runs_and_how_it_ended(tmp_path):
    env = _env(tmp_path)
    quiet = subprocess.run(
        [sys.executable, "-m", "ascenv", "doctor", "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    told = subprocess.run(
        [sys.executable, "-m", "ascenv", "-v", "doctor", "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert "ran: " not in quiet.stderr
    lines = [line for line in told.stderr.splitlines() if line.startswith("ran: ")]
    assert lines and all(("exit " in line or "not-found" in line) and line.endswith(" s)") for line in lines), (
        told.stderr
    )
    assert all(len(line) < 400 for line in lines)  # a python -c script is named, not printed
    assert json.loads(told.stdout).keys() == json.loads(quiet.stdout).keys()
