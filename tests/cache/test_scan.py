import json
import os
import shutil

import pytest

from ascenv import proc
from ascenv.cache import scan as scan_module
from ascenv.cache.entry import CacheRoot
from ascenv.cache.scan import CHUNK, find_named_dirs, scan, tree_stats
from tests.cache.helpers import as_user, shared_tmp, write

NOBODY = 65534


def du_bytes(path) -> int:
    done = proc.run(["du", "-s", "-B1", str(path)], timeout=60)
    assert done.ok, done.describe()
    return int(done.stdout.split()[0])


def test_sizes_match_du_and_hard_links_count_once(tmp_path):
    write(str(tmp_path / "c/a/one.o"), b"x" * 10000)
    write(str(tmp_path / "c/a/b/two.json"), b"y" * 5000)
    os.link(tmp_path / "c/a/one.o", tmp_path / "c/a/b/hard.o")
    os.symlink("one.o", tmp_path / "c/a/link")
    (st,) = tree_stats([str(tmp_path / "c")])
    assert st.allocated == du_bytes(tmp_path / "c")
    assert st.apparent == 10000 + 5000 + len("one.o") + 3 * os.lstat(tmp_path / "c").st_size
    assert (st.files, st.dirs) == (4, 3)  # one.o, hard.o, two.json, link; c, a, b


def test_symlink_loops_and_escapes_are_not_followed(tmp_path):
    outside = tmp_path / "outside"
    write(str(outside / "big.bin"), b"z" * 100_000)
    cache = tmp_path / "cache"
    write(str(cache / "k.o"), b"k")
    os.symlink(cache, cache / "loop")  # points at its own directory
    os.symlink("b", cache / "a")
    os.symlink("a", cache / "b")  # a <-> b
    os.symlink(outside, cache / "escape")
    (st,) = tree_stats([str(cache)])
    assert st.files == 5 and st.dirs == 1
    assert st.apparent < 100_000  # big.bin is not counted
    assert st.allocated == du_bytes(cache)


def test_files_vanishing_between_listing_and_stat_are_skipped(tmp_path, monkeypatch):
    for i in range(5):
        write(str(tmp_path / "c" / f"f{i}"), b"x")
    real_listdir = os.listdir

    def listdir_then_delete(fd):
        names = real_listdir(fd)
        os.unlink("f3", dir_fd=fd)  # gone before the scanner stats it
        return names

    monkeypatch.setattr(scan_module.os, "listdir", listdir_then_delete)
    (st,) = tree_stats([str(tmp_path / "c")])
    assert st.files == 4 and st.errors == ()


def test_a_vanished_tree_is_none(tmp_path):
    assert tree_stats([str(tmp_path / "absent")]) == [None]


def test_non_utf8_names(tmp_path):
    top = os.fsencode(tmp_path / "c")
    write(top + b"/\xff\xfe-kernel.o", b"abc")
    write(top + b"/sub\xe9/x.o", b"d")
    (st,) = tree_stats([str(tmp_path / "c")])
    assert (st.files, st.apparent - 2 * os.lstat(top).st_size) == (2, 4)
    report = scan([CacheRoot("log", str(tmp_path / "c"), "test", "children")], uid=None, recent_cutoff=float("inf"))
    paths = sorted(e.path for e in report.entries)
    assert [os.fsencode(p) for p in paths] == [top + b"/sub\xe9", top + b"/\xff\xfe-kernel.o"]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to setuid to nobody")
def test_unreadable_directory_is_reported_not_fatal():
    with shared_tmp() as tmp:
        cache = tmp / "c"
        write(str(cache / "open/a.o"), b"a")
        write(str(cache / "closed/b.o"), b"b")
        os.chmod(cache / "closed", 0o700)  # root's, so nobody may not list it
        result = as_user(NOBODY, lambda: tree_stats([str(cache)])[0].__dict__)
    assert result["files"] == 1
    assert any("closed: Permission denied" in e for e in result["errors"])


def test_worker_pool_gives_the_same_totals_as_serial(tmp_path, monkeypatch):
    for d in range(30):
        for f in range(40):
            write(str(tmp_path / "c" / f"d{d}" / f"f{f}"), b"x" * f)
    serial = tree_stats([str(tmp_path / "c")], workers=1)
    monkeypatch.setattr(scan_module, "SERIAL_BUDGET", 10)
    monkeypatch.setattr(scan_module, "CHUNK", 7)
    assert tree_stats([str(tmp_path / "c")], workers=2) == serial  # one worker and this process
    assert tree_stats([str(tmp_path / "c")], workers=3) == serial
    assert serial[0].files == 1200 and serial[0].allocated == du_bytes(tmp_path / "c")


