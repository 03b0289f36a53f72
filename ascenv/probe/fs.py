"""File-system access under a root: ``/`` on a live machine, or ``--root DIR`` for an unpacked
image or a test fixture.

Paths inside the probes are the paths *as the machine sees them* (``/usr/local/Ascend/...``);
``Root`` maps them under its directory and resolves symlinks *inside* it, so an absolute link
``latest -> /usr/local/Ascend/ascend-toolkit/8.0.0`` in an unpacked image never escapes to the
host running ascenv. Nothing under the root is ever executed.
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Optional

_MAX_LINKS = 40  # as the kernel's ELOOP limit
# lstat errors meaning "no such entry" (those pathlib's is_symlink() ignores; others propagate)
_ABSENT = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)


class Root:
    def __init__(self, directory: str | os.PathLike = "/") -> None:
        self.directory = Path(os.path.abspath(directory))

    @property
    def is_host(self) -> bool:
        return str(self.directory) == "/"

    def host_path(self, path: str) -> Path:
        """Where the machine path ``path`` lies on this host (no symlink resolution)."""
        return Path(self._host(path))

    def _host(self, path: str) -> str:
        # host_path() as a string: resolve() maps every component of every path read, and
        # building a Path each time was most of the file probes' time (issue #3 item 5).
        path = posixpath.normpath("/" + path.lstrip("/"))
        if path == "/":
            return str(self.directory)
        return posixpath.join(str(self.directory), path.lstrip("/"))

    def resolve(self, path: str) -> Optional[str]:
        """The machine path with every symlink resolved inside the root; None if it dangles/loops."""
        parts = [p for p in posixpath.normpath("/" + path).split("/") if p]
        resolved = "/"
        hops = 0
        while parts:
            part = parts.pop(0)
            if part == "..":
                resolved = posixpath.dirname(resolved)
                continue
            candidate = posixpath.join(resolved, part)
            host = self._host(candidate)
            try:
                mode = os.lstat(host).st_mode
            except ValueError:  # a NUL byte in the path
                return None
            except OSError as exc:
                if exc.errno in _ABSENT:
                    return None
                raise
            if stat.S_ISLNK(mode):
                hops += 1
                if hops > _MAX_LINKS:
                    return None
                target = os.readlink(host)
                base = "/" if target.startswith("/") else resolved
                parts = [p for p in target.split("/") if p and p != "."] + parts
                resolved = base
                continue
            resolved = candidate
        return resolved

    def readlink(self, path: str) -> Optional[str]:
        try:
            return os.readlink(self.host_path(path))
        except OSError:
            return None

    def is_symlink(self, path: str) -> bool:
        return self.host_path(path).is_symlink()

    def _real(self, path: str) -> Optional[Path]:
        resolved = self.resolve(path)
        return None if resolved is None else self.host_path(resolved)

    def exists(self, path: str) -> bool:
        return self._real(path) is not None

    def is_dir(self, path: str) -> bool:
        real = self._real(path)
        return real is not None and real.is_dir()

    def is_file(self, path: str) -> bool:
        real = self._real(path)
        return real is not None and real.is_file()

    def read_text(self, path: str, limit: int = 4 << 20) -> Optional[str]:
        """The file's text (undecodable bytes replaced), or None when absent or unreadable."""
        real = self._real(path)
        if real is None:
            return None
        try:
            with open(real, "rb") as fh:
                return fh.read(limit).decode("utf-8", errors="replace")
        except OSError:
            return None

    def read_bytes(self, path: str, limit: int = 64 << 20) -> Optional[bytes]:
        real = self._real(path)
        if real is None:
            return None
        try:
            with open(real, "rb") as fh:
                return fh.read(limit)
        except OSError:
            return None

    def listdir(self, path: str) -> list[str]:
        """Sorted names in a directory; empty when absent or unreadable."""
        real = self._real(path)
        if real is None:
            return []
        try:
            return sorted(os.listdir(real))
        except OSError:
            return []

    def glob(self, path: str, pattern: str) -> Iterator[str]:
        """Machine paths of the entries of ``path`` matching a shell pattern."""
        import fnmatch

        for name in self.listdir(path):
            if fnmatch.fnmatchcase(name, pattern):
                yield posixpath.join(path, name)

    def access(self, path: str, mode: int) -> bool:
        real = self._real(path)
        return real is not None and os.access(real, mode)
