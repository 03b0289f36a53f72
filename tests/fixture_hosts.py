"""Fixture machines: directory trees built from real captures, plus a fake ``npu-smi``.

``build_host(name, tmp_path) -> FixtureHost`` builds one of ``HOST_NAMES`` under ``tmp_path/name``:
``root/`` is the machine's file system (read it with ``Root(host.root)``), ``bin/`` holds the fake
``npu-smi`` (a shell script that prints a recorded capture per sub-command), ``environ`` is the
environment a shell on that machine would have (PATH starts with ``bin``; the ``ASCEND_*``
variables of set_env.sh when the host sourced it), ``home`` the user's home as a machine path.

Every file is a real capture from tests/data/corpus/ placed where the machine keeps it, unless its
comment says *constructed*: then it holds the minimum the documented format needs, and the comment
names the documented fact. Device nodes (``/dev/davinci*``) are plain files; sysfs PCI devices carry
vendor 0x19e5 and the documented device ids 0xd802 (A2), 0xd803 (A3), 0xd500 (310P) at the
capture's Bus-Ids.

The hosts:
* ``a2-cann800``: Atlas 800I A2, 8 x 910B4, driver 25.0.rc1.1, firmware 7.7.0.1.231, legacy CANN
  8.0.0 at ascend-toolkit/8.0.0 (latest -> 8.0.0), set_env.sh sourced;
* ``a3-cann850``: Atlas A3, 8 NPUs x 2 chips, driver 25.2.0, CANN 8.5 layout cann-8.5.0 with
  /usr/local/Ascend/cann -> cann-8.5.0, set_env.sh sourced;
* ``310p-duo``: Atlas 300I Duo (one NPU id 6, two 310P3 chips), CANN 8.1.RC1, sourced;
* ``container-no-devices``: a container (``/.dockerenv``) with CANN 8.0.0 in its image ENV, no device
  nodes, no driver files, npu-smi mounted in but failing with DCMI -8020;
* ``two-canns-dangling-latest``: the 800I A2 again, with ascend-toolkit/8.1.RC1 and 8.2.RC1 and
  ``latest -> 8.3.RC2`` (removed, dangling); set_env.sh not sourced;
* ``nonroot-home``: an x86_64 development host without NPUs (no npu-smi), CANN 8.1.RC1 installed
  by user ``dev`` in /home/dev/Ascend, sourced.
* ``vllm-ascend-v0.12.0rc1`` / ``vllm-ascend-v0.11.0``: the official vllm-ascend image stacks
  (Dockerfile FROM the CANN 8.3.rc2-910b image; torch_npu 2.8.0 with torch 2.8.0+cpu, resp.
  torch_npu 2.7.1 with torch 2.7.1+cpu) in a container on the 2 x 910B4-1 host of
  vllm-ascend#5606 (driver 25.2.2 mounted in); the Python packages are dist-info records on
  PYTHONPATH (``site/`` beside ``root/``).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from tests.conftest import CORPUS, load_capture

VERSION_FILES = "version_files"
A2_BUS_IDS = (
    "0000:C1:00.0",
    "0000:C2:00.0",
    "0000:81:00.0",
    "0000:82:00.0",
    "0000:01:00.0",
    "0000:02:00.0",
    "0000:41:00.0",
    "0000:42:00.0",
)
A3_BUS_IDS = (
    "0000:9D:00.0",
    "0000:9F:00.0",
    "0000:99:00.0",
    "0000:9B:00.0",
    "0000:95:00.0",
    "0000:97:00.0",
    "0000:91:00.0",
    "0000:93:00.0",
    "0000:8D:00.0",
    "0000:8F:00.0",
    "0000:89:00.0",
    "0000:8B:00.0",
    "0000:85:00.0",
    "0000:87:00.0",
    "0000:81:00.0",
    "0000:83:00.0",
)
NPU_SMI_USAGE = "Usage: npu-smi info <watch|proc|-h|-m|-l|-t type> [Options...]\n"
# npu-smi's own texts (format strings of npucli, corpus/reference-only message catalog): unknown
# sub-command, and an -i that names no NPU (mind-cluster fixture of an invalid card id).
NPU_SMI_UNKNOWN = "Command or option is not found.\n" + NPU_SMI_USAGE
NPU_SMI_BAD_ID = "Invalid card id.\nError parameter of -i\n" + NPU_SMI_USAGE


@dataclass(frozen=True)
class FixtureHost:
    root: Path  # the machine's "/"
    bin: Path  # holds the fake npu-smi (empty when the host has none)
    environ: dict  # PATH (bin first), ASCEND_* / LD_LIBRARY_PATH / PYTHONPATH when sourced
    name: str
    home: Optional[str] = None  # the user's home as a machine path ("/root", "/home/dev")
    captures: dict = field(default_factory=dict)  # "info -m" -> corpus file the fake npu-smi prints


def corpus_text(relative: str, section: Optional[int] = None) -> str:
    """A corpus capture without its metadata lines; ``section`` picks one ``=== … ===`` part."""
    return load_capture(CORPUS / relative) if section is None else corpus_sections(relative)[section]


def corpus_sections(relative: str) -> list[str]:
    """The captures of a multi-section corpus file, split on the collector's ``=== … ===`` lines
    (text before the first separator, such as extra header lines, is dropped)."""
    parts: list[list[str]] = []
    for line in load_capture(CORPUS / relative).splitlines(keepends=True):
        if re.match(r"=== .* ===$", line.rstrip("\n")):
            parts.append([])
        elif parts:
            parts[-1].append(line)
    return ["".join(part) for part in parts]


class _Machine:
    def __init__(self, tmp: Path, name: str) -> None:
        self.name = name
        self.root = tmp / name / "root"
        self.bin = tmp / name / "bin"
        self.root.mkdir(parents=True)
        self.bin.mkdir()
        self.captures: dict[str, str] = {}

    def path(self, machine_path: str) -> Path:
        return self.root / machine_path.lstrip("/")

    def write(self, machine_path: str, text: str) -> None:
        target = self.path(machine_path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)

    def copy(self, machine_path: str, relative: str, section: Optional[int] = None) -> None:
        self.write(machine_path, corpus_text(relative, section))

    def mkdir(self, machine_path: str) -> None:
        self.path(machine_path).mkdir(parents=True, exist_ok=True)

    def link(self, machine_path: str, target: str) -> None:
        link = self.path(machine_path)
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, link)

    def devices(self, count: int, pci: tuple[tuple[str, str, Optional[str]], ...]) -> None:
        """``/dev/davinci0..count-1`` plus the control nodes, a loaded driver module, and sysfs PCI
        functions ``(bus_id, device_id, subsystem_device or None when no capture records it)``."""
        for i in range(count):
            self.write(f"/dev/davinci{i}", "")
        for node in ("davinci_manager", "devmm_svm", "hisi_hdc"):
            self.write(f"/dev/{node}", "")
        # constructed: an empty /sys/module/<name> is how sysfs shows a loaded module; the name is
        # the host-side driver module (see ascenv/probe/driver.py DRIVER_MODULES)
        self.mkdir("/sys/module/drv_davinci_intf_host")
        for bus_id, device, subsystem_device in pci:
            base = f"/sys/bus/pci/devices/{bus_id.lower()}"
            # class 0x1200xx = processing accelerator (ascend-deployer's card detection filter)
            self.write(f"{base}/class", "0x120000\n")
            self.write(f"{base}/vendor", "0x19e5\n")
            self.write(f"{base}/device", device + "\n")
            self.write(f"{base}/subsystem_vendor", "0x19e5\n")
            if subsystem_device:
                self.write(f"{base}/subsystem_device", subsystem_device + "\n")

    def npu_smi(
        self, responses: dict[str, str], npu_ids: tuple[int, ...] = (), failure: Optional[tuple[str, int, int]] = None
    ) -> None:
        """A fake ``npu-smi``: ``responses`` maps the argument string ("info", "info -m",
        "info -t board -i 0") to a corpus file. ``failure`` = (corpus file, first line, end line)
        is printed for every ``info`` call instead, with exit status 1 (INFERRED: npu-smi's exit
        status after a DCMI error is not in the corpus). Board queries for an NPU without a recorded board fail with a
        message that says so; ids that are no NPU get npu-smi's "Invalid card id." text."""
        cat = shutil.which("cat") or "/bin/cat"
        lines = ["#!/bin/sh", f"# fake npu-smi of fixture host {self.name} (tests/fixture_hosts.py)", 'case "$*" in']

        def heredoc(text: str) -> list[str]:
            assert "__ASCENV_CAPTURE__" not in text
            return [f"{cat} <<'__ASCENV_CAPTURE__'", text.rstrip("\n"), "__ASCENV_CAPTURE__"]

        if failure:
            relative, start, end = failure
            text = "".join(corpus_text(relative).splitlines(keepends=True)[start:end])
            lines += ["  info|info\\ *)", *heredoc(text), "    exit 1 ;;"]
            self.captures["info"] = relative
        for args, relative in responses.items():
            lines += [f'  "{args}")', *heredoc(corpus_text(relative)), "    exit 0 ;;"]
            self.captures[args] = relative
        for npu in npu_ids:
            if f"info -t board -i {npu}" not in responses:
                lines += [
                    f'  "info -t board -i {npu}")',
                    f"    echo \"fixture {self.name}: no recorded capture for 'npu-smi $*'\" >&2",
                    "    exit 1 ;;",
                ]
        if npu_ids:
            lines += ['  "info -t board -i "*)', *heredoc(NPU_SMI_BAD_ID), "    exit 1 ;;"]
        lines += ["  *)", *heredoc(NPU_SMI_UNKNOWN), "    exit 1 ;;", "esac", ""]
        script = self.bin / "npu-smi"
        script.write_text("\n".join(lines))
        script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)

    def host(self, environ: dict, home: Optional[str]) -> FixtureHost:
        return FixtureHost(self.root, self.bin, environ, self.name, home, dict(self.captures))


