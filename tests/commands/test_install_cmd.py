"""`ascenv install` then `ascenv install --rollback` through cli.main, with packages made by
Debian's makeself in the msopgen vendor layout, their header given CANN's handling of
--install-path (tests.package.pkgbuild.cann_header); install.sh models CANN's --install-path copy."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ascenv import errors, store
from tests.cli_helpers import run_cli
from tests.fixture_hosts import all_gone, pids_in
from tests.package import pkgbuild
from tests.package.pkgbuild import cann_header, make_package, needs_makeself
from tests.package.test_deploy import REPO, tree
from tests.test_store import add_entry

pytestmark = needs_makeself


def ascenv(cwd: Path, *argv: str) -> tuple[int, str, str]:
    return run_cli(argv, {"PATH": os.environ.get("PATH", ""), "HOME": str(cwd)}, cwd)


def stored(tmp_path: Path, key: str, finished: str, **vendor: object) -> store.Entry:
    package = cann_header(make_package(tmp_path / f"pkg-{key[0]}", tmp_path / "canary", vendors={"customize": vendor}))
    st = store.Store(tmp_path / ".ascenv" / "store")
    return add_entry(
        st, "add_custom", key, target="npu", finished=finished, outputs={package.name: package.read_bytes()}
    )


def test_install_newer_then_rollback_gives_the_old_files_back_byte_for_byte(tmp_path: Path) -> None:
    old = stored(tmp_path, "a" * 64, "2026-01-01T00:00:00Z", kernel=b"kernel-v1")
    code, out, err = ascenv(tmp_path, "install", "add_custom", "--key", old.key, "--install-path", "opp")
    assert code == 0, err
    live = tmp_path / "opp" / "vendors" / "customize"
    before = tree(live)
    assert (live / "ascenv-manifest.toml").read_bytes() == (old.path / "manifest.toml").read_bytes()
    assert "previous" not in out  # nothing was replaced

    new = stored(tmp_path, "b" * 64, "2026-01-02T00:00:00Z", op_types=("AddCustom", "SubCustom"), kernel=b"v2")
    code, out, err = ascenv(tmp_path, "install", "add_custom", "--install-path", "opp", "--format", "json")
    assert code == 0, err
    kept = tmp_path / "opp" / ".ascenv-previous" / "customize"
    assert json.loads(out)["kept"] == [str(kept)]
    assert tree(kept) == before
    after = tree(live)
    assert after != before and (live / "ascenv-manifest.toml").read_bytes() == (new.path / "manifest.toml").read_bytes()

    code, out, err = ascenv(tmp_path, "install", "--rollback", "customize", "--install-path", "opp")
    assert code == 0, err
    assert tree(live) == before  # the old files, modes and links, and the old build's manifest
    assert tree(kept) == after  # the same command swaps back
    assert "ascenv clean-cache --kind kernel-cache --kind fuzzy-kernel-cache --soc ascend910b --yes" in out

    code, out, err = ascenv(tmp_path, "install", "--rollback", "customize", "--install-path", "opp", "--format", "json")
    assert code == 0, err
    assert tree(live) == after and json.loads(out)["live"] == str(live)


def test_rollback_with_nothing_kept_and_install_without_op_are_usage_errors(tmp_path: Path) -> None:
    code, _, err = ascenv(tmp_path, "install", "--rollback", "customize", "--install-path", "opp")
    assert code == errors.EXIT_USAGE and "no previous customize vendor is kept" in err
    code, _, err = ascenv(tmp_path, "install", "--install-path", "opp")
    assert code == errors.EXIT_USAGE and "needs OP" in err


# --- refused inputs: exit 2, nothing changed (I3, I7, I8) -----------------------------------------


def test_rollback_of_a_name_that_is_not_a_vendor_is_exit_2_and_changes_nothing(tmp_path: Path) -> None:
    """I3: `--rollback .` moved the keep directory into vendors/ (exit 3); `..` and an absolute
    path said "rolled back" (exit 0)."""
    (tmp_path / "opp" / "vendors" / "customize").mkdir(parents=True)
    (tmp_path / "opp" / ".ascenv-previous" / "customize").mkdir(parents=True)
    (tmp_path / "victim").mkdir()
    before = tree(tmp_path)
    for name in (".", "..", str(tmp_path / "victim"), "../victim", ""):
        code, out, err = ascenv(tmp_path, "install", "--rollback", name, "--install-path", "opp")
        assert (code, out) == (errors.EXIT_USAGE, "") and "which is not a vendor name" in err, name
        assert "Traceback" not in err and tree(tmp_path) == before
    code, _, err = ascenv(tmp_path, "install", "--rollback", "customize", "--install-path", "opp")
    assert code == 0, err  # rollback still works for the real vendor


def test_an_install_path_that_is_a_file_or_goes_through_one_is_exit_2(tmp_path: Path) -> None:
    """I7: exit 3 (FileExistsError, NotADirectoryError)."""
    stored(tmp_path, "a" * 64, "2026-01-01T00:00:00Z")
    (tmp_path / "afile").write_text("x")
    for path, words in (("afile", "is a regular file, not a directory"), ("afile/sub", "goes through")):
        for argv in (("add_custom",), ("--rollback", "customize")):
            code, _, err = ascenv(tmp_path, "install", *argv, "--install-path", path)
            assert code == errors.EXIT_USAGE and words in err and "Traceback" not in err, (path, argv, err)
    (tmp_path / "loop").symlink_to("loop")
    code, _, err = ascenv(tmp_path, "install", "add_custom", "--install-path", "loop/opp")
    assert code == errors.EXIT_USAGE, err
    assert not (tmp_path / "canary").exists()  # the installer never ran


def test_a_planted_keep_directory_symlink_is_exit_2_and_the_victim_untouched(tmp_path: Path) -> None:
    """I8: .ascenv-previous -> ../victim had the kept tree written into victim/, and its
    .customize.discard deleted."""
    stored(tmp_path, "a" * 64, "2026-01-01T00:00:00Z")
    code, _, err = ascenv(tmp_path, "install", "add_custom", "--install-path", "opp")
    assert code == 0, err
    victim = tmp_path / "victim"
    (victim / ".customize.discard").mkdir(parents=True)
    (victim / ".customize.discard" / "precious").write_text("mine")
    shutil.rmtree(tmp_path / "opp" / ".ascenv-previous")
    (tmp_path / "opp" / ".ascenv-previous").symlink_to("../victim")
    before = tree(tmp_path)
    for argv in (("add_custom",), ("--rollback", "customize")):
        code, _, err = ascenv(tmp_path, "install", *argv, "--install-path", "opp")
        assert code == errors.EXIT_USAGE and "is a symbolic link to ../victim" in err, err
        assert tree(tmp_path) == before


# --- signals: the installer's process group is ended, exit 130 (I4, I10) -------------------------

# install.sh that hangs after it started: its pid, its parent's (makeself's bash) and a sleeping
# grandchild's go to <canary>.pids
SLOW_INSTALL_SH = pkgbuild.INSTALL_SH.replace(
    'echo ran > "{canary}"\n', 'echo ran > "{canary}"\nsleep 100000 &\necho "$PPID $$ $!" >> "{canary}.pids"\nwait\n'
)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGKILL])
def test_a_signal_during_install_ends_the_installer_leaves_no_selfgz_and_exits_130(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, signum: int
) -> None:
    """I4: SIGTERM gave exit 143 and the installer ran on; I10: makeself's $TMPDIR/selfgzNNN was
    left because its group got SIGKILL at once, so its trap never ran. SIGKILL: nothing of ascenv
    runs, its guard ends the installer's group (PR_SET_PDEATHSIG reaches makeself's bash only)."""
    first = stored(tmp_path, "a" * 64, "2026-01-01T00:00:00Z", kernel=b"kernel-v1")
    code, _, err = ascenv(tmp_path, "install", "add_custom", "--key", first.key, "--install-path", "opp")
    assert code == 0, err
    live = tree(tmp_path / "opp" / "vendors" / "customize")
    monkeypatch.setattr(pkgbuild, "INSTALL_SH", SLOW_INSTALL_SH)
    stored(tmp_path, "b" * 64, "2026-01-02T00:00:00Z", kernel=b"kernel-v2")
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "TMPDIR": str(tmpdir), "PYTHONPATH": str(REPO)}
    argv = [sys.executable, "-m", "ascenv", "install", "add_custom", "--key", "b" * 6, "--install-path", "opp"]
    with subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as run:
        pids = tmp_path / "canary.pids"
        deadline = time.monotonic() + 60
        while len(pids_in(pids)) < 3 and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.05)
        assert len(pids_in(pids)) == 3, run.communicate()
        assert [p.name for p in tmpdir.iterdir() if p.name.startswith("selfgz")]  # extracted, installing
        run.send_signal(signum)
        out, err = run.communicate(timeout=60)
    if signum == signal.SIGKILL:
        assert run.returncode == -signal.SIGKILL
    else:
        assert run.returncode == errors.EXIT_INTERRUPTED, err
        assert b"interrupted" in err and b"Traceback" not in err
    assert all_gone(pids_in(pids), within=15)  # makeself's bash, install.sh and its grandchild
    deadline = time.monotonic() + 10  # after a SIGKILL the trap runs on its own, a moment later
    while list(tmpdir.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(tmpdir.iterdir()) == []  # makeself's trap removed its extraction directory
    # the lock went with the process: a rollback runs at once and puts back the first install
    code, _, err = ascenv(tmp_path, "install", "--rollback", "customize", "--install-path", "opp")
    assert code == 0, err
    assert tree(tmp_path / "opp" / "vendors" / "customize") == live


@pytest.mark.slow
def test_two_real_installs_at_once_take_turns_and_leave_one_whole_vendor(tmp_path: Path) -> None:
    """I2: `ascenv install --key aaaaaa & ascenv install --key bbbbbb & wait` crashed one run with
    exit 3 in 17 of 20 pairs (FileNotFoundError, Directory not empty, FileExistsError)."""
    stored(tmp_path, "a" * 64, "2026-01-01T00:00:00Z", kernel=b"kernel-v1")
    stored(tmp_path, "b" * 64, "2026-01-02T00:00:00Z", kernel=b"kernel-v2")
    wholes = []
    for key in ("a", "b"):  # one after the other first: the two whole trees (same files, other bytes)
        code, _, err = ascenv(tmp_path, "install", "add_custom", "--key", key * 6, "--install-path", "opp")
        assert code == 0, err
        wholes.append(tree(tmp_path / "opp" / "vendors" / "customize"))
    assert wholes[0] != wholes[1]
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "PYTHONPATH": str(REPO)}
    for _ in range(3):
        runs = [
            subprocess.Popen(
                [sys.executable, "-m", "ascenv", "install", "add_custom", "--key", key * 6, "--install-path", "opp"],
                cwd=tmp_path,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            for key in ("a", "b")
        ]
        for run in runs:
            _, err = run.communicate(timeout=120)
            assert run.returncode == 0, err
        assert tree(tmp_path / "opp" / "vendors" / "customize") in wholes
        assert tree(tmp_path / "opp" / ".ascenv-previous" / "customize") in wholes
        assert sorted(os.listdir(tmp_path / "opp" / ".ascenv-previous")) == [".lock", "customize"]


# --- a .run file built elsewhere (#25 item 1): inspected, then installed like a store build -------


def package_file(tmp_path: Path, name: str, **vendor: object) -> Path:
    work = tmp_path / f"elsewhere-{name}"
    return cann_header(make_package(work, tmp_path / "canary", vendors={"customize": vendor}))


def test_a_run_file_replaces_a_store_install_without_its_manifest_and_rolls_back(tmp_path: Path) -> None:
    old = stored(tmp_path, "a" * 64, "2026-01-01T00:00:00Z", kernel=b"kernel-v1")
    code, _, err = ascenv(tmp_path, "install", "add_custom", "--install-path", "opp")
    assert code == 0, err
    live = tmp_path / "opp" / "vendors" / "customize"
    before = tree(live)
    package = package_file(tmp_path, "new", op_types=("AddCustom", "SubCustom"), kernel=b"kernel-v2")

    code, out, err = ascenv(tmp_path, "install", str(package.relative_to(tmp_path)), "--install-path", "opp")
    assert code == 0, err
    assert "inspected before it ran; no build manifest recorded" in out
    assert (live / pkgbuild.TBE / "kernel" / "ascend910b" / "sub_custom").is_dir()  # the new package's files
    # the store build's manifest no longer describes the vendor: gone, and back with the rollback
    assert not (live / "ascenv-manifest.toml").exists()
    assert tree(tmp_path / "opp" / ".ascenv-previous" / "customize") == before

    code, _, err = ascenv(tmp_path, "install", "--rollback", "customize", "--install-path", "opp")
    assert code == 0, err
    assert tree(live) == before
    assert (live / "ascenv-manifest.toml").read_bytes() == (old.path / "manifest.toml").read_bytes()


def test_a_run_file_into_an_empty_install_path_reports_json_without_a_build(tmp_path: Path) -> None:
    package = package_file(tmp_path, "one")
    code, out, err = ascenv(tmp_path, "install", str(package), "--install-path", "opp", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert (data["op"], data["key"], data["manifests"], data["kept"]) == (None, None, [], [])
    assert data["package"] == str(package)
    assert (tmp_path / "opp" / "vendors" / "customize" / "version.info").is_file()
    assert (tmp_path / "canary").exists()  # its install.sh ran: the install went through the package


def fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def corrupt(package: Path) -> Path:
    data = bytearray(package.read_bytes())
    data[-40] ^= 0xFF  # inside the gzip payload: the recorded sha256 no longer matches
    package.write_bytes(bytes(data))
    return package


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda t: corrupt(package_file(t, "bad")), "sha256"),
        (
            lambda t: pkgbuild.small_package(t / "plain", install=f"#!/bin/sh\necho ran > {t}/canary\n"),
            "no packages/vendors",
        ),
        (lambda t: t / "missing.run", "cannot read the package"),
        (lambda t: pkgbuild.small_package(t / "dir").parent, "it is a directory"),
        (lambda t: fifo(t / "pipe.run"), "it is a FIFO"),
    ],
    ids=["damaged", "no-vendor", "missing", "directory", "fifo"],
)
def test_a_run_file_that_is_not_a_sound_operator_package_is_exit_2_and_never_runs(
    tmp_path: Path, make, words: str
) -> None:
    package = make(tmp_path)
    name = str(package) if package.suffix == ".run" else str(package) + "/"
    code, out, err = ascenv(tmp_path, "install", name, "--install-path", "opp")
    assert code == errors.EXIT_USAGE and words in err and "Traceback" not in err, err
    assert out == "" and not (tmp_path / "canary").exists()
    assert not (tmp_path / "opp" / "vendors").exists()


def test_key_with_a_run_file_is_a_usage_error(tmp_path: Path) -> None:
    package = package_file(tmp_path, "one")
    code, _, err = ascenv(tmp_path, "install", str(package), "--key", "abcdef", "--install-path", "opp")
    assert code == errors.EXIT_USAGE and "--key chooses a stored build" in err
    assert not (tmp_path / "canary").exists()


def test_what_runs_is_the_copy_that_was_inspected_even_when_the_file_is_swapped(tmp_path: Path) -> None:
    from ascenv import installer, proc

    package = package_file(tmp_path, "one")
    inspected = package.read_bytes()
    ran: list[list[str]] = []

    def swapping(argv, **kwargs):  # type: ignore[no-untyped-def]
        package.write_bytes(b"#!/bin/sh\necho swapped > " + str(tmp_path / "swapped").encode() + b"\n")
        ran.append(list(argv))
        assert Path(argv[1]).read_bytes() == inspected
        return proc.run(argv, **kwargs)

    result = installer.install_file(package, tmp_path / "opp", swapping, {"PATH": os.environ["PATH"]})
    assert len(ran) == 1 and ran[0][1] != str(package) and not Path(ran[0][1]).exists()  # a copy, removed after
    assert result.package == package and not (tmp_path / "swapped").exists()
    assert (tmp_path / "opp" / "vendors" / "customize" / "version.info").is_file()


# --- an installer that fails midway is undone: the vendor from before, byte for byte ------------

# install.sh that copies part of the package (op_impl/ only), rewrites config.ini, then fails
HALF_INSTALL_SH = pkgbuild.INSTALL_SH.replace(
    '  cp -rf "$vendor"/. "$root/vendors/$name/"\n',
    '  cp -rf "$vendor"/op_impl "$root/vendors/$name/"\n'
    '  echo "load_priority=$name" > "$root/vendors/config.ini"\n'
    '  echo "cp: write error: No space left on device" >&2\n  exit 1\n',
)


def digest(path: Path) -> str:
    """sha256 of a tree: every entry's path, kind, mode and bytes (or link target)."""
    import hashlib

    found = hashlib.sha256()
    for p in sorted(path.rglob("*")):
        info = p.lstat()
        found.update(f"{p.relative_to(path)}\0{info.st_mode:o}\0".encode())
        found.update(os.readlink(p).encode() if p.is_symlink() else b"dir" if p.is_dir() else p.read_bytes())
    return found.hexdigest()


