"""Seam for containers and images labelled ``ascenv.*`` (kind ``container``).

The container engine belongs to ``ascenv.containers``; once it can list and remove labelled
objects, an adapter implementing ``LabelledObjects`` is passed to the clean-cache command
(``clean_cache.labelled_objects``), which lists them as entries with paths ``image:<id>`` /
``container:<id>`` and removes planned ones through ``remove``. Until then none are listed.
"""

from __future__ import annotations

from typing import Optional, Protocol, Sequence

from ascenv.cache.entry import CacheEntry


class LabelledObjects(Protocol):
    def entries(self) -> Sequence[CacheEntry]:
        """Every container and image carrying an ``ascenv.*`` label, as kind ``container``."""

    def remove(self, entry: CacheEntry) -> Optional[str]:
        """Remove one; an error message, or None when it is gone."""