def test_many_small_directories_go_to_workers_in_batches_with_the_same_totals(tmp_path, monkeypatch):
    """Issue 25's worst shape (directories of 5 files): one job, pipe write and poll per
    directory cost the caller a third of its time; a job now carries up to BATCH of them, and a
    chunk of a big directory beside them stays a job of its own."""
    for d in range(400):
        for f in range(3):
            write(str(tmp_path / "c" / f"g{d // 100}" / f"d{d}" / f"f{f}"), b"x" * (f + d))
    for f in range(40):
        write(str(tmp_path / "c" / "big" / f"f{f}"), b"y")
    serial = tree_stats([str(tmp_path / "c")], workers=1)
    submitted: list[int] = []
    real_submit = scan_module.Workers.submit

    def counted(self, job, arguments):
        accepted = real_submit(self, job, arguments)
        if accepted:
            submitted.append(len(job))
            assert all(names is None or len(names) <= 7 for _, _, names, _ in arguments[0])
        return accepted

    monkeypatch.setattr(scan_module.Workers, "submit", counted)
    monkeypatch.setattr(scan_module, "SERIAL_BUDGET", 10)
    monkeypatch.setattr(scan_module, "CHUNK", 7)
    monkeypatch.setattr(scan_module, "WORKER_BUDGET", 0)  # each job its batch only: the queue stays long
    assert tree_stats([str(tmp_path / "c")], workers=2) == serial
    assert serial[0].files == 1240 and serial[0].allocated == du_bytes(tmp_path / "c")
    assert submitted and max(submitted) > 1  # batches of directories, however the two processes ran


def test_a_batch_is_full_while_the_queue_is_long_and_a_chunk_is_a_batch_alone():
    """How many directories a job carries is decided here, not by timing (under load the caller
    may scan most directories itself, so counting a real pool's jobs is no test)."""
    from collections import deque

    long = deque((0, f"/c/d{i}", None, 1) for i in range(400))
    assert len(scan_module._take(long, 2)) == scan_module.BATCH and len(long) == 400 - scan_module.BATCH
    short = deque((0, f"/c/d{i}", None, 1) for i in range(5))
    assert len(scan_module._take(short, 2)) == 1  # each worker gets work before one takes many
    others = ((0, f"/c/d{i}", None, 1) for i in range(200))
    mixed = deque([(0, "/c/a", None, 1), (0, "/c/big", ["f1", "f2"], 1), *others])
    assert [job[1] for job in scan_module._take(mixed, 2)] == ["/c/a", "/c/big"]


def test_a_worker_dying_mid_scan_changes_no_total(tmp_path, monkeypatch):
    for d in range(30):
        for f in range(40):
            write(str(tmp_path / "c" / f"d{d}" / f"f{f}"), b"x" * f)
    serial = tree_stats([str(tmp_path / "c")], workers=1)
    caller, real = os.getpid(), scan_module._scan_dir

    def dies_on_d17(path, *rest):
        if os.getpid() != caller and path.endswith("/d17"):
            os._exit(9)  # killed, as by the OOM killer: its jobs are scanned here
        return real(path, *rest)

    monkeypatch.setattr(scan_module, "_scan_dir", dies_on_d17)
    monkeypatch.setattr(scan_module, "SERIAL_BUDGET", 10)
    monkeypatch.setattr(scan_module, "CHUNK", 7)
    assert tree_stats([str(tmp_path / "c")], workers=3) == serial


@pytest.mark.parametrize("budget", [0, 5, 100_000])
def test_a_worker_goes_on_into_what_its_directories_hold_with_the_same_totals(tmp_path, monkeypatch, budget):
    """A worker stats on into the sub-directories its batch holds, up to WORKER_BUDGET names,
    and hands the rest back (the caller queueing every directory kept the worker waiting): the
    totals, kept files and the directories that stay are those of a serial scan, whatever the
    budget; with room for the whole tree, one job per top directory."""
    now = 2_000_000_000
    for d in range(60):
        for f in range(4):
            write(str(tmp_path / "c" / f"g{d // 20}" / f"d{d}" / f"e{d % 3}" / f"f{f}"), b"x" * (f + d))
    os.utime(tmp_path / "c" / "g1" / "d25" / "e1" / "f2", (now, now))  # the one recent file
    write(str(tmp_path / "c" / "g2" / "d41" / "op_cache.ini"), b"[settings]")
    serial = tree_stats([str(tmp_path / "c")], workers=1, recent_cutoff=now)
    jobs: list[int] = []
    real_submit = scan_module.Workers.submit

    def counted(self, job, arguments):
        accepted = real_submit(self, job, arguments)
        if accepted:
            jobs.append(len(job))
        return accepted

    monkeypatch.setattr(scan_module.Workers, "submit", counted)
    monkeypatch.setattr(scan_module, "SERIAL_BUDGET", 1)
    monkeypatch.setattr(scan_module, "WORKER_BUDGET", budget)
    (split,) = tree_stats([str(tmp_path / "c")], workers=2, recent_cutoff=now)
    assert split == serial[0]
    assert (split.files, split.kept_files) == (241, 2) and split.allocated == du_bytes(tmp_path / "c")
    assert [k.example.split("/c/", 1)[1] for k in split.kept] == ["g2/d41/op_cache.ini", "g1/d25/e1/f2"]
    assert jobs  # the worker had its share