def test_an_installer_failing_midway_puts_back_the_vendor_and_the_keep_byte_for_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stored(tmp_path, "a" * 64, "2026-01-01T00:00:00Z", kernel=b"kernel-v1")
    stored(tmp_path, "b" * 64, "2026-01-02T00:00:00Z", op_types=("AddCustom", "SubCustom"), kernel=b"kernel-v2")
    for key in ("a", "b"):
        code, _, err = ascenv(tmp_path, "install", "add_custom", "--key", key * 6, "--install-path", "opp")
        assert code == 0, err
    opp = tmp_path / "opp"
    (opp / "vendors" / "config.ini").write_text("load_priority=customize,other\n")
    live, keep = opp / "vendors" / "customize", opp / ".ascenv-previous" / "customize"
    before = {"live": digest(live), "keep": digest(keep), "all": digest(opp)}
    monkeypatch.setattr(pkgbuild, "INSTALL_SH", HALF_INSTALL_SH)
    stored(tmp_path, "c" * 64, "2026-01-03T00:00:00Z", op_types=("MulCustom",), kernel=b"kernel-v3")

    code, out, err = ascenv(tmp_path, "install", "add_custom", "--key", "c" * 6, "--install-path", "opp")
    assert code == errors.EXIT_BUILD_FAILED and out == "" and "Traceback" not in err, err
    assert {"live": digest(live), "keep": digest(keep), "all": digest(opp)} == before
    assert "No space left on device" in err  # the installer's own words
    assert f"the customize vendor is back as it was before ({live})" in err
    assert f"{opp / 'vendors' / 'config.ini'} is back as it was" in err
    assert sorted(os.listdir(opp / ".ascenv-previous")) == [".lock", "customize"]
    # and --rollback still swaps in the vendor kept before this install (build a)
    code, _, err = ascenv(tmp_path, "install", "--rollback", "customize", "--install-path", "opp")
    assert code == 0, err
    assert digest(live) == before["keep"]


def test_an_installer_failing_midway_into_an_empty_install_path_leaves_no_vendor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pkgbuild, "INSTALL_SH", HALF_INSTALL_SH)
    stored(tmp_path, "c" * 64, "2026-01-03T00:00:00Z")
    code, out, err = ascenv(tmp_path, "install", "add_custom", "--install-path", "opp")
    assert code == errors.EXIT_BUILD_FAILED and "Traceback" not in err, err
    assert (tmp_path / "canary").exists()  # it did run, and copied part of the vendor
    vendors = tmp_path / "opp" / "vendors"
    assert os.listdir(vendors) == []  # no vendor, no config.ini naming one
    assert f"the partial customize vendor it left was removed ({vendors / 'customize'})" in err
    assert sorted(os.listdir(tmp_path / "opp" / ".ascenv-previous")) == [".lock"]
