"""The makeself header and payload, read in Python from packages Debian's makeself built."""

from __future__ import annotations

import hashlib
import shutil
import struct
import subprocess
import time
import zlib
from pathlib import Path

import pytest

from ascenv.errors import PackageError
from ascenv.package import makeself
from tests.package.hostile import MiB, build, compress, one_member_stream, real_header, tar_bytes, ti
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


# --- hostile headers (December 2026 adversarial report, P5, P6, P9, P11) ---------------------------


@pytest.fixture
def header(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return real_header(tmp_path_factory)


def md5_only(tmp_path: Path, header: bytes, payload: bytes) -> Path:
    """As `makeself --nocrc` without --sha256 writes it: only MD5 recorded."""
    digest = hashlib.md5(payload).hexdigest()  # noqa: S324 - makeself's own choice
    return build(tmp_path / "md5.run", header, payload, subs={"MD5": digest, "SHA": "0" * 64, "CRCsum": "0000000000"})


def test_md5_is_read_and_verified(tmp_path: Path, header: bytes) -> None:
    payload = compress(tar_bytes([ti("packages/a.txt", b"hello")]))
    package = md5_only(tmp_path, header, payload)
    parsed = makeself.read_header(package)
    assert parsed.md5 == (hashlib.md5(payload).hexdigest(),)  # noqa: S324
    assert [(c.kind, c.ok) for c in makeself.require_valid(package, parsed)] == [("md5", True)]


@pytest.mark.parametrize("where", [4, -1, "middle"])
def test_md5_only_package_tampered_is_refused(tmp_path: Path, header: bytes, where: object) -> None:
    # P5 flipped byte 4 of the payload; the variants flip the last byte and one in the middle
    payload = compress(tar_bytes([ti("packages/a.txt", b"hello" * 100)]))
    package = md5_only(tmp_path, header, payload)
    parsed = makeself.read_header(package)
    data = bytearray(package.read_bytes())
    index = parsed.offset + (len(payload) // 2 if where == "middle" else where % len(payload))  # type: ignore[operator]
    data[index] ^= 0xFF
    package.write_bytes(bytes(data))
    with pytest.raises(PackageError, match="payload md5 is .*, the header records") as caught:
        makeself.require_valid(package, makeself.read_header(package))
    assert caught.value.exit_code == 2


@pytest.mark.parametrize(
    "subs, name",
    [
        ({"filesizes": "{n} 1", "SHA": "{sha}", "CRCsum": "0000000000"}, "SHA"),  # P11: one SHA, two parts
        ({"CRCsum": "1 2 3"}, "CRCsum"),  # three CRCs for one part
        ({"MD5": "{md5} {md5}", "SHA": "0" * 64, "CRCsum": "0000000000"}, "MD5"),  # two MD5s, one part
    ],
    ids=["one-sha-two-parts", "three-crc-one-part", "two-md5-one-part"],
)
def test_a_checksum_count_other_than_the_parts_is_refused(tmp_path: Path, header: bytes, subs: dict, name: str) -> None:
    payload = compress(tar_bytes([ti("packages/a.txt", b"x")]))
    values = {
        "n": str(len(payload) - 1),
        "sha": hashlib.sha256(payload).hexdigest(),
        "md5": hashlib.md5(payload).hexdigest(),  # noqa: S324
    }
    package = build(tmp_path / "p.run", header, payload, subs={k: v.format(**values) for k, v in subs.items()})
    with pytest.raises(PackageError, match=f"lists \\d+ {name} values? for \\d+ payload part") as caught:
        makeself.read_header(package)
    assert caught.value.exit_code == 2


@pytest.mark.parametrize("sizes", ["-100", "0", "{n} 0", "{n} -1", "1e3", "0x10", ""])
def test_sizes_below_one_or_not_numbers_are_refused(tmp_path: Path, header: bytes, sizes: str) -> None:
    # P6 was "-100" (exit 3); the others: zero, a zero or negative second part, not decimal, none
    payload = compress(tar_bytes([ti("packages/a.txt", b"x")]))
    package = build(tmp_path / "p.run", header, payload, subs={"filesizes": sizes.format(n=len(payload))})
    with pytest.raises(PackageError, match="filesizes|at least 1") as caught:
        makeself.read_header(package)
    assert caught.value.exit_code == 2


@pytest.mark.parametrize("count", [200_000, 5, 60_000])
def test_many_parts_give_a_short_message(tmp_path: Path, header: bytes, count: int) -> None:
    # P9: 200,000 parts gave an 800 KB message; any count: the message stays a line
    payload = compress(tar_bytes([ti("packages/a.txt", b"x")]))
    sums = {"SHA": "0" * 64, "CRCsum": "0000000000", "MD5": "0" * 32}
    package = build(tmp_path / "p.run", header, payload, subs={"filesizes": " ".join(["1000"] * count), **sums})
    with pytest.raises(PackageError, match="is truncated") as caught:
        makeself.read_header(package)
    assert len(caught.value.message) < 400


@pytest.mark.parametrize("skip", ["99999999999999999999999", "0", "-1"])
def test_a_skip_beyond_the_header_is_refused(tmp_path: Path, header: bytes, skip: str) -> None:
    payload = compress(tar_bytes([ti("packages/a.txt", b"x")]))
    package = build(tmp_path / "p.run", header, payload, subs={"skip": skip})
    with pytest.raises(PackageError) as caught:
        makeself.read_header(package)
    assert caught.value.exit_code == 2


@pytest.mark.parametrize("kind", ["gzip", "bzip2", "xz", "none"])
def test_every_compressor_reads_and_concatenated_streams_are_one_payload(
    tmp_path: Path, header: bytes, kind: str
) -> None:
    raw = tar_bytes([ti("packages/a.txt", b"a" * 5000), ti("packages/b.txt", b"b" * 70_000)])
    cut = 512 * 3
    payload = compress(raw, kind) if kind == "none" else compress(raw[:cut], kind) + compress(raw[cut:], kind)
    package = build(tmp_path / "p.run", header, payload, compression=kind)
    stream = makeself.BoundedStream(package, makeself.read_header(package), 1 << 20)
    try:
        assert b"".join(iter(lambda: stream.read(777), b"")) == raw
    finally:
        stream.close()


def test_zstd_is_read_or_refused_clearly(tmp_path: Path, header: bytes) -> None:
    if shutil.which("zstd") is None:
        pytest.skip("no zstd command to make the payload")
    raw = tar_bytes([ti("packages/a.txt", b"z" * 1000)])
    package = build(tmp_path / "p.run", header, compress(raw, "zstd"), compression="zstd")
    parsed = makeself.read_header(package)
    assert parsed.compression == "zstd"
    try:
        import compression.zstd  # type: ignore[import-not-found]  # noqa: F401 - Python 3.14+
    except ImportError:
        with pytest.raises(PackageError, match="zstd-compressed, which this Python cannot read"):
            makeself.BoundedStream(package, parsed, 1 << 20)
        return
    stream = makeself.BoundedStream(package, parsed, 1 << 20)
    assert stream.read(len(raw) + 10) == raw


@pytest.mark.parametrize("kind", ["gzip", "bzip2", "xz"])
def test_trailing_garbage_and_a_stream_cut_short_are_refused(tmp_path: Path, header: bytes, kind: str) -> None:
    raw = tar_bytes([ti("packages/a.txt", b"a" * 5000)])
    for name, payload in (("garbage", compress(raw, kind) + b"not a stream"), ("cut", compress(raw, kind)[:-8])):
        package = build(tmp_path / f"{name}.run", header, payload, compression=kind)
        stream = makeself.BoundedStream(package, makeself.read_header(package), 1 << 20)
        with pytest.raises(PackageError, match="does not decompress|ends before its end marker"):
            while stream.read(10240):
                pass
        stream.close()


def test_the_buffer_is_linear_in_the_bytes_read(tmp_path: Path, header: bytes) -> None:
    # P2: tarfile reads 10 KiB at a time and the old buffer copied the rest of a 64 MiB piece on
    # every read. Reading 64 MiB must cost about what 8 MiB costs, times 8 (generously: 3 x that)
    def seconds(size: int) -> float:
        package = build(tmp_path / f"{size}.run", header, one_member_stream("gzip", size))
        stream = makeself.BoundedStream(package, makeself.read_header(package), 1 << 30)
        start = time.perf_counter()
        while stream.read(10240):
            pass
        stream.close()
        return time.perf_counter() - start

    small, large = seconds(8 * MiB), seconds(64 * MiB)
    assert large < 8 * 3 * small + 2, (small, large)


@pytest.mark.parametrize("kind", ["lz4", "base64"])
def test_a_compressor_ascenv_does_not_read_is_exit_2(tmp_path: Path, header: bytes, kind: str) -> None:
    # makeself 2.4.5 also offers lz4, lzo, compress, base64 and gpg/openssl encryption
    package = build(tmp_path / "p.run", header, b"\x04\x22\x4d\x18 not read", compression="lz4")
    if kind == "base64":
        package.write_bytes(package.read_bytes().replace(b"echo Compression: lz4", b"echo Compression: base64"))
    parsed = makeself.read_header(package)
    with pytest.raises(PackageError, match=f"payload compression '{kind}' is not one ascenv reads") as caught:
        makeself.BoundedStream(package, parsed, 1 << 20)
    assert caught.value.exit_code == 2


@pytest.mark.parametrize("props", [38, 40, 34])
def test_an_xz_stream_asking_for_a_huge_dictionary_is_refused(tmp_path: Path, header: bytes, props: int) -> None:
    # liblzma allocates the dictionary the block header asks for (up to 4 GiB) before any output:
    # the memory limit refuses it (xz -9 needs 65 MiB). LZMA2 dictionary byte (xz file format
    # 1.1.0, 5.3.1): 34 = 512 MiB, 38 = 2 GiB, 40 = 4 GiB - 1
    stream = bytearray(compress(tar_bytes([ti("packages/a.txt", b"x")]), "xz"))
    size = (stream[12] + 1) * 4  # the block header follows the 12-byte stream header
    block = stream[12 : 12 + size]
    at = block.index(b"\x21\x01") + 2  # filter LZMA2 (0x21), 1 byte of properties
    block[at] = props
    block[-4:] = struct.pack("<I", zlib.crc32(bytes(block[:-4])))
    stream[12 : 12 + size] = block
    package = build(tmp_path / "p.run", header, bytes(stream), compression="xz")
    reader = makeself.BoundedStream(package, makeself.read_header(package), 1 << 20)
    with pytest.raises(PackageError, match="does not decompress .*[Mm]emory") as caught:
        reader.read(10240)
    reader.close()
    assert caught.value.exit_code == 2