def sourced_environ(bin_dir: Path, toolkit_home: str) -> dict:
    """What the CANN 8.0.0 ``ascend-toolkit/set_env.sh`` (corpus version_files/set_env.sh_8.0.0_*)
    exports, with ASCEND_TOOLKIT_HOME set to ``toolkit_home``; ``$(arch)`` taken as aarch64."""
    driver = (
        "/usr/local/Ascend/driver/lib64:/usr/local/Ascend/driver/lib64/common:/usr/local/Ascend/driver/lib64/driver"
    )
    h = toolkit_home
    return {
        "PATH": f"{bin_dir}:{h}/bin:{h}/compiler/ccec_compiler/bin:{h}/tools/ccec_compiler/bin"
        ":/usr/local/bin:/usr/bin:/bin",
        "LD_LIBRARY_PATH": f"{h}/tools/aml/lib64:{h}/tools/aml/lib64/plugin:{h}/lib64:{h}/lib64/plugin/opskernel:"
        f"{h}/lib64/plugin/nnengine:{h}/opp/built-in/op_impl/ai_core/tbe/op_tiling/lib/linux/aarch64:{driver}:",
        "PYTHONPATH": f"{h}/python/site-packages:{h}/opp/built-in/op_impl/ai_core/tbe:",
        "ASCEND_TOOLKIT_HOME": h,
        "ASCEND_AICPU_PATH": h,
        "ASCEND_OPP_PATH": f"{h}/opp",
        "TOOLCHAIN_HOME": f"{h}/toolkit",
        "ASCEND_HOME_PATH": h,
    }


def plain_environ(bin_dir: Path) -> dict:
    return {"PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin"}


# --- pieces shared by several hosts ---------------------------------------------------------------

_800IA2 = (
    f"{VERSION_FILES}/driver25.0.rc1.1_fw7.7.0.1.231_toolkit8.2.RC1_opp_kernel_nnal_mindie2.1.RC1_800IA2-notes.txt"
)
_ETC_INSTALL = f"{VERSION_FILES}/etc_ascend_install.info_samples.txt"
_INFO_800 = f"{VERSION_FILES}/ascend_toolkit_install.info_8.0.0_aarch64_container_vllm-ascend-issue632.txt"
_SET_ENV_800 = f"{VERSION_FILES}/set_env.sh_8.0.0_ascend-toolkit_rst-notes.txt"
_A2_INFO = "npu_smi/910b4_atlas800IA2_25.0.rc1.1_8npu_noproc_blog-800IA2-driver-install.txt"
_A2_INFO_M = "other_cmds/npu-smi_info_-m_910b4_atlas800IA2_blog.txt"


def _soc_configs(m: _Machine, install: str, arch: str, socs: dict[str, str]) -> None:
    """constructed: ``<arch>-linux/data/platform_config/<SoC>.ini`` with the ``[version]`` keys
    only; SoC -> Short_SoC_version pairs from the CANN 8.1.RC1 platform_config list
    (github:leideng/CANN-8.1.RC1@551ed27c29284929bbdc2239e929ddfedfdf0b8b, an installed toolkit's
    aarch64-linux/data/platform_config/*.ini)."""
    for soc, short in socs.items():
        m.write(
            f"{install}/{arch}-linux/data/platform_config/{soc}.ini",
            f"[version]\nSoC_version={soc}\nShort_SoC_version={short}\n",
        )


