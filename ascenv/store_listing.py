"""`ascenv store ls | show`: the builds of the store, each checked against its hashes, with the
bench runs in its ``bench/`` folder. Above both ``ascenv.store`` and ``ascenv.bench.store``: the
build store knows nothing of bench runs beyond the baselines its gc keeps (no import cycle)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ascenv.accuracy.results import BuildTest, build_tests
from ascenv.bench.baselines import read_baselines
from ascenv.bench.store import BuildRun, build_runs
from ascenv.errors import InputError
from ascenv.fsutil import read_input
from ascenv.store import MANIFEST, MANIFEST_LIMIT, Entry, Store, Stray


@dataclass(frozen=True)
class CheckedEntry:
    """A build, what ``Store.verify`` found wrong with it (nothing: its outputs match) and the
    bench runs in its ``bench/`` folder."""

    entry: Entry
    problems: tuple[str, ...]
    bench_runs: tuple[BuildRun, ...] = ()
    tests: tuple[BuildTest, ...] = ()  # the `ascenv test` runs in its accuracy/ folder


@dataclass(frozen=True)
class Listing:
    """`ascenv store ls`: every build, newest first, each checked against its hashes."""

    root: Path
    builds: tuple[CheckedEntry, ...]
    strays: tuple[Stray, ...] = ()  # what is not a build: listed, never deleted
    exists: bool = True  # False: no store there (an empty listing, not an error)

    @property
    def ok(self) -> bool:
        return not any(b.problems for b in self.builds)


@dataclass(frozen=True)
class Shown:
    """`ascenv store show KEY`: one checked build and its manifest.toml as stored."""

    build: CheckedEntry
    manifest_text: str


def checked(store: Store, entry: Entry, baselines: Optional[dict[str, dict[str, str]]] = None) -> CheckedEntry:
    """An entry with its problems and its bench runs. The runs are read from ``bench/`` now,
    never written into manifest.toml: that file's sha256 is what locks pin and what `ascenv
    install` copies beside a vendor, so a manifest rewritten after commit would break every lock
    and installed vendor that names the build; a run added later must not change the build's
    identity either."""

    known = baselines if baselines is not None else {}
    if entry.op not in known:
        try:
            known[entry.op] = read_baselines(store.root, entry.op)
        except InputError:
            known[entry.op] = {}  # `ascenv bench` names the damaged file; a listing still lists
    return CheckedEntry(
        entry, tuple(store.verify(entry)), build_runs(entry.path, known[entry.op]), build_tests(entry.path)
    )


def list_builds(store: Store) -> Listing:
    """Every build, checked, and what is not a build; no store there is an empty listing, a
    directory ascenv did not make is refused (exit 2)."""
    if not store.exists():
        return Listing(store.root, (), (), exists=False)
    store.require()
    baselines: dict[str, dict[str, str]] = {}
    builds, strays = store.survey()
    return Listing(store.root, tuple(checked(store, e, baselines) for e in builds), tuple(strays))


def show_build(store: Store, prefix: str) -> Shown:
    store.require()
    entry = store.find(prefix)
    try:  # read as the listing did: a damaged manifest is shown as far as it reads, or not at all
        text = read_input(entry.path / MANIFEST, what="", limit=MANIFEST_LIMIT).decode("utf-8", "replace")
    except InputError:
        text = ""
    return Shown(checked(store, entry), text)
