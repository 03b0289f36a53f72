"""Every CANN installation on the machine, what each one contains, and which one is active.

Where CANN lives:
* legacy: ``<base>/ascend-toolkit/<ver>`` with ``ascend-toolkit/latest`` → ``<ver>`` (a symlink, or
  a real directory of symlinks ``compiler -> ../8.2.RC2/compiler``), ``ascend-toolkit/set_env.sh``;
  nnae/nnrt the same way (``nnae/latest/ascend_nnae_install.info`` sits at the top, not in
  ``<arch>-linux``);
* CANN 8.5+: ``<base>/cann-<ver>`` with ``<base>/cann`` → it and ``cann/set_env.sh``;
* ``<base>`` is ``/usr/local/Ascend``, ``$HOME/Ascend`` for non-root installs, or the
  ``Install_Path`` of ``/etc/Ascend/ascend_cann_install.info`` (the path torch_npu's env.sh and
  the installers read);
* whatever ``ASCEND_HOME_PATH`` / ``ASCEND_TOOLKIT_HOME`` point at (set_env.sh exports both).

Per install: ``<arch>-linux/ascend_<pkg>_install.info`` (``arm64-linux`` on 7.0.RC1),
``version.cfg``, ``compiler/version.info``, ``opp/version.info``, the compute units with built-in
kernels under ``opp/built-in/op_impl/ai_core/tbe/kernel/<unit>`` (where both the legacy
``Ascend-cann-kernels-<chip>`` and the 8.5+ ``Ascend-cann-<chip>-ops`` packages put
them), and the SoCs it can target: the stems of
``<arch>-linux/data/platform_config/*.ini`` (CANN 8.1.RC1:
github:leideng/CANN-8.1.RC1@551ed27c29284929bbdc2239e929ddfedfdf0b8b:Ascend/ascend-toolkit/8.1.RC1/aarch64-linux/data/platform_config/).
"""

from __future__ import annotations

import collections
import os
import posixpath
from collections.abc import Mapping
from typing import Optional

from ascenv.layout import KERNEL_DIR
from ascenv.model import NOT_SOURCED, CannInfo, CannInstall, Link, ProbeError
from ascenv.probe.fs import Root
from ascenv.probe.install_files import parse_key_values

DEFAULT_BASE = "/usr/local/Ascend"
CANN_INSTALL_INFO = "/etc/Ascend/ascend_cann_install.info"
PACKAGE_DIRS = (("ascend-toolkit", "toolkit"), ("nnae", "nnae"), ("nnrt", "nnrt"))
ACTIVE_VARIABLES = ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME")  # set_env.sh exports both
# The 9.x images also export ASCEND_TOOLKIT_LATEST_HOME
# (github:Ascend/cann-container-image@c5a67b3a747bb8d69c828516d24a25ad5def4bb9 cann/<tag>/Dockerfile).
CANDIDATE_VARIABLES = ACTIVE_VARIABLES + ("ASCEND_TOOLKIT_LATEST_HOME",)
_MARKERS = ("version.cfg", "compiler/version.info", "runtime/version.info", "opp/version.info")
_INFO_PREFERENCE = ("ascend_toolkit_install.info", "ascend_nnae_install.info", "ascend_nnrt_install.info")


def probe_cann(root: Root, environ: Mapping[str, str], home: Optional[str]) -> CannInfo:
    try:
        return _probe(root, environ, home)
    except (OSError, ValueError, RecursionError) as exc:  # an odd tree must not stop the snapshot
        return CannInfo(errors=(ProbeError("cann", "os-error", _without_root(root, f"{type(exc).__name__}: {exc}")),))


def _without_root(root: Root, message: str) -> str:
    """An OSError's text names host paths; the snapshot speaks of the machine's paths."""
    return message if root.is_host else message.replace(str(root.directory), "")


def _probe(root: Root, environ: Mapping[str, str], home: Optional[str]) -> CannInfo:
    finder = _Finder(root)
    install_path = _recorded_install_path(root)
    bases = [DEFAULT_BASE, install_path, posixpath.join(home, "Ascend") if home and home != "/" else None]
    for base in dict.fromkeys(b for b in bases if b):
        finder.scan_base(base)
    for candidate in [install_path] + [environ.get(v) for v in CANDIDATE_VARIABLES]:
        if candidate and candidate.startswith("/"):
            finder.add_if_install(candidate)

    installs, errors = [], list(finder.errors)
    for path in sorted(finder.installs):
        kind, links = finder.installs[path]
        try:
            installs.append(read_install(root, path, kind, tuple(links)))
        except (OSError, ValueError, RecursionError) as exc:
            message = _without_root(root, f"{path}: {type(exc).__name__}: {exc}")
            errors.append(ProbeError("cann", "os-error", message, source=path))
    active, reason = _active(root, environ, installs, finder.farms)
    return CannInfo(
        installs=tuple(installs),
        active=active,
        active_reason=reason,
        links=tuple(finder.links.values()),
        errors=tuple(errors),
    )


