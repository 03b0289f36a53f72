"""`ascenv completion bash`: the script, sourced in a real bash, completes commands, actions and
options (bash's own completion machinery: COMP_WORDS, COMP_CWORD, the function `complete` names)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _script(shell: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "ascenv", "completion", shell], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def bash_script(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("completion") / "ascenv.bash"
    path.write_text(_script("bash"))
    return path


def _complete(script: Path, line: str) -> list[str]:
    words = line.split(" ")
    program = f"""
source {script}
function_name=$(complete -p ascenv | sed -E 's/.* -F ([^ ]+) .*/\\1/')
COMP_WORDS=({" ".join(repr(w) for w in words)})
COMP_CWORD={len(words) - 1}
COMP_LINE={line!r}
COMP_POINT={len(line)}
"$function_name" ascenv "{words[-1]}" "{words[-2] if len(words) > 1 else ""}"
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", program], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return [w.strip() for w in done.stdout.split("\n") if w.strip()]


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
@pytest.mark.parametrize(
    ("line", "expected", "not_expected"),
    [
        ("ascenv sto", {"store"}, {"doctor"}),
        ("ascenv d", {"doctor", "diff"}, {"store"}),
        ("ascenv store ", {"ls", "show", "gc"}, {"doctor"}),
        ("ascenv doctor --fo", {"--format"}, set()),
        ("ascenv clean-cache --", {"--yes", "--recent"}, set()),
        ("ascenv completion ", {"bash", "zsh", "tcsh"}, set()),
    ],
)
def test_bash_completes_commands_actions_and_options(bash_script, line, expected, not_expected):
    offered = set(_complete(bash_script, line))
    assert expected <= offered, offered
    assert not (not_expected & offered)


def test_zsh_and_tcsh_scripts_name_every_command():
    from ascenv import cli

    names = [spec.name for spec in cli.command_specs()]
    for shell in ("zsh", "tcsh"):
        text = _script(shell)
        for name in names:
            assert name in text, (shell, name)


def test_an_unknown_shell_is_exit_2_with_the_choices():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "ascenv", "completion", "fish"], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 2 and "bash" in done.stderr and "Traceback" not in done.stderr
