from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
from pathlib import Path

import pytest

from ascenv import errors
from ascenv.containers import bootstrap
from ascenv.containers.bootstrap import AptSource
from ascenv.containers.recipe import load_recipe
from ascenv.errors import InputError
from tests.conftest import load_capture
from tests.engine_fixtures import CONTAINERS

DATA = Path(__file__).resolve().parents[1] / "data" / "containers"
# The layout of a Debian 12 host's /etc/apt/sources.list.d/debian.sources, mirror host replaced.
DEB822 = """Types: deb
# http://snapshot.example.invalid/archive/debian/20250520T000000Z
URIs: http://mirror.example.invalid/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://mirror.example.invalid/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://src.example.invalid/debian
Suites: bookworm
Components: main
"""


def test_deb822_sources():
    sources = bootstrap.parse_deb822_sources(DEB822, "debian.sources")
    assert [(s.uri, s.suites) for s in sources] == [
        ("http://mirror.example.invalid/debian", ("bookworm", "bookworm-updates")),
        ("http://mirror.example.invalid/debian-security", ("bookworm-security",)),
    ]
    assert sources[0].signed_by == "/usr/share/keyrings/debian-archive-keyring.gpg"
    assert (
        sources[0].line("bookworm", ("main",)) == "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
        "http://mirror.example.invalid/debian bookworm main"
    )


def test_one_line_sources_and_host_reading(tmp_path):
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list").write_text(
        "# comment\n"
        "deb [arch=amd64 signed-by=/k.gpg] http://m.example.invalid/debian bookworm main contrib\n"
        "deb-src http://x.invalid/debian bookworm main\n"
    )
    (tmp_path / "sources.list.d" / "debian.sources").write_text(DEB822)
    sources = bootstrap.read_host_sources(tmp_path)
    assert sources[0] == AptSource(
        "http://m.example.invalid/debian", ("bookworm",), ("main", "contrib"), "/k.gpg", str(tmp_path / "sources.list")
    )
    assert (
        bootstrap.mirror_for(sources, "bookworm-security", tmp_path).uri
        == "http://mirror.example.invalid/debian-security"
    )


def test_no_source_for_the_suite_says_what_was_found(tmp_path):
    sources = bootstrap.parse_deb822_sources(DEB822, "debian.sources")
    with pytest.raises(InputError) as info:
        bootstrap.mirror_for(sources, "trixie", tmp_path)
    assert (
        "'trixie'" in info.value.message
        and "http://mirror.example.invalid/debian (bookworm bookworm-updates)" in info.value.message
    )


def test_mmdebstrap_command_line(tmp_path):
    boot = load_recipe(CONTAINERS, "builder-bookworm").bootstrap
    source = bootstrap.parse_deb822_sources(DEB822, "x")[0]
    argv = bootstrap.mmdebstrap_argv(boot, source, tmp_path / "rootfs", tmp_path / "debs", "amd64")
    assert argv[:7] == ["unshare", "--mount", "--pid", "--fork", "--kill-child", "--propagation", "private"]
    assert "--include=g++=4:12.2.0-3,cmake=3.25.1-1,make=4.3-4.1,python3=3.11.2-1+b1" in argv
    assert argv[-3:] == [
        "bookworm",
        str(tmp_path / "rootfs"),
        "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
        "http://mirror.example.invalid/debian bookworm main",
    ]
    assert f"--customize-hook=sync-out /var/cache/apt/archives {tmp_path / 'debs'}" in argv
    env = bootstrap.mmdebstrap_env(boot, {"http_proxy": "http://p.invalid:3128", "HOME": "/root"})
    assert (
        env["SOURCE_DATE_EPOCH"] == "1747699200" and env["http_proxy"] == "http://p.invalid:3128" and "HOME" not in env
    )


def test_installed_packages_from_dpkg_status():
    text = load_capture(DATA / "dpkg-status-excerpt.txt")
    assert bootstrap.installed_packages(text, "amd64") == {
        "adduser": "3.134",
        "libc6": "2.36-9+deb12u14",
        "python3": "3.11.2-1+b1",
        "zlib1g": "1:1.2.13.dfsg-1",
    }
    # a removed package whose configuration files remain is not installed; a foreign one keeps its arch
    removed = text.replace(
        "Package: zlib1g\nStatus: install ok installed", "Package: zlib1g\nStatus: deinstall ok config-files"
    )
    assert "zlib1g" not in bootstrap.installed_packages(removed, "amd64")
    assert "libc6:amd64" in bootstrap.installed_packages(text, "arm64")


def make_tree(root: Path, order: list[str], mtime: int) -> None:
    for name in order:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(name)
    os.link(root / "usr/bin/b", root / "usr/bin/a-hardlink")
    os.symlink("b", root / "usr/bin/link")
    (root / "dev").mkdir()
    os.mkfifo(root / "dev/fifo")
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            os.utime(os.path.join(dirpath, n), (mtime, mtime), follow_symlinks=False)


def layer_bytes(root: Path, clamp: int) -> bytes:
    buf = io.BytesIO()
    bootstrap.write_layer(root, buf, clamp)
    return buf.getvalue()


