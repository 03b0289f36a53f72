"""The build store deletes only what ascenv made (issue 28: S1, S2, S3, S4, X4 of the December
second-round report): only a directory holding ascenv's CACHEDIR.TAG is a store, only
``<op>/<64-hex key>/`` holding a regular ``manifest.toml`` is a build, nothing is followed through
a symlink, gc and listing never create a store, and store files are read with the input rules.
Every deleting command runs inside ``canary``: the tree outside what may go hashes the same."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ascenv import errors, store, store_tag
from ascenv.cache.machine import MachineFacts
from ascenv.commands import clean_cache
from ascenv.store import Store
from tests.cache.helpers import as_user, canary, shared_tmp, tree_digest
from tests.cli_helpers import run_cli
from tests.test_store import add_entry

REPO = Path(__file__).resolve().parents[1]
OTHER_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by cargo.\n"


def key(n: int) -> str:
    return hashlib.sha256(str(n).encode()).hexdigest()


def fill(directory: Path, *names: str) -> None:
    """A user's directories, each holding a precious file."""
    for name in names:
        (directory / name).mkdir(parents=True, exist_ok=True)
        (directory / name / "f").write_text("precious")


def looks_like_builds(directory: Path, op: str = "add_custom", count: int = 3) -> None:
    """Directories of a build's full shape, made by someone else (no ascenv tag above them)."""
    for n in range(count):
        (directory / op / key(n)).mkdir(parents=True)
        (directory / op / key(n) / store.MANIFEST).write_text("# not ascenv's\n")


def gc(where: Path, *argv: str, env: dict | None = None) -> tuple[int, str, str]:
    return run_cli(["store", "gc", *argv], {"PATH": "/usr/bin:/bin", **(env or {})}, cwd=where)


def three_builds(st: Store, op: str = "add_custom") -> list[store.Entry]:
    return [add_entry(st, op, key(n), finished=f"2026-01-0{n + 1}T00:00:00Z") for n in range(3)]


# S1: gc in a directory that is not a store ---------------------------------------------------------


def test_s1_gc_on_a_home_like_tree_refuses_and_plants_nothing(tmp_path: Path) -> None:
    home = tmp_path / "fh"
    fill(home, "projects/alpha", "projects/beta", "projects/gamma", "projects/delta", "Documents/taxes")
    fill(home, "Documents/photos")
    with canary(tmp_path):
        code, out, err = gc(tmp_path, "--keep", "1", "--store", str(home))
    assert code == errors.EXIT_USAGE and out == ""
    assert f"{home} is not an ascenv build store: it holds no CACHEDIR.TAG" in err and "Traceback" not in err


@pytest.mark.parametrize("how", ["ASCENV_STORE", "root-like"])
def test_s1_gc_through_the_variable_or_on_a_system_like_root_refuses(tmp_path: Path, how: str) -> None:
    root = tmp_path / "r"
    fill(root, "etc/ssh", "usr/bin", "var/lib", "home/u")
    looks_like_builds(root)  # even build-shaped content: no tag, no store
    env = {"ASCENV_STORE": str(root)}
    with canary(tmp_path):
        if how == "ASCENV_STORE":
            code, _, err = gc(tmp_path, "--keep", "0", env=env)
        else:
            code, _, err = run_cli(["store", "gc", "--keep", "0", "--store", str(root)], {}, cwd=tmp_path)
    assert code == errors.EXIT_USAGE and "not an ascenv build store" in err


@pytest.mark.parametrize(
    "tag, why",
    [
        (OTHER_TAG, "written by another program"),
        ("Signature: 8a477f597d28d172789f06886806bc55", "written by another program"),
        ("# This directory is ascenv's build store.\n", "does not start with the cache-directory signature"),
        ("", "does not start with the cache-directory signature"),
    ],
)
def test_s1_a_tag_that_is_not_ascenvs_is_not_a_store(tmp_path: Path, tag: str, why: str) -> None:
    other = tmp_path / "cargo-target"
    looks_like_builds(other)
    (other / "CACHEDIR.TAG").write_text(tag)
    with canary(tmp_path):
        code, _, err = gc(tmp_path, "--keep", "0", "--store", str(other))
    assert code == errors.EXIT_USAGE and why in err


