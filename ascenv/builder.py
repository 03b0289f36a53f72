"""``ascenv build``: an operator project's recipe (``kernel.toml``) + its pinned image + its
sources -> a build in a fresh container -> an entry in the store (``ascenv.store``).

The build key is the sha256 of a canonical JSON of: the source tree digest (paths, modes,
contents; ``store.hash_tree``), the recipe digest (the target's image, build argv and outputs),
the target, the pinned image ID, the ascenv version and ``SOURCE_DATE_EPOCH``. The last is an
input of the build (compilers and packers embed it), so leaving it out would let a hit serve
outputs made with another timestamp: the "undeclared input poisons the cache" failure of Bazel
remote caches (bazelbuild/bazel#7026).

Inside the container: no network, the sources read-only at ``/ascenv/src``, outputs written to
``/ascenv/out``, scratch in ``/ascenv/work``; ``SOURCE_DATE_EPOCH``, ``TZ=UTC``, ``LC_ALL=C``,
umask 022, and ``BUILD_PATH_PREFIX_MAP`` (https://reproducible-builds.org/specs/build-path-prefix-map/)
naming the fixed paths. The fixed paths already make the build independent of where the project
sits on the host; ``--verify`` proves it by building a second time from a copy elsewhere.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from ascenv import proc, store
from ascenv.accuracy.spec import Accuracy
from ascenv.accuracy.spec import validate as validate_accuracy
from ascenv.containers import images
from ascenv.containers.engine import Engine, Mount, RunResult
from ascenv.containers.recipe import parse_data, read_toml
from ascenv.errors import BuildFailed, DataFileError, ImageNotAvailable, NotReproducible, Unpinned, UsageError
from ascenv.names import name_problem
from ascenv.words import counted

RECIPE_FILE = "kernel.toml"
SCHEMA = 1
SRC, OUT, WORK = "/ascenv/src", "/ascenv/out", "/ascenv/work"
PLACEHOLDERS = {"src": SRC, "out": OUT, "work": WORK}
SHAPE = "shape"  # one more placeholder, in a benchmark's argv and tiling only
# an accuracy argv's own: {shape}, its element count and the directory of <tensor>.bin files
ACCURACY_PLACES = (SHAPE, "elements", "data")
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
LABEL_OP, LABEL_KEY, PURPOSE_LABEL = "ascenv.op", "ascenv.build-key", "ascenv.purpose"
TOOLCHAIN_FILE = "toolchain.txt"  # in {work}: what TOOLCHAIN_PROBE printed
# Asked inside the container, one "name: first line of --version" per tool found; CANN's compiler
# version from compiler/version.info ("Version=7.7.0.1.238" in CANN 8.1.RC1, github:leideng/CANN-8.1.RC1
# @551ed27c29284929bbdc2239e929ddfedfdf0b8b:Ascend/ascend-toolkit/8.1.RC1/compiler/version.info)
# under $ASCEND_HOME_PATH or the default path.
TOOLCHAIN_PROBE = r"""
for t in gcc g++ clang cmake make; do
  command -v "$t" >/dev/null 2>&1 && echo "$t: $("$t" --version 2>&1 | head -n 1)"
done
for f in "${ASCEND_HOME_PATH:-/usr/local/Ascend/ascend-toolkit/latest}/compiler/version.info"; do
  [ -r "$f" ] && echo "cann-compiler: $(grep -m1 '^Version=' "$f" | cut -d= -f2)"
