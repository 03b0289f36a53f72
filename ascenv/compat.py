"""The compatibility matrix: ``compat/*.toml`` loaded, validated and queried.

``load(directory)`` reads the three shipped files, checks every key (errors name the file and
the key path: ``compat/torch_npu.toml: releases[12].cann: expected string``), parses every version
into ``ascenv.versions`` types and returns a frozen ``Matrix``. The queries are what the doctor
checks and the fix suggester need; they return rows with their provenance (status + sources),
so a finding can cite its source and soften INFERRED/CONFLICT facts.
"""

from __future__ import annotations

import enum
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from packaging.version import Version

from ascenv import paths
from ascenv.errors import DataFileError
from ascenv.versions import (
    AscendVersion,
    InvalidVersion,
    ProductLine,
    VersionRange,
    parse_range_list,
    python_version,
    split_local,
    torch_release,
)

SCHEMA = 1
FILES = ("cann.toml", "torch_npu.toml", "hardware.toml")


class Status(str, enum.Enum):
    """How sure a row is (compat-sources/README.md: INFERRED and CONFLICT keep their status)."""

    DOCUMENTED = "documented"
    INFERRED = "inferred"
    CONFLICT = "conflict"


@dataclass(frozen=True)
class Provenance:
    status: Status
    source: tuple[str, ...]  # URLs or repo@commit:path, as cited in compat-sources
    notes: tuple[str, ...] = ()
    conflict: Optional[str] = None  # for CONFLICT rows: the other value and who says it

    @property
    def url(self) -> str:
        """The first source as a link: ``github:owner/repo@commit:path`` becomes its GitHub
        URL; a citation without a public address (a wheel's file) is returned as written."""
        return source_url(self.source[0])


_GITHUB = re.compile(r"github:([\w.-]+/[\w.-]+)@([0-9a-fA-F]{7,40}):(\S+)")
_URL = re.compile(r"https?://[^\s)]+")


def source_url(citation: str) -> str:
    """A citation of the data files as a URL where it has one (see ``Provenance.url``)."""
    match = _GITHUB.match(citation.strip())
    if match:
        repo, commit, path = match.groups()
        return f"https://github.com/{repo}/blob/{commit}/{path}"
    found = _URL.search(citation)
    return found.group(0) if found else citation.strip()


# --- rows ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CannRelease:
    version: AscendVersion
    chips: tuple[str, ...]  # compute units with a documented kernels/ops package or chip support
    packages: Mapping[str, str]  # compute unit → kernels/ops package name
    packages_inferred: Mapping[str, str]  # same, where the source says INFERRED
    innerversion: Optional[AscendVersion]  # the toolkit's Innerversion as seen installed
    toolkit_compatible_version: tuple[VersionRange, ...]  # driver trains it accepts (semantics INFERRED)
    provenance: Provenance

    def package_for(self, compute_unit: str) -> Optional[tuple[str, Status]]:
        """The kernels/ops package a SoC family needs, with how sure that is."""
        if compute_unit in self.packages:
            return self.packages[compute_unit], self.provenance.status
        if compute_unit in self.packages_inferred:
            return self.packages_inferred[compute_unit], Status.INFERRED
        return None


class HdkKind(str, enum.Enum):
    MATCHED = "matched"  # shipped/installed together with the CANN: recommended
    COMPATIBLE = "compatible"  # in Huawei's compatibility list
    MINIMUM = "minimum"  # documented floor
    INCOMPATIBLE = "incompatible"  # explicitly "N" in Huawei's list
    KNOWN_WORKING = "known-working"  # paired in an install guide, older than matched


@dataclass(frozen=True)
class HdkRule:
    cann: tuple[VersionRange, ...]
    kind: HdkKind
    hdk: tuple[VersionRange, ...]
    hdk_text: tuple[str, ...]  # as written ("25.0.X", "24.1.RC2") for messages
    driver: Optional[AscendVersion]  # driver .run version in the matched bundle, when it differs
    applies_to: tuple[str, ...]  # compute units / product names; empty = all of its HDK line
    hdk_line: Optional[str]  # None = the A2/A3/910/310P numbering; "ascend950" = Atlas 350/850/950
    provenance: Provenance

    def covers_cann(self, cann: AscendVersion) -> bool:
        return any(r.contains(cann) for r in self.cann)

    def contains_driver(self, driver: AscendVersion) -> bool:
        if self.driver is not None and (driver == self.driver or driver.startswith(self.driver)):
            return True
        return any(r.contains(driver) for r in self.hdk)

    @property
    def floor(self) -> AscendVersion:
        """The lowest driver the rule names (for minimum rules)."""
        return min(r.lower for r in self.hdk if r.lower is not None)


@dataclass(frozen=True)
class CompilerVersion:
    cann: AscendVersion
    version: AscendVersion  # ProductLine.COMPONENT
    read_from: str  # which file/key it was read from
    provenance: Provenance