def test_a_batch_goes_on_breadth_first_until_its_budget_and_says_what_is_left(tmp_path, monkeypatch):
    for d in range(6):
        for f in range(3):
            write(str(tmp_path / "c" / f"d{d}" / f"e{d}" / f"f{f}"), b"x")
    top = str(tmp_path / "c")
    dev = os.lstat(top).st_dev
    monkeypatch.setattr(scan_module, "_MOUNTS", frozenset())

    def batch(budget):
        ((index, sums),) = scan_module._scan_batch([(0, top, None, dev)], None, float("inf"), True, budget)
        found = [p.split("/c/", 1)[1] for p, _ in sums[scan_module.SUBDIRS]]
        return index, sums[scan_module.FILES], found, found[sums[scan_module.UNSCANNED] :]

    tops = {f"d{d}" for d in range(6)}
    index, files, found, left = batch(0)  # its jobs only
    assert (index, files, set(found), set(left)) == (0, 0, tops, tops)
    index, files, found, left = batch(8)  # the top's 6 names, then two of its directories (one name each)
    went_into = tops - set(left)
    assert files == 0 and len(went_into) == 2 and len(left) == 6
    assert set(left) == (tops - went_into) | {f"{d}/e{d[1:]}" for d in went_into}
    index, files, found, left = batch(float("inf"))
    assert (files, left, len(found)) == (18, [], 12)  # alone: the whole tree in one call


