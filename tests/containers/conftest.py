"""The engine fixtures: tests marked ``engine`` get a real Docker engine, or fail under CI=true
(the engine is part of CI) and skip elsewhere with the reason."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from ascenv.containers import engine as engine_mod, images
from ascenv.containers.recipe import load_recipe
from ascenv.errors import EngineError

CONTAINERS = Path(__file__).resolve().parents[2] / "containers"
BUILDER = "builder-bookworm"


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def engine() -> engine_mod.Engine:
    try:
        return engine_mod.connect(dict(os.environ))
    except EngineError as exc:
        _unavailable(f"no usable Docker engine: {exc.message}")
        raise


@pytest.fixture(autouse=True)
def _engine_marker(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("engine") is not None:
        request.getfixturevalue("engine")


@dataclass(frozen=True)
class Built:
    first: images.BuildOutcome  # from an empty .deb cache
    second: images.BuildOutcome  # from the cache the first build filled
    cache: Path


@pytest.fixture(scope="session")
def built(engine: engine_mod.Engine, tmp_path_factory: pytest.TempPathFactory) -> Built:
    """builder-bookworm bootstrapped twice (the only real builds of the session)."""
    if os.geteuid() != 0 or shutil.which("mmdebstrap") is None or shutil.which("unshare") is None:
        _unavailable("bootstrapping needs root, mmdebstrap and unshare")
    recipe = load_recipe(CONTAINERS, BUILDER)
    cache = tmp_path_factory.mktemp("ascenv-cache")
    host = images.Host(environ=dict(os.environ), cache=cache)
    first = images.build(recipe, None, engine, host)
    second = images.build(recipe, None, engine, host)
    return Built(first, second, cache)
