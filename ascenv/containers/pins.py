"""``containers/pins.toml``: each image's ID or digest and the package versions inside.

Only ``ascenv image pin`` writes it (an explicit update); everything else compares against it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ascenv import serde
from ascenv.containers.recipe import parse_data, read_toml
from ascenv.errors import DataFileError
from ascenv.fsutil import write_atomic

SCHEMA = 1
PINS_FILE = "pins.toml"
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")


@dataclass(frozen=True)
class Pin:
    kind: str  # "bootstrap" (image_id is the content hash) or "registry" (ref is repo@digest)
    recipe_sha256: str  # the recipe this pin was made from; a changed recipe means re-pin
    architecture: str
    image_id: Optional[str] = None
    ref: Optional[str] = None
    tag: Optional[str] = None  # the human tag beside the digest (registry images)
    packages: dict[str, str] = field(default_factory=dict)

    @property
    def digest(self) -> str:
        return (self.image_id or "") if self.kind == "bootstrap" else (self.ref or "").rsplit("@", 1)[-1]


@dataclass(frozen=True)
class PinsFile:
    schema: int
    images: dict[str, Pin] = field(default_factory=dict)


@dataclass(frozen=True)
class PackageChange:
    name: str
    pinned: Optional[str]  # None: not in the pin (added)
    present: Optional[str]  # None: not in the image (removed)

    def describe(self) -> str:
        if self.pinned is None:
            return f"{self.name}: added {self.present}"
        if self.present is None:
            return f"{self.name}: removed (pinned {self.pinned})"
        return f"{self.name}: pinned {self.pinned}, present {self.present}"


def load_pins(path: Path) -> dict[str, Pin]:
    """The pins, validated; a missing file is no pins at all."""
    if not path.exists():
        return {}
    parsed = parse_data(PinsFile, read_toml(path), str(path))
    if parsed.schema != SCHEMA:
        raise DataFileError(f"{path}: schema: this ascenv reads schema {SCHEMA}, found {parsed.schema}")
    for name, pin in parsed.images.items():
        _validate(pin, f"{path}: images.{name}")
    return dict(parsed.images)


def _validate(pin: Pin, where: str) -> None:
    if pin.kind == "bootstrap":
        if not DIGEST.match(pin.image_id or ""):
            raise DataFileError(f"{where}.image_id: expected 'sha256:' and 64 hex digits, found {pin.image_id!r}")
    elif pin.kind == "registry":
        if not pin.ref or "@" not in pin.ref or not DIGEST.match(pin.ref.rsplit("@", 1)[1]):
            raise DataFileError(f"{where}.ref: expected 'repository@sha256:<64 hex digits>', found {pin.ref!r}")
    else:
        raise DataFileError(f"{where}.kind: expected 'bootstrap' or 'registry', found {pin.kind!r}")


def save_pins(path: Path, pins: dict[str, Pin]) -> None:
    """Write atomically, names sorted, empty fields left out, so diffs of pins.toml stay small."""
    import tomli_w

    images = {}
    for name in sorted(pins):
        data = serde.to_data(pins[name])
        images[name] = {k: v for k, v in data.items() if v not in (None, {})}
    text = "# Written by `ascenv image pin NAME`; do not edit by hand.\n" + tomli_w.dumps(
        {"schema": SCHEMA, "images": images}
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text)  # 0644: pins.toml is committed (mkstemp's 0600 leaked in before)


def package_changes(pinned: dict[str, str], present: dict[str, str]) -> list[PackageChange]:
    """Which packages differ between a pin and an image, sorted by name."""
    return [
        PackageChange(name, pinned.get(name), present.get(name))
        for name in sorted(set(pinned) | set(present))
        if pinned.get(name) != present.get(name)
    ]
