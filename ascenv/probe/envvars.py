"""The environment being judged: the Ascend variables and the search-path variables, entry by entry.

Pure over its inputs (``environ`` is passed in, files are seen through ``Root``).
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from typing import Optional

from ascenv.model import EnvInfo, PathEntry
from ascenv.probe.fs import Root
from ascenv.redact import is_secret_name, mask

# Prefixes of the variables CANN, its tools and the frameworks on top read:
# - ASCEND_: every CANN variable (set_env.sh: ASCEND_TOOLKIT_HOME, ASCEND_HOME_PATH, ASCEND_OPP_PATH,
#   ASCEND_AICPU_PATH; ASCEND_CUSTOM_OPP_PATH
#   https://www.hiascend.com/document/detail/zh/canncommercial/900/maintenref/envvar/envref_07_0147.html;
#   ASCEND_CACHE_PATH .../envref_07_0006.html; ASCEND_WORK_PATH
#   https://www.hiascend.com/document/detail/zh/canncommercial/850/maintenref/envvar/envref_07_0007.html;
#   ASCEND_PROCESS_LOG_PATH .../900/maintenref/envvar/envref_07_0120.html; ASCEND_RT_VISIBLE_DEVICES;
#   ASCEND_VISIBLE_DEVICES/ASCEND_RUNTIME_OPTIONS of github:Ascend/ascend-docker-runtime@c451124d runtime/main.go).
# - ASCENDC_: Ascend C project builds (ASCENDC_BUILD_LOG_DIR, ASCENDC_CCACHE_EXECUTABLE; CANN 8.5 doc
#   https://www.hiascend.com/document/detail/zh/CANNCommunityEdition/850/opdevg/Ascendcopdevg/atlas_ascendc_10_0068.html).
# - ACL_: ACL_OP_COMPILER_CACHE_MODE / ACL_OP_COMPILER_CACHE_DIR (torch_npu,
#   https://hiascend.com/document/detail/zh/Pytorch/600/apiref/Envvariables/Envir_008.html), ACL_DEBUG_DIR.
# - ATB_: the nnal/ATB set_env.sh (ATB_HOME_PATH; github:Ascend/cann-container-image@c5a67b3a Dockerfiles),
#   also collected by vllm-ascend's collect_env.py@21cd4ddb.
_PREFIXES = ("ASCEND_", "ASCENDC_", "ACL_", "ATB_")
_NAMES = frozenset(
    {
        "TOOLCHAIN_HOME",  # set_env.sh (corpus version_files/set_env.sh_8.0.0_*)
        "NPU_COLLECT_PATH",  # exception dumps, also searched by asys for kernels (ASCEND_WORK_PATH doc)
        "DUMP_GRAPH_PATH",  # graph dumps (ASCEND_WORK_PATH doc)
        "TUNE_BANK_PATH",  # AOE knowledge banks, .../900/maintenref/envvar/envref_07_0104.html
        "TORCH_DEVICE_BACKEND_AUTOLOAD",  # torch >= 2.5 imports torch_npu on `import torch` unless 0
        "MS_COMPILER_CACHE_PATH",  # MindSpore's kernel_meta/graph_cache location
        "MS_DEV_CLOSE_VERSION_CHECK",  # MindSpore skips its CANN version check
    }
)
PATH_VARIABLES = ("PATH", "LD_LIBRARY_PATH", "PYTHONPATH", "ASCEND_CUSTOM_OPP_PATH")


def probe_env(environ: Mapping[str, str], root: Root, cann_paths: Sequence[str]) -> EnvInfo:
    """``cann_paths``: the CANN install directories found on the machine (CannInstall.path)."""
    variables = {name: redact(environ[name]) for name in sorted(environ) if is_ascend_variable(name)}
    installs = [(path, root.resolve(path) or posixpath.normpath(path)) for path in cann_paths]
    paths = {name: path_entries(environ[name], root, installs) for name in PATH_VARIABLES if name in environ}
    return EnvInfo(variables=variables, paths=paths)


def is_ascend_variable(name: str) -> bool:
    if not (name.startswith(_PREFIXES) or name in _NAMES):
        return False
    return not is_secret_name(name)  # a variable that may hold a credential is never recorded


def redact(value: str) -> str:
    """``value`` with its secrets masked (``user:password@`` of a mirror URL, a pasted token)."""
    return mask(value)


def path_entries(value: str, root: Root, installs: Sequence[tuple[str, str]]) -> tuple[PathEntry, ...]:
    """Every ``:``-separated entry, empty ones included: an empty entry is the current directory
    for ld.so and PATH, and a trailing ``:`` in ASCEND_CUSTOM_OPP_PATH is what a vendor's
    set_env.bash leaves behind. An empty variable has no entries (ld.so ignores it)."""
    if value == "":
        return ()
    entries = []
    seen: set[str] = set()
    for raw in value.split(":"):
        absolute = raw.startswith("/")
        resolved = _resolve_prefix(root, raw) if absolute else None
        key = resolved or raw  # two spellings of one directory (latest/lib64, 8.0.0/lib64) are one entry
        entries.append(
            PathEntry(
                value=raw,
                exists=root.exists(raw) if absolute else None,  # relative: depends on the cwd
                duplicate=key in seen,
                cann_path=_install_of(resolved, installs) if resolved else None,
            )
        )
        seen.add(key)
    return tuple(entries)


def _resolve_prefix(root: Root, path: str) -> str:
    """``path`` with symlinks resolved in its longest existing prefix: set_env.sh adds directories
    that a given install may not have (``tools/aml/lib64``), and they still point into it."""
    head, rest = posixpath.normpath(path), ""
    while True:
        resolved = root.resolve(head)
        if resolved is not None:
            return posixpath.normpath(posixpath.join(resolved, rest)) if rest else resolved
        if head == "/":
            return posixpath.normpath(path)
        head, tail = posixpath.split(head)
        rest = posixpath.join(tail, rest) if rest else tail


def _install_of(resolved: str, installs: Sequence[tuple[str, str]]) -> Optional[str]:
    best: Optional[tuple[str, str]] = None
    for path, real in installs:
        if resolved == real or resolved.startswith(real.rstrip("/") + "/"):
            if best is None or len(real) > len(best[1]):
                best = (path, real)
    return best[0] if best else None
