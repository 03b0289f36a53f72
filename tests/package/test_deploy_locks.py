"""Installs and rollbacks at once on one install path (Ansible driving a cluster that shares one
opp tree): two rollbacks at once stranded the kept tree, twice left no live vendor (I1), two
installs at once crashed with exit 3 (I2). Every run now holds the install path's lock and reads
the state once it holds it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ascenv import errors, store
from ascenv.package import deploy
from tests.package.hostile import build, compress, real_header, tar_bytes, ti
from tests.package.pkgbuild import needs_makeself, vendor_tree
from tests.package.test_deploy import REPO, tree
from tests.test_store import add_entry

PACKAGE = "custom_opp_ubuntu_aarch64.run"

# A worker: runs `ascenv install` or `ascenv install --rollback` through cli.main, one per line
# read from stdin, and answers each with [action, exit code, stderr]. Its installer is a stand-in
# for install.sh that replaces the vendor file by file, slowly, so a run that does not hold the
# lock meets it half-written.
WORKER = r"""
import io, json, os, random, shutil, sys, time
from pathlib import Path
from ascenv import cli, proc
from ascenv.commands._common import Context
from ascenv.output import Output
from ascenv.package.inspection import inspect_package

cwd, seed = sys.argv[1], int(sys.argv[2])
rng = random.Random(seed)

def files(version):
    # two versions that share some names and not others: a mix of the two is never whole
    own = {"op_impl/only_a.so": b"A" * 300} if version == "A" else {"kernel/only_b.o": b"B" * 200}
    shared = {f"op_impl/kernel_{i}.o": (version * 50 + str(i)).encode() for i in range(6)}
    return {**shared, **own, "version.info": f"custom_opp_compiler_version={version}".encode()}

def run(argv, **_):
    argv = tuple(argv)
    # the version the package holds (ascenv reads it the same way for its vendors; nothing runs it)
    version = next(m.path[-1] for m in inspect_package(Path(argv[1])).members if "/version-" in m.path)
    live = Path(argv[2].split("=", 1)[1]) / "vendors" / "customize"
    shutil.rmtree(live, ignore_errors=True)
    for rel, data in files(version).items():
        (live / rel).parent.mkdir(parents=True, exist_ok=True)
        (live / rel).write_bytes(data)
        time.sleep(0.001)
    return proc.Completed(argv, proc.OK, 0, "SUCCESS\n", "", 0.0)

for _ in sys.stdin:
    action = rng.choice(["A", "B", "rollback", "rollback"])
    argv = ["install", "--install-path", "opp", "--store", "store"]
    argv += ["--rollback", "customize"] if action == "rollback" else ["add_custom", "--key", action.lower() * 64]
    out, err = io.StringIO(), io.StringIO()
    output = Output("human", stdout=out, stderr=err, interactive=False, color=False)
    code = cli.main(argv, ctx=Context(environ={"PATH": os.environ["PATH"]}, out=output, run=run, cwd=cwd))
    print(json.dumps([action, code, err.getvalue()]), flush=True)
"""


def whole_trees(tmp_path: Path, st: store.Store) -> dict[str, dict]:
    """The two whole vendor trees an install can leave: each version's files and its manifest,
    as the worker's installer writes them (made here by the same function, in this process)."""
    namespace: dict = {}
    exec(WORKER.split("def run(")[0].split("rng = random.Random(seed)")[1], namespace)  # files()
    wholes = {}
    for version in ("A", "B"):
        directory = tmp_path / "expected" / version
        for rel, data in namespace["files"](version).items():
            (directory / rel).parent.mkdir(parents=True, exist_ok=True)
            (directory / rel).write_bytes(data)
        entry = st.find(version.lower() * 64)
        (directory / "ascenv-manifest.toml").write_bytes((entry.path / store.MANIFEST).read_bytes())
        wholes[version] = tree(directory)
    return wholes


