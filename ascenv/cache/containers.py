"""Containers and images labelled ``ascenv.*`` as clean-cache entries (kind ``container``), with
paths ``container:<name>`` / ``image:<id>``, removed through the engine (``owner`` "engine").

- a container carrying ``ascenv.managed`` that is not running is removable; a running one is
  listed as in use;
- an image carrying any ``ascenv.*`` label is removable unless it is pinned (its ID, or one of its
  registry digests, is in a pins.toml) or its ``ascenv.recipe`` label names a recipe pinned by ID
  in a pins file named with ``--pins`` (another project's: a rebuild there may not be pinned
  yet, or was pinned on another machine): these are listed as protected, never planned;
  an image still used by a container is not removed (the engine is asked again at delete time);
- anything created or tagged after ``recent_cutoff`` is left for a later run, like recent files:
  a build may be starting it right now.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from ascenv.cache.entry import CacheEntry
from ascenv.containers import LABEL_PREFIX, MANAGED_LABEL, RECIPE_LABEL

if TYPE_CHECKING:
    from ascenv.containers.engine import Engine

OWNER = "engine"
RUNNING = ("running", "paused", "restarting", "removing")


def pinned_refs(pins_files: Iterable[Path]) -> tuple[frozenset[str], tuple[str, ...]]:
    """Image IDs and ``repository@sha256:…`` references pinned in these files, and notes for
    files that cannot be read (then nothing can be known to be unpinned: see ``EngineObjects``)."""
    from ascenv.containers.pins import load_pins
    from ascenv.errors import AscenvError

    refs: set[str] = set()
    notes: list[str] = []
    for path in pins_files:
        try:
            pins = load_pins(path)
        except (AscenvError, OSError) as exc:
            notes.append(
                f"cannot read {path} ({getattr(exc, 'message', exc)}); no labelled image is listed for deletion"
            )
            continue
        refs |= {r for pin in pins.values() for r in (pin.image_id, pin.ref) if r}
    return frozenset(refs), tuple(notes)


def pinned_recipes(pins_files: Iterable[Path]) -> dict[str, str]:
    """Recipe name -> the first of these files that pins it by image ID. A file that cannot be
    read is skipped: ``pinned_refs`` reports it, and then every image is kept anyway."""
    from ascenv.containers.pins import load_pins
    from ascenv.errors import AscenvError

    found: dict[str, str] = {}
    for path in pins_files:
        try:
            pins = load_pins(path)
        except (AscenvError, OSError):
            continue
        for name, pin in pins.items():
            if pin.image_id:
                found.setdefault(name, str(path))
    return found


def _epoch(rfc3339: str) -> Optional[float]:
    """``2025-05-20T10:00:00.123456789Z`` (the engine's nanoseconds dropped) -> seconds since 1970."""
    try:
        moment = datetime.datetime.fromisoformat(re.sub(r"\.\d+", "", rfc3339).replace("Z", "+00:00"))
    except ValueError:
        return None
    seconds = (moment if moment.tzinfo else moment.replace(tzinfo=datetime.timezone.utc)).timestamp()
    return seconds if seconds > 0 else None  # 0001-01-01: never tagged


@dataclass
class EngineObjects:
    engine: Engine
    pinned: frozenset[str]
    recent_cutoff: float
    pins_unreadable: bool = False  # then every image is kept
    recipes: Mapping[str, str] = field(default_factory=dict)  # pinned recipe -> its pins file (``pinned_recipes``)
    pins_files: tuple[str, ...] = ()  # the pins files read, for the plan to name
    scope: Mapping[str, str] = field(default_factory=dict)  # extra labels listed objects must carry (tests)

    def entries(self) -> list[CacheEntry]:
        root = f"engine {self.engine.host}"
        found = []
        for c in self.engine.container_infos({MANAGED_LABEL: "", **self.scope}):
            in_use = f"the container is {c.state}" if c.state in RUNNING else self._recent(c.created)
            found.append(
                CacheEntry(
                    "container",
                    f"container:{c.name}",
                    root,
                    f"label {MANAGED_LABEL}",
                    allocated=c.size,
                    apparent=c.size,
                    newest=c.created,
                    oldest=c.created,
                    in_use=in_use,
                    owner=OWNER,
                )
            )
        for image in self.engine.images_labelled(LABEL_PREFIX):
            if any(image.labels.get(k) != v for k, v in self.scope.items()):
                continue
            # bootstrapped images are created at SOURCE_DATE_EPOCH: their age is when they were loaded
            when = _epoch(image.tagged_at) if image.tagged_at else None
            protected = None
            if self.pins_unreadable:
                protected = "a pins.toml cannot be read, so no image is known to be unpinned"
            elif image.id in self.pinned or set(image.repo_digests) & self.pinned:
                protected = "pinned in containers/pins.toml"
            elif image.labels.get(RECIPE_LABEL) in self.recipes:
                recipe = image.labels[RECIPE_LABEL]
                protected = f"built from recipe {recipe}, pinned in {self.recipes[recipe]}"
            found.append(
                CacheEntry(
                    "container",
                    f"image:{image.id}",
                    root,
                    f"label {LABEL_PREFIX}*",
                    allocated=image.size,
                    apparent=image.size,
                    newest=when,
                    oldest=when,
                    protected=protected,
                    in_use=self._recent(when),
                    owner=OWNER,
                )
            )
        return found

    def _recent(self, when: Optional[float]) -> Optional[str]:
        return (
            "created in the last minutes (a build may be starting it)"
            if when is not None and when >= self.recent_cutoff
            else None
        )

    def remove(self, entry: CacheEntry) -> Optional[str]:
        import docker.errors

        what, _, ref = entry.path.partition(":")
        try:
            if what == "container":
                self.engine.remove_container(ref)
                return None
            users = self.engine.image_users(ref)
            if users:
                return f"used by container {', '.join(users)}"
            self.engine.remove_image(ref)
        except docker.errors.APIError as exc:
            return str(exc.explanation or exc)
        return None