_A2_SOCS = {
    "Ascend910B1": "Ascend910B",
    "Ascend910B2": "Ascend910B",
    "Ascend910B3": "Ascend910B",
    "Ascend910B4": "Ascend910B",
    "Ascend910B4-1": "Ascend910B",
}
_A3_SOCS = {"Ascend910_9382": "Ascend910_93", "Ascend910_9392": "Ascend910_93"}
_310P_SOCS = {"Ascend310P1": "Ascend310P", "Ascend310P3": "Ascend310P"}


def _a2_driver_firmware(m: _Machine) -> None:
    m.copy("/usr/local/Ascend/driver/version.info", _800IA2, 0)
    m.copy("/usr/local/Ascend/firmware/version.info", _800IA2, 1)
    m.copy("/etc/ascend_install.info", _ETC_INSTALL, 1)  # sample B: driver installed first


def _toolkit_800(m: _Machine, base: str = "/usr/local/Ascend") -> str:
    install = f"{base}/ascend-toolkit/8.0.0"
    m.copy(f"{install}/aarch64-linux/ascend_toolkit_install.info", _INFO_800)
    m.copy(f"{install}/version.cfg", f"{VERSION_FILES}/version.cfg_8.0.0_ascend-toolkit-latest_rst-notes.txt")
    # constructed: compiler/version.info with the compiler's own version as version.cfg records it
    # (compiler_running_version=[7.6.0.1.220:8.0.0])
    m.write(f"{install}/compiler/version.info", "Version=7.6.0.1.220\nversion_dir=8.0.0\n")
    m.mkdir(f"{install}/opp/built-in/op_impl/ai_core/tbe/kernel/ascend910b")
    m.mkdir(f"{install}/opp/built-in/op_impl/ai_core/tbe/kernel/config/ascend910b")
    _soc_configs(m, install, "aarch64", _A2_SOCS)
    m.link(f"{base}/ascend-toolkit/latest", "8.0.0")
    m.copy(f"{base}/ascend-toolkit/set_env.sh", _SET_ENV_800)
    return install


# --- the six machines -------------------------------------------------------------------------------


def a2_cann800(m: _Machine) -> FixtureHost:
    _a2_driver_firmware(m)
    _toolkit_800(m)
    m.devices(8, tuple((bus, "0xd802", None) for bus in A2_BUS_IDS))
    m.npu_smi({"info": _A2_INFO, "info -m": _A2_INFO_M}, npu_ids=tuple(range(8)))
    return m.host(sourced_environ(m.bin, "/usr/local/Ascend/ascend-toolkit/latest"), "/root")


def _cann_85_layout(m: _Machine, version: str) -> str:
    """The CANN 8.5 layout of a root install at /usr/local/Ascend/cann-<version> (aarch64), without
    kernels; returns the install path."""
    m.copy("/etc/ascend_install.info", _ETC_INSTALL, 1)
    install = f"/usr/local/Ascend/cann-{version}"
    # constructed: the 8.5 layout keeps ascend_toolkit_install.info in cann-<ver>/<arch>-linux with
    # path=/usr/local/Ascend/cann-<ver>/aarch64-linux
    m.write(
        f"{install}/aarch64-linux/ascend_toolkit_install.info",
        f"package_name=Ascend-cann-toolkit\nversion={version}\narch=aarch64\nos=linux\npath={install}/aarch64-linux\n",
    )
    # constructed: 8.5 set_env.sh lives at /usr/local/Ascend/cann/set_env.sh; the images export
    # ASCEND_TOOLKIT_HOME=/usr/local/Ascend/cann-<ver> (github:Ascend/cann-container-image@
    # c5a67b3a747bb8d69c828516d24a25ad5def4bb9:cann/<tag>/Dockerfile)
    m.write(
        f"{install}/set_env.sh",
        f"export ASCEND_TOOLKIT_HOME={install}\nexport ASCEND_HOME_PATH=${{ASCEND_TOOLKIT_HOME}}\n"
        "export ASCEND_OPP_PATH=${ASCEND_TOOLKIT_HOME}/opp\n",
    )
    m.link("/usr/local/Ascend/cann", f"cann-{version}")
    # constructed: root installs record the CANN base here (torch_npu env.sh reads Install_Path)
    m.write("/etc/Ascend/ascend_cann_install.info", "Install_Path=/usr/local/Ascend\n")
    return install


def a3_cann850(m: _Machine) -> FixtureHost:
    return _a3(m, "8.5.0")


def a3_cann900(m: _Machine) -> FixtureHost:
    """The A3 host with CANN 9.0.0 in the same layout: a CANN with a documented-incompatible
    torch_npu (2.7.1, triton-ascend#326), for the checks that confirm a torch_npu/CANN mismatch."""
    return _a3(m, "9.0.0")


def _a3(m: _Machine, version: str) -> FixtureHost:
    # constructed: no driver version.info of 25.2.0 was captured; the minimum is Version=, the
    # driver version npu-smi 25.2.0 prints (https://github.com/vllm-project/vllm-ascend/issues/3002).
    # No firmware file: its version on this machine is not known.
    m.write("/usr/local/Ascend/driver/version.info", "Version=25.2.0\n")
    install = _cann_85_layout(m, version)
    # constructed: per-chip ops package record, <cann>/<arch>-linux/ascend_ops_install.info with
    # package_name=Ascend-cann-<chip>-ops (the A3 package is "A3-ops": the PyPI ascend-deployer 26.0.0
    # wheel downloads Ascend-cann-A3-ops_8.5.0_linux-aarch64.zip), kernels under
    # opp/.../kernel/<unit>; ascend910_93 is the A3 compute unit
    # (github:leideng/CANN-8.1.RC1@551ed27c29284929bbdc2239e929ddfedfdf0b8b)
    m.write(f"{install}/aarch64-linux/ascend_ops_install.info", f"package_name=Ascend-cann-A3-ops\nversion={version}\n")
    m.mkdir(f"{install}/opp/built-in/op_impl/ai_core/tbe/kernel/ascend910_93")
    _soc_configs(m, install, "aarch64", _A3_SOCS)
    m.devices(16, tuple((bus, "0xd803", None) for bus in A3_BUS_IDS))
    m.npu_smi(
        {
            "info": "npu_smi/a3-ascend910_25.2.0_busy_proc-empty-names_per-chip_vllm-ascend-issue3002.txt",
            "info -m": "npu_smi/from_ascend_deployer_4.txt",
        },
        npu_ids=tuple(range(8)),
    )
    return m.host(sourced_environ(m.bin, install), "/root")


