"""Pure helpers the layer modules share (this module registers no check): facts derived from a
snapshot (and the compat matrix).

* whether the machine has an Ascend NPU at all (``has_npu_hardware``);
* the set_env.sh command that activates an install (``set_env_line``);
* the driver version and the HDK rules that apply (npu-smi or version.info; compute units, cards);
* which SoCs and compute units this machine's NPUs are (npu-smi names, A3 board info, PCI ids);
* which CANN installs a check judges (the active one, else every one: any could be sourced);
* versions parsed without raising (odd strings become "not comparable" findings, not tracebacks);
* CANN's own custom-operator ABI gate, reproduced from its source (``opp_abi_accepts``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ascenv.errors import InvalidVersion
from ascenv.model import CannInstall, Snapshot, Vendor
from ascenv.pci import npu_functions
from ascenv.versions import AscendVersion, ProductLine


def has_npu_hardware(snap: Snapshot) -> bool:
    """Any sign of an Ascend device: PCI function, device node, chip row or installed driver."""
    return bool(
        npu_functions(snap.devices.pci)
        or any(n.exists and "davinci" in n.path for n in snap.devices.nodes)
        or snap.npu.chips
        or snap.driver.version
    )


def set_env_line(install: CannInstall) -> str:
    """The exact command that gives a shell the environment of ``install``."""
    if install.set_env:
        return f"source {install.set_env}"
    parent, name = install.path.rsplit("/", 1)
    if name.startswith("cann"):
        # 8.5+: set_env.sh sits inside the version directory (cann-8.5.0/set_env.sh).
        return f"source {install.path}/set_env.sh"
    # Legacy layout: the package directory's set_env.sh exports ASCEND_TOOLKIT_HOME=<dir>/latest
    # (corpus version_files/set_env.sh_8.0.0_*), so it reaches this install only through `latest`.
    return f"ln -sfn {install.path} {parent}/latest && source {parent}/set_env.sh"


def driver_version(snap: Snapshot) -> Optional[str]:
    """The installed driver's version, else the one npu-smi reports running."""
    return snap.driver.version or snap.npu.driver_version


def driver_file(snap: Snapshot) -> tuple[str, ...]:
    """Where the driver version was read: its version.info, else the npu-smi command."""
    file = snap.driver.version_file
    return (file.path,) if file else ((snap.npu.source,) if snap.npu.source else ())


@dataclass(frozen=True)
class DeviceSoc:
    name: str  # as npu-smi printed it ("910B4", "Ascend910") or the PCI chip family
    soc_version: Optional[str]  # ATC --soc_version (Ascend910B4); None when it cannot be known
    compute_unit: Optional[str]  # kernels family (ascend910b); None without the matrix
    source: str  # the command or sysfs path it came from


def device_socs(snap: Snapshot, matrix: Any) -> tuple[DeviceSoc, ...]:
    """The distinct SoCs of the NPUs npu-smi lists; the PCI ids add the compute unit when the
    names cannot give it (A3 prints ``Ascend910``: its SoC needs the board's Chip/NPU Name)."""
    from ascenv.compat import soc_version_for_npu_smi

    boards = {b.npu: b for b in snap.npu.boards}
    found: dict = {}
    for chip in snap.npu.chips:
        if not chip.name:
            continue
        board = boards.get(chip.npu)
        chip_name = board.fields.get("Chip Name") if board else None
        npu_name = board.fields.get("NPU Name") if board else None
        row = matrix.soc_for_npu_smi(chip.name, board_chip_name=chip_name, board_npu_name=npu_name) if matrix else None
        # the ATC target comes from the name rule only: a row found by its npu-smi name (Ascend950PR)
        # gives the compute unit, not the suffixed SoC the board info would give
        soc = soc_version_for_npu_smi(chip.name, board_chip_name=chip_name, board_npu_name=npu_name)
        entry = DeviceSoc(chip.name, soc, row.compute_unit if row else None, snap.npu.source or "npu-smi info")
        found.setdefault((entry.soc_version, entry.compute_unit, entry.name), entry)
    if matrix is not None and not any(e.compute_unit for e in found.values()):
        for function in npu_functions(snap.devices.pci):
            match = matrix.card_for_pci(
                function.device, function.subsystem_vendor, function.subsystem_device, arch=snap.host.arch
            )
            if match.device is not None and match.device.compute_unit:
                entry = DeviceSoc(
                    match.device.chip, None, match.device.compute_unit, f"/sys/bus/pci/devices/{function.address}"
                )
                found.setdefault((None, entry.compute_unit, entry.name), entry)
    return tuple(found.values())


def device_units(snap: Snapshot, matrix: Any) -> tuple[str, ...]:
    return tuple(sorted({s.compute_unit for s in device_socs(snap, matrix) if s.compute_unit}))


