"""The makeself header and payload, read in Python from packages Debian's makeself built."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ascenv.errors import PackageError
from ascenv.package import makeself
from tests.package.pkgbuild import make_package, needs_makeself

pytestmark = needs_makeself


@pytest.fixture
def package(tmp_path: Path) -> Path:
    return make_package(tmp_path, tmp_path / "canary")


def test_header_fields(package: Path) -> None:
    header = makeself.read_header(package)
    assert (header.version, header.label, header.script, header.compression) == (
        "2.4.5",
        "version:1.0",
        "./install.sh",
        "gzip",
    )
    assert header.target_dir.startswith("makeself-")  # random: pid and time, the reproducibility bug
    assert header.date and header.date.endswith(str(__import__("time").gmtime().tm_year))
    # the payload starts where the shell header ends; the gzip magic proves the offset
    data = package.read_bytes()
    assert data[header.offset : header.offset + 2] == b"\x1f\x8b"
    assert header.offset + header.total_size == len(data)
    assert header.md5 == ("0" * 32,)  # --nomd5


def test_checksums_match_the_tools(package: Path) -> None:
    header = makeself.read_header(package)
    checks = {c.kind: c for c in makeself.verify(package, header)}
    assert set(checks) == {"sha256", "crc"} and all(c.ok for c in checks.values())
    payload = package.read_bytes()[header.offset :]
    cksum = subprocess.run(["cksum"], input=payload, capture_output=True, check=True).stdout.split()[0]
    assert checks["crc"].actual == cksum.decode() == header.crc[0]


def test_cksum_crc_known_value() -> None:
    crc = makeself.CksumCrc()
    crc.update(b"123456789")
    assert crc.value() == 930766865  # `printf 123456789 | cksum`


def test_truncated_package_is_refused(package: Path) -> None:
    data = package.read_bytes()
    package.write_bytes(data[:-100])
    with pytest.raises(PackageError, match="is truncated") as caught:
        makeself.read_header(package)
    assert caught.value.exit_code == 2


def test_flipped_payload_byte_is_refused(package: Path) -> None:
    header = makeself.read_header(package)
    data = bytearray(package.read_bytes())
    data[header.offset + header.total_size // 2] ^= 0x01
    package.write_bytes(bytes(data))
    with pytest.raises(PackageError, match="payload sha256 is .*, the header records"):
        makeself.require_valid(package, makeself.read_header(package))


def test_not_a_package(tmp_path: Path) -> None:
    path = tmp_path / "x.run"
    path.write_bytes(b"\x7fELF not a shell archive")
    with pytest.raises(PackageError, match="not a makeself package"):
        makeself.read_header(path)