def duo_310p(m: _Machine) -> FixtureHost:
    # the driver/firmware files of the 25.0.rc1.1 package were captured on a 910B4 machine; the
    # 310P package of the same version is INFERRED to write the same version.info keys
    m.copy("/usr/local/Ascend/driver/version.info", _800IA2, 0)
    m.copy("/usr/local/Ascend/firmware/version.info", _800IA2, 1)
    m.copy("/etc/ascend_install.info", _ETC_INSTALL, 0)
    install = "/usr/local/Ascend/ascend-toolkit/8.1.RC1"
    m.copy(
        f"{install}/aarch64-linux/ascend_toolkit_install.info",
        f"{VERSION_FILES}/ascend_toolkit_install.info_8.1.RC1_aarch64_vllm-ascend-issue1993.txt",
    )
    m.mkdir(f"{install}/opp/built-in/op_impl/ai_core/tbe/kernel/ascend310p")
    _soc_configs(m, install, "aarch64", _310P_SOCS)
    m.link("/usr/local/Ascend/ascend-toolkit/latest", "8.1.RC1")
    m.copy("/usr/local/Ascend/ascend-toolkit/set_env.sh", _SET_ENV_800)  # same exports in 8.1 (INFERRED)
    # both chips of the Duo report Bus-Id 0000:83:00.0 in the capture: one PCI function here
    m.devices(2, (("0000:83:00.0", "0xd500", None),))
    m.npu_smi({"info": "npu_smi/310p3-300iduo_25.0.rc1.1_2chips_proc_vllm-ascend-issue1993.txt"}, npu_ids=(6,))
    return m.host(sourced_environ(m.bin, "/usr/local/Ascend/ascend-toolkit/latest"), "/root")


def container_no_devices(m: _Machine) -> FixtureHost:
    m.write("/.dockerenv", "")
    m.copy("/etc/ascend_install.info", _ETC_INSTALL, 2)  # sample C: what Dockerfiles write
    _toolkit_800(m)
    # the two lines npu-smi printed in that container (after the "root@NPU:/workspace# npu-smi info" prompt)
    m.npu_smi(
        {},
        failure=(
            "errors/container_-8020_then_collect_env_drvRet87_507899_unknowsoctype_vllm-ascend-issue632.txt",
            1,
            3,
        ),
    )
    return m.host(sourced_environ(m.bin, "/usr/local/Ascend/ascend-toolkit/latest"), "/root")


def _toolkit_821(m: _Machine) -> str:
    """The captured toolkit 8.2.RC1 of the 800I A2 note (its version.info, install.info and
    opp_kernel version.info) with its kernels for ascend910b; returns the install path."""
    new = "/usr/local/Ascend/ascend-toolkit/8.2.RC1"
    m.copy(f"{new}/toolkit/version.info", _800IA2, 2)
    m.copy(f"{new}/aarch64-linux/ascend_toolkit_install.info", _800IA2, 3)
    m.copy(f"{new}/opp_kernel/version.info", _800IA2, 4)
    m.mkdir(f"{new}/opp/built-in/op_impl/ai_core/tbe/kernel/ascend910b")
    _soc_configs(m, new, "aarch64", _A2_SOCS)
    return new


def two_canns_dangling_latest(m: _Machine) -> FixtureHost:
    _a2_driver_firmware(m)
    _toolkit_821(m)
    old = "/usr/local/Ascend/ascend-toolkit/8.1.RC1"  # no kernels package installed for this one
    m.copy(
        f"{old}/aarch64-linux/ascend_toolkit_install.info",
        f"{VERSION_FILES}/ascend_toolkit_install.info_8.1.RC1_aarch64_910ProB_vllm-ascend-issue1047.txt",
    )
    _soc_configs(m, old, "aarch64", _A2_SOCS)
    m.link("/usr/local/Ascend/ascend-toolkit/latest", "8.3.RC2")  # removed since: dangles
    m.copy("/usr/local/Ascend/ascend-toolkit/set_env.sh", _SET_ENV_800)
    m.devices(8, tuple((bus, "0xd802", "0x3002" if bus == "0000:C1:00.0" else None) for bus in A2_BUS_IDS))
    # the board capture is of another 910B-class card at 0000:C1:00.0 (software 24.1.0.b062,
    # firmware 7.5.0.2.220): it disagrees with this host's driver files, as on a messy machine
    m.npu_smi(
        {"info": _A2_INFO, "info -m": _A2_INFO_M, "info -t board -i 0": "npu_smi/from_ascend_deployer_5.txt"},
        npu_ids=tuple(range(8)),
    )
    return m.host(plain_environ(m.bin), "/root")


def nonroot_home(m: _Machine) -> FixtureHost:
    base = "/home/dev/Ascend/ascend-toolkit"
    install = f"{base}/8.1.RC1"
    # the captured x86_64 8.1.RC1 file with path= rewritten to this user's install: the installer
    # writes the directory it installed to (non-root installs go to ~/Ascend)
    info = corpus_text(f"{VERSION_FILES}/ascend_toolkit_install.info_8.1.RC1_x86_64_vllm-ascend-issue616.txt")
    m.write(
        f"{install}/x86_64-linux/ascend_toolkit_install.info", info.replace("/usr/local/Ascend/ascend-toolkit", base)
    )
    _soc_configs(m, install, "x86_64", _A2_SOCS)
    m.link(f"{base}/latest", "8.1.RC1")
    m.write(f"{base}/set_env.sh", corpus_text(_SET_ENV_800).replace("/usr/local/Ascend/ascend-toolkit", base))
    environ = sourced_environ(m.bin, f"{base}/latest")
    environ["LD_LIBRARY_PATH"] = environ["LD_LIBRARY_PATH"].replace("linux/aarch64", "linux/x86_64")
    return m.host(environ, "/home/dev")


def _site_packages(m: _Machine, packages: dict[str, str]) -> str:
    """constructed: the Python packages a host's image installs (see ``fake_site``)."""
    return fake_site(m.root.parent, packages)


def fake_site(parent: Path, packages: dict[str, str]) -> str:
    """``parent/site`` with dist-info records only (METADATA name/version, WHEEL tagged for this
    interpreter); put on PYTHONPATH, the probe reads it like an installed environment."""
    site = parent / "site"
    tag = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    for name, version in packages.items():
        info = site / f"{name}-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        (info / "WHEEL").write_text(f"Wheel-Version: 1.0\nTag: {tag}-{tag}-linux_x86_64\n")
    return str(site)


_5606 = "npu_smi/910b4-1_25.2.2_2npu_VLLMWorker_TP_vllm-ascend-issue5606.txt"