@pytest.mark.parametrize("kind", ["symlink", "fifo", "directory", "large"])
def test_s1_a_tag_that_is_not_a_small_regular_file_is_not_a_store(tmp_path: Path, kind: str) -> None:
    st = Store(tmp_path / "store")
    three_builds(st)
    tag = st.root / "CACHEDIR.TAG"
    real = tmp_path / "elsewhere.tag"
    real.write_text(store_tag.CACHEDIR_TAG)
    tag.unlink()
    if kind == "symlink":
        tag.symlink_to(real)
    elif kind == "fifo":
        os.mkfifo(tag)
    elif kind == "directory":
        tag.mkdir()
    else:
        tag.write_text(store_tag.CACHEDIR_TAG + "#" * store_tag.TAG_LIMIT)
    with canary(tmp_path):
        code, _, err = gc(tmp_path, "--keep", "0", "--store", str(st.root))
    assert code == errors.EXIT_USAGE and "not an ascenv build store" in err


def test_s1_a_symlinked_op_dir_is_never_followed(tmp_path: Path) -> None:
    """The report's add_custom -> victim2/, with victim2 holding build-shaped directories."""
    st = Store(tmp_path / "store")
    three_builds(st, "other_op")
    victim = tmp_path / "victim2"
    looks_like_builds(victim, op="", count=3)
    fill(victim, "d", "e")
    (st.root / "add_custom").symlink_to(victim)
    with canary(tmp_path, st.root / "other_op"):
        code, out, err = gc(tmp_path, "--keep", "1", "--store", str(st.root), "--format", "json")
    assert code == 0, err
    result = json.loads(out)
    assert sorted(result["removed"]) == sorted(f"other_op/{key(n)}" for n in (0, 1))
    assert {"path": "add_custom", "why": "a symbolic link (not followed)"} in result["left_alone"]


def test_s1_symlinked_entries_and_a_symlinked_sibling_op_are_left_alone(tmp_path: Path) -> None:
    st = Store(tmp_path / "store")
    builds = three_builds(st)
    outside = tmp_path / "outside_build"
    outside.mkdir()
    (outside / store.MANIFEST).write_text(store.dumps_manifest(builds[0].manifest))  # type: ignore[arg-type]
    (st.root / "add_custom" / key(7)).symlink_to(outside)  # a link with a build key's name
    (st.root / "sibling").symlink_to(st.root / "add_custom")  # an op dir linking to another op
    with canary(tmp_path, st.root / "add_custom"):
        result = st.gc(0)
    assert sorted(e.key for e in result.removed) == sorted(key(n) for n in range(3))
    assert (st.root / "add_custom" / key(7)).is_symlink() and (outside / store.MANIFEST).is_file()
    why = {s.path: s.why for s in result.left_alone}
    assert why == {
        f"add_custom/{key(7)}": "a symbolic link (not followed)",
        "sibling": "a symbolic link (not followed)",
    }


