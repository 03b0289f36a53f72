"""The host: OS (os-release under the root), kernel, arch, glibc, CPU and memory."""

from __future__ import annotations

import os
import shlex
from typing import Optional

from ascenv.model import HostInfo
from ascenv.probe.fs import Root


def parse_os_release(text: str) -> dict[str, str]:
    """``KEY=value`` lines with shell quoting (os-release(5))."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        try:
            words = shlex.split(value)
        except ValueError:
            words = [value.strip("\"'")]
        fields[key.strip()] = words[0] if words else ""
    return fields


def probe_host(root: Root) -> HostInfo:
    text = root.read_text("/etc/os-release") or root.read_text("/usr/lib/os-release") or ""
    release = parse_os_release(text)
    if root.is_host:
        import platform  # only the live machine's: an image's root never needs it

        kernel: Optional[str] = platform.release()
        arch: Optional[str] = platform.machine()
        lib, libc_version = platform.libc_ver()
        glibc = libc_version if lib == "glibc" and libc_version else None
        cpu_count = os.cpu_count()
        memory = _memory_mb()
        cpu = _cpu_model(root)
        hostname: Optional[str] = platform.node()
    else:  # an unpacked image: only what its files say, nothing of the machine running ascenv
        kernel = arch = glibc = cpu = hostname = None
        cpu_count = memory = None
    return HostInfo(
        os_id=release.get("ID"),
        os_version=release.get("VERSION_ID"),
        os_name=release.get("PRETTY_NAME"),
        kernel=kernel,
        arch=arch,
        glibc=glibc,
        cpu=cpu,
        cpu_count=cpu_count,
        memory_total_mb=memory,
        hostname=hostname,
    )


def _memory_mb() -> Optional[int]:
    import psutil

    try:
        return int(psutil.virtual_memory().total // (1024 * 1024))
    except (OSError, RuntimeError):
        return None


def _cpu_model(root: Root) -> Optional[str]:
    for line in (root.read_text("/proc/cpuinfo") or "").splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "Model", "CPU part") and value.strip():
            return value.strip()
    import platform

    return platform.processor() or None