@pytest.mark.slow
def test_a_directory_of_100k_files(tmp_path):
    big = tmp_path / "kernel_cache" / "Ascend910B4"
    big.mkdir(parents=True)
    fd = os.open(big, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for i in range(100_000):
            os.close(os.open(f"te_op_{i}.o", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
    finally:
        os.close(fd)
    (st,) = tree_stats([str(big)])
    assert st.files == 100_000
    assert st.allocated == du_bytes(big)
    shutil.rmtree(big)


def test_recent_and_foreign_files_are_counted_as_kept(tmp_path):
    write(str(tmp_path / "c/old.o"), b"x" * 5000, mtime=1_000_000)
    write(str(tmp_path / "c/new.o"), b"y" * 5000)
    cutoff = os.lstat(tmp_path / "c/new.o").st_mtime  # new.o modified at the cutoff: kept
    (st,) = tree_stats([str(tmp_path / "c")], uid=os.getuid(), recent_cutoff=cutoff)
    assert (st.files, st.kept_files) == (2, 1)
    # new.o, and c itself: the delete cannot remove the directory that holds it
    assert st.kept_bytes == (os.lstat(tmp_path / "c/new.o").st_blocks + os.lstat(tmp_path / "c").st_blocks) * 512
    if os.geteuid() == 0:
        os.chown(tmp_path / "c/old.o", NOBODY, NOBODY)
        (st,) = tree_stats([str(tmp_path / "c")], uid=0, recent_cutoff=cutoff)
        assert st.kept_files == 2


def test_scan_layouts_soc_keeps_op_cache_ini_and_needs_tag_for_store(tmp_path):
    kc = tmp_path / "atc_data/kernel_cache"
    write(str(kc / "op_cache.ini"), b"[op_compiler_cache]\n")
    write(str(kc / "Ascend910B4/te_add_1.o"))
    store = tmp_path / "store"
    write(str(store / "build-1/x"))
    roots = [
        CacheRoot("kernel-cache", str(kc), "t", "soc"),
        CacheRoot("ascenv-store", str(store), "t", "children", require_tag=True),
    ]
    report = scan(roots, uid=None, recent_cutoff=float("inf"))
    assert [(e.kind, e.soc, os.path.basename(e.path)) for e in report.entries] == [
        ("kernel-cache", "Ascend910B4", "Ascend910B4")
    ]
    write(str(store / "CACHEDIR.TAG"), b"Signature: 8a477f597d28d172789f06886806bc55")
    report = scan(roots, uid=None, recent_cutoff=float("inf"))
    assert sorted(os.path.basename(e.path) for e in report.entries) == ["Ascend910B4", "build-1"]


def test_refused_roots_that_exist_are_warned_about(tmp_path):
    (tmp_path / "home").mkdir()
    report = scan(
        [CacheRoot("log", str(tmp_path / "home"), "ASCEND_PROCESS_LOG_PATH", "children", refused="it is home")],
        uid=None,
        recent_cutoff=float("inf"),
    )
    assert report.entries == () and "it is home" in report.warnings[0]


def test_find_named_dirs_stops_at_finds_and_skips_symlinks(tmp_path):
    write(str(tmp_path / "p/a/kernel_meta/x.o"))
    write(str(tmp_path / "p/a/kernel_meta/kernel_meta/y.o"))  # inside a find: not listed again
    write(str(tmp_path / "p/rank_0/kernel_meta/z.o"))
    write(str(tmp_path / "p/.hidden/kernel_meta/h.o"))
    write(str(tmp_path / "elsewhere/kernel_meta/e.o"))
    os.symlink(tmp_path / "elsewhere", tmp_path / "p/link")
    found = find_named_dirs([str(tmp_path / "p")], {"kernel_meta": "kernel-meta"})
    assert found == [
        ("kernel-meta", str(tmp_path / "p/a/kernel_meta")),
        ("kernel-meta", str(tmp_path / "p/rank_0/kernel_meta")),
    ]


def test_stats_survive_json(tmp_path):
    write(str(tmp_path / "c/a"))
    assert json.dumps(tree_stats([str(tmp_path / "c")])[0].__dict__)


@pytest.mark.parametrize(
    "tag, listed",
    [
        (b"Signature: 8a477f597d28d172789f06886806bc55\n# This directory is ascenv's build store.\n", False),
        (b"Signature: 8a477f597d28d172789f06886806bc55\n# a cache of some tool\n", True),
        (b"# no signature\n", False),
        ("symlink", False),
        ("directory", False),
    ],
)
def test_a_tagged_cache_root_needs_a_real_tag_and_is_never_a_build_store(tmp_path, tag, listed):
    """ascenv's build store as the cache directory (ASCENV_CACHE_DIR = ASCENV_STORE): its op
    directories must not go whole, past the store's rules (locks, baselines, --keep)."""
    root = tmp_path / "cache"
    write(str(root / "add_custom" / ("a" * 64) / "manifest.toml"))
    if tag == "symlink":
        write(str(tmp_path / "real.tag"), b"Signature: 8a477f597d28d172789f06886806bc55\n")
        os.symlink(tmp_path / "real.tag", root / "CACHEDIR.TAG")
    elif tag == "directory":
        os.mkdir(root / "CACHEDIR.TAG")
    else:
        write(str(root / "CACHEDIR.TAG"), tag)
    report = scan([CacheRoot("ascenv-store", str(root), "t", "children", require_tag=True)], uid=None,
                  recent_cutoff=float("inf"))  # fmt: skip
    assert [os.path.basename(e.path) for e in report.entries] == (["add_custom"] if listed else [])


def test_a_fresh_cache_split_between_workers_is_kept_whole_and_named(tmp_path):
    """Every file recent (a cache just compiled), in chunks scanned by forked workers: all kept,
    the one named is the latest, the directory and its parent stay in the kept bytes."""
    soc = tmp_path / "kc/Ascend910B4"
    for i in range(3 * CHUNK):
        write(str(soc / f"sub/te_{i}.o"), b"k" * 100, mtime=2_000_000 + i % 7)
    write(str(soc / "op_cache.ini"), b"[op_compiler_cache]\n", mtime=1_000_000)
    (st,) = tree_stats([str(soc)], recent_cutoff=2_000_000, workers=2)
    assert (st.files, st.kept_files) == (3 * CHUNK + 1, 3 * CHUNK + 1)
    assert st.kept_bytes == st.allocated
    rules = {k.rule: (k.files, os.path.basename(k.example), k.mtime) for k in st.kept}
    latest = min(f"te_{i}.o" for i in range(3 * CHUNK) if i % 7 == 6)  # latest mtime, then first name
    assert rules == {"settings": (1, "op_cache.ini", 0.0), "recent": (3 * CHUNK, latest, 2_000_006)}