def test_s1_only_the_full_shape_is_a_build(tmp_path: Path) -> None:
    st = Store(tmp_path / "store")
    three_builds(st)
    op = st.root / "add_custom"
    odd = {
        key(10)[:63]: "its name is not a 64-hex build key",  # 63 hex digits
        key(11).upper(): "its name is not a 64-hex build key",
        key(12) + "0": "its name is not a 64-hex build key",
        key(13): f"it holds no {store.MANIFEST}",
        "projects": "its name is not a 64-hex build key",
    }
    for name in odd:
        (op / name).mkdir()
        (op / name / "f").write_text("precious")
        if name != key(13):
            (op / name / store.MANIFEST).write_text("# a manifest where no build is\n")
    (op / key(14)).mkdir()
    (op / key(14) / store.MANIFEST).mkdir()  # a manifest that is a directory: a damaged build, left alone
    (op / key(15)).mkdir()
    (op / key(15) / store.MANIFEST).symlink_to(tmp_path / "nothing")  # a dangling link
    (st.root / "My Documents").mkdir()
    (st.root / "notes.txt").write_text("precious")
    kept = [op / name for name in (*odd, key(14), key(15))]
    with canary(tmp_path, *(e.path for e in st.entries() if e.manifest is not None)):
        result = st.gc(0)
    assert all(p.exists() for p in kept) and len(result.removed) == 3
    why = {s.path: s.why for s in result.left_alone}
    assert {why[f"add_custom/{name}"] for name in odd} == set(odd.values())
    assert why[f"add_custom/{key(14)}"].startswith("damaged (")
    assert "symbolic link" in why[f"add_custom/{key(15)}"]
    assert why["My Documents"] == "not an operator name" and "not a build directory" in why["notes.txt"]
    assert op.is_dir()  # it still holds what is not a build
    code, out, err = run_cli(["store", "ls", "--store", str(st.root), "--format", "json"], {}, cwd=tmp_path)
    listed = json.loads(out)
    assert code == errors.EXIT_FINDINGS and sorted(b["key"] for b in listed["builds"]) == sorted([key(14), key(15)])
    assert {s["path"] for s in listed["not_builds"]} == {f"add_custom/{n}" for n in odd} | {"My Documents", "notes.txt"}
    code, out, err = run_cli(["store", "ls", "--store", str(st.root)], {}, cwd=tmp_path)
    assert "left alone add_custom/projects: its name is not a 64-hex build key" in err and "2 builds" in out
    assert Store(tmp_path / "link").entries() == [] and not (tmp_path / "link").exists()
    (tmp_path / "link").symlink_to(st.root)
    assert sorted(e.key for e in Store(tmp_path / "link").entries()) == sorted([key(14), key(15)])


def test_s1_a_symlinked_store_root_is_followed_to_a_real_store_only(tmp_path: Path) -> None:
    st = Store(tmp_path / "real")
    three_builds(st)
    (tmp_path / "link").symlink_to(st.root)
    with canary(tmp_path, st.root / "add_custom"):
        code, out, err = gc(tmp_path, "--keep", "1", "--store", "link", "--format", "json")
    assert code == 0 and len(json.loads(out)["removed"]) == 2, err
    (tmp_path / "untagged").mkdir()
    looks_like_builds(tmp_path / "untagged")
    (tmp_path / "link2").symlink_to(tmp_path / "untagged")
    with canary(tmp_path):
        code, _, err = gc(tmp_path, "--keep", "0", "--store", "link2")
    assert code == errors.EXIT_USAGE and "not an ascenv build store" in err


def test_stores_made_before_this_change_keep_working(tmp_path: Path) -> None:
    """ascenv 0.1.0 wrote exactly CACHEDIR_TAG (signature and ascenv's line): still a store."""
    root = tmp_path / "old"
    st = Store(root)
    three_builds(st)
    assert (root / "CACHEDIR.TAG").read_text() == (
        "Signature: 8a477f597d28d172789f06886806bc55\n# This directory is ascenv's build store.\n"
    )
    assert store_tag.tag_problem(root) is None and len(st.gc(1).removed) == 2


# X4: gc and listing never create a store ------------------------------------------------------------


def test_x4_gc_ls_and_show_on_a_missing_store_create_nothing(tmp_path: Path) -> None:
    with canary(tmp_path):
        code, _, err = gc(tmp_path, "--keep", "1")
        assert code == errors.EXIT_USAGE and f"no build store at {tmp_path / '.ascenv/store'}" in err
        code, out, err = run_cli(["store", "ls"], {}, cwd=tmp_path)
        assert code == 0 and "No build store at" in out, err
        code, out, _ = run_cli(["store", "ls", "--format", "json"], {}, cwd=tmp_path)
        assert code == 0 and json.loads(out)["exists"] is False and json.loads(out)["builds"] == []
        code, _, err = run_cli(["store", "show", "abcdef"], {}, cwd=tmp_path)
        assert code == errors.EXIT_USAGE and "no build store" in err
    assert not (tmp_path / ".ascenv").exists()