@pytest.mark.slow
@needs_makeself
def test_installs_and_rollbacks_at_once_always_leave_one_whole_live_vendor_and_a_whole_kept_one(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    workers, rounds = 4, 20
    st = store.Store(tmp_path / "store")
    for version in ("A", "B"):
        members = [ti(f"packages/vendors/customize/{name}", b"x") for name in ("version.info", f"version-{version}")]
        package = build(tmp_path / PACKAGE, real_header(tmp_path_factory), compress(tar_bytes(members)))
        add_entry(st, "add_custom", version.lower() * 64, target="npu", outputs={PACKAGE: package.read_bytes()})
    wholes = whole_trees(tmp_path, st)
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(REPO), "HOME": str(tmp_path)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(tmp_path), str(seed)],
            cwd=REPO,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for seed in range(workers)
    ]
    root = tmp_path / "opp"
    start = time.monotonic()
    seen: dict[str, int] = {}
    try:
        for number in range(rounds):
            for p in procs:  # all at once: each worker starts its run as soon as it reads the line
                assert p.stdin is not None
                p.stdin.write("go\n")
                p.stdin.flush()
            for p in procs:
                assert p.stdout is not None
                action, code, err = json.loads(p.stdout.readline())
                seen[action] = seen.get(action, 0) + 1
                nothing_kept = code == errors.EXIT_USAGE and "no previous customize vendor is kept" in err
                assert code == errors.EXIT_OK or (action == "rollback" and nothing_kept), (number, action, err)
            live = root / "vendors" / "customize"
            if live.exists():
                assert tree(live) in wholes.values(), f"round {number}: the live vendor is a mix"
            assert sorted(os.listdir(root / "vendors")) == (["customize"] if live.exists() else [])
            kept = root / deploy.KEEP_DIR / "customize"
            if kept.exists():
                assert tree(kept) in wholes.values(), f"round {number}: the kept vendor is a mix"
            leftovers = sorted(set(os.listdir(root / deploy.KEEP_DIR)) - {"customize", deploy.LOCK_FILE})
            assert leftovers == [], f"round {number}"
    finally:
        for p in procs:
            assert p.stdin is not None
            p.stdin.close()
        for p in procs:
            p.wait(30)
            assert p.stdout is not None
            p.stdout.close()
    assert seen.get("rollback", 0) and seen.get("A", 0) + seen.get("B", 0)  # both kinds of run raced
    assert time.monotonic() - start < 120  # about 10 s on a loaded 2-core machine


# --- waiting, then reading the state again --------------------------------------------------------

HOLDER = r"""
import sys, time
from pathlib import Path
from ascenv.package import deploy
root, go = Path(sys.argv[1]), Path(sys.argv[2])
with deploy.locked(root, create=False):
    print("locked", flush=True)
    while not go.exists():
        time.sleep(0.01)
    exec(sys.argv[3])  # what the other run does while it holds the lock
"""


def holding(root: Path, tmp_path: Path, meanwhile: str) -> tuple[subprocess.Popen, Path]:
    go = tmp_path / "go"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(root), str(go), meanwhile],
        cwd=REPO,
        env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
    return holder, go


def finished(holder: subprocess.Popen) -> int:
    code = holder.wait(30)
    assert holder.stdout is not None
    holder.stdout.close()
    return code


def release_when_waiting(go: Path) -> deploy.Waiting:
    waited: list[Path] = []

    def on_wait(lock: Path) -> None:
        waited.append(lock)
        go.touch()  # the holder does its work and lets go only now: we are already waiting

    on_wait.waited = waited  # type: ignore[attr-defined]
    return on_wait


def installed(tmp_path: Path) -> Path:
    root = tmp_path / "opp"
    vendor_tree(root / deploy.KEEP_DIR / "customize", kernel=b"kernel-v1")
    vendor_tree(root / "vendors" / "customize", kernel=b"kernel-v2")
    return root


def test_a_rollback_waits_for_the_lock_and_sees_the_kept_tree_gone(tmp_path: Path) -> None:
    """I1's stranded state came from each run trusting what it read before the other acted: the
    other run takes the kept tree while we wait; we answer "nothing kept", never exit 3."""
    root = installed(tmp_path)
    live = tree(root / "vendors" / "customize")
    holder, go = holding(root, tmp_path, "import shutil; shutil.rmtree(root / deploy.KEEP_DIR / 'customize')")
    on_wait = release_when_waiting(go)
    with pytest.raises(errors.UsageError, match="no previous customize vendor is kept"):
        deploy.rollback(root, "customize", on_wait=on_wait)
    assert finished(holder) == 0
    assert on_wait.waited == [root / deploy.KEEP_DIR / deploy.LOCK_FILE]  # type: ignore[attr-defined]
    assert tree(root / "vendors" / "customize") == live