done
[ -r /etc/os-release ] && echo "os: $(. /etc/os-release && echo "$PRETTY_NAME")"
"""
# The build's argv, after the probe has written its answers into {work} (passed in the
# environment, so it needs no quoting; "$@" is the build argv).
PROBE_THEN_BUILD = (
    f'sh -c "$ASCENV_TOOLCHAIN_PROBE" > {WORK}/{TOOLCHAIN_FILE} 2>/dev/null; unset ASCENV_TOOLCHAIN_PROBE; exec "$@"'
)


# the recipe ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Step:
    name: str
    argv: tuple[str, ...]


@dataclass(frozen=True)
class Benchmark:
    name: str
    argv: tuple[str, ...]
    measures: str
    shapes: tuple[str, ...] = ()  # the shapes it runs over, each put in for {shape}
    tiling: tuple[str, ...] = ()  # argv printing the tiling chosen for {shape} (optional)
    timing: str = "wall"  # wall: timed around each run; printed: the sum of the time_ns=N it prints


@dataclass(frozen=True)
class Target:
    image: str
    build: tuple[str, ...]
    outputs: tuple[str, ...]
    tests: tuple[Step, ...] = ()
    benchmarks: tuple[Benchmark, ...] = ()
    source_date_epoch: Optional[int] = None  # used when the sources are not in git
    accuracy_argv: tuple[str, ...] = ()  # the program `ascenv test` runs per shape


@dataclass(frozen=True)
class KernelRecipe:
    schema: int
    name: str
    op_type: str
    targets: dict[str, Target]
    description: str = ""
    accuracy: Optional[Accuracy] = None  # `ascenv test`: inputs, reference, tolerances


def load_recipe(kernel_dir: Path) -> KernelRecipe:
    path = kernel_dir / RECIPE_FILE
    if not path.is_file():
        raise UsageError(
            f"{kernel_dir} has no {RECIPE_FILE}",
            hint="an operator project needs a kernel.toml recipe (see kernels/add_custom/kernel.toml)",
        )
    recipe = parse_data(KernelRecipe, read_toml(path), str(path))
    validate(recipe, str(path))
    return recipe


def validate(recipe: KernelRecipe, source: str) -> None:
    """What the types cannot say; each message names the key path."""
    if recipe.schema != SCHEMA:
        raise DataFileError(f"{source}: schema: this ascenv reads schema {SCHEMA}, found {recipe.schema}")
    problem = name_problem(recipe.name)
    if problem:
        raise DataFileError(f"{source}: name: {problem}, found {recipe.name!r}")
    if not recipe.targets:
        raise DataFileError(f"{source}: targets: declare at least one [targets.<name>] table")
    if recipe.accuracy is not None:
        validate_accuracy(recipe.accuracy, f"{source}: accuracy")
    for name, target in recipe.targets.items():
        where = f"{source}: targets.{name}"
        if not target.build:
            raise DataFileError(f"{where}.build: expected a non-empty argv list")
        if not target.outputs:
            raise DataFileError(f"{where}.outputs: list at least one output path")
        for i, pattern in enumerate(target.outputs):
            if pattern.startswith("/") or ".." in pattern.split("/") or not pattern.strip():
                raise DataFileError(f"{where}.outputs[{i}]: expected a path relative to {{out}}, found {pattern!r}")
        argvs: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = [("build", target.build, ())]
        argvs += [(f"tests[{i}].argv", t.argv, ()) for i, t in enumerate(target.tests)]
        for i, b in enumerate(target.benchmarks):
            argvs += [(f"benchmarks[{i}].argv", b.argv, (SHAPE,)), (f"benchmarks[{i}].tiling", b.tiling, (SHAPE,))]
        argvs.append(("accuracy_argv", target.accuracy_argv, ACCURACY_PLACES))
        for key, argv, extra in argvs:
            known = (*PLACEHOLDERS, *extra)
            for arg in argv:
                unknown = set(_PLACEHOLDER.findall(arg)) - set(known)
                if unknown:
                    raise DataFileError(
                        f"{where}.{key}: unknown placeholder {{{sorted(unknown)[0]}}} in {arg!r} "
                        f"(known: {', '.join('{' + k + '}' for k in known)})"
                    )
        for i, b in enumerate(target.benchmarks):
            _validate_benchmark(b, f"{where}.benchmarks[{i}]")
        if target.source_date_epoch is not None and target.source_date_epoch < 0:
            raise DataFileError(
                f"{where}.source_date_epoch: expected seconds since 1970, found {target.source_date_epoch}"
            )


_SHAPE_TEXT = re.compile(r"^[^\s{}]+$")


TIMINGS = ("wall", "printed")


def _validate_benchmark(b: Benchmark, where: str) -> None:
    if not b.argv:
        raise DataFileError(f"{where}.argv: expected a non-empty argv list")
    if b.timing not in TIMINGS:
        raise DataFileError(f"{where}.timing: expected one of {', '.join(TIMINGS)}, found {b.timing!r}")
    uses_shape = any(f"{{{SHAPE}}}" in arg for arg in b.argv)
    if b.shapes and not uses_shape:
        raise DataFileError(f"{where}.shapes: declared, but argv has no {{{SHAPE}}} placeholder to put them in")
    for i, shape in enumerate(b.shapes):
        if not _SHAPE_TEXT.match(shape):
            raise DataFileError(f"{where}.shapes[{i}]: expected text without spaces or braces, found {shape!r}")
        if shape in b.shapes[:i]:
            raise DataFileError(f"{where}.shapes[{i}]: {shape!r} is declared twice")
    if b.tiling and uses_shape and not any(f"{{{SHAPE}}}" in arg for arg in b.tiling):
        raise DataFileError(f"{where}.tiling: the argv runs per shape but the tiling argv has no {{{SHAPE}}}")


def expand(argv: tuple[str, ...], places: Mapping[str, str] = PLACEHOLDERS) -> list[str]:
    return [_PLACEHOLDER.sub(lambda m: places[m.group(1)], arg) for arg in argv]


def recipe_digest(recipe: KernelRecipe, target: str) -> str:
    """What shapes the outputs: name, op type and the target's image, build argv, outputs and
    fallback SOURCE_DATE_EPOCH (tests and benchmarks do not change what is built)."""
    t = recipe.targets[target]
    shape = {
        "name": recipe.name,
        "op_type": recipe.op_type,
        "target": target,
        "image": t.image,
        "build": list(t.build),
        "outputs": list(t.outputs),
        "source_date_epoch": t.source_date_epoch,
    }
    return _sha256_json(shape)


def build_key(
    *, source_digest: str, recipe_digest: str, target: str, image_id: str, ascenv_version: str, source_date_epoch: int
) -> str:
    return _sha256_json(
        {
            "key-version": 1,
            "source": source_digest,
            "recipe": recipe_digest,
            "target": target,
            "image-id": image_id,
            "ascenv": ascenv_version,
            "source-date-epoch": source_date_epoch,
        }
    )


def _sha256_json(data: object) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


# where things are ----------------------------------------------------------------------------
def find_kernel(project: Path, op: str, shipped: Optional[Path] = None) -> Path:
    """OP is a directory holding kernel.toml, or a name under <project>/kernels/ (then the
    kernels shipped with ascenv)."""
    candidates = [project / op, project / "kernels" / op] + ([shipped / op] if shipped else [])
    for candidate in candidates:
        if (candidate / RECIPE_FILE).is_file():
            return candidate.resolve()
    # every name this function would accept, from where it looks: the project's kernels/ and
    # the operators shipped with ascenv (add_custom), so the hint never says "none" wrongly
    places = [project, project / "kernels"] + ([shipped] if shipped else [])
    known = sorted({p.parent.name for place in places for p in place.glob(f"*/{RECIPE_FILE}")})
    raise UsageError(
        f"no operator project {op!r}: looked for {RECIPE_FILE} in {', '.join(str(c) for c in candidates)}",
        hint=f"operator projects found: {', '.join(known)}"
        if known
        else f"no {RECIPE_FILE} under {', '.join(str(p) for p in places)}: pass an operator project's directory",
    )


def load_target(project: Path, op: str, target: str, shipped: Optional[Path] = None) -> tuple[Path, KernelRecipe]:
    """``find_kernel`` and ``load_recipe``, refusing a recipe without ``target``."""
    kernel_dir = find_kernel(project, op, shipped)
    recipe = load_recipe(kernel_dir)
    if target not in recipe.targets:
        raise UsageError(
            f"{kernel_dir / RECIPE_FILE} has no target {target!r}", hint=f"targets: {', '.join(sorted(recipe.targets))}"
        )
    return kernel_dir, recipe


@dataclass(frozen=True)
class PinnedImage:
    name: str
    ref: str  # as pinned: an image ID, or repository@sha256:...
    image_id: str  # the ID the engine holds


def resolve_image(containers_dir: Path, name: str, engine: Engine, fetch: Optional[images.Host] = None) -> PinnedImage:
    """The pinned image of a container recipe, in the engine; never an unpinned tag.

    An absent image is obtained as pinned when ``fetch`` is given (the machine to bootstrap on):
    a bootstrap recipe is bootstrapped and must then equal its pin (the image ID is the content
    hash), a registry image is pulled by its pinned digest. Without ``fetch`` it is refused."""
    from ascenv.containers.pins import PINS_FILE, load_pins
    from ascenv.containers.recipe import load_recipe as load_image_recipe

    image_recipe = load_image_recipe(containers_dir, name)
    pin = load_pins(containers_dir / PINS_FILE).get(name)
    if pin is None:
        raise Unpinned(
            f"the image {name!r} has no pin in {containers_dir / PINS_FILE}, and ascenv builds only from pinned images",
            hint=f"build and pin it: ascenv image build {name} && ascenv image pin {name}",
        )
    ref = pin.image_id if pin.kind == "bootstrap" else pin.ref
    assert ref is not None
    info = engine.image(ref)
    if info is not None:
        return PinnedImage(name, ref, info.id)
    bootstrap = image_recipe.kind == "bootstrap"
    how = "bootstrap it" if bootstrap else "pull it by its digest"
    if fetch is None:
        raise ImageNotAvailable(
            f"the pinned image {name} ({ref}) is not present in the engine at {engine.host}, and fetching is off",
            hint=f"run without --no-fetch to {how}, or get it first: ascenv image build {name}",
        )
    fetch.on_event(
        f"the pinned image {name} ({ref}) is not in the engine: {'bootstrapping' if bootstrap else 'pulling'} it"
    )
    outcome = images.build(image_recipe, pin, engine, fetch)
    images.check_against_pin(image_recipe, pin, outcome)
    return PinnedImage(name, ref, outcome.image_id)


def source_date_epoch(kernel_dir: Path, target: Target, run: proc.Runner = proc.run) -> tuple[int, str]:
    """The last git commit touching the project (OpenEmbedded's choice, meta/lib/oe/reproducible.py),
    else the recipe's ``source_date_epoch``, else 0."""
    done = run(["git", "-C", str(kernel_dir), "log", "-1", "--format=%ct %H", "--", "."], timeout=30)
    if done.ok and done.stdout.strip():
        seconds, sha = done.stdout.split()
        return int(seconds), f"git commit {sha}"
    if target.source_date_epoch is not None:
        return target.source_date_epoch, "recipe"
    return 0, "default"


# the build -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Request:
    kernel_dir: Path
    recipe: KernelRecipe
    target: str
    image: PinnedImage
    ascenv_version: str
    source_date_epoch: int
    source_date_epoch_from: str
    host: Callable[[], Mapping[str, str]] = dict  # the host stack summary, asked only when building
    timeout: float = 3600.0


@dataclass(frozen=True)
class Plan:
    inputs: tuple[store.InputFile, ...]
    source_digest: str
    recipe_digest: str
    key: str
    hash_seconds: float


@dataclass(frozen=True)
class Difference:
    path: str
    detail: str


@dataclass(frozen=True)
class Outcome:
    entry: store.Entry
    reused: bool  # a verified store hit: nothing was built
    replaced: tuple[str, ...] = ()  # what was wrong with the damaged entry this build replaced
    raced: bool = False  # an identical build committed first; its entry is kept
    verified: bool = False  # built twice, byte-identical
    seconds: float = 0.0
    build_seconds: tuple[float, ...] = ()  # each build this run did (two with --verify)
    matched_stored: bool = False  # --verify of a stored build: both new builds equal its bytes


def plan(request: Request) -> Plan:
    start = time.monotonic()
    inputs = store.hash_tree(request.kernel_dir)
    source = store.tree_digest(inputs)
    seconds = time.monotonic() - start
    recipe = recipe_digest(request.recipe, request.target)
    key = build_key(
        source_digest=source,
        recipe_digest=recipe,
        target=request.target,
        image_id=request.image.image_id,
        ascenv_version=request.ascenv_version,
        source_date_epoch=request.source_date_epoch,
    )
    return Plan(inputs, source, recipe, key, seconds)


def container_env(request: Request) -> dict[str, str]:
    return {
        "SOURCE_DATE_EPOCH": str(request.source_date_epoch),
        "TZ": "UTC",
        "LC_ALL": "C",
        "LANG": "C",
        "HOME": f"{WORK}/home",
        "TMPDIR": f"{WORK}/tmp",
        "BUILD_PATH_PREFIX_MAP": f"{request.recipe.name}={SRC}:out={OUT}:work={WORK}",
    }


def build(
    request: Request,
    engine: Engine,
    st: store.Store,
    *,
    verify: bool = False,
    on_log: Optional[Callable[[str], None]] = None,
    on_event: Optional[Callable[[str], None]] = None,
) -> Outcome:
    """A verified hit, or a fresh build committed to the store (twice and compared if ``verify``)."""
    start = time.monotonic()
    event = on_event or (lambda _: None)
    p = plan(request)
    op = request.recipe.name
    # One build per key at a time: a second `ascenv build` of the same key waits here, then hits.
    waiting = (
        f"another build of {op} ({request.target}) {p.key[:12]} is running; waiting for it, then reusing its result"
    )
    with st.lock(f"build-{op}-{p.key[:16]}", on_wait=lambda: event(waiting)):
        entry = st.get(op, p.key)
        problems = st.verify(entry) if entry is not None else []
        if entry is not None and not problems and not verify:
            return Outcome(entry, reused=True, seconds=time.monotonic() - start)
        if problems:
            event(f"the stored build {p.key[:12]} is damaged ({problems[0]}); rebuilding")
        with st.staging(f"build-{op}") as first:
            event(f"building {op} ({request.target}) in {request.image.name} ({request.image.image_id[:19]})")
            took = time.monotonic()
            result = _run(request, p, engine, st, first, request.kernel_dir, on_log)
            timings = [time.monotonic() - took]
            if verify:
                with st.staging(f"verify-{op}") as second:
                    copy = second / "src" / request.recipe.name  # another host path for the same sources
                    shutil.copytree(request.kernel_dir, copy, symlinks=True)
                    event("building again from a copy of the sources in a new container (--verify)")
                    took = time.monotonic()
                    _run(request, p, engine, st, second, copy, on_log)
                    timings.append(time.monotonic() - took)
                    _require_identical(first / "entry" / "outputs", second / "entry" / "outputs")
                if entry is not None and not problems:  # the stored build must be the same bytes too
                    _require_identical(entry.outputs, first / "entry" / "outputs")
                    return Outcome(
                        entry,
                        reused=False,
                        verified=True,
                        seconds=time.monotonic() - start,
                        build_seconds=tuple(timings),
                        matched_stored=True,
                    )
            manifest = _manifest(request, p, result, first / "entry", time.monotonic() - start)
            (first / "entry" / store.MANIFEST).write_text(store.dumps_manifest(manifest), encoding="utf-8")
            committed, ours = st.commit(op, p.key, first / "entry")
    return Outcome(
        committed,
        reused=False,
        replaced=tuple(problems),
        raced=not ours,
        verified=verify,
        seconds=time.monotonic() - start,
        build_seconds=tuple(timings),
    )


def _run(
    request: Request,
    p: Plan,
    engine: Engine,
    st: store.Store,
    stage: Path,
    src: Path,
    on_log: Optional[Callable[[str], None]],
) -> tuple[RunResult, str, datetime.datetime]:
    for sub in ("out", "work/home", "work/tmp", "meta", "entry/outputs", "entry/logs", "entry/bench"):
        (stage / sub).mkdir(parents=True)
    started = datetime.datetime.now(datetime.timezone.utc)
    target = request.recipe.targets[request.target]
    result = engine.run(
        request.image.image_id,
        ["sh", "-c", PROBE_THEN_BUILD, "ascenv-build", *expand(target.build)],
        meta=stage / "meta",
        mounts=[
            Mount(str(src), SRC, read_only=True),
            Mount(str(stage / "out"), OUT, read_only=False),
            Mount(str(stage / "work"), WORK, read_only=False),
        ],
        env={**container_env(request), "ASCENV_TOOLCHAIN_PROBE": TOOLCHAIN_PROBE},
        labels={LABEL_OP: request.recipe.name, LABEL_KEY: p.key, PURPOSE_LABEL: "build"},
        workdir=SRC,
        timeout=request.timeout,
        on_log=on_log,
    )
    (stage / "entry" / "logs" / "build.log").write_text(result.logs, encoding="utf-8")
    if not result.ok:
        saved = _keep_failed_log(st, request.recipe.name, p.key, result.logs)
        what = (
            f"timed out after {request.timeout:.0f} s"
            if result.timed_out
            else (f"exited {result.exit_code}" if result.exit_code is not None else "was killed")
        )
        tail = "\n".join(result.logs.rstrip().splitlines()[-20:])
        raise BuildFailed(
            f"the build of {request.recipe.name} ({request.target}) {what} in {request.image.name}; "
            f"last lines:\n{tail}",
            hint=f"the whole log is in {saved}; nothing was stored",
        )
    _collect_outputs(target.outputs, stage / "out", stage / "entry" / "outputs")
    if request.target == "npu":
        normalize_packages(stage / "entry" / "outputs", request.source_date_epoch)
    probe = stage / "work" / TOOLCHAIN_FILE
    return result, probe.read_text(encoding="utf-8", errors="replace") if probe.is_file() else "", started


def _keep_failed_log(st: store.Store, op: str, key: str, log: str) -> Path:
    path = st.root / ".failed" / f"{op}-{key[:16]}.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(log, encoding="utf-8")
    return path


def _collect_outputs(patterns: tuple[str, ...], out: Path, dest: Path) -> None:
    """Move the declared outputs (glob patterns under out/) into dest, read-only; everything
    else the build left in out/ is dropped. Only regular files that lie really below out/: glob
    follows a directory symlink the build may have left (out/lib -> /usr/lib), and moving what
    it reaches would take the host's files away."""
    real_out = os.path.realpath(out)

    def inside(path: Path) -> bool:
        return os.path.realpath(path) == os.path.join(real_out, str(path.relative_to(out)))

    for pattern in patterns:
        matched = sorted(p for p in out.glob(pattern) if p.is_file() and not p.is_symlink() and inside(p))
        if not matched:
            present = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())[:10]
            raise BuildFailed(
                f"the build succeeded but produced no output matching {pattern!r} "
                f"(found: {', '.join(present) or 'nothing'})",
                hint="fix the recipe's outputs list or the build command",
            )
        for path in matched:
            target = dest / path.relative_to(out)
            target.parent.mkdir(parents=True, exist_ok=True)
            path.replace(target)
            target.chmod(target.stat().st_mode & 0o555)


