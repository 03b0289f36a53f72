"""ascenv/report/archive.py: the deterministic archive, and reading one back from anyone: bounded
in memory and time, odd names refused, nothing extracted."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import zlib
from pathlib import Path

import pytest

from ascenv import errors
from ascenv.report import Bundle, load_bundle, pack, read_bundle
from ascenv.report.archive import MAX_MEMBER, MAX_MEMBERS, MAX_TOTAL
from tests.report.test_bundle import assemble, inputs, members_of, secret_snapshot

CREATED = "2026-01-01T00:00:00+00:00"


def good() -> bytes:
    return pack(assemble(inputs(secret_snapshot())))


def tar_of(*entries: tuple[tarfile.TarInfo, bytes], fmt: int = tarfile.PAX_FORMAT) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=fmt) as tar:
        for info, data in entries:
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return gzip.compress(raw.getvalue())


def regular(name: str, data: bytes = b"x") -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def with_manifest(members: dict[str, bytes], *extra: tuple[tarfile.TarInfo, bytes]) -> bytes:
    """A bundle of ``members`` with a true MANIFEST.json, then ``extra`` entries written as given."""
    listing = [{"name": n, "sha256": hashlib.sha256(d).hexdigest()} for n, d in members.items()]
    manifest = json.dumps({"schema": 1, "members": listing}).encode()
    return tar_of(*(regular(n, d) for n, d in members.items()), regular("MANIFEST.json", manifest), *extra)


SNAPSHOT = json.dumps({"schema": 1}).encode()


# --- pack --------------------------------------------------------------------------------------


def test_same_inputs_same_bytes_and_normalised_entries():
    first = good()
    assert first == good()
    assert first[4:8] == b"\0\0\0\0"  # gzip header MTIME (RFC 1952 §2.3)
    with tarfile.open(fileobj=io.BytesIO(first), mode="r:gz") as tar:
        infos = tar.getmembers()
    names = [i.name for i in infos]
    assert names == sorted(names)
    assert {(i.mtime, i.uid, i.gid, i.uname, i.gname, i.mode) for i in infos} == {(1767225600, 0, 0, "", "", 0o644)}
    later = pack(assemble(inputs(secret_snapshot(), created="2026-01-02T00:00:00+00:00")))
    assert later != first


def test_manifest_lists_every_member_with_its_sha256():
    members = members_of(good())
    manifest = json.loads(members.pop("MANIFEST.json"))
    assert manifest["schema"] == 1 and manifest["snapshot_schema"] == 1
    assert {m["name"]: m["sha256"] for m in manifest["members"]} == {
        n: hashlib.sha256(b).hexdigest() for n, b in members.items()
    }


def test_read_bundle_gives_what_pack_wrote_and_so_does_tarfile():
    data = good()
    members, manifest = read_bundle(data, "r.tar.gz")
    assert members == members_of(data) and manifest["kind"] == "ascenv-report"
    long_name = "manifests/" + "v" * 150 + "/ascenv-manifest.toml"  # a pax header carries the name
    bundle = Bundle({"snapshot.json": SNAPSHOT, long_name: b"op = 1\n"}, CREATED, True)
    bundle.members["MANIFEST.json"] = json.dumps(
        {
            "schema": 1,
            "members": [{"name": n, "sha256": hashlib.sha256(d).hexdigest()} for n, d in bundle.members.items()],
        }
    ).encode()
    assert read_bundle(pack(bundle), "r.tar.gz")[0][long_name] == b"op = 1\n"


def test_load_bundle_gives_the_redacted_snapshot(tmp_path):
    path = tmp_path / "r.tar.gz"
    path.write_bytes(good())
    snap = load_bundle(str(path))
    assert snap.host.hostname == "<host-1>" and snap.firmware.version == "7.7.0.1.231"
    assert len(snap.npu.chips) == 2


# --- refused, with exit 2 and a message that says why ---------------------------------------------


def _repack(members: dict[str, bytes]) -> bytes:
    return pack(Bundle(members, CREATED, True))


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda d, m: b"not a bundle\n", "not gzip-compressed"),
        (lambda d, m: d[: len(d) // 2], "truncated or not a tar.gz"),
        (lambda d, m: gzip.compress(b"x" * 2048), "truncated or not a tar.gz"),
        (
            lambda d, m: _repack({**m, "snapshot.json": m["snapshot.json"].replace(b"910B4", b"910B3")}),
            "snapshot.json does not match its sha256",
        ),
        (lambda d, m: _repack({**m, "extra.txt": b"x"}), "extra.txt not listed in MANIFEST.json"),
        (
            lambda d, m: _repack({k: v for k, v in m.items() if k != "findings.json"}),
            "findings.json is listed in MANIFEST.json but missing",
        ),
        (lambda d, m: _repack({k: v for k, v in m.items() if k != "MANIFEST.json"}), "has no MANIFEST.json"),
        (lambda d, m: _repack({"MANIFEST.json": b'{"schema": 1, "members": []}'}), "has no snapshot.json"),
        (lambda d, m: _repack({"MANIFEST.json": b'{"schema": 9, "members": []}'}), "bundle schema 9 is not supported"),
        (lambda d, m: _repack({"MANIFEST.json": b"{"}), "MANIFEST.json is not readable"),
        # what the manifest says is checked like any input (a string or negative schema, wrong types)
        (lambda d, m: _repack({"MANIFEST.json": b'{"schema": "1", "members": []}'}), "schema is '1', expected"),
        (lambda d, m: _repack({"MANIFEST.json": b'{"schema": -5, "members": []}'}), "schema is -5, expected"),
        (lambda d, m: _repack({"MANIFEST.json": b'{"schema": 1, "members": {}}'}), "members is dict, expected a list"),
        (lambda d, m: _repack({"MANIFEST.json": b'{"schema": 1, "members": [[]]}'}), "members[0] needs a string"),
        (lambda d, m: _repack({"MANIFEST.json": b"[" * 100_000 + b"]" * 100_000}), "MANIFEST.json is not readable"),
        (
            lambda d, m: _repack(
                {
                    "snapshot.json": SNAPSHOT,
                    "MANIFEST.json": json.dumps(
                        {
                            "schema": 1,
                            "members": [{"name": "snapshot.json", "sha256": hashlib.sha256(SNAPSHOT).hexdigest()}] * 2,
                        }
                    ).encode(),
                }
            ),
            "MANIFEST.json lists snapshot.json twice",
        ),
    ],
)
def test_bad_bundles_are_clear_input_errors(damage, message):
    data = good()
    with pytest.raises(errors.InputError) as caught:
        read_bundle(damage(data, members_of(data)), "r.tar.gz")
    assert message in caught.value.message and caught.value.exit_code == 2


def test_any_corruption_is_refused_or_harmless():
    """Flipped bits anywhere: an InputError, or (header bytes gzip does not check) the same members."""
    import random

    data = good()
    wanted, _ = read_bundle(data, "r.tar.gz")
    rng = random.Random(7)
    for _ in range(300):
        damaged = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            damaged[rng.randrange(len(damaged))] ^= 1 << rng.randrange(8)
        try:
            members, _ = read_bundle(bytes(damaged), "r.tar.gz")
        except errors.InputError:
            continue
        assert members == wanted


def _link(name: str, target: str, kind: bytes) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info, b""


@pytest.mark.parametrize(
    "entries, message",
    [
        ([regular("../../x")], "member name '../../x' is not a plain relative path"),
        ([regular("/abs/x")], "member name '/abs/x' is not a plain relative path"),
        ([regular("files/./x")], "is not a plain relative path"),
        ([regular("files//x")], "is not a plain relative path"),
        ([regular("files/x\x1b]0;PWNED\x07")], "is not a plain relative path"),
        ([regular("snapshot.json", b"{}")], "member snapshot.json appears twice"),
        ([regular("MANIFEST.json", b"{}")], "member MANIFEST.json appears twice"),  # a second manifest
        ([_link("snapshot.json", "/etc/passwd", tarfile.SYMTYPE)], "member snapshot.json appears twice"),
        ([_link("../up", "x", tarfile.LNKTYPE)], "member name '../up' is not a plain relative path"),
    ],
)
def test_odd_member_names_are_refused(entries, message):
    data = with_manifest({"snapshot.json": SNAPSHOT}, *entries)
    with pytest.raises(errors.InputError) as caught:
        read_bundle(data, "r.tar.gz")
    assert message in caught.value.message and caught.value.exit_code == 2


def test_a_name_that_is_not_utf8_or_holds_nul_is_refused():
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT, encoding="latin-1") as tar:
        info = tarfile.TarInfo("caf\xe9")
        tar.addfile(info, io.BytesIO(b""))
    with pytest.raises(errors.InputError, match="is not UTF-8"):
        read_bundle(gzip.compress(raw.getvalue()), "r.tar.gz")
    info = tarfile.TarInfo("x")
    info.pax_headers = {"path": "snap\0shot.json"}
    with pytest.raises(errors.InputError, match="not a plain relative path"):
        read_bundle(with_manifest({"snapshot.json": SNAPSHOT}, (info, b"")), "r.tar.gz")


def test_links_are_never_followed_and_a_linked_snapshot_is_no_snapshot():
    link = _link("snapshot.json", "/etc/hostname", tarfile.SYMTYPE)
    data = tar_of(regular("MANIFEST.json", b'{"schema": 1, "members": []}'), link)
    with pytest.raises(errors.InputError, match="has no snapshot.json"):
        read_bundle(data, "r.tar.gz")


# --- bounds ----------------------------------------------------------------------------------------


def _raw_deflate(data: bytes = b"", zeros: int = 0) -> bytes:
    """Raw deflate blocks of ``data`` then ``zeros`` zero bytes, ending on a full flush, so that
    such pieces can be laid end to end (each is independent of what came before)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    parts = [compressor.compress(data)]
    block = bytes(1 << 20)
    while zeros > 0:
        parts.append(compressor.compress(block[: min(zeros, len(block))]))
        zeros -= len(block)
    return b"".join(parts) + compressor.flush(zlib.Z_FULL_FLUSH)


