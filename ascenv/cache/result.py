"""What one `ascenv clean-cache` run found, planned and did, for its renderer."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Optional

from ascenv.cache.entry import CacheEntry
from ascenv.cache.plan import Plan

if TYPE_CHECKING:  # the deleter is imported only when something is deleted
    from ascenv.cache.execute import Outcome

LS, DRY_RUN, DELETE = "ls", "dry-run", "delete"


@dataclass(frozen=True)
class CleanCache:
    mode: str  # LS, DRY_RUN or DELETE
    listed: tuple[CacheEntry, ...]  # what the filters select, for the listing
    warnings: tuple[str, ...]
    scan_seconds: float
    now: float  # the time ages are measured from
    plan: Optional[Plan] = None
    pins_files: Optional[tuple[str, ...]] = None  # the pins files read to keep images; None: no image listed
    outcome: Optional[Outcome] = None  # what the delete did (DELETE, once confirmed)
    journal: Optional[str] = None

    def with_outcome(self, outcome: Outcome, journal: str) -> CleanCache:
        return replace(self, outcome=outcome, journal=journal)