def _vllm_ascend_image(m: _Machine, torch: str, torch_npu: str) -> FixtureHost:
    """A container of the vllm-ascend release image (its Dockerfile starts FROM the CANN
    8.3.rc2-910b image: https://github.com/vllm-project/vllm-ascend/blob/v0.12.0rc1/Dockerfile)
    on the host of vllm-ascend#5606 (the install.info and npu-smi capture of that issue)."""
    m.write("/.dockerenv", "")
    m.copy("/etc/ascend_install.info", _ETC_INSTALL, 2)  # sample C: what Dockerfiles write
    # constructed: the host's driver is mounted in; npu-smi there prints Version: 25.2.2 and the
    # minimum version.info is Version=
    m.write("/usr/local/Ascend/driver/version.info", "Version=25.2.2\n")
    install = "/usr/local/Ascend/ascend-toolkit/8.3.RC2"
    m.copy(
        f"{install}/aarch64-linux/ascend_toolkit_install.info",
        f"{VERSION_FILES}/ascend_toolkit_install.info_8.3.RC2_aarch64_910B4-1_vllm-ascend-issue5606.txt",
    )
    # the -910b images install Ascend-cann-kernels-910b (github.com/Ascend/cann-container-image)
    m.mkdir(f"{install}/opp/built-in/op_impl/ai_core/tbe/kernel/ascend910b")
    m.mkdir(f"{install}/opp/built-in/op_impl/ai_core/tbe/kernel/config/ascend910b")
    _soc_configs(m, install, "aarch64", _A2_SOCS)
    m.link("/usr/local/Ascend/ascend-toolkit/latest", "8.3.RC2")
    m.copy("/usr/local/Ascend/ascend-toolkit/set_env.sh", _SET_ENV_800)  # same exports in 8.3 (INFERRED)
    m.devices(2, (("0000:0E:00.0", "0xd802", None), ("0000:0F:00.0", "0xd802", None)))
    m.npu_smi({"info": _5606}, npu_ids=(0, 1))
    environ = sourced_environ(m.bin, "/usr/local/Ascend/ascend-toolkit/latest")
    environ["PYTHONPATH"] = _site_packages(m, {"torch": torch, "torch_npu": torch_npu}) + ":" + environ["PYTHONPATH"]
    return m.host(environ, "/root")


def vllm_ascend_v0_12_0rc1(m: _Machine) -> FixtureHost:
    return _vllm_ascend_image(m, "2.8.0+cpu", "2.8.0")


def vllm_ascend_v0_11_0(m: _Machine) -> FixtureHost:
    return _vllm_ascend_image(m, "2.7.1+cpu", "2.7.1")


_BUILDERS: dict[str, Callable[[_Machine], FixtureHost]] = {
    "a2-cann800": a2_cann800,
    "a3-cann850": a3_cann850,
    "310p-duo": duo_310p,
    "container-no-devices": container_no_devices,
    "two-canns-dangling-latest": two_canns_dangling_latest,
    "nonroot-home": nonroot_home,
    "vllm-ascend-v0.12.0rc1": vllm_ascend_v0_12_0rc1,
    "vllm-ascend-v0.11.0": vllm_ascend_v0_11_0,
}
HOST_NAMES = tuple(_BUILDERS)


_950_INFO = "../compat/npu_smi_info_ascend950pr_25.7.rc1_constructed.txt"  # constructed: see its header


def atlas350_cann910(m: _Machine) -> FixtureHost:
    """An Atlas 350 (Ascend 950PR, PCI 0xd806/0x4003) on its own HDK line 25.7.RC1 with CANN 9.1.0
    in the 8.5 layout and *no* Ascend-cann-950-ops installed (no kernel/ascend950 directory).
    Everything is constructed: no capture of a 950 host was found (see the npu-smi file's header)."""
    # constructed: the minimum driver version.info (Version=), the driver line of the Atlas 350
    # (MindCluster 26.1.0 note: Atlas 350 with HDK 25.7.RC1)
    return _atlas350(m, "9.1.0")


def _atlas350(m: _Machine, version: str) -> FixtureHost:
    m.write("/usr/local/Ascend/driver/version.info", "Version=25.7.rc1\n")
    install = _cann_85_layout(m, version)
    m.mkdir(f"{install}/opp/built-in/op_impl/ai_core/tbe/kernel/config")
    # 0xd806 with subsystem 0x4003: "Atlas 350 A5" in ascend-deployer 26.0.0's card_map
    m.devices(1, (("0000:01:00.0", "0xd806", "0x4003"),))
    m.npu_smi({"info": _950_INFO}, npu_ids=(0,))
    return m.host(sourced_environ(m.bin, install), "/root")


_310B_INFO = "npu_smi/310b4_23.0.rc3_NARROWED-by-author_odd.txt"


def atlas200i_dk_a2_cann850(m: _Machine) -> FixtureHost:
    """An Atlas 200I DK A2 board (Ascend 310B4, RC mode: the NPU is the board's SoC, no PCI
    device) as the recorded npu-smi 23.0.rc3 capture shows it, with CANN 8.5.0 in the 8.5 layout and
    *no* Ascend-cann-310b-ops installed (no kernel/ascend310b directory). The CANN 8.5.0 install
    guide's ops table names that package for "Atlas 200I/500 A2 推理产品"
    (compat/sources/hiascend-cann-8.5.0-instg_0093-conda-ops.zh.md)."""
    # constructed: the 310B installer keeps the driver under /var/davinci (tests/probe/test_driver.py);
    # its Version= is the one npu-smi prints in the capture
    m.write("/var/davinci/driver/version.info", "Version=23.0.rc3\n")
    install = _cann_85_layout(m, "8.5.0")
    m.mkdir(f"{install}/opp/built-in/op_impl/ai_core/tbe/kernel/config")
    m.devices(1, ())  # constructed: one /dev/davinci0 and the control nodes; no PCI function in RC mode
    m.npu_smi({"info": _310B_INFO}, npu_ids=(0,))
    return m.host(sourced_environ(m.bin, install), "/root")


def nnal(m: _Machine, version: str, base: str = "/usr/local/Ascend") -> str:
    """NNAL/ATB ``version`` as its run package installs it: ``nnal/atb/<version>/`` with both C++
    ABI builds and ``latest -> <version>``; version.info in the recorded format (corpus
    version_files/*nnal*: indented ``Ascend-cann-atb : <v>`` and ``Ascend-cann-atb Version :
    <v>.B<build>``, constructed build number). Returns the ATB_HOME_PATH of the C++11 build, the
    one the 9.x images select (github:Ascend/cann-container-image@c5a67b3a Dockerfiles)."""
    atb = f"{base}/nnal/atb"
    m.write(
        f"{atb}/{version}/version.info",
        f"    Ascend-cann-atb : {version}\n    Ascend-cann-atb Version : {version}.B100\n    Platform : aarch64\n",
    )
    for variant in ("cxx_abi_0", "cxx_abi_1"):
        m.mkdir(f"{atb}/{version}/atb/{variant}/lib")
    m.link(f"{atb}/latest", version)
    return f"{atb}/latest/atb/cxx_abi_1"


