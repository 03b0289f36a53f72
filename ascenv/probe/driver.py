"""Driver and firmware: their ``version.info`` files, ``/etc/ascend_install.info``, and whether
the driver's kernel module is loaded.

Where the files are:
* ``/etc/ascend_install.info`` records ``Driver_Install_Path_Param`` / ``Firmware_Install_Path_Param``
  (default ``/usr/local/Ascend``); the driver is ``<path>/driver/version.info``, the firmware
  ``<path>/firmware/version.info`` (ascend-deployer 26.0.0's check_cann_basic reads it the same
  way).
* 310B SoC boards keep the driver under ``/var/davinci`` (the 310B driver installer log
  in tests/data/corpus/other_cmds/driver_firmware_run-installer_logs_310B_davinci-mini-log.txt
  says "driver 25.0.rc1.1 under /var/davinci"), while their firmware is under /usr/local/Ascend.
"""

from __future__ import annotations

import os
import posixpath
from typing import Optional

from ascenv.model import DriverInfo, FirmwareInfo, ProbeError, VersionFile
from ascenv.probe.fs import Root
from ascenv.probe.install_files import parse_key_values

INSTALL_INFO = "/etc/ascend_install.info"
DEFAULT_INSTALL_PATH = "/usr/local/Ascend"
SOC_DRIVER_BASE = "/var/davinci"

# Kernel modules that exist only when the driver is loaded. ``drv_davinci_intf_host`` is the
# host-side module every PCIe card driver module depends on (driver build files declare
# ``LOCAL_DEPEND_KO := drv_devmng_host drv_davinci_intf_host ...`` for PRODUCT_SIDE=host;
# a 910B host listing of loaded modules shows drv_davinci_intf_host, drv_devmm_host,
# drv_devmng_host). ``drv_davinci_intf`` / ``drv_devmng`` are the device-side names, which a SoC
# board (310B) runs as its own host — INFERRED from the same build files (PRODUCT_SIDE=device)
# and an arm64 kernel trace naming [drv_davinci_intf] and [drv_devmng]; not seen on a 310B.
DRIVER_MODULES = ("drv_davinci_intf_host", "drv_devmng_host", "drv_davinci_intf", "drv_devmng")


def read_version_file(root: Root, path: str) -> Optional[VersionFile]:
    """A ``key=value`` file as a VersionFile, or None when it is absent or unreadable."""
    text = root.read_text(path)
    if text is None:
        return None
    return VersionFile(path=path, fields=parse_key_values(text))


def read_install_info(root: Root) -> Optional[VersionFile]:
    """``/etc/ascend_install.info``: written by the driver/firmware installers (or a Dockerfile)."""
    return read_version_file(root, INSTALL_INFO)


def _bases(install_info: Optional[VersionFile], key: str, extra: tuple[str, ...] = ()) -> list[str]:
    recorded = install_info.get(key) if install_info else None
    bases = [recorded] if recorded and recorded.startswith("/") else []
    bases += [DEFAULT_INSTALL_PATH, *extra]
    return list(dict.fromkeys(posixpath.normpath(b) for b in bases))


def _missing(root: Root, probe: str, what: str, paths: list[str]) -> ProbeError:
    """Not found, or present but unreadable (permission, or a FIFO/device where the installer
    writes a regular file): say which paths were looked at, or which one could not be read."""
    for path in paths:
        reason = root.unreadable(path)
        if reason is None:
            continue
        if reason == "permission denied":
            message = f"{path} exists but cannot be read as uid {os.geteuid()} (permission denied)"
            return ProbeError(probe, "permission", message, source=path)
        return ProbeError(probe, "not-a-file", f"{path} exists but cannot be read: it is {reason}", source=path)
    return ProbeError(probe, "not-found", f"no {what} version.info: looked at {', '.join(paths)}", source=paths[0])


def _version(probe: str, file: VersionFile) -> tuple[Optional[str], tuple[ProbeError, ...]]:
    version = file.get("Version")  # not package_version: for firmware that is the HDK version
    if version:
        return version, ()
    return None, (ProbeError(probe, "parse", f"{file.path} has no Version= line", source=file.path),)


def probe_driver(root: Root) -> DriverInfo:
    install_info = read_install_info(root)
    candidates = [
        posixpath.join(b, "driver", "version.info")
        for b in _bases(install_info, "Driver_Install_Path_Param", (SOC_DRIVER_BASE,))
    ]
    loaded = driver_loaded(root)
    for path in candidates:
        file = read_version_file(root, path)
        if file is not None:
            version, errors = _version("driver", file)
            return DriverInfo(
                version=version, path=posixpath.dirname(path), version_file=file, loaded=loaded, errors=errors
            )
    return DriverInfo(loaded=loaded, errors=(_missing(root, "driver", "driver", candidates),))


def probe_firmware(root: Root) -> FirmwareInfo:
    install_info = read_install_info(root)
    candidates = [
        posixpath.join(b, "firmware", "version.info") for b in _bases(install_info, "Firmware_Install_Path_Param")
    ]
    for path in candidates:
        file = read_version_file(root, path)
        if file is not None:
            version, errors = _version("firmware", file)
            return FirmwareInfo(version=version, source=path, version_file=file, errors=errors)
    return FirmwareInfo(errors=(_missing(root, "firmware", "firmware", candidates),))


def driver_loaded(root: Root) -> Optional[bool]:
    """True/False from ``/sys/module`` or ``/proc/modules``; None when neither can be read
    (an unpacked image, or a container without /sys). Containers share the host's modules."""
    modules = root.listdir("/sys/module")
    if modules:
        return any(name in modules for name in DRIVER_MODULES)
    text = root.read_text("/proc/modules")
    if text is None:
        return None
    loaded = {line.split(" ", 1)[0] for line in text.splitlines() if line.strip()}
    return any(name in loaded for name in DRIVER_MODULES)
