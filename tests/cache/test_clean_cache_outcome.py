"""What clean-cache and store gc say, and exit with, when the plan is not carried out whole (issue
28: C1, an entry left alone was "Deleted 1 entry: freed 0 B"; C2, an immutable file gave exit 0).
Both are exit 1 (errors.EXIT_FINDINGS): the plan shown was not carried out."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ascenv import errors
from ascenv.cache import execute as execute_module
from ascenv.cache.machine import MachineFacts
from ascenv.commands import clean_cache
from ascenv.store import Store
from tests.cache.helpers import canary, write
from tests.cli_helpers import run_cli
from tests.test_store import add_entry

OLD = 1_000_000.0
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def sb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "home").mkdir()
    monkeypatch.setattr(clean_cache, "gather_machine_facts", lambda *a, **k: MachineFacts())
    return tmp_path


def run(sb: Path, *argv: str, environ: dict | None = None) -> tuple[int, str, str]:
    env = {
        "HOME": str(sb / "home"),
        "XDG_STATE_HOME": str(sb / "state"),
        "DOCKER_HOST": f"unix://{sb}/no-engine.sock",
        **(environ or {}),
    }
    return run_cli(["clean-cache", "--recent", "0s", *argv], env, sb / "home")


@contextlib.contextmanager
def immutable(path: Path, top: Path) -> Iterator[None]:
    """``chattr +i`` (root, a file system with inode flags), undone below ``top`` (the file may
    have been moved) whatever happens, so that the test's directory can be removed."""
    try:
        done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, timeout=30)
    except OSError:
        pytest.skip("no chattr")
    if done.returncode != 0:
        pytest.skip(f"chattr +i not possible here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-R", "-i", str(top)], capture_output=True, timeout=60)


def socs(sb: Path, *names: str) -> list[Path]:
    found = []
    for name in names:
        soc = sb / "home/atc_data/kernel_cache" / name
        for i in range(3):
            write(str(soc / f"k{i}.o"), b"k", mtime=OLD)
        found.append(soc)
    return found


def test_c2_an_immutable_file_makes_the_entry_partly_deleted_and_exit_1(sb: Path) -> None:
    stuck, clean = socs(sb, "Ascend910B4", "Ascend310P3")
    with immutable(stuck / "k1.o", sb), canary(sb, sb / "state", stuck, clean):
        code, out, err = run(sb, "--yes")
        assert (stuck / "k1.o").exists() and not clean.exists()
    assert code == errors.EXIT_FINDINGS, err
    assert "Deleted 1 entry" in err and "Only partly deleted 1 entry" in err and "Operation not permitted" in err
    lines = [json.loads(x) for x in (sb / "state/ascenv/clean-cache.jsonl").read_text().splitlines()]
    assert [bool(x.get("errors")) for x in lines if x["action"] == "remove"].count(True) == 1


def test_c2_a_file_that_cannot_be_unlinked_is_exit_1_in_json_too(sb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same without chattr: unlink refused (EPERM) for one name, as an immutable file is."""
    (stuck,) = socs(sb, "Ascend910B4")
    real = os.unlink

    def unlink(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if path == "k2.o":
            raise PermissionError(1, "Operation not permitted", path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(execute_module.os, "unlink", unlink)
    with canary(sb, sb / "state", stuck):
        code, out, _ = run(sb, "--yes", "--format", "json")
    result = json.loads(out)["result"]
    assert code == errors.EXIT_FINDINGS and result["partly_deleted"] == [str(stuck)] and result["deleted"] == []
    assert os.listdir(stuck) == ["k2.o"]


def test_c1_an_entry_replaced_after_the_scan_is_skipped_not_deleted(sb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    swapped, fine = socs(sb, "Ascend910B4", "Ascend310P3")
    real_execute = execute_module.execute

    def replace_then_execute(*args, **kwargs):  # type: ignore[no-untyped-def]
        os.rename(swapped, sb / "moved")
        swapped.mkdir()  # another directory under the same name: not what the plan showed
        (swapped / "new.o").write_bytes(b"n")
        return real_execute(*args, **kwargs)

    monkeypatch.setattr(execute_module, "execute", replace_then_execute)
    with canary(sb, sb / "state", fine, swapped, sb / "moved"):  # those two: the swap itself, checked below
        code, _, err = run(sb, "--yes")
    assert code == errors.EXIT_FINDINGS
    assert "Deleted 1 entry" in err and "Skipped 1 entry, left as they were" in err and "not what was scanned" in err
    assert os.listdir(swapped) == ["new.o"] and sorted(os.listdir(sb / "moved")) == ["k0.o", "k1.o", "k2.o"]
    assert not fine.exists()


def test_c1_nothing_left_alone_is_exit_0_and_says_no_skip(sb: Path) -> None:
    socs(sb, "Ascend910B4")
    code, _, err = run(sb, "--yes")
    assert code == 0 and "Deleted 1 entry" in err and "Skipped" not in err and "partly" not in err


# the same through the store -------------------------------------------------------------------------


def key(n: int) -> str:
    return hashlib.sha256(str(n).encode()).hexdigest()


def test_c2_store_gc_with_an_immutable_output_says_so_and_exits_1(tmp_path: Path) -> None:
    st = Store(tmp_path / "store")
    old, new = (add_entry(st, "add_custom", key(n), finished=f"2026-01-0{n + 1}T00:00:00Z") for n in (0, 1))
    stuck = old.outputs / "add_custom_cpu"
    with immutable(stuck, tmp_path):
        done = subprocess.run(  # a process of its own: the leftover it makes is of a process that ended
            [sys.executable, "-m", "ascenv", "store", "gc", "--keep", "1", "--store", str(st.root)],
            env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        code, out, err = done.returncode, done.stdout, done.stderr
        assert code == errors.EXIT_FINDINGS, err
        assert "not removed: add_custom/" in err and "Operation not permitted" in err
        assert "0 builds removed" in out and new.path.is_dir() and not old.path.exists()  # out of sight
        leftovers = list((st.root / ".tmp").iterdir())
        assert [p.name.startswith("trash.") for p in leftovers] == [True]
    # the next gc sweeps what is left, now that it can go (its process is gone)
    code, out, err = run_cli(["store", "gc", "--keep", "1", "--store", str(st.root)], {}, cwd=tmp_path)
    assert code == 0 and list((st.root / ".tmp").iterdir()) == [], err


def test_c2_clean_cache_store_debris_with_an_immutable_output_exits_1(sb: Path) -> None:
    st = Store(sb / "store")
    builds = [add_entry(st, "add_custom", key(n), finished=f"2026-01-0{n + 1}T00:00:00Z") for n in range(3)]
    with immutable(builds[0].outputs / "add_custom_cpu", sb), canary(sb, sb / "state", st.root):
        code, out, err = run(
            sb, "--kind", "ascenv-store", "--keep-builds", "1", "--yes", "--format", "json",
            environ={"ASCENV_STORE": str(st.root)},
        )  # fmt: skip
    result = json.loads(out)["result"]
    assert code == errors.EXIT_FINDINGS, err
    assert result["deleted"] == [str(builds[1].path)] and result["skipped"] == [str(builds[0].path)]
    assert any("not fully removed" in e for e in result["errors"])
