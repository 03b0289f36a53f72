"""`ascenv package inspect|normalize` through cli.main on packages Debian's makeself built."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli
from tests.package.pkgbuild import make_package, needs_makeself

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
