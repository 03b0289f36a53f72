"""ascenv.store: source hashing, the manifest round trip, atomic commits, verification, gc."""

from __future__ import annotations

import hashlib
import os
import threading
import time
from pathlib import Path
from typing import Optional

import pytest

from ascenv import store, store_listing
from ascenv.bench.fingerprint import Fingerprint
from ascenv.bench.records import Record, Run
from ascenv.bench.store import BenchStore, new_run
from ascenv.errors import InputError, UsageError
from ascenv.store import Manifest, Store

ABC_SHA256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"  # FIPS 180-2 example "abc"


def manifest_for(
    op: str, key: str, target: str, finished: str, outputs: dict[str, bytes], source_digest: str = "0" * 64
) -> Manifest:
    return Manifest(
        schema=1,
        op=op,
        op_type="AddCustom",
        target=target,
        key=key,
        build_type=store.BUILD_TYPE,
        ascenv_version="0.1.0",
        source_date_epoch=1700000000,
        source_date_epoch_from="recipe",
        source_digest=source_digest,
        recipe_digest="1" * 64,
        command=("make",),
        env={"TZ": "UTC"},
        toolchain=store.Toolchain(
            "builder-bookworm", "sha256:" + "a" * 64, "sha256:" + "a" * 64, {"g++": "g++ 12.2.0"}
        ),
        host={"arch": "x86_64"},
        timings=store.Timings(finished, finished, 0.1, 2.0, 2.1),
        inputs=(store.InputFile("cpu/main.cpp", "100644", 3, ABC_SHA256),),
        outputs=tuple(store.OutputFile(p, len(d), hashlib.sha256(d).hexdigest()) for p, d in sorted(outputs.items())),
    )


def add_entry(
    st: Store,
    op: str,
    key: str,
    *,
    target: str = "cpu",
    finished: str = "2026-01-01T00:00:00Z",
    outputs: Optional[dict[str, bytes]] = None,
    source_digest: str = "0" * 64,
) -> store.Entry:
    outputs = outputs if outputs is not None else {"add_custom_cpu": b"binary-" + key.encode()}
    with st.staging("test") as stage:
        entry = stage / "entry"
        for path, data in outputs.items():
            (entry / "outputs" / path).parent.mkdir(parents=True, exist_ok=True)
            (entry / "outputs" / path).write_bytes(data)
        manifest = manifest_for(op, key, target, finished, outputs, source_digest)
        (entry / store.MANIFEST).write_text(store.dumps_manifest(manifest))
        committed, ours = st.commit(op, key, entry)
    assert ours
    return committed


# hashing ---------------------------------------------------------------------------------------


def test_sha256_file_matches_the_fips_example(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"abc")
    assert store.sha256_file(tmp_path / "f") == (3, ABC_SHA256)
    big = os.urandom(3 * (1 << 20) + 17)  # crosses the 1 MiB read blocks
    (tmp_path / "big").write_bytes(big)
    assert store.sha256_file(tmp_path / "big") == (len(big), hashlib.sha256(big).hexdigest())


def make_tree(root: Path) -> Path:
    (root / "op_kernel").mkdir(parents=True)
    (root / "op_kernel" / "add_custom.cpp").write_bytes(b"abc")
    (root / "build.sh").write_text("#!/bin/sh\n")
    (root / "build.sh").chmod(0o755)
    (root / "link").symlink_to("op_kernel/add_custom.cpp")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return root


def test_hash_tree_records_paths_modes_contents_not_git(tmp_path: Path) -> None:
    files = store.hash_tree(make_tree(tmp_path / "p"))
    assert [(f.path, f.mode, f.size) for f in files] == [
        ("build.sh", "100755", 10),
        ("link", "120000", 24),
        ("op_kernel/add_custom.cpp", "100644", 3),
    ]
    assert files[2].sha256 == ABC_SHA256
    assert files[1].sha256 == hashlib.sha256(b"op_kernel/add_custom.cpp").hexdigest()


