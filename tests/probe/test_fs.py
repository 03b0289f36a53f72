"""ascenv.probe.fs.Root: files under an untrusted root are read without blocking, bounded, and only
when they are regular files; ``unreadable`` says why one was not read."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest

from ascenv.probe.fs import Root
from tests.test_fsutil import no_hang


def plant(root: Path, machine_path: str, kind: str) -> None:
    host = root / machine_path.lstrip("/")
    host.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(host)
    elif kind == "socket":
        # bound by a relative name: a socket path over 107 bytes (a deep tmp_path) cannot be bound
        sock, cwd = socket.socket(socket.AF_UNIX), os.getcwd()
        try:
            os.chdir(host.parent)
            sock.bind(host.name)
        finally:
            os.chdir(cwd)
            sock.close()
    elif kind == "char-device":
        try:
            os.mknod(host, stat.S_IFCHR | 0o666, os.makedev(1, 5))  # what /dev/zero is
        except PermissionError:
            pytest.skip("mknod needs CAP_MKNOD")
    elif kind == "directory":
        host.mkdir()
    elif kind == "link-to-fifo":
        os.mkfifo(host.parent / "pipe")
        host.symlink_to("/etc/pipe" if machine_path.startswith("/etc/") else "pipe")


KINDS = {
    "fifo": "a FIFO (named pipe), not a regular file",
    "socket": "a socket, not a regular file",
    "char-device": "a character device, not a regular file",
    "directory": "a directory, not a regular file",
    "link-to-fifo": "a FIFO (named pipe), not a regular file",
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_special_files_read_as_nothing_and_say_why(tmp_path: Path, kind: str) -> None:
    plant(tmp_path, "/etc/os-release", kind)
    root = Root(tmp_path)
    assert no_hang(lambda: root.read_text("/etc/os-release")) is None
    assert no_hang(lambda: root.read_bytes("/etc/os-release")) is None
    assert root.unreadable("/etc/os-release") == KINDS[kind]
    if kind not in ("socket",):  # a socket cannot even be opened: nothing to record
        assert root.skipped == {"/etc/os-release": KINDS[kind].split(",")[0]}


def test_a_huge_file_is_read_up_to_the_limit(tmp_path: Path) -> None:
    big = tmp_path / "usr/local/Ascend/driver/version.info"
    big.parent.mkdir(parents=True)
    with open(big, "wb") as fh:
        fh.write(b"Version=25.0.rc1.1\n")
        fh.truncate(2 << 30)  # 2 GiB, sparse
    root = Root(tmp_path)
    assert len(root.read_bytes("/usr/local/Ascend/driver/version.info", limit=4 << 20) or b"") == 4 << 20
    assert (root.read_text("/usr/local/Ascend/driver/version.info") or "").startswith("Version=25.0.rc1.1")


def test_absent_and_readable_files_have_no_reason(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "hostname").write_text("node1\n")
    root = Root(tmp_path)
    assert root.unreadable("/etc/hostname") is None and root.unreadable("/etc/nothing") is None
    assert root.unreadable("/usr/local/Ascend/driver/version.info") is None
    assert root.unreadable("/etc", directory=True) is None
    assert root.read_text("/etc/hostname") == "node1\n"


def test_a_symlink_swapped_in_after_resolve_is_not_followed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """resolve() maps links inside the root; a link that appears between it and the open (a race
    with the image's owner) must not lead the read out of the root."""
    outside = tmp_path / "outside"
    outside.write_text("host secret")
    (tmp_path / "root" / "etc").mkdir(parents=True)
    (tmp_path / "root" / "etc" / "os-release").symlink_to(outside)
    root = Root(tmp_path / "root")
    monkeypatch.setattr(root, "resolve", lambda path: path)  # as if resolved before the swap
    assert root.read_text("/etc/os-release") is None
