"""The offline bootstrap: ``mmdebstrap`` from the host's Debian mirror into a directory, then a
deterministic ``docker save`` archive whose image ID is a pure function of the file contents.

Reproducibility rests on three things (checked by building twice, see tests/containers):
- ``mmdebstrap`` with ``SOURCE_DATE_EPOCH`` is bit-by-bit reproducible for the same options and
  mirror content; it already removes dpkg/apt logs, ``ldconfig/aux-cache``, apt lists and caches
  (mmdebstrap(1), "cleanup" and "SOURCE_DATE_EPOCH" sections, mmdebstrap 1.3.5). What it leaves
  host-specific — ``/etc/resolv.conf``, ``/etc/hostname`` (its man page says so) and
  ``/etc/apt/sources.list`` (names the host's mirror) — is removed by a customize hook.
- the layer tar: entries in sorted byte order, mtimes clamped to ``SOURCE_DATE_EPOCH``, numeric
  uid/gid with empty user/group names, GNU format (no pax headers, so no atime/ctime), no /dev nodes
  (the engine provides /dev).
- the image config: fixed keys, sorted, with ``created`` = ``SOURCE_DATE_EPOCH``. In the legacy
  ``docker save`` format the image ID is the sha256 of these config bytes, and the config names the
  layer by the sha256 of its bytes (moby image/tarexport/load.go), so equal files give equal IDs.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
import shlex
import stat
import tarfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Optional

from ascenv import proc
from ascenv.containers import MANAGED_LABEL, RECIPE_LABEL
from ascenv.containers.recipe import Bootstrap, Recipe
from ascenv.errors import BootstrapFailed, InputError, ToolMissing

PACKAGES_LABEL = "ascenv.packages"
RECIPE_SHA_LABEL = "ascenv.recipe-sha256"
MMDEBSTRAP_TIMEOUT = 1800.0
# Debian architecture names -> OCI/Go names (the image config's "architecture").
_OCI_ARCH = {"amd64": "amd64", "arm64": "arm64", "armhf": "arm", "i386": "386", "ppc64el": "ppc64le", "s390x": "s390x"}
_PASS_THROUGH_ENV = ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "TMPDIR")


@dataclass(frozen=True)
class AptSource:
    uri: str
    suites: tuple[str, ...]
    components: tuple[str, ...]
    signed_by: Optional[str]  # a keyring path, or None (apt's trusted keyrings)
    origin: str  # the file it was read from, for messages

    def line(self, suite: str, components: tuple[str, ...]) -> str:
        options = f"[signed-by={self.signed_by}] " if self.signed_by else ""
        return f"deb {options}{self.uri} {suite} {' '.join(components)}"


@dataclass(frozen=True)
class ImageArchive:
    image_id: str  # "sha256:…" of the config bytes: what the engine reports after loading
    diff_id: str  # "sha256:…" of the layer tar
    tag: str
    path: Path
    layer_size: int
    packages: dict


# apt sources -----------------------------------------------------------------------------------
def parse_deb822_sources(text: str, origin: str) -> list[AptSource]:
    """deb822 ``*.sources`` (sources.list(5)); disabled and ``deb-src``-only stanzas are skipped."""
    found = []
    for stanza in re.split(r"\n\s*\n", text):
        fields: dict[str, str] = {}
        key = None
        for line in stanza.splitlines():
            if line.startswith("#") or not line.strip():
                continue
            if line[0] in " \t" and key:
                fields[key] += "\n" + line.strip()
            elif ":" in line:
                key, value = line.split(":", 1)
                key = key.strip().lower()
                fields[key] = value.strip()
        if "deb" not in fields.get("types", "").split() or fields.get("enabled", "yes").lower() == "no":
            continue
        signed_by = fields.get("signed-by") or None
        if signed_by and "\n" in signed_by:  # an inline key block: leave verification to apt's keyrings
            signed_by = None
        for uri in fields.get("uris", "").split():
            found.append(
                AptSource(
                    uri,
                    tuple(fields.get("suites", "").split()),
                    tuple(fields.get("components", "").split()),
                    signed_by,
                    origin,
                )
            )
    return found


def parse_one_line_sources(text: str, origin: str) -> list[AptSource]:
    """One-line ``sources.list`` entries: ``deb [options] uri suite component...``."""
    found = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        match = re.match(r"^deb\s+(?:\[([^\]]*)\]\s+)?(\S+)\s+(\S+)\s*(.*)$", line)
        if not match:
            continue
        options = dict(o.split("=", 1) for o in (match.group(1) or "").split() if "=" in o)
        found.append(
            AptSource(
                match.group(2), (match.group(3),), tuple(match.group(4).split()), options.get("signed-by"), origin
            )
        )
    return found


def read_host_sources(etc_apt: Path) -> list[AptSource]:
    """Every enabled binary source the host's apt uses, in the order apt reads them."""
    found = []
    main = etc_apt / "sources.list"
    if main.is_file():
        found += parse_one_line_sources(main.read_text(errors="replace"), str(main))
    for path in sorted((etc_apt / "sources.list.d").glob("*")):
        if path.suffix == ".list":
            found += parse_one_line_sources(path.read_text(errors="replace"), str(path))
        elif path.suffix == ".sources":
            found += parse_deb822_sources(path.read_text(errors="replace"), str(path))
    return found