class TorchPin(str, enum.Enum):
    """What a torch_npu wheel's Requires-Dist says about torch (compat.md §0 rule 1)."""

    NONE = "none"
    CPU_LOCAL_ON_X86_64 = "cpu-local-on-x86_64"  # x86_64: torch==X+cpu, aarch64: torch==X
    EXACT = "exact"  # torch==X (satisfied by X+cpu too)
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class TorchNpuRelease:
    text: str  # as published
    version: Version
    torch: Version  # the X.Y.Z it must be installed with
    cann: Optional[AscendVersion]
    conflicting_cann: Optional[AscendVersion]
    kind: str  # the source's row status (current-readme, ascend-deployer-only, ...)
    branch: Optional[str]
    pta: Optional[AscendVersion]
    torch_pin: TorchPin
    on_pypi: bool
    python_x86_64: tuple[str, ...]
    python_aarch64: tuple[str, ...]
    python_docs: tuple[str, ...]
    provenance: Provenance

    def python_for(self, arch: str) -> tuple[str, ...]:
        """CPython versions with a wheel (PyPI tags), else the documented ones."""
        if self.on_pypi:
            return self.python_aarch64 if arch == "aarch64" else self.python_x86_64
        return self.python_docs

    def torch_requirement(self, arch: str) -> str:
        """The torch to install beside it. On x86_64 the wheels of the 6.0.x…26.1.0 lines pin
        ``torch==X+cpu``, which the plain PyPI ``torch X`` does not satisfy (PEP 440 local label)."""
        if self.torch_pin is TorchPin.CPU_LOCAL_ON_X86_64 and arch == "x86_64":
            return f"torch=={self.torch}+cpu"
        return f"torch=={self.torch}"

    def pip_requirements(self, arch: str) -> tuple[str, str]:
        return self.torch_requirement(arch), f"torch-npu=={self.text}"


@dataclass(frozen=True)
class CompatWindow:
    """PTA releases declared compatible with a set of CANN releases (wider than the 1:1 table)."""

    pta: tuple[VersionRange, ...]
    cann: tuple[VersionRange, ...]
    provenance: Provenance
    cann_text: tuple[str, ...] = ()  # as written ("8.5.X"), for messages

    def covers(self, pta: AscendVersion, cann: AscendVersion) -> bool:
        return self.covers_pta(pta) and self.covers_cann(cann)

    def covers_pta(self, pta: AscendVersion) -> bool:
        return any(r.contains(pta) for r in self.pta)

    def covers_cann(self, cann: AscendVersion) -> bool:
        return any(r.contains(cann) for r in self.cann)


@dataclass(frozen=True)
class PypiListing:
    retrieved: str
    command: str
    platform: str
    versions: tuple[str, ...]
    python: Mapping[str, tuple[str, ...]]  # version → CPython versions with a wheel on `platform`


@dataclass(frozen=True)
class Soc:
    soc_version: str  # ATC --soc_version
    short_soc_version: str
    compute_unit: str  # kernels/ops family, custom-op ASCEND_COMPUTE_UNIT
    npu_smi_name: Optional[str]  # Name column of npu-smi info (None on A3: use the board info)
    board_chip_name: Optional[str]  # A3: npu-smi info -t board "Chip Name"
    board_npu_name: Optional[str]  # A3: npu-smi info -t board "NPU Name"
    aic_version: Optional[str]  # None where only torch_npu's SoC table names it
    ub_size: Optional[int]  # bytes of Unified Buffer per AI core
    provenance: Provenance


@dataclass(frozen=True)
class PciDevice:
    vendor: int
    device: int
    chip: str
    compute_unit: Optional[str]
    family: str  # ascend-deployer hardware key: I1, I2, I2B, A1, A2, A3, A5
    provenance: Provenance


@dataclass(frozen=True)
class PciCard:
    vendor: int
    device: int
    subsystem_vendor: int
    subsystem_device: int
    card: Optional[str]
    card_by_arch: Mapping[str, str]
    family: str
    provenance: Provenance

    def card_for(self, arch: Optional[str]) -> Optional[str]:
        if self.card is not None:
            return self.card
        return self.card_by_arch.get(arch or "")


# --- query results -------------------------------------------------------------------------------


class DriverFit(str, enum.Enum):
    MATCHED = "matched"  # the HDK released with this CANN
    COMPATIBLE = "compatible"  # in Huawei's compatibility list
    KNOWN_WORKING = "known-working"  # paired in an install guide
    NEWER_THAN_MATCHED = "newer-than-matched"  # no list says yes or no
    OLDER_THAN_MATCHED = "older-than-matched"  # warn
    NOT_LISTED = "not-listed"  # a compatibility list exists and does not name it
    BELOW_MINIMUM = "below-minimum"  # error
    INCOMPATIBLE = "incompatible"  # error: explicitly "N"
    UNKNOWN = "unknown"  # no data for this CANN


ALLOWED_DRIVER_FITS = (DriverFit.MATCHED, DriverFit.COMPATIBLE, DriverFit.KNOWN_WORKING)


@dataclass(frozen=True)
class DriverVerdict:
    cann: AscendVersion
    driver: AscendVersion
    fit: DriverFit
    evidence: tuple[HdkRule, ...]  # the rules that decided it


