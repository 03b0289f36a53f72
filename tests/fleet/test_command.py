"""`ascenv fleet audit`'s own checks, before any node is asked (no sshd needed)."""

from __future__ import annotations

import pytest

from ascenv import errors
from tests.cli_helpers import run_cli


@pytest.fixture
def inventory(tmp_path):
    path = tmp_path / "hosts.ini"
    path.write_text("n1 ansible_host=127.0.0.1\n")
    return path


def test_without_o_a_current_folder_where_nothing_can_be_made_is_exit_2(tmp_path, inventory):
    """X4: in a read-only cwd `fleet audit` was exit 3 (Read-only file system). The default folder
    stays ./ascenv-fleet-<time>: one that cannot be made is a clear exit 2 naming -o. (Root writes
    through mode bits, so the cwd here is a file: mkdir fails the same way, an OSError.)"""
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    code, _, stderr = run_cli(["fleet", "audit", "-i", str(inventory)], {"PATH": "/usr/bin:/bin"}, cwd=not_a_folder)
    assert code == errors.EXIT_USAGE, stderr
    assert "cannot make the results folder ascenv-fleet-" in stderr and "-o DIR" in stderr
    assert "Traceback" not in stderr and "unexpected error" not in stderr


@pytest.mark.parametrize("where", ["file/results", "/proc/self/ascenv-results"], ids=["under-a-file", "proc"])
def test_an_o_that_cannot_be_made_is_exit_2(tmp_path, inventory, where):
    (tmp_path / "file").write_text("")
    code, _, stderr = run_cli(
        ["fleet", "audit", "-i", str(inventory), "-o", where], {"PATH": "/usr/bin:/bin"}, cwd=tmp_path
    )
    assert code == errors.EXIT_USAGE, stderr
    assert f"cannot make the results folder {where}" in stderr and "unexpected error" not in stderr