def vllm_ascend_v0_23_0(m: _Machine) -> FixtureHost:
    """The vllm-ascend v0.23.0 release image (Dockerfile FROM quay.io/ascend/cann:9.1.0-910b-ubuntu22.04-py3.12:
    compat/sources/vllm-ascend-v0.23.0-Dockerfile.txt) on a 2 x 910B4-1 host: CANN 9.1.0 in the 8.5
    layout with Ascend-cann-910b-ops, NNAL 9.1.0, and the Python stack of its release row (vllm 0.23.0,
    torch 2.10.0, torch_npu 2.10.0.post4, triton-ascend 3.2.2: compat/sources/vllm-ascend-versioning_policy.md).
    Constructed from those sources; the host's driver (mounted in) is that of vllm-ascend#5606, whose
    npu-smi capture this host prints."""
    m.write("/.dockerenv", "")
    m.write("/usr/local/Ascend/driver/version.info", "Version=25.2.2\n")
    install = _cann_85_layout(m, "9.1.0")
    m.write(f"{install}/aarch64-linux/ascend_ops_install.info", "package_name=Ascend-cann-910b-ops\nversion=9.1.0\n")
    m.mkdir(f"{install}/opp/built-in/op_impl/ai_core/tbe/kernel/ascend910b")
    _soc_configs(m, install, "aarch64", _A2_SOCS)
    atb_home = nnal(m, "9.1.0")
    m.devices(2, (("0000:0E:00.0", "0xd802", None), ("0000:0F:00.0", "0xd802", None)))
    m.npu_smi({"info": _5606}, npu_ids=(0, 1))
    environ = sourced_environ(m.bin, install)
    environ["ATB_HOME_PATH"] = atb_home
    environ["PYTHONPATH"] = _site_packages(m, _V0_23_0) + ":" + environ.get("PYTHONPATH", "")
    return m.host(environ, "/root")


# the Python stack of vllm-ascend v0.23.0's release row (compat/sources/vllm-ascend-versioning_policy.md)
_V0_23_0 = {
    "vllm_ascend": "0.23.0",
    "vllm": "0.23.0",
    "torch": "2.10.0+cpu",  # the x86_64 wheel index's build (see _vllm_ascend_image)
    "torch_npu": "2.10.0.post4",
    "triton_ascend": "3.2.2",
}


def vllm_ascend_v0_23_0_a3(m: _Machine) -> FixtureHost:
    """The vllm-ascend v0.23.0 A3 image (Dockerfile.a3 FROM quay.io/ascend/cann:9.1.0-a3-ubuntu22.04-py3.12:
    compat/sources/vllm-ascend-v0.23.0-Dockerfile.a3.txt) on the A3 host of ``a3-cann850`` (its
    driver 25.2.0), CANN 9.1.0 with Ascend-cann-A3-ops, NNAL 9.1.0 and the release row's Python stack."""
    host = _a3(m, "9.1.0")
    m.write("/.dockerenv", "")
    environ = dict(host.environ, ATB_HOME_PATH=nnal(m, "9.1.0"))
    environ["PYTHONPATH"] = _site_packages(m, _V0_23_0) + ":" + environ.get("PYTHONPATH", "")
    return m.host(environ, "/root")


def mindie_2_1_rc1(m: _Machine) -> FixtureHost:
    """The MindIE 2.1.RC1 image (mindie:2.1.RC1-800I-A2-py311-openeuler24.03-lts) on its Atlas 800I
    A2, as recorded in the corpus note ``_800IA2``: driver and firmware 25.0.rc1.1 (mounted in),
    toolkit 8.2.RC1 with its kernels package, NNAL/ATB 8.2.RC1 and MindIE 2.1.RC1.B152, each file
    the capture placed where the image keeps it; set_env.sh sourced (the 8.0.0 exports, INFERRED
    unchanged in 8.2) and ATB_HOME_PATH set as the image's nnal/atb/set_env.sh does."""
    m.write("/.dockerenv", "")
    _a2_driver_firmware(m)
    _toolkit_821(m)
    m.link("/usr/local/Ascend/ascend-toolkit/latest", "8.2.RC1")
    m.copy("/usr/local/Ascend/ascend-toolkit/set_env.sh", _SET_ENV_800)
    m.copy("/usr/local/Ascend/nnal/atb/8.2.RC1/version.info", _800IA2, 5)
    for variant in ("cxx_abi_0", "cxx_abi_1"):
        m.mkdir(f"/usr/local/Ascend/nnal/atb/8.2.RC1/atb/{variant}/lib")
    m.link("/usr/local/Ascend/nnal/atb/latest", "8.2.RC1")
    m.copy("/usr/local/Ascend/mindie/2.1.RC1/version.info", _800IA2, 6)
    m.link("/usr/local/Ascend/mindie/latest", "2.1.RC1")
    m.devices(8, tuple((bus, "0xd802", None) for bus in A2_BUS_IDS))
    m.npu_smi({"info": _A2_INFO, "info -m": _A2_INFO_M}, npu_ids=tuple(range(8)))
    environ = sourced_environ(m.bin, "/usr/local/Ascend/ascend-toolkit/latest")
    environ["ATB_HOME_PATH"] = "/usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_0"
    return m.host(environ, "/root")


def sglang_npu_950(m: _Machine) -> FixtureHost:
    """sglang's Ascend 950 image (github:sgl-project/sglang@f3415e47 docker/npu-950.Dockerfile,
    compat/sources/sglang-npu-950.Dockerfile.txt: FROM quay.io/ascend/cann:9.1.0-950-ubuntu22.04-py3.12,
    torch 2.10.0, torch_npu 2.10.0.post4, triton-ascend 3.2.2, sglang from main) on the Atlas 350 of
    ``atlas350-cann910``, this time with the image's Ascend-cann-950-ops and NNAL 9.1.0 (the CANN
    image installs both: compat/sources/cann-container-image-9.1.0-beta.3-950-*). Constructed;
    the sglang version is an assumed one (the image installs main)."""
    host = atlas350_cann910(m)
    install = "/usr/local/Ascend/cann-9.1.0"
    m.write("/.dockerenv", "")
    m.write(f"{install}/aarch64-linux/ascend_ops_install.info", "package_name=Ascend-cann-950-ops\nversion=9.1.0\n")
    m.mkdir(f"{install}/opp/built-in/op_impl/ai_core/tbe/kernel/ascend950")
    environ = dict(host.environ, ATB_HOME_PATH=nnal(m, "9.1.0"))
    packages = {"sglang": "0.5.10", "torch": "2.10.0+cpu", "torch_npu": "2.10.0.post4", "triton_ascend": "3.2.2"}
    environ["PYTHONPATH"] = _site_packages(m, packages) + ":" + environ.get("PYTHONPATH", "")
    return m.host(environ, "/root")


