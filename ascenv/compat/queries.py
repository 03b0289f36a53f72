"""``Matrix``: the loaded compatibility data and the queries the doctor checks and the fix
suggester ask of it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Optional

from packaging.version import Version

from ascenv.compat.model import (
    ALLOWED_DRIVER_FITS,
    CannRelease,
    CompatWindow,
    CompilerVersion,
    DriverFit,
    DriverVerdict,
    GlibcFloor,
    HdkKind,
    HdkRule,
    ImageStack,
    JitChange,
    MindieRow,
    OpsPackage,
    PciCard,
    PciDevice,
    PciMatch,
    ProductSupport,
    PypiListing,
    Soc,
    Status,
    TorchNpuFit,
    TorchNpuFitGrade,
    TorchNpuRelease,
    TritonAscendRow,
    VllmAscendRow,
)
from ascenv.versions import (
    AscendVersion,
    ProductLine,
    python_version,
    split_local,
    torch_release,
)

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
    ops_packages: tuple[OpsPackage, ...] = ()
    # the layer above torch_npu (stacks.toml)
    vllm_ascend: tuple[VllmAscendRow, ...] = ()
    triton_ascend: tuple[TritonAscendRow, ...] = ()
    glibc_floors: tuple[GlibcFloor, ...] = ()
    mindie: tuple[MindieRow, ...] = ()
    images: tuple[ImageStack, ...] = ()
    overlay: tuple[str, ...] = ()  # the user's data files read in place of the shipped ones
    overlay_ignored: tuple[str, ...] = ()  # the user's files older than the shipped ones: not read
    products: tuple[ProductSupport, ...] = ()
    jit_changes: tuple[JitChange, ...] = ()

    def jit_strings(self) -> dict[str, tuple[str, ...]]:
        """What to look for in each JIT front-end's sources (its import package -> strings): the
        probe reads them (ascenv.probe.stack.jit_frontend), ASC-STACK-JIT judges what it found."""
        strings: dict[str, tuple[str, ...]] = {}
        for change in self.jit_changes:
            strings[change.frontend] = tuple(dict.fromkeys(strings.get(change.frontend, ()) + change.uses + change.has))
        return strings

    # CANN ------------------------------------------------------------------------------------

    def cann_release(self, version: str | AscendVersion) -> Optional[CannRelease]:
        """The release row; a community ``.betaN`` label finds its commercial release."""
        wanted = _cann(version).commercial()
        return next((r for r in self.cann_releases if r.version == wanted), None)

    def ops_package(self, cann: str | AscendVersion, compute_unit: str) -> Optional[tuple[str, Status]]:
        """The kernels/ops package of a compute unit for a CANN release, most certain first: the
        release row's documented name; the package listings' (``[[ops_packages]]``: the conda
        channel, the official CANN images' Dockerfiles, the install guides' ops tables), CONFLICT
        when they name two; the release row's inferred name; else (INFERRED) the name the nearest
        release of the same packaging gives it, documented names before inferred ones, older first
        (from 8.5 on Ascend-cann-<chip>-ops, before that Ascend-cann-kernels-<chip>: CANN 8.5.0
        release note)."""
        found = self._ops_package(cann, compute_unit)
        return (found[0], found[1]) if found else None

    def ops_package_basis(self, cann: str | AscendVersion, compute_unit: str) -> Optional[str]:
        """Where an INFERRED package name comes from (the release whose naming it follows and that
        row's first source); None when the name is documented, in conflict or unknown."""
        found = self._ops_package(cann, compute_unit)
        return found[2] if found and found[1] is Status.INFERRED else None

    def _ops_package(self, cann: str | AscendVersion, compute_unit: str) -> Optional[tuple[str, Status, str]]:
        wanted = _cann(cann).commercial()
        release = self.cann_release(wanted)
        found = release.package_for(compute_unit) if release else None
        if found and found[1] is not Status.INFERRED:
            return found[0], found[1], ""
        listed = [p for p in self.ops_packages if p.cann == wanted and p.compute_unit == compute_unit]
        if listed:
            names = {p.package for p in listed}
            status = Status.CONFLICT if len(names) > 1 else listed[0].provenance.status
            return listed[0].package, status, ""
        if found and release is not None:
            return found[0], found[1], _inferred_row(release)
        same_scheme = [r for r in self.cann_releases if (r.version.release >= (8, 5)) == (wanted.release >= (8, 5))]
        older = sorted((r for r in same_scheme if r.version < wanted), key=lambda r: r.version, reverse=True)
        newer = sorted((r for r in same_scheme if r.version > wanted), key=lambda r: r.version)
        # the nearest release that documents the name first, then one whose own name is inferred
        named_by = [(r, r.package_for(compute_unit)) for r in older + newer]
        ordered = [p for p in named_by if p[1] and p[1][1] is not Status.INFERRED] + [
            p for p in named_by if p[1] and p[1][1] is Status.INFERRED
        ]
        for other, named in ordered:
            if named:
                said = (
                    f"the naming of compat/cann.toml's CANN {other.version} row (first source {other.provenance.url})"
                    if named[1] is not Status.INFERRED
                    else f"the naming of {_inferred_row(other)}"
                )
                return named[0], Status.INFERRED, said
        return None

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
        context = tuple(applies_to)
        return tuple(
            r
            for r in self.hdk_rules
            if r.hdk_line == hdk_line and r.covers_cann(wanted) and (not r.applies_to or _names(r.applies_to, context))
        )

    def driver_fit(
        self,
        cann: str | AscendVersion,
        driver: str | AscendVersion,
        *,
        applies_to: Iterable[str] = (),
        hdk_line: Optional[str] = None,
    ) -> DriverVerdict:
        """How a driver (HDK) version fits a CANN release: the CANN release notes' mapping and
        compatibility tables (compat/cann.toml cites each)."""
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
        if self._newer_than_every_hdk(driver_v, hdk_line):
            # a driver released after the data: no table could name it (info, never a downgrade)
            return verdict(DriverFit.NEWER_THAN_DATA, of(HdkKind.COMPATIBLE, containing=False))
        if of(HdkKind.COMPATIBLE, containing=False):
            return verdict(DriverFit.NOT_LISTED, of(HdkKind.COMPATIBLE, containing=False))
        matched = of(HdkKind.MATCHED, containing=False)
        if matched:
            older = driver_v < min(r.floor for r in matched)
            return verdict(DriverFit.OLDER_THAN_MATCHED if older else DriverFit.NEWER_THAN_MATCHED, matched)
        return verdict(DriverFit.UNKNOWN, rules)

    def _newer_than_every_hdk(self, driver: AscendVersion, hdk_line: Optional[str]) -> bool:
        """True when the driver is above every HDK any rule of its line names."""
        ranges = [r for rule in self.hdk_rules if rule.hdk_line == hdk_line for r in rule.hdk]
        if not ranges or any(r.contains(driver) for r in ranges):
            return False
        return all(r.upper is not None and driver > r.upper for r in ranges)

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
        """How an installed torch_npu fits the installed CANN (the COMPATIBILITY table of
        github:Ascend/pytorch and Huawei's windows). The best row decides; ``release`` is that row
        (or the first row when none fits)."""
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
        """Grade what is published, and only that. The 1:1 pair is validated; a row of a pairing
        table that names this CANN is documented compatible (WINDOW); an explicit N or a reported
        failure is OUTSIDE (torch_npu 2.7.1 on CANN 9.0.0: undefined symbol MsprofSysCycleTime,
        triton-ascend#326). A CANN no row names is not documented (a table that lists some CANN
        columns says nothing about the others): UNKNOWN, or NEWER_THAN_DATA, never an error.
        Rows whose sources disagree (CONFLICT) or are INFERRED grade UNVERIFIED."""
        if row.cann is not None and row.cann.release_target() == cann:
            documented = row.provenance.status is Status.DOCUMENTED
            grade = TorchNpuFitGrade.VALIDATED if documented else TorchNpuFitGrade.UNVERIFIED
            return TorchNpuFit(row, grade, cann=cann)
        said = [w for w in self.windows if row.pta is not None and w.covers(row.pta, cann, row.version)]
        for kind, grade in (("incompatible", TorchNpuFitGrade.OUTSIDE), ("compatible", TorchNpuFitGrade.WINDOW)):
            window = next((w for w in said if w.kind == kind), None)
            if window is None:
                continue
            sure = window.provenance.status is Status.DOCUMENTED and len({w.kind for w in said}) == 1
            return TorchNpuFit(row, grade if sure else TorchNpuFitGrade.UNVERIFIED, window, cann=cann)
        has_pairing = row.cann is not None or (row.pta is not None and any(w.covers_pta(row.pta) for w in self.windows))
        newest = max((r.version for r in self.cann_releases), default=None)
        if newest is not None and cann > newest:
            return TorchNpuFit(row, TorchNpuFitGrade.NEWER_THAN_DATA, cann=cann, nearest=self._pairings_of(row, cann))
        nearest = self._pairings_of(row, cann) if has_pairing else self._nearest_rows(row)
        return TorchNpuFit(row, TorchNpuFitGrade.UNKNOWN, cann=cann, nearest=nearest)

    def _pairings_of(self, row: TorchNpuRelease, near: AscendVersion) -> tuple[str, ...]:
        """The CANN a torch_npu is published with: its 1:1 pair, then the windows of its PTA,
        nearest to the CANN asked about first (a family 8.5.X stands at 8.5.0; ties: the newer)."""
        found = [f"CANN {row.cann} ({'validated' if row.provenance.status is Status.DOCUMENTED else 'inferred'})"]
        found = found if row.cann is not None else []
        listed = dict.fromkeys(
            text
            for w in self.windows
            if row.pta is not None
            and w.kind == "compatible"
            and w.covers_pta(row.pta)
            and (not w.torch_npu or row.version in w.torch_npu)
            for text in w.cann_text
        )
        if listed:
            found.append("CANN " + "/".join(_nearest_first(list(listed), near)) + " (published tables)")
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
        """The SoC row for an ``npu-smi info`` Name (A3 needs the board's Chip/NPU Name); else the
        row that names this npu-smi Name itself (the Ascend 950 prints ``Ascend950PR``, whose full
        SoC carries a suffix only the board info gives, like the A3)."""
        soc_version = soc_version_for_npu_smi(name, board_chip_name=board_chip_name, board_npu_name=board_npu_name)
        row = self.soc(soc_version) if soc_version else None
        wanted = name.strip().lower()
        return row or next((s for s in self.socs if (s.npu_smi_name or "").lower() == wanted), None)

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


def _nearest_first(texts: list[str], near: AscendVersion) -> list[str]:
    """CANN versions as a table writes them, by how many of them lie between each and ``near``."""

    def at(text: str) -> AscendVersion:
        return _cann(text[:-2] + ".0" if text.upper().endswith(".X") else text)

    ordered = sorted(texts, key=at)
    below = [t for t in ordered if at(t) < near]
    above = [t for t in ordered if at(t) >= near]
    out: list[str] = []
    while below or above:  # one step away on each side in turn, the newer side first
        if above:
            out.append(above.pop(0))
        if below:
            out.append(below.pop())
    return out


def _inferred_row(release: CannRelease) -> str:
    """A release row whose package names are themselves inferred, with what it says about it."""
    said = release.provenance.notes[0] if release.provenance.notes else release.provenance.url
    return f"compat/cann.toml's CANN {release.version} row ({said.rstrip('.')})"


def soc_version_for_npu_smi(
    name: str, *, board_chip_name: Optional[str] = None, board_npu_name: Optional[str] = None
) -> Optional[str]:
    """The ATC ``--soc_version`` for an npu-smi Name: ``"Ascend" + name`` (910B4 → Ascend910B4,
    910B4-1 → Ascend910B4-1, the old-generation 910B → Ascend910B). A3 prints ``Ascend910``; its
    SoC is board Chip Name + "_" + NPU Name (Ascend910_9392); without the board info → None.
    Sources: ATC --soc_version doc (canncommercial 80RC2 atlasatc_16_0069); A3 rule from the CANN
    8.5.0 operator guide (atlas_ascendc_10_0068)."""
    if board_chip_name and board_npu_name:
        return f"{board_chip_name.strip()}_{board_npu_name.strip()}"
    name = name.strip()
    if not name or name.lower().startswith("ascend"):
        return None
    return "Ascend" + name


def _names(products: tuple[str, ...], context: tuple[str, ...]) -> bool:
    """Whether the machine is one of ``products``: a compute unit or product name, or a card model
    of that product ("Atlas 350 A5", ascend-deployer's card_map name, is an "Atlas 350")."""
    return any(c == p or c.startswith(p + " ") for p in products for c in context)


def _desc(version: Version) -> tuple:
    return tuple(-x for x in version.release) + ((0,) if version.post is None else (-version.post,))


def _cann(value: str | AscendVersion) -> AscendVersion:
    return value if isinstance(value, AscendVersion) else AscendVersion.parse(value, line=ProductLine.CANN)


def _driver(value: str | AscendVersion) -> AscendVersion:
    return value if isinstance(value, AscendVersion) else AscendVersion.parse(value, line=ProductLine.DRIVER)


def _hex(value: int | str) -> int:
    return value if isinstance(value, int) else int(str(value).strip(), 16)