def test_x4_ls_of_an_untagged_directory_refuses(tmp_path: Path) -> None:
    fill(tmp_path / "fh", "projects/alpha")
    code, _, err = run_cli(["store", "ls", "--store", "fh"], {}, cwd=tmp_path)
    assert code == errors.EXIT_USAGE and "not an ascenv build store" in err


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become nobody (root ignores permission bits)")
def test_x4_gc_in_a_read_only_directory_is_exit_2_not_3() -> None:
    import ascenv.commands.store
    import ascenv.lockfile
    import ascenv.output.store  # noqa: F401 - imported as root: nobody may not read the checkout

    with shared_tmp() as tmp:
        st = Store(tmp / "proj/.ascenv/store")
        three_builds(st)  # root's, 0755/0644: read-only for nobody, as on a read-only mount
        (tmp / "ro").mkdir(mode=0o555)
        before = tree_digest(tmp)

        def as_nobody() -> list:
            return [
                list(run_cli(["store", "gc", "--keep", "1"], {}, cwd=tmp / "ro")),  # no store there
                list(run_cli(["store", "gc", "--keep", "1", "--store", str(st.root)], {}, cwd=tmp / "ro")),
            ]

        (missing, read_only) = as_user(65534, as_nobody)
        assert tree_digest(tmp) == before
    assert missing[0] == errors.EXIT_USAGE and "no build store" in missing[2]
    assert read_only[0] == errors.EXIT_USAGE and "the build store" in read_only[2], read_only
    assert "Traceback" not in read_only[2] + missing[2]


def test_x4_a_store_that_cannot_be_created_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(errors.UsageError, match="cannot create the build store .*file/store"):
        Store(tmp_path / "file" / "store").ensure()
    st = Store(tmp_path / "s")
    three_builds(st)
    (st.root / store.LOCKS / "store.lock").unlink()
    (st.root / store.LOCKS / "store.lock").symlink_to(tmp_path / "target")
    with pytest.raises(errors.UsageError, match="cannot lock the build store"):
        st.gc(0)
    assert not (tmp_path / "target").exists()


def test_writers_tag_only_a_new_empty_or_ascenv_made_directory(tmp_path: Path) -> None:
    fill(tmp_path / "home", "projects/beta")
    with canary(tmp_path):
        with pytest.raises(errors.UsageError, match="not an ascenv build store: it holds no CACHEDIR.TAG"):
            Store(tmp_path / "home").ensure()
    (tmp_path / "empty").mkdir()
    Store(tmp_path / "empty").ensure()
    assert store_tag.tag_problem(tmp_path / "empty") is None
    runs_only = tmp_path / "runs_only"  # `bench import` before any build made the store
    (runs_only / "add_custom/.bench/runs").mkdir(parents=True)
    (runs_only / "add_custom" / key(1) / "bench").mkdir(parents=True)
    Store(runs_only).ensure()
    assert store_tag.tag_problem(runs_only) is None
    other = tmp_path / "other"
    other.mkdir()
    (other / "CACHEDIR.TAG").write_text(OTHER_TAG)
    with pytest.raises(errors.UsageError, match="written by another program"):
        Store(other).ensure()
    assert (other / "CACHEDIR.TAG").read_text() == OTHER_TAG


def test_a_planted_tmp_symlink_is_refused_by_writers(tmp_path: Path) -> None:
    st = Store(tmp_path / "store")
    st.ensure()
    os.rmdir(st.root / store.TMP)
    (tmp_path / "victim").mkdir()
    (st.root / store.TMP).symlink_to(tmp_path / "victim")
    with pytest.raises(errors.UsageError, match=r"\.tmp is not a directory"):
        with st.staging("build-x"):
            pass
    assert list((tmp_path / "victim").iterdir()) == []


# S2: clean-cache --kind ascenv-store ----------------------------------------------------------------


@pytest.fixture
def sb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "home").mkdir()
    monkeypatch.setattr(clean_cache, "gather_machine_facts", lambda *a, **k: MachineFacts())
    return tmp_path


def clean(sb: Path, store_dir: Path, *argv: str) -> tuple[int, str, str]:
    env = {
        "HOME": str(sb / "home"),
        "XDG_STATE_HOME": str(sb / "state"),
        "DOCKER_HOST": f"unix://{sb}/no-engine.sock",
        "ASCENV_STORE": str(store_dir),
    }
    return run_cli(["clean-cache", "--recent", "0s", *argv], env, sb / "home")