class TorchNpuFitGrade(str, enum.Enum):
    """What the sources say about one torch_npu on one CANN, best first."""

    VALIDATED = "validated"  # the documented 1:1 pair (ok)
    UNVERIFIED = "unverified"  # the pair exists but is INFERRED or CONFLICT (report softly)
    WINDOW = "window"  # inside a published compatibility window, not the 1:1 pair (warn)
    NEWER_THAN_DATA = "newer-than-data"  # the CANN is newer than every release the data knows (info)
    UNKNOWN = "unknown"  # no pairing published for this torch_npu, or for this CANN (info)
    OUTSIDE = "outside"  # this CANN's published pairings name other torch_npu lines (error)


@dataclass(frozen=True)
class TorchNpuFit:
    release: TorchNpuRelease
    grade: TorchNpuFitGrade
    window: Optional[CompatWindow] = None
    cann: Optional[AscendVersion] = None  # the release the installed CANN label was read as
    nearest: tuple[str, ...] = ()  # for UNKNOWN: the nearest documented pairings, as text

    @property
    def source(self) -> str:
        """The citation that decided the grade (the window's, else the row's)."""
        return (self.window.provenance if self.window is not None else self.release.provenance).source[0]

    def pip_command(self, arch: str) -> str:
        return "pip install " + " ".join(self.release.pip_requirements(arch))


@dataclass(frozen=True)
class PciMatch:
    card: Optional[str]
    card_row: Optional[PciCard]
    device: Optional[PciDevice]