def mirror_for(sources: list[AptSource], suite: str, etc_apt: Path) -> AptSource:
    for source in sources:
        if suite in source.suites:
            return source
    listed = sorted({f"{s.uri} ({' '.join(s.suites)})" for s in sources}) or ["none"]
    raise InputError(
        f"no apt source of this host serves the Debian suite {suite!r} (read {etc_apt}: {', '.join(listed)})",
        hint=f"add a source for {suite!r} under {etc_apt}/sources.list.d/, pointing at your Debian mirror",
    )


# mmdebstrap ------------------------------------------------------------------------------------
def mmdebstrap_argv(boot: Bootstrap, source: AptSource, target: Path, debs: Path, arch: str) -> list[str]:
    """The command line. ``unshare --mount --pid --kill-child`` puts mmdebstrap's mounts and
    processes in namespaces that die with it, so an interrupted build leaves no mount or stray
    dpkg behind. The .deb cache is synced in and out (mmdebstrap(1), "EXAMPLES"); installed files
    do not depend on where a .deb came from, so the cache cannot change the image."""
    q = shlex.quote
    return [
        "unshare", "--mount", "--pid", "--fork", "--kill-child", "--propagation", "private",
        "mmdebstrap", "--mode=root", f"--variant={boot.variant}", "--format=directory",
        f"--architectures={arch}", f"--include={','.join(boot.packages)}",
        "--skip=essential/unlink",
        '--setup-hook=mkdir -p "$1"/var/cache/apt/archives',
        f"--setup-hook=sync-in {q(str(debs))} /var/cache/apt/archives/",
        f"--customize-hook=sync-out /var/cache/apt/archives {q(str(debs))}",
        '--customize-hook=rm -f "$1"/etc/resolv.conf "$1"/etc/hostname "$1"/etc/apt/sources.list',
        # apt refreshes partial/'s mtime only when it downloads, so a cached build would keep the
        # apt package's own date there (found by building twice). Make both the same.
        f'--customize-hook=touch -d @{boot.source_date_epoch} "$1"/var/cache/apt/archives/partial',
        boot.suite, str(target), source.line(boot.suite, boot.components),
    ]  # fmt: skip


