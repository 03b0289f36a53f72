"""The bundle shipped to every node: one zip file run by the node's own Python (a zipapp).

A zipapp, not the wheel into a temporary venv on each node: a venv needs the node's ``venv``
and ``ensurepip`` (Debian and Ubuntu split them out of python3) and pip resolving the
dependencies, which without a package index means shipping every wheel anyway; the zipapp is one
file, built once per run on the controller from the ascenv it runs and its pure-Python
dependencies, copied by Ansible's ``script`` action and removed with Ansible's temporary
directory. Python runs a zip with ``__main__.py`` at its top directly
(https://docs.python.org/3/library/zipapp.html)."""

from __future__ import annotations

import importlib.util
import os
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Optional

from ascenv import errors, paths

# What `ascenv snapshot` and `ascenv lock --check` import: ascenv's runtime dependencies without
# the engine SDK (docker, only for images) and psutil (not used by the probe). tomli is needed on
# nodes older than 3.11 and is shipped when the controller has it.
REQUIRED = ("ascenv", "packaging", "rich", "tomli_w")
OPTIONAL = ("tomli", "typing_extensions")
DATA = ("compat", "containers")  # read by the probe (pins) and lock; kernels/ is for builds only
_SKIP_DIRS = {"__pycache__"}


def _source(name: str) -> Optional[Path]:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        return None
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(spec.origin)


def _add_tree(archive: zipfile.ZipFile, top: Path, arcname: str, *, code: bool = True) -> None:
    """``top`` under ``arcname``; ``code``: Python to import on the node, so pure Python only."""
    if top.is_file():
        archive.write(top, arcname)
        return
    for directory, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        for name in sorted(files):
            if code and name.endswith((".so", ".pyd")):
                raise errors.ToolMissing(
                    f"{top.name} is not pure Python ({name}): it cannot be shipped to nodes of another build",
                    hint="install the pure-Python wheel of it on the controller",
                )
            if code and name.endswith((".pyc", ".pyo")):
                continue
            path = Path(directory) / name
            archive.write(path, f"{arcname}/{path.relative_to(top).as_posix()}")


def build_bundle(dest: Path, cluster_lock: Optional[str] = None, payload: Optional[Mapping[str, Path]] = None) -> Path:
    """Write the bundle to ``dest``; ``cluster_lock`` (a lock's text) goes in for the node's check,
    ``payload`` (name in the bundle -> file or folder here) for a rollout's node step."""
    with zipfile.ZipFile(dest, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.write(Path(__file__).with_name("node_main.py"), "__main__.py")
        for name in REQUIRED + OPTIONAL:
            source = _source(name)
            if source is None:
                if name in REQUIRED:
                    raise errors.ToolMissing(f"{name} is not importable on the controller", hint="reinstall ascenv")
                continue
            arcname = f"lib/{name}" + ("" if source.name == name else source.suffix if source.is_file() else "")
            if source.is_file():
                arcname = f"lib/{source.name}"
            _add_tree(archive, source, arcname)
        for name in DATA:
            _add_tree(archive, paths.data_dir(name), f"lib/ascenv/_data/{name}")
        if cluster_lock is not None:
            archive.writestr("cluster.lock", cluster_lock)
        for arcname, source in (payload or {}).items():
            _add_tree(archive, source, arcname, code=False)
    return dest
