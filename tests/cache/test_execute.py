import json
import os

import pytest

from ascenv.cache import execute as execute_module
from ascenv.cache.entry import CacheEntry, CacheRoot
from ascenv.cache.execute import execute, remove_entry
from ascenv.cache.plan import Filters, make_plan
from ascenv.cache.scan import scan
from tests.cache.helpers import as_user, canary, shared_tmp, tree_digest, write

NOBODY = 65534
OLD = 1_000_000.0  # 1970: far from "changed in the last minutes"
NEVER = float("inf")


def world(tmp_path):
    """home with a kernel cache, beside a directory of precious files a symlink points at."""
    home = tmp_path / "home"
    precious = tmp_path / "precious"
    write(str(precious / "thesis.tex"), b"do not delete", mtime=OLD)
    write(str(home / "notes.txt"), b"mine", mtime=OLD)
    kc = home / "atc_data" / "kernel_cache"
    write(str(kc / "op_cache.ini"), b"[op_compiler_cache]\nmax_op_cache_size=500\n", mtime=OLD)
    for i in range(3):
        write(str(kc / "Ascend910B4" / f"te_add_{i}.o"), b"k" * 3000, mtime=OLD)
        write(str(kc / "Ascend910B4" / f"te_add_{i}.json"), b"{}", mtime=OLD)
    os.symlink(precious, kc / "Ascend910B4" / "escape")  # a planted link to outside the cache
    os.symlink(home, kc / "Ascend910B4" / "home")  # and one to $HOME
    os.makedirs(kc / "Ascend910B4" / "loop")
    os.symlink("..", kc / "Ascend910B4" / "loop" / "up")  # a loop
    return home, precious, [CacheRoot("kernel-cache", str(kc), "default $HOME/atc_data", "soc")]


def outside_digest(tmp_path):
    """Everything except the SoC cache directories themselves."""
    home = tmp_path / "home"
    return (
        tree_digest(tmp_path / "precious"),
        (home / "notes.txt").read_bytes(),
        (home / "atc_data/kernel_cache/op_cache.ini").read_bytes(),
        sorted(os.listdir(home)),
    )


def plan_all(roots, uid=None):
    report = scan(roots, uid=uid, recent_cutoff=NEVER)
    return make_plan(report, Filters(kinds=frozenset({"kernel-cache", "log", "kernel-meta"})), now=OLD + 10)


def test_delete_removes_links_not_targets_and_keeps_op_cache_ini(tmp_path):
    home, precious, roots = world(tmp_path)
    before = outside_digest(tmp_path)
    plan = plan_all(roots)
    assert [os.path.basename(e.path) for e in plan.entries] == ["Ascend910B4"]
    outcome = execute(plan, uid=None, recent_cutoff=NEVER)
    assert outcome.errors == []
    assert outcome.files == 3 * 2 + 3  # six kernels, three symlinks
    assert not os.path.lexists(home / "atc_data/kernel_cache/Ascend910B4")
    assert outside_digest(tmp_path) == before
    assert (precious / "thesis.tex").read_bytes() == b"do not delete"


def test_second_run_finds_nothing_and_changes_nothing(tmp_path):
    home, _, roots = world(tmp_path)
    execute(plan_all(roots), uid=None, recent_cutoff=NEVER)
    snapshot = tree_digest(tmp_path)
    again = plan_all(roots)
    assert again.entries == () and again.bytes == 0
    assert execute(again, uid=None, recent_cutoff=NEVER).results == ()
    assert tree_digest(tmp_path) == snapshot
    # executing a stale plan a second time is harmless too
    stale_plan = make_plan(scan(world(tmp_path / "w2")[2], uid=None, recent_cutoff=NEVER), Filters(), now=OLD)
    execute(stale_plan, uid=None, recent_cutoff=NEVER)
    second = execute(stale_plan, uid=None, recent_cutoff=NEVER)
    assert second.files == 0 and second.errors == []


def test_recent_and_other_users_files_stay(tmp_path):
    home, _, roots = world(tmp_path)
    soc = home / "atc_data/kernel_cache/Ascend910B4"
    os.chown(soc / "te_add_0.o", NOBODY, NOBODY)  # (its mtime stays old)
    write(str(soc / "fresh.o"), b"new")  # mtime now
    cutoff = os.lstat(soc / "fresh.o").st_mtime
    plan = make_plan(scan(roots, uid=0, recent_cutoff=cutoff), Filters(), now=OLD)
    assert plan.kept_files == 2
    outcome = execute(plan, uid=0, recent_cutoff=cutoff)
    assert sorted(os.listdir(soc)) == ["fresh.o", "te_add_0.o"]
    assert (outcome.kept_recent, outcome.kept_foreign) == (1, 1)
    # --all-users: the other user's file goes too
    outcome = execute(plan, uid=None, recent_cutoff=cutoff)
    assert sorted(os.listdir(soc)) == ["fresh.o"]