def normalize_packages(outputs: Path, epoch: int) -> list[Path]:
    """Repack each makeself ``.run`` among the outputs deterministically, in place: makeself
    embeds the packaging time, a random directory and the build's paths, so without this two
    builds of the same inputs never give the same package (and ``--verify`` could not pass)."""
    from ascenv.package.normalize import normalize

    packages = sorted(p for p in outputs.rglob("*.run") if p.is_file() and not p.is_symlink())
    for path in packages:
        normalize(path, path, epoch)
        path.chmod(0o555)  # outputs are stored read-only
    return packages


def _manifest(
    request: Request, p: Plan, run: tuple[RunResult, str, datetime.datetime], entry: Path, total: float
) -> store.Manifest:
    result, toolchain, started = run
    target = request.recipe.targets[request.target]
    return store.Manifest(
        schema=store.SCHEMA,
        op=request.recipe.name,
        op_type=request.recipe.op_type,
        target=request.target,
        key=p.key,
        build_type=store.BUILD_TYPE,
        ascenv_version=request.ascenv_version,
        source_date_epoch=request.source_date_epoch,
        source_date_epoch_from=request.source_date_epoch_from,
        source_digest=p.source_digest,
        recipe_digest=p.recipe_digest,
        command=tuple(expand(target.build)),
        env=container_env(request),
        toolchain=store.Toolchain(
            request.image.name, request.image.ref, request.image.image_id, parse_toolchain(toolchain)
        ),
        host=dict(request.host()),
        timings=store.Timings(
            started=_iso(started),
            finished=_iso(started + datetime.timedelta(seconds=result.duration)),
            hash_seconds=round(p.hash_seconds, 3),
            build_seconds=round(result.duration, 3),
            total_seconds=round(total, 3),
        ),
        inputs=p.inputs,
        outputs=store.output_files(entry / "outputs"),
    )