# --- the matrix ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Matrix:
    cann_releases: tuple[CannRelease, ...]
    hdk_rules: tuple[HdkRule, ...]
    compilers: tuple[CompilerVersion, ...]
    torch_npu_releases: tuple[TorchNpuRelease, ...]
    windows: tuple[CompatWindow, ...]
    pypi: PypiListing
    socs: tuple[Soc, ...]
    pci_devices: tuple[PciDevice, ...]
    pci_cards: tuple[PciCard, ...]
    as_of: str = ""  # the day the rows were last compared with their sources (the oldest file's)

    # CANN ------------------------------------------------------------------------------------

    def cann_release(self, version: str | AscendVersion) -> Optional[CannRelease]:
        """The release row; a community ``.betaN`` label finds its commercial release."""
        wanted = _cann(version).commercial()
        return next((r for r in self.cann_releases if r.version == wanted), None)

    def compiler_version(self, cann: str | AscendVersion) -> Optional[CompilerVersion]:
        wanted = _cann(cann)
        rows = [c for c in self.compilers if c.cann in (wanted, wanted.commercial())]
        return rows[0] if rows else None

    def hdk_rules_for(
        self, cann: str | AscendVersion, *, applies_to: Iterable[str] = (), hdk_line: Optional[str] = None
    ) -> tuple[HdkRule, ...]:
        """The HDK rules about one CANN that apply to this machine: same HDK line, and either
        general or limited to one of ``applies_to`` (compute unit, product names)."""
        wanted = _cann(cann).commercial()
        context = set(applies_to)
        return tuple(
            r
            for r in self.hdk_rules
            if r.hdk_line == hdk_line and r.covers_cann(wanted) and (not r.applies_to or context & set(r.applies_to))
        )

    def driver_fit(
        self,
        cann: str | AscendVersion,
        driver: str | AscendVersion,
        *,
        applies_to: Iterable[str] = (),
        hdk_line: Optional[str] = None,
    ) -> DriverVerdict:
        """How a driver (HDK) version fits a CANN release (compat.md §0 rule 3)."""
        cann_v, driver_v = _cann(cann).commercial(), _driver(driver)
        rules = self.hdk_rules_for(cann_v, applies_to=applies_to, hdk_line=hdk_line)

        def of(kind: HdkKind, containing: bool = True) -> tuple[HdkRule, ...]:
            return tuple(r for r in rules if r.kind is kind and (not containing or r.contains_driver(driver_v)))

        def verdict(fit: DriverFit, evidence: tuple[HdkRule, ...]) -> DriverVerdict:
            return DriverVerdict(cann=cann_v, driver=driver_v, fit=fit, evidence=evidence)

        if not rules:
            return verdict(DriverFit.UNKNOWN, ())
        if of(HdkKind.INCOMPATIBLE):
            return verdict(DriverFit.INCOMPATIBLE, of(HdkKind.INCOMPATIBLE))
        below = tuple(r for r in of(HdkKind.MINIMUM, containing=False) if driver_v < r.floor)
        if below:
            return verdict(DriverFit.BELOW_MINIMUM, below)
        for kind, fit in (
            (HdkKind.MATCHED, DriverFit.MATCHED),
            (HdkKind.COMPATIBLE, DriverFit.COMPATIBLE),
            (HdkKind.KNOWN_WORKING, DriverFit.KNOWN_WORKING),
        ):
            if of(kind):
                return verdict(fit, of(kind))
        if of(HdkKind.COMPATIBLE, containing=False):
            return verdict(DriverFit.NOT_LISTED, of(HdkKind.COMPATIBLE, containing=False))
        matched = of(HdkKind.MATCHED, containing=False)
        if matched:
            older = driver_v < min(r.floor for r in matched)
            return verdict(DriverFit.OLDER_THAN_MATCHED if older else DriverFit.NEWER_THAN_MATCHED, matched)
        return verdict(DriverFit.UNKNOWN, rules)

    def cann_for_driver(
        self, driver: str | AscendVersion, *, applies_to: Iterable[str] = (), hdk_line: Optional[str] = None
    ) -> tuple[DriverVerdict, ...]:
        """The CANN releases a driver allows (matched, compatible or known-working), newest first."""
        context = tuple(applies_to)
        verdicts = (
            self.driver_fit(r.version, driver, applies_to=context, hdk_line=hdk_line) for r in self.cann_releases
        )
        return tuple(sorted((v for v in verdicts if v.fit in ALLOWED_DRIVER_FITS), key=lambda v: v.cann, reverse=True))

    # torch_npu -------------------------------------------------------------------------------

    def torch_npu(self, version: str) -> tuple[TorchNpuRelease, ...]:
        """Rows of one torch_npu version. PEP 440 normalises ``.rc1``/``rc1`` and ``-post10``;
        a local label (``+git4ecd50b`` of a source build, ``+cxx11-abi``) is ignored. A
        ``.devN`` daily has no row: use ``torch_npu_line``. Several rows = several pairings."""
        wanted = python_version(split_local(version.strip())[0])
        return tuple(r for r in self.torch_npu_releases if r.version == wanted)

    def torch_npu_line(self, torch: str) -> tuple[TorchNpuRelease, ...]:
        """Every row for one torch X.Y.Z (``2.1.0+cpu`` → 2.1.0)."""
        wanted = Version(torch_release(torch))
        return tuple(r for r in self.torch_npu_releases if r.torch == wanted and torch_release(r.text) == str(wanted))

    def torch_npu_cann_fit(self, torch_npu: str, cann: str | AscendVersion) -> TorchNpuFit:
        """How an installed torch_npu fits the installed CANN (compat.md §0 rule 2). The best
        row decides; ``release`` is that row (or the first row when none fits)."""
        rows = self.torch_npu(torch_npu)
        if not rows:
            raise LookupError(f"torch_npu {torch_npu} is not in compat/torch_npu.toml")
        fits = [self._grade(r, _cann(cann).release_target()) for r in rows]
        return min(fits, key=lambda f: _GRADE_ORDER[f.grade])

    def torch_npu_for(
        self,
        cann: str | AscendVersion,
        torch: str,
        *,
        arch: str = "x86_64",
        python: Optional[str] = None,
        include_prereleases: bool = False,
    ) -> tuple[TorchNpuFit, ...]:
        """The fix suggester's list: torch_npu releases for this torch X.Y.Z that fit the CANN
        (validated pairs first, then unverified, then window), wheels on PyPI and newest first.
        ``python`` ("3.10") keeps only releases with a wheel for it on ``arch``."""
        wanted = _cann(cann).release_target()
        fits = []
        for row in self.torch_npu_line(torch):
            if (row.version.is_prerelease or row.kind == "master-dev-prerelease") and not include_prereleases:
                continue
            if python is not None and python not in row.python_for(arch):
                continue
            fit = self._grade(row, wanted)
            if fit.grade in (TorchNpuFitGrade.VALIDATED, TorchNpuFitGrade.UNVERIFIED, TorchNpuFitGrade.WINDOW):
                fits.append(fit)
        fits.sort(key=lambda f: (_GRADE_ORDER[f.grade], not f.release.on_pypi, _desc(f.release.version)))
        return tuple(fits)

    def _grade(self, row: TorchNpuRelease, cann: AscendVersion) -> TorchNpuFit:
        """Grade what is published, and only that. A pair is "outside" only when pairings are
        published for both sides and this CANN's name other torch_npu lines (torch_npu 2.7.1 on
        CANN 9.0.0 fails with an undefined symbol, triton-ascend#326); when nothing is published
        for the torch_npu or for the CANN, the grade says so instead of failing."""
        if row.cann is not None and row.cann.release_target() == cann:
            documented = row.provenance.status is Status.DOCUMENTED
            grade = TorchNpuFitGrade.VALIDATED if documented else TorchNpuFitGrade.UNVERIFIED
            return TorchNpuFit(row, grade, cann=cann)
        if row.pta is not None:
            window = next((w for w in self.windows if w.covers(row.pta, cann)), None)
            if window is not None:
                return TorchNpuFit(row, TorchNpuFitGrade.WINDOW, window, cann=cann)
        has_pairing = row.cann is not None or (row.pta is not None and any(w.covers_pta(row.pta) for w in self.windows))
        if not has_pairing:
            return TorchNpuFit(row, TorchNpuFitGrade.UNKNOWN, cann=cann, nearest=self._nearest_rows(row))
        if not self._cann_has_pairings(cann):
            newest = max((r.version for r in self.cann_releases), default=None)
            grade = (
                TorchNpuFitGrade.NEWER_THAN_DATA if newest is not None and cann > newest else TorchNpuFitGrade.UNKNOWN
            )
            return TorchNpuFit(row, grade, cann=cann, nearest=self._pairings_of(row))
        return TorchNpuFit(row, TorchNpuFitGrade.OUTSIDE, cann=cann, nearest=self._pairings_of(row))

    def _cann_has_pairings(self, cann: AscendVersion) -> bool:
        if any(w.covers_cann(cann) for w in self.windows):
            return True
        return any(r.cann is not None and r.cann.release_target() == cann for r in self.torch_npu_releases)

    def _pairings_of(self, row: TorchNpuRelease) -> tuple[str, ...]:
        """The CANN a torch_npu is published with: its 1:1 pair, then the windows of its PTA."""
        found = [f"CANN {row.cann} ({'validated' if row.provenance.status is Status.DOCUMENTED else 'inferred'})"]
        found = found if row.cann is not None else []
        for w in self.windows:
            if row.pta is not None and w.covers_pta(row.pta):
                found.append("CANN " + "/".join(w.cann_text) + " (window)")
        return tuple(dict.fromkeys(found))

    def _nearest_rows(self, row: TorchNpuRelease, count: int = 3) -> tuple[str, ...]:
        """The documented pairings of the torch_npu versions nearest to this one (two below, one above)."""
        documented = sorted(
            {
                r.version: r
                for r in self.torch_npu_releases
                if r.cann is not None and r.provenance.status is Status.DOCUMENTED and not r.version.is_prerelease
            }.values(),
            key=lambda r: r.version,
        )
        below = [r for r in documented if r.version < row.version][-(count - 1) :]
        above = [r for r in documented if r.version > row.version][:1]
        return tuple(f"torch_npu {r.text} with CANN {r.cann}" for r in reversed(below + above))

    def newest_torch_npu(self) -> Optional[TorchNpuRelease]:
        return max(self.torch_npu_releases, key=lambda r: r.version, default=None)

    # hardware --------------------------------------------------------------------------------

    def soc(self, soc_version: str) -> Optional[Soc]:
        return next((s for s in self.socs if s.soc_version.lower() == soc_version.strip().lower()), None)

    def soc_for_npu_smi(
        self, name: str, *, board_chip_name: Optional[str] = None, board_npu_name: Optional[str] = None
    ) -> Optional[Soc]:
        """The SoC row for an ``npu-smi info`` Name (A3 needs the board's Chip/NPU Name)."""
        soc_version = soc_version_for_npu_smi(name, board_chip_name=board_chip_name, board_npu_name=board_npu_name)
        return self.soc(soc_version) if soc_version else None

    def card_for_pci(
        self,
        device: int | str,
        subsystem_vendor: int | str | None = None,
        subsystem_device: int | str | None = None,
        *,
        vendor: int | str = 0x19E5,
        arch: Optional[str] = None,
    ) -> PciMatch:
        """Card model for PCI ids (sysfs ``0xd802`` or npu-smi ``0xD802`` spelling)."""
        ids = (_hex(vendor), _hex(device))
        chip = next((d for d in self.pci_devices if (d.vendor, d.device) == ids), None)
        card_row = None
        if subsystem_vendor is not None and subsystem_device is not None:
            full = ids + (_hex(subsystem_vendor), _hex(subsystem_device))
            card_row = next(
                (c for c in self.pci_cards if (c.vendor, c.device, c.subsystem_vendor, c.subsystem_device) == full),
                None,
            )
        return PciMatch(card=card_row.card_for(arch) if card_row else None, card_row=card_row, device=chip)


