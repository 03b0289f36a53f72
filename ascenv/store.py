"""The content-addressed build store: ``<store>/<op>/<key>/`` holds ``outputs/``, ``manifest.toml``,
``logs/`` and ``bench/`` of one build, where ``key`` is the build key (``builder.build_key``).

Crash safety follows pre-commit's store (pre_commit/store.py: a file lock around every mutation,
new entries made in a temp dir below the store and moved in with ``os.replace``): an entry
appears whole or not at all, so an interrupted or failed build (SIGKILL included) leaves at most
a directory under ``.tmp/``, which ``gc`` sweeps once its process is gone.

The manifest maps onto SLSA provenance v1 (https://slsa.dev/provenance/v1.0) so it can be exported
as an in-toto statement without losing anything:

- ``subject``                                   <- ``outputs`` (path as name, sha256 digest)
- ``buildDefinition.buildType``                 <- ``build-type``
- ``buildDefinition.externalParameters``        <- ``op``, ``target``, ``recipe-digest``, ``command``
- ``buildDefinition.internalParameters``        <- ``env`` (SOURCE_DATE_EPOCH, TZ, LC_ALL, ...)
- ``buildDefinition.resolvedDependencies``      <- ``inputs`` (one ResourceDescriptor per source
  file: name = path, digest.sha256) and ``toolchain`` (uri = image-ref, digest = image-id)
- ``runDetails.builder``                        <- ``ascenv-version``; builderDependencies <-
  ``toolchain.versions`` (compilers asked inside the container) and ``host``
- ``runDetails.metadata``                       <- ``key`` (invocationId), ``timings.started`` /
  ``timings.finished`` (startedOn / finishedOn)
- ``runDetails.byproducts``                     <- ``logs/build.log``
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from ascenv import serde
from ascenv.errors import InputError, SchemaError, UsageError
from ascenv.fsutil import write_atomic

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python < 3.11
    import tomli as tomllib

if TYPE_CHECKING:
    from ascenv.bench.store import BuildRun

SCHEMA = 1
MANIFEST = "manifest.toml"
BUILD_TYPE = "urn:ascenv:build:kernel:v1"  # SLSA buildType: a URI naming how to read the rest
TMP = ".tmp"  # staging directories and entries being deleted; same file system, so os.replace works
LOCKS = ".locks"
CACHEDIR_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# This directory is ascenv's build store.\n"
_CHUNK = 1 << 20


@dataclass(frozen=True)
class InputFile:
    path: str  # relative, '/'-separated
    mode: str  # octal, as git writes it: 100644, 100755, 120000 (symlink: sha256 of the target)
    size: int
    sha256: str


@dataclass(frozen=True)
class OutputFile:
    path: str  # relative to outputs/
    size: int
    sha256: str


@dataclass(frozen=True)
class Toolchain:
    image: str  # the container recipe name (containers/<image>/image.toml)
    image_ref: str  # what is pinned in containers/pins.toml: an image ID, or repository@sha256:...
    image_id: str  # the ID the engine ran
    versions: dict[str, str] = field(default_factory=dict)  # asked inside the container


@dataclass(frozen=True)
class Timings:
    started: str  # ISO 8601 UTC
    finished: str
    hash_seconds: float
    build_seconds: float
    total_seconds: float


@dataclass(frozen=True)
class Manifest:
    schema: int
    op: str
    op_type: str
    target: str
    key: str
    build_type: str
    ascenv_version: str
    source_date_epoch: int
    source_date_epoch_from: str  # "git commit <sha>", "recipe" or "default"
    source_digest: str
    recipe_digest: str
    command: tuple[str, ...]
    env: dict[str, str]
    toolchain: Toolchain
    host: dict[str, str]
    timings: Timings
    inputs: tuple[InputFile, ...] = ()
    outputs: tuple[OutputFile, ...] = ()


@dataclass(frozen=True)
class Entry:
    op: str
    key: str
    path: Path
    manifest: Optional[Manifest]
    error: Optional[str] = None  # why the manifest could not be read

    @property
    def outputs(self) -> Path:
        return self.path / "outputs"

    @property
    def manifest_sha256(self) -> Optional[str]:
        try:
            return hashlib.sha256((self.path / MANIFEST).read_bytes()).hexdigest()
        except OSError:
            return None


@dataclass(frozen=True)
class GcPlan:
    remove: tuple[Entry, ...]
    kept_referenced: tuple[Entry, ...]
    dead_tmp: tuple[Path, ...]  # staging directories below .tmp/ of processes that are gone
    # beyond --keep but holding the baseline run of these targets (<op>/.bench/baselines.json)
    kept_baseline: tuple[tuple[Entry, tuple[str, ...]], ...] = ()


@dataclass(frozen=True)
class GcResult:
    removed: tuple[Entry, ...]
    kept_referenced: tuple[Entry, ...]
    swept_tmp: tuple[str, ...]
    freed: int
    kept_baseline: tuple[tuple[Entry, tuple[str, ...]], ...] = ()


@dataclass(frozen=True)
class CheckedEntry:
    """A build, what ``Store.verify`` found wrong with it (nothing: its outputs match) and the
    bench runs in its ``bench/`` folder."""

    entry: Entry
    problems: tuple[str, ...]
    bench_runs: tuple[BuildRun, ...] = ()


@dataclass(frozen=True)
class Listing:
    """`ascenv store ls`: every build, newest first, each checked against its hashes."""

    root: Path
    builds: tuple[CheckedEntry, ...]

    @property
    def ok(self) -> bool:
        return not any(b.problems for b in self.builds)


@dataclass(frozen=True)
class Shown:
    """`ascenv store show KEY`: one checked build and its manifest.toml as stored."""

    build: CheckedEntry
    manifest_text: str


DEFAULT_LOCK = "ascenv.lock"


# hashing -------------------------------------------------------------------------------------
def sha256_file(path: Path, buffer: Optional[bytearray] = None) -> tuple[int, str]:
    """(size, hex sha256), read in 1 MiB blocks into one reused buffer (as fast as sha256sum)."""
    digest = hashlib.sha256()
    buf = buffer if buffer is not None else bytearray(_CHUNK)
    view = memoryview(buf)
    size = 0
    with open(path, "rb", buffering=0) as fh:
        while True:
            n = fh.readinto(buf)
            if not n:
                break
            digest.update(view[:n])
            size += n
    return size, digest.hexdigest()


def hash_tree(root: Path, exclude: Iterable[str] = (".git", ".ascenv")) -> tuple[InputFile, ...]:
    """Every file below ``root``: relative path, git-style mode, size and sha256; never mtimes,
    owners or directory order (paths sorted by their bytes). Symlinks are hashed as their target
    text, not followed; empty directories do not count (git does not track them either)."""
    skip = set(exclude)
    found: list[InputFile] = []
    buf = bytearray(_CHUNK)

    def walk(directory: Path, prefix: str) -> None:
        with os.scandir(directory) as it:
            entries = list(it)
        for entry in entries:
            rel = f"{prefix}{entry.name}"
            if entry.name in skip and not prefix:
                continue
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                walk(Path(entry.path), rel + "/")
            elif stat.S_ISLNK(st.st_mode):
                target = os.readlink(entry.path).encode()
                found.append(InputFile(rel, "120000", len(target), hashlib.sha256(target).hexdigest()))
            elif stat.S_ISREG(st.st_mode):
                size, digest = sha256_file(Path(entry.path), buf)
                found.append(InputFile(rel, "100755" if st.st_mode & 0o111 else "100644", size, digest))

    walk(root, "")
    return tuple(sorted(found, key=lambda f: f.path.encode()))


def tree_digest(files: Iterable[InputFile]) -> str:
    """One digest over (mode, path, sha256) lines, the shape of ``git ls-files -s``."""
    digest = hashlib.sha256()
    for f in files:
        digest.update(f"{f.mode} {f.sha256} {f.path}\n".encode())
    return digest.hexdigest()


# manifest ------------------------------------------------------------------------------------
def dumps_manifest(manifest: Manifest) -> str:
    import tomli_w

    head = "# ascenv build manifest (schema 1); maps onto SLSA provenance v1, see ascenv/store.py\n"
    return head + tomli_w.dumps(serde.to_data(manifest, key=serde.kebab))


def loads_manifest(text: str, source: str) -> Manifest:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{source}: not valid TOML: {exc}") from None
    try:
        manifest = serde.from_data(Manifest, data, key=serde.kebab)
    except SchemaError as exc:
        raise InputError(f"{source}: {exc}") from None
    if manifest.schema != SCHEMA:
        raise InputError(f"{source}: schema: this ascenv reads schema {SCHEMA}, found {manifest.schema}")
    return manifest


def output_files(outputs: Path) -> tuple[OutputFile, ...]:
    files = hash_tree(outputs, exclude=())
    return tuple(OutputFile(f.path, f.size, f.sha256) for f in files)


# the store -----------------------------------------------------------------------------------
class Store:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def entry_dir(self, op: str, key: str) -> Path:
        return self.root / op / key

    def ensure(self) -> None:
        (self.root / TMP).mkdir(parents=True, exist_ok=True)
        (self.root / LOCKS).mkdir(exist_ok=True)
        tag = self.root / "CACHEDIR.TAG"  # https://bford.info/cachedir/ ; clean-cache needs it too
        if not tag.exists():
            write_atomic(tag, CACHEDIR_TAG)  # never half a tag for a concurrent reader

    @contextlib.contextmanager
    def lock(self, name: str = "store") -> Iterator[None]:
        """An exclusive ``flock`` on ``.locks/<name>.lock``, released when the process dies."""
        self.ensure()
        with open(self.root / LOCKS / f"{name}.lock", "a+") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    @contextlib.contextmanager
    def staging(self, label: str) -> Iterator[Path]:
        """A fresh directory below ``.tmp/``, removed on every exit unless ``commit`` moved it."""
        self.ensure()
        path = Path(tempfile.mkdtemp(prefix=f"{label}.pid{os.getpid()}.", dir=self.root / TMP))
        try:
            yield path
        finally:
            _remove(path)

    def commit(self, op: str, key: str, staged: Path) -> tuple[Entry, bool]:
        """Move a complete entry in. Returns (entry, True) if ours went in, (existing, False) if an
        identical build won the race. A damaged entry under the key is replaced."""
        with self.lock():
            target = self.entry_dir(op, key)
            if target.exists():
                existing = self.get(op, key)
                if existing is not None and not self.verify(existing):
                    return existing, False
                self._delete(target)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staged, target)
            _fsync_dir(target.parent)
        entry = self.get(op, key)
        assert entry is not None
        return entry, True

    def get(self, op: str, key: str) -> Optional[Entry]:
        path = self.entry_dir(op, key)
        if not path.is_dir():
            return None
        return self._read(op, key, path)

    def _read(self, op: str, key: str, path: Path) -> Entry:
        try:
            manifest = loads_manifest((path / MANIFEST).read_text(encoding="utf-8"), str(path / MANIFEST))
        except OSError as exc:
            return Entry(op, key, path, None, f"cannot read {MANIFEST}: {exc.strerror}")
        except InputError as exc:
            return Entry(op, key, path, None, exc.message)
        return Entry(op, key, path, manifest)

    def entries(self) -> list[Entry]:
        """Every entry, newest build first."""
        found: list[Entry] = []
        if not self.root.is_dir():
            return found
        for op_dir in sorted(p for p in self.root.iterdir() if p.is_dir() and not p.name.startswith(".")):
            for key_dir in sorted(p for p in op_dir.iterdir() if p.is_dir() and not p.name.startswith(".")):
                found.append(self._read(op_dir.name, key_dir.name, key_dir))
        return sorted(found, key=lambda e: e.manifest.timings.finished if e.manifest else "", reverse=True)

    def find(self, prefix: str) -> Entry:
        """The entry whose key starts with ``prefix`` (at least 6 characters, like git)."""
        if len(prefix) < 6:
            raise UsageError(
                f"a key prefix needs at least 6 characters, found {prefix!r}",
                hint="list the builds with: ascenv store ls",
            )
        matches = [e for e in self.entries() if e.key.startswith(prefix)]
        if not matches:
            raise UsageError(
                f"no build in {self.root} has a key starting with {prefix!r}",
                hint="list the builds with: ascenv store ls",
            )
        if len(matches) > 1:
            raise UsageError(
                f"{len(matches)} builds have keys starting with {prefix!r}", hint="give more characters of the key"
            )
        return matches[0]

    def verify(self, entry: Entry) -> list[str]:
        """What is wrong with an entry: its manifest, or an output missing, changed or added."""
        if entry.manifest is None:
            return [entry.error or "no manifest"]
        problems = []
        if entry.manifest.key != entry.key or entry.manifest.op != entry.op:
            problems.append(
                f"the manifest is for {entry.manifest.op}/{entry.manifest.key}, found in {entry.op}/{entry.key}"
            )
        listed = {o.path: o for o in entry.manifest.outputs}
        present = {o.path: o for o in (output_files(entry.outputs) if entry.outputs.is_dir() else ())}
        for path, want in listed.items():
            got = present.get(path)
            if got is None:
                problems.append(f"outputs/{path}: missing")
            elif got.sha256 != want.sha256:
                problems.append(f"outputs/{path}: sha256 {got.sha256[:16]}..., the manifest says {want.sha256[:16]}...")
        problems += [f"outputs/{path}: not in the manifest" for path in sorted(set(present) - set(listed))]
        return problems

    def gc_plan(self, keep: int, referenced: Iterable[str] = (), alive=None) -> GcPlan:
        """What ``gc`` removes, without removing (nor creating) anything."""
        if keep < 0:
            raise UsageError(f"--keep must be 0 or more, found {keep}")
        wanted = set(referenced)
        alive = alive or _pid_alive
        remove: list[Entry] = []
        kept_ref: list[Entry] = []
        kept_base: list[tuple[Entry, tuple[str, ...]]] = []
        seen: dict[tuple[str, str], int] = {}
        baselines: dict[str, dict[str, str]] = {}
        for entry in self.entries():  # newest first; never <op>/.bench/, the loose runs and baselines
            group = (entry.op, entry.manifest.target if entry.manifest else "?")
            seen[group] = seen.get(group, 0) + 1
            if seen[group] <= keep:
                continue
            if self._referenced(entry, wanted):
                kept_ref.append(entry)
            elif targets := self._baseline_of(entry, baselines):
                kept_base.append((entry, targets))
            else:
                remove.append(entry)
        tmp = self.root / TMP
        dead = [p for p in sorted(tmp.iterdir() if tmp.is_dir() else ()) if _dead_staging(p, alive)]
        return GcPlan(tuple(remove), tuple(kept_ref), tuple(dead), tuple(kept_base))

    def gc(self, keep: int, referenced: Iterable[str] = (), alive=None) -> GcResult:
        """Keep the ``keep`` newest builds of each op and target, every build whose manifest
        digest (sha256 of manifest.toml) or key is in ``referenced``, and every build holding a
        baseline run (deleting it would leave ``ascenv bench compare`` a baseline that names a
        missing run); delete the others with their bench runs, and the staging directories of
        processes that are gone."""
        freed = 0
        with self.lock():
            plan = self.gc_plan(keep, referenced, alive)
            for entry in plan.remove:
                freed += _size(entry.path)
                self._delete(entry.path)
            for path in plan.dead_tmp:
                freed += _size(path)
                _remove(path)
            for op_dir in self.root.iterdir():
                if op_dir.is_dir() and not op_dir.name.startswith(".") and not any(op_dir.iterdir()):
                    op_dir.rmdir()
        return GcResult(
            plan.remove, plan.kept_referenced, tuple(p.name for p in plan.dead_tmp), freed, plan.kept_baseline
        )

    def discard(self, path: Path, referenced: Iterable[str] = (), alive=None) -> Optional[str]:
        """Remove one thing ``gc_plan`` listed, if it still qualifies under the lock: a build no
        lock references, or a staging directory whose process is gone. Why not, or None."""
        path = Path(path)
        with self.lock():
            if path.parent == self.root / TMP:
                if not _dead_staging(path, alive or _pid_alive):
                    return "its process is running again"
                _remove(path)
                return None
            op, key = path.parent.name, path.name
            is_build = path.parent.parent == self.root and not key.startswith(".") and not op.startswith(".")
            entry = self.get(op, key) if is_build else None
            if entry is None:
                return None if not path.exists() else "not a build in the store"
            if self._referenced(entry, set(referenced)):
                return "a lock references it"
            targets = self._baseline_of(entry, {})
            if targets:
                return f"it holds the bench baseline of {', '.join(targets)}"
            self._delete(entry.path)
            with contextlib.suppress(OSError):
                path.parent.rmdir()  # the op's last build
        return None

    @staticmethod
    def _referenced(entry: Entry, wanted: set) -> bool:
        return entry.key in wanted or entry.manifest_sha256 in wanted

    def _baseline_of(self, entry: Entry, cache: dict[str, dict[str, str]]) -> tuple[str, ...]:
        """The targets whose baseline run is in this entry's ``bench/``. An unreadable
        baselines.json stops gc (InputError naming it) rather than guess what may go."""
        from ascenv.bench.store import read_baselines

        if entry.op not in cache:
            cache[entry.op] = read_baselines(self.root, entry.op)
        bench = entry.path / "bench"
        return tuple(sorted(t for t, run in cache[entry.op].items() if (bench / f"{run}.json").is_file()))

    def _delete(self, path: Path) -> None:
        """Rename out of sight first, so no reader ever sees half an entry."""
        trash = Path(tempfile.mkdtemp(prefix=f"trash.pid{os.getpid()}.", dir=self.root / TMP))
        os.replace(path, trash / "entry")
        _remove(trash)


def _pid_of(name: str) -> Optional[int]:
    """Staging directories are named ``<label>.pid<pid>.<random>``."""
    found = re.search(r"\.pid(\d+)\.", name)
    return int(found.group(1)) if found else None


def _dead_staging(path: Path, alive: Callable[[int], bool]) -> bool:
    pid = _pid_of(path.name)
    return pid is None or not alive(pid)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _size(path: Path) -> int:
    total = 0
    for dirpath, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, name)).st_size
    return total


def _remove(path: Path) -> None:
    """rmtree that also removes read-only files and directories (store outputs are made read-only)."""
    if path.exists() or path.is_symlink():
        if sys.version_info >= (3, 12):
            shutil.rmtree(path, onexc=_unlock_and_retry)
        else:  # pragma: no cover
            shutil.rmtree(path, onerror=_unlock_and_retry)


def _unlock_and_retry(func: Callable[[str], object], target: str, _exc: object) -> None:
    """Make the parent writable (unlinking needs that, not a writable file) and a directory
    listable, then try again. Never chmod through a symlink: a build output linking to a file of
    the user's outside the store must not get its mode changed on the way out."""
    with contextlib.suppress(OSError):
        os.chmod(os.path.dirname(target), 0o755)
        if stat.S_ISDIR(os.lstat(target).st_mode):
            os.chmod(target, 0o755)
    func(target)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def checked(store: Store, entry: Entry, baselines: Optional[dict[str, dict[str, str]]] = None) -> CheckedEntry:
    """An entry with its problems and its bench runs. The runs are read from ``bench/`` now,
    never written into manifest.toml: that file's sha256 is what locks pin and what `ascenv
    install` copies beside a vendor, so a manifest rewritten after commit would break every lock
    and installed vendor that names the build; a run added later must not change the build's
    identity either."""
    from ascenv.bench.store import build_runs, read_baselines

    known = baselines if baselines is not None else {}
    if entry.op not in known:
        try:
            known[entry.op] = read_baselines(store.root, entry.op)
        except InputError:
            known[entry.op] = {}  # `ascenv bench` names the damaged file; a listing still lists
    return CheckedEntry(entry, tuple(store.verify(entry)), build_runs(entry.path, known[entry.op]))


def list_builds(store: Store) -> Listing:
    baselines: dict[str, dict[str, str]] = {}
    return Listing(store.root, tuple(checked(store, e, baselines) for e in store.entries()))


def show_build(store: Store, prefix: str) -> Shown:
    entry = store.find(prefix)
    text = (entry.path / MANIFEST).read_text(encoding="utf-8", errors="replace")
    return Shown(checked(store, entry), text)


def referenced_builds(locks: Iterable[str], cwd: str) -> set[str]:
    """Manifest digests of the vendors the locks list (``vendors[].manifest_digest``: the sha256 of
    the ascenv-manifest.toml that `ascenv install` copies, byte for byte, from the store). Without
    a lock named, ``ascenv.lock`` in ``cwd`` is read when it exists."""
    from ascenv.lockfile import read_lock

    named = list(locks)
    paths = [os.path.join(cwd, p) for p in named]
    default = os.path.join(cwd, DEFAULT_LOCK)
    if not named and os.path.exists(default):
        paths.append(default)
    found: set[str] = set()
    for path in paths:
        lock, _ = read_lock(path, str(Path(path)))
        found |= {v.manifest_digest for v in lock.vendors if v.manifest_digest}
    return found