def test_a_rollback_that_waited_finishes_the_others_interrupted_swap(tmp_path: Path) -> None:
    """The other run stops midway (its journal written, the kept tree staged): once we hold the
    lock we finish that swap from what is on disk, and that is the rollback."""
    root = installed(tmp_path)
    old = tree(root / deploy.KEEP_DIR / "customize")
    meanwhile = (
        "p = deploy.VendorPaths(root, 'customize'); st = p.previous.stat()\n"
        'p.journal.write_text(\'{"dev": %d, "ino": %d}\' % (st.st_dev, st.st_ino))\n'
        "p.previous.rename(p.incoming)"
    )
    holder, go = holding(root, tmp_path, meanwhile)
    result = deploy.rollback(root, "customize", on_wait=release_when_waiting(go))
    assert finished(holder) == 0
    assert result.finished_interrupted and tree(root / "vendors" / "customize") == old
    assert sorted(os.listdir(root / "vendors")) == ["customize"]


def test_an_install_waits_for_a_rollback_and_keeps_what_is_live_then(tmp_path: Path) -> None:
    root = installed(tmp_path)
    old = tree(root / deploy.KEEP_DIR / "customize")
    holder, go = holding(
        root,
        tmp_path,
        "deploy._swap(deploy.VendorPaths(root, 'customize'), "
        "deploy._identity(root / deploy.KEEP_DIR / 'customize'), lambda s: None)",
    )
    on_wait = release_when_waiting(go)
    with deploy.replacing(root, ["customize"], on_wait) as kept:
        assert finished(holder) == 0
        assert kept == [root / deploy.KEEP_DIR / "customize"]
        assert tree(root / "vendors" / "customize") == old  # the rollback happened before our keep
    assert tree(root / deploy.KEEP_DIR / "customize") == old  # we kept what was live once we held the lock
    assert on_wait.waited  # type: ignore[attr-defined]


@pytest.mark.slow
def test_two_rollbacks_at_once_swap_twice_and_strand_nothing(tmp_path: Path) -> None:
    """I1's reproducer, through the command: two `install --rollback customize` at once left the
    kept tree in vendors/.customize.ascenv-incoming, or no live vendor at all, and crashed with
    exit 3 on the journal. Each pair now swaps twice: the trees end where they started."""
    root = installed(tmp_path)
    old, new = tree(root / deploy.KEEP_DIR / "customize"), tree(root / "vendors" / "customize")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "PYTHONPATH": str(REPO)}
    argv = [sys.executable, "-m", "ascenv", "install", "--rollback", "customize", "--install-path", "opp"]
    for _ in range(4):
        runs = [
            subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            for _ in range(2)
        ]
        for run in runs:
            _, err = run.communicate(timeout=120)
            assert run.returncode == 0, err
        assert tree(root / "vendors" / "customize") == new and tree(root / deploy.KEEP_DIR / "customize") == old
        assert os.listdir(root / "vendors") == ["customize"]
        assert sorted(os.listdir(root / deploy.KEEP_DIR)) == [deploy.LOCK_FILE, "customize"]


def test_the_command_says_it_waits_then_does_the_rollback(tmp_path: Path) -> None:
    root = installed(tmp_path)
    old = tree(root / deploy.KEEP_DIR / "customize")
    holder, go = holding(root, tmp_path, "pass")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "PYTHONPATH": str(REPO), "COLUMNS": "500"}
    argv = [sys.executable, "-m", "ascenv", "install", "--rollback", "customize", "--install-path", "opp"]
    with subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as run:
        assert run.stderr is not None
        said = run.stderr.readline().decode()  # blocks until it says something: it must not go on meanwhile
        assert said.startswith("waiting for another ascenv install or rollback in") and not go.exists()
        assert tree(root / "vendors" / "customize") != old  # nothing done while waiting
        go.touch()
        out, err = run.communicate(timeout=60)
    assert finished(holder) == 0
    assert run.returncode == 0, err
    assert tree(root / "vendors" / "customize") == old
