import json
from dataclasses import replace

from lock_samples import a2, a3, with_package

from ascenv import lockfile
from ascenv.diff import Node, fleet, pair
from ascenv.snapshot_io import snapshot_to_json
from tests.cli_helpers import run_cli


def node(name, snap):
    return Node(name, lockfile.lock_from_snapshot(snap, generator_version="0.1.0", source=name))


def newer_driver(snap):
    return replace(snap, driver=replace(snap.driver, version="25.2.0"))


def test_pair_identical_and_different():
    assert pair(node("a", a2()), node("b", a2())) == ()
    changes = pair(node("a", a2()), node("b", with_package(a2(), "torch", "2.9.0")))
    assert [(c.layer, c.item, c.old, c.new) for c in changes] == [("packages", "torch", "2.8.0+cpu", "2.9.0")]


def test_fleet_groups_by_stack_outliers_first():
    nodes = [node(f"n{i:02}", a2()) for i in range(10)]
    nodes[3] = node("n03", newer_driver(a2()))
    nodes[7] = node("n07", with_package(a2(), "torch_npu", "2.7.1"))
    nodes[8] = node("n08", with_package(a2(), "torch_npu", "2.7.1"))
    groups = fleet(nodes)
    assert [g.nodes for g in groups] == [("n03",), ("n07", "n08"), tuple(f"n{i:02}" for i in (0, 1, 2, 4, 5, 6, 9))]
    assert [g.reference for g in groups] == [False, False, True]
    assert groups[0].layers == ("driver",) and groups[1].layers == ("packages",)
    assert [(c.old, c.new) for c in groups[1].changes] == [("2.8.0", "2.7.1")]
    assert groups[2].changes == ()


def test_fleet_of_identical_nodes_is_one_group():
    (group,) = fleet([node(f"n{i}", a2()) for i in range(5)])
    assert group.reference and len(group.nodes) == 5


def run(tmp_path, *argv):
    return run_cli(argv, {}, tmp_path)


def save(tmp_path, name, snap):
    (tmp_path / name).write_text(json.dumps(snapshot_to_json(snap)))
    return name


def test_diff_snapshot_against_lock(tmp_path):
    save(tmp_path, "a2.json", a2())
    assert run(tmp_path, "lock", "--from", "a2.json", "-o", "a2.lock")[0] == 0
    code, out, _ = run(tmp_path, "diff", "a2.lock", save(tmp_path, "new.json", newer_driver(a2())), "--format", "json")
    data = json.loads(out)
    assert code == 1 and data["identical"] is False
    assert [(c["layer"], c["old"], c["new"]) for c in data["changes"]] == [("driver", "25.0.rc1.1", "25.2.0")]
    code, out, _ = run(tmp_path, "diff", "a2.lock", "a2.json")
    assert code == 0 and "identical stacks" in out


def test_diff_two_side_by_side_human_and_markdown(tmp_path):
    save(tmp_path, "a.json", a2())
    save(tmp_path, "b.json", a3())
    code, out, _ = run(tmp_path, "diff", "a.json", "b.json")
    assert code == 1
    assert "ascend910b" in out and "ascend910_93" in out and "25.0.rc1.1" in out
    code, md, _ = run(tmp_path, "diff", "a.json", "b.json", "--format", "markdown")
    assert "| platform | compute-unit | ascend910b | ascend910_93 |" in md
    assert "| driver | version | 25.0.rc1.1 | 25.2.0 |" in md


def test_diff_fleet_human_markdown_json(tmp_path):
    names = [save(tmp_path, f"node{i}.json", newer_driver(a2()) if i == 2 else a2()) for i in range(5)]
    code, out, _ = run(tmp_path, "diff", *names)
    assert code == 1
    assert "5 nodes, 2 distinct stacks" in out
    assert out.index("outlier") < out.index("reference (4 nodes)")
    assert "node2.json" in out and "differs in: driver" in out
    code, md, _ = run(tmp_path, "diff", *names, "--format", "markdown")
    assert "### Outlier (1 node): differs in driver" in md and "| driver | version | 25.0.rc1.1 | 25.2.0 |" in md
    code, out, _ = run(tmp_path, "diff", *names, "--format", "json")
    data = json.loads(out)
    assert data["nodes"] == 5 and data["stacks"] == 2
    assert data["groups"][0]["nodes"] == ["node2.json"] and data["groups"][0]["layers"] == ["driver"]
    assert data["groups"][1]["reference"] is True


def test_diff_needs_two_inputs_and_readable_files(tmp_path):
    save(tmp_path, "a.json", a2())
    assert run(tmp_path, "diff", "a.json")[0] == 2
    code, _, err = run(tmp_path, "diff", "a.json", "missing.json")
    assert code == 2 and "cannot read missing.json" in err
    (tmp_path / "junk.lock").write_text("lock-version = [")
    code, _, err = run(tmp_path, "diff", "a.json", "junk.lock")
    assert code == 2 and "junk.lock is not a readable lock" in err


def test_diff_bad_snapshot_names_file_and_key_path(tmp_path):
    names = [save(tmp_path, f"n{i}.json", a2()) for i in range(3)]
    data = json.loads((tmp_path / "n2.json").read_text())
    data["python"]["distributions"][1]["version"] = 2
    (tmp_path / "n2.json").write_text(json.dumps(data))
    code, _, err = run(tmp_path, "diff", *names)
    assert code == 2
    assert "n2.json: python.distributions[1].version: expected string, found integer 2" in err


def test_diff_fleet_keeps_nodes_with_equal_sections_apart_where_they_differ(tmp_path):
    """Parts already seen are reused: a node differing only in its package list must still differ."""
    names = [
        save(tmp_path, "a.json", a2()),
        save(tmp_path, "b.json", a2()),
        save(tmp_path, "c.json", with_package(a2(), "numpy", "2.0.0")),
    ]
    code, out, _ = run(tmp_path, "diff", *names, "--format", "json")
    groups = json.loads(out)["groups"]
    assert [g["nodes"] for g in groups] == [["c.json"], ["a.json", "b.json"]]
    assert [(c["item"], c["old"], c["new"]) for c in groups[0]["changes"]] == [("numpy", "1.26.4", "2.0.0")]


def test_a_json_array_is_read_as_json_not_as_toml(tmp_path):
    save(tmp_path, "a.json", a2())
    (tmp_path / "list.json").write_text('[{"schema": 1}]')
    code, _, err = run(tmp_path, "diff", "list.json", "a.json")
    assert code == 2 and "list.json: <top>: expected a table, found list" in err
    assert "Invalid initial character" not in err


def test_a_deep_or_surrogate_snapshot_is_exit_2(tmp_path):
    save(tmp_path, "a.json", a2())
    (tmp_path / "deep.json").write_text('{"schema":1,"host":' + '{"a":' * 100_000 + "1" + "}" * 100_001)
    code, _, err = run(tmp_path, "diff", "deep.json", "a.json")
    assert code == 2 and "deep.json is not an ascenv snapshot (JSON nested too deep)" in err
    text = (tmp_path / "a.json").read_text().replace('"25.0.rc1.1"', '"25.0\\ud800"')
    (tmp_path / "sur.json").write_text(text)
    code, _, err = run(tmp_path, "diff", "a.json", "sur.json", "--format", "json")
    assert code == 2 and "not valid Unicode" in err
