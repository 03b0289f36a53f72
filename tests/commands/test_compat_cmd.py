"""`ascenv compat update FILE...` / `--remove`: a validated overlay of the data files in the user's
data directory, read by doctor in place of the shipped files and named there (issue #22 item 6)."""

from __future__ import annotations

import json
import re
import sys

import pytest

from ascenv import paths
from tests.cli_helpers import run_cli
from tests.fixture_hosts import build_host

SHIPPED = paths.data_dir("compat")
# a newer Triton-Ascend table: 3.2.2 with CANN 9.1.0 (the row a refreshed copy would add)
NEW_ROW = """
[[triton_ascend]]
version = "3.2.2"
cann = ["9.1.0"]
status = "documented"
source = ["https://gitcode.com/Ascend/triton-ascend/blob/main/docs/zh/installation_guide.md (a newer copy)"]
"""


def _dated(text: str, as_of: str) -> str:
    """A data file's text with another ``as_of`` (whatever the shipped day is)."""
    dated, count = re.subn(r'^as_of = "[^"]*"', f'as_of = "{as_of}"', text, count=1, flags=re.MULTILINE)
    assert count == 1
    return dated


def newer_stacks(tmp_path, extra=NEW_ROW, name="stacks.toml"):
    text = _dated((SHIPPED / "stacks.toml").read_text(encoding="utf-8"), "2027-01-05")
    path = tmp_path / "new" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(text + extra, encoding="utf-8")
    return path


def environ(tmp_path, **more):
    return {"HOME": str(tmp_path / "home"), "XDG_DATA_HOME": str(tmp_path / "data"), **more}


def doctor(tmp_path, env):
    host = build_host("vllm-ascend-v0.23.0", tmp_path / "hosts")
    code, out, err = run_cli(
        ["doctor", "--root", str(host.root), "--python", sys.executable, "--format", "json"], dict(host.environ, **env)
    )
    report = json.loads(out)
    triton = [(f["severity"], f["title"]) for f in report["findings"] if f["id"] == "ASC-STACK-TRITON"]
    return code, report["data"], triton


def test_an_update_is_read_by_doctor_and_named_and_remove_restores_the_shipped_data(tmp_path):
    env = environ(tmp_path)
    new = newer_stacks(tmp_path)
    code, out, err = run_cli(["compat", "update", str(new)], env)
    overlay = tmp_path / "data" / "ascenv" / "compat"
    assert code == 0, err
    assert f"installed stacks.toml in {overlay}" in out and (overlay / "stacks.toml").read_bytes() == new.read_bytes()
    code, data, triton = doctor(tmp_path, env)
    assert code == 0 and data == {
        "as_of": "2026-12-01",
        "overlay": [str(overlay / "stacks.toml")],
        "overlay_ignored": [],
    }
    assert triton == [("ok", "triton-ascend 3.2.2 with CANN 9.1.0: documented")]  # the overlay's table row
    code, out, err = run_cli(["compat", "update", "--remove"], env)
    assert code == 0 and "removed stacks.toml" in out and not overlay.exists()
    code, data, triton = doctor(tmp_path / "again", env)
    assert data == {"as_of": "2026-12-01", "overlay": [], "overlay_ignored": []}
    # the shipped data again: no table row, an official image's pairing
    assert triton == [("ok", "triton-ascend 3.2.2 with CANN 9.1.0: known-good (an official image installs both)")]


def test_the_human_doctor_report_says_data_as_of_with_the_overlay(tmp_path):
    env = environ(tmp_path)
    assert run_cli(["compat", "update", str(newer_stacks(tmp_path))], env)[0] == 0
    host = build_host("vllm-ascend-v0.23.0", tmp_path / "hosts")
    code, out, err = run_cli(
        ["doctor", "--root", str(host.root), "--python", sys.executable], dict(host.environ, **env)
    )
    overlay = tmp_path / "data" / "ascenv" / "compat" / "stacks.toml"
    assert f"compatibility data as of 2026-12-01 (overlay: {overlay};" in out.replace("\n", " ")


@pytest.mark.parametrize(
    ("extra", "name", "message"),
    [
        (
            '\n[[triton_ascend]]\nversion = "3.2.2"\ncan = ["9.1.0"]\n',
            "stacks.toml",
            "triton_ascend[3].cann: missing",
        ),
        ('\n[[images]]\ncann = "nine"\nchip = "a3"\n', "stacks.toml", "].cann: not a cann version"),
        ("\nschema = [", "stacks.toml", "not valid TOML"),
        ("", "stack.toml", "not an ascenv data file"),
    ],
)
def test_invalid_data_is_exit_2_naming_the_file_and_nothing_is_written(tmp_path, extra, name, message):
    env = environ(tmp_path)
    new = newer_stacks(tmp_path, extra, name)
    code, out, err = run_cli(["compat", "update", str(new)], env)
    assert code == 2 and str(new) in err and message in err and "Traceback" not in err
    assert not (tmp_path / "data" / "ascenv" / "compat").exists()


def test_a_relative_xdg_data_home_is_ignored_for_the_home_default(tmp_path):
    env = environ(tmp_path, XDG_DATA_HOME="relative/data")
    assert run_cli(["compat", "update", str(newer_stacks(tmp_path))], env)[0] == 0
    assert (tmp_path / "home" / ".local" / "share" / "ascenv" / "compat" / "stacks.toml").is_file()


def test_a_later_update_keeps_the_files_it_does_not_replace(tmp_path):
    env = environ(tmp_path)
    assert run_cli(["compat", "update", str(newer_stacks(tmp_path))], env)[0] == 0
    cann = tmp_path / "new" / "cann.toml"
    cann.write_bytes((SHIPPED / "cann.toml").read_bytes())
    code, out, err = run_cli(["compat", "update", str(cann), "--format", "json"], env)
    result = json.loads(out)
    assert code == 0 and result["added"] == ["cann.toml"] and result["files"] == ["cann.toml", "stacks.toml"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [(["compat", "update"], "needs a FILE"), (["compat", "update", "--remove", "x.toml"], "takes no FILE")],
)
def test_usage_errors(tmp_path, argv, message):
    code, out, err = run_cli(argv, environ(tmp_path))
    assert code == 2 and message in err


def test_remove_without_an_overlay_says_the_shipped_data_is_in_use(tmp_path):
    code, out, err = run_cli(["compat", "update", "--remove"], environ(tmp_path))
    assert code == 0 and "no overlay" in out


def test_an_overlay_older_than_the_shipped_data_is_ignored_and_named(tmp_path):
    # after an upgrade of ascenv the shipped file is newer than the user's: it is read, and the
    # overlay's file is named as ignored instead of silently shadowing the newer data
    env = environ(tmp_path)
    text = _dated((SHIPPED / "stacks.toml").read_text(encoding="utf-8"), "2026-11-01")
    old = tmp_path / "old" / "stacks.toml"
    old.parent.mkdir()
    old.write_text(text + NEW_ROW, encoding="utf-8")
    code, out, err = run_cli(["compat", "update", str(old)], env)
    assert code == 0 and "stacks.toml is older than the shipped one" in out
    code, data, triton = doctor(tmp_path, env)
    ignored = str(tmp_path / "data" / "ascenv" / "compat" / "stacks.toml")
    assert data == {"as_of": "2026-12-01", "overlay": [], "overlay_ignored": [ignored]}
    assert triton[0][1].endswith("known-good (an official image installs both)")  # the shipped rows
