"""File-system helpers shared by the commands and the stores."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import Union

TEMP_PREFIX = ".ascenv-"  # temp files are ``.ascenv-<name>.<random>.tmp`` beside their target


def write_atomic(path: Union[str, os.PathLike[str]], data: Union[bytes, str], *, mode: int = 0o644) -> None:
    """Write ``data`` (str as UTF-8) to ``path`` so that a reader sees the old file or the new one,
    never half of one: a temp file in the same directory (so the rename stays on one file
    system), given ``mode``, fsynced, then renamed over ``path``. The temp file is removed on
    any failure, KeyboardInterrupt included; errors (OSError) propagate to the caller."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    with atomic_path(path, mode=mode) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(payload)


@contextlib.contextmanager
def atomic_path(path: Union[str, os.PathLike[str]], *, mode: int = 0o644) -> Iterator[str]:
    """``write_atomic`` for a file written by someone else (a tar archive, a stream too large to
    hold in memory): yields the path of an empty temp file beside ``path`` to write; when the
    block ends without an exception it is given ``mode``, fsynced and renamed over ``path``; on
    any exception it is removed and ``path`` is left as it was."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f"{TEMP_PREFIX}{os.path.basename(path)}.", suffix=".tmp")
    os.close(fd)
    try:
        yield tmp
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fchmod(fd, mode)  # mkstemp makes 0600
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