def test_files_vanishing_during_delete_are_fine(tmp_path, monkeypatch):
    home, _, roots = world(tmp_path)
    plan = plan_all(roots)
    real_listdir = os.listdir

    def listdir_then_vanish(fd):
        names = real_listdir(fd)
        if "te_add_1.o" in names:
            os.unlink("te_add_1.o", dir_fd=fd)
        return names

    monkeypatch.setattr(execute_module.os, "listdir", listdir_then_vanish)
    outcome = execute(plan, uid=None, recent_cutoff=NEVER)
    assert outcome.errors == [] and outcome.results[0].vanished == 1
    assert not os.path.lexists(home / "atc_data/kernel_cache/Ascend910B4")


def test_an_entry_outside_its_root_is_refused(tmp_path):
    home, precious, roots = world(tmp_path)
    before = tree_digest(tmp_path)
    for path in (
        str(precious),
        str(home / "atc_data/kernel_cache/Ascend910B4/escape/thesis.tex"),
        str(home / "atc_data/kernel_cache/Ascend910B4/../../../precious"),
    ):
        result = remove_entry(CacheEntry("kernel-cache", path, roots[0].path, "test"), uid=None, recent_cutoff=NEVER)
        assert result.removed_files == 0 and ("refused" in result.errors[0] or result.errors == [])
    assert tree_digest(tmp_path) == before


def test_a_self_entry_that_is_a_symlink_is_removed_as_a_link(tmp_path):
    proj = tmp_path / "proj"
    write(str(tmp_path / "precious/keep.txt"), b"keep")
    proj.mkdir()
    os.symlink(tmp_path / "precious", proj / "kernel_meta")
    report = scan(
        [CacheRoot("kernel-meta", str(proj / "kernel_meta"), "working directory", "self")],
        uid=None,
        recent_cutoff=NEVER,
    )
    outcome = execute(make_plan(report, Filters(), now=OLD), uid=None, recent_cutoff=NEVER)
    assert outcome.files == 1 and not os.path.lexists(proj / "kernel_meta")
    assert (tmp_path / "precious/keep.txt").read_bytes() == b"keep"


