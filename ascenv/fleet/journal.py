"""The rollout journal on disk: one JSON file, replaced atomically after each step (fsutil
.write_atomic: a reader, or a controller killed mid-write, sees the old journal or the new one)."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Optional

from ascenv import errors, fsutil, serde
from ascenv.fleet.rollout import Journal

LIMIT = 64 << 20


def load(path: Path, shown: str) -> Optional[Journal]:
    """The journal at ``path``; None when there is none yet."""
    if not path.exists():
        return None
    raw = fsutil.read_input(path, what="rollout journal", shown=shown, limit=LIMIT)
    try:
        journal = serde.from_data(Journal, json.loads(raw))
    except (ValueError, RecursionError, errors.SchemaError) as exc:
        raise errors.InputError(
            f"{shown} is not a rollout journal: {exc}",
            hint="pass --journal FILE of its own to this rollout, or move the damaged one away",
        ) from None
    if journal.schema != 1:
        raise errors.InputError(f"{shown}: journal schema {journal.schema}, this ascenv reads 1")
    return journal


def save(path: Path, journal: Journal) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fsutil.write_atomic(path, json.dumps(serde.to_data(journal), indent=1) + "\n")
    except OSError as exc:
        raise errors.UsageError(
            f"cannot write the rollout journal {path}: {exc.strerror or exc}",
            hint="pass --journal FILE in a writable place",
        ) from None


@contextlib.contextmanager
def held(path: Path, shown: str) -> Iterator[None]:
    """One controller per journal: an exclusive flock on ``<journal>.lock`` for the run (released
    when the process dies, SIGKILL included); a second run of the same rollout is refused, exit 2,
    rather than both asking the nodes and overwriting each other's journal."""
    import fcntl

    lock = path.with_name(path.name + ".lock")
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise errors.UsageError(
            f"cannot lock the rollout journal {shown}: {exc.strerror or exc}",
            hint="pass --journal FILE in a writable place",
        ) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise errors.UsageError(
                f"another ascenv fleet rollout is running with the journal {shown}",
                hint="wait for it to end (fleet rollout --status shows where it is), then rerun",
            ) from None
        yield
    finally:
        os.close(fd)
