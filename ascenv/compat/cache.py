"""``load_cached``: ``load()`` kept as a pickle in the user's cache between runs."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

from ascenv import paths
from ascenv.compat.loader import FILES, load
from ascenv.compat.queries import Matrix
from ascenv.versions import (
    AscendVersion,
)


def load_cached(cache_dir: Optional[str], directory: Optional[Path] = None, overlay: Optional[Path] = None) -> Matrix:
    """``load()``, kept as a pickle in ``cache_dir`` (the user's ascenv cache) between runs:
    parsing and validating the TOML is a third of ``ascenv doctor``'s start-up.

    The cache is keyed by the bytes of the data files and of the modules defining the rows, so
    an edited file or a new ascenv rebuilds it; it is read only if this user owns it and nobody
    else can write it (a pickle runs code when loaded). Any problem means: parse the TOML."""
    import hashlib
    import os
    import pickle
    import stat

    directory = Path(directory) if directory is not None else paths.data_dir("compat")
    if not cache_dir:
        return load(directory, overlay)
    digest = hashlib.sha256(sys.version.encode())
    replaced = [overlay / name for name in FILES if overlay is not None and (overlay / name).is_file()]
    try:
        for file in [
            *(directory / name for name in FILES),
            *replaced,
            *sorted(Path(__file__).parent.glob("*.py")),  # the modules defining the rows
            Path(sys.modules[AscendVersion.__module__].__file__ or ""),
        ]:
            digest.update(str(file).encode() + b"\0" + file.read_bytes())
    except OSError:
        return load(directory, overlay)
    key = digest.hexdigest()
    path = os.path.join(cache_dir, "compat-matrix.pickle")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if info.st_uid == os.geteuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                cached_key, matrix = pickle.load(handle)
                if cached_key == key and isinstance(matrix, Matrix):
                    return matrix
    except Exception:  # noqa: BLE001 - missing, truncated or foreign cache: rebuild it
        pass
    matrix = load(directory, overlay)
    from ascenv.fsutil import write_atomic

    try:
        os.makedirs(cache_dir, mode=0o700, exist_ok=True)
        write_atomic(path, pickle.dumps((key, matrix), protocol=pickle.HIGHEST_PROTOCOL), mode=0o600)
    except (OSError, pickle.PicklingError):  # a read-only home: no cache, same answers
        pass
    return matrix