def test_tree_digest_ignores_mtimes_but_not_bytes_modes_or_names(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "p")
    base = store.tree_digest(store.hash_tree(root))
    os.utime(root / "build.sh", (1, 1))
    assert store.tree_digest(store.hash_tree(root)) == base
    (root / "op_kernel" / "add_custom.cpp").write_bytes(b"abd")  # one changed byte
    assert store.tree_digest(store.hash_tree(root)) != base
    (root / "op_kernel" / "add_custom.cpp").write_bytes(b"abc")
    assert store.tree_digest(store.hash_tree(root)) == base
    (root / "build.sh").chmod(0o644)
    assert store.tree_digest(store.hash_tree(root)) != base
    (root / "build.sh").chmod(0o755)
    (root / "op_kernel" / "add_custom.cpp").rename(root / "op_kernel" / "add_custom2.cpp")
    assert store.tree_digest(store.hash_tree(root)) != base


# manifest ----------------------------------------------------------------------------------------


def test_manifest_round_trips_through_toml() -> None:
    m = manifest_for("add_custom", "k" * 64, "cpu", "2026-01-01T00:00:00Z", {"a": b"abc"})
    text = store.dumps_manifest(m)
    assert 'op-type = "AddCustom"' in text and "[toolchain.versions]" in text
    assert store.loads_manifest(text, "m.toml") == m


def test_a_bad_manifest_names_the_key_path() -> None:
    text = store.dumps_manifest(manifest_for("add_custom", "k" * 64, "cpu", "x", {"a": b"abc"}))
    with pytest.raises(InputError, match=r"^m.toml: inputs\[0\].size: expected integer, found string"):
        store.loads_manifest(text.replace("size = 3\n", 'size = "3"\n'), "m.toml")
    with pytest.raises(InputError, match="m.toml: schema: this ascenv reads schema 1, found 2"):
        store.loads_manifest(text.replace("schema = 1", "schema = 2"), "m.toml")


# commit, verify --------------------------------------------------------------------------------


