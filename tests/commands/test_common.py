"""commands._common: outputs that cannot be written are refused before the work, with exit 2 (X4 of
the second adversarial round: `build` in a read-only checkout was exit 3, its store being
``.ascenv/store`` in the cwd). A read-only file system needs a mount, which a test cannot make: it
is simulated where ``writable`` asks, ``os.access``, which answers EROFS even to root (access(2))."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ascenv import errors
from ascenv.commands import _common as common
from tests.cli_helpers import run_cli


@pytest.fixture
def read_only(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """``tmp_path/ro``: a directory on which access(W_OK) fails, as on a read-only mount."""
    directory = tmp_path / "ro"
    directory.mkdir()
    real = os.access

    def access(path: object, mode: int, **kwargs: object) -> bool:
        if Path(os.fspath(path)) == directory and mode & os.W_OK:  # type: ignore[arg-type]
            return False
        return real(path, mode, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(common.os, "access", access)
    return directory


@pytest.mark.parametrize(
    "argv",
    [
        ["build", "add_custom"],
        ["build", "add_custom", "--store", "deeper/store"],
        ["lock", "--from", "missing.json"],
        ["report", "--from", "missing.json"],
        ["snapshot", "--root", "missing", "-o", "snap.json"],
        ["report", "--from", "missing.json", "-o", "bundle.tar.gz", "--no-redact"],
    ],
)
def test_an_output_in_a_read_only_cwd_is_exit_2_before_any_work(read_only: Path, argv: list[str]) -> None:
    code, _, err = run_cli(argv, {}, read_only)
    assert code == errors.EXIT_USAGE, err
    assert "cannot write " in err and f": Permission denied ({read_only})" in err
    assert "does not exist" not in err and "cannot read" not in err  # the output was checked first
    assert "engine" not in err and list(read_only.iterdir()) == []


def test_a_store_below_a_file_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / ".ascenv").write_text("not a directory")
    code, _, err = run_cli(["build", "add_custom"], {}, tmp_path)
    assert code == errors.EXIT_USAGE
    assert f"Not a directory ({tmp_path / '.ascenv'} is a file)" in err and "--store" in err


@pytest.mark.parametrize(("command", "value"), [("lock", "."), ("lock", "sub"), ("report", "sub/"), ("report", "sub")])
def test_an_output_that_is_a_directory_is_refused_with_a_file_inside_it_suggested(
    tmp_path: Path, command: str, value: str
) -> None:
    (tmp_path / "sub").mkdir()
    code, _, err = run_cli([command, "--from", "missing.json", "-o", value], {}, tmp_path)
    said = " ".join(err.split())
    assert code == errors.EXIT_USAGE and f"cannot write {value}: Is a directory" in said
    assert f"name a file inside it: -o {value.rstrip('/')}/FILE" in said


@pytest.mark.skipif(os.geteuid() == 0, reason="root passes every permission check")
def test_a_directory_without_write_permission_is_refused(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    code, _, err = run_cli(["lock", "--from", "missing.json"], {}, locked)
    assert code == errors.EXIT_USAGE and "Permission denied" in err


def test_a_missing_directory_is_refused_before_the_work(tmp_path: Path) -> None:
    code, _, err = run_cli(["report", "--from", "missing.json", "-o", "no/such/r.tar.gz"], {}, tmp_path)
    assert code == errors.EXIT_USAGE
    assert f"cannot write no/such/r.tar.gz: No such file or directory ({tmp_path}/no/such does not exist)" in err


def test_an_existing_special_file_is_written_into(tmp_path: Path, read_only: Path) -> None:
    """``-o /dev/null`` from a read-only cwd: the device is written, its directory does not matter."""
    common.writable(Path("/dev/null"), "/dev/null", hint="")
    with pytest.raises(errors.UsageError):
        common.writable(read_only / "x", "x", hint="")