def test_layer_is_a_function_of_the_content_only(tmp_path):
    make_tree(tmp_path / "one", ["usr/bin/b", "etc/z", "etc/a"], mtime=2_000_000_000)
    make_tree(tmp_path / "two", ["etc/a", "usr/bin/b", "etc/z"], mtime=2_100_000_000)
    clamp = 1_747_699_200
    data = layer_bytes(tmp_path / "one", clamp)
    assert data == layer_bytes(tmp_path / "two", clamp)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        members = tar.getmembers()
    names = [m.name for m in members]
    assert names == [
        "dev",
        "etc",
        "etc/a",
        "etc/z",
        "usr",
        "usr/bin",
        "usr/bin/a-hardlink",
        "usr/bin/b",
        "usr/bin/link",
    ]
    assert {m.mtime for m in members} == {clamp}
    assert {(m.uname, m.gname) for m in members} == {("", "")}
    assert all(not m.pax_headers for m in members)
    by_name = {m.name: m for m in members}
    assert by_name["usr/bin/b"].islnk() and by_name["usr/bin/b"].linkname == "usr/bin/a-hardlink"
    assert by_name["usr/bin/link"].issym() and by_name["usr/bin/link"].linkname == "b"


def test_older_mtimes_are_kept(tmp_path):
    make_tree(tmp_path / "t", ["etc/a", "usr/bin/b"], mtime=1_600_000_000)
    with tarfile.open(fileobj=io.BytesIO(layer_bytes(tmp_path / "t", 1_747_699_200))) as tar:
        assert {m.mtime for m in tar.getmembers()} == {1_600_000_000}


def test_archive_ids_are_content_hashes(tmp_path):
    recipe = load_recipe(CONTAINERS, "builder-bookworm")
    rootfs = tmp_path / "rootfs"
    make_tree(rootfs, ["etc/a", "usr/bin/b"], mtime=2_000_000_000)
    (rootfs / "var/lib/dpkg").mkdir(parents=True)
    (rootfs / "var/lib/dpkg/status").write_text(load_capture(DATA / "dpkg-status-excerpt.txt"))
    archive = bootstrap.write_image_archive(rootfs, tmp_path / "image.tar", recipe, "amd64")
    with tarfile.open(tmp_path / "image.tar") as tar:
        manifest = json.load(tar.extractfile("manifest.json"))
        config_bytes = tar.extractfile(manifest[0]["Config"]).read()
        layer = tar.extractfile(manifest[0]["Layers"][0]).read()
    assert archive.image_id == "sha256:" + hashlib.sha256(config_bytes).hexdigest()
    config = json.loads(config_bytes)
    assert config["rootfs"]["diff_ids"] == [archive.diff_id] == ["sha256:" + hashlib.sha256(layer).hexdigest()]
    assert config["created"] == "2025-05-20T00:00:00Z"
    labels = config["config"]["Labels"]
    assert labels["ascenv.recipe"] == "builder-bookworm" and labels["ascenv.managed"] == "true"
    assert bootstrap.parse_packages_label(labels["ascenv.packages"])["zlib1g"] == "1:1.2.13.dfsg-1"
    assert manifest[0]["RepoTags"] == [f"ascenv/builder-bookworm:{archive.image_id[7:19]}"]
    again = bootstrap.write_image_archive(rootfs, tmp_path / "again.tar", recipe, "amd64")
    assert (tmp_path / "again.tar").read_bytes() == (
        tmp_path / "image.tar"
    ).read_bytes() and again.image_id == archive.image_id


@pytest.mark.parametrize(
    "status, code, stderr",
    [
        ("not-found", None, "[Errno 2] No such file or directory: 'unshare'"),
        ("exit", 127, "unshare: failed to execute mmdebstrap: No such file or directory"),  # unshare(1) exit code
    ],
)
def test_missing_mmdebstrap_or_unshare_says_what_to_install(tmp_path, status, code, stderr):
    from ascenv import proc

    boot = load_recipe(CONTAINERS, "builder-bookworm").bootstrap
    source = AptSource("http://mirror.invalid/debian", ("bookworm",), ("main",), None, "test")

    def run(argv, **_):
        return proc.Completed(tuple(argv), status, code, "", stderr, 0.0)

    with pytest.raises(errors.ToolMissing) as info:
        bootstrap.run_mmdebstrap(boot, source, tmp_path / "rootfs", tmp_path / "debs", "amd64", {}, run)
    assert info.value.exit_code == errors.EXIT_TOOL_MISSING == 4  # a missing program, not a bug in ascenv (3)
    assert info.value.message == f"cannot bootstrap: {stderr}"
    assert info.value.hint == "install mmdebstrap and util-linux (apt-get install mmdebstrap util-linux)"


def test_a_failing_mmdebstrap_quotes_its_last_lines_and_the_mirror(tmp_path):
    from ascenv import proc

    boot = load_recipe(CONTAINERS, "builder-bookworm").bootstrap
    source = AptSource("http://mirror.invalid/debian", ("bookworm",), ("main",), None, "test")
    stderr = "E: Version '3.25.1-1' for 'cmake' was not found\nE: apt-get install failed"

    def run(argv, **_):
        return proc.Completed(tuple(argv), "exit", 1, "", stderr, 0.0)

    with pytest.raises(errors.BootstrapFailed) as info:
        bootstrap.run_mmdebstrap(boot, source, tmp_path / "rootfs", tmp_path / "debs", "amd64", {}, run)
    assert info.value.exit_code == errors.EXIT_BUILD_FAILED
    assert info.value.message == (
        f"mmdebstrap failed (exit, code 1) for suite 'bookworm' from http://mirror.invalid/debian:\n{stderr}"
    )
    assert "'Version … was not found'" in info.value.hint
