"""The engine fixtures of the whole suite (registered in tests/conftest.py): tests marked
``engine`` get a real Docker engine, or fail under CI=true (the engine is part of CI) and skip
elsewhere with the reason; and the builder-bookworm image, bootstrapped at most twice a session
(the reproducibility test compares two bootstraps; everything else takes the pinned image when
the engine holds it, else the first bootstrap); and opp-packager-bookworm, bootstrapped at most
once a session when the engine does not hold it."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pytest

from ascenv.containers import RECIPE_LABEL, bootstrap, images
from ascenv.containers import engine as engine_mod
from ascenv.containers.pins import PINS_FILE, load_pins
from ascenv.containers.recipe import load_recipe
from ascenv.errors import EngineError

REPO = Path(__file__).resolve().parents[1]
CONTAINERS = REPO / "containers"
BUILDER = "builder-bookworm"
PACKAGER = "opp-packager-bookworm"


def unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def engine() -> engine_mod.Engine:
    try:
        return engine_mod.connect(dict(os.environ))
    except EngineError as exc:
        unavailable(f"no usable Docker engine: {exc.message}")
        raise


@pytest.fixture(autouse=True)
def _engine_marker(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("engine") is not None:
        request.getfixturevalue("engine")


class Bootstraps:
    """builder-bookworm bootstrapped on demand, each at most once a session: ``first()`` from an
    empty .deb cache, ``second()`` from the cache the first filled."""

    def __init__(self, engine: engine_mod.Engine, cache: Path) -> None:
        self.engine = engine
        self.cache = cache
        self.recipe = load_recipe(CONTAINERS, BUILDER)
        self._done: list[images.BuildOutcome] = []
        self.events: list[list[str]] = []  # what each bootstrap told the user, in order

    def _next(self) -> images.BuildOutcome:
        self.events.append([])
        host = images.Host(environ=dict(os.environ), cache=self.cache, on_event=self.events[-1].append)
        self._done.append(images.build(self.recipe, None, self.engine, host))
        return self._done[-1]

    def first(self) -> images.BuildOutcome:
        return self._done[0] if self._done else self._next()

    def second(self) -> images.BuildOutcome:
        self.first()
        return self._done[1] if len(self._done) > 1 else self._next()


@pytest.fixture(scope="session")
def bootstraps(engine: engine_mod.Engine, tmp_path_factory: pytest.TempPathFactory) -> Bootstraps:
    if os.geteuid() != 0 or shutil.which("mmdebstrap") is None or shutil.which("unshare") is None:
        unavailable("bootstrapping needs root, mmdebstrap and unshare")
    return Bootstraps(engine, tmp_path_factory.mktemp("ascenv-cache"))


@dataclass(frozen=True)
class Built:
    first: images.BuildOutcome  # from an empty .deb cache
    second: images.BuildOutcome  # from the cache the first build filled
    cache: Path
    first_events: list[str]  # the progress the first bootstrap reported


@pytest.fixture(scope="session")
def built(bootstraps: Bootstraps) -> Built:
    """builder-bookworm bootstrapped twice, for the tests that compare or pin fresh builds."""
    return Built(bootstraps.first(), bootstraps.second(), bootstraps.cache, bootstraps.events[0])


def present_builder_image(engine: engine_mod.Engine, name: str = BUILDER) -> Optional[str]:
    """The pinned image ``name`` (default builder-bookworm) when the engine holds it, else one it
    holds for the current recipe, else None."""
    recipe = load_recipe(CONTAINERS, name)
    pin = load_pins(CONTAINERS / PINS_FILE).get(name)
    if pin is not None and pin.image_id and engine.image(pin.image_id) is not None:
        return pin.image_id
    present = [
        i for i in engine.images({RECIPE_LABEL: name}) if i.labels.get(bootstrap.RECIPE_SHA_LABEL) == recipe.sha256
    ]
    return present[0].id if present else None


def pinned_builder_image(engine: engine_mod.Engine, cache: Path) -> str:
    """The builder-bookworm image ID to build with, bootstrapped (into ``cache``) only when the
    engine holds none (for bench/bench_build.py)."""
    found = present_builder_image(engine)
    if found is not None:
        return found
    recipe = load_recipe(CONTAINERS, BUILDER)
    pin = load_pins(CONTAINERS / PINS_FILE).get(BUILDER)
    return images.build(recipe, pin, engine, images.Host(environ=dict(os.environ), cache=cache)).image_id


@pytest.fixture(scope="session")
def packager_image(engine: engine_mod.Engine, tmp_path_factory: pytest.TempPathFactory) -> str:
    """opp-packager-bookworm, the image of add_custom's npu target, as pinned: the one the engine
    holds, else bootstrapped once a session (minutes) into a session cache, and kept in the engine
    for the next session, as builder-bookworm is."""
    found = present_builder_image(engine, PACKAGER)
    if found is not None:
        return found
    if os.geteuid() != 0 or shutil.which("mmdebstrap") is None or shutil.which("unshare") is None:
        unavailable(f"bootstrapping {PACKAGER} needs root, mmdebstrap and unshare")
    recipe = load_recipe(CONTAINERS, PACKAGER)
    pin = load_pins(CONTAINERS / PINS_FILE).get(PACKAGER)
    host = images.Host(environ=dict(os.environ), cache=tmp_path_factory.mktemp("ascenv-cache"))
    outcome = images.build(recipe, pin, engine, host)
    images.check_against_pin(recipe, pin, outcome)  # the bootstrap must give the pinned image
    return outcome.image_id


@pytest.fixture(scope="session")
def builder_image(engine: engine_mod.Engine, request: pytest.FixtureRequest) -> str:
    """An image ID of builder-bookworm: present in the engine, or the session's first bootstrap."""
    found = present_builder_image(engine)
    if found is not None:
        return found
    try:
        return request.getfixturevalue("bootstraps").first().image_id
    except Exception as exc:  # noqa: BLE001 - any failure to obtain the image
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"cannot obtain the {BUILDER} image here: {exc}")