def test_commit_moves_a_whole_entry_in_and_staging_never_leaks(tmp_path: Path) -> None:
    st = Store(tmp_path / "store")
    entry = add_entry(st, "add_custom", "a1" * 32)
    assert entry.path == tmp_path / "store" / "add_custom" / ("a1" * 32)
    assert st.verify(entry) == []
    assert list((tmp_path / "store" / store.TMP).iterdir()) == []
    assert (tmp_path / "store" / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    with pytest.raises(KeyboardInterrupt):
        with st.staging("build-add_custom") as stage:
            (stage / "half").write_text("x")
            raise KeyboardInterrupt
    assert list((tmp_path / "store" / store.TMP).iterdir()) == []
    assert [e.key for e in st.entries()] == ["a1" * 32]


def test_a_second_commit_of_a_good_entry_keeps_the_first(tmp_path: Path) -> None:
    st = Store(tmp_path / "store")
    first = add_entry(st, "add_custom", "a1" * 32)
    with st.staging("test") as stage:
        (stage / "entry" / "outputs").mkdir(parents=True)
        committed, ours = st.commit("add_custom", "a1" * 32, stage / "entry")
    assert not ours and committed.path == first.path and st.verify(committed) == []


def test_verify_names_changed_missing_and_extra_outputs(tmp_path: Path) -> None:
    st = Store(tmp_path / "store")
    entry = add_entry(st, "add_custom", "a1" * 32, outputs={"a": b"abc", "b": b"def"})
    (entry.outputs / "a").write_bytes(b"abd")
    (entry.outputs / "b").unlink()
    (entry.outputs / "c").write_bytes(b"new")
    problems = st.verify(entry)
    assert problems[0].startswith("outputs/a: sha256 ") and problems[0].endswith(
        f"the manifest says {ABC_SHA256[:16]}..."
    )
    assert problems[1:] == ["outputs/b: missing", "outputs/c: not in the manifest"]


def test_a_damaged_entry_is_replaced_on_commit(tmp_path: Path) -> None:
    st = Store(tmp_path / "store")
    entry = add_entry(st, "add_custom", "a1" * 32, outputs={"a": b"abc"})
    (entry.outputs / "a").write_bytes(b"abd")
    again = add_entry(st, "add_custom", "a1" * 32, outputs={"a": b"abc"})
    assert st.verify(again) == [] and (again.outputs / "a").read_bytes() == b"abc"


def test_the_store_lock_serialises_commits(tmp_path: Path) -> None:
    st = Store(tmp_path / "store")
    order = []

    def holder() -> None:
        with st.lock("x"):
            order.append("first in")
            threading.Event().wait(0.3)
            order.append("first out")

    thread = threading.Thread(target=holder)
    thread.start()
    threading.Event().wait(0.1)
    with st.lock("x"):
        order.append("second in")
    thread.join()
    assert order == ["first in", "first out", "second in"]


def test_a_wait_for_the_lock_is_told_once_and_an_uncontended_one_not_at_all(tmp_path: Path) -> None:
    st = Store(tmp_path / "store")
    told: list[str] = []
    with st.lock("x", on_wait=lambda: told.append("free")):
        pass
    assert told == []
    held, release = threading.Event(), threading.Event()

    def holder() -> None:
        with st.lock("x"):
            held.set()
            release.wait(10)

    thread = threading.Thread(target=holder)
    thread.start()
    held.wait(10)
    threading.Timer(0.3, release.set).start()
    with st.lock("x", on_wait=lambda: told.append("waiting")):
        assert release.is_set()  # it did wait for the holder
    thread.join()
    assert told == ["waiting"]


def test_find_by_prefix(tmp_path: Path) -> None:
    st = Store(tmp_path / "store")
    add_entry(st, "add_custom", "abcdef01" + "0" * 56)
    add_entry(st, "add_custom", "abcdef02" + "0" * 56)
    assert st.find("abcdef01").key.startswith("abcdef01")
    with pytest.raises(UsageError, match="2 builds have keys starting with 'abcdef'"):
        st.find("abcdef")
    with pytest.raises(UsageError, match="at least 6 characters"):
        st.find("abc")
    with pytest.raises(UsageError, match="no build in .* has a key starting with 'ffffff'"):
        st.find("ffffff")


# gc ----------------------------------------------------------------------------------------------


def test_gc_keeps_the_newest_per_op_and_target_and_what_a_lock_references(tmp_path: Path) -> None:
    st = Store(tmp_path / "store")
    for day in (1, 2, 3):
        add_entry(st, "add_custom", f"c0c{day}".ljust(64, "0"), finished=f"2026-01-0{day}T00:00:00Z")
    npu_old = add_entry(st, "add_custom", "d0d1".ljust(64, "0"), target="npu", finished="2026-01-01T00:00:00Z")
    add_entry(st, "add_custom", "d0d2".ljust(64, "0"), target="npu", finished="2026-01-02T00:00:00Z")
    referenced = add_entry(st, "other", "e0e1".ljust(64, "0"), finished="2026-01-01T00:00:00Z")
    add_entry(st, "other", "e0e2".ljust(64, "0"), finished="2026-01-02T00:00:00Z")
    result = st.gc(1, referenced={referenced.manifest_sha256})
    assert sorted(e.key[:4] for e in result.removed) == ["c0c1", "c0c2", "d0d1"]
    assert [e.key[:4] for e in result.kept_referenced] == ["e0e1"]
    assert sorted(e.key[:4] for e in st.entries()) == ["c0c3", "d0d2", "e0e1", "e0e2"]
    assert not npu_old.path.exists() and result.freed > 0
    assert list((tmp_path / "store" / store.TMP).iterdir()) == []


def test_gc_sweeps_staging_of_dead_processes_of_this_host_only(tmp_path: Path) -> None:
    """S3: a store shared by two hosts; the other host's pid says nothing here."""
    st = Store(tmp_path / "store")
    st.ensure()
    tmp = tmp_path / "store" / store.TMP
    here = store.this_host()
    other = "h" + "0" * 12 if here != "h" + "0" * 12 else "h" + "1" * 12
    dead = tmp / f"build-add_custom.{here}.pid999999.abc"
    alive = tmp / f"build-add_custom.{here}.pid{os.getpid()}.def"
    remote = tmp / f"build-add_custom.{other}.pid4000000.ghi"  # pid 4000000 is dead here, alive there
    legacy = tmp / "build-add_custom.pid999999.jkl"  # ascenv 0.1.0 recorded no host
    stale_remote = tmp / f"verify-add_custom.{other}.pid12.mno"
    foreign = tmp / "users-notes"
    for path in (dead, alive, remote, legacy, stale_remote, foreign):
        (path / "out").mkdir(parents=True)
    week = time.time() - store.STAGING_AGE - 3600
    os.utime(stale_remote, (week, week))
    from tests.cache.helpers import canary

    with canary(tmp_path, dead, stale_remote, tmp_path / "store" / store.LOCKS):  # the lock file gc takes
        result = st.gc(5, alive=lambda pid: pid == os.getpid())
    assert result.swept_tmp == (dead.name, stale_remote.name)
    assert alive.exists() and remote.exists() and legacy.exists() and foreign.exists()
    assert not dead.exists() and not stale_remote.exists()
    why = {s.path: s.why for s in result.left_alone}
    assert "another host's" in why[f".tmp/{remote.name}"] and "older ascenv" in why[f".tmp/{legacy.name}"]
    assert "not a staging directory" in why[".tmp/users-notes"] and f".tmp/{alive.name}" not in why


def test_staging_names_record_this_host(tmp_path: Path) -> None:
    st = Store(tmp_path / "store")
    with st.staging("build-add_custom") as stage:
        assert stage.name.startswith(f"build-add_custom.{store.this_host()}.pid{os.getpid()}.")
        assert store._staging_verdict(stage, store._pid_alive, time.time()) is False  # ours, running


def test_removing_a_read_only_entry_never_chmods_through_a_symlink(tmp_path: Path) -> None:
    # As root no unlink fails with EACCES, so call the retry handler rmtree uses on that error
    # directly: the link in a read-only directory goes, the file it names keeps its mode.
    outside = tmp_path / "id_rsa"
    outside.write_text("secret")
    outside.chmod(0o600)
    locked = tmp_path / "store" / "outputs"
    locked.mkdir(parents=True)
    (locked / "link").symlink_to(outside)
    locked.chmod(0o555)
    store._unlock_and_retry(os.unlink, str(locked / "link"), PermissionError())
    assert not (locked / "link").is_symlink()
    assert oct(outside.stat().st_mode & 0o777) == oct(0o600) and outside.read_text() == "secret"
    assert oct(locked.stat().st_mode & 0o777) == oct(0o755)


# bench runs beside the builds ------------------------------------------------------------------


def bench_run(st: Store, build_key: Optional[str], created: str, op: str = "add_custom") -> Run:
    """A run of ``op`` stored as `ascenv bench import` stores one (beside its build, or loose)."""
    record = Record(op, "n=1024", None, None, "AI_VECTOR_CORE", 3, (9.0, 10.0, 11.0), 10.0, 9.0, 11.0)
    run = new_run(
        op=op, target="npu", tool="msprof op", created=created, source="x", files=(), skipped_rows=0,
        fingerprint=Fingerprint(build_key=build_key, soc="910B4"), records=(record, record),
    )  # fmt: skip
    BenchStore(st).write(run)
    return run


def test_a_build_lists_its_bench_runs_read_at_show_time_and_names_a_damaged_one(tmp_path: Path) -> None:
    st = Store(tmp_path / "store")
    entry = add_entry(st, "add_custom", "abcdef".ljust(64, "0"))
    digest = entry.manifest_sha256
    old = bench_run(st, entry.key, "2026-12-01T09:00:00.000000Z")
    new = bench_run(st, entry.key, "2026-12-01T10:00:00.000000Z")
    bench_run(st, None, "2026-12-01T11:00:00.000000Z")  # loose: no build's run
    BenchStore(st).set_baseline(BenchStore(st).resolve(old.id, "add_custom"))
    (entry.path / "bench" / "broken.json").write_text('{"schema": 1, "run": {"id": 3}}')
    runs = store_listing.show_build(st, "abcdef").build.bench_runs
    assert [(r.id, r.records, r.baseline, r.damaged) for r in runs[:2]] == [
        (new.id, 2, False, None),
        (old.id, 2, True, None),
    ]
    assert runs[0].tool == "msprof op" and runs[0].target == "npu" and runs[0].created == new.created
    assert runs[2].name == "broken.json" and runs[2].id is None and "broken.json" in (runs[2].damaged or "")
    assert [b.bench_runs for b in store_listing.list_builds(st).builds] == [runs]
    assert entry.manifest_sha256 == digest  # the manifest locks pin is never rewritten
    assert store_listing.show_build(st, "abcdef").build.problems == ()  # runs are not outputs


def test_gc_keeps_runs_of_kept_builds_the_baselines_build_and_the_loose_runs(tmp_path: Path) -> None:
    st = Store(tmp_path / "store")
    old, middle, new = (
        add_entry(st, "add_custom", f"b{day}".ljust(64, "0"), target="npu", finished=f"2026-01-0{day}T00:00:00Z")
        for day in (1, 2, 3)
    )
    for entry in (old, middle, new):
        bench_run(st, entry.key, "2026-12-01T09:00:00.000000Z")
    baseline = bench_run(st, middle.key, "2026-12-01T10:00:00.000000Z")
    bench_run(st, None, "2026-12-01T11:00:00.000000Z")
    BenchStore(st).set_baseline(BenchStore(st).resolve(baseline.id, "add_custom"))
    loose = tmp_path / "store" / "add_custom" / ".bench"

    def files(root: Path) -> dict[str, bytes]:
        return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}

    before_new, before_middle, before_loose = files(new.path), files(middle.path), files(loose)
    plan = st.gc_plan(1)
    assert [e.key[:2] for e in plan.remove] == ["b1"]
    assert [(e.key[:2], t) for e, t in plan.kept_baseline] == [("b2", ("npu",))]
    assert st.discard(middle.path) == "it holds the bench baseline of npu"
    assert st.discard(loose) == "not a build in the store, left alone"
    result = st.gc(1)
    assert [e.key[:2] for e in result.removed] == ["b1"] and not old.path.exists()
    assert [(e.key[:2], t) for e, t in result.kept_baseline] == [("b2", ("npu",))]
    assert files(new.path) == before_new and files(middle.path) == before_middle and files(loose) == before_loose
    assert len(BenchStore(st).runs("add_custom")) == 4  # the removed build's run went with it
    assert [e.key[:2] for e in st.gc(0).removed] == ["b3"]  # --keep 0: the baseline's build and .bench stay
    assert [e.key[:2] for e in st.entries()] == ["b2"] and files(loose) == before_loose