def _iso(moment: datetime.datetime) -> str:
    return moment.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def parse_toolchain(text: str) -> dict[str, str]:
    """``name: version line`` lines printed by TOOLCHAIN_PROBE."""
    found = {}
    for line in text.splitlines():
        name, sep, value = line.partition(": ")
        if sep and name.strip() and value.strip():
            found[name.strip()] = value.strip()
    return found


# --verify --------------------------------------------------------------------------------------
def first_difference(a: Path, b: Path, chunk: int = 1 << 16) -> Optional[int]:
    """Offset of the first differing byte, or None when equal (a shorter file differs at its end)."""
    offset = 0
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            da, db = fa.read(chunk), fb.read(chunk)
            if da != db:
                n = min(len(da), len(db))
                return offset + next((i for i in range(n) if da[i] != db[i]), n)
            if not da:
                return None
            offset += len(da)


def compare_trees(a: Path, b: Path) -> list[Difference]:
    files_a = {f.path: f for f in store.output_files(a)}
    files_b = {f.path: f for f in store.output_files(b)}
    diffs = [Difference(path, "only in the first build") for path in sorted(set(files_a) - set(files_b))]
    diffs += [Difference(path, "only in the second build") for path in sorted(set(files_b) - set(files_a))]
    for path in sorted(set(files_a) & set(files_b)):
        if files_a[path].sha256 != files_b[path].sha256:
            offset = first_difference(a / path, b / path)
            sizes = f"{files_a[path].size} vs {files_b[path].size} bytes"
            diffs.append(Difference(path, f"first differing byte at offset {offset} (0x{offset or 0:x}); {sizes}"))
    return diffs


