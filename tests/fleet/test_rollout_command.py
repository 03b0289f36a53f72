"""`ascenv fleet rollout`'s own checks and wave planning before any node is asked (no sshd):
bad options are exit 2, `--limit` groups are read with the real ansible-inventory."""

from __future__ import annotations

import fcntl
import os
import sys
from pathlib import Path

import pytest

from ascenv import errors, store
from ascenv.fleet import playbook, rollout
from tests.cli_helpers import run_cli
from tests.package.pkgbuild import needs_makeself, stored_npu_build

KEY = "b" * 64
INVENTORY = """[rack1]
n1 ansible_host=127.0.0.1
n2 ansible_host=127.0.0.1

[rack2]
n3 ansible_host=127.0.0.1
n4 ansible_host=127.0.0.1 ascenv_install_path=/srv/opp

[ascend:children]
rack1
rack2
"""


@pytest.fixture
def ctl(tmp_path):
    (tmp_path / "hosts.ini").write_text(INVENTORY)
    return tmp_path


def _env(tmp_path: Path) -> dict:
    return {"PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}", "HOME": str(tmp_path)}


def test_limit_groups_read_by_ansible_inventory_are_waves_in_their_order(ctl):
    groups = rollout.inventory_groups(playbook.inventory_list(str(ctl / "hosts.ini"), _env(ctl)))
    assert groups["all"] == ("n1", "n2", "n3", "n4") and groups["ascend"] == ("n1", "n2", "n3", "n4")
    waves = rollout.plan_waves(groups["all"], 1, groups=rollout.limit_groups(groups, ["rack2", "rack1"]))
    assert waves == (("n3",), ("n4",), ("n1", "n2"))


def test_an_inventory_ansible_cannot_read_is_exit_2(ctl):
    (ctl / "bad.ini").write_text("[rack1\nn1\n")
    with pytest.raises(errors.InputError, match="ansible-inventory could not read"):
        playbook.inventory_list(str(ctl / "bad.ini"), {**_env(ctl), "ANSIBLE_INVENTORY_UNPARSED_FAILED": "true"})


@needs_makeself
@pytest.mark.parametrize(
    "argv, words",
    [
        (["--waves", "50%,25%"], "--waves 50%,25%: the shares must rise and end at 100%"),
        (["--limit", "rack*"], "--limit rack* is neither a group nor a host"),
        (["--install-path", "opp"], "expected an absolute path on the nodes"),
        (["--status"], "has started"),
        (["--canary", "-1"], "--canary -1: expected 0 or more"),
        (["--forks", "0"], "--forks 0: expected 1 or more"),
        (["--fail-over", "five"], "--fail-over 'five' is not a percentage"),
        (["--allow-unchecked-bench"], "--allow-unchecked-bench is of the bench gate: give --fail-over PCT too"),
        (["--fail-over", "5%"], "kernels/add_custom/kernel.toml declares no npu benchmarks: the bench gate can check"),
    ],
    ids=["waves", "limit", "install-path", "status", "canary", "forks", "fail-over", "unchecked-alone", "no-bench"],
)
def test_bad_options_are_exit_2_before_any_node_is_asked(ctl, argv, words):
    stored_npu_build(store.Store(ctl / ".ascenv" / "store"), KEY, ctl / "pkg")
    code, out, err = run_cli(
        ["fleet", "rollout", "add_custom", "--build", KEY[:8], "-i", "hosts.ini", *argv], _env(ctl), cwd=ctl
    )
    assert code == errors.EXIT_USAGE and words in err and "Traceback" not in err, err
    assert not (ctl / "ascenv-fleet-rollout").exists() or argv == ["--status"]
    assert not (ctl / "canary").exists()  # the package's installer never ran


def test_a_build_that_is_not_in_the_store_is_exit_2(ctl):
    code, _, err = run_cli(["fleet", "rollout", "add_custom", "--build", "cafe0123", "-i", "hosts.ini"], _env(ctl), ctl)
    assert code == errors.EXIT_USAGE and "cafe0123" in err, err


@needs_makeself
def test_a_second_controller_on_the_same_journal_is_exit_2_and_asks_no_node(ctl):
    """The first controller holds <journal>.lock (here: this process, on its own descriptor)."""
    stored_npu_build(store.Store(ctl / ".ascenv" / "store"), KEY, ctl / "pkg")
    argv = ["fleet", "rollout", "add_custom", "--build", KEY[:8], "-i", "hosts.ini", "--journal", "j.json"]
    with open(ctl / "j.json.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        code, _, err = run_cli([*argv, "--limit", "rack1"], _env(ctl), cwd=ctl)
    assert code == errors.EXIT_USAGE and "another ascenv fleet rollout is running with the journal j.json" in err
    assert not (ctl / "j.json").exists() and not (ctl / "j.runs").exists()  # nothing written, no node asked
