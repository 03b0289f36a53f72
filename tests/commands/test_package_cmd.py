"""`ascenv package inspect|normalize` through cli.main on packages Debian's makeself built."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tarfile
import time
from pathlib import Path

import pytest

from ascenv.output.package import TABLE_ROWS
from tests.cli_helpers import run_cli
from tests.package.hostile import (
    MiB,
    ascenv_measured,
    build,
    compress,
    many_members,
    one_member_stream,
    real_header,
    repeated_bomb,
    tar_bytes,
    ti,
)
from tests.package.pkgbuild import make_package, needs_makeself, small_package

pytestmark = needs_makeself


def ascenv(cwd: Path, *argv: str, environ=None) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    return run_cli(argv, {"PATH": os.environ.get("PATH", ""), **(environ or {})}, cwd)


def tree_files(root: Path) -> dict[str, tuple[int, str, str]]:
    found = {}
    for path in sorted(root.rglob("*")):
        if path.is_symlink() or path.is_file():
            rel = str(path.relative_to(root))
            if path.is_symlink():
                found[rel] = (0, f"{path.lstat().st_mode & 0o7777:04o}", None)
            else:
                data = path.read_bytes()
                found[rel] = (len(data), f"{path.stat().st_mode & 0o7777:04o}", hashlib.sha256(data).hexdigest())
    return found


def test_inspect_lists_every_file_and_the_vendor_without_running_it(tmp_path: Path) -> None:
    canary = tmp_path / "canary"
    package = make_package(
        tmp_path,
        canary,
        vendors={"customize": {"op_types": ("AddCustom", "SinhCustom"), "units": ("ascend910b", "ascend310p")}},
    )
    code, out, err = ascenv(tmp_path, "package", "inspect", package.name, "--format", "json")
    assert code == 0, err
    assert not canary.exists()  # install.sh never ran
    doc = json.loads(out)
    assert doc["schema"] == 1
    m = doc["makeself"]
    assert (m["version"], m["label"], m["compression"]) == ("2.4.5", "version:1.0", "gzip")
    assert m["target_dir"].startswith("makeself-") and m["date"]
    assert [c["kind"] for c in m["checksums"]] == ["sha256", "crc"] and all(c["verified"] for c in m["checksums"])
    listed = {f["path"]: (f["size"], f["mode"], f["sha256"]) for f in doc["files"]}
    assert listed == tree_files(tmp_path / "build")
    link = [f for f in doc["files"] if f["path"].endswith("liboptiling.so")][0]
    assert link["link"] == "lib/linux/aarch64/libcust_opmaster_rt2.0.so"
    (vendor,) = doc["vendors"]
    assert vendor["name"] == "customize"
    assert vendor["op_types"] == ["AddCustom", "SinhCustom"]
    assert vendor["compute_units"] == ["ascend310p", "ascend910b"]
    assert vendor["compiler_version"] == "7.7.0.1.238"
    assert {lib["kind"]: lib["elf_arch"] for lib in vendor["libraries"]} == {
        "proto": "aarch64",
        "tiling": "aarch64",
        "opapi": "aarch64",
    }
    assert vendor["aclnn_headers"] == ["aclnn_add_custom.h", "aclnn_sinh_custom.h"]


def test_inspect_human(tmp_path: Path) -> None:
    package = make_package(tmp_path, tmp_path / "canary", vendors={"v1": {"arch": "x86_64"}})
    code, out, err = ascenv(tmp_path, "package", "inspect", str(package))
    assert code == 0, err
    assert "vendor v1" in out and "OpTypes: AddCustom" in out and "proto: " in out and "(x86_64)" in out
    assert "sha256 ok" in out


def test_two_vendors(tmp_path: Path) -> None:
    package = make_package(tmp_path, tmp_path / "c", vendors={"a": {}, "b": {"op_types": ("MulCustom",)}})
    code, out, _ = ascenv(tmp_path, "package", "inspect", str(package), "--format", "json")
    assert code == 0
    assert [(v["name"], v["op_types"]) for v in json.loads(out)["vendors"]] == [
        ("a", ["AddCustom"]),
        ("b", ["MulCustom"]),
    ]


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_damaged_package_is_exit_2(tmp_path: Path, damage: str) -> None:
    package = make_package(tmp_path, tmp_path / "canary")
    data = bytearray(package.read_bytes())
    if damage == "truncate":
        data = data[: len(data) - 10]
    else:
        data[-200] ^= 0x40
    package.write_bytes(bytes(data))
    code, out, err = ascenv(tmp_path, "package", "inspect", str(package))
    assert code == 2 and out == ""
    assert ("is truncated" if damage == "truncate" else "is corrupt: payload sha256") in err
    assert "Traceback" not in err and not (tmp_path / "canary").exists()


def test_limits_are_enforced(tmp_path: Path) -> None:
    package = make_package(tmp_path, tmp_path / "canary")
    code, _, err = ascenv(tmp_path, "package", "inspect", str(package), "--max-bytes", "4096")
    assert code == 2 and "decompresses to more than 4096 bytes" in err
    code, _, err = ascenv(tmp_path, "package", "inspect", str(package), "--max-members", "3")
    assert code == 2 and "more than 3 members" in err


def test_missing_package_is_usage_error(tmp_path: Path) -> None:
    code, _, err = ascenv(tmp_path, "package", "inspect", "nope.run")
    assert code == 2 and "nope.run is not a file" in err


def test_listing_agrees_with_makeself_list(tmp_path: Path) -> None:
    """The header's own --list (tar t, runs no script) names the same files."""
    package = make_package(tmp_path, tmp_path / "canary")
    listed = subprocess.run(["sh", str(package), "--list"], capture_output=True, text=True, check=True).stdout
    names = {line.split(" -> ")[0].split()[-1].removeprefix("./") for line in listed.splitlines()[1:] if line.strip()}
    code, out, _ = ascenv(tmp_path, "package", "inspect", str(package), "--format", "json")
    files = {f["path"] for f in json.loads(out)["files"]}
    assert files <= names and "packages/vendors/customize/version.info" in files and not (tmp_path / "canary").exists()


