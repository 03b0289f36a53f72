"""The content-addressed build store: ``<store>/<op>/<key>/`` holds ``outputs/``, ``manifest.toml``,
``logs/`` and ``bench/`` of one build, where ``key`` is the build key (``builder.build_key``).

Crash safety follows pre-commit's store (pre_commit/store.py: a file lock around every mutation,
new entries made in a temp dir below the store and moved in with ``os.replace``): an entry
appears whole or not at all, so an interrupted or failed build (SIGKILL included) leaves at most
a directory under ``.tmp/``, which ``gc`` sweeps once its process is gone (only staging of this
host: its name records the host, since a store shared over NFS holds other hosts' staging).

Deletion only of what ascenv made: a store is a directory holding ascenv's ``CACHEDIR.TAG``
(``tag_problem``), written only when ascenv creates the store; listing and gc never create one.
A build is ``<op>/<64-hex key>/`` holding a regular ``manifest.toml``, found with ``lstat`` (no
symlink followed); anything else is a ``Stray``, listed and left alone. A build is deleted by
renaming it through directory descriptors opened with ``O_NOFOLLOW`` into ``.tmp/``, then removed.

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
import errno
import fcntl
import hashlib
import os
import re
import secrets
import shutil
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Union

from ascenv import serde
from ascenv.errors import InputError, SchemaError, UsageError
from ascenv.fsutil import TEMP_PREFIX, file_kind, read_input, write_atomic
from ascenv.names import is_name
from ascenv.store_tag import (
    CACHEDIR_TAG,
    DIR_FLAGS,
    TAG,
    TAG_MARK,
    TAG_SIGNATURE,
    tag_problem,
    tag_problem_at,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python < 3.11
    import tomli as tomllib

SCHEMA = 1
MANIFEST = "manifest.toml"
BUILD_TYPE = "urn:ascenv:build:kernel:v1"  # SLSA buildType: a URI naming how to read the rest
TMP = ".tmp"  # staging directories and entries being deleted; same file system, so os.replace works
LOCKS = ".locks"
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
    digest: Optional[str] = None  # sha256 of manifest.toml as read (None: it could not be read)

    @property
    def outputs(self) -> Path:
        return self.path / "outputs"

    @property
    def manifest_sha256(self) -> Optional[str]:
        """The sha256 of manifest.toml, of the bytes read with the entry (never read again: a
        file swapped for a FIFO meanwhile cannot hang it)."""
        return self.digest


@dataclass(frozen=True)
class Stray:
    """Something in a store that is not a build, and why: listed, never deleted."""

    path: str  # relative to the store, '/'-separated
    why: str


@dataclass(frozen=True)
class GcPlan:
    remove: tuple[Entry, ...]
    kept_referenced: tuple[Entry, ...]
    dead_tmp: tuple[Path, ...]  # staging directories below .tmp/ of processes that are gone
    # beyond --keep but holding the baseline run of these targets (<op>/.bench/baselines.json)
    kept_baseline: tuple[tuple[Entry, tuple[str, ...]], ...] = ()
    left_alone: tuple[Stray, ...] = ()  # not a build (or damaged, or not ascenv's staging): never deleted


@dataclass(frozen=True)
class GcResult:
    removed: tuple[Entry, ...]
    kept_referenced: tuple[Entry, ...]
    swept_tmp: tuple[str, ...]
    freed: int
    kept_baseline: tuple[tuple[Entry, tuple[str, ...]], ...] = ()
    left_alone: tuple[Stray, ...] = ()
    problems: tuple[str, ...] = ()  # planned but not (fully) deleted, and why: exit 1

    @property
    def ok(self) -> bool:
        return not self.problems


DEFAULT_LOCK = "ascenv.lock"


# hashing -------------------------------------------------------------------------------------
def sha256_file(path: Path, buffer: Optional[bytearray] = None) -> tuple[int, str]:
    """(size, hex sha256), read in 1 MiB blocks into one reused buffer (as fast as sha256sum).
    Only a regular file: opened non-blocking (a FIFO swapped in after the caller's lstat cannot
    hang the read) and without following a symlink; anything else is an OSError (EINVAL)."""
    digest = hashlib.sha256()
    buf = buffer if buffer is not None else bytearray(_CHUNK)
    view = memoryview(buf)
    size = 0
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise OSError(errno.EINVAL, f"{file_kind(mode)}, not a regular file", str(path))
    os.set_blocking(fd, True)
    with open(fd, "rb", buffering=0) as fh:
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
                try:
                    size, digest = sha256_file(Path(entry.path), buf)
                except OSError as exc:
                    if exc.errno not in (errno.EINVAL, errno.ELOOP):
                        raise
                    continue  # swapped since the lstat for a FIFO or a link: not a file, as above
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
    except RecursionError:
        raise InputError(f"{source}: not an ascenv manifest (TOML nested too deep)") from None
    except ValueError as exc:  # TOMLDecodeError, or an integer longer than Python reads (sys.int_info)
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
MANIFEST_LIMIT = 8 << 20  # a manifest lists every source file (~150 bytes each): ~50,000 files
STAGING_AGE = 7 * 86400  # staging of another host (or an older ascenv) is swept only after a week
OWN_HIDDEN = (TMP, LOCKS, ".failed")  # what ascenv itself keeps at the top of a store
KEY = re.compile(r"[0-9a-f]{64}")  # a build key is a sha256 (builder.build_key)
_STAGING = re.compile(r"(?P<label>.+?)\.(?:(?P<host>h[0-9a-f]{12})\.)?pid(?P<pid>[0-9]{1,10})\.[A-Za-z0-9_]+")


def this_host() -> str:
    """This host in a staging directory's name (``h`` and 12 hex digits of the sha256 of the node
    name): a store shared over NFS holds staging of several hosts, and a pid says whether a
    process runs only on the host that made it."""
    node = os.uname().nodename.encode("utf-8", "surrogateescape")
    return "h" + hashlib.sha256(node).hexdigest()[:12]


class Store:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def entry_dir(self, op: str, key: str) -> Path:
        return self.root / op / key

    # what the store is -----------------------------------------------------------------------
    def exists(self) -> bool:
        return os.path.lexists(self.root)

    def require(self) -> None:
        """Refuse (exit 2) to work in a directory that is not an ascenv store: one without
        ascenv's tag, or nothing at all. Deleting and listing never create a store."""
        if not self.exists():
            raise UsageError(
                f"no build store at {self.root}",
                hint="`ascenv build` creates one; name another with --store DIR or ASCENV_STORE",
            )
        problem = tag_problem(self.root)
        if problem is not None:
            raise UsageError(
                f"{self.root} is not an ascenv build store: {problem}; ascenv only lists and deletes in a"
                " directory it created",
                hint=f"check --store / ASCENV_STORE; a store ascenv made holds {TAG} starting with {TAG_SIGNATURE!r}"
                f" and the line {TAG_MARK!r}",
            )

    def ensure(self) -> None:
        """Create the store, tagged, if there is none (or the directory is empty, or holds only
        what ascenv writes there, such as bench runs imported before any build); refuse a
        directory ascenv did not make. Errors (a read-only file system) are exit 2."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            problem = tag_problem(self.root)
            if problem is not None:
                if os.path.lexists(self.root / TAG) or not self._only_ascenv_content():
                    self.require()  # raises, naming the problem
                write_atomic(self.root / TAG, CACHEDIR_TAG)  # never half a tag for a concurrent reader
            for name in (TMP, LOCKS):
                with contextlib.suppress(FileExistsError):
                    os.mkdir(self.root / name)
                if not stat.S_ISDIR(os.lstat(self.root / name).st_mode):
                    raise UsageError(
                        f"{self.root / name} is not a directory (a symbolic link is not followed)",
                        hint="ascenv keeps its staging and locks there: move it away and rerun",
                    )
        except OSError as exc:
            raise UsageError(
                f"cannot create the build store {self.root}: {exc.strerror or exc}",
                hint="name a writable place with --store DIR or ASCENV_STORE",
            ) from None

    def _only_ascenv_content(self) -> bool:
        """True when every name in the root is one ascenv writes: its own hidden directories and
        ``<op>/`` holding only ``.bench/``, 64-hex build directories and ``<key>/bench/`` (bench
        runs imported for a build key, ``bench import --build``)."""
        for name in os.listdir(self.root):
            if name.startswith("."):
                # a concurrent ascenv writing the tag leaves its temporary file for a moment
                # (fsutil.write_atomic): two first builds into a new store raced on it
                if name not in OWN_HIDDEN and not (name.startswith(TEMP_PREFIX) and name.endswith(".tmp")):
                    return False
                continue
            path = self.root / name
            if not is_name(name) or not stat.S_ISDIR(os.lstat(path).st_mode):
                return False
            if any(not _ascenv_made(path, k) for k in os.listdir(path)):
                return False
        return True

    @contextlib.contextmanager
    def lock(self, name: str = "store", on_wait: Optional[Callable[[], None]] = None) -> Iterator[None]:
        """An exclusive ``flock`` on ``.locks/<name>.lock``, released when the process dies.
        ``on_wait`` is called once when another process holds it, before waiting: a wait of
        minutes must not look like a hang."""
        self.ensure()
        path = self.root / LOCKS / f"{name}.lock"
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o644)
        except OSError as exc:
            raise UsageError(
                f"cannot lock the build store: {path}: {exc.strerror or exc}",
                hint="the store must be writable (a symbolic link is not followed)",
            ) from None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if on_wait is not None:
                    on_wait()
                fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the flock

    @contextlib.contextmanager
    def staging(self, label: str) -> Iterator[Path]:
        """A fresh directory below ``.tmp/``, named ``<label>.<host>.pid<pid>.<random>``, removed
        on every exit unless ``commit`` moved it."""
        self.ensure()
        prefix = f"{label}.{this_host()}.pid{os.getpid()}."
        path = Path(tempfile.mkdtemp(prefix=prefix, dir=self.root / TMP))
        try:
            yield path
        finally:
            _remove(path)

    def commit(self, op: str, key: str, staged: Path) -> tuple[Entry, bool]:
        """Move a complete entry in. Returns (entry, True) if ours went in, (existing, False) if an
        identical build won the race. A damaged entry under the key is replaced."""
        _check_name(op, key)
        with self.lock():
            op_dir = self.root / op
            with contextlib.suppress(FileExistsError):
                op_dir.mkdir()
            if not stat.S_ISDIR(os.lstat(op_dir).st_mode):
                raise UsageError(
                    f"{op_dir} is not a directory (a symbolic link is not followed)",
                    hint="move it out of the store and rerun",
                )
            target = op_dir / key
            if os.path.lexists(target):
                existing = self.get(op, key)
                if existing is not None and existing.manifest is not None and not self.verify(existing):
                    return existing, False
                self._move_out(op, key)
            os.replace(staged, target)
            _fsync_dir(op_dir)
        entry = self.get(op, key)
        assert entry is not None
        return entry, True

    # reading ---------------------------------------------------------------------------------
    def get(self, op: str, key: str) -> Optional[Entry]:
        """The build ``<op>/<key>`` (its manifest possibly damaged), or None when nothing of a
        build's shape is there: names that are not one path component, symlinked directories
        and a missing ``manifest.toml`` are not builds."""
        if not (is_name(op) and KEY.fullmatch(key)):
            return None
        path = self.entry_dir(op, key)
        if not (_is_real_dir(self.root / op) and _is_real_dir(path) and os.path.lexists(path / MANIFEST)):
            return None
        return self._read(op, key, path)

    def _read(self, op: str, key: str, path: Path) -> Entry:
        """The manifest read with the input rules (a regular file, at most MANIFEST_LIMIT bytes,
        never a FIFO or device, nesting too deep is damage): a damaged one is named, never fatal."""
        where = path / MANIFEST
        try:
            if stat.S_ISLNK(os.lstat(where).st_mode):
                return Entry(op, key, path, None, f"{MANIFEST} is a symbolic link (not followed)")
            data = read_input(where, what="", shown=str(where), limit=MANIFEST_LIMIT)
        except OSError as exc:
            return Entry(op, key, path, None, f"cannot read {MANIFEST}: {exc.strerror or exc}")
        except InputError as exc:
            return Entry(op, key, path, None, exc.message)
        digest = hashlib.sha256(data).hexdigest()
        try:
            manifest = loads_manifest(data.decode("utf-8"), str(where))
        except UnicodeDecodeError as exc:
            return Entry(op, key, path, None, f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start})", digest)
        except InputError as exc:
            return Entry(op, key, path, None, exc.message, digest)
        return Entry(op, key, path, manifest, None, digest)

    def survey(self) -> tuple[list[Entry], list[Stray]]:
        """Every build (``<op>/<64-hex key>/`` directories, neither a symlink, holding a
        ``manifest.toml``), newest first, and everything else that is not ascenv's own. Hidden
        names (``.tmp``, ``.locks``, ``<op>/.bench``) are ascenv's and not listed."""
        found: list[Entry] = []
        strays: list[Stray] = []
        if not os.path.isdir(self.root):  # the root itself may be a symlink the user named
            return found, strays
        for op in sorted(os.listdir(self.root)):
            if op.startswith(".") or op == TAG:
                continue
            why = _not_a_dir(self.root / op) or (None if is_name(op) else "not an operator name")
            if why:
                strays.append(Stray(op, why))
                continue
            for key in sorted(_listdir(self.root / op)):
                if key.startswith("."):
                    continue
                path = self.root / op / key
                why = _not_a_dir(path) or (None if KEY.fullmatch(key) else "its name is not a 64-hex build key")
                if not why and not os.path.lexists(path / MANIFEST):
                    why = f"it holds no {MANIFEST}"
                if why:
                    strays.append(Stray(f"{op}/{key}", why))
                else:
                    found.append(self._read(op, key, path))
        found.sort(key=lambda e: e.manifest.timings.finished if e.manifest else "", reverse=True)
        return found, strays

    def entries(self) -> list[Entry]:
        """Every build, newest build first."""
        return self.survey()[0]

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
        present = {o.path: o for o in (output_files(entry.outputs) if _is_real_dir(entry.outputs) else ())}
        for path, want in listed.items():
            got = present.get(path)
            if got is None:
                problems.append(f"outputs/{path}: missing")
            elif got.sha256 != want.sha256:
                problems.append(f"outputs/{path}: sha256 {got.sha256[:16]}..., the manifest says {want.sha256[:16]}...")
        problems += [f"outputs/{path}: not in the manifest" for path in sorted(set(present) - set(listed))]
        return problems

    # gc --------------------------------------------------------------------------------------
    def gc_plan(self, keep: int, referenced: Iterable[str] = (), alive=None, now: Optional[float] = None) -> GcPlan:
        """What ``gc`` removes, without removing (nor creating) anything. Only builds whose
        manifest reads are candidates; a damaged build and anything not shaped as a build is
        left alone and listed."""
        if keep < 0:
            raise UsageError(f"--keep must be 0 or more, found {keep}")
        self.require()
        wanted = set(referenced)
        alive = alive or _pid_alive
        remove: list[Entry] = []
        kept_ref: list[Entry] = []
        kept_base: list[tuple[Entry, tuple[str, ...]]] = []
        seen: dict[tuple[str, str], int] = {}
        baselines: dict[str, dict[str, str]] = {}
        builds, strays = self.survey()
        left = list(strays)
        for entry in builds:  # newest first; never <op>/.bench/, the loose runs and baselines
            if entry.manifest is None:
                left.append(Stray(f"{entry.op}/{entry.key}", f"damaged ({entry.error}); remove it by hand"))
                continue
            group = (entry.op, entry.manifest.target)
            seen[group] = seen.get(group, 0) + 1
            if seen[group] <= keep:
                continue
            if self._referenced(entry, wanted):
                kept_ref.append(entry)
            elif targets := self._baseline_of(entry, baselines):
                kept_base.append((entry, targets))
            else:
                remove.append(entry)
        dead: list[Path] = []
        tmp = self.root / TMP
        for name in sorted(_listdir(tmp) if _is_real_dir(tmp) else ()):
            verdict = _staging_verdict(tmp / name, alive, time.time() if now is None else now)
            if verdict is True:
                dead.append(tmp / name)
            elif verdict:
                left.append(Stray(f"{TMP}/{name}", verdict))
        return GcPlan(tuple(remove), tuple(kept_ref), tuple(dead), tuple(kept_base), tuple(left))

    def gc(self, keep: int, referenced: Iterable[str] = (), alive=None) -> GcResult:
        """Keep the ``keep`` newest builds of each op and target, every build whose manifest
        digest (sha256 of manifest.toml) or key is in ``referenced``, and every build holding a
        baseline run (deleting it would leave ``ascenv bench compare`` a baseline that names a
        missing run); delete the others with their bench runs, and the staging directories of
        this host's processes that are gone. Refuses a directory that is not an ascenv store."""
        self.require()  # before the lock: locking would create .locks/ in whatever the root is
        freed = 0
        removed: list[Entry] = []
        swept: list[str] = []
        problems: list[str] = []
        with self.lock():
            plan = self.gc_plan(keep, referenced, alive)
            for entry in plan.remove:
                size = _size(entry.path)
                why = self._delete_build(entry.op, entry.key)
                if why is None:
                    removed.append(entry)
                    freed += size
                else:
                    problems.append(f"{entry.op}/{entry.key}: {why}")
            for path in plan.dead_tmp:
                size = _size(path)
                failed = _remove(path)
                if failed:
                    problems.append(f"{TMP}/{path.name}: not fully removed ({failed[0]})")
                else:
                    swept.append(path.name)
                    freed += size
            for op in sorted({e.op for e in removed}):
                with contextlib.suppress(OSError):
                    os.rmdir(self.root / op)  # the op's last build went; rmdir keeps a non-empty one
        return GcResult(
            tuple(removed),
            plan.kept_referenced,
            tuple(swept),
            freed,
            plan.kept_baseline,
            plan.left_alone,
            tuple(problems),
        )

    def discard(self, path: Path, referenced: Iterable[str] = (), alive=None) -> Optional[str]:
        """Remove one thing ``gc_plan`` listed, if it still qualifies under the lock: a build no
        lock references, or a staging directory of this host whose process is gone (or another
        host's, a week old). Why not, or None."""
        path = Path(path)
        problem = tag_problem(self.root)
        if problem is not None:  # untagged since the plan: nothing in it is ascenv's to delete
            return f"the store is no longer an ascenv store ({problem}), left alone"
        with self.lock():
            if path.parent == self.root / TMP:
                verdict = _staging_verdict(path, alive or _pid_alive, time.time())
                if verdict is not True:
                    return verdict or "its process is running again"
                failed = _remove(path)
                return f"not fully removed: {failed[0]}" if failed else None
            op, key = path.parent.name, path.name
            entry = self.get(op, key) if path.parent.parent == self.root else None
            if entry is None:
                return None if not os.path.lexists(path) else "not a build in the store, left alone"
            if entry.manifest is None:
                return f"damaged ({entry.error}), left alone"
            if self._referenced(entry, set(referenced)):
                return "a lock references it"
            targets = self._baseline_of(entry, {})
            if targets:
                return f"it holds the bench baseline of {', '.join(targets)}"
            why = self._delete_build(op, key)
            with contextlib.suppress(OSError):
                os.rmdir(path.parent)  # the op's last build
        return why

    @staticmethod
    def _referenced(entry: Entry, wanted: set) -> bool:
        return entry.key in wanted or entry.manifest_sha256 in wanted

    def _baseline_of(self, entry: Entry, cache: dict[str, dict[str, str]]) -> tuple[str, ...]:
        """The targets whose baseline run is in this entry's ``bench/``. An unreadable
        baselines.json stops gc (InputError naming it) rather than guess what may go."""
        from ascenv.bench.baselines import read_baselines

        if entry.op not in cache:
            cache[entry.op] = read_baselines(self.root, entry.op)
        bench = entry.path / "bench"
        return tuple(sorted(t for t, run in cache[entry.op].items() if (bench / f"{run}.json").is_file()))

    # deleting --------------------------------------------------------------------------------
    def _delete_build(self, op: str, key: str) -> Optional[str]:
        """Delete the build ``<op>/<key>`` if it still has a build's shape: why not, or None."""
        return self._move_out(op, key, build_only=True)

    def _move_out(self, op: str, key: str, build_only: bool = False) -> Optional[str]:
        """Rename ``<op>/<key>`` into ``.tmp/`` (out of sight: no reader ever sees half an entry)
        and remove it there. The rename goes through descriptors of the root, ``<op>`` and
        ``.tmp`` opened without following a symlink, so a directory swapped for a link after
        the listing fails (ELOOP) instead of leading out of the store; what is renamed is the
        name itself (a symlink goes as a link). ``build_only``: only a directory holding a
        regular ``manifest.toml``. Why not, or None (gone, also when it went meanwhile)."""
        trash = f"trash.{this_host()}.pid{os.getpid()}.{secrets.token_hex(4)}"
        fds: list[int] = []
        try:
            fds.append(os.open(os.path.realpath(self.root), DIR_FLAGS))
            if tag_problem_at(fds[0]) is not None:
                return "the store lost its tag, left alone"
            fds.append(os.open(op, DIR_FLAGS, dir_fd=fds[0]))
            fds.append(os.open(TMP, DIR_FLAGS, dir_fd=fds[0]))
            op_fd, tmp_fd = fds[1], fds[2]
            if build_only:
                fds.append(os.open(key, DIR_FLAGS, dir_fd=op_fd))
                try:
                    manifest = os.lstat(MANIFEST, dir_fd=fds[3]).st_mode
                except FileNotFoundError:
                    return f"it holds no {MANIFEST} any more, left alone"
                if not stat.S_ISREG(manifest):
                    return f"its {MANIFEST} is not a regular file, left alone"
            os.mkdir(trash, 0o700, dir_fd=tmp_fd)
            try:
                os.rename(key, f"{trash}/entry", src_dir_fd=op_fd, dst_dir_fd=tmp_fd)
            except OSError:
                os.rmdir(trash, dir_fd=tmp_fd)
                raise
        except FileNotFoundError:
            return None  # gone meanwhile: nothing to do
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                return "changed after the scan (a symbolic link or a file in its path), left alone"
            return f"cannot be moved out of sight ({exc.strerror or exc}), left alone"
        finally:
            for fd in fds:
                os.close(fd)
        failed = _remove(Path(os.path.realpath(self.root)) / TMP / trash)
        return f"not fully removed ({failed[0]}); the rest is in {TMP}/{trash}" if failed else None


