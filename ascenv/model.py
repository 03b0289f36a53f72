"""The shared vocabulary: a machine snapshot and the findings about it.

Frozen dataclasses only; this module imports nothing of ascenv. Version strings are kept as the
raw text that was read (CANN, driver and firmware strings are not PEP 440): code that compares
them parses them with ``ascenv.versions``. Every record says where it was read (``source``: a
file path or a command line), so a finding can point at its evidence.

The JSON form (``ascenv snapshot --format json``) is ``serde.to_data(snapshot)`` plus the derived
``python.packages`` map; names here are a public interface (``"schema": 1``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Optional

SNAPSHOT_SCHEMA = 1


# --- problems met while probing -------------------------------------------------------------


@dataclass(frozen=True)
class ProbeError:
    """A probe that could not do its job; the snapshot stays usable, with this recorded."""

    probe: str  # "npu-smi", "cann", "python", "devices", ...
    kind: str  # "not-found", "timeout", "exit-status", "permission", "parse", "device-busy", ...
    message: str  # what happened, in words, quoting the tool
    source: str = ""  # the command or file
    code: Optional[str] = None  # a tool's own code, e.g. "-8020" (DCMI) or "EZ1001"
    meaning: Optional[str] = None  # what the code means, when known


# --- npu-smi ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Chip:
    """One chip row pair of ``npu-smi info`` (an NPU card holds 1, 2 or 4 chips)."""

    npu: int  # the NPU (card) id: the ``-i`` argument of npu-smi, not the torch device index
    chip: int  # chip index inside the NPU
    name: Optional[str]  # as printed: "910B4-1", "310P3", "Ascend910" (A3), ...
    health: Optional[str]  # OK, Warning, Alarm, Critical, UNKNOWN
    bus_id: Optional[str]  # "0000:C1:00.0"; None for NA; redacted ids kept as printed
    device_id: Optional[int] = None  # logic device id (Device column of 310/310P/310B tables)
    phy_id: Optional[int] = None  # physical chip id (A3 "Phy-ID" column)
    power_w: Optional[float] = None
    temp_c: Optional[int] = None
    aicore_percent: Optional[int] = None
    hugepages_used: Optional[int] = None
    hugepages_total: Optional[int] = None
    memory_used_mb: Optional[int] = None  # DDR on 910-class, device memory on 310-class
    memory_total_mb: Optional[int] = None
    hbm_used_mb: Optional[int] = None
    hbm_total_mb: Optional[int] = None


@dataclass(frozen=True)
class NpuProcess:
    npu: int
    chip: Optional[int]
    pid: Optional[int]
    name: Optional[str]  # None when npu-smi prints an empty name; truncated names as printed
    memory_mb: Optional[int]
    container_pid: Optional[int] = None  # 26.x "Process id in container" column


@dataclass(frozen=True)
class ChipMapEntry:
    """A row of ``npu-smi info -m``: which logical device (what torch sees) a chip is."""

    npu: int
    chip: int
    logic_id: Optional[int]  # None for MCU rows
    name: str
    phy_id: Optional[int] = None


@dataclass(frozen=True)
class Board:
    """``npu-smi info -t board -i N``: the most reliable driver and firmware version query."""

    npu: int
    software_version: Optional[str] = None  # the driver version
    firmware_version: Optional[str] = None
    compatibility: Optional[str] = None  # OK / NOK / UNKNOWN / NOT SUPPORT
    product_name: Optional[str] = None
    pci_device_id: Optional[str] = None  # "0xD802"
    pci_subsystem_id: Optional[str] = None
    chip_count: Optional[int] = None
    fields: dict[str, str] = field(default_factory=dict)  # every key : value as printed


@dataclass(frozen=True)
class NpuInfo:
    source: str = ""  # the command that was run, or the file that was read
    npu_smi_version: Optional[str] = None
    driver_version: Optional[str] = None
    layout: Optional[str] = None  # F1 (80), F2a (94), F2 (106), F3 (98), F4 (116), F5 (950)
    chips: tuple[Chip, ...] = ()
    processes: tuple[NpuProcess, ...] = ()
    # True only when the output held a whole process table (every NPU has its rows or its "No
    # running processes found" line): only then does an empty ``processes`` mean "none". False
    # (also for snapshots written before this field) means the list may miss processes.
    processes_complete: bool = False
    chip_map: tuple[ChipMapEntry, ...] = ()
    boards: tuple[Board, ...] = ()
    warnings: tuple[str, ...] = ()  # e.g. "capture ends before the closing line"
    errors: tuple[ProbeError, ...] = ()


# The warning that says why ``NpuInfo.processes`` may be incomplete (see processes_note).
PROCESSES_UNKNOWN = "processes unknown: "


def processes_note(info: NpuInfo) -> Optional[str]:
    """Why ``info.processes`` may miss processes (None when the list is whole)."""
    if info.processes_complete:
        return None
    for warning in info.warnings:
        if warning.startswith(PROCESSES_UNKNOWN):
            return warning[len(PROCESSES_UNKNOWN) :]
    return "no whole npu-smi process table was read"


# --- install files ---------------------------------------------------------------------------


@dataclass(frozen=True)
class VersionFile:
    """A ``key=value`` version file (driver/firmware ``version.info``, ``/etc/ascend_install.info``)."""

    path: str
    fields: dict[str, str] = field(default_factory=dict)

    def get(self, key: str) -> Optional[str]:
        """Case-insensitive lookup (``Version`` vs ``version`` differs between packages)."""
        lowered = key.lower()
        for k, v in self.fields.items():
            if k.lower() == lowered:
                return v
        return None


@dataclass(frozen=True)
class DriverInfo:
    version: Optional[str] = None
    path: Optional[str] = None  # install dir, e.g. /usr/local/Ascend/driver
    version_file: Optional[VersionFile] = None
    loaded: Optional[bool] = None  # kernel module present (/sys/module or /proc/modules)
    errors: tuple[ProbeError, ...] = ()


@dataclass(frozen=True)
class FirmwareInfo:
    version: Optional[str] = None
    source: str = ""  # firmware/version.info or "npu-smi info -t board -i N"
    version_file: Optional[VersionFile] = None
    errors: tuple[ProbeError, ...] = ()


@dataclass(frozen=True)
class CannInstall:
    """One CANN installation (toolkit, nnae, nnrt or the 8.5+ ``cann-<ver>`` layout)."""

    path: str  # the version directory, e.g. /usr/local/Ascend/ascend-toolkit/8.0.0
    kind: str  # "toolkit", "nnae", "nnrt", "cann"
    version: Optional[str] = None  # install.info ``version=`` (8.0.RC2, 8.2.RC1.alpha001, ...)
    innerversion: Optional[str] = None
    arch: Optional[str] = None
    info_file: Optional[str] = None  # the ascend_*_install.info it was read from
    info: dict[str, str] = field(default_factory=dict)
    version_cfg: dict[str, str] = field(default_factory=dict)  # raw key=value of version.cfg
    compiler_version: Optional[str] = None  # compiler/version.info Version= (e.g. 7.7.0.1.238)
    required_opp_abi_version: Optional[str] = None
    opp_version: Optional[str] = None
    kernels: tuple[str, ...] = ()  # compute units with installed kernels/ops (ascend910b, ...)
    socs: tuple[str, ...] = ()  # platform_config/*.ini: SoCs it can target (Ascend910B4, ...)
    set_env: Optional[str] = None  # the set_env.sh that activates it
    links: tuple[str, ...] = ()  # symlinks that lead here (.../latest, /usr/local/Ascend/cann)


@dataclass(frozen=True)
class Link:
    path: str
    target: str  # as stored in the link
    resolved: Optional[str]  # None when it dangles
    dangling: bool


# ``CannInfo.active_reason`` when no variable selects an install.
NOT_SOURCED = "set_env.sh not sourced"


@dataclass(frozen=True)
class CannInfo:
    installs: tuple[CannInstall, ...] = ()
    active: Optional[str] = None  # path of the install the environment selects, if any
    active_reason: str = ""  # e.g. "ASCEND_HOME_PATH", "ascend-toolkit/latest"
    links: tuple[Link, ...] = ()
    errors: tuple[ProbeError, ...] = ()


# --- devices, environment, host ---------------------------------------------------------------


@dataclass(frozen=True)
class PciDevice:
    address: str  # 0000:c1:00.0
    vendor: str  # 0x19e5
    device: str  # 0xd802
    subsystem_vendor: Optional[str] = None
    subsystem_device: Optional[str] = None
    driver: Optional[str] = None  # bound kernel driver, None when unbound
    pci_class: Optional[str] = None  # 0x120000 accelerator; 0x19e5 also makes bridges, NICs (Kunpeng hosts)


@dataclass(frozen=True)
class DeviceNode:
    path: str  # /dev/davinci0, /dev/davinci_manager, ...
    exists: bool
    accessible: Optional[bool] = None  # openable read/write by the current user


@dataclass(frozen=True)
class Devices:
    pci: tuple[PciDevice, ...] = ()
    nodes: tuple[DeviceNode, ...] = ()
    in_container: Optional[bool] = None
    container_evidence: Optional[str] = None  # /.dockerenv, cgroup line, ...
    errors: tuple[ProbeError, ...] = ()


@dataclass(frozen=True)
class PathEntry:
    """One entry of a search-path variable (PATH, LD_LIBRARY_PATH, ASCEND_CUSTOM_OPP_PATH, ...)."""

    value: str
    exists: Optional[bool] = None
    duplicate: bool = False  # seen earlier in the same variable
    cann_path: Optional[str] = None  # the CANN install it points into, if any


@dataclass(frozen=True)
class EnvInfo:
    variables: dict[str, str] = field(default_factory=dict)  # the Ascend-related variables
    paths: dict[str, tuple[PathEntry, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class HostInfo:
    os_id: Optional[str] = None
    os_version: Optional[str] = None
    os_name: Optional[str] = None
    kernel: Optional[str] = None
    arch: Optional[str] = None  # uname -m: aarch64, x86_64
    glibc: Optional[str] = None
    cpu: Optional[str] = None
    cpu_count: Optional[int] = None
    memory_total_mb: Optional[int] = None
    hostname: Optional[str] = None


# --- python ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Distribution:
    name: str  # as in METADATA
    version: str
    location: str  # the sys.path entry it was found in
    installer: Optional[str] = None
    wheel_tags: tuple[str, ...] = ()  # from WHEEL, e.g. cp311-cp311-manylinux_2_17_aarch64
    record_hash: Optional[str] = None  # sha256 over RECORD (lock uses it)

    @property
    def dist_info(self) -> str:
        """The ``.dist-info`` directory an installer wrote for it. A wheel's file and dist-info names
        escape ``-`` in the project name as ``_`` (``-`` separates their fields: binary distribution
        format), so METADATA's ``Name: triton-ascend`` (the 3.2.0 wheel) and ``Name: vllm-ascend``
        (0.9.1) live in ``triton_ascend-3.2.0.dist-info`` and ``vllm_ascend-0.9.1.dist-info``; case
        and dots are kept as older installers kept them."""
        return f"{self.location}/{self.name.replace('-', '_')}-{self.version}.dist-info"


@dataclass(frozen=True)
class PythonInfo:
    executable: Optional[str] = None
    version: Optional[str] = None  # "3.11.7"
    implementation: Optional[str] = None
    platform: Optional[str] = None  # sysconfig.get_platform()
    distributions: tuple[Distribution, ...] = ()
    errors: tuple[ProbeError, ...] = ()
    # read from the files of an environment under --root (probe/root_python.py), no interpreter run:
    # ``executable`` is then a path inside the root
    from_files: bool = False

    @property
    def packages(self) -> dict[str, str]:
        """Normalised name → version of the first distribution that wins on sys.path."""
        result: dict[str, str] = {}
        for dist in self.distributions:
            result.setdefault(normalize_name(dist.name), dist.version)
        return result


def normalize_name(name: str) -> str:
    """PEP 503 name normalisation (torch_npu == torch-npu == Torch.NPU)."""
    import re

    return re.sub(r"[-_.]+", "-", name).lower()


# --- custom operator vendors ------------------------------------------------------------------


# ``Vendor.priority`` of a vendor directory present on disk that CANN does not search (neither
# ASCEND_CUSTOM_OPP_PATH nor config.ini names it).
UNLISTED = -1


@dataclass(frozen=True)
class VendorLibrary:
    kind: str  # proto, tiling, opapi
    path: str  # relative to the vendor directory
    dir_arch: Optional[str] = None  # from lib/linux/<arch>/
    elf_arch: Optional[str] = None  # from the ELF header; None when not an ELF file


@dataclass(frozen=True)
class Vendor:
    name: str
    path: str
    origin: str  # "config.ini" or "ASCEND_CUSTOM_OPP_PATH"
    priority: int  # 0 = searched first
    exists: bool = True
    version_info: dict[str, str] = field(default_factory=dict)
    compute_units: tuple[str, ...] = ()  # op_impl/ai_core/tbe/kernel/<unit> directories
    manifest: Optional[str] = None  # path of an ascenv build manifest beside it
    manifest_digest: Optional[str] = None
    # what ATC, the runtime and aclnn need of the tree (ascenv.vendor_layout); False in older
    # snapshots, whose vendor trees were not read
    layout_read: bool = False
    ops_info: dict[str, tuple[str, ...]] = field(default_factory=dict)  # unit -> aic-<unit>-ops-info.json OpTypes
    kernel_ops: dict[str, tuple[str, ...]] = field(default_factory=dict)  # unit -> kernel/config/<unit> OpTypes
    kernel_binaries: dict[str, int] = field(default_factory=dict)  # unit -> number of kernel .o files
    libraries: tuple[VendorLibrary, ...] = ()  # op proto, tiling and op_api libraries
    aclnn_headers: tuple[str, ...] = ()  # op_api/include/aclnn_*.h
    # an ASCEND_CUSTOM_OPP_PATH entry that is an install root: the vendors below its vendors/
    install_root_of: Optional[tuple[str, ...]] = None
    problems: tuple[str, ...] = ()  # files of the tree that could not be read as CANN reads them


@dataclass(frozen=True)
class VendorConfig:
    path: Optional[str] = None  # $ASCEND_OPP_PATH/vendors/config.ini
    load_priority: tuple[str, ...] = ()  # from the first line only, as CANN reads it
    problems: tuple[str, ...] = ()


# --- ABI: torch_npu's libraries as ld.so would bind them (ascenv.abi) -------------------------


@dataclass(frozen=True)
class AbiUnresolved:
    """An undefined, non-weak dynamic symbol no library of the load order defines."""

    library: str  # machine path of the library that references it
    symbol: str  # mangled, as in the ELF file
    version: Optional[str] = None  # the version it asks for (GLIBC_2.38), if any
    demangled: Optional[str] = None  # c++filt's reading, when it was at hand
    expected_from: Optional[str] = None  # the DT_NEEDED library it most likely comes from
    layer: Optional[str] = None  # torch, cann, nnal, driver, glibc, libstdc++, python
    # the same function defined under the other C++ ABI (_GLIBCXX_USE_CXX11_ABI), and where
    other_abi_twin: Optional[str] = None
    other_abi_in: Optional[str] = None


@dataclass(frozen=True)
class AbiMissingLibrary:
    """A DT_NEEDED library found nowhere ld.so would look."""

    name: str
    needed_by: str
    layer: Optional[str] = None
    searched: tuple[str, ...] = ()


@dataclass(frozen=True)
class AbiMissingVersion:
    """A symbol version (GLIBC_2.38, GLIBCXX_3.4.30) the library that must define it does not."""

    library: str
    version: str
    file: str  # the DT_NEEDED name that must define it
    provider: str  # where that library was found
    newest: Optional[str] = None  # the newest version of that family it does define
    layer: Optional[str] = None


@dataclass(frozen=True)
class AbiInfo:
    read: bool = False  # False: not probed (an older snapshot, or no torch_npu to read)
    package: Optional[str] = None  # "torch-npu 2.5.1"
    libraries: tuple[str, ...] = ()  # the libraries the check starts from (what an import opens)
    loaded: tuple[str, ...] = ()  # the load order ld.so would build, machine paths
    # of ``loaded``, what ``import torch_npu`` loads; the rest (libop_plugin_atb.so) is opened later,
    # when a feature needs it, so what it lacks fails that feature, not the import
    imported: tuple[str, ...] = ()
    # of ``loaded``, the libraries whose references were bound (torch_npu's and the vendors'):
    # triage rules an undefined symbol out only in one of these (empty in older snapshots)
    checked: tuple[str, ...] = ()
    ld_library_path: tuple[str, ...] = ()  # the recorded LD_LIBRARY_PATH the search used
    unresolved: tuple[AbiUnresolved, ...] = ()
    missing: tuple[AbiMissingLibrary, ...] = ()
    versions: tuple[AbiMissingVersion, ...] = ()
    problems: tuple[str, ...] = ()  # files that could not be read as ELF, and why


# --- the layer above torch_npu (ascenv.probe.stack) -------------------------------------------


@dataclass(frozen=True)
class StackPart:
    """A part of the stack above torch_npu, read from its files and never imported: NNAL/ATB and
    MindIE from their install's ``version.info``, triton-ascend, vllm-ascend, vllm and sglang from
    their dist-info, tilelang from its source tree on PYTHONPATH or its dist-info."""

    name: str  # nnal-atb, mindie, triton-ascend, vllm-ascend, vllm, sglang, tilelang
    version: Optional[str]  # as written: 8.2.RC1, 2.1.RC1, 3.2.1, 0.23.0
    path: str  # the install directory, or the dist-info directory
    source: str  # the file the version was read from
    build: Optional[str] = None  # the build the file names: 8.2.RC1.B150, 2.1.RC1.B152
    abi_variants: tuple[str, ...] = ()  # ATB: the C++ ABI builds installed (cxx_abi_0, cxx_abi_1)
    abi_selected: Optional[str] = None  # ATB: the build ATB_HOME_PATH (nnal/atb/set_env.sh) selects
    wheel_tags: tuple[str, ...] = ()  # a wheel's tags (manylinux_2_27_aarch64: its glibc floor)
    compiler: Optional[str] = None  # triton-ascend: the bishengir-compile it would run
    compiler_from: Optional[str] = None  # bundled, PATH, TRITON_NPU_COMPILER_PATH; None: not looked for
    # a JIT front-end read from its Python sources (tilelang): the strings looked for in them (what
    # compat/stacks.toml's [[jit_change]] rows name) and those found; () / None: not read
    sought: tuple[str, ...] = ()
    found: Optional[tuple[str, ...]] = None


# --- the snapshot ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    schema: int = SNAPSHOT_SCHEMA
    created: str = ""  # ISO 8601 UTC
    root: str = "/"
    ascenv_version: str = ""
    host: HostInfo = HostInfo()
    npu: NpuInfo = NpuInfo()
    driver: DriverInfo = DriverInfo()
    firmware: FirmwareInfo = FirmwareInfo()
    install_info: Optional[VersionFile] = None  # /etc/ascend_install.info
    cann: CannInfo = CannInfo()
    devices: Devices = Devices()
    env: EnvInfo = EnvInfo()
    python: PythonInfo = PythonInfo()
    vendors: tuple[Vendor, ...] = ()
    vendor_config: VendorConfig = VendorConfig()
    errors: tuple[ProbeError, ...] = ()
    abi: AbiInfo = AbiInfo()
    stack: tuple[StackPart, ...] = ()  # empty in snapshots written before the stack was probed


# --- findings ----------------------------------------------------------------------------------


class Severity(str, enum.Enum):
    ERROR = "error"
    WARN = "warn"
    INFO = "info"
    OK = "ok"


@dataclass(frozen=True)
class FindingDetails:
    """What tools read beside the words: the ABI checks' unbound symbols, libraries and versions."""

    unresolved: tuple[AbiUnresolved, ...] = ()
    missing: tuple[AbiMissingLibrary, ...] = ()
    versions: tuple[AbiMissingVersion, ...] = ()


@dataclass(frozen=True)
class Finding:
    id: str  # stable, e.g. "ASC-CANN-DRIVER"
    severity: Severity
    layer: str  # driver, firmware, cann, kernels, python, torch_npu, vendors, devices, env, npu
    title: str
    found: str = ""
    expected: str = ""
    evidence: tuple[str, ...] = ()  # files or commands it came from
    fix: str = ""  # a command, a package version, a flag
    source: str = ""  # where the fact behind the verdict is published (a URL where there is one)
    data_as_of: str = ""  # for verdicts from the compatibility data: the day it was last checked
    details: Optional[FindingDetails] = None  # machine-readable particulars (the ABI checks' symbols)