@pytest.mark.parametrize("kind", ["ascenv-store", "all"])
def test_s2_clean_cache_in_an_untagged_store_deletes_nothing(sb: Path, kind: str) -> None:
    fh2 = sb / "fh2"
    fill(fh2, *(f"projects/{c}" for c in "abcdef"), *(f"docs/{c}" for c in "abcde"))
    looks_like_builds(fh2, count=5)
    with canary(sb, sb / "state"):
        code, out, err = clean(sb, fh2, "--kind", kind, "--yes", "--format", "json")
    assert code == 0, err
    assert not [p for p in json.loads(out)["plan"]["entries"] if p.startswith(str(fh2))]
    assert f"not cleaning {fh2} (build store): not an ascenv store: it holds no CACHEDIR.TAG" in err


def test_s2_clean_cache_in_a_store_tagged_by_another_program_deletes_nothing(sb: Path) -> None:
    other = sb / "other"
    looks_like_builds(other, count=5)
    (other / "CACHEDIR.TAG").write_text(OTHER_TAG)
    with canary(sb, sb / "state"):
        code, _, err = clean(sb, other, "--kind", "ascenv-store", "--yes")
    assert code == 0 and "written by another program" in err


def test_s2_clean_cache_in_a_real_store_removes_only_builds(sb: Path) -> None:
    st = Store(sb / "store")
    builds = [add_entry(st, "add_custom", key(n), finished=f"2026-01-0{n + 1}T00:00:00Z") for n in range(5)]
    fill(st.root / "add_custom", *("projects", key(20)[:63]))
    (st.root / "linked").symlink_to(sb / "victim")
    looks_like_builds(sb / "victim", op="", count=5)
    may_go = [b.path for b in builds[:2]]  # --keep-builds 3: the two oldest
    with canary(sb, sb / "state", *may_go):
        code, out, err = clean(sb, st.root, "--kind", "ascenv-store", "--keep-builds", "3", "--yes", "--format", "json")
    assert code == 0, err
    assert sorted(json.loads(out)["result"]["deleted"]) == sorted(str(p) for p in may_go)
    assert not any(p.exists() for p in may_go)


# S4 (store side of B5): manifest.toml read with the input rules ---------------------------------------


def _damage(path: Path, how: str) -> str:
    """Make ``path`` (a manifest.toml) hostile; returns words the report must hold."""
    path.unlink()
    if how == "fifo":
        os.mkfifo(path)
        return "FIFO"
    if how == "sparse":
        with open(path, "wb") as fh:
            fh.truncate(3 << 30)  # 3 GB of holes: no disk used
        return "larger than 8 MiB"
    if how == "deep":
        path.write_text("a = " + "[" * 100_000 + "]" * 100_000 + "\n")
        return "nested too deep"
    if how == "not-utf8":
        path.write_bytes(b"schema = 1\nop = '\xff\xfe'\n")
        return "not UTF-8"
    if how == "huge-int":
        path.write_text("schema = " + "9" * 5000 + "\n")
        return "not valid TOML"
    raise AssertionError(how)


@pytest.mark.parametrize("how", ["fifo", "sparse", "deep", "not-utf8", "huge-int"])
def test_s4_a_hostile_manifest_is_damage_named_in_ls_and_left_alone_by_gc(tmp_path: Path, how: str) -> None:
    """As processes with a timeout: a FIFO that hangs must fail the test, not hang it."""
    st = Store(tmp_path / "store")
    builds = three_builds(st)
    words = _damage(builds[0].path / store.MANIFEST, how)
    env = {**os.environ, "PYTHONPATH": str(REPO), "HOME": str(tmp_path)}

    def ascenv(*argv: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "ascenv", *argv, "--store", str(st.root), "--format", "json"]
        return subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)

    done = ascenv("store", "ls")
    assert done.returncode == errors.EXIT_FINDINGS, done.stderr
    (damaged,) = [b for b in json.loads(done.stdout)["builds"] if not b["ok"]]
    assert damaged["key"] == key(0) and words in damaged["problems"][0] and store.MANIFEST in damaged["problems"][0]
    hostile = os.lstat(builds[0].path / store.MANIFEST)
    with canary(tmp_path, builds[0].path / store.MANIFEST, builds[1].path, builds[2].path):  # 3 GB: not hashed
        done = ascenv("store", "gc", "--keep", "0")
    after = os.lstat(builds[0].path / store.MANIFEST)
    assert (after.st_ino, after.st_size, after.st_mode) == (hostile.st_ino, hostile.st_size, hostile.st_mode)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert sorted(result["removed"]) == sorted(f"add_custom/{key(n)}" for n in (1, 2))
    assert any(s["path"] == f"add_custom/{key(0)}" and words in s["why"] for s in result["left_alone"])
    assert "Traceback" not in done.stderr