def _check_name(op: str, key: str) -> None:
    if not is_name(op):
        raise UsageError(f"{op!r} is not an operator name (letters, digits, '_', '.', '-'; one path component)")
    if not KEY.fullmatch(key):
        raise UsageError(f"{key!r} is not a build key (64 lower-case hex digits)")


def _ascenv_made(op_dir: Path, name: str) -> bool:
    if name == ".bench" or KEY.fullmatch(name):
        return True
    return _is_real_dir(op_dir / name) and _listdir(op_dir / name) == ["bench"]


def _is_real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _not_a_dir(path: Path) -> Optional[str]:
    """Why ``path`` is not a directory ascenv made (None: it is one), never following a link."""
    try:
        mode = os.lstat(path).st_mode
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if stat.S_ISLNK(mode):
        return "a symbolic link (not followed)"
    return None if stat.S_ISDIR(mode) else f"{file_kind(mode)}, not a build directory"


def _listdir(path: Path) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def _staging_verdict(path: Path, alive: Callable[[int], bool], now: float) -> Union[bool, str]:
    """True: a staging (or trash) directory to sweep; False: one to keep, unsaid (its process
    runs); a string: kept, and why. Staging is ``<label>.<host>.pid<pid>.<random>``: this host's
    is swept when its process is gone; another host's (its pid means nothing here) and one
    without a host (ascenv 0.1.0) only when STAGING_AGE old; anything else is not ascenv's."""
    named = _STAGING.fullmatch(path.name)
    if named is None:
        return "not a staging directory ascenv names, left alone"
    try:
        info = os.lstat(path)
    except OSError:
        return False  # gone meanwhile
    if not stat.S_ISDIR(info.st_mode):
        return f"{file_kind(info.st_mode) if not stat.S_ISLNK(info.st_mode) else 'a symbolic link'}, left alone"
    if named.group("host") == this_host():
        return not alive(int(named.group("pid")))
    if now - info.st_mtime > STAGING_AGE:  # mtime: set when the staging was made and filled
        return True
    whose = "another host's" if named.group("host") else "made by an older ascenv (no host recorded)"
    return f"staging {whose}, kept until it is {STAGING_AGE // 86400} days old"


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


def _remove(path: Path) -> list[str]:
    """rmtree that also removes read-only files and directories (store outputs are made
    read-only); what could not be removed (an immutable file: ``chattr +i``) is returned, not
    raised, so that the caller reports it and goes on."""
    failed: list[str] = []

    def retry(func: Callable[[str], object], target: str, _exc: object) -> None:
        try:
            _unlock_and_retry(func, target, _exc)
        except FileNotFoundError:
            pass
        except OSError as exc:
            failed.append(f"{target}: {exc.strerror or exc}")

    if os.path.lexists(path):
        if sys.version_info >= (3, 12):
            shutil.rmtree(path, onexc=retry)
        else:  # pragma: no cover
            shutil.rmtree(path, onerror=retry)
    return failed


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
