"""A fuzzer over the package reader: every compressor, truncation at any offset, flipped and
inserted bytes in the compressed payload and in the tar inside it, and header values. Whatever
the package, reading it gives a result or a PackageError (exit 2), never another exception (exit
3), and memory stays bounded (December 2026 adversarial report, "Tests that show it")."""

from __future__ import annotations

import tarfile
import tempfile
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ascenv.errors import AscenvError
from ascenv.package.inspection import inspect_package
from ascenv.package.normalize import normalize
from tests.package.hostile import MiB, build, compress, real_header, tar_bytes, ti
from tests.package.pkgbuild import needs_makeself

pytestmark = needs_makeself

KINDS = ("gzip", "bzip2", "xz", "none")
V = "packages/vendors/customize/"
MEMORY_MIB = 48  # Python heap peak while reading one package of at most LIMIT bytes


def sample_tar() -> bytes:
    """A small package tree: a vendor's files, a link, a long name (GNU header), a pax header."""
    long_info, long_data = ti(V + "op_impl/" + "d" * 150 + "/x.cpp", b"// long name\n")
    pax_info, pax_data = ti(V + "op_impl/ai_core/tbe/pax.txt", b"pax")
    pax_info.pax_headers = {"comment": "x" * 300}
    return tar_bytes(
        [
            ti(V + "version.info", b"custom_opp_compiler_version=7.7.0.1.238"),
            ti(
                V + "op_impl/ai_core/tbe/config/ascend910b/aic-ascend910b-ops-info.json",
                b'{"AddCustom": {"opFile": {"value": "add_custom"}}}',
            ),
            ti(
                V + "op_impl/ai_core/tbe/kernel/config/ascend910b/add_custom.json",
                b'{"binList": [{"simplifiedKey": ["AddCustom/d=0"]}]}',
            ),
            ti(V + "op_api/lib/libcust_opapi.so", b"\x7fELF\x02\x01\x01" + bytes(57)),
            ti(V + "lib", type=tarfile.SYMTYPE, linkname="op_api/lib"),
            (long_info, long_data),
            (pax_info, pax_data),
            ti("install.sh", b"#!/bin/sh\nexit 0\n", mode=0o755),
        ],
        fmt=tarfile.PAX_FORMAT,
    )


TAR = sample_tar()
PAYLOADS = {kind: compress(TAR, kind) for kind in KINDS}
LIMIT = 4 * MiB


@pytest.fixture(scope="module")
def header(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return real_header(tmp_path_factory)


mutations = st.lists(
    st.tuples(
        st.sampled_from(["flip", "insert", "delete", "truncate"]),
        st.integers(0, 1 << 20),
        st.binary(min_size=1, max_size=8),
    ),
    min_size=1,
    max_size=4,
)


def mutate(data: bytes, edits: list[tuple[str, int, bytes]]) -> bytes:
    out = bytearray(data)
    for what, where, value in edits:
        at = where % (len(out) + 1)
        if what == "flip" and out:
            at = min(at, len(out) - 1)
            out[at] ^= value[0] or 1
        elif what == "insert":
            out[at:at] = value
        elif what == "delete":
            del out[at : at + len(value)]
        else:
            del out[at:]
    return bytes(out)


def read_bounded(package: Path, output: Path) -> None:
    """inspect then normalize: a result or an exit-2 error, the Python heap bounded."""
    tracemalloc.start()
    try:
        for step in (
            lambda: inspect_package(package, max_bytes=LIMIT),
            lambda: normalize(package, output, 0, max_bytes=LIMIT),
        ):
            try:
                step()
            except AscenvError as exc:
                assert exc.exit_code == 2, exc
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < MEMORY_MIB * MiB, peak


@settings(max_examples=120)
@given(kind=st.sampled_from(KINDS), edits=mutations, inner=st.booleans())
def test_a_damaged_payload_is_exit_2_or_read(header: bytes, kind: str, edits: list, inner: bool) -> None:
    # inner: the tar is damaged before compression (the compressed stream is valid, the tar
    # headers are not), else the compressed bytes themselves; the header's sums always match,
    # so the reader itself meets the damage rather than the checksum
    payload = compress(mutate(TAR, edits), kind) if inner else mutate(PAYLOADS[kind], edits)
    with tempfile.TemporaryDirectory() as work:
        if not payload:
            payload = b"\0"
        package = build(Path(work) / "p.run", header, payload, compression=kind)
        read_bounded(package, Path(work) / "n.run")


@settings(max_examples=60)
@given(
    key=st.sampled_from(["filesizes", "skip", "SHA", "MD5", "CRCsum", "targetdir", "label", "totalsize"]),
    value=st.text(st.characters(codec="latin-1", exclude_characters='"\n'), max_size=40)
    | st.integers(-(10**30), 10**30).map(str),
)
def test_any_header_value_is_exit_2_or_read(header: bytes, key: str, value: str) -> None:
    with tempfile.TemporaryDirectory() as work:
        package = build(Path(work) / "p.run", header, PAYLOADS["gzip"], subs={key: value})
        read_bounded(package, Path(work) / "n.run")


@pytest.mark.parametrize("kind", KINDS)
def test_truncation_at_every_offset_of_the_payload(header: bytes, kind: str, tmp_path: Path) -> None:
    # the report truncated one package at each of its 20,277 offsets; here each payload at every
    # offset (a few thousand per compressor), header sums matching the cut payload
    payload = PAYLOADS[kind]
    step = max(1, len(payload) // 400)
    for cut in range(1, len(payload), step):
        package = build(tmp_path / "p.run", header, payload[:cut], compression=kind)
        try:
            inspect_package(package, max_bytes=LIMIT)
        except AscenvError as exc:
            assert exc.exit_code == 2
