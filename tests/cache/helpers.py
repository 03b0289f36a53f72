"""Helpers for the cache tests: a digest of a whole tree, and running code as another user."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable


def tree_digest(top: str | bytes | os.PathLike, exclude: Iterable[str | bytes | os.PathLike] = ()) -> str:
    """sha256 over every path, type, mode, owner, link target and file content below ``top``
    (symlinks are not followed), leaving out the trees ``exclude`` names: any change outside
    them changes it."""
    h = hashlib.sha256()
    top = os.fsencode(top)
    skip = {os.fsencode(p) for p in exclude}
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if os.path.join(dirpath, d) not in skip)
        for name in sorted(dirnames + filenames):
            path = os.path.join(dirpath, name)
            if path in skip:
                continue
            st = os.lstat(path)
            h.update(path + b"\0" + f"{st.st_mode:o} {st.st_uid}".encode())
            if stat.S_ISLNK(st.st_mode):
                h.update(os.readlink(path))
            elif stat.S_ISREG(st.st_mode):
                with open(path, "rb") as fh:
                    h.update(fh.read())
    return h.hexdigest()


@contextmanager
def canary(top: str | os.PathLike, *caches: str | bytes | os.PathLike) -> Iterator[None]:
    """The canary-tree check every clean-cache test uses: everything below ``top`` except the
    ``caches`` (which may be deleted) hashes the same after the block as before it."""
    before = tree_digest(top, caches)
    yield
    assert tree_digest(top, caches) == before, f"something outside {[os.fsdecode(c) for c in caches]} changed"


def write(path: str | bytes, data: bytes = b"x", mtime: float | None = None) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(data)
    if mtime is not None:
        os.utime(path, (mtime, mtime))


def as_user(uid: int, fn: Callable[[], Any]) -> Any:
    """Run ``fn`` in a forked child with ``os.setuid(uid)`` (root ignores permission bits, so an
    unreadable directory can only be met as someone else) and return its JSON-able result."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        code = 0
        try:
            os.close(read_end)
            os.setgid(uid)
            os.setuid(uid)
            payload = json.dumps({"ok": fn()})
        except BaseException as exc:  # noqa: BLE001 - report anything to the parent
            payload = json.dumps({"error": f"{type(exc).__name__}: {exc}"})
            code = 1
        with os.fdopen(write_end, "w") as fh:
            fh.write(payload)
        os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end) as fh:
        data = json.loads(fh.read() or '{"error": "no output"}')
    os.waitpid(pid, 0)
    if "error" in data:
        raise AssertionError(data["error"])
    return data["ok"]


@contextmanager
def shared_tmp() -> Iterator[Path]:
    """A directory another user can enter (pytest's tmp_path is 0700 under root)."""
    path = tempfile.mkdtemp(prefix="ascenv-cache-test-")
    os.chmod(path, 0o755)
    try:
        yield Path(path)
    finally:
        shutil.rmtree(path)
