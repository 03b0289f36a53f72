from __future__ import annotations

from pathlib import Path

import pytest

from ascenv.containers.recipe import load_recipe, recipe_names
from ascenv.errors import DataFileError, UsageError
from tests.conftest import SHARED
from tests.engine_fixtures import CONTAINERS

GOOD = """schema = 1
description = "test"
[bootstrap]
suite = "bookworm"
variant = "apt"
source_date_epoch = 1747699200
packages = ["make=4.3-4.1"]
"""


def write(tmp_path: Path, text: str, name: str = "img") -> Path:
    (tmp_path / name).mkdir(parents=True)
    (tmp_path / name / "image.toml").write_text(text)
    return tmp_path


def test_shipped_recipes_load():
    assert recipe_names(CONTAINERS) == ["builder-bookworm", "cann-8.1.rc1-910b", "opp-packager-bookworm"]
    packager = load_recipe(CONTAINERS, "opp-packager-bookworm")
    assert packager.bootstrap.packages == ("makeself=2.4.5-1", "python3=3.11.2-1+b1")
    builder = load_recipe(CONTAINERS, "builder-bookworm")
    assert builder.kind == "bootstrap"
    assert builder.bootstrap.packages == ("g++=4:12.2.0-3", "cmake=3.25.1-1", "make=4.3-4.1", "python3=3.11.2-1+b1")
    assert builder.bootstrap.source_date_epoch == 1747699200
    cann = load_recipe(CONTAINERS, "cann-8.1.rc1-910b")
    assert (cann.kind, cann.registry.repository, cann.registry.tag) == (
        "registry",
        "quay.io/ascend/cann",
        "8.1.rc1-910b-ubuntu22.04-py3.10",
    )


def test_cann_tag_is_a_published_tag():
    tags = SHARED / "opproject-refdata" / "cann-container-image_tags.txt"
    if not tags.is_file():
        pytest.skip(f"{tags} is not available")
    published = tags.read_text().splitlines()
    assert load_recipe(CONTAINERS, "cann-8.1.rc1-910b").registry.tag in published


def test_recipe_hash_ignores_comments_but_not_values(tmp_path):
    a = load_recipe(write(tmp_path / "a", GOOD), "img")
    b = load_recipe(write(tmp_path / "b", "# a comment\n" + GOOD), "img")
    c = load_recipe(write(tmp_path / "c", GOOD.replace("4.3-4.1", "4.3-4")), "img")
    assert a.sha256 == b.sha256 != c.sha256


@pytest.mark.parametrize(
    "text, expected",
    [
        (GOOD.replace('"make=4.3-4.1"', '"make"'), "bootstrap.packages[0]: expected 'name=version'"),
        (GOOD.replace("packages =", "pakages ="), "bootstrap.pakages: unknown key (perhaps you meant 'packages'?)"),
        (
            GOOD.replace("source_date_epoch = 1747699200", 'source_date_epoch = "2025"'),
            "bootstrap.source_date_epoch: expected integer",
        ),
        (GOOD + '[registry]\nrepository = "r"\ntag = "t"\n', "declare exactly one of [bootstrap] or [registry]"),
        (
            'schema = 1\ndescription = "x"\n[registry]\nrepository = "quay.io/ascend/cann"\ntag = "x@sha256:00"\n',
            "registry.tag: expected the human tag",
        ),
        (GOOD.replace("schema = 1", "schema = 2"), "schema: this ascenv reads schema 1, found 2"),
        ("schema = [", "not valid TOML"),
    ],
)
def test_bad_recipes_name_the_key(tmp_path, text, expected):
    with pytest.raises(DataFileError) as info:
        load_recipe(write(tmp_path, text), "img")
    assert expected in info.value.message
    assert str(tmp_path / "img" / "image.toml") in info.value.message


def test_unknown_recipe_lists_the_known_ones():
    with pytest.raises(UsageError) as info:
        load_recipe(CONTAINERS, "builder-bullseye")
    assert "builder-bookworm" in info.value.hint
