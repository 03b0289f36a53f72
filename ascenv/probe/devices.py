"""Devices without npu-smi: Huawei PCI functions in sysfs, the davinci device nodes, and whether
we run in a container (where npu-smi and the nodes exist only if they were passed in).

Node names: the ``docker run --device`` list of github:Ascend/cann-container-image@c5a67b3a README
(``/dev/davinciN``, ``/dev/davinci_manager``, ``/dev/devmm_svm``, ``/dev/hisi_hdc``), the same
set the Ascend Docker Runtime adds (github:Ascend/ascend-docker-runtime@c451124d runtime/main.go).
"""

from __future__ import annotations

import os
import posixpath
import re
from typing import Optional

from ascenv.model import DeviceNode, Devices, PciDevice, ProbeError
from ascenv.pci import HUAWEI
from ascenv.pci import npu_functions as npu_functions  # re-exported: the tests and callers use it here
from ascenv.probe.fs import Root

PCI_DEVICES = "/sys/bus/pci/devices"
CONTROL_NODES = ("/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc")
_DAVINCI = re.compile(r"davinci(\d+)")
# Path segments that container engines give a process's cgroup: /docker/<id> and docker-<id>.scope
# (Docker, cgroup v1 and v2 with the host cgroup namespace), /kubepods... (kubelet),
# cri-containerd-<id>.scope and /containerd/, libpod-<id>.scope (Podman), crio-<id>.scope (CRI-O).
_CGROUP_ENGINES = re.compile(r"(?:^|[/-])(docker|kubepods|containerd|cri-containerd|libpod|crio|lxc)(?:[/.-]|$)")
_OVERLAY_TYPES = ("overlay", "fuse-overlayfs", "aufs")


def probe_devices(root: Root) -> Devices:
    errors = []
    if not root.is_dir(PCI_DEVICES):
        errors.append(ProbeError("devices", "not-found", f"{PCI_DEVICES} is absent: no PCI identity", PCI_DEVICES))
    in_container, evidence = detect_container(
        dockerenv=root.exists("/.dockerenv"),
        containerenv=root.exists("/run/.containerenv"),
        cgroup=root.read_text("/proc/1/cgroup"),
        mountinfo=root.read_text("/proc/self/mountinfo"),
    )
    return Devices(
        pci=pci_devices(root),
        nodes=device_nodes(root),
        in_container=in_container,
        container_evidence=evidence,
        errors=tuple(errors),
    )


def pci_devices(root: Root) -> tuple[PciDevice, ...]:
    """Functions whose ``vendor`` is 0x19e5, ids as sysfs prints them (``0xd802``)."""
    found = []
    for path in root.glob(PCI_DEVICES, "*"):
        if _sysfs(root, path, "vendor") != HUAWEI:
            continue
        real = root.resolve(path) or path  # devices/* are links into /sys/devices/pci.../
        driver = root.readlink(posixpath.join(real, "driver"))  # -> ../../../bus/pci/drivers/<name>
        found.append(
            PciDevice(
                address=posixpath.basename(path),
                vendor=HUAWEI,
                device=_sysfs(root, path, "device") or "",
                subsystem_vendor=_sysfs(root, path, "subsystem_vendor"),
                subsystem_device=_sysfs(root, path, "subsystem_device"),
                driver=posixpath.basename(driver.rstrip("/")) if driver else None,
                pci_class=_sysfs(root, path, "class"),
            )
        )
    return tuple(found)


def _sysfs(root: Root, device: str, attribute: str) -> Optional[str]:
    text = root.read_text(posixpath.join(device, attribute), limit=64)
    return text.strip().lower() if text and text.strip() else None


def device_nodes(root: Root) -> tuple[DeviceNode, ...]:
    """Every ``/dev/davinciN`` present (in numeric order), then the control nodes, present or not.
    ``accessible``: readable and writable by this user (the runtime opens them read-write)."""
    matches = (_DAVINCI.fullmatch(name) for name in root.listdir("/dev"))
    numbered = [(int(m.group(1)), m.group(0)) for m in matches if m]
    paths = [f"/dev/{name}" for _, name in sorted(numbered)] + list(CONTROL_NODES)
    nodes = []
    for path in paths:
        exists = root.exists(path)
        accessible = root.access(path, os.R_OK | os.W_OK) if exists else None
        nodes.append(DeviceNode(path=path, exists=exists, accessible=accessible))
    return tuple(nodes)


def detect_container(
    *, dockerenv: bool, containerenv: bool, cgroup: Optional[str], mountinfo: Optional[str]
) -> tuple[Optional[bool], Optional[str]]:
    """(in a container?, the evidence). None when there was nothing to look at (no /proc)."""
    if dockerenv:
        return True, "/.dockerenv"
    if containerenv:
        return True, "/run/.containerenv"
    line = cgroup_engine_line(cgroup or "")
    if line is not None:
        return True, f"/proc/1/cgroup: {line}"
    root_mount = overlay_root(mountinfo or "")
    if root_mount is not None:
        return True, f"/proc/self/mountinfo: / is {root_mount}"
    if cgroup is None and mountinfo is None:
        return None, None
    return False, None


def cgroup_engine_line(text: str) -> Optional[str]:
    """The first ``/proc/<pid>/cgroup`` line (``hierarchy:controllers:path``) naming a container engine.

    With cgroup v2 and a private cgroup namespace (Docker's default there) the only line is
    ``0::/``: no evidence either way, so the mount table is asked next."""
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3 and _CGROUP_ENGINES.search(parts[2]):
            return line.strip()
    return None


def overlay_root(text: str) -> Optional[str]:
    """The file-system type of ``/`` when it is an overlay (a container image's layers), else None.

    proc(5) mountinfo: ``id parent major:minor root mount-point options [optional...] - type source
    super-options``; the last mount on ``/`` is the visible one."""
    fstype = None
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 7 or fields[4] != "/" or "-" not in fields[6:]:
            continue
        after = fields.index("-", 6) + 1
        fstype = fields[after] if after < len(fields) else None
    return fstype if fstype in _OVERLAY_TYPES else None
