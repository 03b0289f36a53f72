"""`ascenv fleet audit`'s own checks, before any node is asked (no sshd needed)."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from ascenv import cli, errors, proc
from ascenv.commands._common import Context
from ascenv.fleet import results
from ascenv.output import Output
from tests.cli_helpers import run_cli


@pytest.fixture
def inventory(tmp_path):
    path = tmp_path / "hosts.ini"
    path.write_text("n1 ansible_host=127.0.0.1\n")
    return path


def test_without_o_a_state_folder_that_cannot_be_made_is_exit_2(tmp_path, inventory):
    """X4: in a read-only cwd `fleet audit` was exit 3 (Read-only file system). The default folder
    is in ascenv's state directory now; one that cannot be made is a clear exit 2 naming -o. (Root
    writes through mode bits, so the state home here is a file: mkdir fails the same way.)"""
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    environ = {"PATH": "/usr/bin:/bin", "XDG_STATE_HOME": str(not_a_folder)}
    code, _, stderr = run_cli(["fleet", "audit", "-i", str(inventory)], environ, cwd=tmp_path)
    assert code == errors.EXIT_USAGE, stderr
    said = " ".join(stderr.split())
    assert f"cannot make the results folder {not_a_folder}/ascenv/fleet/audit-" in said and "-o DIR" in said
    assert "Traceback" not in stderr and "unexpected error" not in stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "hosts.ini"]  # nothing left in the cwd


@pytest.mark.parametrize("where", ["file/results", "/proc/self/ascenv-results"], ids=["under-a-file", "proc"])
def test_an_o_that_cannot_be_made_is_exit_2(tmp_path, inventory, where):
    (tmp_path / "file").write_text("")
    code, _, stderr = run_cli(
        ["fleet", "audit", "-i", str(inventory), "-o", where], {"PATH": "/usr/bin:/bin"}, cwd=tmp_path
    )
    assert code == errors.EXIT_USAGE, stderr
    assert f"cannot make the results folder {where}" in stderr and "unexpected error" not in stderr


def _fake_playbook(hosts, records):
    """An ansible-playbook that writes what the playbook would (``hosts`` None: no host list)."""
    seen = {}

    def run(argv, *, timeout, env=None, **_):
        extra = json.loads(argv[argv.index("-e") + 1])
        seen.update(extra)
        folder = Path(extra["ascenv_results"]["__ansible_unsafe"])
        if hosts is not None:
            (folder / results.HOSTS).write_text(json.dumps(hosts))
        for host, record in records.items():
            (folder / results.host_key(host)).mkdir()
            (folder / results.host_key(host) / results.RESULT).write_text(json.dumps(record))
        return proc.Completed(tuple(argv), proc.OK, 0, "", "", 0.1)

    return run, seen


def _audit(tmp_path, inventory, run):
    out, err = io.StringIO(), io.StringIO()
    output = Output("json", stdout=out, stderr=err, interactive=False, color=False)
    ctx = Context(environ={"PATH": os.environ["PATH"]}, out=output, run=run, cwd=str(tmp_path))
    code = cli.main(["fleet", "audit", "-i", str(inventory), "-o", "out dir", "--format", "json"], ctx=ctx)
    return code, out.getvalue(), err.getvalue()


def test_a_host_of_the_play_whose_result_never_came_is_failed_exit_11(tmp_path, inventory):
    """F2: hosts whose results were written elsewhere (or never) were left out of an exit-0 verdict."""
    down = {"host": "good", "unreachable": True, "msg": "ssh: connection refused"}
    run, extra = _fake_playbook(["good", "rack1/node2", "../x"], {"good": down})
    code, stdout, stderr = _audit(tmp_path, inventory, run)
    assert code == errors.EXIT_NODES_FAILED, stderr
    nodes = {n["host"]: n for n in json.loads(stdout)["nodes"]}
    assert sorted(nodes) == ["../x", "good", "rack1/node2"]
    assert nodes["rack1/node2"]["status"] == nodes["../x"]["status"] == "failed"
    assert "no result came back" in nodes["../x"]["message"]
    # paths go to Ansible as data: JSON (no splitting at the space), never a template
    assert extra["ascenv_results"] == {"__ansible_unsafe": str(tmp_path / "out dir")}
    assert extra["ascenv_bundle"]["__ansible_unsafe"].endswith("ascenv-node.pyz")


def test_results_without_the_plays_host_list_are_not_a_verdict(tmp_path, inventory):
    run, _ = _fake_playbook(None, {"good": {"host": "good", "unreachable": True, "msg": "down"}})
    code, _, stderr = _audit(tmp_path, inventory, run)
    assert code == errors.EXIT_USAGE and "no host of" in stderr, stderr
