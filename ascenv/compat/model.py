"""The rows of the compatibility matrix and the answers of its queries: frozen dataclasses,
every row with its provenance (status + sources), so a finding can cite its source and soften
INFERRED/CONFLICT facts."""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Optional

from packaging.version import Version

from ascenv.versions import (
    AscendVersion,
    VersionRange,
)


class Status(str, enum.Enum):
    """How sure a row is. INFERRED and CONFLICT facts keep their status and are reported at a lower
    confidence, never as a failure."""

    DOCUMENTED = "documented"
    INFERRED = "inferred"
    CONFLICT = "conflict"


@dataclass(frozen=True)
class Provenance:
    status: Status
    source: tuple[str, ...]  # URLs, github:owner/repo@commit:path, or a wheel's file
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


@dataclass(frozen=True)
class OpsPackage:
    """A per-chip kernels/ops package a source lists for a CANN release (the conda channel)."""

    cann: AscendVersion
    compute_unit: str
    package: str
    provenance: Provenance


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
    """What a torch_npu wheel's ``Requires-Dist: torch`` says (setup.py of the github:Ascend/pytorch tags)."""

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
    """One row of a published pairing table: PTA releases (or, where a report names them, single
    torch_npu versions of a PTA) and the CANN columns the row marks. ``kind`` "compatible" is a Y
    (or a listed CANN), "incompatible" an explicit N or a documented failure. A CANN the row does
    not name is not documented, never incompatible: a table that lists some columns says nothing
    about the others."""

    pta: tuple[VersionRange, ...]
    cann: tuple[VersionRange, ...]
    provenance: Provenance
    cann_text: tuple[str, ...] = ()  # as written ("8.5.X"), for messages
    kind: str = "compatible"  # compatible | incompatible
    torch_npu: tuple[Version, ...] = ()  # empty: every torch_npu of the PTA

    def covers(self, pta: AscendVersion, cann: AscendVersion, torch_npu: Optional[Version] = None) -> bool:
        if self.torch_npu and torch_npu not in self.torch_npu:
            return False
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


# --- the layer above torch_npu (compat/stacks.toml) ---------------------------------------------


@dataclass(frozen=True)
class VllmAscendRow:
    """A row of vllm-ascend's release compatibility matrix: what a release is built and tested with."""

    version: Version
    text: str
    vllm: tuple[Version, ...]  # either of them
    python: str  # ">=3.10,<3.13"
    cann: AscendVersion
    torch: Version
    torch_npu: Version
    triton_ascend: Optional[Version]
    provenance: Provenance


@dataclass(frozen=True)
class TritonAscendRow:
    """A Triton-Ascend release and the CANN versions its installation guide lists for it."""

    version: Version
    cann: tuple[AscendVersion, ...]
    provenance: Provenance


@dataclass(frozen=True)
class GlibcFloor:
    package: str  # PEP 503 name
    version: Version
    glibc: str  # "2.27"
    provenance: Provenance


@dataclass(frozen=True)
class ProductSupport:
    """The SoC families a package's publisher says it supports, or rules out."""

    package: str  # PEP 503 name
    kind: str  # supported | unsupported
    compute_units: tuple[str, ...]
    provenance: Provenance


@dataclass(frozen=True)
class JitChange:
    """A change a JIT front-end made in its own sources for a CANN release line: without it, the
    kernels it builds on that CANN do not compile or fault on the device (tilelang-ascend's
    adapt-triton-kernel pass for CANN 8.5)."""

    frontend: str  # the import package: tilelang
    cann: VersionRange  # the CANN line that needs it (8.5.X)
    uses: tuple[str, ...]  # it concerns sources that say one of these (the route, e.g. bishengir)
    has: tuple[str, ...]  # sources with the change say one of these
    change: str  # the fix's own title
    fixed_in: str  # where the front-end made it (its pull request)
    provenance: Provenance


@dataclass(frozen=True)
class MindieRow:
    version: AscendVersion  # ProductLine.CANN spelling: 2.2.RC1, 3.0.0
    text: str
    cann: AscendVersion
    pta: str
    provenance: Provenance


@dataclass(frozen=True)
class ImageStack:
    """A known-good stack: what an official image installs together (its Dockerfile or its tag)."""

    cann: AscendVersion
    chip: str  # the image's chip tag: 910b, a3, 310p, 950
    python: tuple[str, ...]
    vllm_ascend: Optional[Version]
    vllm: Optional[Version]
    nnal: Optional[AscendVersion]
    ops_package: Optional[str]
    provenance: Provenance
    torch_npu: Optional[Version] = None
    triton_ascend: Optional[Version] = None
    sglang: Optional[str] = None  # the branch or tag an sglang image installs


# --- query results -------------------------------------------------------------------------------


class DriverFit(str, enum.Enum):
    MATCHED = "matched"  # the HDK released with this CANN
    COMPATIBLE = "compatible"  # in Huawei's compatibility list
    KNOWN_WORKING = "known-working"  # paired in an install guide
    NEWER_THAN_MATCHED = "newer-than-matched"  # no list says yes or no
    OLDER_THAN_MATCHED = "older-than-matched"  # warn
    NOT_LISTED = "not-listed"  # a compatibility list exists and does not name it (not documented: info)
    NEWER_THAN_DATA = "newer-than-data"  # newer than every HDK the data knows (info)
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
    WINDOW = "window"  # in a published pairing table, not the 1:1 pair (ok: documented compatible)
    NEWER_THAN_DATA = "newer-than-data"  # the CANN is newer than every release the data knows (info)
    UNKNOWN = "unknown"  # no table documents this pair either way (info)
    OUTSIDE = "outside"  # documented incompatible: an explicit N or a reported failure (error)


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
