"""Print a shell completion script for ascenv: commands, actions, options and their choices,
generated from the same parser that reads the command line (shtab), so it never lags behind.

  bash:  ascenv completion bash > ~/.local/share/bash-completion/completions/ascenv
  zsh:   ascenv completion zsh > "${fpath[1]}/_ascenv"
  tcsh:  ascenv completion tcsh > ~/.ascenv.completion.csh; echo 'source ~/.ascenv.completion.csh' >> ~/.tcshrc"""

from __future__ import annotations

import argparse

from ascenv import errors
from ascenv.commands import _common as common

NAME = "completion"
ORDER = 95
HELP = "print a shell completion script (bash, zsh or tcsh)"

SHELLS = ("bash", "zsh", "tcsh")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shell", choices=SHELLS, metavar="SHELL", help="bash, zsh or tcsh")


def run(args: argparse.Namespace, ctx: common.Context) -> int:
    import shtab

    from ascenv.cli import build_parser  # the whole parser: every command's options

    ctx.out.text(shtab.complete(build_parser(), shell=args.shell))
    return errors.EXIT_OK
