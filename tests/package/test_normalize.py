"""`normalize`: two builds of the same inputs at different times and paths give the same bytes,
and the result still lists and installs."""

from __future__ import annotations

import errno
import hashlib
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from ascenv.errors import PackageError, UsageError
from ascenv.package import makeself
from ascenv.package.inspection import inspect_package
from ascenv.package.normalize import TARGET_DIR, epoch_from, normalize, packaging_date
from tests.package.hostile import build, compress, real_header, tar_bytes, ti
from tests.package.pkgbuild import make_package, needs_makeself, small_package


def two_builds(tmp_path: Path) -> tuple[Path, Path]:
    first = make_package(tmp_path / "a" / "project", tmp_path / "canary", mtime=1_700_000_000)
    second = make_package(tmp_path / "elsewhere" / "b", tmp_path / "canary", mtime=1_750_000_000)
    return first, second


@needs_makeself
def test_same_inputs_same_bytes_after_normalize(tmp_path: Path) -> None:
    first, second = two_builds(tmp_path)
    assert first.read_bytes() != second.read_bytes()
    one = normalize(first, tmp_path / "one.run", 1_600_000_000)
    two = normalize(second, tmp_path / "two.run", 1_600_000_000)
    assert (tmp_path / "one.run").read_bytes() == (tmp_path / "two.run").read_bytes()
    assert one.sha256 == two.sha256 == hashlib.sha256((tmp_path / "one.run").read_bytes()).hexdigest()
    header = makeself.read_header(tmp_path / "one.run")
    assert header.target_dir == TARGET_DIR and header.date == "Sun Sep 13 12:26:40 UTC 2020"
    assert all(c.ok for c in makeself.verify(tmp_path / "one.run", header))
    payload = (tmp_path / "one.run").read_bytes()[header.offset :]
    assert payload[4:8] == b"\0\0\0\0"  # gzip MTIME field
    assert not (tmp_path / "canary").exists()


@needs_makeself
def test_normalized_package_keeps_every_file_and_owner_free(tmp_path: Path) -> None:
    first, _ = two_builds(tmp_path)
    normalize(first, tmp_path / "one.run", 1_600_000_000)
    before, after = inspect_package(first), inspect_package(tmp_path / "one.run")
    strip = lambda ms: [(m.path, m.kind, m.size, m.mode, m.sha256, m.link) for m in ms]  # noqa: E731
    assert sorted(strip(before.members)) == strip(after.members)  # same files, now sorted
    assert {(m.uid, m.gid) for m in after.members} == {(0, 0)}
    assert {m.mtime for m in after.members} == {1_600_000_000}  # clamped: the build mtimes are later
    assert [v.op_types for v in after.vendors] == [("AddCustom",)]


@needs_makeself
def test_normalized_package_lists_and_installs(tmp_path: Path) -> None:
    first, _ = two_builds(tmp_path)
    out = tmp_path / "one.run"
    normalize(first, out, 0)
    listed = subprocess.run(["sh", str(out), "--list"], capture_output=True, text=True, check=True).stdout
    assert f"Target directory: {TARGET_DIR}" in listed and "./packages/vendors/customize/version.info" in listed
    assert "0/0" in listed and not (tmp_path / "canary").exists()
    info = subprocess.run(["sh", str(out), "--info"], capture_output=True, text=True, check=True).stdout
    assert (
        "Date of packaging: Thu Jan 1 00:00:00 UTC 1970" in info
    )  # echo collapses blanks and "repacked by ascenv" in info
    assert str(tmp_path) not in info  # the build command named the output's absolute path
    root = tmp_path / "opp"
    # Debian's stock header passes script arguments after "--"; CANN's header passes the ones
    # its help.info lists directly (--install-path)
    done = subprocess.run(
        ["sh", str(out), "--quiet", "--", f"--install-path={root}"], capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "canary").exists()
    installed = root / "vendors" / "customize"
    source = tmp_path / "a" / "project" / "build" / "packages" / "vendors" / "customize"
    for path in source.rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert (installed / path.relative_to(source)).read_bytes() == path.read_bytes()
    assert (installed / "op_impl/ai_core/tbe/op_tiling/liboptiling.so").is_symlink()


@needs_makeself
def test_damaged_input_is_refused_and_output_untouched(tmp_path: Path) -> None:
    first, _ = two_builds(tmp_path)
    data = bytearray(first.read_bytes())
    data[-50] ^= 1
    first.write_bytes(bytes(data))
    out = tmp_path / "one.run"
    out.write_bytes(b"previous")
    with pytest.raises(PackageError, match="is corrupt"):
        normalize(first, out, 0)
    assert (
        out.read_bytes() == b"previous" and [p.name for p in tmp_path.iterdir() if p.name.startswith(".ascenv-")] == []
    )