_GRADE_ORDER = {g: i for i, g in enumerate(TorchNpuFitGrade)}


def soc_version_for_npu_smi(
    name: str, *, board_chip_name: Optional[str] = None, board_npu_name: Optional[str] = None
) -> Optional[str]:
    """The ATC ``--soc_version`` for an npu-smi Name: ``"Ascend" + name`` (910B4 → Ascend910B4,
    910B4-1 → Ascend910B4-1, the old-generation 910B → Ascend910B). A3 prints ``Ascend910``; its
    SoC is board Chip Name + "_" + NPU Name (Ascend910_9392); without the board info → None.
    Sources: ATC --soc_version doc (canncommercial 80RC2 atlasatc_16_0069); A3 rule from the CANN
    8.5.0 operator guide (atlas_ascendc_10_0068), research/operator-build-and-caches.md §6."""
    if board_chip_name and board_npu_name:
        return f"{board_chip_name.strip()}_{board_npu_name.strip()}"
    name = name.strip()
    if not name or name.lower().startswith("ascend"):
        return None
    return "Ascend" + name


def _desc(version: Version) -> tuple:
    return tuple(-x for x in version.release) + ((0,) if version.post is None else (-version.post,))


def _cann(value: str | AscendVersion) -> AscendVersion:
    return value if isinstance(value, AscendVersion) else AscendVersion.parse(value, line=ProductLine.CANN)


def _driver(value: str | AscendVersion) -> AscendVersion:
    return value if isinstance(value, AscendVersion) else AscendVersion.parse(value, line=ProductLine.DRIVER)


def _hex(value: int | str) -> int:
    return value if isinstance(value, int) else int(str(value).strip(), 16)


