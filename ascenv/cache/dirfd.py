"""Directory descriptors that never follow a symlink, and mount points.

``open_dir_path`` opens a directory from ``/`` one component at a time, each with
``openat(O_NOFOLLOW)`` relative to the one before, which is what ``openat2`` with
``RESOLVE_NO_SYMLINKS`` does (https://man7.org/linux/man-pages/man2/openat2.2.html): a symlink
anywhere in the path fails with ELOOP or ENOTDIR instead of leading elsewhere, and PATH_MAX
never applies. Mount points are told apart by their mount ID, because a bind mount of the same
file system has the same ``st_dev``: ``mnt_id`` of ``/proc/self/fdinfo/<fd>`` for an open
directory, the mount-point column of ``/proc/self/mountinfo`` for a path
(https://man7.org/linux/man-pages/man5/proc_pid_fdinfo.5.html,
https://man7.org/linux/man-pages/man5/proc_pid_mountinfo.5.html).
"""

from __future__ import annotations

import os
import re
from typing import Optional

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def open_dir_path(path: str, start: Optional[tuple[str, int]] = None) -> int:
    """A descriptor of the directory ``path`` (absolute, normalised), no component followed.
    ``start``: (an ancestor of ``path``, its open descriptor) to walk from instead of ``/``
    (not closed here)."""
    if start is not None:
        prefix, fd = start
        rest = path[len(prefix) :]
        fd = os.dup(fd)
    else:
        rest, fd = path, os.open("/", DIR_FLAGS)
    try:
        for part in rest.split("/"):
            if not part:
                continue
            if part in (".", ".."):
                raise OSError(22, "not a normalised path", path)
            child = os.open(part, DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def mount_id(fd: int) -> Optional[int]:
    """The mount ID of an open file (None where /proc does not say)."""
    try:
        with open(f"/proc/self/fdinfo/{fd}", "rb") as handle:
            for line in handle:
                if line.startswith(b"mnt_id:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


_ESCAPE = re.compile(rb"\\([0-7]{3})")


def mount_points() -> frozenset[str]:
    """Every mount point of this process's mount namespace (empty where /proc is absent)."""
    try:
        with open("/proc/self/mountinfo", "rb") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return frozenset()
    points = set()
    for line in lines:
        fields = line.split(b" ")
        if len(fields) > 4:
            points.add(os.fsdecode(_ESCAPE.sub(lambda m: bytes([int(m.group(1), 8)]), fields[4])))
    return frozenset(points)
