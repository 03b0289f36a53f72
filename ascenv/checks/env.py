"""The environment a process inherits: set_env.sh sourced once, from one CANN."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Optional

from ascenv.checks import check, finding
from ascenv.checks._facts import set_env_line
from ascenv.model import NOT_SOURCED, CannInstall, Finding, Severity, Snapshot

SEARCH_VARIABLES = ("LD_LIBRARY_PATH", "PATH", "PYTHONPATH")


def _preferred(snap: Snapshot) -> Optional[CannInstall]:
    """The install a user most likely means: the one a latest/cann link leads to, else the last."""
    installs = snap.cann.installs
    linked = [i for i in installs if i.links]
    chosen = linked or list(installs)
    return chosen[-1] if chosen else None


@check(
    "ASC-ENV-SOURCED",
    layer="env",
    title="set_env.sh sourced",
    explain="""
CANN only works in a shell that sourced its set_env.sh: it exports ASCEND_HOME_PATH,
ASCEND_TOOLKIT_HOME, ASCEND_OPP_PATH and puts lib64 on LD_LIBRARY_PATH. Without it torch_npu
warns "ASCEND_HOME_PATH environment variable is not set" and imports fail with libhccl.so /
libascendcl.so not found (vllm-ascend#262, Ascend/samples#19).
""",
)
def sourced(snap: Snapshot, matrix: object) -> Iterator[Finding]:
    if not snap.cann.installs:
        return
    if snap.cann.active is None:
        target = _preferred(snap)
        assert target is not None
        # active_reason says why: nothing sourced, or a variable leading to no install
        # ("ASCEND_HOME_PATH=/opt/x does not lead to a CANN installation").
        unset = snap.cann.active_reason in ("", NOT_SOURCED)
        yield finding(
            "ASC-ENV-SOURCED",
            Severity.ERROR,
            "CANN is installed but set_env.sh is not sourced"
            if unset
            else "the CANN variables lead to no installed CANN",
            found="ASCEND_HOME_PATH and ASCEND_TOOLKIT_HOME are unset" if unset else snap.cann.active_reason,
            expected=f"the environment of CANN {target.version or ''} at {target.path}".replace("  ", " "),
            fix=set_env_line(target),
        )
        return
    yield finding("ASC-ENV-SOURCED", Severity.OK, f"active CANN {snap.cann.active} (from {snap.cann.active_reason})")


@check(
    "ASC-ENV-PATHS",
    layer="env",
    title="search paths point into one CANN, once",
    explain="""
Sourcing set_env.sh twice doubles every entry; sourcing two CANN versions' scripts mixes their
libraries, and the loader takes the first match — symbol errors and version mismatches follow
(LlamaFactory#3779, pto-kernels#241). Every entry of LD_LIBRARY_PATH, PATH and PYTHONPATH
should point into the active CANN only.
""",
)
def search_paths(snap: Snapshot, matrix: object) -> Iterator[Finding]:
    for variable in SEARCH_VARIABLES:
        entries = snap.env.paths.get(variable, ())
        cann_roots = []
        for entry in entries:
            if entry.cann_path and entry.cann_path not in cann_roots:
                cann_roots.append(entry.cann_path)
        if len(cann_roots) > 1:
            yield finding(
                "ASC-ENV-PATHS",
                Severity.ERROR,
                f"{variable} mixes {len(cann_roots)} CANN installations",
                found="; ".join(cann_roots),
                expected=f"only {snap.cann.active or cann_roots[0]}",
                fix="open a new shell and source one set_env.sh only"
                " (remove other `source …/set_env.sh` lines from ~/.bashrc)",
            )
        # Only entries into a CANN install: a PATH that repeats ~/.cargo/bin is common, harmless
        # and no sign of set_env.sh.
        dups = sorted({e.value for e in entries if e.duplicate and e.value and e.cann_path})
        if dups:
            yield finding(
                "ASC-ENV-PATHS",
                Severity.WARN,
                f"{variable} repeats {len(dups)} entr{'y' if len(dups) == 1 else 'ies'}",
                found=", ".join(dups[:5]) + (" …" if len(dups) > 5 else ""),
                expected="each entry once",
                fix="set_env.sh was sourced more than once: source it once, from a fresh shell",
            )


@check(
    "ASC-ENV-CUSTOM-OPP",
    layer="env",
    title="ASCEND_CUSTOM_OPP_PATH entries",
    explain="""
ASCEND_CUSTOM_OPP_PATH lists custom operator vendor directories, searched before the vendors of
opp/vendors/config.ini (CANN environment variable reference, envref_07_0147). An entry that does
not exist is skipped silently, and an empty entry (a trailing colon) is a classic shell mistake
(`export ASCEND_CUSTOM_OPP_PATH=$dir:$ASCEND_CUSTOM_OPP_PATH` with the variable unset).
""",
)
def custom_opp(snap: Snapshot, matrix: object) -> Iterator[Finding]:
    entries = snap.env.paths.get("ASCEND_CUSTOM_OPP_PATH", ())
    raw = snap.env.variables.get("ASCEND_CUSTOM_OPP_PATH", "")
    if any(e.value == "" for e in entries):
        cleaned = ":".join(e.value for e in entries if e.value)
        yield finding(
            "ASC-ENV-CUSTOM-OPP",
            Severity.WARN,
            "ASCEND_CUSTOM_OPP_PATH has an empty entry",
            found=repr(raw),
            expected="colon-separated vendor directories, none empty",
            fix=f"export ASCEND_CUSTOM_OPP_PATH={cleaned}",
        )
    for entry in entries:
        if entry.value and entry.exists is False:
            yield finding(
                "ASC-ENV-CUSTOM-OPP",
                Severity.ERROR,
                "ASCEND_CUSTOM_OPP_PATH names a missing directory",
                found=entry.value,
                expected="an installed custom operator vendor directory",
                fix="install the operator package there (./custom_opp_*.run --install-path=<dir>) or drop the entry",
            )