def _require_identical(first: Path, second: Path, run: proc.Runner = proc.run) -> None:
    differences = compare_trees(first, second)
    if not differences:
        return
    lines = [f"two builds of the same inputs differ in {counted(len(differences), 'file')}:"]
    lines += [f"  {d.path}: {d.detail}" for d in differences]
    if shutil.which("diffoscope"):
        # diffoscope exits 0 same, 1 different, 2 trouble (diffoscope(1))
        done = run(["diffoscope", "--text", "-", str(first), str(second)], timeout=600)
        if done.returncode in (0, 1):
            lines += ["diffoscope:"] + done.stdout.splitlines()[:200]
    else:
        lines.append("(install diffoscope for a structured comparison)")
    raise NotReproducible(
        "\n".join(lines),
        hint="something in the build depends on the time, the path or the machine; see the differing files",
    )


def host_summary(environ: Mapping[str, str], run: proc.Runner) -> dict[str, str]:
    """The host stack in one table of strings for the manifest: ascenv.probe.snapshot.collect (about
    0.15 s) when it works, the platform basics otherwise. Asked only for a real build, never for
    a store hit."""
    import platform

    basics = {"platform": platform.platform(), "python": platform.python_version()}
    try:
        from ascenv.probe.fs import Root
        from ascenv.probe.snapshot import collect

        snap = collect(Root("/"), environ, run)
    except Exception as exc:  # noqa: BLE001 - the summary is informative, a failed probe must not stop a build
        return {**basics, "probe-error": f"{type(exc).__name__}: {exc}"}
    active = next((c for c in snap.cann.installs if c.path == snap.cann.active), None)
    chips = sorted({c.name for c in snap.npu.chips if c.name})
    found = {
        "os": snap.host.os_name,
        "kernel": snap.host.kernel,
        "arch": snap.host.arch,
        "glibc": snap.host.glibc,
        "driver": snap.driver.version,
        "firmware": snap.firmware.version,
        "cann": active.version if active else None,
        "cann-compiler": active.compiler_version if active else None,
        "npu": f"{len(snap.npu.chips)} x {', '.join(chips)}" if chips else None,
    }
    return {**basics, **{k: v for k, v in found.items() if v}}
