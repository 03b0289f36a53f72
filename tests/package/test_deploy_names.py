"""Vendor names: one check (deploy.check_vendor_name) for --rollback's argument and for the names a
package listing gives. `--rollback .` moved the whole keep directory into vendors/, `..` and an
absolute path "succeeded" (I3); a listing naming packages/vendors/../x made install copy the
install root into itself (I5). Also the install's last step, the manifest, on a full disk."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ascenv import errors, installer, proc, store
from ascenv.fsutil import TEMP_PREFIX
from ascenv.package import deploy
from tests.package.hostile import build, compress, real_header, tar_bytes, ti
from tests.package.pkgbuild import cann_header, make_package, needs_makeself, vendor_tree
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


# --- names from a package's members (I5), read without running it --------------------------------

PACKAGE = "custom_opp_ubuntu_aarch64.run"


def package_of(tmp_path_factory: pytest.TempPathFactory, out: Path, *members: str) -> bytes:
    """A makeself package (a real header, its sizes and checksums redone) holding ``members``."""
    payload = compress(tar_bytes([ti(name, b"x") for name in members]))
    return build(out, real_header(tmp_path_factory), payload).read_bytes()


def stored(tmp_path: Path, package: bytes) -> store.Store:
    st = store.Store(tmp_path / "store")
    add_entry(st, "add_custom", "a" * 64, target="npu", outputs={PACKAGE: package})
    return st


def recording_runner(ran: list[list[str]]) -> proc.Runner:
    """A runner that records every command and succeeds without doing anything."""

    def run(argv: list[str], **_: object) -> proc.Completed:
        ran.append(list(argv))
        return proc.Completed(tuple(argv), proc.OK, 0, "", "", 0.0)

    return run


@pytest.mark.parametrize(
    ("member", "error", "words"),
    [
        # I5: copied the install root into itself
        ("./packages/vendors/../x/op_impl/a.so", errors.InputError, "unsafe to extract"),
        ("packages/vendors/.customize.ascenv-outgoing/a.so", errors.UsageError, "names the vendor"),
        ("packages/vendors/../../etc/a.so", errors.InputError, "unsafe to extract"),
        ("/opp/vendors/customize/a.so", errors.InputError, "unsafe to extract"),
    ],
)
@needs_makeself
def test_install_refuses_a_package_naming_no_vendor_and_touches_nothing(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, member: str, error: type, words: str
) -> None:
    package = package_of(tmp_path_factory, tmp_path / PACKAGE, "packages/vendors/customize/version.info", member)
    st = stored(tmp_path, package)
    root = installed(tmp_path)
    before = tree(root)
    ran: list[list[str]] = []
    with pytest.raises(error, match=words) as caught:
        installer.install(st, "add_custom", None, root, recording_runner(ran), {})
    assert caught.value.exit_code == errors.EXIT_USAGE
    assert ran == []  # nothing ran: not the installer, not the package's --list
    assert tree(root) == before  # nothing copied, nothing kept


@needs_makeself
def test_the_vendors_of_a_package_are_read_as_tar_extracts_them(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    package = tmp_path / PACKAGE
    package_of(
        tmp_path_factory,
        package,
        "./packages/vendors/customize/op_impl/a.so",
        "packages/vendors/other_v2/b.so",
        "./packages/vendors/./x/a.so",  # tar extracts it to packages/vendors/x/: vendor x
        "packages//vendors/y/c.so",
        "packages/vendors/z",  # a file, not a vendor directory
        "install.sh",
    )
    assert installer.package_vendors(package) == ["customize", "other_v2", "x", "y"]


@needs_makeself
def test_listing_never_runs_the_package_whose_header_would_act_on_list(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """`ascenv install OP` ran ``bash PKG --list``: the package's own header script, which here writes
    a marker when asked to list. The vendor names come from reading it, the marker never appears."""
    package = cann_header(make_package(tmp_path / "pkg", tmp_path / "canary", vendors={"customize": {}, "second": {}}))
    marker = tmp_path / "listed"
    data = package.read_bytes()
    listing = b"    --list)\n\techo Target directory: $targetdir\n"
    assert data.count(listing) == 1  # makeself 2.4.5's header; the same line count keeps skip right
    package.write_bytes(data.replace(listing, b"    --list)\n\techo listed > '%s'; exit 0\n" % bytes(marker)))
    # the control: executed with --list, the header does write the marker
    subprocess.run(["bash", str(package), "--list"], capture_output=True, check=True, timeout=60)
    assert marker.exists()
    marker.unlink()
    st = stored(tmp_path, package.read_bytes())
    ran: list[list[str]] = []

    def run(argv: list[str], **kwargs: object) -> proc.Completed:
        ran.append(list(argv))
        return proc.run(argv, **kwargs)  # type: ignore[arg-type]

    root = tmp_path / "opp"
    result = installer.install(st, "add_custom", None, root, run, {"PATH": os.environ.get("PATH", "")})
    assert not marker.exists()
    assert [argv[2:] for argv in ran] == [[f"--install-path={root}"]]  # the install, nothing else
    assert (tmp_path / "canary").exists()  # its install.sh did run, for the install
    assert [p.name for p in result.manifests] == ["ascenv-manifest.toml"] * 2
    assert sorted(p.parent.name for p in result.manifests) == ["customize", "second"]


@needs_makeself
def test_a_manifest_that_cannot_be_recorded_is_an_install_failure_not_a_crash(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    st = stored(tmp_path, package_of(tmp_path_factory, tmp_path / PACKAGE, "packages/vendors/customize/version.info"))
    root = installed(tmp_path)

    def full(path: object, data: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(installer, "write_atomic", full)
    with pytest.raises(errors.InstallFailed, match="manifest could not be recorded .*No space left") as caught:
        installer.install(st, "add_custom", None, root, recording_runner([]), {})
    assert caught.value.exit_code == errors.EXIT_BUILD_FAILED
