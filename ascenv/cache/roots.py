"""Every place Ascend writes compile caches and debris, resolved from an environment mapping,
the home directory and the working directory, with CANN's documented precedence. Pure.

Sources:
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

# Trees that hold the system, at any depth: no root below them is ever cleaned, whatever a
# variable says (the Filesystem Hierarchy Standard's static and variable trees:
# https://refspecs.linuxfoundation.org/FHS_3.0/fhs/index.html).
SYSTEM_TREES = (
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/opt",
    "/proc",
    "/run",
    "/sbin",
    "/snap",
    "/srv",
    "/sys",
    "/usr",
    "/var",
)
# Directories that hold other people's or everyone's data: never a cache themselves.
_SHARED_TOPS = ("/", "/home", "/media", "/mnt", "/root", "/tmp")

# What CANN names the entries of each layout; anything else below a root is not a cache entry.
SOC_NAME = r"[Aa]scend\d\w*"  # kernel_cache/Ascend910B4, fuzzy_kernel_cache/Ascend310P3, ...
# plog: debug/plog, run/plog, security, device-<id> (older CANN: plog/, device-app-<pid>/)
LOG_NAMES = r"debug|run|security|plog|event|device-\d+|device-app-\d+|device-os-\d+"
# graph dumps ge_*.txt/.pbtxt, op dumps {op_type}.{op_name}.{task_id}.{stream_id}.{timestamp}, and
# the extra-info tree of exception dumps:
# https://www.hiascend.com/document/detail/en/mindstudio/600/msug/msug_000167.html
DUMP_NAMES = r"ge_.+|[\w-]+\.[\w-]+\.\d+\.\d+\.\d+.*|extra-info"
GRAPH_DUMP_FILES = r"ge_.+"  # what a <pid>_<device> graph dump directory holds
PROFILING_NAMES = r"PROF_\w+"  # msprof output directories, PROF_000001_20260605155111872_JDEK...


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
    follow: Sequence[str] = (),
    other_homes: Sequence[str] = (),
) -> tuple[CacheRoot, ...]:
    """Every cache root, active ones first per kind; roots that may not be cleaned carry
    ``refused``. ``search_paths`` (``--path DIR``) become ``search`` roots: the scanner looks
    for kernel_meta/ and aoe_workspace/ below them and its finds come back as ``discovered``
    (kind, path) pairs. ``protected_paths``: CANN installs and vendor directories. Paths need
    not exist.

    A root reached through a symlink is resolved (``realpath``) and keeps the name it was given
    in ``named``; it is refused unless its target lies in one of ``follow`` (``--follow DIR``:
    the user named the target). ``other_homes``: the home directories of the other accounts,
    whose trees are never cleaned."""

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
        chain(kind, [(d and posixpath.join(d, sub), s) for d, s in cache_dirs], "soc", SOC_NAME)
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
        LOG_NAMES,
    )
    chain(
        "atrace",
        [
            (work and posixpath.join(work, "atrace"), "ASCEND_WORK_PATH"),
            (posixpath.join(home, "ascend", "atrace"), "default $HOME/ascend/atrace"),
        ],
        "children",
    )
    # a directory a variable names directly may be anything: only dump-shaped names in it are
    # entries; the directories CANN names below $ASCEND_WORK_PATH are dumps by their place
    for variable, below_work in (
        ("NPU_COLLECT_PATH", ("extra-info", "data-dump")),
        ("ASCEND_DUMP_PATH", ("printf",)),
        ("DUMP_GRAPH_PATH", None),
    ):
        first = env(variable)
        if first:
            roots.append(CacheRoot("dump", first, variable, "children", pattern=DUMP_NAMES))
        if work and below_work:
            path = posixpath.join(work, *below_work)
            roots.append(CacheRoot("dump", path, "ASCEND_WORK_PATH", "children", active=not first))
    if work:  # graph dumps default to $ASCEND_WORK_PATH/<pid>_<device>
        roots.append(
            CacheRoot("dump", work, "ASCEND_WORK_PATH", "children", pattern=r"\d+_\d+", content=GRAPH_DUMP_FILES)
        )
        roots.append(
            CacheRoot(
                "profiling",
                posixpath.join(work, "profiling_data"),
                "ASCEND_WORK_PATH",
                "children",
                pattern=PROFILING_NAMES,
            )
        )
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
    homes = [h for h in (posixpath.normpath(h) for h in other_homes) if _is_personal(h) and h != home]
    follow = [posixpath.normpath(f) for f in follow]
    return tuple(
        _guard(r, home=home, cwd=cwd, banks=banks, installs=guarded, follow=follow, other_homes=homes)
        for r in _dedupe(settled)
    )


def _settle(root: CacheRoot, realpath: Callable[[str], str]) -> CacheRoot:
    """The root's path without symlinks (the last component of a ``self`` root stays: a link
    there is the entry, removed as a link); the name it was given kept in ``named``."""
    from dataclasses import replace

    if root.layout == "self":
        head, tail = posixpath.split(root.path)
        path = posixpath.join(realpath(head), tail)
    else:
        path = realpath(root.path)
    return replace(root, path=path, named=root.path if path != root.path else None)


def _is_personal(home: str) -> bool:
    """A home directory that is one account's own tree (not /, /home, /usr, ...; a service
    account's /var/lib/jenkins is)."""
    return home.startswith("/") and home not in _SHARED_TOPS and home not in SYSTEM_TREES


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


def _guard(
    root: CacheRoot,
    *,
    home: str,
    cwd: str,
    banks: list[str],
    installs: list[str],
    follow: list[str],
    other_homes: list[str],
) -> CacheRoot:
    """Refuse roots that are not a cache whatever a variable says: anything in a system tree,
    a directory that holds a home or the working directory, another user's home, a CANN
    install, an AOE bank (user results), a symlinked root whose target the user did not name."""
    from dataclasses import replace

    if root.kind in ("aoe-bank", "search"):
        return root
    path = root.path
    reason = None
    in_own_home = is_within(path, home) and path != home and _is_personal(home)
    system = next((t for t in SYSTEM_TREES if is_within(path, t)), None)
    if system and not in_own_home:
        reason = f"{path} is in the system tree {system}; nothing there is a cache to delete"
    elif path in _SHARED_TOPS or is_within(home, path):
        reason = f"{path} is the home or a directory that holds homes; its contents are not a cache"
    elif root.layout != "self" and root.pattern is None and is_within(cwd, path):
        reason = f"{path} is the working directory or holds it; its contents are not a cache"
    else:
        other = next((h for h in other_homes if is_within(path, h) or is_within(h, path)), None)
        if other:
            reason = f"{path} is in or holds {other}, another user's home"
    if reason is None and root.named is not None and not any(is_within(path, f) for f in follow):
        reason = (
            f"{root.named} leads through a symlink to {path}; it is cleaned only when you name that "
            f"target: --follow {path}"
        )
    for bank in banks:
        if reason is None and (is_within(path, bank) or is_within(bank, path)):
            reason = f"overlaps the AOE tuning bank {bank} (user results)"
    for install in installs:
        if reason is None and (is_within(path, install) or is_within(install, path)):
            reason = f"overlaps the CANN install or vendor directory {install}"
    return replace(root, refused=reason) if reason else root
