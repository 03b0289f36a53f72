"""ascenv.fleet.results without nodes: result folders built here as the playbook writes them
(one ``<host key>/result.json`` per host, the play's hosts in ``.ascenv-hosts.json``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ascenv import errors
from ascenv.fleet import results, verdicts
from ascenv.fleet.results import FAILED, OK, host_key, read_results

HOSTILE = ["rack1/node2", "../../../escaped_host", "..", ".", "-rf", "nœud-ü"]
HOSTILE += ["a/b", "a?b", "a_b", "a b", "a\nb", "x" * 300]


def _record(host: str, stdout: str = "", **fields: object) -> dict:
    return {"host": host, "unreachable": False, "failed": False, "rc": 0, "msg": "", "stdout": stdout, **fields}


def _write(folder: Path, hosts: list[str], records: dict[str, object]) -> None:
    folder.mkdir(exist_ok=True)
    (folder / results.HOSTS).write_text(json.dumps(hosts))
    for host, record in records.items():
        (folder / host_key(host)).mkdir()
        text = record if isinstance(record, str) else json.dumps(record)
        (folder / host_key(host) / results.RESULT).write_text(text)


def _deep(depth: int, inner: str = "") -> str:
    return "[" * depth + inner + "]" * depth


# --- host names are data (F2) -----------------------------------------------------------------


def test_plain_names_are_their_own_folder_and_every_other_one_is_one_safe_component():
    assert [host_key(h) for h in ("a2-1", "node_07.rack3", "10.0.0.7")] == ["a2-1", "node_07.rack3", "10.0.0.7"]
    keys = [host_key(h) for h in HOSTILE]
    assert len(set(keys)) == len(HOSTILE)  # a/b, a?b, a b, a\nb all read a_b: the hash tells them apart
    assert host_key("a_b") == "a_b"  # plain: its own folder, beside a/b's
    for host, key in zip(HOSTILE, keys):
        assert (key.startswith("%") or host == "a_b") and "/" not in key and len(key.encode()) <= 255, key


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.text(st.characters(exclude_categories=()), min_size=1, max_size=120), min_size=2, max_size=6, unique=True
    )
)
def test_no_two_names_share_a_folder_and_none_leaves_the_results(names):
    keys = [host_key(n) for n in names]
    assert len(set(keys)) == len(keys)
    for key in keys:
        assert "/" not in key and key not in (".", "..") and not key.startswith("-") and len(key.encode()) <= 255


def test_a_host_of_the_play_without_a_result_is_failed_and_the_audit_exits_11(tmp_path):
    """F2: the playbook wrote three hosts, one result came back: never "all ok"."""
    snapshot_line = json.dumps({"ascenv_node": 1, "python": "3.11.2", "snapshot": {}})
    _write(tmp_path, ["good1", "rack1/node2", "../../../escaped_host"], {"good1": _record("good1", snapshot_line)})
    found = {r.host: r for r in read_results(tmp_path)}
    assert sorted(found) == sorted(["good1", "rack1/node2", "../../../escaped_host"])
    for host in ("rack1/node2", "../../../escaped_host"):
        assert found[host].status == FAILED and "no result came back" in found[host].message
    assert verdicts.audit(tuple(found.values())).exit_code == errors.EXIT_NODES_FAILED


def test_a_result_in_a_host_folder_naming_another_host_is_not_taken_for_it(tmp_path):
    line = json.dumps({"ascenv_node": 1, "snapshot": {}})
    _write(tmp_path, ["n1", "n2"], {"n1": _record("n2", line), "n2": _record("n2", "no envelope")})
    found = {r.host: r for r in read_results(tmp_path)}
    assert found["n1"].status == FAILED and "another host's" in found["n1"].message
    assert found["n2"].status == FAILED


def test_folders_the_play_did_not_name_are_not_read(tmp_path):
    _write(tmp_path, ["n1"], {"n1": _record("n1", unreachable=True, msg="ssh: connect refused")})
    (tmp_path / "stray").mkdir()
    (tmp_path / "stray" / results.RESULT).write_text(json.dumps(_record("stray")))
    assert [(r.host, r.status) for r in read_results(tmp_path)] == [("n1", "unreachable")]


def test_a_damaged_host_list_is_bad_input_not_an_empty_fleet(tmp_path):
    (tmp_path / results.HOSTS).write_text(_deep(100_000))
    with pytest.raises(errors.InputError, match="host list"):
        read_results(tmp_path)
    (tmp_path / results.HOSTS).write_text('{"a": 1}')
    with pytest.raises(errors.InputError, match="not a list of names"):
        read_results(tmp_path)


# --- one hostile node never stops the others (F3) ---------------------------------------------


@pytest.mark.parametrize(
    "stdout",
    [
        '{"ascenv_node":1,"snapshot":' + _deep(100_000) + "}",  # the report's reproducer
        '{"ascenv_node":1,"python":"3.11","snapshot":{"host":' + _deep(50_000, "{}") + "}}",  # inside the snapshot
        '{"ascenv_node":1,"snapshot":{"a":' + '{"a":' * 30_000 + "1" + "}" * 30_000 + "}}",  # objects, not lists
    ],
    ids=["report", "inside-snapshot", "objects"],
)
def test_deeply_nested_json_from_one_node_fails_that_node_only(tmp_path, stdout):
    good = json.dumps({"ascenv_node": 1, "snapshot": {}})
    _write(tmp_path, ["deep", "good"], {"deep": _record("deep", stdout), "good": _record("good", good)})
    found = {r.host: r for r in read_results(tmp_path)}
    assert found["deep"].status == FAILED
    assert "unreadable result" in found["deep"].message or "does not read" in found["deep"].message
    assert found["good"].status in (OK, FAILED) and found["good"].host == "good"


def test_a_nested_result_file_itself_is_an_unreadable_result(tmp_path):
    _write(tmp_path, ["n1"], {"n1": _deep(200_000)})
    (only,) = read_results(tmp_path)
    assert (only.host, only.status) == ("n1", FAILED) and "unreadable result" in only.message


# --- a node that ran out of time (F5) ---------------------------------------------------------


@pytest.mark.parametrize("rc", [124, 137])
def test_a_step_stopped_by_the_nodes_timeout_says_so(tmp_path, rc):
    _write(tmp_path, ["slow"], {"slow": _record("slow", "", rc=rc, failed=True, msg="non-zero return code", timeout=5)})
    (only,) = read_results(tmp_path)
    assert only.status == FAILED and f"exit {rc}: timed out after 5 s" in only.message