def hdk_context(snap: Snapshot, matrix: Any) -> tuple[tuple[str, ...], Optional[str]]:
    """What HDK rules apply here: compute units and card names, and the HDK numbering line."""
    units = {s.compute_unit for s in device_socs(snap, matrix) if s.compute_unit}
    cards = {b.product_name for b in snap.npu.boards if b.product_name}
    if matrix is not None:  # the PCI card model (0xd806/0x4003: "Atlas 350 A5", ascend-deployer's card_map)
        for function in npu_functions(snap.devices.pci):
            match = matrix.card_for_pci(
                function.device, function.subsystem_vendor, function.subsystem_device, arch=snap.host.arch
            )
            cards |= {match.card} if match.card else set()
    return tuple(sorted(units | cards)), ("ascend950" if "ascend950" in units else None)


def judged_installs(snap: Snapshot) -> tuple[CannInstall, ...]:
    """The active install; with none sourced, every install (the user may source any of them)."""
    active = [i for i in snap.cann.installs if i.path == snap.cann.active]
    return tuple(active) or snap.cann.installs


def active_install(snap: Snapshot) -> Optional[CannInstall]:
    """The install the environment selects, else the only one there is."""
    installs = judged_installs(snap)
    return installs[0] if len(installs) == 1 else None


def parse(text: Optional[str], line: ProductLine) -> Optional[AscendVersion]:
    """An Ascend version, or None for text no rule can order."""
    if not text:
        return None
    try:
        return AscendVersion.parse(text, line=line)
    except InvalidVersion:
        return None


def not_comparable(text: Optional[str], line: ProductLine) -> Optional[str]:
    """Why ``text`` cannot be compared with the compatibility tables, or None if it can."""
    if not text:
        return f"no {line.value} version recorded"
    version = parse(text, line)
    if version is None:
        return f"{line.value} version {text!r} is not comparable (not a {line.value} version string ascenv can order)"
    if version.is_test_build:
        return f"{line.value} version {text!r} is an internal T build: not comparable with release numbers"
    return None


# --- CANN's custom-operator ABI gate ------------------------------------------------------------
# github:hicann/metadef base/common/plugin/plugin_manager.cc (@786891c02e5a7f509c6ffffd854e33ddefe3527c,
# same code @080123c55a4d2e833e74ca47aee39ca69ad12cf7): GetRequiredOppAbiVersion,
# GetEffectiveVersion, IsVendorVersionValid, CheckOppAndCompilerVersions. The runtime reads
# ``required_opp_abi_version`` from its compiler/version.info (else runtime/version.info), a
# vendor's ``...compiler_version=`` from <vendor>/version.info; a vendor outside every range is
# left out of the search path with only a GELOGW warning in the log.

_EFFECTIVE_MINOR_DIGITS = 5


def effective_version(text: str) -> Optional[int]:
    """``major`` followed by ``minor`` right-padded with zeros to 5 digits: 7.7.0.1.238 → 770000,
    8.5.0 → 850000. None where CANN's GetEffectiveVersion fails."""
    parts = text.strip().split(".")
    if len(parts) < 2:
        return None
    digits = parts[0] + parts[1].ljust(_EFFECTIVE_MINOR_DIGITS, "0")
    if not (digits.isascii() and digits.isdigit()) or int(digits) > 0xFFFFFFFF:
        return None
    return int(digits)


def opp_abi_ranges(text: str) -> Optional[tuple[tuple[int, int], ...]]:
    """``">=6.3, <=7.7"`` (also ``">=6.3, <=6.4, 6.4"``) → ((630000, 770000),). None where CANN
    rejects the value; then it refuses every versioned vendor."""
    items = [item.strip() for item in text.replace('"', "").strip().split(",")]
    ranges = []
    while items:
        first = items.pop(0)
        if first.startswith(">="):
            if not items or not items[0].startswith("<="):
                return None
            low, high = effective_version(first[2:]), effective_version(items.pop(0)[2:])
            if low is None or high is None:
                return None
            ranges.append((low, high))
        else:
            only = effective_version(first)
            if only is None:
                return None
            ranges.append((only, only))
    return tuple(ranges)


def vendor_compiler_versions(vendor: Vendor) -> tuple[str, ...]:
    """The versions CANN reads from the first ``...compiler_version=`` line of <vendor>/version.info
    (``custom_opp_compiler_version=7.7.0.1.238``, written by the project template's
    cmake/util/gen_version_info.sh); several are comma-separated."""
    for key, value in vendor.version_info.items():
        if key.endswith("compiler_version") and value.strip():
            return tuple(v.strip() for v in value.split(","))
    return ()


def accepted(effective: int, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(low <= effective <= high for low, high in ranges)


def describe_ranges(ranges: tuple[tuple[int, int], ...]) -> str:
    return ", ".join(f"[{low}, {high}]" for low, high in ranges)