def test_gc_refuses_to_guess_with_an_unreadable_baselines_file(tmp_path: Path) -> None:
    st = Store(tmp_path / "store")
    add_entry(st, "add_custom", "b1".ljust(64, "0"), finished="2026-01-01T00:00:00Z")
    add_entry(st, "add_custom", "b2".ljust(64, "0"), finished="2026-01-02T00:00:00Z")
    (tmp_path / "store" / "add_custom" / ".bench").mkdir()
    (tmp_path / "store" / "add_custom" / ".bench" / "baselines.json").write_text("{")
    with pytest.raises(InputError, match="baselines.json: not valid JSON"):
        st.gc(1)
    assert len(st.entries()) == 2


def test_sha256_file_refuses_a_fifo_and_a_link_without_blocking(tmp_path: Path) -> None:
    import signal

    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "link").symlink_to(tmp_path / "fifo")
    signal.alarm(20)  # a blocking open would hang here: fail instead
    try:
        with pytest.raises(OSError, match="FIFO"):
            store.sha256_file(tmp_path / "fifo")
        with pytest.raises(OSError):
            store.sha256_file(tmp_path / "link")
    finally:
        signal.alarm(0)


def test_hash_tree_skips_a_file_swapped_for_a_fifo_after_its_lstat(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    root = make_tree(tmp_path / "p")
    real = store.sha256_file

    def swap_then_hash(path: Path, buffer=None):  # type: ignore[no-untyped-def]
        if path.name == "add_custom.cpp":
            path.unlink()
            os.mkfifo(path)
        return real(path, buffer)

    monkeypatch.setattr(store, "sha256_file", swap_then_hash)
    assert [f.path for f in store.hash_tree(root)] == ["build.sh", "link"]


def test_a_new_store_whose_tag_another_ascenv_is_writing_is_not_refused(tmp_path: Path) -> None:
    """Two first builds into one new store: the second saw the first's temporary tag file
    (``.ascenv-CACHEDIR.TAG.<random>.tmp``) and called the store foreign (a CI run, exit 2)."""
    root = tmp_path / "store"
    root.mkdir()
    (root / ".ascenv-CACHEDIR.TAG.k2x9.tmp").write_text("Signature: 8a477f597d28d172789f06886806bc55\n")
    Store(root).ensure()
    assert (root / "CACHEDIR.TAG").is_file()
    other = tmp_path / "foreign"
    other.mkdir()
    (other / ".something-else").write_text("")
    with pytest.raises(UsageError):
        Store(other).ensure()
