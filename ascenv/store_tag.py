"""What makes a directory an ascenv build store: a CACHEDIR.TAG (https://bford.info/cachedir/)
that ascenv wrote when it created the store, holding the standard signature line and ascenv's own
line below it. Every store ascenv has made carries exactly ``CACHEDIR_TAG`` (0.1.0 wrote it too);
a tag without ascenv's line is another program's, and a directory without a tag is the user's.
A module of its own, light to import: the cache scanner asks it too (``cache.scan``)."""

from __future__ import annotations

import os
import stat
from typing import Optional, Union

from ascenv.fsutil import file_kind

TAG = "CACHEDIR.TAG"
TAG_SIGNATURE = "Signature: 8a477f597d28d172789f06886806bc55"
TAG_MARK = "# This directory is ascenv's build store."
CACHEDIR_TAG = f"{TAG_SIGNATURE}\n{TAG_MARK}\n"  # what ascenv writes (and has written since 0.1.0)
TAG_LIMIT = 4096  # ascenv writes 88 bytes; a larger tag is not one it wrote
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def tag_problem(root: Union[str, os.PathLike[str]]) -> Optional[str]:
    """None when ``root`` is an ascenv store (a real directory holding ascenv's tag, a regular
    file, read without following a symlink); else why it is not, in words. A symlinked ``root``
    is followed (the user named it); nothing below it is."""
    lines = tag_lines(root)
    return lines if isinstance(lines, str) else _judge_tag(lines)


def tag_lines(root: Union[str, os.PathLike[str]]) -> Union[list[str], str]:
    """The lines of ``root``'s CACHEDIR.TAG (a regular file of at most TAG_LIMIT bytes, never
    through a symlink), or why there are none."""
    try:
        fd = os.open(os.path.realpath(root), DIR_FLAGS)
    except FileNotFoundError:
        return "there is nothing there"
    except OSError as exc:
        return f"it cannot be opened as a directory ({exc.strerror or exc})"
    try:
        return _tag_lines_at(fd)
    finally:
        os.close(fd)


def _tag_lines_at(root_fd: int) -> Union[list[str], str]:
    try:
        fd = os.open(TAG, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0), dir_fd=root_fd)
    except FileNotFoundError:
        return f"it holds no {TAG}"
    except OSError as exc:
        return f"its {TAG} cannot be read ({exc.strerror or exc}; a symbolic link is not followed)"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return f"its {TAG} is {file_kind(info.st_mode)}, not a file"
        if info.st_size > TAG_LIMIT:
            return f"its {TAG} is larger than any tag ascenv writes"
        data = os.read(fd, TAG_LIMIT + 1)
    except OSError as exc:
        return f"its {TAG} cannot be read ({exc.strerror or exc})"
    finally:
        os.close(fd)
    return data.decode("utf-8", "replace").splitlines()


def _judge_tag(lines: list[str]) -> Optional[str]:
    if not lines or lines[0] != TAG_SIGNATURE:
        return f"its {TAG} does not start with the cache-directory signature"
    if TAG_MARK not in lines[1:]:
        return f"its {TAG} was written by another program (no line {TAG_MARK!r})"
    return None


def tag_problem_at(root_fd: int) -> Optional[str]:
    lines = _tag_lines_at(root_fd)
    return lines if isinstance(lines, str) else _judge_tag(lines)