# The Python stack of vllm-ascend v0.25.1rc1's images: its requirements.txt pins torch 2.10.0,
# torch-npu 2.10.0.post2 and triton-ascend 3.2.1
# (github:vllm-project/vllm-ascend@9bf964cb4b87c8cd0d6852c41a55b3c29711fa95:requirements.txt, tag v0.25.1rc1),
# its Dockerfiles ARG VLLM_TAG=v0.25.1; the 310P image uninstalls triton-ascend (Dockerfile.310p).
# The release matrix has no v0.25.1rc1 row: its images are the source.
_V0_25_1RC1 = {
    "vllm_ascend": "0.25.1rc1",
    "vllm": "0.25.1",
    "torch": "2.10.0+cpu",  # the x86_64 wheel index's build (see _vllm_ascend_image)
    "torch_npu": "2.10.0.post2",
    "triton_ascend": "3.2.1",
}


def _image_85(m: _Machine, version: str, ops: str, unit: str, packages: dict[str, str]) -> FixtureHost:
    """What an official image built FROM quay.io/ascend/cann:<version>-<chip> adds to a host whose
    driver, CANN layout and npu-smi are already placed: the chip's ops package (its install record
    and kernel directory), NNAL of the CANN's own version (the CANN images install both:
    compat/sources/cann-container-image-ops-packages.txt and the saved cann-container-image
    Dockerfiles), /.dockerenv, ATB_HOME_PATH, and the Python stack on PYTHONPATH."""
    install = f"/usr/local/Ascend/cann-{version}"
    m.write("/.dockerenv", "")
    m.write(f"{install}/aarch64-linux/ascend_ops_install.info", f"package_name={ops}\nversion={version}\n")
    m.mkdir(f"{install}/opp/built-in/op_impl/ai_core/tbe/kernel/{unit}")
    environ = dict(sourced_environ(m.bin, install), ATB_HOME_PATH=nnal(m, version))
    environ["PYTHONPATH"] = _site_packages(m, packages) + ":" + environ.get("PYTHONPATH", "")
    return m.host(environ, "/root")


def vllm_ascend_v0_25_1rc1(m: _Machine) -> FixtureHost:
    """vllm-ascend v0.25.1rc1's A2 image (Dockerfile FROM quay.io/ascend/cann:9.0.1-910b-ubuntu22.04-py3.12:
    compat/sources/vllm-ascend-v0.25.1rc1-Dockerfile.txt) on the 2 x 910B4-1 host of vllm-ascend#5606
    (driver 25.2.2 mounted in): CANN 9.0.1 with Ascend-cann-910b-ops, NNAL 9.0.1, the tag's pins."""
    m.write("/usr/local/Ascend/driver/version.info", "Version=25.2.2\n")
    install = _cann_85_layout(m, "9.0.1")
    _soc_configs(m, install, "aarch64", _A2_SOCS)
    m.devices(2, (("0000:0E:00.0", "0xd802", None), ("0000:0F:00.0", "0xd802", None)))
    m.npu_smi({"info": _5606}, npu_ids=(0, 1))
    return _image_85(m, "9.0.1", "Ascend-cann-910b-ops", "ascend910b", _V0_25_1RC1)


def vllm_ascend_v0_25_1rc1_a3(m: _Machine) -> FixtureHost:
    """vllm-ascend v0.25.1rc1's A3 image (Dockerfile.a3 FROM quay.io/ascend/cann:9.0.1-a3-ubuntu22.04-py3.12)
    on the A3 host of ``a3-cann850`` (driver 25.2.0): CANN 9.0.1 with Ascend-cann-A3-ops, NNAL 9.0.1."""
    _a3(m, "9.0.1")
    return _image_85(m, "9.0.1", "Ascend-cann-A3-ops", "ascend910_93", _V0_25_1RC1)


def vllm_ascend_v0_25_1rc1_a5(m: _Machine) -> FixtureHost:
    """vllm-ascend v0.25.1rc1's Atlas 350 image (Dockerfile.a5 FROM quay.io/ascend/cann:9.0.1-950-ubuntu22.04-py3.12)
    on the Atlas 350 of ``atlas350-cann910`` (driver 25.7.rc1): CANN 9.0.1 with Ascend-cann-950-ops."""
    _atlas350(m, "9.0.1")
    return _image_85(m, "9.0.1", "Ascend-cann-950-ops", "ascend950", _V0_25_1RC1)


_310P_2521 = "npu_smi/310p3_25.2.1_npuid32768_truncated_lmdeploy-issue4272.txt"


def vllm_ascend_v0_25_1rc1_310p(m: _Machine) -> FixtureHost:
    """vllm-ascend v0.25.1rc1's 310P image (Dockerfile.310p FROM
    quay.io/ascend/cann:9.1.0-beta.1-310p-ubuntu22.04-py3.12, no triton-ascend) on the 4 x 310P3
    host of lmdeploy#4272 (its npu-smi 25.2.1 capture; constructed: the driver's minimum
    version.info Version=25.2.1): CANN 9.1.0-beta.1 with Ascend-cann-310p-ops."""
    m.write("/usr/local/Ascend/driver/version.info", "Version=25.2.1\n")
    install = _cann_85_layout(m, "9.1.0-beta.1")
    _soc_configs(m, install, "aarch64", _310P_SOCS)
    m.devices(
        4, tuple((bus, "0xd500", None) for bus in ("0000:01:00.0", "0000:02:00.0", "0000:81:00.0", "0000:82:00.0"))
    )
    m.npu_smi({"info": _310P_2521}, npu_ids=(0, 32, 32768, 32800))
    packages = {k: v for k, v in _V0_25_1RC1.items() if k != "triton_ascend"}
    return _image_85(m, "9.1.0-beta.1", "Ascend-cann-310p-ops", "ascend310p", packages)


def sglang_npu_a3(m: _Machine) -> FixtureHost:
    """sglang's A2/A3 image (github:sgl-project/sglang@066209de docker/npu.Dockerfile,
    compat/sources/sglang-npu.Dockerfile.txt: FROM quay.io/ascend/cann:8.5.0-a3-ubuntu22.04-py3.11,
    torch_npu 2.10.0 of PTA 26.0.0, triton-ascend 3.2.1, sglang from main) on the A3 host of
    ``a3-cann850``: CANN 8.5.0 with Ascend-cann-A3-ops, NNAL 8.5.0. torch is 2.10.0 (+cpu: the
    x86_64 build, as in _vllm_ascend_image): the image pins torch 2.8.0 first, then the torch_npu
    2.10.0 wheel requires torch 2.10.0 (its Requires-Dist, compat/sources/torch-npu-wheel-metadata.json).
    Constructed; the sglang version is an assumed one (the image installs main)."""
    _a3(m, "8.5.0")
    packages = {"sglang": "0.5.10", "torch": "2.10.0+cpu", "torch_npu": "2.10.0", "triton_ascend": "3.2.1"}
    return _image_85(m, "8.5.0", "Ascend-cann-A3-ops", "ascend910_93", packages)


