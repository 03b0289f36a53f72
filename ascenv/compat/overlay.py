"""A user's newer copy of some of the data files: the *overlay*, a directory (under the user's data
directory, chosen by the command) holding replacements of ``cann.toml``, ``torch_npu.toml``,
``hardware.toml`` or ``stacks.toml``. ``load(shipped, overlay)`` reads each file from the overlay
where it has one, else the shipped copy; the shipped data stays the default and removing the
overlay restores it. A file is accepted only when the data it makes, with every other file as it
would be read, loads and validates as a whole (the cross-file references included)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ascenv import fsutil
from ascenv.compat.loader import FILES, load
from ascenv.errors import DataFileError, InputError


@dataclass(frozen=True)
class Installed:
    """What ``install`` did: the overlay, the files it now replaces and the data's day."""

    overlay: str
    files: tuple[str, ...]  # names, in FILES order, the overlay now replaces
    added: tuple[str, ...]  # names this call wrote
    as_of: str  # of the data as it now loads (the oldest file's day)
    shipped_as_of: str
    older: tuple[str, ...] = ()  # names given older than the shipped file: doctor will not read them


@dataclass(frozen=True)
class Removed:
    overlay: str
    files: tuple[str, ...]  # the names it replaced; empty when there was none


def files_in(overlay: Optional[Path]) -> tuple[str, ...]:
    """The data files ``overlay`` replaces (none when it does not exist)."""
    if overlay is None:
        return ()
    return tuple(name for name in FILES if (overlay / name).is_file())


def install(shipped: Path, overlay: Path, new: Sequence[tuple[str, bytes]]) -> Installed:
    """Validate and install ``new`` (the file as the user named it, its bytes) into ``overlay``.
    A file is named by its base name (``stacks.toml``); a name that is no data file, a file that
    is given twice or data that does not load is an InputError (exit 2) naming the file as
    given, and nothing is written."""
    by_name: dict[str, tuple[str, bytes]] = {}
    for shown, data in new:
        name = os.path.basename(shown)
        if name not in FILES:
            raise InputError(
                f"{shown}: not an ascenv data file (expected one of {', '.join(FILES)})",
                hint="pass the files `bin/compat_update.py --write` regenerates, under their own names",
            )
        if name in by_name:
            raise InputError(f"{shown}: {name} given twice ({by_name[name][0]} and {shown})")
        by_name[name] = (shown, data)
    with tempfile.TemporaryDirectory(prefix="ascenv-compat-") as scratch:
        staged = Path(scratch, "compat")
        staged.mkdir()
        for name in FILES:  # every file as it would be read after the install
            if name in by_name:
                (staged / name).write_bytes(by_name[name][1])
            else:
                shutil.copyfile((overlay if name in files_in(overlay) else shipped) / name, staged / name)
        try:
            matrix = load(staged)
            older = tuple(n for n in FILES if n in by_name and _day(staged, n) < _day(shipped, n))
        except DataFileError as exc:
            raise InputError(_as_given(exc.message, by_name), hint=exc.hint or _HINT) from None
    overlay.mkdir(parents=True, exist_ok=True)
    for name, (_, data) in by_name.items():
        fsutil.write_atomic(overlay / name, data, mode=0o644)
    added = tuple(n for n in FILES if n in by_name)
    return Installed(str(overlay), files_in(overlay), added, matrix.as_of, _as_of(shipped), older)


_HINT = "fix the file (or regenerate it with bin/compat_update.py) and run `ascenv compat update` again"


def _as_given(message: str, by_name: dict[str, tuple[str, bytes]]) -> str:
    """The loader names files ``compat/<name>``: name a given file as the user gave it."""
    for name, (shown, _) in by_name.items():
        message = message.replace(f"compat/{name}", shown)
    return message


def _day(directory: Path, name: str) -> str:
    from ascenv.compat.loader import read_table

    return read_table(directory, name).date("as_of")


def _as_of(directory: Path) -> str:
    return load(directory).as_of


def remove(overlay: Path) -> Removed:
    """Remove the overlay's data files (and the directory when that leaves it empty)."""
    names = files_in(overlay)
    for name in names:
        (overlay / name).unlink()
    try:
        overlay.rmdir()
    except OSError:  # absent, or holds something that is not ours: left alone
        pass
    return Removed(str(overlay), names)
