"""ELF files read under a root (``/`` or ``--root DIR``), each parsed once.

Paths are machine paths; ``fs.Root`` resolves symlinks inside the root, so an absolute link in an
unpacked image never reads the host's library instead of the image's.
"""

from __future__ import annotations

import os
import stat
from typing import Optional

from ascenv.elf import ElfError, ElfFile, parse
from ascenv.probe.fs import Root


class Tree:
    def __init__(self, root: Root) -> None:
        self.root = root
        self._elf: dict[str, Optional[ElfFile]] = {}
        # by the path asked for: the loader tries each missing name in a dozen directories for every
        # library that needs it (libcudart.so.12 of a CUDA torch), and resolving each path again
        # under the root was a third of the check's time on torch 2.9.0's x86_64 wheel
        self._by_path: dict[str, Optional[ElfFile]] = {}
        self.problems: dict[str, str] = {}  # machine path -> why it could not be read as ELF

    def real(self, path: str) -> Optional[str]:
        """The machine path with symlinks resolved (two names of one file load once)."""
        try:
            return self.root.resolve(path)
        except OSError:
            return None

    def elf(self, path: str) -> Optional[ElfFile]:
        """The parsed file at ``path``; None when absent, not a regular file or not ELF."""
        if path not in self._by_path:
            self._by_path[path] = self._elf_at(path)
        return self._by_path[path]

    def _elf_at(self, path: str) -> Optional[ElfFile]:
        real = self.real(path)
        if real is None:
            return None
        if real not in self._elf:
            self._elf[real] = self._read(real)
        return self._elf[real]

    def _read(self, real: str) -> Optional[ElfFile]:
        host = self.root.host_path(real)
        try:
            # non-blocking, no last-link following, regular files only: an image is untrusted
            # (a FIFO at a library path would block open() forever); as fs.Root.read_bytes
            fd = os.open(host, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
        except (OSError, ValueError):
            return None
        with os.fdopen(fd, "rb") as f:
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    return None
                return parse(f)
            except (OSError, ElfError) as exc:
                self.problems[real] = str(exc)
                return None

    def text(self, path: str) -> Optional[str]:
        return self.root.read_text(path)

    def data(self, path: str) -> Optional[bytes]:
        return self.root.read_bytes(path)

    def glob(self, directory: str, pattern: str) -> list[str]:
        return sorted(self.root.glob(directory, pattern))
