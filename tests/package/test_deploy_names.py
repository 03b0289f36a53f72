"""Vendor names: one check (deploy.check_vendor_name) for --rollback's argument and for the names a
package listing gives. `--rollback .` moved the whole keep directory into vendors/, `..` and an
absolute path "succeeded" (I3); a listing naming packages/vendors/../x made install copy the
install root into itself (I5). Also the install's last step, the manifest, on a full disk."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ascenv import errors, installer, proc, store
from ascenv.fsutil import TEMP_PREFIX
from ascenv.package import deploy
from tests.package.pkgbuild import vendor_tree
from tests.package.test_deploy import tree
from tests.test_store import add_entry

NOT_VENDORS = [
    ".",  # I3: renamed .ascenv-previous itself
    "..",  # I3: "rolled back .../vendors/.."
    "",
    "../customize",  # I3: through a symlinked vendors/, outside it
    "a/b",
    "a\0b",
    ".customize.ascenv-incoming",  # the staging name of customize's own swap
    ".lock",  # the lock file of the install path
    "v" * 221,  # the journal's temp file name derived from it would exceed NAME_MAX
]


def installed(tmp_path: Path) -> Path:
    root = tmp_path / "opp"
    vendor_tree(root / deploy.KEEP_DIR / "customize", kernel=b"kernel-v1")
    vendor_tree(root / "vendors" / "customize", kernel=b"kernel-v2")
    return root


@pytest.mark.parametrize("name", NOT_VENDORS)
def test_rollback_refuses_a_name_that_is_not_one_vendor_and_changes_nothing(tmp_path: Path, name: str) -> None:
    root = installed(tmp_path)
    before = tree(tmp_path)
    with pytest.raises(errors.UsageError, match="not a vendor name") as caught:
        deploy.rollback(root, name)
    assert caught.value.exit_code == errors.EXIT_USAGE
    assert tree(tmp_path) == before


def test_rollback_refuses_an_absolute_path_outside_the_install_path(tmp_path: Path) -> None:
    """I3: `--rollback $T/victim` wrote and removed $T/victim.rollback.json and said "rolled back"."""
    root = installed(tmp_path)
    victim = vendor_tree(tmp_path / "victim")
    before = tree(tmp_path)
    with pytest.raises(errors.UsageError, match="one path component"):
        deploy.rollback(root, str(victim))
    assert tree(tmp_path) == before


@pytest.mark.parametrize("name", ["customize", "my_vendor-2", "Vendor.v1", "v" * 220, "\u5382\u5546"])
def test_vendor_names_are_accepted(name: str) -> None:
    assert deploy.vendor_name_problem(name) is None
    assert deploy.check_vendor_name(name, "--rollback") == name


@given(st.text(min_size=0, max_size=300))
def test_every_accepted_name_stays_one_entry_below_vendors_and_the_keep_directory(name: str) -> None:
    """Whatever the text, an accepted name derives only direct children of vendors/ and of the
    keep directory, none of them another vendor's name or the lock."""
    if deploy.vendor_name_problem(name) is not None:
        return
    root = Path("/install")
    paths = deploy.VendorPaths(root, name)
    for derived in (paths.current, paths.incoming, paths.outgoing):
        assert derived.parent == root / "vendors" and os.path.normpath(derived) == str(derived)
    for derived in (paths.previous, paths.partial, paths.discard, paths.journal):
        assert derived.parent == root / deploy.KEEP_DIR and os.path.normpath(derived) == str(derived)
    for derived in (paths.incoming, paths.outgoing, paths.partial, paths.discard):
        assert deploy.vendor_name_problem(derived.name) is not None  # never a vendor of its own
    assert paths.journal.name != deploy.LOCK_FILE
    temp = f"{TEMP_PREFIX}{paths.journal.name}.12345678.tmp"  # what write_atomic makes of the journal
    assert max(len(os.fsencode(n)) for n in (paths.incoming.name, temp)) <= 255


# --- names from a package listing (I5) -----------------------------------------------------------

PACKAGE = "custom_opp_ubuntu_aarch64.run"


def stored(tmp_path: Path) -> store.Store:
    st = store.Store(tmp_path / "store")
    add_entry(st, "add_custom", "a" * 64, target="npu", outputs={PACKAGE: b"#!/bin/sh\nexit 0\n"})
    return st


def listing_runner(listing: str, ran: list[list[str]]) -> proc.Runner:
    """A runner answering ``--list`` with ``listing`` and recording every command."""

    def run(argv: list[str], **_: object) -> proc.Completed:
        ran.append(list(argv))
        out = listing if argv[-1] == "--list" else ""
        return proc.Completed(tuple(argv), proc.OK, 0, out, "", 0.0)

    return run


@pytest.mark.parametrize(
    "member",
    [
        "./packages/vendors/../x/op_impl/a.so",  # I5: copied the install root into itself
        "./packages/vendors/./x/a.so",
        "packages/vendors/.customize.ascenv-outgoing/a.so",
    ],
)
def test_install_refuses_a_listing_that_names_no_vendor_and_touches_nothing(tmp_path: Path, member: str) -> None:
    st = stored(tmp_path)
    root = installed(tmp_path)
    before = tree(root)
    ran: list[list[str]] = []
    listing = f"drwxr-xr-x root/root 0 2026-01-01 00:00 ./packages/vendors/customize/\n-rw-r--r-- 0 {member}\n"
    with pytest.raises(errors.UsageError, match=f"the listing of {PACKAGE} names the vendor"):
        installer.install(st, "add_custom", None, root, listing_runner(listing, ran), {})
    assert [argv[-1] for argv in ran] == ["--list"]  # the installer never ran
    assert tree(root) == before  # nothing copied, nothing kept


def test_a_listing_of_vendors_gives_their_names(tmp_path: Path) -> None:
    listing = (
        "drwxr-xr-x root/root 0 2026-01-01 00:00 ./packages/vendors/customize/\n"
        "-rw-r--r-- root/root 9 2026-01-01 00:00 ./packages/vendors/customize/op_impl/a.so\n"
        "-rw-r--r-- root/root 9 2026-01-01 00:00 packages/vendors/other_v2/b.so\n"
    )
    assert installer.package_vendors(tmp_path / PACKAGE, listing_runner(listing, []), {}) == ["customize", "other_v2"]


def test_a_manifest_that_cannot_be_recorded_is_an_install_failure_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    st = stored(tmp_path)
    root = installed(tmp_path)
    listing = "-rw-r--r-- 0 ./packages/vendors/customize/version.info\n"

    def full(path: object, data: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(installer, "write_atomic", full)
    with pytest.raises(errors.InstallFailed, match="manifest could not be recorded .*No space left") as caught:
        installer.install(st, "add_custom", None, root, listing_runner(listing, []), {})
    assert caught.value.exit_code == errors.EXIT_BUILD_FAILED
