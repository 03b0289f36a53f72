"""Install an NPU operator package into DIR, through the package's own --install-path option: a
build from the store, whose manifest is then recorded in the installed vendor directory
(DIR/vendors/<vendor>/ascenv-manifest.toml, a byte-for-byte copy of the store's manifest.toml), so
`ascenv doctor` and `ascenv lock` tie the vendor to its build and its CANN; or a ``.run`` file
built elsewhere. Either is read first as `ascenv package inspect` reads it (checksums, members,
vendors; nothing runs, not even the header's ``--list``) and refused when it is damaged, unsafe to
extract or holds no vendor. Both install
the same way, under the same lock, keeping the vendors they replace for --rollback. The package's
--check option is never used: it runs the installer (see the README)."""

from __future__ import annotations

import shutil
import stat
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from ascenv import errors, proc
from ascenv.fsutil import file_kind, write_atomic
from ascenv.package import deploy
from ascenv.probe.vendors import MANIFEST as VENDOR_MANIFEST
from ascenv.store import MANIFEST, Entry, Store
from ascenv.words import counted

if TYPE_CHECKING:
    from ascenv.package.inspection import Inspection

INSTALL_TIMEOUT = 600.0


@dataclass(frozen=True)
class Installed:
    entry: Optional[Entry]  # the store build installed; None for a .run file from elsewhere
    package: Path  # the .run file that was installed
    install_path: Path
    manifests: tuple[Path, ...]  # the ascenv-manifest.toml written, one per vendor
    kept: tuple[Path, ...] = ()  # the vendor directories this install replaced, kept for --rollback


def install(
    st: Store,
    op: str,
    key: Optional[str],
    root: Path,
    run: proc.Runner,
    environ: Mapping[str, str],
    on_wait: deploy.Waiting = lambda lock: None,
) -> Installed:
    """Install the chosen build of ``op`` into ``root`` (created when absent) and record its
    manifest. Keeping the replaced vendors, the installer and the manifests run under the install
    path's lock (``deploy.replacing``; ``on_wait`` is told when another run holds it): install.sh
    merges into vendors/ and rewrites vendors/config.ini, which two runs at once would interleave."""
    entry = pick_build(st, op, key)
    package = run_file(entry)
    vendors = package_vendors(package)
    with deploy.replacing(root, vendors, on_wait) as kept:
        _run_installer(package, package.name, root, vendors, kept, run, environ)
        return Installed(entry, package, root, tuple(record_manifest(entry, root, vendors)), tuple(kept))


def install_file(
    package: Path,
    root: Path,
    run: proc.Runner,
    environ: Mapping[str, str],
    on_wait: deploy.Waiting = lambda lock: None,
) -> Installed:
    """Install a ``.run`` built elsewhere into ``root``. The file is copied first and the copy is
    both inspected and run, so what runs is what was inspected, even when the file is replaced
    meanwhile. No build manifest is recorded (none exists); one left in a replaced vendor by an
    earlier install from the store is removed, since it no longer describes the files."""
    from ascenv.package.inspection import inspect_package  # imported on use: start-up time counts

    hint = "name a .run file, or an operator project (ascenv install add_custom) to install its newest npu build"
    try:
        info = package.stat()
    except OSError as exc:
        raise errors.UsageError(f"cannot read the package {package}: {exc.strerror or exc}", hint=hint) from None
    if not stat.S_ISREG(info.st_mode):  # a FIFO would hang the copy; a directory is no package
        raise errors.UsageError(f"cannot read the package {package}: it is {file_kind(info.st_mode)}", hint=hint)
    size = info.st_size
    with tempfile.TemporaryDirectory(prefix="ascenv-install-") as scratch:
        copy = Path(scratch) / package.name
        try:
            shutil.copyfile(package, copy)
        except OSError as exc:
            raise errors.UsageError(f"cannot copy the package {package} ({size} bytes) to {scratch}: {exc}") from None
        inspection = inspect_package(copy)  # a damaged or oversized package: InputError, exit 2
        vendors = inspected_vendors(inspection, package)
        with deploy.replacing(root, vendors, on_wait) as kept:
            _run_installer(copy, package.name, root, vendors, kept, run, environ)
            for vendor in vendors:
                (root / "vendors" / vendor / VENDOR_MANIFEST).unlink(missing_ok=True)
        return Installed(None, package, root, (), tuple(kept))


