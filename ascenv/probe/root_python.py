"""The Python environments of an image, read from its files (``--root DIR`` without ``--python``).

Nothing under a root is executed, so the image's interpreter cannot be asked for its ``sys.path``;
its environments are found where they live instead, and each one's site directories are read as
``site`` would list them (https://docs.python.org/3/library/site.html), with ``_target.py``'s
reading of ``*.dist-info``/``*.egg-info`` (through ``fs.Root``: a link in the image never reads
the host's files). Where to look, in this order:

1. prefixes the recorded environment names: ``VIRTUAL_ENV``, ``CONDA_PREFIX``, the ``bin``
   directories of ``PATH`` (looked up under the root; a name the image lacks finds nothing);
2. prefixes found under the root: CANN's container images build Python into
   ``/usr/local/python3.X.Y`` (vllm-ascend's images: ``/usr/local/python3.11.13/lib/python3.11/
   site-packages``, in the corpus's collect_env captures), conda installs and their ``envs/*``
   (``/opt/conda``, ``~/miniconda3``, ``~/.conda/envs``), and virtual environments (a
   ``pyvenv.cfg``, PEP 405) one level under ``/``, ``/opt``, ``/root``, ``/home/*``, ``/workspace``,
   ``/app``, ``/srv``;
3. the system's Python: ``/usr/local/lib/python3.X`` and ``/usr/lib/python3.X`` (``site-packages``,
   Debian's ``dist-packages``, ``/usr/lib/python3/dist-packages``, the ``lib64`` of Red Hat).

The user site (``~/.local/lib/python3.X``) is not read: whose home it would be is unknown.

The environment judged is the first that has torch_npu, else torch, else any distribution.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Optional

from ascenv import elf
from ascenv.model import Distribution, ProbeError, PythonInfo, normalize_name
from ascenv.probe import _target
from ascenv.probe.fs import Root

_CONDA = ("miniconda3", "anaconda3", "miniforge3", "mambaforge", "conda", ".conda")
_VENV_PARENTS = ("/", "/opt", "/root", "/workspace", "/app", "/srv")
_SITES = ("site-packages", "dist-packages")
_VERSION = re.compile(r"python(3\.\d+)$")
_DEBIAN = "/usr/lib/python3/dist-packages"


@dataclass(frozen=True)
class Environment:
    prefix: str  # machine path
    version: Optional[str]  # "3.11", from lib/python3.11
    sites: tuple[str, ...]  # machine paths, in sys.path order
    executable: Optional[str]  # its interpreter, when the image has it


def probe_root_python(root: Root, environ: Mapping[str, str]) -> PythonInfo:
    """The environment of the root to judge, read from its files. ``PYTHONPATH`` entries (CANN's
    set_env.sh adds its python/site-packages) come first in each, as in ``sys.path``."""
    extra = [p for p in environ.get("PYTHONPATH", "").split(":") if p.startswith("/") and root.is_dir(p)]
    read = [(env, _distributions(root, [*extra, *env.sites])) for env in environments(root, environ)]

    def has(dists: Sequence[Distribution], name: str) -> bool:
        return any(normalize_name(d.name) == name for d in dists)

    chosen = (
        next((e for e in read if has(e[1], "torch-npu")), None)
        or next((e for e in read if has(e[1], "torch")), None)
        or next((e for e in read if e[1]), None)
    )
    if chosen is None:
        where = ", ".join(env.prefix for env, _ in read) or "no Python environment"
        message = (
            f"no installed distributions under the root (looked in: {where}); "
            "pass --python PATH to run an interpreter instead"
        )
        return PythonInfo(from_files=True, errors=(ProbeError("python", "not-found", message, "files"),))
    env, dists = chosen
    return PythonInfo(
        executable=env.executable or posixpath.join(env.prefix, "bin", f"python{env.version or '3'}"),
        version=env.version,
        platform=_platform(root, env.executable),
        distributions=tuple(dists),
        from_files=True,
    )


def environments(root: Root, environ: Mapping[str, str]) -> list[Environment]:
    """Every environment found, named ones first, each prefix once (links resolved inside the root)."""
    out: list[Environment] = []
    seen: set[str] = set()
    for prefix in _prefixes(root, environ):
        real = root.resolve(prefix)
        if real is None or real in seen:
            continue
        seen.add(real)
        out += _environments_of(root, real)  # one name for each: /usr/local/python3 is a link to python3.11.13
    return out + _system(root)


def _system(root: Root) -> list[Environment]:
    """The system's Python, one environment per version: Debian's python3.X reads
    /usr/local/lib/python3.X/dist-packages, /usr/lib/python3/dist-packages, /usr/lib/python3.X/dist-packages."""
    local, usr = _sites(root, "/usr/local"), _sites(root, "/usr")
    debian = [_DEBIAN] if root.is_dir(_DEBIAN) else []
    out = []
    for version in sorted({v for v, _ in local + usr}, key=_version_key, reverse=True):
        sites = [s for v, s in local if v == version] + debian + [s for v, s in usr if v == version]
        executable = _interpreter(root, ("/usr/local", "/usr"), version)
        prefix = posixpath.dirname(posixpath.dirname(executable)) if executable else "/usr"
        out.append(Environment(prefix, version, tuple(sites), executable))
    return out


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


def _prefixes(root: Root, environ: Mapping[str, str]) -> Iterator[str]:
    for name in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        if environ.get(name, "").startswith("/"):
            yield environ[name]
    for entry in environ.get("PATH", "").split(":"):
        if entry.startswith("/") and posixpath.basename(posixpath.normpath(entry)) == "bin":
            prefix = posixpath.dirname(posixpath.normpath(entry))
            if prefix not in ("/usr", "/usr/local", "/"):  # the system's Python is looked at last
                yield prefix
    yield from root.glob("/usr/local", "python3*")
    homes = ["/root", *root.glob("/home", "*")]
    for base in ["/opt", "/usr/local", *homes]:
        for name in _CONDA:
            conda = posixpath.join(base, name)
            if root.is_dir(conda):
                yield conda
                yield from root.glob(posixpath.join(conda, "envs"), "*")
    for parent in [*_VENV_PARENTS, *homes]:
        for child in root.listdir(parent):
            candidate = posixpath.join(parent, child)
            if root.is_file(posixpath.join(candidate, "pyvenv.cfg")):
                yield candidate


def _environments_of(root: Root, prefix: str) -> list[Environment]:
    base = _venv_base(root, prefix)
    out = []
    for version in dict.fromkeys(v for v, _ in _sites(root, prefix)):
        sites = [s for v, s in _sites(root, prefix) if v == version]
        if base is not None:  # include-system-site-packages: the base's sites follow the venv's
            sites += [s for v, s in _sites(root, base) if v == version]
        out.append(Environment(prefix, version, tuple(sites), _interpreter(root, (prefix,), version)))
    return out


def _venv_base(root: Root, prefix: str) -> Optional[str]:
    """The base prefix whose sites a venv also reads (``include-system-site-packages = true``, PEP 405)."""
    text = root.read_text(posixpath.join(prefix, "pyvenv.cfg"), limit=1 << 16)
    if not text:
        return None
    keys = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            keys[key.strip().lower()] = value.strip()
    home = keys.get("home", "")
    if keys.get("include-system-site-packages", "").lower() != "true" or not home.startswith("/"):
        return None
    return posixpath.dirname(posixpath.normpath(home))  # home is the base's bin directory


def _sites(root: Root, prefix: str) -> list[tuple[str, str]]:
    out = []
    for lib in ("lib", "lib64"):
        for directory in root.glob(posixpath.join(prefix, lib), "python3*"):
            found = _VERSION.search(directory)
            for name in _SITES:
                site = posixpath.join(directory, name)
                if found and root.is_dir(site):
                    out.append((found.group(1), site))
    return out


def _interpreter(root: Root, prefixes: Sequence[str], version: Optional[str]) -> Optional[str]:
    names = ([f"python{version}"] if version else []) + ["python3"]
    for prefix in prefixes:
        for name in names:
            path = posixpath.join(prefix, "bin", name)
            if root.is_file(path):
                return path
    return None


def _platform(root: Root, executable: Optional[str]) -> Optional[str]:
    """``sysconfig.get_platform()`` of the interpreter, from its ELF header."""
    machine = elf.machine(root.read_bytes(executable, elf.HEAD)) if executable else None
    return f"linux-{machine}" if machine in ("x86_64", "aarch64") else None


def _distributions(root: Root, sites: Sequence[str]) -> list[Distribution]:
    out = []
    for site in sites:
        for entry in root.listdir(site):
            if not entry.endswith((".dist-info", ".egg-info")):
                continue
            record = _target.distribution(site, entry, read=root.read_bytes, is_dir=root.is_dir)
            if record is not None:
                out.append(
                    Distribution(
                        name=record["name"],
                        version=record["version"],
                        location=site,
                        installer=record["installer"],
                        wheel_tags=tuple(record["wheel_tags"]),
                        record_hash=record["record_hash"],
                    )
                )
    return out