def _recorded_install_path(root: Root) -> Optional[str]:
    text = root.read_text(CANN_INSTALL_INFO)
    value = parse_key_values(text).get("Install_Path") if text else None
    return posixpath.normpath(value) if value and value.startswith("/") else None


class _Finder:
    """Collects install directories (deduplicated by resolved path) and the links met on the way."""

    def __init__(self, root: Root) -> None:
        self.root = root
        self.installs: dict[str, tuple[str, list[str]]] = {}  # resolved path -> (kind, links)
        self.links: dict[str, Link] = {}
        self.farms: dict[str, str] = {}  # a ``latest`` directory of symlinks -> the install it leads to
        self.errors: list[ProbeError] = []  # directories that exist but cannot be read

    def readable(self, path: str) -> bool:
        """False (and a "permission" error recorded once) for a directory that exists but cannot
        be listed: a root-only install (mode 750) read by a user is not "no CANN installed"."""
        reason = self.root.unreadable(path, directory=True)
        if reason is None:
            return True
        if not any(e.source == path for e in self.errors):
            kind = "permission" if reason == "permission denied" else "not-a-file"
            message = f"{path} exists but cannot be read as uid {os.geteuid()} ({reason})"
            self.errors.append(ProbeError("cann", kind, message, source=path))
        return False

    def scan_base(self, base: str) -> None:
        root = self.root
        for dirname, kind in PACKAGE_DIRS:
            package_dir = posixpath.join(base, dirname)
            if not self.readable(package_dir):
                continue
            for name in root.listdir(package_dir):
                path = posixpath.join(package_dir, name)
                if root.is_symlink(path):
                    self.follow_link(path, kind)
                elif name == "latest" and root.is_dir(path):
                    self.link_farm(path, kind)
                else:
                    self.add_if_install(path, kind)
        for name in root.listdir(base):
            if name == "cann" or name.startswith("cann-"):
                path = posixpath.join(base, name)
                if root.is_symlink(path):
                    self.follow_link(path, "cann")
                else:
                    self.add_if_install(path, "cann")

    def follow_link(self, path: str, kind: str) -> None:
        resolved = self.root.resolve(path)
        self.links[path] = Link(
            path=path, target=self.root.readlink(path) or "", resolved=resolved, dangling=resolved is None
        )
        if resolved is not None:
            self.add_if_install(resolved, kind, via=path)

    def link_farm(self, path: str, kind: str) -> None:
        """``latest`` as a real directory of symlinks into a version directory (MindIE images:
        ``compiler -> ../8.2.RC2/compiler``): the install is the directory most links lead into."""
        parent = posixpath.dirname(path)
        votes: collections.Counter[str] = collections.Counter()
        for name in self.root.listdir(path):
            child = posixpath.join(path, name)
            if not self.root.is_symlink(child):
                continue
            resolved = self.root.resolve(child)
            if resolved is None:
                target = self.root.readlink(child) or ""
                self.links[child] = Link(path=child, target=target, resolved=None, dangling=True)
            elif resolved.startswith(parent + "/") and not resolved.startswith(path + "/"):
                votes[posixpath.join(parent, resolved[len(parent) + 1 :].split("/")[0])] += 1
        for target, _ in votes.most_common(1):
            if self.add_if_install(target, kind, via=path):
                self.farms[path] = self.root.resolve(target) or target
                return
        self.add_if_install(path, kind)

    def add_if_install(self, path: str, kind: Optional[str] = None, via: Optional[str] = None) -> bool:
        try:
            resolved = self.root.resolve(path)
        except PermissionError:  # a directory on the way cannot be searched
            self.readable(path)
            return False
        if resolved in self.farms:
            return True
        if resolved is None or not self.root.is_dir(resolved):
            return False
        if not self.readable(resolved) or not looks_like_install(self.root, resolved):
            return False
        entry = self.installs.setdefault(resolved, (_kind(self.root, resolved, kind), []))
        if via and via not in entry[1]:
            entry[1].append(via)
        return True


