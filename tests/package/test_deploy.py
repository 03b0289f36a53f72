"""The rollback swap: killed with SIGKILL after each of its steps (in a child process), the live
vendor directory holds one whole tree, the old or the new, and the next run finishes the swap."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ascenv import errors
from ascenv.package import deploy
from tests.package.pkgbuild import vendor_tree

REPO = Path(__file__).resolve().parents[2]


def tree(path: Path) -> dict[str, object]:
    """Every entry below ``path``: file bytes and mode, symlink targets, directories."""
    found: dict[str, object] = {}
    for p in sorted(path.rglob("*")):
        rel = str(p.relative_to(path))
        if p.is_symlink():
            found[rel] = ("link", os.readlink(p))
        elif p.is_dir():
            found[rel] = "dir"
        else:
            found[rel] = (p.read_bytes(), p.stat().st_mode)
    return found


@pytest.fixture
def installed(tmp_path: Path) -> tuple[Path, dict, dict]:
    """An install path whose live vendor is "new" and whose kept one is "old"."""
    root = tmp_path / "opp"
    vendor_tree(root / deploy.KEEP_DIR / "customize", kernel=b"kernel-v1")
    vendor_tree(root / "vendors" / "customize", op_types=("AddCustom", "SubCustom"), kernel=b"kernel-v2")
    return root, tree(root / deploy.KEEP_DIR / "customize"), tree(root / "vendors" / "customize")


CHILD = """
import os, signal, sys
from pathlib import Path
from ascenv.package import deploy
root, stop, exchange = Path(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"
if not exchange:
    deploy._exchange = lambda a, b: False
def step(name):
    if name == stop:
        os.kill(os.getpid(), signal.SIGKILL)
deploy.rollback(root, "customize", step=step)
"""


def killed_rollback(root: Path, stop: str, exchange: bool) -> int:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), stop, "1" if exchange else "0"],
        cwd=REPO,
        capture_output=True,
        env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(REPO)},
        timeout=60,
    )
    return done.returncode


@pytest.mark.parametrize(
    ("stop", "exchange"),
    [(s, True) for s in ("journal", "staged", "swapped", "kept", "done")]
    + [(s, False) for s in ("staged", "moved-out", "swapped")],
)
def test_a_rollback_killed_at_any_step_leaves_one_whole_vendor_and_is_finished_later(
    installed: tuple[Path, dict, dict], stop: str, exchange: bool
) -> None:
    root, old, new = installed
    assert killed_rollback(root, stop, exchange) == -signal.SIGKILL
    live = root / "vendors" / "customize"
    journal = root / deploy.KEEP_DIR / "customize.rollback.json"
    if live.exists():
        assert tree(live) in (old, new)  # never a mix
    else:  # only between the two renames of the fallback, and then the journal says what to do
        assert (stop, exchange) == ("moved-out", False) and journal.exists()
    if stop == "done":  # killed after the last step: the rollback is complete, nothing to resume
        assert not journal.exists()
    else:  # the next run (the same command) finishes it, and that is the one rollback asked for
        assert deploy.rollback(root, "customize").finished_interrupted
        assert not journal.exists()
    assert tree(live) == old
    assert tree(root / deploy.KEEP_DIR / "customize") == new
    assert sorted(p.name for p in (root / "vendors").iterdir()) == ["customize"]  # no staging names left


def test_rollback_swaps_back_and_forth(installed: tuple[Path, dict, dict]) -> None:
    root, old, new = installed
    first = deploy.rollback(root, "customize")
    assert tree(root / "vendors" / "customize") == old and not first.finished_interrupted
    assert first.compute_units == ("ascend910b",)
    assert deploy.cache_command(first.compute_units) == (
        "ascenv clean-cache --kind kernel-cache --kind fuzzy-kernel-cache --soc ascend910b --yes"
    )
    deploy.rollback(root, "customize")
    assert tree(root / "vendors" / "customize") == new


def test_rollback_without_a_kept_vendor_is_refused(tmp_path: Path) -> None:
    vendor_tree(tmp_path / "vendors" / "customize")
    with pytest.raises(errors.UsageError, match="no previous customize vendor is kept"):
        deploy.rollback(tmp_path, "customize")


def test_a_keep_killed_midway_leaves_the_earlier_kept_tree(installed: tuple[Path, dict, dict]) -> None:
    root, old, new = installed

    def die(name: str) -> None:
        if name == "copied":
            raise KeyboardInterrupt  # stands for a kill after the copy, before its rename

    with pytest.raises(KeyboardInterrupt):
        deploy.keep_previous(root, ["customize"], step=die)
    assert tree(root / deploy.KEEP_DIR / "customize") == old  # the partial copy never replaced it
    assert deploy.keep_previous(root, ["customize"]) == [root / deploy.KEEP_DIR / "customize"]
    assert tree(root / deploy.KEEP_DIR / "customize") == new
    assert sorted(p.name for p in (root / deploy.KEEP_DIR).iterdir()) == ["customize"]


@pytest.mark.parametrize("stop", ["failed-out", "kept-copy-in"])
def test_a_put_back_killed_midway_is_settled_by_the_next_run(tmp_path: Path, stop: str) -> None:
    """deploy.put_back renames the failed tree out, the kept copy in, the tree kept before back;
    killed after either of the first two, the next run's tidy-up leaves no failed tree and the
    kept copy live or kept (for --rollback), never the failed tree."""
    root = tmp_path / "opp"
    paths = deploy.VendorPaths(root, "customize")
    vendor_tree(paths.previous, kernel=b"kept copy")
    vendor_tree(paths.discard, kernel=b"kept before")
    vendor_tree(paths.failed, kernel=b"half merged")
    paths.current.parent.mkdir()
    if stop == "kept-copy-in":
        os.rename(paths.previous, paths.current)
    copy, earlier = tree(paths.current if stop == "kept-copy-in" else paths.previous), tree(paths.discard)
    with deploy.locked(root, create=True) as keep:
        assert keep is not None
        deploy._tidy(root, keep)
    assert not paths.failed.exists() and not paths.discard.exists()
    if stop == "kept-copy-in":  # all but done: the tree kept before is kept again
        assert tree(paths.current) == copy and tree(paths.previous) == earlier
    else:  # no live vendor: the kept copy waits for --rollback
        assert not paths.current.exists() and tree(paths.previous) == copy
        deploy.rollback(root, "customize")
        assert tree(paths.current) == copy
