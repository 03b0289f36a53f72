"""What the judged machine can say about a cause: per check, confirmed / ruled out / not checkable,
always with the reason.

A check can only rule a cause out where the thing it inspects exists: "no CANN installation found"
rules nothing out about a CANN/torch_npu mismatch, it means the log came from another machine (a
laptop, CI, the machine a log was copied to). So each check declares what it needs (CANN, an Ascend
host, the target Python), and where that is missing its verdict is "not checkable" with what to do.
The interpreter running ascenv is never the user's stack: its packages decide nothing (issue #24:
"confirmed: numpy 2.x installed" came from ascenv's own virtual environment).
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

from ascenv.model import Finding, Severity, Snapshot

CONFIRMED = "confirmed"
RULED_OUT = "ruled out"
NOT_CHECKABLE = "not checkable"

FROM_SNAPSHOT = "run `ascenv triage LOG --from SNAPSHOT` with a snapshot of the machine the log came from"

# What each check inspects, so where it is absent the check decides nothing. By layer, then the
# checks that compare two layers (CANN against the driver, torch_npu against CANN).
_NEEDS_BY_LAYER = {
    "npu": ("ascend",),
    "driver": ("ascend",),
    "firmware": ("driver",),
    "devices": ("ascend",),
    "cann": ("cann",),
    "kernels": ("cann",),
    "env": ("cann",),
    "vendors": ("cann",),
    "python": ("python",),
    "torch_npu": ("python",),
}
_NEEDS_BY_CHECK = {
    "ASC-DRIVER-CANN": ("cann", "driver"),
    "ASC-CANN-DRIVER": ("cann", "driver"),
    "ASC-TORCH-CANN": ("python", "cann"),
    "ASC-TORCH-SUGGEST": ("python", "cann"),
    # a JIT front-end's sources against the CANN: without a front-end whose sources were read, which
    # CANN a kernel was built for is recorded nowhere (a framework's own kernels are not checked)
    "ASC-STACK-JIT": ("cann", "jit"),
}


@dataclass(frozen=True)
class CheckVerdict:
    check: str  # a doctor check ID, or "package:<name>" for a package-version rule
    verdict: str  # CONFIRMED, RULED_OUT or NOT_CHECKABLE
    reason: str  # what the machine showed, or why it cannot tell


@dataclass(frozen=True)
class Machine:
    """The judged machine as triage describes it in its header."""

    label: str  # "this machine (/)", "snapshot snap.json", ...
    cann: tuple[str, ...]  # CANN versions installed
    ascend: bool  # an NPU, a driver, device nodes or CANN: an Ascend host
    driver: Optional[str]
    python: Optional[str]  # the target Python's executable, when it may be used as evidence
    python_reason: str  # why the target Python is not used (empty when it is)
    jit: tuple[str, ...] = ()  # the JIT front-ends whose sources were read (tilelang)

    def missing(self, needs: Sequence[str]) -> Optional[str]:
        """Why a check needing ``needs`` decides nothing here, or None when it can."""
        # a saved snapshot is not "this machine": its reason names the snapshot's machine
        subject = "the snapshot's machine" if self.label.startswith("the machine of snapshot") else "this machine"
        # the stack first: without CANN, a torch_npu-vs-CANN check is undecided whatever the Python
        for need in sorted(needs, key=lambda n: n == "python"):
            if need == "cann" and not self.cann:
                return f"{subject} has no CANN — {FROM_SNAPSHOT}"
            if need == "ascend" and not self.ascend:
                return f"{subject} has no CANN, NPU or Ascend driver — {FROM_SNAPSHOT}"
            if need == "driver" and not self.driver:
                return f"{subject} has no Ascend driver — {FROM_SNAPSHOT}"
            if need == "python" and self.python is None:
                return self.python_reason
            if need == "jit" and not self.jit:
                return (
                    f"{subject} has no JIT front-end whose sources ascenv reads (a tilelang checkout on PYTHONPATH, or "
                    "its distribution): which CANN a framework's own kernels were built for is recorded nowhere"
                )
        return None


def describe(snapshot: Snapshot, label: str, own_python: bool) -> Machine:
    """The facts of ``snapshot`` that decide what can be checked. ``own_python``: the snapshot's
    target Python is the interpreter running ascenv (found by the caller, at the edge)."""
    python = snapshot.python
    if own_python:
        why = (
            f"the target Python ({python.executable}) is the interpreter running ascenv, not the user's stack — "
            f"pass --python PATH of the Python that failed, or {FROM_SNAPSHOT}"
        )
        executable = None
    elif not python.executable or not python.distributions:
        why = f"the target Python could not be read — pass --python PATH, or {FROM_SNAPSHOT}"
        executable = None
    else:
        why, executable = "", python.executable
    driver = snapshot.driver.version or snapshot.driver.path or ("loaded" if snapshot.driver.loaded else None)
    ascend = bool(
        snapshot.cann.installs
        or driver
        or snapshot.npu.chips
        or any(node.exists for node in snapshot.devices.nodes)
        or snapshot.devices.pci
    )
    # a front-end found among the distributions of ascenv's own interpreter is not the user's
    own = {d.location for d in python.distributions} if own_python else set()
    jit = tuple(p.name for p in snapshot.stack if p.found is not None and posixpath.dirname(p.path) not in own)
    return Machine(
        label=label,
        cann=tuple(i.version or i.path for i in snapshot.cann.installs),
        ascend=ascend,
        driver=driver,
        python=executable,
        python_reason=why,
        jit=jit,
    )


def needs(check: str, layer: str) -> tuple[str, ...]:
    return _NEEDS_BY_CHECK.get(check, _NEEDS_BY_LAYER.get(layer, ()))


def judge_check(
    check: str, layer: str, machine: Machine, findings: Sequence[Finding], warnings_confirm: bool
) -> CheckVerdict:
    """One check's verdict on a cause: its error (or, for a check that never errs, its warning)
    confirms; its clean answer (or its silence) rules out only where the check can see what it
    inspects."""
    mine = [f for f in findings if f.id == check]
    missing = machine.missing(needs(check, layer))
    if missing:
        return CheckVerdict(check, NOT_CHECKABLE, missing)
    bad = [f for f in mine if f.severity is Severity.ERROR or (f.severity is Severity.WARN and warnings_confirm)]
    if bad:
        return CheckVerdict(check, CONFIRMED, "; ".join(f.title for f in bad))
    if mine:
        return CheckVerdict(check, RULED_OUT, "; ".join(dict.fromkeys(f.title for f in mine)))
    # a check is silent when all is well (ASC-ENV-PATHS, ASC-CANN-LINK ...), and here it could look
    return CheckVerdict(check, RULED_OUT, "found nothing wrong")


def overall(verdicts: Sequence[CheckVerdict]) -> Optional[bool]:
    """A cause is confirmed when one check confirms it, ruled out when every check could look and
    none did, and undecided otherwise (one not-checkable check leaves it open)."""
    if any(v.verdict == CONFIRMED for v in verdicts):
        return True
    if verdicts and all(v.verdict == RULED_OUT for v in verdicts):
        return False
    return None
