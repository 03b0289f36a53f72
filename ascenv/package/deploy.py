"""Keep the vendor directory an install replaces, and put it back atomically.

Layout, inside the install path (the directory holding ``vendors/``)::

    vendors/<v>/                          the live vendor, what CANN loads
    vendors/.<v>.ascenv-incoming          staging name of a swap (same directory as the live one)
    vendors/.<v>.ascenv-outgoing          the displaced tree, where an exchange is not available
    .ascenv-previous/<v>/                 the vendor the last install or rollback replaced
    .ascenv-previous/<v>.rollback.json    journal of a rollback under way

``.ascenv-previous`` lies beside ``vendors/``, not in it, so CANN never takes it for a vendor
(it loads the vendor directories below ``vendors/`` and those of ASCEND_CUSTOM_OPP_PATH).

A rollback is a rename-based swap: the kept tree is renamed to the staging name, then exchanged
with the live one by ``renameat2(RENAME_EXCHANGE)`` (Linux >= 3.15, man 2 rename), so the live
name always holds one complete tree; where the exchange is refused it falls back to two renames
and the journal covers the moment between them. The journal names the tree that must end up
live by its inode (renames keep it), so a run killed at any step is finished by the next one
from what is on disk.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ascenv import errors
from ascenv.fsutil import write_atomic

KEEP_DIR = ".ascenv-previous"
Step = Callable[[str], None]  # called after each step (tests kill the process there)


def _no_step(name: str) -> None:
    return None


@dataclass(frozen=True)
class VendorPaths:
    root: Path  # the install path
    vendor: str

    @property
    def current(self) -> Path:
        return self.root / "vendors" / self.vendor

    @property
    def incoming(self) -> Path:
        return self.root / "vendors" / f".{self.vendor}.ascenv-incoming"

    @property
    def outgoing(self) -> Path:
        return self.root / "vendors" / f".{self.vendor}.ascenv-outgoing"

    @property
    def previous(self) -> Path:
        return self.root / KEEP_DIR / self.vendor

    @property
    def partial(self) -> Path:
        return self.root / KEEP_DIR / f".{self.vendor}.partial"

    @property
    def discard(self) -> Path:
        return self.root / KEEP_DIR / f".{self.vendor}.discard"

    @property
    def journal(self) -> Path:
        return self.root / KEEP_DIR / f"{self.vendor}.rollback.json"


@dataclass(frozen=True)
class Rollback:
    vendor: str
    install_path: str
    live: str  # the vendor directory, now holding the kept tree
    kept: str  # where the tree it replaced is now (a second rollback swaps back)
    finished_interrupted: bool  # an earlier rollback was killed midway and was completed first
    compute_units: tuple[str, ...]  # units with kernels in either tree: their kernel caches may be stale


def _identity(path: Path) -> Optional[tuple[int, int]]:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino)


def _sync_dir(path: Path) -> None:
    """Make renames in ``path`` durable (a crash after we report must not undo them)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically; False where the kernel, libc or file system cannot."""
    import ctypes  # imported on use: only a rollback needs it

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2  # <fcntl.h>, <linux/fs.h>
    # any failure falls back to plain renames, which raise the error again if it is real
    return renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


def keep_previous(root: Path, vendors: Sequence[str], step: Step = _no_step) -> list[Path]:
    """Copy each live vendor the install will replace to ``.ascenv-previous/<v>`` (copied, not
    moved: the installer may merge into the existing directory). The copy is made under a
    partial name and renamed in, so the kept tree is complete or absent."""
    kept = []
    for vendor in vendors:
        paths = VendorPaths(root, vendor)
        finish_interrupted(paths, step)
        if not paths.current.is_dir():
            continue
        paths.previous.parent.mkdir(exist_ok=True)
        for leftover in (paths.partial, paths.discard):
            if leftover.exists():
                shutil.rmtree(leftover)
        shutil.copytree(paths.current, paths.partial, symlinks=True)
        step("copied")
        if paths.previous.exists():
            os.rename(paths.previous, paths.discard)
        os.rename(paths.partial, paths.previous)
        _sync_dir(paths.previous.parent)
        step("kept")
        if paths.discard.exists():
            shutil.rmtree(paths.discard)
        kept.append(paths.previous)
    return kept


def finish_interrupted(paths: VendorPaths, step: Step = _no_step) -> bool:
    """Complete a rollback whose journal is still there; True when there was one."""
    try:
        target_text = paths.journal.read_text()
    except FileNotFoundError:
        return False
    try:
        data = json.loads(target_text)
        target = (int(data["dev"]), int(data["ino"]))
    except (ValueError, KeyError, TypeError) as exc:
        raise errors.InputError(
            f"the rollback journal {paths.journal} cannot be read ({exc})",
            hint=f"look at {paths.current} and {paths.previous}, keep the right one, then remove the journal",
        ) from None
    _swap(paths, target, step)
    return True


def _swap(paths: VendorPaths, target: tuple[int, int], step: Step) -> None:
    """Bring the tree ``target`` to the live name; the tree it replaces goes to previous.
    Each branch starts from what is on disk, so it resumes wherever a killed run stopped."""
    vendors_dir = paths.current.parent
    if _identity(paths.current) != target:
        if _identity(paths.previous) == target:
            os.rename(paths.previous, paths.incoming)
            _sync_dir(vendors_dir)
            step("staged")
        if _identity(paths.incoming) != target:
            raise errors.InputError(
                f"the rollback of {paths.vendor} cannot go on: the kept tree is neither at "
                f"{paths.previous} nor at {paths.incoming}",
                hint=f"look at {vendors_dir}; remove {paths.journal} once the right vendor is in place",
            )
        if paths.current.exists():
            if not _exchange(paths.incoming, paths.current):
                os.rename(paths.current, paths.outgoing)
                step("moved-out")
                os.rename(paths.incoming, paths.current)
        else:
            os.rename(paths.incoming, paths.current)
        _sync_dir(vendors_dir)
        step("swapped")
    for displaced in (paths.incoming, paths.outgoing):
        if displaced.exists() and _identity(displaced) != target and not paths.previous.exists():
            os.rename(displaced, paths.previous)
            _sync_dir(paths.previous.parent)
            step("kept")
    paths.journal.unlink()
    _sync_dir(paths.journal.parent)
    step("done")


def vendor_units(path: Path) -> tuple[str, ...]:
    from ascenv.probe.fs import Root
    from ascenv.probe.vendors import compute_units

    return compute_units(Root(str(path)), "/")  # the tree as a root of its own


def rollback(
    root: Path, vendor: str, units: Callable[[Path], tuple[str, ...]] = vendor_units, step: Step = _no_step
) -> Rollback:
    """Swap ``vendors/<vendor>`` with the tree kept when it was last replaced. ``units``: the
    compute units with kernels in a vendor tree (for the kernel caches to clear). A rollback
    left unfinished by a killed run is completed instead, and that is the rollback asked for."""
    paths = VendorPaths(root, vendor)
    if paths.journal.exists():
        finish_interrupted(paths, step)
        return Rollback(vendor, str(root), str(paths.current), str(paths.previous), True, _units_of(paths, units))
    if not paths.previous.is_dir():
        raise errors.UsageError(
            f"no previous {vendor} vendor is kept in {paths.previous.parent}",
            hint="ascenv install keeps the vendor it replaces; nothing was installed over "
            f"{paths.current} since ascenv started keeping it",
        )
    target = _identity(paths.previous)
    assert target is not None
    write_atomic(paths.journal, json.dumps({"vendor": vendor, "dev": target[0], "ino": target[1]}) + "\n")
    step("journal")
    _swap(paths, target, step)
    return Rollback(
        vendor=vendor,
        install_path=str(root),
        live=str(paths.current),
        kept=str(paths.previous),
        finished_interrupted=False,
        compute_units=_units_of(paths, units),
    )


def _units_of(paths: VendorPaths, units: Callable[[Path], tuple[str, ...]]) -> tuple[str, ...]:
    found: set[str] = set()
    for tree in (paths.current, paths.previous):
        if tree.is_dir():
            found.update(units(tree))
    return tuple(sorted(found))


def cache_command(compute_units: Sequence[str]) -> str:
    """The clean-cache call that drops compiled kernels a swapped vendor may still be served
    from (the runtime keys its disk cache by op and shape, not by the vendor's files)."""
    socs = "".join(f" --soc {u}" for u in compute_units)
    return f"ascenv clean-cache --kind kernel-cache --kind fuzzy-kernel-cache{socs} --yes"
