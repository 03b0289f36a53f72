"""The layer above torch_npu, read from files only (importing vllm or ATB's Python bindings would
run their code and take seconds): NNAL/ATB and MindIE from their install trees, triton-ascend,
vllm-ascend, vllm and sglang from the distributions the Python probe already read.

Layouts (recorded in the corpus, version_files/*nnal*mindie*): ``<base>/nnal/atb/<version>/`` with
``version.info`` (indented ``Ascend-cann-atb : 8.2.RC1`` / ``Ascend-cann-atb Version :
8.2.RC1.B150``), ``latest -> <version>``, and the two C++ ABI builds ``atb/cxx_abi_0`` and
``atb/cxx_abi_1``, of which ``nnal/atb/set_env.sh`` exports the one that matches torch's
``_GLIBCXX_USE_CXX11_ABI`` as ``ATB_HOME_PATH`` (github:Ascend/cann-container-image Dockerfiles
set ``ATB_HOME_PATH=.../nnal/atb/latest/atb/cxx_abi_0``, 9.x images ``cxx_abi_1``);
``<base>/mindie/latest/version.info`` (``Ascend-mindie : MindIE 2.1.RC1.B152``).
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Optional

from ascenv.model import PythonInfo, StackPart, normalize_name
from ascenv.probe.fs import Root
from ascenv.probe.install_files import parse_colon_fields

# The distributions of the layer, by PEP 503 name (their PyPI names).
PYTHON_PARTS = ("triton-ascend", "vllm-ascend", "vllm", "sglang")
DEFAULT_BASES = ("/usr/local/Ascend",)
_BUILD = re.compile(r"^(.*?)\.(B\d+)$", re.IGNORECASE)  # 8.2.RC1.B150 -> 8.2.RC1, B150


def probe_stack(
    root: Root,
    environ: Mapping[str, str],
    python: PythonInfo,
    home: Optional[str] = None,
    live: Optional[bool] = None,
    sought: Mapping[str, Sequence[str]] = MappingProxyType({}),
) -> tuple[StackPart, ...]:
    """Every part found, NNAL/ATB and MindIE first, then the Python distributions, then the JIT
    front-ends of ``sought`` (import package -> the strings to look for in its sources). ``live``
    (default: the root is this machine's /): a compiler looked for and not found is "not found";
    under ``--root`` the Python judged is this shell's, whose files the root does not hold, so
    an absent compiler is left unjudged (None)."""
    live = root.is_host if live is None else live
    bases = list(DEFAULT_BASES) + ([posixpath.join(home, "Ascend")] if home else [])
    parts: list[StackPart] = []
    for base in dict.fromkeys(bases):
        parts += _atb(root, base, environ.get("ATB_HOME_PATH"))
        parts += _mindie(root, base)
    parts += [_with_compiler(root, environ, p, live) if p.name == "triton-ascend" else p for p in python_parts(python)]
    frontends = (jit_frontend(root, environ, python, name, strings) for name, strings in sought.items())
    return tuple(parts) + tuple(p for p in frontends if p is not None)


# A JIT front-end that is not pip-installed: tilelang-ascend's install script builds it in its
# checkout and exports ``PYTHONPATH=<checkout>:$PYTHONPATH`` (install_npuir.sh), and its version is
# the checkout's VERSION file (tilelang/version.py reads ../VERSION, else tilelang/VERSION). PYTHONPATH
# entries come before site-packages on sys.path, so a tree there is the one imported.
_SOURCES_READ = 4000  # .py files at most: tilelang's package has a few hundred


def jit_frontend(
    root: Root, environ: Mapping[str, str], python: PythonInfo, package: str, strings: Sequence[str]
) -> Optional[StackPart]:
    """The front-end imported as ``package``, with which of ``strings`` its Python sources contain."""
    part: Optional[StackPart] = None
    for entry in environ.get("PYTHONPATH", "").split(":"):
        tree = posixpath.join(entry, package)
        if entry.startswith("/") and root.is_file(posixpath.join(tree, "__init__.py")):
            version_file = next(
                (f for f in (posixpath.join(entry, "VERSION"), posixpath.join(tree, "VERSION")) if root.is_file(f)), ""
            )
            version = ((root.read_text(version_file) or "").strip() or None) if version_file else None
            part = StackPart(package, version, tree, version_file or tree)
            break
    if part is None:
        dist = next((d for d in python.distributions if normalize_name(d.name) == normalize_name(package)), None)
        tree = posixpath.join(dist.location, package) if dist else ""
        if dist is None or not root.is_dir(tree):
            return None
        part = StackPart(package, dist.version, tree, posixpath.join(dist.dist_info, "METADATA"))
    wanted = tuple(dict.fromkeys(strings))
    return dataclasses.replace(part, sought=wanted, found=_strings_in_sources(root, part.path, wanted))


def _strings_in_sources(root: Root, tree: str, strings: tuple[str, ...]) -> tuple[str, ...]:
    found: set[str] = set()
    pending, read = [tree], 0
    while pending and read < _SOURCES_READ and len(found) < len(strings):
        directory = pending.pop()
        for name in sorted(root.listdir(directory)):
            path = posixpath.join(directory, name)
            if name.endswith(".py") and root.is_file(path):
                text, read = root.read_text(path) or "", read + 1
                found.update(s for s in strings if s in text)
            elif not name.startswith(".") and name != "__pycache__" and root.is_dir(path) and not root.is_symlink(path):
                pending.append(path)
    return tuple(s for s in strings if s in found)


# How triton-ascend finds its compiler (github:triton-lang/triton-ascend@13267ceebff5142d856c114e89a4ba41d09ae788:
# third_party/ascend/backend/utils.py _get_npucompiler_path): the bishengir-compile bundled beside
# its backend, else bishengir-compile on PATH, else $TRITON_NPU_COMPILER_PATH/npuc, else an
# EnvironmentError at the first kernel compile. The backend directory of the installed wheel is
# <site>/triton/backends/ascend (triton installs third-party backends under triton/backends/).
NOT_FOUND = "not found"


def _with_compiler(root: Root, environ: Mapping[str, str], part: StackPart, live: bool) -> StackPart:
    site = posixpath.dirname(part.path)
    bundled = posixpath.join(site, "triton", "backends", "ascend", "bishengir", "bin", "bishengir-compile")
    found: tuple[Optional[str], str] = (bundled, "bundled") if root.is_file(bundled) else (None, NOT_FOUND)
    if found[0] is None:
        for entry in environ.get("PATH", "").split(":"):
            candidate = posixpath.join(entry or ".", "bishengir-compile")
            if entry.startswith("/") and root.is_file(candidate):
                found = (candidate, "PATH")
                break
    if found[0] is None and environ.get("TRITON_NPU_COMPILER_PATH"):
        found = (posixpath.join(environ["TRITON_NPU_COMPILER_PATH"], "npuc"), "TRITON_NPU_COMPILER_PATH")
    if found[0] is None and not live:
        return part
    return dataclasses.replace(part, compiler=found[0], compiler_from=found[1])


def python_parts(python: PythonInfo) -> tuple[StackPart, ...]:
    """The framework distributions, the first on sys.path of each name (the one imported)."""
    seen: dict[str, StackPart] = {}
    for dist in python.distributions:
        name = normalize_name(dist.name)
        if name in PYTHON_PARTS and name not in seen:
            info = dist.dist_info
            seen[name] = StackPart(
                name, dist.version, info, posixpath.join(info, "METADATA"), wheel_tags=dist.wheel_tags
            )
    return tuple(seen[n] for n in PYTHON_PARTS if n in seen)


def _atb(root: Root, base: str, atb_home: Optional[str]) -> list[StackPart]:
    atb = posixpath.join(base, "nnal", "atb")
    found = []
    for install in _installs(root, atb):
        source = posixpath.join(install, "version.info")
        text = root.read_text(source)
        fields = parse_colon_fields(text) if text is not None else {}
        version, build = _version_build(fields.get("Ascend-cann-atb"), fields.get("Ascend-cann-atb Version"))
        variants = tuple(v for v in ("cxx_abi_0", "cxx_abi_1") if root.is_dir(posixpath.join(install, "atb", v)))
        selected = _selected(atb_home, atb, install)
        found.append(StackPart("nnal-atb", version, install, source, build, variants, selected))
    return found


def _selected(atb_home: Optional[str], atb: str, install: str) -> Optional[str]:
    """``cxx_abi_N`` when ATB_HOME_PATH points into this install (directly or through latest)."""
    if not atb_home:
        return None
    home = posixpath.normpath(atb_home)
    variant = posixpath.basename(home)
    parent = posixpath.dirname(posixpath.dirname(home))  # <atb>/<version or latest>
    if variant in ("cxx_abi_0", "cxx_abi_1") and parent in (install, posixpath.join(atb, "latest")):
        return variant
    return None


def _mindie(root: Root, base: str) -> list[StackPart]:
    found = []
    for install in _installs(root, posixpath.join(base, "mindie")):
        source = posixpath.join(install, "version.info")
        text = root.read_text(source)
        if text is None:
            continue
        fields = parse_colon_fields(text)
        # "Ascend-mindie : MindIE 2.1.RC1.B152"
        value = re.sub(r"^MindIE\s+", "", fields.get("Ascend-mindie", ""), flags=re.IGNORECASE)
        version, build = _version_build(value or None, value or None)
        found.append(StackPart("mindie", version, install, source, build))
    return found


def _installs(root: Root, parent: str) -> Iterable[str]:
    """The version directories below ``parent`` (``latest`` is a link to one of them, read once;
    an install with only ``latest``, a copied tree, is read through it)."""
    names = sorted(n for n in root.listdir(parent) if root.is_dir(posixpath.join(parent, n)))
    versions = [n for n in names if n != "latest"]
    if not versions and "latest" in names:
        versions = ["latest"]
    return [posixpath.join(parent, n) for n in versions if root.exists(posixpath.join(parent, n, "version.info"))]


def _version_build(release: Optional[str], build: Optional[str]) -> tuple[Optional[str], Optional[str]]:
    """(8.2.RC1, 8.2.RC1.B150) from the release and build fields; either may be missing."""
    release = (release or "").strip() or None
    build = (build or "").strip() or None
    if build and release is None:
        match = _BUILD.match(build)
        release = match.group(1) if match else build
    if release and build == release:
        match = _BUILD.match(release)
        release, build = (match.group(1), release) if match else (release, None)
    return release, build