def mmdebstrap_env(boot: Bootstrap, environ: Mapping[str, str]) -> dict[str, str]:
    env = {k: environ[k] for k in _PASS_THROUGH_ENV if k in environ}
    env.update(PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", LC_ALL="C.UTF-8")
    env["SOURCE_DATE_EPOCH"] = str(boot.source_date_epoch)
    return env


def run_mmdebstrap(
    boot: Bootstrap,
    source: AptSource,
    target: Path,
    debs: Path,
    arch: str,
    environ: Mapping[str, str],
    run: proc.Runner = proc.run,
) -> None:
    debs.mkdir(parents=True, exist_ok=True)
    prune_deb_cache(debs)
    done = run(
        mmdebstrap_argv(boot, source, target, debs, arch), timeout=MMDEBSTRAP_TIMEOUT, env=mmdebstrap_env(boot, environ)
    )
    prune_deb_cache(debs)
    if done.ok:
        return
    # unshare itself missing is NOT_FOUND; unshare present but mmdebstrap missing is unshare's
    # exit 127 ("failed to execute mmdebstrap"), which is no mirror problem either.
    if done.status == proc.NOT_FOUND or done.returncode == 127:
        raise ToolMissing(
            f"cannot bootstrap: {done.stderr.strip()}",
            hint="install mmdebstrap and util-linux (apt-get install mmdebstrap util-linux)",
        )
    tail = "\n".join(done.stderr.strip().splitlines()[-25:])
    raise BootstrapFailed(
        f"mmdebstrap failed ({done.status}, code {done.returncode}) for suite {boot.suite!r} "
        f"from {source.uri}:\n{tail}",
        hint="a pinned version the mirror no longer has shows as 'Version … was not found'; "
        "update the recipe's packages",
    )


def prune_deb_cache(debs: Path) -> None:
    """Keep only ``*.deb`` in the cache (apt's ``partial/`` and ``lock`` are apt's state, not packages)."""
    import shutil

    for entry in debs.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        elif not entry.name.endswith(".deb"):
            entry.unlink()


def host_architecture(run: proc.Runner = proc.run) -> str:
    done = run(["dpkg", "--print-architecture"], timeout=30)
    if not done.ok:
        raise ToolMissing(
            "cannot tell the Debian architecture of this host (dpkg --print-architecture failed)",
            hint="bootstrapping needs a Debian or Ubuntu host with dpkg and apt",
        )
    return done.stdout.strip()


def installed_packages(status_text: str, arch: str) -> dict[str, str]:
    """name -> version of every package dpkg lists as installed (``name:arch`` for foreign ones)."""
    packages = {}
    for stanza in re.split(r"\n\s*\n", status_text):
        fields = dict(re.findall(r"^([A-Za-z-]+): ?(.*)$", stanza, re.M))
        if fields.get("Status", "").endswith(" installed") and "Package" in fields:
            name = fields["Package"]
            if fields.get("Architecture") not in (None, "all", arch):
                name += ":" + fields["Architecture"]
            packages[name] = fields.get("Version", "")
    return dict(sorted(packages.items()))


# the deterministic archive ---------------------------------------------------------------------
class _HashingWriter:
    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw
        self.hash = hashlib.sha256()
        self.size = 0

    def write(self, data: bytes) -> int:
        self.hash.update(data)
        self.size += len(data)
        return self.raw.write(data)


def _walk(root: Path, rel: str = "") -> Iterator[tuple[str, os.stat_result]]:
    """(relative path, lstat) depth first, names in byte order; /dev is kept empty."""
    with os.scandir(root / rel if rel else root) as it:
        entries = sorted(it, key=lambda e: os.fsencode(e.name))
    for entry in entries:
        path = f"{rel}/{entry.name}" if rel else entry.name
        st = entry.stat(follow_symlinks=False)
        yield path, st
        if stat.S_ISDIR(st.st_mode) and path != "dev":
            yield from _walk(root, path)


def write_layer(rootfs: Path, out: BinaryIO, clamp: int) -> None:
    """The root filesystem as one tar with fixed metadata (see the module docstring)."""
    links: dict[tuple[int, int], str] = {}
    with tarfile.open(fileobj=out, mode="w|", format=tarfile.GNU_FORMAT) as tar:
        for path, st in _walk(rootfs):
            info = tarfile.TarInfo(path)
            info.mode = stat.S_IMODE(st.st_mode)
            info.uid, info.gid, info.uname, info.gname = st.st_uid, st.st_gid, "", ""
            info.mtime = min(int(st.st_mtime), clamp)
            mode = st.st_mode
            if stat.S_ISREG(mode) and st.st_nlink > 1 and (st.st_dev, st.st_ino) in links:
                info.type, info.linkname = tarfile.LNKTYPE, links[(st.st_dev, st.st_ino)]
            elif stat.S_ISREG(mode):
                links.setdefault((st.st_dev, st.st_ino), path)
                info.size = st.st_size
                with open(rootfs / path, "rb") as fh:
                    tar.addfile(info, fh)
                continue
            elif stat.S_ISDIR(mode):
                info.type = tarfile.DIRTYPE
            elif stat.S_ISLNK(mode):
                info.type, info.linkname = tarfile.SYMTYPE, os.readlink(rootfs / path)
            else:  # device nodes, fifos, sockets: the engine provides what a container needs
                continue
            tar.addfile(info)


def _iso(epoch: int) -> str:
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def image_config(recipe: Recipe, arch: str, diff_id: str, packages: dict) -> bytes:
    """The image config JSON, canonical (sorted keys, no spaces): its sha256 is the image ID.
    Labels depend on the content only (no ascenv version, no host name, no build time)."""
    boot = recipe.bootstrap
    assert boot is not None
    labels = {
        MANAGED_LABEL: "true",
        RECIPE_LABEL: recipe.name,
        RECIPE_SHA_LABEL: recipe.sha256,
        "ascenv.source-date-epoch": str(boot.source_date_epoch),
        PACKAGES_LABEL: " ".join(f"{n}={v}" for n, v in sorted(packages.items())),
    }
    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", **recipe.spec.env}
    config = {
        "architecture": _OCI_ARCH.get(arch, arch),
        "os": "linux",
        "created": _iso(boot.source_date_epoch),
        "config": {
            "Env": [f"{k}={v}" for k, v in sorted(env.items())],
            "Cmd": ["/bin/bash"],
            "WorkingDir": recipe.spec.workdir,
            "Labels": labels,
        },
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "history": [
            {
                "created": _iso(boot.source_date_epoch),
                "created_by": f"ascenv image build {recipe.name} (mmdebstrap {boot.suite}/{boot.variant})",
            }
        ],
    }
    return json.dumps(config, sort_keys=True, separators=(",", ":")).encode()


def parse_packages_label(value: str) -> dict[str, str]:
    return dict(item.split("=", 1) for item in value.split() if "=" in item)


def write_image_archive(
    rootfs: Path, archive: Path, recipe: Recipe, arch: str, scratch: Optional[Path] = None
) -> ImageArchive:
    """rootfs -> a ``docker load``-able archive with one layer; returns its IDs and packages.
    The layer is first written to a file in ``scratch`` (default: beside ``archive``)."""
    boot = recipe.bootstrap
    assert boot is not None
    status = rootfs / "var/lib/dpkg/status"
    packages = installed_packages(status.read_text(errors="replace"), arch) if status.is_file() else {}
    layer = (scratch or archive.parent) / (archive.name + ".layer")
    try:
        with open(layer, "wb") as raw:
            writer = _HashingWriter(raw)
            write_layer(rootfs, writer, boot.source_date_epoch)  # type: ignore[arg-type]
        diff_id = "sha256:" + writer.hash.hexdigest()
        config = image_config(recipe, arch, diff_id, packages)
        image_id = "sha256:" + hashlib.sha256(config).hexdigest()
        tag = f"ascenv/{recipe.name}:{image_id[7:19]}"
        layer_name = f"{diff_id[7:]}/layer.tar"
        manifest = json.dumps(
            [{"Config": f"{image_id[7:]}.json", "Layers": [layer_name], "RepoTags": [tag]}], separators=(",", ":")
        ).encode()
        with tarfile.open(archive, "w", format=tarfile.GNU_FORMAT) as tar:
            _add_bytes(tar, f"{image_id[7:]}.json", config, boot.source_date_epoch)
            dir_info = tarfile.TarInfo(diff_id[7:])
            dir_info.type, dir_info.mode, dir_info.mtime = tarfile.DIRTYPE, 0o755, boot.source_date_epoch
            tar.addfile(dir_info)
            layer_info = tarfile.TarInfo(layer_name)
            layer_info.size, layer_info.mode, layer_info.mtime = writer.size, 0o644, boot.source_date_epoch
            with open(layer, "rb") as fh:
                tar.addfile(layer_info, fh)
            _add_bytes(tar, "manifest.json", manifest, boot.source_date_epoch)
    finally:
        if layer.exists():
            layer.unlink()
    return ImageArchive(image_id, diff_id, tag, archive, writer.size, packages)


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes, mtime: int) -> None:
    import io

    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), 0o644, mtime
    tar.addfile(info, io.BytesIO(data))