def test_normalize_command(tmp_path: Path) -> None:
    package = make_package(tmp_path, tmp_path / "canary", mtime=1_750_000_000)
    environ = {"SOURCE_DATE_EPOCH": "1700000000"}
    code, out, err = ascenv(
        tmp_path, "package", "normalize", package.name, "-o", "n.run", "--format", "json", environ=environ
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["sha256"] == hashlib.sha256((tmp_path / "n.run").read_bytes()).hexdigest() != doc["source_sha256"]
    assert (doc["source_date_epoch"], doc["date"]) == (1700000000, "Tue Nov 14 22:13:20 UTC 2023")
    assert os.access(tmp_path / "n.run", os.X_OK)
    code, _, err = ascenv(
        tmp_path, "package", "normalize", package.name, "-o", "m.run", environ={"SOURCE_DATE_EPOCH": "x"}
    )
    assert code == 2 and "SOURCE_DATE_EPOCH='x' is not a number" in err and not (tmp_path / "m.run").exists()


# --- the December 2026 adversarial report: bombs (P1, P2), -o targets (P7), members (P8, P10) ----


@pytest.fixture
def header(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return real_header(tmp_path_factory)


# Peak RSS of a whole `ascenv package inspect` is ~25 MiB on a 64-bit Linux; the bombs took GBs.
RSS_MIB = 160


@pytest.mark.parametrize("kind", ["bzip2", "xz", "gzip"])
@pytest.mark.parametrize("limit", ["1000", "1048576"])
def test_a_4gib_bomb_is_refused_at_max_bytes_in_bounded_memory(
    tmp_path: Path, header: bytes, kind: str, limit: str
) -> None:
    # P1: a 22 KB bzip2 package of one 4 GiB member took 8.4 GB whatever --max-bytes said
    package = build(tmp_path / "bomb.run", header, repeated_bomb(kind, 256), compression=kind)
    start = time.monotonic()
    code, out, err, rss = ascenv_measured(tmp_path, "package", "inspect", str(package), "--max-bytes", limit)
    # refused by the decompressed bytes (1000: within the first read) or by the member's stated size
    assert code == 2 and (f"decompresses to more than {limit} bytes" in err or "header states" in err), err
    assert rss < RSS_MIB and time.monotonic() - start < 60, (rss, time.monotonic() - start)


@pytest.mark.parametrize("kind", ["bzip2", "xz", "gzip"])
def test_a_single_stream_bomb_is_read_in_bounded_memory(tmp_path: Path, header: bytes, kind: str) -> None:
    # one stream (no help from stream boundaries): 64 MiB of zeros, read whole, then refused
    # below its size; memory stays that of an empty package either way
    package = build(tmp_path / "bomb.run", header, one_member_stream(kind, 64 * MiB), compression=kind)
    code, out, err, rss = ascenv_measured(tmp_path, "package", "inspect", str(package), "--format", "json")
    assert code == 0, err
    assert json.loads(out)["files"][0]["size"] == 64 * MiB and rss < RSS_MIB, rss
    code, out, err, rss = ascenv_measured(
        tmp_path, "package", "normalize", str(package), "-o", "n.run", "--max-bytes", str(8 * MiB)
    )
    assert code == 2 and rss < RSS_MIB and not (tmp_path / "n.run").exists(), (err, rss)


def test_a_small_gzip_package_is_read_in_linear_time(tmp_path: Path, header: bytes) -> None:
    # P2: 40 MiB of zeros in a 60 KB gzip package took 111 s (quadratic buffer); measured against
    # a 4 MiB peer in the same run, so a loaded machine does not fail it
    def seconds(size: int) -> float:
        package = build(tmp_path / f"{size}.run", header, one_member_stream("gzip", size))
        start = time.monotonic()
        code, _, err = ascenv(tmp_path, "package", "inspect", str(package))
        assert code == 0, err
        return time.monotonic() - start

    small, large = seconds(4 * MiB), seconds(40 * MiB)
    assert large < 10 * 3 * small + 3, (small, large)


@pytest.mark.parametrize(
    "target",
    ["dir", "missing/x.run", "dangling", "/dev/full", "readonly/x.run", "file/below.run", "/proc/self/new.run"],
)
def test_normalize_to_an_unwritable_target_is_exit_2(tmp_path: Path, target: str) -> None:
    # P7: a directory, a missing parent, a dangling symlink, /dev/full and a read-only directory
    # gave exit 3; a path through a regular file is the variant
    package = make_package(tmp_path, tmp_path / "canary")
    (tmp_path / "dir").mkdir()
    (tmp_path / "dangling").symlink_to(tmp_path / "gone" / "x.run")
    (tmp_path / "readonly").mkdir(mode=0o555)
    (tmp_path / "file").write_text("x")
    if target == "readonly/x.run" and os.access(tmp_path / "readonly", os.W_OK):
        pytest.skip("running as root: a mode 0555 directory is writable")
    code, out, err = ascenv(tmp_path, "package", "normalize", str(package), "-o", target)
    assert code == 2, err
    assert "cannot write" in err and "Traceback" not in err and out == ""
    assert not (tmp_path / "gone").exists() and list((tmp_path / "dir").iterdir()) == []


@needs_makeself
def test_normalize_keeps_a_recorded_md5(tmp_path: Path) -> None:
    small_package(tmp_path, "--nocrc", "--gzip", source="md5")
    code, _, err = ascenv(tmp_path, "package", "normalize", "md5.run", "-o", "n.run")
    assert code == 0, err
    check = subprocess.run(["sh", str(tmp_path / "n.run"), "--check"], capture_output=True, text=True)
    assert check.returncode == 0 and "MD5 checksums are OK" in check.stderr + check.stdout, check


def test_dangerous_members_are_warned_about_and_typed(tmp_path: Path, header: bytes) -> None:
    raw = tar_bytes(
        [
            ti("../../../../tmp/escaped.txt", b"x"),
            ti("packages/vendors/evil", type=tarfile.SYMTYPE, linkname="/etc"),
            ti("packages/dev", type=tarfile.CHRTYPE),
            ti("packages/passwd", type=tarfile.LNKTYPE, linkname="/etc/passwd"),
            ti("packages/ok.txt", b"ok"),
        ]
    )
    package = build(tmp_path / "p.run", header, compress(raw))
    code, out, err = ascenv(tmp_path, "package", "inspect", str(package), "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    types = {f["path"]: (f["type"], bool(f.get("dangers"))) for f in doc["files"]}
    assert types == {
        "../../../../tmp/escaped.txt": ("file", True),
        "packages/vendors/evil": ("symlink", True),
        "packages/dev": ("chardev", True),
        "packages/passwd": ("hardlink", True),
        "packages/ok.txt": ("file", False),
    }
    assert doc["dangerous_members"] == 4 and doc["vendors"] == []
    code, out, err = ascenv(tmp_path, "package", "inspect", str(package))
    assert code == 0 and "warning: 4 members unsafe to extract" in out
    assert "packages/dev: character device" in out and "hard link to /etc/passwd, outside the package" in out


@pytest.mark.slow
def test_many_members_are_listed_in_linear_time(tmp_path: Path, header: bytes) -> None:
    # P10: 100,000 members took 37 s (json) and 188 s (human: a rich table); past TABLE_ROWS
    # the human listing is plain lines. Measured against a 10,000-member peer of the same run
    # (a loaded 2-core machine), with a generous bound on the whole.
    def seconds(count: int, fmt: str) -> float:
        package = build(tmp_path / f"{count}.run", header, compress(many_members(count)))
        start = time.monotonic()
        code, out, err = ascenv(tmp_path, "package", "inspect", str(package), "--format", fmt)
        assert code == 0, err
        assert out.count("packages/f0") == count
        return time.monotonic() - start

    for fmt in ("human", "json"):
        small, large = seconds(10_000, fmt), seconds(100_000, fmt)
        assert large < 3 * 10 * small + 5 and large < 300, (fmt, small, large)


def test_a_short_listing_is_a_table_and_a_long_one_plain_lines(tmp_path: Path, header: bytes) -> None:
    for count, table in ((TABLE_ROWS, True), (TABLE_ROWS + 1, False)):
        package = build(tmp_path / f"{count}.run", header, compress(many_members(count)))
        code, out, err = ascenv(tmp_path, "package", "inspect", str(package))
        assert code == 0, err
        assert out.count("packages/f0") == count and ("sha256" in out.split("\n")[3]) == table


def test_lone_surrogates_in_a_json_key_never_exit_3(tmp_path: Path, header: bytes) -> None:
    unit = "packages/vendors/v/op_impl/ai_core/tbe"
    raw = tar_bytes(
        [
            ti(f"{unit}/config/ascend910b/aic-ascend910b-ops-info.json", b'{"B\\ud800": {}, "C\\udfff\\ud800x": {}}'),
            ti(f"{unit}/kernel/config/ascend910b/b.json", b'{"binList": [{"simplifiedKey": ["D\\udc80/x"]}]}'),
        ]
    )
    package = build(tmp_path / "p.run", header, compress(raw))
    for fmt in ("json", "human"):
        code, out, err = ascenv(tmp_path, "package", "inspect", str(package), "--format", fmt)
        assert code == 0, err
        out.encode("utf-8")  # what a UTF-8 stdout accepts
    code, out, _ = ascenv(tmp_path, "package", "inspect", str(package), "--format", "json")
    assert json.loads(out)["vendors"][0]["op_types"] == ["B\\ud800", "C\\udfff\\ud800x", "D\\udc80"]


@pytest.mark.parametrize("limit", ["0", "-5"])
def test_limits_below_one_are_usage_errors(tmp_path: Path, limit: str) -> None:
    package = make_package(tmp_path, tmp_path / "canary")
    for action in (("inspect",), ("normalize", "-o", "n.run")):
        for option in ("--max-bytes", "--max-members"):
            code, _, err = ascenv(tmp_path, "package", *action, str(package), option, limit)
            assert code == 2 and f"{option} {limit}: a limit is at least 1" in err, err
    assert not (tmp_path / "n.run").exists()


@pytest.mark.parametrize("offset", [4, 40, -3])
def test_an_md5_only_package_tampered_is_exit_2(tmp_path: Path, offset: int) -> None:
    # P5's reproducer: `makeself --nocrc` records only MD5; inspect said "no checksum recorded"
    # and exit 0 after a payload byte was changed. Offset 4 as reported; 40 and the end: variants
    package = small_package(tmp_path, "--nocrc", "--gzip", source="md5only")
    code, out, err = ascenv(tmp_path, "package", "inspect", str(package))
    assert code == 0 and "md5 ok" in out, err
    data = bytearray(package.read_bytes())
    skip = int(data.split(b'skip="', 1)[1].split(b'"', 1)[0])
    start = sum(len(line) + 1 for line in bytes(data).split(b"\n")[:skip])
    data[start + offset if offset >= 0 else len(data) + offset] ^= 0xFF
    package.write_bytes(bytes(data))
    code, out, err = ascenv(tmp_path, "package", "inspect", str(package))
    assert code == 2 and "payload md5 is" in err, (out, err)
