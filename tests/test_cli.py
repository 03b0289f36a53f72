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
