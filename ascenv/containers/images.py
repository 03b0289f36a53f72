"""What ``ascenv image`` does, as functions of a recipe, its pin and an engine: status (ls and
verify), build, and pin. Nothing here prints or reads the environment; the command passes it in."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Optional

from ascenv import proc
from ascenv.containers import RECIPE_LABEL, bootstrap
from ascenv.containers.engine import Engine, ImageInfo
from ascenv.containers.pins import PackageChange, Pin, package_changes
from ascenv.containers.recipe import Recipe
from ascenv.errors import BootstrapFailed, ImageNotAvailable, NotReproducible, PinMismatch, Unpinned, UsageError
from ascenv.fsutil import atomic_path
from ascenv.signals import termination_as_interrupt

OK = "ok"  # pinned, and exactly the pinned image is present
DRIFTED = "drifted"  # pinned, and an image of this recipe is present, but not the pinned one
MISSING = "missing"  # pinned, nothing of this recipe present
UNPINNED = "unpinned"  # no pin yet


@dataclass(frozen=True)
class ImageStatus:
    name: str
    kind: str
    state: str
    pinned: Optional[str]  # the pin's image ID (bootstrap) or reference with digest (registry)
    present: Optional[str]  # the ID of the image found in the engine, if any
    recipe_changed: bool  # the recipe was edited after the pin was made
    changes: tuple[PackageChange, ...] = ()
    size: int = 0


@dataclass(frozen=True)
class BuildOutcome:
    name: str
    image_id: str
    tag: str
    reused: bool  # already present and equal to the pin: nothing was built
    seconds: float
    size: int
    packages: dict[str, str] = field(default_factory=dict)
    pin_changes: tuple[PackageChange, ...] = ()
    matches_pin: Optional[bool] = None  # None: there is no pin to compare with


def _packages(info: ImageInfo) -> dict[str, str]:
    return bootstrap.parse_packages_label(info.labels.get(bootstrap.PACKAGES_LABEL, ""))


def _recipe_images(recipe: Recipe, engine: Engine) -> list[ImageInfo]:
    """Images built from this recipe: of the current recipe text first, then the newest loaded."""
    found = sorted(engine.images({RECIPE_LABEL: recipe.name}), key=lambda i: i.tagged_at, reverse=True)
    return sorted(found, key=lambda i: i.labels.get(bootstrap.RECIPE_SHA_LABEL) != recipe.sha256)


def status(recipe: Recipe, pin: Optional[Pin], engine: Engine) -> ImageStatus:
    """Compare what the engine holds with the pin: a lookup by ID or digest, never a rebuild."""
    changed = pin is not None and pin.recipe_sha256 != recipe.sha256
    if recipe.kind == "registry":
        reg = recipe.registry
        assert reg is not None
        exact = engine.image(pin.ref) if pin and pin.ref else None
        other = None if exact else engine.image(f"{reg.repository}:{reg.tag}")
        found = exact or other
        pinned = pin.ref if pin else None
        state = UNPINNED if pin is None else OK if exact else DRIFTED if other else MISSING
        return ImageStatus(
            recipe.name,
            recipe.kind,
            state,
            pinned,
            found.id if found else None,
            changed,
            (),
            found.size if found else 0,
        )
    exact = engine.image(pin.image_id) if pin and pin.image_id else None
    if pin is None:
        candidates = _recipe_images(recipe, engine)
        found = candidates[0] if candidates else None
        return ImageStatus(
            recipe.name, recipe.kind, UNPINNED, None, found.id if found else None, False, (), found.size if found else 0
        )
    if exact is not None:
        return ImageStatus(recipe.name, recipe.kind, OK, pin.image_id, exact.id, changed, (), exact.size)
    candidates = _recipe_images(recipe, engine)
    if not candidates:
        return ImageStatus(recipe.name, recipe.kind, MISSING, pin.image_id, None, changed)
    other = candidates[0]
    changes = tuple(package_changes(pin.packages, _packages(other)))
    return ImageStatus(recipe.name, recipe.kind, DRIFTED, pin.image_id, other.id, changed, changes, other.size)


@dataclass(frozen=True)
class Host:
    """What a bootstrap needs from the machine; the command fills it in."""

    environ: Mapping[str, str]
    cache: Path  # ascenv's cache root
    etc_apt: Path = Path("/etc/apt")
    run: proc.Runner = proc.run
    is_root: bool = field(default_factory=lambda: os.geteuid() == 0)
    # Told each step of a bootstrap or pull: mmdebstrap alone runs for minutes with no output.
    on_event: Callable[[str], None] = lambda _: None
    # Told, about once a second, how a long step is going ("1:23 elapsed, 180 MB written"): a
    # status line on a terminal, nothing in a pipe (the command decides; the end is an event).
    on_status: Callable[[str], None] = lambda _: None


def build(
    recipe: Recipe, pin: Optional[Pin], engine: Engine, host: Host, *, force: bool = False, save: Optional[Path] = None
) -> BuildOutcome:
    start = time.monotonic()
    if recipe.kind == "registry":
        return _obtain_registry_image(recipe, pin, engine, host, start)
    if pin is not None and not force and save is None and pin.recipe_sha256 == recipe.sha256:
        present = engine.image(pin.image_id or "")
        if present is not None:  # the ID is the content hash: present means identical
            return BuildOutcome(
                recipe.name,
                present.id,
                _tag(present, recipe),
                True,
                time.monotonic() - start,
                present.size,
                _packages(present),
                (),
                True,
            )
    archive = bootstrap_image(recipe, engine, host, save)
    info = engine.image(archive.image_id)
    if info is None:
        raise BootstrapFailed(f"the engine did not keep the image {archive.image_id} after loading {archive.path}")
    matches = None if pin is None else pin.image_id == archive.image_id
    changes = () if pin is None else tuple(package_changes(pin.packages, archive.packages))
    return BuildOutcome(
        recipe.name,
        archive.image_id,
        archive.tag,
        False,
        time.monotonic() - start,
        info.size,
        archive.packages,
        changes,
        matches,
    )


def check_against_pin(recipe: Recipe, pin: Optional[Pin], outcome: BuildOutcome) -> None:
    """Refuse an image that is not the pinned one, naming the packages that differ: the same
    recipe giving other bytes is ``NotReproducible``, a recipe edited since its pin ``PinMismatch``."""
    if outcome.matches_pin is not False:
        return
    assert pin is not None
    changes = "; ".join(c.describe() for c in outcome.pin_changes) or "same package versions, different file contents"
    message = f"{recipe.name} built as {outcome.image_id}, but pins.toml has {pin.image_id} ({changes})"
    hint = f"if the new image is intended, record it: ascenv image pin {recipe.name}"
    if pin.recipe_sha256 == recipe.sha256:
        raise NotReproducible(message, hint=hint)
    raise PinMismatch(message + "; the recipe changed since it was pinned", hint=hint)


def _tag(info: ImageInfo, recipe: Recipe) -> str:
    return next(
        (t for t in info.tags if t.startswith(f"ascenv/{recipe.name}:")), info.tags[0] if info.tags else info.id
    )


def require_pin(recipe: Recipe, pin: Optional[Pin]) -> None:
    """Registry images are used by digest only; without a pin there is nothing safe to use."""
    reg = recipe.registry
    if reg is not None and (pin is None or not pin.ref):
        raise Unpinned(
            f"{recipe.name} ({reg.repository}:{reg.tag}) has no pinned digest, "
            "and ascenv does not build from a moving tag",
            hint=f"on a machine that reaches the registry run: ascenv image pin {recipe.name}  "
            "(then commit containers/pins.toml)",
        )


def _obtain_registry_image(
    recipe: Recipe, pin: Optional[Pin], engine: Engine, host: Host, start: float
) -> BuildOutcome:
    require_pin(recipe, pin)
    assert pin is not None and pin.ref is not None
    info = engine.image(pin.ref)
    if info is None:
        host.on_event(f"pulling {pin.ref}")
        info = engine.pull(pin.ref)
    return BuildOutcome(recipe.name, info.id, pin.ref, False, time.monotonic() - start, info.size, {}, (), True)


def bootstrap_image(recipe: Recipe, engine: Engine, host: Host, save: Optional[Path] = None) -> bootstrap.ImageArchive:
    """mmdebstrap -> deterministic archive -> ``docker load``; the work directory (in the cache,
    not /tmp, which may be a small tmpfs) is removed on every exit path, SIGTERM included."""
    boot = recipe.bootstrap
    assert boot is not None
    if not host.is_root:
        raise UsageError(
            "bootstrapping an image runs mmdebstrap in root mode, which needs root",
            hint=f"run `ascenv image build {recipe.name}` as root, "
            "or docker load an archive made with --save on another machine",
        )
    arch = bootstrap.host_architecture(host.run)
    source = bootstrap.mirror_for(bootstrap.read_host_sources(host.etc_apt), boot.suite, host.etc_apt)
    images_dir = host.cache / "images"
    images_dir.mkdir(parents=True, exist_ok=True)
    with termination_as_interrupt():
        work = Path(tempfile.mkdtemp(prefix=f"build-{recipe.name}-", dir=images_dir))
        try:
            rootfs = work / "rootfs"
            host.on_event(
                f"bootstrapping {recipe.name}: mmdebstrap {boot.suite}/{boot.variant} for {arch}, "
                f"{len(boot.packages)} packages from {source.uri} (minutes when the .deb cache is cold)"
            )
            with elapsed(host, f"bootstrapping {recipe.name}", rootfs):
                bootstrap.run_mmdebstrap(
                    boot, source, rootfs, images_dir / recipe.name / "debs", arch, host.environ, host.run
                )
            if save is None:
                return _write_and_load(rootfs, work / "image.tar", recipe, arch, engine, host)
            # the saved archive appears whole, and only once the engine took it
            with atomic_path(save) as tmp:
                archive = _write_and_load(rootfs, Path(tmp), recipe, arch, engine, host)
            return replace(archive, path=save)
        finally:
            remove_tree(work)


@contextlib.contextmanager
def elapsed(host: Host, label: str, growing: Path, every: float = 1.0) -> Iterator[None]:
    """Tell ``host.on_status`` every ``every`` seconds how long ``label`` has run and how much
    it has written under ``growing``; tell ``host.on_event`` how long it took when it ends."""
    start = time.monotonic()
    done = threading.Event()

    def tick() -> None:
        while not done.wait(every):
            host.on_status(
                f"{label}: {_clock(time.monotonic() - start)} elapsed, {_size(_tree_bytes(growing))} written"
            )

    ticker = threading.Thread(target=tick, name="ascenv-elapsed", daemon=True)
    ticker.start()
    try:
        yield
    finally:
        done.set()
        ticker.join()
    host.on_event(f"{label}: done in {_clock(time.monotonic() - start)}")


def _clock(seconds: float) -> str:
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}:{rest:02d}"


def _size(count: int) -> str:
    return f"{count / 1e6:,.0f} MB" if count >= 1e6 else f"{count / 1e3:,.0f} kB"


def _tree_bytes(top: Path) -> int:
    """Bytes of the regular files under ``top`` (a tree being written: entries vanish mid-walk)."""
    total = 0
    for directory, _, names in os.walk(top):
        for name in names:
            with contextlib.suppress(OSError):
                info = os.lstat(os.path.join(directory, name))
                total += info.st_size if stat.S_ISREG(info.st_mode) else 0
    return total


def _write_and_load(
    rootfs: Path, path: Path, recipe: Recipe, arch: str, engine: Engine, host: Host
) -> bootstrap.ImageArchive:
    work = rootfs.parent  # the layer is written there, never beside a --save path
    host.on_event("writing the image archive")
    archive = bootstrap.write_image_archive(rootfs, path, recipe, arch, scratch=work)
    remove_tree(rootfs)
    host.on_event(f"loading {archive.image_id[:19]} into the engine")
    loaded = engine.load(archive.path)
    if archive.image_id not in loaded:
        raise BootstrapFailed(f"the engine loaded {loaded} from {archive.path}, expected {archive.image_id}")
    return archive


def remove_tree(path: Path) -> None:
    """rmtree that retries briefly: processes of a killed mmdebstrap may still be exiting."""
    for attempt in range(10):
        try:
            shutil.rmtree(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            if attempt == 9:
                raise
            time.sleep(0.5)


def make_pin(recipe: Recipe, engine: Engine, host: Host) -> Pin:
    """The pin for what this machine has or builds now (an explicit update, never a guess)."""
    if recipe.kind == "registry":
        reg = recipe.registry
        assert reg is not None
        host.on_event(f"pulling {reg.repository}:{reg.tag} to read its digest")
        info = engine.pull(f"{reg.repository}:{reg.tag}")
        digests = [d for d in info.repo_digests if d.startswith(reg.repository + "@")]
        if not digests:
            raise ImageNotAvailable(
                f"the engine reports no registry digest for {reg.repository}:{reg.tag} "
                f"(RepoDigests: {list(info.repo_digests)})"
            )
        return Pin("registry", recipe.sha256, engine.arch, ref=digests[0], tag=reg.tag)
    current = [i for i in _recipe_images(recipe, engine) if i.labels.get(bootstrap.RECIPE_SHA_LABEL) == recipe.sha256]
    if current:  # the image of this recipe loaded last, i.e. the one just built
        info = current[0]
    else:
        archive = bootstrap_image(recipe, engine, host)
        info = engine.image(archive.image_id) or ImageInfo(archive.image_id)
    return Pin("bootstrap", recipe.sha256, engine.arch, image_id=info.id, packages=_packages(info))
