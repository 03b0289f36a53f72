"""The playbook's own decisions (ansible/audit.yml's play vars), rendered by Ansible's templar
with the inventory values a host could carry: no node needed."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from ascenv import paths
from ascenv.fleet.results import host_key
from tests.fleet.test_results import HOSTILE

pytest.importorskip("ansible")

from ansible.parsing.dataloader import DataLoader  # noqa: E402
from ansible.template import Templar  # noqa: E402

try:
    from ansible.template import trust_as_template  # ansible-core 2.19: only trusted text is a template
except ImportError:  # older ansible-core templates any text

    def trust_as_template(value: Any) -> Any:
        return value


PLAY_VARS = yaml.safe_load((paths.data_dir("ansible") / "audit.yml").read_text())[0]["vars"]


def render(name: str, **given: object) -> Any:
    """The play var ``name`` for a host whose inventory gives ``given``."""
    variables = {k: trust_as_template(v) if isinstance(v, str) else v for k, v in PLAY_VARS.items()}
    variables.update(given)
    return Templar(loader=DataLoader(), variables=variables).template(trust_as_template("{{ " + name + " }}"))


def test_the_playbook_names_each_folder_as_host_key_does():
    for host in [*HOSTILE, "a2-1", "x" * 100, "x" * 101, "_x", "%plain%"]:
        assert render("ascenv_key", inventory_hostname=host) == host_key(host), host


@pytest.mark.parametrize(
    ("value", "word"),
    [
        ("~", '"$HOME"'),
        ("~/.ascenv-fleet-tmp", '"$HOME"/.ascenv-fleet-tmp'),
        ("/tmp", "/tmp"),
        ("/a/b+c@d", "/a/b+c@d"),
    ],
)
def test_a_plain_remote_tmp_is_taken_with_home_for_tilde(value, word):
    assert render("ascenv_tmp_refused", ascenv_remote_tmp=value) == ""
    assert render("ascenv_tmp_word", ascenv_remote_tmp=value) == word


@pytest.mark.parametrize(
    "value", ["/x;touch y", "/x$(touch y)", "/x`id`", "/it's", "/a b", "/a\nb", "~user/x", "", "/*"]
)
def test_a_remote_tmp_that_needs_quoting_is_refused_before_anything_runs(value):
    """Ansible's own mkdtemp puts the remote tmp in `mkdir -p $( echo DIR )` unquoted."""
    assert render("ascenv_tmp_refused", ascenv_remote_tmp=value).startswith("ascenv_remote_tmp ")


def test_the_default_remote_tmp_is_in_the_home():
    assert render("ascenv_tmp_refused") == "" and render("ascenv_tmp_word") == '"$HOME"/.ascenv-fleet-tmp'


@pytest.mark.parametrize(("given", "seconds"), [("abc", 1), (0, 1), (-5, 1), ("5", 5), (None, 600)])
def test_the_node_timeout_is_never_0_which_timeout_takes_for_none(given, seconds):
    values = {} if given is None else {"ascenv_node_timeout": given}
    assert int(render("ascenv_timeout", **values)) == seconds
