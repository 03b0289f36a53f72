"""Every place Ascend writes compile caches and debris, resolved from an environment mapping,
the home directory and the working directory, with CANN's documented precedence. Pure.

Sources (see shared research operator-build-and-caches.md §4):
- compile disk cache: ATC ``--op_compiler_cache_dir`` / env ``ACL_OP_COMPILER_CACHE_DIR``
  (torch_npu) > ``$ASCEND_CACHE_PATH`` > ``$HOME/atc_data``; kernels in ``kernel_cache/<soc>``
  and ``fuzzy_kernel_cache/<soc>`` below it.
  https://www.hiascend.com/document/detail/zh/CANNCommunityEdition/latest/devaids/atctool/atlasatcparam_16_0084.html
  https://www.hiascend.com/document/detail/zh/canncommercial/900/maintenref/envvar/envref_07_0006.html
  https://hiascend.com/document/detail/zh/Pytorch/600/apiref/Envvariables/Envir_008.html
- ``$ASCEND_WORK_PATH`` moves kernel_meta, FE/<pid>/fusion_result.json, log, atrace,
  profiling_data, extra-info/data-dump, printf and <pid>_<dev> graph dumps away from the cwd:
  https://www.hiascend.com/document/detail/zh/canncommercial/850/maintenref/envvar/envref_07_0007.html
- plog: ``ASCEND_PROCESS_LOG_PATH`` > ``$ASCEND_WORK_PATH/log`` > ``$HOME/ascend/log``:
  https://www.hiascend.com/document/detail/zh/canncommercial/900/maintenref/envvar/envref_07_0120.html
- AOE banks (never cleaned): ``TUNE_BANK_PATH`` > ``$ASCEND_CACHE_PATH/aoe_data`` >
  ``$HOME/Ascend/latest/data/aoe/custom``:
  https://www.hiascend.com/document/detail/zh/canncommercial/900/maintenref/envvar/envref_07_0104.html
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping, Sequence
from typing import Callable, Optional

from ascenv.cache.entry import CacheRoot

# Directories whose children must never be taken for cache entries, whatever a variable says.
_SYSTEM_DIRS = (
    "/",
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/home",
    "/lib",
    "/lib64",
    "/opt",
    "/proc",
    "/root",
    "/sbin",
    "/sys",
    "/tmp",
    "/usr",
    "/usr/local",
    "/var",
    "/usr/local/Ascend",
)


def absolute(path: str, cwd: str) -> str:
    return posixpath.normpath(posixpath.join(cwd, path))


def is_within(path: str, parent: str) -> bool:
    """``path`` is ``parent`` or lies below it (both normalised, absolute)."""
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def resolve_roots(
    environ: Mapping[str, str],
    *,
    home: str,
    cwd: str,
    search_paths: Sequence[str] = (),
    discovered: Sequence[tuple[str, str]] = (),
    protected_paths: Iterable[str] = (),
    realpath: Callable[[str], str] = lambda path: path,
) -> tuple[CacheRoot, ...]:
    """Every cache root, active ones first per kind; roots that may not be cleaned carry
    ``refused``. ``search_paths`` (``--path DIR``) become ``search`` roots: the scanner looks
    for kernel_meta/ and aoe_workspace/ below them and its finds come back as ``discovered``
    (kind, path) pairs. ``protected_paths``: CANN installs and vendor directories. Paths need
    not exist."""

    def env(name: str) -> Optional[str]:
        value = environ.get(name, "").strip()
        return absolute(value, cwd) if value else None

    roots: list[CacheRoot] = []
    work = env("ASCEND_WORK_PATH")
    cache = env("ASCEND_CACHE_PATH")

    def chain(
        kind: str, candidates: list[tuple[Optional[str], str]], layout: str, pattern: Optional[str] = None
    ) -> None:
        """The first set candidate is active; the others are older places still worth listing."""
        first = True
        for path, source in candidates:
            if path is None:
                continue
            roots.append(CacheRoot(kind, path, source, layout, active=first, pattern=pattern))
            first = False

    # compile disk cache: the cache dir holds kernel_cache/<soc> and fuzzy_kernel_cache/<soc>
    cache_dirs = [
        (env("ACL_OP_COMPILER_CACHE_DIR"), "ACL_OP_COMPILER_CACHE_DIR"),
        (cache, "ASCEND_CACHE_PATH"),
        (posixpath.join(home, "atc_data"), "default $HOME/atc_data"),
    ]
    for kind, sub in (("kernel-cache", "kernel_cache"), ("fuzzy-kernel-cache", "fuzzy_kernel_cache")):
        chain(kind, [(d and posixpath.join(d, sub), s) for d, s in cache_dirs], "soc")
    # old torch_npu forced $CWD/cache as compile cache dir; not listed: the name is too common.

    chain(
        "kernel-meta",
        [
            (work and posixpath.join(work, "kernel_meta"), "ASCEND_WORK_PATH"),
            (posixpath.join(cwd, "kernel_meta"), "working directory"),
        ],
        "self",
    )
    for base, source in ((work, "ASCEND_WORK_PATH"), (cwd, "working directory")):
        if base:
            roots.append(CacheRoot("fusion-result", posixpath.join(base, "FE"), source, "children", pattern=r"\d+"))
    roots.append(CacheRoot("fusion-result", posixpath.join(cwd, "fusion_result.json"), "working directory", "self"))
    chain(
        "log",
        [
            (env("ASCEND_PROCESS_LOG_PATH"), "ASCEND_PROCESS_LOG_PATH"),
            (work and posixpath.join(work, "log"), "ASCEND_WORK_PATH"),
            (posixpath.join(home, "ascend", "log"), "default $HOME/ascend/log"),
        ],
        "children",
    )
    chain(
        "atrace",
        [
            (work and posixpath.join(work, "atrace"), "ASCEND_WORK_PATH"),
            (posixpath.join(home, "ascend", "atrace"), "default $HOME/ascend/atrace"),
        ],
        "children",
    )
    chain(
        "dump",
        [
            (env("NPU_COLLECT_PATH"), "NPU_COLLECT_PATH"),
            (work and posixpath.join(work, "extra-info", "data-dump"), "ASCEND_WORK_PATH"),
        ],
        "children",
    )
    chain(
        "dump",
        [(env("ASCEND_DUMP_PATH"), "ASCEND_DUMP_PATH"), (work and posixpath.join(work, "printf"), "ASCEND_WORK_PATH")],
        "children",
    )
    chain("dump", [(env("DUMP_GRAPH_PATH"), "DUMP_GRAPH_PATH")], "children")
    if work:  # graph dumps default to $ASCEND_WORK_PATH/<pid>_<device>
        roots.append(CacheRoot("dump", work, "ASCEND_WORK_PATH", "children", pattern=r"\d+_\d+"))
        roots.append(CacheRoot("profiling", posixpath.join(work, "profiling_data"), "ASCEND_WORK_PATH", "children"))
        roots.append(CacheRoot("aoe-workspace", posixpath.join(work, "aoe_data"), "ASCEND_WORK_PATH", "self"))
    roots.append(CacheRoot("aoe-workspace", posixpath.join(cwd, "aoe_workspace"), "working directory", "self"))
    chain(
        "aoe-bank",
        [
            (env("TUNE_BANK_PATH"), "TUNE_BANK_PATH"),
            (cache and posixpath.join(cache, "aoe_data"), "ASCEND_CACHE_PATH"),
            (
                posixpath.join(home, "Ascend", "latest", "data", "aoe", "custom"),
                "default $HOME/Ascend/latest/data/aoe/custom",
            ),
        ],
        "self",
    )
    roots.append(
        CacheRoot(
            "ascenv-store",
            ascenv_cache_dir(environ, home=home, cwd=cwd),
            "ascenv cache directory",
            "children",
            require_tag=True,
        )
    )
    for path in search_paths:
        roots.append(CacheRoot("search", absolute(path, cwd), "--path", "search"))
    for kind, path in discovered:
        roots.append(CacheRoot(kind, absolute(path, cwd), "found below --path", "self"))

    banks = [r.path for r in roots if r.kind == "aoe-bank"]
    guarded = [absolute(p, cwd) for p in [*protected_paths, *custom_opp_paths(environ)]]
    guarded += [p for p in (env(n) for n in _INSTALL_VARS) if p]
    settled = [_settle(r, realpath) for r in roots]
    return tuple(_guard(r, home=home, cwd=cwd, banks=banks, installs=guarded) for r in _dedupe(settled))


def _settle(root: CacheRoot, realpath: Callable[[str], str]) -> CacheRoot:
    from dataclasses import replace

    if root.layout == "self":
        head, tail = posixpath.split(root.path)
        return replace(root, path=posixpath.join(realpath(head), tail))
    return replace(root, path=realpath(root.path))


# Variables that point into a CANN install or at installed vendors: never cleaned below them.
_INSTALL_VARS = ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH", "ASCEND_AICPU_PATH", "TOOLCHAIN_HOME")


def custom_opp_paths(environ: Mapping[str, str]) -> list[str]:
    """``ASCEND_CUSTOM_OPP_PATH`` entries (installed vendors): colon separated, empty skipped."""
    return [p for p in environ.get("ASCEND_CUSTOM_OPP_PATH", "").split(":") if p.strip()]


def ascenv_cache_dir(environ: Mapping[str, str], *, home: str, cwd: str) -> str:
    """``ASCENV_CACHE_DIR`` > ``$XDG_CACHE_HOME/ascenv`` > ``~/.cache/ascenv``."""
    if environ.get("ASCENV_CACHE_DIR"):
        return absolute(environ["ASCENV_CACHE_DIR"], cwd)
    if environ.get("XDG_CACHE_HOME"):
        return absolute(posixpath.join(environ["XDG_CACHE_HOME"], "ascenv"), cwd)
    return posixpath.join(home, ".cache", "ascenv")


def ascenv_state_dir(environ: Mapping[str, str], *, home: str, cwd: str) -> str:
    """Where the clean-cache journal lives: ``$XDG_STATE_HOME/ascenv`` > ``~/.local/state/ascenv``."""
    if environ.get("XDG_STATE_HOME"):
        return absolute(posixpath.join(environ["XDG_STATE_HOME"], "ascenv"), cwd)
    return posixpath.join(home, ".local", "state", "ascenv")


def _dedupe(roots: list[CacheRoot]) -> list[CacheRoot]:
    seen: set[tuple[str, str, Optional[str]]] = set()
    result = []
    for root in roots:
        key = (root.kind, root.path, root.pattern)
        if key not in seen:
            seen.add(key)
            result.append(root)
    return result


def _guard(root: CacheRoot, *, home: str, cwd: str, banks: list[str], installs: list[str]) -> CacheRoot:
    """Refuse roots a variable set to something that is not a cache: home, /, a CANN install,
    an AOE bank (user results)."""
    from dataclasses import replace

    if root.kind in ("aoe-bank", "search"):
        return root
    reason = None
    if (
        root.layout != "self"
        and root.pattern is None
        and (root.path in _SYSTEM_DIRS or is_within(home, root.path) or is_within(cwd, root.path))
    ):
        reason = f"{root.path} is the home, working or a system directory; its contents are not a cache"
    elif root.layout == "self" and (root.path in _SYSTEM_DIRS or is_within(home, root.path)):
        reason = f"{root.path} is the home or a system directory"
    for bank in banks:
        if reason is None and (is_within(root.path, bank) or is_within(bank, root.path)):
            reason = f"overlaps the AOE tuning bank {bank} (user results)"
    for install in installs:
        if reason is None and (is_within(root.path, install) or is_within(install, root.path)):
            reason = f"overlaps the CANN install or vendor directory {install}"
    return replace(root, refused=reason) if reason else root