def test_packaging_date_and_epoch() -> None:
    assert packaging_date(0) == "Thu Jan  1 00:00:00 UTC 1970"
    assert epoch_from({"SOURCE_DATE_EPOCH": "42"}) == 42 and epoch_from({}) == 0
    with pytest.raises(UsageError, match="not a number"):
        epoch_from({"SOURCE_DATE_EPOCH": "yesterday"})


@needs_makeself
@pytest.mark.parametrize("flags", [("--gzip", "--sha256"), ("--gzip", "--nocrc"), ("--gzip", "--nomd5", "--nocrc")])
def test_a_current_directory_package_still_runs_after_normalize(tmp_path: Path, flags: tuple[str, ...]) -> None:
    # P4: targetdir="." was replaced everywhere in the header ("./install.sh" became
    # "makeself-ascenv-normalized/installmakeself-ascenv-normalizedsh") and the result failed
    package = small_package(
        tmp_path, "--current", *flags, install="#!/bin/sh\necho ok > installed.txt\ncat a.txt >> installed.txt\n"
    )
    assert makeself.read_header(package).target_dir == "."
    out = tmp_path / "norm.run"
    normalize(package, out, 0)
    header = makeself.read_header(out)
    assert (header.target_dir, header.script, header.label) == (".", "./install.sh", "src package")
    assert all(c.ok for c in makeself.verify(out, header))
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    done = subprocess.run(["bash", str(out), "--quiet"], cwd=run_dir, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (run_dir / "installed.txt").read_text() == "ok\nhi\n"
    check = subprocess.run(["bash", str(out), "--check"], cwd=run_dir, capture_output=True, text=True)
    assert check.returncode == 0 and "Error" not in check.stderr, check.stderr


@needs_makeself
def test_a_named_target_directory_is_kept_and_only_the_random_one_changes(tmp_path: Path) -> None:
    # the variant: a package made from a named directory ("opp") has targetdir="opp", a word that
    # appears elsewhere in a CANN header; it is a choice, not randomness, and stays
    package = small_package(
        tmp_path, "--named", "--gzip", source="opp", install="#!/bin/sh\necho opp > ../opp-ran.txt\n"
    )
    assert makeself.read_header(package).target_dir == "opp"
    out = tmp_path / "norm.run"
    normalize(package, out, 0)
    original, repacked = makeself.read_header(package), makeself.read_header(out)
    assert (repacked.target_dir, repacked.label) == ("opp", "opp package")
    # every line naming "opp" is kept as it was, but the build command's (rewritten as a whole)
    before = original.text.decode("latin-1").splitlines()
    after = set(repacked.text.decode("latin-1").splitlines())
    naming = [line for line in before if "opp" in line and not line.strip().startswith(('\\"', "echo Build"))]
    assert len(naming) >= 3 and [line for line in naming if line not in after] == []
    done = subprocess.run(["bash", str(out), "--quiet"], cwd=tmp_path / "opp", capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


class _FullDisk:
    """A temporary file on a full file system: every write fails with ENOSPC."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        pass

    def __enter__(self) -> _FullDisk:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def write(self, data: bytes) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def tell(self) -> int:
        return 0


@needs_makeself
def test_a_full_temporary_directory_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # normalize spools the payload (up to --max-bytes: a bomb fills $TMPDIR): ENOSPC is exit 2
    package = make_package(tmp_path, tmp_path / "canary")
    monkeypatch.setattr(tempfile, "TemporaryFile", _FullDisk)
    with pytest.raises(UsageError, match="a temporary file failed: No space left on device") as caught:
        normalize(package, tmp_path / "n.run", 0)
    assert caught.value.exit_code == 2 and not (tmp_path / "n.run").exists()


@needs_makeself
def test_a_package_of_two_parts_is_repacked_whole(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    # makeself --append adds a part (its own tar); the repacked package holds the members of both
    first = compress(tar_bytes([ti("packages/a.txt", b"a")]))
    second = compress(tar_bytes([ti("packages/b.txt", b"b")]))
    package = build(tmp_path / "two.run", real_header(tmp_path_factory), b"", parts=[first, second])
    assert len(makeself.read_header(package).sizes) == 2
    result = normalize(package, tmp_path / "one.run", 0)
    assert result.members == 2
    assert [m.path for m in inspect_package(tmp_path / "one.run").members] == ["packages/a.txt", "packages/b.txt"]
