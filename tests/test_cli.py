import re
from pathlib import Path

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
