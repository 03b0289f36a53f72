"""What every held-out set of error logs is checked for (tests/triage/test_heldout.py; one module
per set, heldout_a.py ..., holds its known misses and floors).

A held-out set is a folder of tests/data/ holding real error logs from public threads outside the
shared corpus and outside every other set, each with ``# source:`` and ``# note:`` lines, and a
labels.json giving the cause its thread established (with the quote and URL). Rules are never
written from these files: each set was measured before any rule was written for it, and its test
prints the fraction (pytest -s) and asserts the floor reached, so a regression fails and an
improvement is noticed (raise the floor, move the log out of the set's known misses).
"""

from __future__ import annotations

import functools
import io
import json
from dataclasses import dataclass
from pathlib import Path

from ascenv import compat
from ascenv.checks import load_checks
from ascenv.triage import TriageResult, load, triage
from ascenv.triage.rules import CAUSES

DATA = Path(__file__).parent.parent / "data"
# every folder of real logs: a thread is in one of them only
FOLDERS = (
    "triage",
    "triage_heldout",
    "triage_heldout_b",
    "triage_heldout_c",
    "triage_heldout_d",
    "triage_heldout_e",
    "triage_heldout_g",
    "triage_heldout_j",
    "corpus/errors",
)


@functools.cache
def table():
    return load(known_checks=set(load_checks()))


@functools.cache
def matrix():
    return compat.load()


def payload(path: Path) -> bytes:
    """The log without its leading ``#`` metadata lines (source, note), byte for byte otherwise."""
    lines = path.read_bytes().splitlines(keepends=True)
    while lines and lines[0].startswith(b"#"):
        lines.pop(0)
    return b"".join(lines)


@functools.cache
def run(path: Path) -> TriageResult:
    """The text alone, no machine: what a user pasting the log gets."""
    return triage(io.BytesIO(payload(path)), None, matrix(), table())


def source_of(path: Path) -> str:
    return path.read_text(encoding="utf-8").split("\n", 1)[0].split()[2]


@dataclass(frozen=True)
class HeldOut:
    folder: str  # under tests/data/
    title: str  # as the printed fraction names the set
    known_misses: dict[str, str]  # a file-name prefix naming one log -> why triage misses it
    top1_floor: int
    top3_floor: int

    @property
    def path(self) -> Path:
        return DATA / self.folder

    @functools.cached_property
    def labels(self) -> dict[str, dict]:
        return json.loads((self.path / "labels.json").read_text(encoding="utf-8"))

    def ranked(self, name: str) -> list[str]:
        return [c.cause for c in run(self.path / name).causes]

    def misses(self) -> set[str]:
        return {n for n in self.labels if n.startswith(tuple(self.known_misses))}

    def check_labelled(self) -> None:
        assert sorted(p.name for p in self.path.glob("*.txt")) == sorted(self.labels)
        for prefix in self.known_misses:  # each key names exactly one log
            assert len([n for n in self.labels if n.startswith(prefix)]) == 1, prefix
        for name, label in self.labels.items():
            head = (self.path / name).read_text(encoding="utf-8").splitlines()[:2]
            assert head[0].startswith("# source: https://") and head[1].startswith("# note: "), name
            assert label["cause"] in CAUSES, name
            assert "https://" in label["evidence"] and label["confidence"] in ("high", "medium"), name

    def check_no_thread_shared(self) -> None:
        """A documentation page may hold several questions; an issue or pull request is in one set."""
        ours = {source_of(self.path / n) for n in self.labels}
        others = {source_of(p) for folder in FOLDERS if folder != self.folder for p in (DATA / folder).glob("*.txt")}
        assert not {u for u in ours & others if "/issues/" in u or "/pull/" in u}

    def check_fraction(self, capsys) -> None:
        """Print the share of logs whose labelled cause triage ranks first / in the top three, and
        hold the floors; every miss must be a known one."""
        n = len(self.labels)
        top1 = sorted(name for name in self.labels if self.ranked(name)[:1] == [self.labels[name]["cause"]])
        top3 = sorted(name for name in self.labels if self.labels[name]["cause"] in self.ranked(name)[:3])
        misses = sorted(set(self.labels) - set(top1))
        with capsys.disabled():
            print(f"\ntriage {self.title} top-1: {len(top1)}/{n}, top-3: {len(top3)}/{n}; misses: {misses}")
            for name in misses:
                print(f"  {self.labels[name]['cause']:<24} got {self.ranked(name)[:3]}  {name}")
        assert len(top1) >= self.top1_floor and len(top3) >= self.top3_floor
        assert set(misses) <= self.misses(), sorted(set(misses) - self.misses())
        passing = sorted(self.misses() & set(top1))
        assert not passing, f"ranked first now: move out of the known misses: {passing}"

    def check_no_traceback(self) -> None:
        for name in self.labels:
            assert all(c.cause for c in run(self.path / name).causes), name
