from __future__ import annotations

import pytest

from ascenv.containers.pins import PackageChange, Pin, load_pins, package_changes, save_pins
from ascenv.containers.recipe import load_recipe
from ascenv.errors import DataFileError
from tests.engine_fixtures import CONTAINERS

ID = "sha256:" + "ab" * 32


def test_shipped_pins_load_and_never_invent_a_registry_digest():
    pins = load_pins(CONTAINERS / "pins.toml")
    builder = pins["builder-bookworm"]
    assert builder.kind == "bootstrap" and builder.image_id.startswith("sha256:")
    assert builder.recipe_sha256 == load_recipe(CONTAINERS, "builder-bookworm").sha256, (
        "recipe edited: run ascenv image pin builder-bookworm"
    )
    assert builder.packages["cmake"] == "3.25.1-1" and builder.packages["make"] == "4.3-4.1"
    assert "cann-8.1.rc1-910b" not in pins  # only `ascenv image pin` on a machine reaching quay.io may add it


def test_round_trip(tmp_path):
    pins = {
        "b": Pin("bootstrap", "0" * 64, "amd64", image_id=ID, packages={"g++": "4:12.2.0-3"}),
        "a": Pin("registry", "1" * 64, "arm64", ref="quay.io/ascend/cann@" + ID, tag="8.1.rc1-910b-ubuntu22.04-py3.10"),
    }
    path = tmp_path / "pins.toml"
    save_pins(path, pins)
    assert load_pins(path) == pins
    assert path.read_text().index("[images.a]") < path.read_text().index("[images.b]")
    assert list(tmp_path.iterdir()) == [path]  # no temp file left


def test_missing_file_is_no_pins(tmp_path):
    assert load_pins(tmp_path / "pins.toml") == {}


@pytest.mark.parametrize(
    "entry, expected",
    [
        (
            'kind = "bootstrap"\nrecipe_sha256 = "x"\narchitecture = "amd64"\nimage_id = "sha256:abc"',
            "images.x.image_id: expected 'sha256:' and 64 hex digits",
        ),
        (
            'kind = "registry"\nrecipe_sha256 = "x"\narchitecture = "amd64"\nref = "quay.io/ascend/cann:8.1"',
            "images.x.ref: expected 'repository@sha256:",
        ),
        (
            'kind = "docker"\nrecipe_sha256 = "x"\narchitecture = "amd64"',
            "images.x.kind: expected 'bootstrap' or 'registry'",
        ),
        ('kind = "bootstrap"\narchitecture = "amd64"', "images.x.recipe_sha256: missing"),
    ],
)
def test_bad_pins_name_the_key(tmp_path, entry, expected):
    path = tmp_path / "pins.toml"
    path.write_text(f"schema = 1\n[images.x]\n{entry}\n")
    with pytest.raises(DataFileError) as info:
        load_pins(path)
    assert expected in info.value.message and str(path) in info.value.message


def test_package_changes_name_each_difference():
    pinned = {"cmake": "3.25.1-1", "make": "4.3-4.1", "gone": "1"}
    present = {"cmake": "3.25.1-2", "make": "4.3-4.1", "new": "2"}
    assert package_changes(pinned, present) == [
        PackageChange("cmake", "3.25.1-1", "3.25.1-2"),
        PackageChange("gone", "1", None),
        PackageChange("new", None, "2"),
    ]
    assert [c.describe() for c in package_changes(pinned, present)] == [
        "cmake: pinned 3.25.1-1, present 3.25.1-2",
        "gone: removed (pinned 1)",
        "new: added 2",
    ]
