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
        # machine path -> what it was, for every probed path that is not a regular file (a FIFO
        # planted in an image): read as absent, and listed so the snapshot can say so
        self.skipped: dict[str, str] = {}

    @property
    def is_host(self) -> bool:
        return str(self.directory) == "/"

    def host_path(self, path: str) -> Path:
        """Where the machine path ``path`` lies on this host (no symlink resolution)."""
        return Path(self._host(path))

    def _host(self, path: str) -> str:
        # host_path() as a string: resolve() maps every component of every path read, and
        # building a Path each time was most of the file probes' time (start-up time).
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

    def _note_special(self, path: str, real: Path) -> None:
        try:
            mode = os.lstat(real).st_mode
        except (OSError, ValueError):
            return
        if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode) or stat.S_ISDIR(mode)):
            from ascenv.fsutil import file_kind

            self.skipped[path] = file_kind(mode)

    def read_text(self, path: str, limit: int = 4 << 20) -> Optional[str]:
        """The file's text (undecodable bytes replaced), or None when absent or unreadable."""
        data = self.read_bytes(path, limit)
        return None if data is None else data.decode("utf-8", errors="replace")

    def read_bytes(self, path: str, limit: int = 64 << 20) -> Optional[bytes]:
        """The file's first ``limit`` bytes, or None when absent, unreadable or not a regular file
        (``unreadable`` says why). An unpacked image is untrusted: a FIFO at a probed path would
        block ``open()`` forever and a device like /dev/zero never ends, so the file is opened
        non-blocking and without following a last symlink (``resolve`` already followed every
        link inside the root; one that appears since is not followed out of it), and its type is
        checked on the descriptor before anything is read."""
        try:
            real = self._real(path)
        except OSError:  # a directory on the way cannot be searched: ``unreadable`` says so
            return None
        if real is None:
            return None
        try:
            fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
        except (OSError, ValueError):
            self._note_special(path, real)  # a socket cannot be opened at all (ENXIO)
            return None
        try:
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                from ascenv.fsutil import file_kind

                self.skipped[path] = file_kind(mode)
                return None
            os.set_blocking(fd, True)
            chunks = []
            left = limit
            while left > 0:
                chunk = os.read(fd, min(left, 1 << 20))
                if not chunk:
                    break
                chunks.append(chunk)
                left -= len(chunk)
            return b"".join(chunks)
        except OSError:
            return None
        finally:
            os.close(fd)

    def unreadable(self, path: str, *, directory: bool = False) -> Optional[str]:
        """Why ``read_bytes(path)`` gives nothing although ``path`` exists: "permission denied",
        "a FIFO (named pipe), not a regular file", ...; None when it is absent or readable. With
        ``directory``, a directory is expected: why it cannot be listed."""
        try:
            real = self._real(path)
            if real is None:
                return None
            mode = os.lstat(real).st_mode
        except OSError as exc:
            return _reason(exc)
        if directory and stat.S_ISDIR(mode):
            try:
                os.listdir(real)
            except OSError as exc:
                return _reason(exc)
            return None
        if not stat.S_ISREG(mode):
            from ascenv.fsutil import file_kind

            return f"{file_kind(mode)}, not a regular file"
        try:
            os.close(os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC))
        except OSError as exc:
            return _reason(exc)
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


def _reason(exc: OSError) -> str:
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    return exc.strerror or str(exc)