# --- loading -------------------------------------------------------------------------------------


def load(directory: Optional[Path] = None) -> Matrix:
    """Load and validate ``compat/*.toml`` (default: the shipped copy)."""
    directory = Path(directory) if directory is not None else paths.data_dir("compat")
    unexpected = sorted(p.name for p in directory.glob("*.toml") if p.name not in FILES)
    if unexpected:
        raise DataFileError(f"{directory.name}/{unexpected[0]}: unknown data file; expected only {', '.join(FILES)}")
    cann = _read(directory, "cann.toml")
    torch_npu = _read(directory, "torch_npu.toml")
    hardware = _read(directory, "hardware.toml")
    matrix = Matrix(
        cann_releases=cann.rows("releases", _cann_release),
        hdk_rules=cann.rows("hdk", _hdk_rule),
        compilers=cann.rows("compiler", _compiler),
        torch_npu_releases=torch_npu.rows("releases", _torch_npu_release),
        windows=torch_npu.rows("windows", _window),
        pypi=_pypi(torch_npu.sub("pypi")),
        socs=hardware.rows("socs", _soc),
        pci_devices=hardware.rows("pci_devices", _pci_device),
        pci_cards=hardware.rows("pci_cards", _pci_card),
        as_of=min(reader.date("as_of") for reader in (cann, torch_npu, hardware)),
    )
    for reader in (cann, torch_npu, hardware):
        reader.done()
    _check_references(matrix, directory.name)
    return matrix


def load_cached(cache_dir: Optional[str], directory: Optional[Path] = None) -> Matrix:
    """``load()``, kept as a pickle in ``cache_dir`` (the user's ascenv cache) between runs:
    parsing and validating the TOML is a third of ``ascenv doctor``'s start-up (issue #3 item 5).

    The cache is keyed by the bytes of the data files and of the modules defining the rows, so
    an edited file or a new ascenv rebuilds it; it is read only if this user owns it and nobody
    else can write it (a pickle runs code when loaded). Any problem means: parse the TOML."""
    import hashlib
    import os
    import pickle
    import stat

    directory = Path(directory) if directory is not None else paths.data_dir("compat")
    if not cache_dir:
        return load(directory)
    digest = hashlib.sha256(sys.version.encode())
    try:
        for file in [
            *(directory / name for name in FILES),
            Path(__file__),
            Path(sys.modules[AscendVersion.__module__].__file__ or ""),
        ]:
            digest.update(file.read_bytes())
    except OSError:
        return load(directory)
    key = digest.hexdigest()
    path = os.path.join(cache_dir, "compat-matrix.pickle")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if info.st_uid == os.geteuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                cached_key, matrix = pickle.load(handle)
                if cached_key == key and isinstance(matrix, Matrix):
                    return matrix
    except Exception:  # noqa: BLE001 - missing, truncated or foreign cache: rebuild it
        pass
    matrix = load(directory)
    from ascenv.fsutil import write_atomic

    try:
        os.makedirs(cache_dir, mode=0o700, exist_ok=True)
        write_atomic(path, pickle.dumps((key, matrix), protocol=pickle.HIGHEST_PROTOCOL), mode=0o600)
    except (OSError, pickle.PicklingError):  # a read-only home: no cache, same answers
        pass
    return matrix


