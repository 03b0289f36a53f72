"""Device nodes: what a process needs to open an NPU, present and accessible."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ascenv.checks import check, finding
from ascenv.checks._facts import has_npu_hardware
from ascenv.model import Finding, Severity, Snapshot
from ascenv.words import counted

# The nodes every NPU process opens besides its /dev/davinciN (README of
# github:Ascend/cann-container-image@c5a67b3a747bb8d69c828516d24a25ad5def4bb9; Ascend Docker Runtime
# adds the same three: github:Ascend/ascend-docker-runtime@c451124d7bd7d547e7c2f3fe285cb9f1d21483fb
# runtime/main.go).
MANAGER_NODES = ("/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc")
_CHIP_NODE = re.compile(r"^/dev/davinci\d+$")


@check(
    "ASC-DEV-NODES",
    layer="devices",
    title="device nodes present and accessible",
    explain="""
A process reaches an NPU through /dev/davinciN plus /dev/davinci_manager, /dev/devmm_svm and
/dev/hisi_hdc. Containers need each one passed with --device (cann-container-image README);
missing ones give aclInit 507008 / aclrtSetDevice 507033. The nodes are mode 0660, group
HwHiAiUser: a user outside that group gets permission errors (vllm-ascend#9490).
""",
)
def device_nodes(snap: Snapshot, matrix: object) -> Iterator[Finding]:
    # npu-smi that runs and fails (mounted into a container without --device) shows NPUs are meant
    # to be used here; a toolkit image on a CPU-only build host has no npu-smi and needs no nodes.
    npu_smi_ran = any(e.kind != "not-found" for e in snap.npu.errors)
    if not (has_npu_hardware(snap) or npu_smi_ran):
        return
    present = {n.path: n for n in snap.devices.nodes if n.exists}
    chips = sorted((p for p in present if _CHIP_NODE.match(p)), key=lambda p: int(p[len("/dev/davinci") :]))
    missing = [p for p in MANAGER_NODES if p not in present]
    if not chips:
        missing.insert(0, "/dev/davinciN")
    if missing:
        flags = " ".join(f"--device {p if p != '/dev/davinciN' else '/dev/davinci0'}" for p in missing)
        yield finding(
            "ASC-DEV-NODES",
            Severity.ERROR,
            "NPU device nodes missing",
            found="missing: " + ", ".join(missing),
            expected="/dev/davinciN and " + ", ".join(MANAGER_NODES),
            fix=f"start the container with {flags} (one --device per NPU you use)"
            if snap.devices.in_container
            else "the driver creates these nodes: check that it is installed and loaded (lsmod | grep drv_davinci)",
        )
    denied = [p for p, n in present.items() if n.accessible is False]
    if denied:
        yield finding(
            "ASC-DEV-NODES",
            Severity.ERROR,
            "NPU device nodes not accessible to this user",
            found="no read/write access to " + ", ".join(sorted(denied)),
            expected="read and write access",
            fix="sudo usermod -aG HwHiAiUser $USER  (then log in again); in a container: --group-add HwHiAiUser's gid",
        )
    if chips and not missing and not denied:
        yield finding("ASC-DEV-NODES", Severity.OK, f"{counted(len(chips), 'NPU device node')} accessible")