def _stream(*pieces: tuple[bytes, int]) -> bytes:
    """A gzip stream of (bytes, then that many zeros) pieces and an end of archive. Repeated zero
    runs are compressed once; the trailer's CRC is left 0, as every bound is hit before it."""
    runs: dict[int, bytes] = {}
    out = [b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"]  # RFC 1952 header: deflate, no name, mtime 0
    for data, zeros in pieces:
        out.append(_raw_deflate(data))
        if zeros and zeros not in runs:
            runs[zeros] = _raw_deflate(zeros=zeros)
        out.append(runs.get(zeros, b""))
    end = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    out.append(end.compress(bytes(1024)) + end.flush())
    return b"".join(out) + bytes(8)


def _header(name: str, size: int, kind: bytes = tarfile.REGTYPE, fmt: int = tarfile.USTAR_FORMAT) -> bytes:
    info = tarfile.TarInfo(name)
    info.size = size
    info.type = kind
    return info.tobuf(format=fmt)


def bomb_members(count: int, size: int) -> bytes:
    """The report's bomb: ``count`` members of ``size`` zero bytes (120 x 60 MiB is 7 MB on disk)."""
    return _stream(*((_header(f"pad{i}", size), size) for i in range(count)))


BOUNDS = [
    (lambda: bomb_members(3, 60 << 20), f"member pad0 is {60 << 20} bytes, more than a report holds"),
    (lambda: bomb_members(6, MAX_MEMBER - 1024), f"decompresses to more than {MAX_TOTAL >> 20} MiB"),
    (
        lambda: gzip.compress(b"".join(_header(f"m{i}", 0) for i in range(MAX_MEMBERS + 1)) + bytes(1024)),
        f"more than {MAX_MEMBERS} members",
    ),
    (
        lambda: _stream((_header("././@LongLink", 1 << 30, tarfile.GNUTYPE_LONGNAME, tarfile.GNU_FORMAT), 1 << 24)),
        "a tar header of 1073741824 bytes",
    ),
    (
        lambda: _stream((_header("././@LongLink", 1 << 30, tarfile.GNUTYPE_LONGLINK, tarfile.GNU_FORMAT), 1 << 24)),
        "a tar header of 1073741824 bytes",
    ),
    (lambda: _stream((_header("pax", 1 << 30, tarfile.XHDTYPE), 1 << 24)), "a tar header of 1073741824 bytes"),
    (lambda: _stream((_header("glob", 1 << 30, tarfile.XGLTYPE), 1 << 24)), "a tar header of 1073741824 bytes"),
    (lambda: _stream((_header("odd", 20 << 30, b"Z", tarfile.GNU_FORMAT), 1 << 24)), "member odd has tar type b'Z'"),
    (
        lambda: _stream((_header("sparse", 20 << 30, tarfile.GNUTYPE_SPARSE, tarfile.GNU_FORMAT), 1 << 24)),
        "member sparse has tar type",
    ),
]


@pytest.mark.parametrize("make, message", BOUNDS)
def test_every_read_is_bounded(make, message):
    with pytest.raises(errors.InputError) as caught:
        read_bundle(make(), "bomb.tar.gz")
    assert message in caught.value.message and caught.value.exit_code == 2


def _diff_in_child(tmp_path: Path, bundle: Path) -> tuple[int, str, int]:
    """(exit code, stderr, max RSS in KiB) of ``ascenv diff BUNDLE good.lock`` in a child process
    of a fresh interpreter, so that no other child of the test run counts."""
    lock = tmp_path / "good.lock"
    lock.write_text("lock-version = 1\n")
    script = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "sys.stderr.write(done.stderr)\n"
        "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "PYTHONDONTWRITEBYTECODE": "1"}
    env.update({k: v for k, v in os.environ.items() if k == "PYTHONPATH"})
    argv = [sys.executable, "-c", script, sys.executable, "-m", "ascenv", "diff", str(bundle), str(lock)]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    code, rss = done.stdout.split()
    return int(code), done.stderr, int(rss)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: bomb_members(120, 60 << 20), "more than a report holds"),
        (lambda: bomb_members(12, 15 << 20), "decompresses to more than"),
        (
            lambda: _stream(
                (_header("././@LongLink", 1 << 30, tarfile.GNUTYPE_LONGNAME, tarfile.GNU_FORMAT), 256 << 20)
            ),
            "a tar header of",
        ),
    ],
    ids=["report's 120 x 60 MiB bomb", "members under the bound, total over", "1 GiB GNU long name"],
)
def test_a_bomb_given_to_diff_exits_2_in_bounded_memory(tmp_path, make, message):
    bomb = tmp_path / "bomb.tar.gz"
    bomb.write_bytes(make())
    code, err, rss_kib = _diff_in_child(tmp_path, bomb)
    assert code == 2 and message in err and "Traceback" not in err
    assert rss_kib < 200 * 1024  # was 5.7 GB, then MemoryError (exit 3), for the first bomb


def test_a_non_gzip_input_is_refused_after_two_bytes(tmp_path):
    sparse = tmp_path / "sparse.tar.gz"
    with open(sparse, "wb") as fh:
        fh.truncate(60 << 20)  # 60 MiB of holes (under the size bound): read whole before the magic was checked
    code, err, rss_kib = _diff_in_child(tmp_path, sparse)
    assert code == 2 and "not gzip-compressed" in err and rss_kib < 100 * 1024


def test_a_file_over_the_bundle_bound_is_refused_unread(tmp_path):
    sparse = tmp_path / "sparse.tar.gz"
    with open(sparse, "wb") as fh:
        fh.truncate(2 << 30)
    code, err, rss_kib = _diff_in_child(tmp_path, sparse)
    assert code == 2 and "is larger than 64 MiB" in err and rss_kib < 100 * 1024


def test_a_fifo_bundle_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "r.tar.gz"
    os.mkfifo(fifo)
    with pytest.raises(errors.InputError, match="is a FIFO"):
        load_bundle(str(fifo), "r.tar.gz")