def looks_like_install(root: Root, path: str) -> bool:
    return bool(info_files(root, path)) or any(root.is_file(posixpath.join(path, m)) for m in _MARKERS)


def info_files(root: Root, path: str) -> list[str]:
    """``ascend_*_install.info`` in ``<arch>-linux/`` (and at the top, as nnae has it), one per
    real file (``arm64-linux -> aarch64-linux`` is the same file)."""
    found: dict[str, str] = {}
    for directory in [*root.glob(path, "*-linux"), path]:
        for file in root.glob(directory, "ascend_*_install.info"):
            real = root.resolve(file)
            if real and root.is_file(real):
                found.setdefault(real, file)
    return list(found.values())


def _kind(root: Root, path: str, hint: Optional[str]) -> str:
    name, parent = posixpath.basename(path), posixpath.basename(posixpath.dirname(path))
    if name.startswith("cann"):
        return "cann"
    for dirname, kind in PACKAGE_DIRS:
        if parent == dirname:
            return kind
    if hint:
        return hint
    for file in info_files(root, path):
        package = posixpath.basename(file)[len("ascend_") : -len("_install.info")]
        if package in ("toolkit", "nnae", "nnrt"):
            return package
    return "toolkit"


def read_install(root: Root, path: str, kind: str, links: tuple[str, ...] = ()) -> CannInstall:
    infos = info_files(root, path)
    info_file = _primary_info(infos)
    info = parse_key_values(root.read_text(info_file) or "") if info_file else {}
    compiler = _key_values(root, posixpath.join(path, "compiler", "version.info"))
    opp = _key_values(root, posixpath.join(path, "opp", "version.info"))
    kernel_dir = posixpath.join(path, KERNEL_DIR)
    kernels = tuple(n for n in root.listdir(kernel_dir) if n != "config" and root.is_dir(posixpath.join(kernel_dir, n)))
    return CannInstall(
        path=path,
        kind=kind,
        version=info.get("version"),
        innerversion=info.get("innerversion"),
        arch=info.get("arch"),
        info_file=info_file,
        info=info,
        version_cfg=_key_values(root, posixpath.join(path, "version.cfg")),
        compiler_version=compiler.get("Version"),
        required_opp_abi_version=compiler.get("required_opp_abi_version"),
        opp_version=opp.get("Version"),
        kernels=kernels,
        socs=_socs(root, path),
        set_env=_set_env(root, path, links),
        links=links,
    )


def _primary_info(files: list[str]) -> Optional[str]:
    """The package's own install.info, not an 8.5+ ``ascend_ops_install.info`` beside it."""
    for wanted in _INFO_PREFERENCE:
        for file in files:
            if posixpath.basename(file) == wanted:
                return file
    others = [f for f in files if "ops" not in posixpath.basename(f)]
    return (others or files)[0] if files else None


def _key_values(root: Root, path: str) -> dict[str, str]:
    text = root.read_text(path)
    return parse_key_values(text) if text is not None else {}


def _socs(root: Root, path: str) -> tuple[str, ...]:
    socs = set()
    for arch_dir in root.glob(path, "*-linux"):
        for ini in root.glob(posixpath.join(arch_dir, "data", "platform_config"), "*.ini"):
            socs.add(posixpath.basename(ini)[: -len(".ini")])
    return tuple(sorted(socs))


def _set_env(root: Root, path: str, links: tuple[str, ...]) -> Optional[str]:
    """The install's own set_env.sh, else the package directory's one when it activates this
    install through ``latest`` (``ascend-toolkit/set_env.sh`` sets ASCEND_TOOLKIT_HOME=.../latest)."""
    own = posixpath.join(path, "set_env.sh")
    if root.is_file(own):
        return own
    for link in links:
        shared = posixpath.join(posixpath.dirname(link), "set_env.sh")
        if posixpath.basename(link) == "latest" and root.is_file(shared):
            return shared
    return None


def _active(
    root: Root, environ: Mapping[str, str], installs: list[CannInstall], farms: dict[str, str]
) -> tuple[Optional[str], str]:
    for variable in ACTIVE_VARIABLES:
        value = environ.get(variable)
        if not value:
            continue
        resolved = root.resolve(value) if value.startswith("/") else None
        resolved = farms.get(resolved or "", resolved)
        for install in installs:
            if resolved == install.path or (resolved or "").startswith(install.path + "/"):
                return install.path, variable
        return None, f"{variable}={value} does not lead to a CANN installation"
    return None, NOT_SOURCED
