"""The tar stream of a package read with every header checked before tarfile acts on it, and
dangerous members flagged (December 2026 adversarial report P1, P8, P10)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from ascenv.errors import PackageError
from ascenv.package import contents, makeself
from ascenv.package.inspection import inspect_package
from tests.package.hostile import MiB, build, compress, real_header, tar_bytes, ti
from tests.package.pkgbuild import needs_makeself

pytestmark = needs_makeself


@pytest.fixture
def header(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return real_header(tmp_path_factory)


def package_of(tmp_path: Path, header: bytes, raw: bytes, kind: str = "gzip") -> Path:
    return build(tmp_path / "p.run", header, compress(raw, kind), compression=kind)


def members(package: Path, **limits: int) -> tuple[contents.Member, ...]:
    found, _ = contents.read_members(package, makeself.read_header(package), **limits)
    return found


def raw_header(name: str, size: int, type: bytes, fmt: int = tarfile.GNU_FORMAT) -> bytes:
    info = tarfile.TarInfo(name)
    info.size, info.type = size, type
    return info.tobuf(fmt)


@pytest.mark.parametrize(
    "raw, message",
    [
        # the report's 32 MiB GNU long name (37 s, 188 MB); a 1 GiB one whose data is absent;
        # a 100 KiB pax header
        (raw_header("././@LongLink", 32 * MiB, tarfile.GNUTYPE_LONGNAME) + bytes(32 * MiB), "extended tar header"),
        (raw_header("././@LongLink", 1 << 30, tarfile.GNUTYPE_LONGLINK), "extended tar header"),
        (raw_header("pax", 100 << 10, tarfile.XHDTYPE, tarfile.PAX_FORMAT) + bytes(100 << 10), "extended tar header"),
    ],
    ids=["32MiB-long-name", "1GiB-long-link", "100KiB-pax"],
)
def test_extended_headers_are_capped(tmp_path: Path, header: bytes, raw: bytes, message: str) -> None:
    with pytest.raises(PackageError, match=message) as caught:
        members(package_of(tmp_path, header, raw))
    assert caught.value.exit_code == 2


def test_a_chain_of_extended_headers_is_refused_not_a_recursion_error(tmp_path: Path, header: bytes) -> None:
    record = b"11 path=ab\n"
    pax = raw_header("pax", len(record), tarfile.XHDTYPE, tarfile.PAX_FORMAT) + record.ljust(512, b"\0")
    raw = pax * 5000 + tar_bytes([ti("a.txt", b"x")])
    with pytest.raises(PackageError, match="extended tar headers in a row"):
        members(package_of(tmp_path, header, raw))


def test_global_pax_headers_are_capped_in_total(tmp_path: Path, header: bytes) -> None:
    make = tarfile.TarInfo._create_pax_generic_header  # type: ignore[attr-defined]
    # each before a member of its own (not a chain): 40 x 2 KB of global headers in all
    body = [
        make({f"x{i:02d}": "v" * 2000}, tarfile.XGLTYPE, "utf-8") + tarfile.TarInfo(f"a{i}").tobuf(tarfile.GNU_FORMAT)
        for i in range(40)
    ]
    raw = b"".join(body) + tar_bytes([ti("a.txt", b"x")])
    with pytest.raises(PackageError, match="global pax headers"):
        members(package_of(tmp_path, header, raw))


@pytest.mark.parametrize("size", [10**30, 1 << 40, -5])
def test_a_stated_size_past_the_limit_is_refused_before_skipping(tmp_path: Path, header: bytes, size: int) -> None:
    # a member of an unknown type is skipped by its size: 10**30 would loop for ever
    pax = tarfile.TarInfo("x")
    pax.type = b"Z"
    pax.pax_headers = {"size": str(size)}
    raw = pax.tobuf(tarfile.PAX_FORMAT) + tar_bytes([ti("a.txt", b"x")])
    with pytest.raises(PackageError, match=f"a member header states {size} bytes, past the limit"):
        members(package_of(tmp_path, header, raw), max_bytes=64 * MiB)


@pytest.mark.parametrize(
    "pax",
    [
        {"GNU.sparse.major": "1", "GNU.sparse.minor": "0", "GNU.sparse.realsize": str(1 << 40), "GNU.sparse.name": "s"},
        {"GNU.sparse.map": "0,1", "GNU.sparse.size": str(1 << 40)},
        {"GNU.sparse.offset": "0", "GNU.sparse.numbytes": "1", "GNU.sparse.size": str(1 << 40)},
    ],
    ids=["1.0", "0.1", "0.0"],
)
def test_sparse_members_are_refused(tmp_path: Path, header: bytes, pax: dict) -> None:
    # a sparse map describes holes read without input: 1 TiB of zeros from a few bytes
    info = tarfile.TarInfo("sparse.bin")
    info.size = 512
    info.pax_headers = pax
    raw = info.tobuf(tarfile.PAX_FORMAT) + (b"1\n0\n1\n".ljust(512, b"\0"))
    with pytest.raises(PackageError, match="sparse member .sparse.bin.: not in a makeself package"):
        members(package_of(tmp_path, header, raw))


def test_kept_files_are_capped_in_total(tmp_path: Path, header: bytes) -> None:
    # P1's last row: 64 x 16 MiB JSON members were all kept in memory; now each kept file is at
    # most KEEP_LIMIT and all together KEEP_TOTAL, the rest "not read"
    big = b"{" + b" " * (3 * MiB) + b"}"
    config = "packages/vendors/v/op_impl/ai_core/tbe/kernel/config/ascend910b/op{}.json"
    raw = tar_bytes([ti(config.format(i), big) for i in range(8)])
    package = package_of(tmp_path, header, raw)
    found, kept = contents.read_members(package, makeself.read_header(package), keep=lambda path, size: size)
    assert len(found) == 8 and sum(map(len, kept.values())) <= contents.KEEP_TOTAL
    (vendor,) = inspect_package(package).vendors
    assert any("not read" in p for p in vendor.problems)


def kinds_package(tmp_path: Path, header: bytes) -> Path:
    V = "packages/vendors/"
    raw = tar_bytes(
        [
            ti("../../../../tmp/escaped.txt", b"x"),
            ti("/abs.txt", b"x"),
            ti(V + "evil", type=tarfile.SYMTYPE, linkname="/etc"),
            ti(V + "evil/op_impl/x.txt", b"through the link"),
            ti(V + "good/lib", type=tarfile.SYMTYPE, linkname="../../../../../usr/lib"),
            ti(V + "good/version.info", b"custom_opp_compiler_version=1"),
            ti(V + "good/passwd", type=tarfile.LNKTYPE, linkname="/etc/passwd"),
            ti(V + "good/dev", type=tarfile.CHRTYPE),
            ti(V + "good/disk", type=tarfile.BLKTYPE),
            ti(V + "good/fifo", type=tarfile.FIFOTYPE),
            ti(V + "good/suid", b"#!/bin/sh\n", mode=0o4755),
            ti(V + "good/sgid", b"#!/bin/sh\n", mode=0o2755),
            ti(V + "../x/version.info", b"custom_opp_compiler_version=2"),
            ti(V + "good/../../../x.txt", b"x"),
            ti(V + "good/ok.txt", b"ok"),
        ]
    )
    return package_of(tmp_path, header, raw)


def test_dangerous_members_are_flagged_with_their_type(tmp_path: Path, header: bytes) -> None:
    by_path = {m.path: m for m in members(kinds_package(tmp_path, header))}
    V = "packages/vendors/"
    expected = {
        "../../../../tmp/escaped.txt": ("file", "'..' in its path"),
        "/abs.txt": ("file", "absolute path"),
        V + "evil": ("symlink", "symlink pointing outside the package (/etc)"),
        V + "evil/op_impl/x.txt": ("file", f"below the symlink {V}evil"),
        V + "good/lib": ("symlink", "symlink pointing outside the package"),
        V + "good/passwd": ("hardlink", "hard link to /etc/passwd, outside the package"),
        V + "good/dev": ("chardev", "character device"),
        V + "good/disk": ("blockdev", "block device"),
        V + "good/fifo": ("fifo", "FIFO"),
        V + "good/suid": ("file", "setuid"),
        V + "good/sgid": ("file", "setgid"),
        V + "../x/version.info": ("file", "'..' in its path"),
        V + "good/../../../x.txt": ("file", "'..' in its path"),
    }
    for path, (kind, danger) in expected.items():
        assert by_path[path].kind == kind, path
        assert any(danger in d for d in by_path[path].dangers), (path, by_path[path].dangers)
    assert by_path[V + "good/ok.txt"].dangers == () and by_path[V + "good/version.info"].dangers == ()


def test_dangerous_names_never_become_vendors(tmp_path: Path, header: bytes) -> None:
    found = inspect_package(kinds_package(tmp_path, header))
    assert [v.name for v in found.vendors] == ["good"]  # not "evil" (a link), not ".." nor "x"
    assert found.vendors[0].compiler_version == "1"  # its own version.info, not the ../x one
    assert len(found.dangerous) == 13


def test_names_that_are_not_utf8_are_shown_escaped(tmp_path: Path, header: bytes) -> None:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.GNU_FORMAT, encoding="latin-1") as tar:
        info = tarfile.TarInfo("bad\xff\u00e9.txt")
        tar.addfile(info, io.BytesIO(b""))
    (member,) = members(package_of(tmp_path, header, out.getvalue()))
    assert member.path == "bad\\xff\\xe9.txt"
    member.path.encode("utf-8")  # printable anywhere


def test_every_part_is_read(tmp_path: Path, header: bytes) -> None:
    # makeself extracts each filesizes part in turn; a second part must not be hidden from inspect
    first = compress(tar_bytes([ti("packages/a.txt", b"a")]))
    second = compress(tar_bytes([ti("install.sh", b"#!/bin/sh\necho second part\n", mode=0o755)]))
    package = build(tmp_path / "two.run", header, b"", parts=[first, second])
    assert [m.path for m in members(package)] == ["packages/a.txt", "install.sh"]


@pytest.mark.parametrize(
    "name, kind, mode, link, expected",
    [
        ("a/b", "file", 0o6755, None, ("setuid", "setgid")),
        ("a/b", "other", 0o644, None, ("a member of a type tar does not define",)),
        ("a/b/c", "symlink", 0o777, "../../x", ()),  # a/b/../../x = x: inside
        ("a/b/c", "symlink", 0o777, "../../../x", ("symlink pointing outside the package (../../../x)",)),
        ("a/./b", "symlink", 0o777, "./.././../x", ("symlink pointing outside the package (./.././../x)",)),
        ("a/b", "hardlink", 0o644, "a/c", ("hard link to a/c",)),
    ],
)
def test_dangers(name: str, kind: str, mode: int, link: str, expected: tuple) -> None:
    assert contents.dangers(name, kind, mode, link, None) == expected