# Hosts built on demand only (not in HOST_NAMES, whose hosts every probe test walks).
_MORE_BUILDERS: dict[str, Callable[[_Machine], FixtureHost]] = {
    "vllm-ascend-v0.23.0": vllm_ascend_v0_23_0,
    "sglang-npu-950": sglang_npu_950,
    "mindie-2.1.RC1": mindie_2_1_rc1,
    "vllm-ascend-v0.23.0-a3": vllm_ascend_v0_23_0_a3,
    "atlas350-cann910": atlas350_cann910,
    "a3-cann900": a3_cann900,
    "vllm-ascend-v0.25.1rc1": vllm_ascend_v0_25_1rc1,
    "vllm-ascend-v0.25.1rc1-a3": vllm_ascend_v0_25_1rc1_a3,
    "vllm-ascend-v0.25.1rc1-a5": vllm_ascend_v0_25_1rc1_a5,
    "vllm-ascend-v0.25.1rc1-310p": vllm_ascend_v0_25_1rc1_310p,
    "sglang-npu-a3": sglang_npu_a3,
    "atlas200i-dk-a2-cann850": atlas200i_dk_a2_cann850,
}


def build_host(name: str, tmp_path: Path) -> FixtureHost:
    """Build fixture machine ``name`` (one of HOST_NAMES, or of _MORE_BUILDERS) under ``tmp_path / name``."""
    return {**_BUILDERS, **_MORE_BUILDERS}[name](_Machine(Path(tmp_path), name))


# --- a JIT front-end's checkout ---------------------------------------------------------------------
# tilelang-ascend is built in its git checkout and put on PYTHONPATH by its install script
# (install_npuir.sh: ``export PYTHONPATH=${TILELANG_PATH}:$PYTHONPATH``); its version is the
# checkout's VERSION file (0.1.4 both before and after the CANN 8.5 changes: version numbers do not
# tell them apart). The sources below stand in for its JIT: what they name, not its code.
TILELANG_CHANGES = {
    # compat/sources/tilelang-ascend-cann-8.5.md: PR #334 passes the pass to bishengir-opt, PR #346
    # adds CANN 8.5's pkg_inc include directory
    "pr334": ("tilelang/jit/jit_npu.py", 'OPT_OPTIONS = ["--adapt-triton-kernel"]\n'),
    "pr346": ("tilelang/jit/jit_npu.py", 'INCLUDE_DIRS = ["include", "pkg_inc", "pkg_inc/profiling"]\n'),
    # the later layout (npuir, 2026-06): the pass named in the TileLang adapter's pass list
    "pass_list": (
        "tilelang/tladapter/transforms/bishengir.py",
        'adapt_triton_kernel = pass_fn("adapt-triton-kernel")\n',
    ),
}


def write_tilelang_checkout(
    root: Path, checkout: str = "/opt/tilelang-ascend", changes: tuple[str, ...] = (), route: str = "npuir"
) -> str:
    """A tilelang-ascend checkout under ``root`` at ``checkout`` with ``changes`` (TILELANG_CHANGES
    keys); ``route`` npuir compiles through bishengir, ascendc_pto through Ascend C. Returns the
    PYTHONPATH entry."""
    base = root / checkout.lstrip("/")
    files = {
        "VERSION": "0.1.4\n",
        "tilelang/__init__.py": "from .version import __version__\n",
        "tilelang/jit/__init__.py": "",
        "tilelang/jit/jit_npu.py": (
            'NPU_COMPILER = "bishengir-compile"\nOPT_TOOL = "bishengir-opt"\n'
            if route == "npuir"
            else 'KERNEL_HEADER = "kernel_operator.h"\n'
        ),
    }
    for change in changes:
        path, line = TILELANG_CHANGES[change]
        files[path] = files.get(path, "") + line
    for path, text in files.items():
        (base / path).parent.mkdir(parents=True, exist_ok=True)
        (base / path).write_text(text)
    return checkout


# --- hostile helpers: programs that hang, flood or leave processes behind -------------------------
# Each writes a script that logs its own pid (and its background child's) to files beside it, so a
# test can check by pid that nothing it started is still running afterwards.


def write_script(path: Path, body: str) -> Path:
    """An executable ``#!/bin/sh`` script at ``path`` (parents created) running ``body``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def hanging_program(path: Path, pids: Path) -> Path:
    """Starts a sleeping grandchild (``sleep 100000 &``), appends its own and that pid to ``pids``,
    then waits for it: a wrapper script whose helper hangs (a wedged driver call)."""
    return write_script(path, f'sleep 100000 &\necho "$$ $!" >> "{pids}"\nwait\n')


def daemon_then(path: Path, pids: Path, then: str) -> Path:
    """Forks a sleeping daemon that keeps stdout/stderr open (``sleep 100000 &``), appends its pid
    to ``pids``, then runs ``then`` and exits: it answers, but its pipes never reach EOF."""
    return write_script(path, f'sleep 100000 &\necho "$!" >> "{pids}"\n{then}\n')


def flooding_program(
    path: Path, size: int, stream: str = "stdout", line: str = "dcmi error -8020", status: int = 1
) -> Path:
    """Prints ``size`` bytes of ``line`` repeated on ``stream`` (stdout or stderr), then exits ``status``."""
    redirect = " >&2" if stream == "stderr" else ""
    return write_script(path, f'yes "{line}" | head -c {size}{redirect}\nexit {status}\n')


def hang_after_info(path: Path, real_npu_smi: Path, pids: Path) -> Path:
    """An npu-smi that answers ``info`` like ``real_npu_smi`` (a fixture host's) and hangs on every
    other query, with a sleeping grandchild: a driver that wedges on the per-board queries."""
    return write_script(
        path, f'[ "$*" = info ] && exec "{real_npu_smi}" info\nsleep 100000 &\necho "$$ $!" >> "{pids}"\nwait\n'
    )


def pids_in(path: Path) -> list[int]:
    """Every pid written to ``path`` by the scripts above ([] when none ran)."""
    return [int(word) for word in path.read_text().split()] if path.exists() else []


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie is not: it has exited, only its status is left)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            state = handle.read().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def all_gone(pids: list[int], within: float = 5.0) -> bool:
    """Whether every pid has stopped running, allowing ``within`` seconds: a SIGKILL is delivered
    asynchronously, so a process killed a moment ago may still be seen running."""
    import time

    end = time.monotonic() + within
    while any(running(pid) for pid in pids):
        if time.monotonic() > end:
            return False
        time.sleep(0.02)
    return True
