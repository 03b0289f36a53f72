"""File-system helpers shared by the commands and the stores."""

from __future__ import annotations

import contextlib
import os
import tempfile
from typing import Union

TEMP_PREFIX = ".ascenv-"  # temp files are ``.ascenv-<name>.<random>.tmp`` beside their target


def write_atomic(path: Union[str, "os.PathLike[str]"], data: Union[bytes, str], *, mode: int = 0o644) -> None:
    """Write ``data`` (str as UTF-8) to ``path`` so that a reader sees the old file or the new one,
    never half of one: a temp file in the same directory (so the rename stays on one file
    system), given ``mode``, fsynced, then renamed over ``path``. The temp file is removed on
    any failure, KeyboardInterrupt included; errors (OSError) propagate to the caller."""
    path = os.fspath(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f"{TEMP_PREFIX}{os.path.basename(path)}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fchmod(fh.fileno(), mode)  # mkstemp makes 0600
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