def test_s4_manifest_digest_is_of_the_bytes_read(tmp_path: Path) -> None:
    st = Store(tmp_path / "store")
    (entry, *_) = three_builds(st)
    digest = hashlib.sha256((entry.path / store.MANIFEST).read_bytes()).hexdigest()
    assert entry.manifest_sha256 == digest
    _damage(entry.path / store.MANIFEST, "fifo")
    assert entry.manifest_sha256 == digest  # never re-read: a FIFO swapped in cannot hang it
    assert st.get("add_custom", entry.key).manifest_sha256 is None  # type: ignore[union-attr]


def test_get_refuses_names_that_are_not_one_component(tmp_path: Path) -> None:
    st = Store(tmp_path / "store")
    three_builds(st)
    outside = tmp_path / "x" / key(0)
    outside.mkdir(parents=True)
    (outside / store.MANIFEST).write_text("schema = 1\n")
    for op in ("../x", "..", ".", "/abs", "a/b", "add_custom\n", ""):
        assert st.get(op, key(0)) is None, op
    assert st.get("add_custom", "../" + key(0)) is None and st.get("add_custom", key(0)[:63]) is None
    with pytest.raises(errors.UsageError, match="not an operator name"):
        st.commit("../x", key(0), tmp_path)


# concurrency: gc, clean-cache and a writer on one store ----------------------------------------------

WRITER = """
import sys
from ascenv.store import Store
from tests.test_store import add_entry
from tests.test_store_safety import key
st = Store(sys.argv[1])
for n in range(int(sys.argv[2]), int(sys.argv[3])):
    add_entry(st, "add_custom", key(n), target="npu" if n % 2 else "cpu", finished=f"2026-01-01T00:{n:02d}:00Z")
"""