def inspected_vendors(inspection: Inspection, package: Path) -> list[str]:
    """The vendors an inspected package installs, or exit 2: a member unsafe to extract (what
    `package inspect` warns about) could write outside the install path, and a package with no
    ``packages/vendors/<vendor>/`` is no operator package."""
    if inspection.dangerous:
        shown = ", ".join(f"{m.path} ({'; '.join(m.dangers)})" for m in inspection.dangerous[:5])
        raise errors.InputError(
            f"{package}: unsafe to extract ({counted(len(inspection.dangerous), 'member')}): {shown}",
            hint=f"nothing was run; see ascenv package inspect {package}",
        )
    if not inspection.vendors:
        raise errors.InputError(
            f"{package}: no packages/vendors/<vendor>/ in it: not a CANN custom operator package",
            hint=f"nothing was run; see what it holds: ascenv package inspect {package}",
        )
    return [deploy.check_vendor_name(v.name, f"the package {package.name}") for v in inspection.vendors]


def _run_installer(
    package: Path,
    shown: str,
    root: Path,
    vendors: list[str],
    kept: list[Path],
    run: proc.Runner,
    environ: Mapping[str, str],
) -> None:
    """Run the package's installer; when it fails (an exit code, a timeout), undo what it did to
    the install path (``deploy.put_back``: it merges into the live vendor, so a failure midway left
    a mix of the new files and the old) and say so, exit 8. An interrupt is not undone here: the
    vendor it replaced stays kept for ``install --rollback`` (README)."""
    before = deploy.before_install(root, vendors, kept)
    # guard: even a SIGKILL'd ascenv leaves no installer writing the vendor tree (I4)
    done = run(install_argv(package, root), timeout=INSTALL_TIMEOUT, env=dict(environ), guard=True)
    if not done.ok:
        said = deploy.put_back(root, vendors, before)
        undone = "; ".join(said) if said else "it changed no vendor"
        raise errors.InstallFailed(
            f"the installer of {shown} failed:\n{done.describe()}\nundone: {undone}",
            hint="nothing was installed or recorded; see the installer's output above",
        )


def pick_build(st: Store, op: str, key: Optional[str]) -> Entry:
    """The named build, or the newest npu build of ``op``; refused when its outputs changed."""
    if key:
        entry = st.find(key)
        if entry.op != op:
            raise errors.UsageError(f"build {key} is of {entry.op!r}, not {op!r}")
    else:
        builds = [e for e in st.entries() if e.op == op and e.manifest and e.manifest.target == "npu"]
        if not builds:
            raise errors.UsageError(
                f"the store {st.root} has no npu build of {op!r}",
                hint=f"build it first: ascenv build {op} --target npu",
            )
        entry = builds[0]
    problems = st.verify(entry)
    if problems:
        raise errors.InputError(
            f"the stored build {entry.key[:12]} is damaged: {'; '.join(problems)}",
            hint=f"rebuild it: ascenv build {op} --target npu",
        )
    return entry


def run_file(entry: Entry) -> Path:
    assert entry.manifest is not None
    packages = [o.path for o in entry.manifest.outputs if o.path.endswith(".run")]
    if len(packages) != 1:
        raise errors.UsageError(
            f"build {entry.key[:12]} has {len(packages)} .run packages among its outputs, expected one",
            hint="ascenv install takes the npu target's custom_opp_*.run",
        )
    return entry.outputs / packages[0]


def install_argv(package: Path, root: Path) -> list[str]:
    """``bash pkg.run --install-path=<absolute dir>``: the documented custom-package install
    (install.sh: the path must be absolute; github:leideng/CANN-8.1.RC1
    tools/op_project_templates/ascendc/customize/scripts/install.sh). Run through bash because
    store outputs are read-only and need not be executable."""
    return ["bash", str(package), f"--install-path={root}"]


def package_vendors(package: Path) -> list[str]:
    """The vendors of a stored build's package, read as `package inspect` reads it: nothing in it
    runs. ``bash PKG --list`` ran the package's own header script to list it, which does whatever
    that header says. Each name is checked as --rollback's are: a package naming
    ``packages/vendors/../x`` made the install copy the install root into itself (I5)."""
    from ascenv.package.inspection import inspect_package  # imported on use: start-up time counts

    return inspected_vendors(inspect_package(package), package)


def record_manifest(entry: Entry, root: Path, vendors: list[str]) -> list[Path]:
    """Copy manifest.toml into each installed vendor directory (``vendors``: the package's, at
    least one), atomically."""
    vendors_dir = root / "vendors"
    data = (entry.path / MANIFEST).read_bytes()
    written = []
    for vendor in vendors:
        directory = vendors_dir / vendor
        if not directory.is_dir():
            raise errors.InstallFailed(f"the installer reported success but {directory} does not exist")
        try:
            write_atomic(directory / VENDOR_MANIFEST, data, mode=0o644)
        except OSError as exc:
            raise errors.InstallFailed(
                f"the package is installed but its manifest could not be recorded in {directory}: "
                f"{exc.strerror or exc}",
                hint="free space or fix permissions there, then install again (doctor and lock cannot tie the "
                "vendor to its build until then)",
            ) from None
        written.append(directory / VENDOR_MANIFEST)
    return written
