"""The plan tells the truth (issue 25, clean-cache): nothing is planned that a delete will not
free, its counts are what the delete removes, a second run finds nothing to do, the age shown
is the age judged and a skip names its rule and a file."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ascenv.cache.entry import CacheRoot
from ascenv.cache.execute import execute
from ascenv.cache.machine import MachineFacts
from ascenv.cache.plan import Filters, Plan, make_plan, parse_age, recent_cutoff
from ascenv.cache.scan import scan
from ascenv.commands import clean_cache
from tests.cache.helpers import write
from tests.cli_helpers import run_cli

OLD = 1_000_000.0
NOBODY = 65534
THREE_DAYS = 3 * 86400


def soc_root(tmp_path: Path) -> tuple[Path, list[CacheRoot]]:
    kc = tmp_path / "atc_data/kernel_cache"
    kc.mkdir(parents=True, exist_ok=True)
    return kc / "Ascend910B4", [CacheRoot("kernel-cache", str(kc), "default $HOME/atc_data", "soc")]


def plan_of(roots: list[CacheRoot], cutoff: float, uid: int | None = None) -> Plan:
    return make_plan(scan(roots, uid=uid, recent_cutoff=cutoff), Filters(), now=time.time())


def plan_then_delete(roots: list[CacheRoot], cutoff: float = float("inf"), uid: int | None = None):
    plan = plan_of(roots, cutoff, uid)
    outcome = execute(plan, uid=uid, recent_cutoff=cutoff)
    assert outcome.errors == []
    return plan, outcome


# --- 1. a SoC cache holding only what stays is not planned, every run --------------------------------


def test_a_soc_cache_holding_only_op_cache_ini_is_skipped_naming_it(tmp_path):
    soc, roots = soc_root(tmp_path)
    write(str(soc / "op_cache.ini"), b"[op_compiler_cache]\n", mtime=OLD)
    plan = plan_of(roots, float("inf"))
    assert plan.entries == () and (plan.bytes, plan.files) == (0, 0)
    (skip,) = plan.skipped
    assert "nothing in it would be deleted" in skip.reason and str(soc / "op_cache.ini") in skip.reason


@pytest.mark.parametrize(
    "layout",
    [
        ["op_cache.ini"],  # the reproducer
        ["sub/op_cache.ini"],  # deeper, with the directories above it (they stay too)
        ["a/op_cache.ini", "b/c/op_cache.ini"],  # two, in two branches
    ],
)
def test_after_a_delete_the_second_run_finds_nothing_to_do(tmp_path, layout):
    soc, roots = soc_root(tmp_path)
    for name in layout:
        write(str(soc / name), b"[op_compiler_cache]\n", mtime=OLD)
    for i in range(6):
        write(str(soc / f"te_add_{i}.o"), b"k" * 3000, mtime=OLD)
    first, _ = plan_then_delete(roots)
    assert len(first.entries) == 1
    second = plan_of(roots, float("inf"))
    assert second.entries == () and second.bytes == 0
    assert sorted(str(p.relative_to(soc)) for p in soc.rglob("*") if p.is_file()) == sorted(layout)


# --- 2. the plan's counts are what the delete removes --------------------------------------------------


def test_the_plan_does_not_count_the_file_it_keeps(tmp_path):
    """7 files, op_cache.ini among them: 6 planned, 6 deleted, the bytes freed are the bytes planned."""
    soc, roots = soc_root(tmp_path)
    write(str(soc / "op_cache.ini"), b"[op_compiler_cache]\n", mtime=OLD)
    for i in range(6):
        write(str(soc / f"te_add_{i}.o"), b"k" * 3000, mtime=OLD)
    plan, outcome = plan_then_delete(roots)
    assert plan.files == outcome.files == 6
    assert plan.bytes == outcome.freed


def test_recent_file_deep_down_keeps_its_directories_out_of_the_plan(tmp_path):
    soc, roots = soc_root(tmp_path)
    for i in range(4):
        write(str(soc / f"a/b/c/old_{i}.o"), b"k" * 5000, mtime=OLD)
    write(str(soc / "a/b/c/new.o"), b"n" * 5000)  # mtime now: within --recent
    write(str(soc / "x/old.o"), b"k", mtime=OLD)
    cutoff = time.time() - 600
    plan, outcome = plan_then_delete(roots, cutoff)
    assert (plan.files, plan.bytes) == (outcome.files, outcome.freed) == (5, outcome.freed)
    assert (soc / "a/b/c/new.o").exists() and not (soc / "x").exists()


def test_hard_links_free_space_only_when_every_name_goes(tmp_path):
    soc, roots = soc_root(tmp_path)
    write(str(soc / "inside.o"), b"i" * 8000, mtime=OLD)
    os.link(soc / "inside.o", soc / "inside-too.o")  # both names in the cache: freed
    write(str(tmp_path / "elsewhere.o"), b"e" * 8000, mtime=OLD)
    os.link(tmp_path / "elsewhere.o", soc / "link.o")  # the other name outside: nothing freed
    write(str(soc / "plain.o"), b"p" * 8000, mtime=OLD)
    plan, outcome = plan_then_delete(roots)
    assert plan.files == outcome.files == 4
    assert plan.bytes == outcome.freed
    assert (tmp_path / "elsewhere.o").read_bytes() == b"e" * 8000


@pytest.mark.skipif(os.geteuid() != 0, reason="chown needs root")
def test_other_users_files_are_not_counted_and_named(tmp_path):
    soc, roots = soc_root(tmp_path)
    write(str(soc / "mine.o"), b"m" * 5000, mtime=OLD)
    write(str(soc / "d/theirs.o"), b"t" * 5000, mtime=OLD)
    os.chown(soc / "d/theirs.o", NOBODY, NOBODY)
    plan = plan_of(roots, float("inf"), uid=0)
    (entry,) = plan.entries
    assert [(k.rule, k.files, k.example, k.uid) for k in entry.kept] == [
        ("foreign", 1, str(soc / "d/theirs.o"), NOBODY)
    ]
    outcome = execute(plan, uid=0, recent_cutoff=float("inf"))
    assert (plan.files, plan.bytes) == (outcome.files, outcome.freed)


NAMES = st.sampled_from(["a.o", "b.json", "op_cache.ini", "c.o"])
FILES = st.lists(
    st.tuples(
        st.lists(st.sampled_from(["d1", "d2", "d3"]), max_size=3),  # directories down to it
        NAMES,
        st.booleans(),  # modified now (within --recent)
        st.sampled_from(["", "inside", "outside"]),  # a second name for the file, and where
        st.integers(0, 9000),  # size
    ),
    max_size=12,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=FILES)
def test_the_plan_counts_what_the_delete_removes_whatever_the_tree(tmp_path_factory, files):
    tmp = tmp_path_factory.mktemp("tree")
    soc, roots = soc_root(tmp)
    soc.mkdir()
    for n, (dirs, name, recent, link, size) in enumerate(files):
        path = soc.joinpath(*dirs, name)
        if path.exists():
            continue
        write(str(path), b"x" * size, mtime=None if recent else OLD)
        if link:
            other = (soc if link == "inside" else tmp) / f"link{n}"
            os.link(path, other)
    cutoff = time.time() - 600
    plan, outcome = plan_then_delete(roots, cutoff)
    assert (plan.files, plan.bytes) == (outcome.files, outcome.freed)
    again = plan_of(roots, cutoff)
    assert again.entries == ()  # a second run finds nothing to do


# --- 3. the age shown is the age judged; a skip says which rule and which file -------------------------


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setattr(clean_cache, "gather_machine_facts", lambda *a, **k: MachineFacts())
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


def cli(home: Path, *argv: str) -> tuple[int, str, str]:
    environ = {"HOME": str(home), "DOCKER_HOST": f"unix://{home}/no-engine.sock"}
    return run_cli(["clean-cache", *argv], environ, home)


def test_a_tree_aged_with_touch_d_is_old_for_recent_too(home):
    """`touch -d '3 days ago'` sets the mtime (the ctime becomes now): AGE says 3d, and the
    default --recent 10m lets it go, as `find -mtime` and --older-than see it."""
    soc = home / "atc_data/kernel_cache/Ascend910B4"
    aged = time.time() - THREE_DAYS - 60
    for i in range(3):
        write(str(soc / f"te_{i}.o"), b"k" * 3000, mtime=aged)
    code, out, _ = cli(home, "ls")
    assert code == 0 and " 3d " in out
    code, out, err = cli(home, "--dry-run", "--format", "json")
    plan = json.loads(out)["plan"]
    assert plan["entries"] == [str(soc)] and plan["files"] == 3 and plan["skipped"] == []
    code, out, err = cli(home, "--older-than", "2d", "--dry-run", "--format", "json")
    assert json.loads(out)["plan"]["entries"] == [str(soc)]


def test_a_skip_for_recent_files_names_the_rule_the_file_and_its_age(home):
    soc = home / "atc_data/kernel_cache/Ascend910B4"
    write(str(soc / "old/te_0.o"), b"k", mtime=time.time() - 120)  # 2 minutes: within the default 10m
    write(str(soc / "new/te_1.o"), b"k", mtime=time.time() - 30)
    code, out, err = cli(home, "--dry-run")
    text = out + err
    assert code == 0
    assert "2 files modified within --recent, the latest 30s ago: " + str(soc / "new/te_1.o") in text
    code, out, _ = cli(home, "--dry-run", "--format", "json")
    data = json.loads(out)
    (skip,) = data["plan"]["skipped"]
    assert skip["path"] == str(soc) and str(soc / "new/te_1.o") in skip["reason"]
    (entry,) = [e for e in data["entries"] if e["path"] == str(soc)]
    assert [(k["rule"], k["files"], k["example"]) for k in entry["kept"]] == [("recent", 2, str(soc / "new/te_1.o"))]
    # the same files with --recent 1m: the older one goes, the plan says the newer one stays
    code, out, err = cli(home, "--dry-run", "--recent", "1m")
    assert "1 entry: would free" in out + err and "in 1 file." in out + err
    assert "stays: 1 file modified within --recent, the latest 30s ago: " + str(soc / "new/te_1.o") in out + err


# --- 4. --recent 0 -----------------------------------------------------------------------------------


@pytest.mark.parametrize("zero", ["0", "0s", "0m", "0.0h"])
def test_recent_zero_means_no_recency_protection(home, zero):
    soc = home / "atc_data/kernel_cache/Ascend910B4"
    write(str(soc / "now.o"), b"k")
    write(str(soc / "future.o"), b"k", mtime=time.time() + 3600)  # a skewed clock
    code, out, err = cli(home, "--recent", zero, "--yes")
    assert code == 0, err
    assert "Deleted 1 entry" in out + err and not soc.exists()


def test_parse_age_zero_and_the_cutoff_it_gives():
    assert parse_age("0") == parse_age("0s") == 0.0
    assert recent_cutoff(1000.0, 0.0) == float("inf")
    assert recent_cutoff(1000.0, 600.0) == 400.0


# --- 5. plurals --------------------------------------------------------------------------------------


def test_one_file_is_one_file_and_one_entry_one_entry(home):
    write(str(home / "atc_data/kernel_cache/Ascend910B4/te_0.o"), b"k", mtime=OLD)
    outputs = [cli(home, "ls"), cli(home, "--dry-run"), cli(home, "--yes")]
    text = "".join(out + err for _, out, err in outputs)
    assert "in 1 file." in text and "1 entry" in text and "1 cache entry" in text
    assert "1 files" not in text and "1 entries" not in text