def test_a_directory_swapped_for_a_symlink_mid_run_is_not_followed(tmp_path, monkeypatch):
    home, precious, roots = world(tmp_path)
    soc = home / "atc_data/kernel_cache/Ascend910B4"
    os.makedirs(soc / "sub")
    write(str(soc / "sub/k.o"), mtime=OLD)
    before = tree_digest(precious)
    plan = plan_all(roots)
    real_lstat = os.lstat

    def lstat_then_swap(name, *, dir_fd=None):
        st = real_lstat(name, dir_fd=dir_fd)
        if name == "sub":  # between the lstat and the open, sub becomes a link to precious
            os.rename("sub", "sub.moved", src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            os.symlink(precious, "sub", dir_fd=dir_fd)
        return st

    monkeypatch.setattr(execute_module.os, "lstat", lstat_then_swap)
    outcome = execute(plan, uid=None, recent_cutoff=NEVER)
    assert tree_digest(precious) == before
    assert any("sub" in e for e in outcome.errors)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to setuid to nobody")
def test_permission_errors_are_reported_not_fatal():
    with shared_tmp() as tmp:
        kc = tmp / "kernel_cache"
        for soc in ("Ascend910B4", "Ascend310P3"):
            write(str(kc / soc / "mine.o"), mtime=OLD)
        os.makedirs(kc / "Ascend910B4" / "locked")
        write(str(kc / "Ascend910B4/locked/root.o"), mtime=OLD)
        os.chmod(kc / "Ascend910B4/locked", 0o700)
        for path in (kc, kc / "Ascend910B4", kc / "Ascend310P3", kc / "Ascend910B4/mine.o", kc / "Ascend310P3/mine.o"):
            os.chown(path, NOBODY, NOBODY)
        roots = [CacheRoot("kernel-cache", str(kc), "t", "soc")]

        def as_nobody():
            plan = make_plan(scan(roots, uid=NOBODY, recent_cutoff=NEVER), Filters(), now=OLD)
            outcome = execute(plan, uid=NOBODY, recent_cutoff=NEVER)
            return {"files": outcome.files, "errors": outcome.errors}

        result = as_user(NOBODY, as_nobody)
        assert result["files"] == 2
        assert any("locked: Permission denied" in e for e in result["errors"])
        assert (kc / "Ascend910B4/locked/root.o").exists() and not (kc / "Ascend310P3").exists()


def test_journal_records_each_removed_entry(tmp_path):
    home, _, roots = world(tmp_path)
    journal = tmp_path / "state" / "ascenv" / "clean-cache.jsonl"
    execute(plan_all(roots), uid=None, recent_cutoff=NEVER, journal=str(journal), now=OLD)
    begin, line = journal.read_text().splitlines()
    record = json.loads(line)
    assert json.loads(begin)["action"] == "begin" and json.loads(begin)["path"] == record["path"]
    assert record["action"] == "remove" and record["path"].endswith("kernel_cache/Ascend910B4")
    assert record["files"] == 9 and record["errors"] == [] and record["time"].startswith("1970-01-12")


def test_non_utf8_entry_is_deleted(tmp_path):
    log = os.fsencode(tmp_path / "log")
    write(log + b"/debug\xff/plog-1.log", b"x", mtime=OLD)
    roots = [CacheRoot("log", str(tmp_path / "log"), "t", "children")]
    outcome = execute(plan_all(roots), uid=None, recent_cutoff=NEVER)
    assert outcome.files == 1 and os.listdir(log) == []


def _tree(top, depth, width):
    """``width`` branches at every level of a ``depth``-deep chain, a file in each."""
    path = top
    for _ in range(depth):
        for b in range(width):
            write(str(path / f"b{b}" / "k.o"), b"k", mtime=OLD)
        path = path / "d"
    write(str(path / "leaf.o"), b"k", mtime=OLD)


@pytest.mark.parametrize("budget", [2, 3, 64])
def test_deep_and_wide_trees_are_removed_with_a_bounded_number_of_descriptors(tmp_path, monkeypatch, budget):
    monkeypatch.setattr(execute_module, "FD_BUDGET", budget)
    kc = tmp_path / "kernel_cache"
    _tree(kc / "Ascend910B4", depth=40, width=3)
    write(str(tmp_path / "outside/keep.txt"), b"keep", mtime=OLD)
    opened = []
    real_open = os.open

    def counting_open(*args, **kwargs):
        fd = real_open(*args, **kwargs)
        opened.append(len(os.listdir("/proc/self/fd")))
        return fd

    roots = [CacheRoot("kernel-cache", str(kc), "t", "soc", pattern=r"Ascend\w+")]
    plan = plan_all(roots)
    monkeypatch.setattr(execute_module.os, "open", counting_open)
    with canary(tmp_path, kc / "Ascend910B4"):
        outcome = execute(plan, uid=None, recent_cutoff=NEVER)
    assert outcome.errors == [] and outcome.files == 40 * 3 + 1
    assert not (kc / "Ascend910B4").exists()
    assert max(opened) - min(opened) <= budget + 4  # the walk's own descriptors, /proc listings aside


def test_an_ancestor_moved_away_during_a_deep_delete_stops_the_walk(tmp_path, monkeypatch):
    monkeypatch.setattr(execute_module, "FD_BUDGET", 2)
    kc = tmp_path / "kernel_cache"
    _tree(kc / "Ascend910B4", depth=6, width=1)
    roots = [CacheRoot("kernel-cache", str(kc), "t", "soc")]
    plan = plan_all(roots)
    real_rmdir = os.rmdir
    moved = []

    def rmdir_then_move(name, *, dir_fd=None):
        if not moved:  # the deepest directory: move its grand-parent's parent elsewhere
            moved.append(1)
            os.rename(kc / "Ascend910B4/d/d", tmp_path / "elsewhere")
        return real_rmdir(name, dir_fd=dir_fd)

    monkeypatch.setattr(execute_module.os, "rmdir", rmdir_then_move)
    outcome = execute(plan, uid=None, recent_cutoff=NEVER)
    assert any("moved while cleaning, stopped" in e for e in outcome.errors)
    assert (kc / "Ascend910B4/d/b0/k.o").exists() or (kc / "Ascend910B4").exists()


def test_an_entry_replaced_after_the_scan_is_left_alone(tmp_path):
    home, precious, roots = world(tmp_path)
    plan = plan_all(roots)
    soc = home / "atc_data/kernel_cache/Ascend910B4"
    os.rename(soc, tmp_path / "scanned")
    os.makedirs(soc)
    write(str(soc / "new.o"), b"written after the plan was shown", mtime=OLD)
    outcome = execute(plan, uid=None, recent_cutoff=NEVER)
    assert outcome.files == 0 and "replaced since" in outcome.errors[0]
    assert (soc / "new.o").exists()


def test_mount_ids_tell_a_bind_mount_from_its_parent():
    from ascenv.cache.dirfd import mount_id, mount_points

    fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert isinstance(mount_id(fd), int)
    finally:
        os.close(fd)
    assert "/" in mount_points() and "/proc" in mount_points()


def test_open_dir_path_follows_no_symlink_in_any_component(tmp_path):
    import errno

    from ascenv.cache.dirfd import open_dir_path

    (tmp_path / "real/a/b").mkdir(parents=True)
    os.symlink(tmp_path / "real", tmp_path / "link")
    fd = open_dir_path(str(tmp_path / "real/a/b"))
    try:
        assert os.path.samestat(os.fstat(fd), os.stat(tmp_path / "real/a/b"))
    finally:
        os.close(fd)
    for path in (tmp_path / "link/a/b", tmp_path / "link"):
        with pytest.raises(OSError) as caught:
            open_dir_path(str(path))
        assert caught.value.errno in (errno.ELOOP, errno.ENOTDIR)