def test_concurrent_gc_clean_cache_and_a_writer_keep_the_store_whole(tmp_path: Path) -> None:
    st = Store(tmp_path / "store")
    for n in range(4):
        add_entry(st, "add_custom", key(n), target="npu" if n % 2 else "cpu", finished=f"2026-01-01T00:{n:02d}:00Z")
    fill(st.root / "add_custom", "projects", key(99)[:63])  # not builds: must outlive every round
    fill(tmp_path / "outside", "a", "b")
    (st.root / "linked").symlink_to(tmp_path / "outside")
    env = {**os.environ, "PYTHONPATH": str(REPO), "HOME": str(tmp_path / "home"), "XDG_STATE_HOME": str(tmp_path)}
    gc_argv = [sys.executable, "-m", "ascenv", "store", "gc", "--keep", "2", "--store", str(st.root)]
    clean_argv = [sys.executable, "-m", "ascenv", "clean-cache", "--kind", "ascenv-store", "--keep-builds", "2"]
    clean_argv += ["--recent", "0s", "--yes", "--store", str(st.root)]
    outside = [st.root / "add_custom" / "projects", st.root / "add_custom" / key(99)[:63], tmp_path / "outside"]
    before = {str(p): tree_digest(p) for p in outside}
    written = 4
    for round_ in range(3):
        writer = [sys.executable, "-c", WRITER, str(st.root), str(written), str(written + 4)]
        procs = [subprocess.Popen(a, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for a in (writer, gc_argv, gc_argv, gc_argv, clean_argv)]  # fmt: skip
        results = [(p.args, p.wait(timeout=300), p.stderr.read() if p.stderr else "") for p in procs]
        for p in procs:
            for stream in (p.stdout, p.stderr):
                if stream:
                    stream.close()
        written += 4
        for argv, code, err in results:
            assert code in (0, errors.EXIT_FINDINGS) and "Traceback" not in err, (round_, argv[3:6], code, err)
            assert code == 0 or "Skipped" in err, (round_, argv[3:6], err)  # only clean-cache may skip
        assert {str(p): tree_digest(p) for p in outside} == before, round_
        builds = st.entries()
        assert all(st.verify(b) == [] for b in builds), round_  # every build whole: none half-deleted
        assert list((st.root / store.TMP).iterdir()) == [], round_  # no staging or trash left behind
    final = st.gc(2)
    assert final.ok
    by_target: dict[str, list[str]] = {}
    for b in st.entries():
        by_target.setdefault(b.manifest.target, []).append(b.key)  # type: ignore[union-attr]
    newest = {
        t: [key(n) for n in sorted(range(written), reverse=True) if (n % 2 == (t == "npu"))][:2] for t in by_target
    }
    assert by_target == newest


def test_an_op_dir_swapped_for_a_link_after_the_plan_is_not_followed(tmp_path: Path) -> None:
    """gc_plan, then the op directory becomes a symlink to a look-alike: discard (clean-cache's
    removal) and the delete under gc's lock refuse, through O_NOFOLLOW descriptors."""
    st = Store(tmp_path / "store")
    builds = three_builds(st)
    plan = st.gc_plan(1)
    victim = tmp_path / "victim"
    for b in builds:  # a copy of every build, manifest included: only the path tells them apart
        (victim / b.key).mkdir(parents=True)
        (victim / b.key / store.MANIFEST).write_bytes((b.path / store.MANIFEST).read_bytes())
    os.rename(st.root / "add_custom", tmp_path / "moved")
    (st.root / "add_custom").symlink_to(victim)
    with canary(tmp_path):
        assert [st.discard(e.path) for e in plan.remove] == ["not a build in the store, left alone"] * 2
        assert [st._delete_build("add_custom", e.key) for e in plan.remove] == [
            "changed after the scan (a symbolic link or a file in its path), left alone"
        ] * 2


def test_commit_refuses_a_symlinked_op_dir(tmp_path: Path) -> None:
    st = Store(tmp_path / "store")
    three_builds(st, "other")
    (tmp_path / "victim").mkdir()
    (st.root / "add_custom").symlink_to(tmp_path / "victim")
    with canary(tmp_path / "victim"), pytest.raises(errors.UsageError, match="add_custom is not a directory"):
        add_entry(st, "add_custom", key(5))


def test_discard_after_the_tag_went_leaves_everything(tmp_path: Path) -> None:
    st = Store(tmp_path / "store")
    three_builds(st)
    plan = st.gc_plan(1)
    (st.root / "CACHEDIR.TAG").unlink()
    with canary(tmp_path):
        assert [st.discard(e.path) for e in plan.remove] == [
            "the store is no longer an ascenv store (it holds no CACHEDIR.TAG), left alone"
        ] * 2


def test_s3_clean_cache_plans_only_this_hosts_dead_staging(sb: Path) -> None:
    st = Store(sb / "store")
    three_builds(st)
    tmp = st.root / store.TMP
    here, other = store.this_host(), "h" + "f" * 12
    dead = tmp / f"build-add_custom.{here}.pid{2**22 + 7}.aa"  # above pid_max's default: never alive
    remote = tmp / f"build-add_custom.{other}.pid{2**22 + 7}.bb"
    linked = tmp / f"build-add_custom.{here}.pid{2**22 + 7}.cc"
    for path in (dead, remote):
        (path / "out").mkdir(parents=True)
        (path / "out" / "partial.o").write_bytes(b"half")
    fill(sb / "victim", "x")
    linked.symlink_to(sb / "victim")
    with canary(sb, sb / "state", dead):
        code, out, err = clean(sb, st.root, "--kind", "ascenv-store", "--keep-builds", "3", "--yes", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["result"]["deleted"] == [str(dead)] and not dead.exists()
    why = {s.path: s.why for s in st.gc_plan(3).left_alone}
    assert "another host's" in why[f".tmp/{remote.name}"] and "symbolic link" in why[f".tmp/{linked.name}"]
