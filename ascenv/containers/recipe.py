"""Image recipes: ``containers/<name>/image.toml``, validated when loaded.

A recipe declares an image in exactly one of two ways:

- ``[bootstrap]``: a Debian root filesystem built offline with ``mmdebstrap`` from the host's
  configured mirror (suite, variant, packages pinned ``name=version``, ``SOURCE_DATE_EPOCH``);
- ``[registry]``: a published image given by repository and human tag; its digest lives in
  ``containers/pins.toml`` and is only ever written by ``ascenv image pin`` (never invented).
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from ascenv import serde
from ascenv.errors import DataFileError, SchemaError, UsageError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python < 3.11
    import tomli as tomllib

SCHEMA = 1
RECIPE_FILE = "image.toml"
# Debian package names (Policy 5.6.1) and versions (Policy 5.6.12), joined as apt takes them.
_PINNED_PACKAGE = re.compile(r"^[a-z0-9][a-z0-9+.-]+=(?:[0-9]+:)?[0-9][A-Za-z0-9.+~:-]*$")
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


@dataclass(frozen=True)
class Bootstrap:
    suite: str
    variant: str
    source_date_epoch: int
    packages: tuple[str, ...]
    components: tuple[str, ...] = ("main",)


@dataclass(frozen=True)
class Registry:
    repository: str
    tag: str


@dataclass(frozen=True)
class RecipeFile:
    """The shape of image.toml."""

    schema: int
    description: str
    bootstrap: Optional[Bootstrap] = None
    registry: Optional[Registry] = None
    env: dict[str, str] = field(default_factory=dict)
    workdir: str = "/"


@dataclass(frozen=True)
class Recipe:
    name: str
    path: Path
    spec: RecipeFile

    @property
    def bootstrap(self) -> Optional[Bootstrap]:
        return self.spec.bootstrap

    @property
    def registry(self) -> Optional[Registry]:
        return self.spec.registry

    @property
    def kind(self) -> str:
        return "bootstrap" if self.spec.bootstrap else "registry"

    @property
    def sha256(self) -> str:
        """Hash of the parsed recipe (comments and layout do not count): a changed recipe shows."""
        canonical = json.dumps(serde.to_data(self.spec), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()


def read_toml(path: Path) -> dict:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise DataFileError(f"cannot read {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise DataFileError(f"{path}: not valid TOML: {exc}") from None


def parse_data(cls: Any, data: Any, source: str) -> Any:
    """``serde.from_data`` whose errors name the file, the key path and a close key when mistyped."""
    try:
        return serde.from_data(cls, data)
    except SchemaError as exc:
        message = f"{source}: {exc}"
        if exc.problem == "unknown key":
            known = sorted(_known_keys(cls))
            close = difflib.get_close_matches(exc.path.rsplit(".", 1)[-1], known, n=1)
            if close:
                message += f" (perhaps you meant {close[0]!r}?)"
        raise DataFileError(message) from None


def _known_keys(cls: Any) -> set[str]:
    """Every key name of ``cls`` and the dataclasses nested in it."""
    import typing

    if dataclasses.is_dataclass(cls):
        hints = typing.get_type_hints(cls)
        return {f.name for f in dataclasses.fields(cls)}.union(
            *(_known_keys(hints[f.name]) for f in dataclasses.fields(cls))
        )
    return set().union(*(_known_keys(a) for a in typing.get_args(cls)))


def recipe_names(directory: Path) -> list[str]:
    return sorted(p.parent.name for p in directory.glob(f"*/{RECIPE_FILE}"))


def load_recipe(directory: Path, name: str) -> Recipe:
    path = directory / name / RECIPE_FILE
    if not path.is_file():
        known = recipe_names(directory)
        raise UsageError(
            f"no image recipe named {name!r} (looked for {path})",
            hint=f"known images: {', '.join(known) or 'none'}",
        )
    spec = parse_data(RecipeFile, read_toml(path), str(path))
    validate(spec, str(path))
    return Recipe(name=name, path=path, spec=spec)


def validate(spec: RecipeFile, source: str) -> None:
    """What the types cannot say; each message names the key."""
    if spec.schema != SCHEMA:
        raise DataFileError(f"{source}: schema: this ascenv reads schema {SCHEMA}, found {spec.schema}")
    if (spec.bootstrap is None) == (spec.registry is None):
        raise DataFileError(f"{source}: declare exactly one of [bootstrap] or [registry]")
    boot = spec.bootstrap
    if boot is not None:
        if boot.source_date_epoch < 0:
            raise DataFileError(
                f"{source}: bootstrap.source_date_epoch: expected seconds since 1970, found {boot.source_date_epoch}"
            )
        if not boot.packages:
            raise DataFileError(f"{source}: bootstrap.packages: list at least one package")
        for i, package in enumerate(boot.packages):
            if not _PINNED_PACKAGE.match(package):
                raise DataFileError(
                    f"{source}: bootstrap.packages[{i}]: expected 'name=version' (a pinned Debian package), "
                    f"found {package!r}"
                )
        for key in ("suite", "variant"):
            if not _NAME.match(getattr(boot, key)):
                raise DataFileError(f"{source}: bootstrap.{key}: expected a Debian name, found {getattr(boot, key)!r}")
    reg = spec.registry
    if reg is not None:
        if "@" in reg.repository or ":" in reg.repository.rsplit("/", 1)[-1]:
            raise DataFileError(
                f"{source}: registry.repository: expected a repository without tag or digest, found {reg.repository!r}",
            )
        if not reg.tag or "@" in reg.tag:
            raise DataFileError(
                f"{source}: registry.tag: expected the human tag (the digest belongs in pins.toml, "
                f"written by `ascenv image pin`), found {reg.tag!r}"
            )