def _read(directory: Path, name: str) -> _Reader:
    # imported here: a cached matrix (load_cached) needs no TOML parser at start-up
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.9/3.10 hosts only
        import tomli as tomllib

    label = f"{directory.name}/{name}"
    try:
        with open(directory / name, "rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError:
        raise DataFileError(f"{label}: missing (ascenv's compatibility data is incomplete)") from None
    except tomllib.TOMLDecodeError as exc:
        raise DataFileError(f"{label}: not valid TOML: {exc}") from None
    reader = _Reader(label, data, "")
    schema = reader.integer("schema")
    if schema != SCHEMA:
        raise DataFileError(
            f"{label}: schema: this ascenv reads schema {SCHEMA}, the file says {schema}",
            hint="use the data files shipped with this ascenv version",
        )
    return reader


_TYPE_WORDS = {str: "string", int: "integer", bool: "boolean", list: "list", dict: "table"}


class _Reader:
    """One TOML table being validated: typed getters that record which keys were read, and
    ``done()`` that rejects the others ("Perhaps you meant …")."""

    def __init__(self, file: str, data: Mapping[str, Any], path: str) -> None:
        self.file, self.data, self.path = file, data, path
        self.seen: set = set()

    def where(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def fail(self, key: str, problem: str) -> DataFileError:
        return DataFileError(f"{self.file}: {self.where(key)}: {problem}")

    def raw(self, key: str, kind: type, required: bool) -> Any:
        self.seen.add(key)
        if key not in self.data:
            if required:
                raise self.fail(key, f"missing (expected {_TYPE_WORDS[kind]})")
            return None
        value = self.data[key]
        # TOML booleans are not integers, even though Python's bool is an int subclass.
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            found = _TYPE_WORDS.get(type(value), type(value).__name__)
            raise self.fail(key, f"expected {_TYPE_WORDS[kind]}, found {found} {value!r}"[:200])
        return value

    def string(self, key: str, required: bool = True) -> Optional[str]:
        value = self.raw(key, str, required)
        if value is not None and not value.strip():
            raise self.fail(key, "expected a non-empty string")
        return value

    def integer(self, key: str, required: bool = True) -> Optional[int]:
        return self.raw(key, int, required)

    def date(self, key: str) -> str:
        """An ISO day (2026-12-01), kept as text."""
        import datetime

        text = self.string(key) or ""
        try:
            datetime.date.fromisoformat(text)
        except ValueError:
            raise self.fail(key, f"expected a date like 2026-12-01, found {text!r}") from None
        return text

    def boolean(self, key: str) -> bool:
        return self.raw(key, bool, True)

    def strings(self, key: str, required: bool = False) -> tuple[str, ...]:
        values = self.raw(key, list, required) or []
        for i, value in enumerate(values):
            if not isinstance(value, str) or not value.strip():
                raise self.fail(f"{key}[{i}]", f"expected a non-empty string, found {value!r}")
        if required and not values:
            raise self.fail(key, "expected at least one entry")
        return tuple(values)

    def choice(self, key: str, enum_type: Any) -> Any:
        value = self.string(key)
        try:
            return enum_type(value)
        except ValueError:
            allowed = ", ".join(m.value for m in enum_type)
            raise self.fail(key, f"expected one of {allowed}, found {value!r}") from None

    def version(self, key: str, line: ProductLine, required: bool = True) -> Optional[AscendVersion]:
        text = self.string(key, required)
        return None if text is None else self.parsed(key, lambda: AscendVersion.parse(text, line=line))

    def python_version(self, key: str) -> Version:
        text = self.string(key)
        return self.parsed(key, lambda: python_version(text))

    def patterns(self, key: str, line: ProductLine) -> tuple[VersionRange, ...]:
        return tuple(
            self.parsed(f"{key}[{i}]", lambda t=t: pattern(t, line)) for i, t in enumerate(self.strings(key, True))
        )

    def ranges(self, key: str, line: ProductLine) -> tuple[VersionRange, ...]:
        text = self.string(key, required=False)
        return () if text is None else self.parsed(key, lambda: parse_range_list(text, line=line))

    def parsed(self, key: str, parse: Any) -> Any:
        try:
            return parse()
        except InvalidVersion as exc:
            raise self.fail(key, exc.message) from None

    def pci_id(self, key: str) -> int:
        text = self.string(key)
        try:
            return int(text, 16)
        except ValueError:
            raise self.fail(key, f"expected a hexadecimal PCI id like 0xd802, found {text!r}") from None

    def mapping(self, key: str) -> dict[str, str]:
        table = self.raw(key, dict, False) or {}
        for name, value in table.items():
            if not isinstance(value, str) or not value.strip():
                raise self.fail(f"{key}.{name}", f"expected a non-empty string, found {value!r}")
        return dict(table)

    def sub(self, key: str) -> _Reader:
        return _Reader(self.file, self.raw(key, dict, True), self.where(key))

    def rows(self, key: str, build: Any) -> tuple[Any, ...]:
        items = self.raw(key, list, True)
        out = []
        for i, item in enumerate(items):
            where = f"{self.where(key)}[{i}]"
            if not isinstance(item, dict):
                raise DataFileError(f"{self.file}: {where}: expected a table, found {item!r}"[:200])
            row = _Reader(self.file, item, where)
            out.append(build(row))
            row.done()
        return tuple(out)

    def provenance(self) -> Provenance:
        status = self.choice("status", Status)
        conflict = self.string("conflict", required=False)
        if status is Status.CONFLICT and conflict is None:
            raise self.fail("conflict", "missing: a conflict row must say what the other source says")
        return Provenance(
            status=status, source=self.strings("source", required=True), notes=self.strings("notes"), conflict=conflict
        )

    def done(self) -> None:
        unknown = sorted(set(self.data) - self.seen)
        if unknown:
            key = unknown[0]
            import difflib  # only on this error path: importing it costs start-up time

            close = difflib.get_close_matches(key, sorted(self.seen), n=1)
            hint = (
                f"; perhaps you meant {close[0]!r}?" if close else f"; expected one of {', '.join(sorted(self.seen))}"
            )
            raise self.fail(key, "unknown key" + hint)


def pattern(text: str, line: ProductLine) -> VersionRange:
    """A version pattern of the data files: ``[a,b]``/``[a,]`` range, ``X.Y.X`` family, or a
    release with its patches and builds (``24.1.RC2`` → 24.1.RC2, 24.1.rc2.2, …)."""
    stripped = text.strip()
    if stripped.startswith("[") or stripped[-2:] in (".X", ".x"):
        return VersionRange.parse(stripped, line=line)
    return VersionRange.release_family(stripped, line=line)


def _cann_release(row: _Reader) -> CannRelease:
    return CannRelease(
        version=row.version("version", ProductLine.CANN),
        chips=row.strings("chips"),
        packages=row.mapping("packages"),
        packages_inferred=row.mapping("packages_inferred"),
        innerversion=row.version("innerversion", ProductLine.INNER, required=False),
        toolkit_compatible_version=row.ranges("toolkit_compatible_version", ProductLine.INNER),
        provenance=row.provenance(),
    )


def _hdk_rule(row: _Reader) -> HdkRule:
    return HdkRule(
        cann=row.patterns("cann", ProductLine.CANN),
        kind=row.choice("kind", HdkKind),
        hdk=row.patterns("hdk", ProductLine.DRIVER),
        hdk_text=row.strings("hdk", required=True),
        driver=row.version("driver", ProductLine.DRIVER, required=False),
        applies_to=row.strings("applies_to"),
        hdk_line=row.string("hdk_line", required=False),
        provenance=row.provenance(),
    )


def _compiler(row: _Reader) -> CompilerVersion:
    return CompilerVersion(
        cann=row.version("cann", ProductLine.CANN),
        version=row.version("version", ProductLine.COMPONENT),
        read_from=row.string("read_from"),
        provenance=row.provenance(),
    )


def _torch_npu_release(row: _Reader) -> TorchNpuRelease:
    return TorchNpuRelease(
        text=row.string("version"),
        version=row.python_version("version"),
        torch=row.python_version("torch"),
        cann=row.version("cann", ProductLine.CANN, required=False),
        conflicting_cann=row.version("conflicting_cann", ProductLine.CANN, required=False),
        kind=row.string("kind"),
        branch=row.string("branch", required=False),
        pta=row.version("pta", ProductLine.PTA, required=False),
        torch_pin=row.choice("torch_pin", TorchPin),
        on_pypi=row.boolean("on_pypi"),
        python_x86_64=row.strings("python_x86_64"),
        python_aarch64=row.strings("python_aarch64"),
        python_docs=row.strings("python_docs"),
        provenance=row.provenance(),
    )


def _window(row: _Reader) -> CompatWindow:
    return CompatWindow(
        pta=row.patterns("pta", ProductLine.PTA),
        cann=row.patterns("cann", ProductLine.CANN),
        provenance=row.provenance(),
        cann_text=row.strings("cann"),
    )


def _pypi(table: _Reader) -> PypiListing:
    python = table.sub("python")
    versions = table.strings("versions", required=True)
    listing = PypiListing(
        retrieved=table.string("retrieved"),
        command=table.string("command"),
        platform=table.string("platform"),
        versions=versions,
        python={v: python.strings(v) for v in python.data},
    )
    python.done()
    table.done()
    return listing


def _soc(row: _Reader) -> Soc:
    board = row.sub("board") if "board" in row.data else None
    soc = Soc(
        soc_version=row.string("soc_version"),
        short_soc_version=row.string("short_soc_version"),
        compute_unit=row.string("compute_unit"),
        npu_smi_name=row.string("npu_smi_name", required=board is None),  # A3 rows name the board instead
        board_chip_name=board.string("chip_name") if board else None,
        board_npu_name=board.string("npu_name") if board else None,
        aic_version=row.string("aic_version", required=False),
        ub_size=row.integer("ub_size", required=False),
        provenance=row.provenance(),
    )
    if board:
        board.done()
    return soc


def _pci_device(row: _Reader) -> PciDevice:
    return PciDevice(
        vendor=row.pci_id("vendor"),
        device=row.pci_id("device"),
        chip=row.string("chip"),
        compute_unit=row.string("compute_unit", required=False),
        family=row.string("family"),
        provenance=row.provenance(),
    )


def _pci_card(row: _Reader) -> PciCard:
    ids = {k: row.pci_id(k) for k in ("vendor", "device", "subsystem_vendor", "subsystem_device")}
    card, by_arch = row.string("card", required=False), row.mapping("card_by_arch")
    if (card is None) == (not by_arch):
        raise row.fail("card", "expected exactly one of card and card_by_arch")
    return PciCard(
        vendor=ids["vendor"],
        device=ids["device"],
        subsystem_vendor=ids["subsystem_vendor"],
        subsystem_device=ids["subsystem_device"],
        card=card,
        card_by_arch=by_arch,
        family=row.string("family"),
        provenance=row.provenance(),
    )


def _check_references(matrix: Matrix, folder: str) -> None:
    """Cross-file facts a typo would break: compute units name a known SoC family, and every
    torch_npu version PyPI lists has a row."""
    units = {s.compute_unit for s in matrix.socs} | {"ascend950"}
    for i, release in enumerate(matrix.cann_releases):
        for key in ("chips", "packages", "packages_inferred"):
            for unit in getattr(release, key):
                if unit not in units:
                    raise DataFileError(
                        f"{folder}/cann.toml: releases[{i}].{key}: unknown compute unit {unit!r}; "
                        f"expected one of {', '.join(sorted(units))}"
                    )
    rows = {r.version for r in matrix.torch_npu_releases}
    for i, text in enumerate(matrix.pypi.versions):
        if python_version(text) not in rows:
            raise DataFileError(
                f"{folder}/torch_npu.toml: pypi.versions[{i}]: {text} is on PyPI but has no [[releases]] row"
            )
