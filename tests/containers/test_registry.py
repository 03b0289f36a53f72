"""Registry images: used by digest only. The status logic runs against a fake engine (no registry
is reachable from CI); pulling from an unreachable registry runs against the real engine."""

from __future__ import annotations

import pytest

from ascenv.containers import images
from ascenv.containers.engine import ImageInfo
from ascenv.containers.pins import Pin
from ascenv.containers.recipe import load_recipe
from ascenv.errors import ImageNotAvailable
from tests.engine_fixtures import CONTAINERS

NAME = "cann-8.1.rc1-910b"
REPO = "quay.io/ascend/cann"
TAG = "8.1.rc1-910b-ubuntu22.04-py3.10"
D1, D2 = "sha256:" + "1" * 64, "sha256:" + "2" * 64


class FakeEngine:
    arch = "arm64"

    def __init__(self, by_ref: dict[str, ImageInfo]) -> None:
        self.by_ref = by_ref
        self.pulled: list[str] = []

    def image(self, ref: str):
        return self.by_ref.get(ref)

    def images(self, labels):
        return []

    def pull(self, ref: str) -> ImageInfo:
        self.pulled.append(ref)
        return self.by_ref[ref]


@pytest.fixture
def recipe():
    return load_recipe(CONTAINERS, NAME)


def pin_for(recipe, digest: str) -> Pin:
    return Pin("registry", recipe.sha256, "arm64", ref=f"{REPO}@{digest}", tag=TAG)


def test_status_by_digest(recipe):
    present = ImageInfo("sha256:" + "a" * 64, tags=(f"{REPO}:{TAG}",), repo_digests=(f"{REPO}@{D1}",))
    engine = FakeEngine({f"{REPO}@{D1}": present, f"{REPO}:{TAG}": present})
    assert images.status(recipe, pin_for(recipe, D1), engine).state == images.OK
    # the tag now names another build than the pinned digest: drifted, not silently accepted
    drifted = images.status(recipe, pin_for(recipe, D2), engine)
    assert (drifted.state, drifted.pinned, drifted.present) == (images.DRIFTED, f"{REPO}@{D2}", present.id)
    assert images.status(recipe, pin_for(recipe, D1), FakeEngine({})).state == images.MISSING
    assert images.status(recipe, None, engine).state == images.UNPINNED


def test_build_uses_the_digest_and_pulls_only_when_absent(recipe, tmp_path):
    present = ImageInfo("sha256:" + "a" * 64)
    engine = FakeEngine({f"{REPO}@{D1}": present})
    events: list[str] = []
    host = images.Host(environ={}, cache=tmp_path, on_event=events.append)
    assert images.build(recipe, pin_for(recipe, D1), engine, host).image_id == present.id
    assert engine.pulled == [] and events == []
    engine.image = lambda ref: None  # absent: pulled, by digest, and the user is told (a pull takes minutes)
    images.build(recipe, pin_for(recipe, D1), engine, host)
    assert engine.pulled == [f"{REPO}@{D1}"]
    assert events == [f"pulling {REPO}@{D1}"]


def test_pin_records_the_registry_digest_of_the_tag(recipe, tmp_path):
    pulled = ImageInfo("sha256:" + "a" * 64, repo_digests=(f"other/mirror@{D2}", f"{REPO}@{D1}"))
    pin = images.make_pin(recipe, FakeEngine({f"{REPO}:{TAG}": pulled}), images.Host(environ={}, cache=tmp_path))
    assert pin == Pin("registry", recipe.sha256, "arm64", ref=f"{REPO}@{D1}", tag=TAG)


@pytest.mark.engine
def test_unreachable_registry_says_how_to_docker_load(engine):
    with pytest.raises(ImageNotAvailable) as info:
        engine.pull(f"127.0.0.1:9/ascend/cann@{D1}")  # nothing listens on the discard port
    assert info.value.message.startswith(f"cannot pull 127.0.0.1:9/ascend/cann@{D1}:")
    assert "docker save" in info.value.hint and "docker load -i image.tar" in info.value.hint
    assert info.value.exit_code == 10  # the image is not obtainable here: not "findings" (1)
