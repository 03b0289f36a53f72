"""Version types: Huawei's Ascend version strings, and small helpers for Python packages.

Ascend strings are not PEP 440 (``8.2.RC1.alpha001``, ``24.1.rc2.2`` and
``V100R001C22SPC001B231`` are rejected or misread by ``packaging``), so they get their own
type, ``AscendVersion``. It keeps the raw text for display and orders strings the way Huawei
means them, within one product line only: CANN, driver (HDK) and firmware numbers are unrelated
series, so comparing across lines raises.

Python packages (python, torch, torch_npu) use ``packaging``; pre-release handling is always
passed explicitly because its default changed in packaging 26.0 (its CHANGELOG.rst, 26.0:
``Specifier.contains`` pre-release handling).
"""

from __future__ import annotations

import enum
import functools
import re
from dataclasses import dataclass, field
from typing import Optional

import packaging.version

from ascenv import guard
from ascenv.errors import IncomparableVersions, InvalidVersion


class ProductLine(str, enum.Enum):
    """Series whose numbers can be compared with each other, and only with each other."""

    CANN = "cann"  # 8.0.RC2, 8.2.RC1.alpha001, 8.0.T63, 8.5.0, 9.0.0-beta.1
    DRIVER = "driver"  # HDK / driver: 24.1.rc2.2, 25.3.rc1.b020, 23.0.0, 22.0.4.1
    FIRMWARE = "firmware"  # 7.5.0.2.220 (its own numbering, unrelated to the HDK number)
    COMPONENT = "component"  # CANN component Version= (compiler/opp/runtime): 7.7.0.1.238, 7.5.T11.0.B081
    PTA = "pta"  # Ascend Extension for PyTorch / TorchNPU release: 6.0.rc1, 7.3.0, 26.1.0-beta.2
    INNER = "inner"  # Innerversion release trains: V100R001C22SPC001B231


# The ordering of dotted Ascend strings lives in ascenv.guard (standard library only), so the import
# guard a project ships orders versions exactly as doctor and check do.
_STAGE_T, _PRE_RANK, _NO_PRE = guard.STAGE_T, guard.PRE_RANK, guard.NO_PRE

_INNER = re.compile(r"V([0-9]+)R([0-9]+)C([0-9]+)(?:SPC([0-9]+))?(?:B([0-9]+))?")


@functools.total_ordering
@dataclass(frozen=True, eq=False)
class AscendVersion:
    """A parsed Ascend version. ``str()`` gives back the text exactly as read."""

    raw: str
    line: ProductLine
    key: tuple = field(repr=False)
    parts: tuple = field(repr=False)  # normalised tokens, for prefix ranges ("24.1." = 24.1.*)

    @classmethod
    def parse(cls, text: str, *, line: ProductLine) -> AscendVersion:
        if not isinstance(text, str):
            raise InvalidVersion(f"{line.value} version must be text, found {type(text).__name__} {text!r}")
        stripped = text.strip()
        if line is ProductLine.INNER:
            key, parts = _parse_inner(stripped, text)
        else:
            key, parts = _parse_dotted(stripped, text, line)
        return cls(raw=text, line=line, key=key, parts=parts)

    # -- what the string says ------------------------------------------------------------------

    @property
    def release(self) -> tuple[int, int]:
        """(major, minor), or for an inner version (V, R)."""
        return self.key[0], self.key[1]

    @property
    def is_test_build(self) -> bool:
        """An internal ``X.Y.Tn`` build: its place among the RCs is not knowable from the string."""
        return self.line is not ProductLine.INNER and self.key[2] == _STAGE_T

    @property
    def is_prerelease(self) -> bool:
        """alpha/beta/rc suffix, or a T build."""
        return self.is_test_build or (self.line is not ProductLine.INNER and self.key[4] != _NO_PRE)

    @property
    def train(self) -> str:
        """The release train of an inner version: ``V100R001C22SPC001B231`` → ``V100R001C22``."""
        if self.line is not ProductLine.INNER:
            raise TypeError(f"{self.raw!r} is a {self.line.value} version; only inner versions have a train")
        v, r, c = self.key[:3]
        return f"V{v:03d}R{r:03d}C{c:02d}"

    def commercial(self) -> AscendVersion:
        """The commercial CANN release a community ``.betaN`` label stands for (8.0.RC2.beta1 →
        8.0.RC2); other versions are returned unchanged. From 8.5 on ``beta`` is a real
        pre-release (9.0.0-beta.1 < 9.0.0) and is kept."""
        old_scheme = self.release < (8, 5)
        if self.line is ProductLine.CANN and old_scheme and self.key[4] == _PRE_RANK["beta"] and not self.key[6]:
            base = ".".join(_display(p) for p in self.parts if not (isinstance(p, tuple) and p[0] == "beta"))
            return AscendVersion.parse(base, line=self.line)
        return self

    def release_target(self) -> AscendVersion:
        """The release a CANN label leads to, for pairing it with torch_npu: ``commercial()``, and
        from 8.5 on a pre-release label maps to its release (9.0.0-beta.2 → 9.0.0, 8.5.0.alpha001
        → 8.5.0). torch_npu names only releases in its tables (Ascend/pytorch COMPATIBILITY.md), and
        a beta carries its release's ABI (triton-ascend#326: the fix for 9.0.0-beta.2 is the
        torch_npu validated with 9.0.0). HDK rules keep the label itself: betas have their own."""
        base = self.commercial()
        if self.line is not ProductLine.CANN or self.release < (8, 5) or self.key[4] == _NO_PRE or self.key[6]:
            return base
        release = ".".join(_display(p) for p in self.parts if not (isinstance(p, tuple) and p[0] in _PRE_RANK))
        return AscendVersion.parse(release, line=self.line)

    # -- comparison ----------------------------------------------------------------------------

    def _check(self, other: object) -> AscendVersion:
        if not isinstance(other, AscendVersion):
            return NotImplemented
        if other.line is not self.line:
            raise IncomparableVersions(
                f"cannot order {self.line.value} version {self.raw!r} against {other.line.value} version "
                f"{other.raw!r}: these numbers belong to different product lines",
                hint="compare a driver with the HDK families in compat/cann.toml, not with a CANN number",
            )
        return other

    def __eq__(self, other: object) -> bool:
        # Equality never raises (versions of different lines are simply not equal), so versions
        # can live in sets and dicts; ordering across lines does raise.
        if not isinstance(other, AscendVersion):
            return NotImplemented
        return self.line is other.line and self.key == other.key

    def __hash__(self) -> int:
        return hash((self.line, self.key))

    def __lt__(self, other: object) -> bool:
        checked = self._check(other)
        if checked is NotImplemented:
            return NotImplemented
        return self.key < checked.key

    def startswith(self, prefix: AscendVersion) -> bool:
        """Whether this version lies in the family ``prefix.*`` (24.1.rc2.2 in 24.1)."""
        self._check(prefix)
        return self.parts[: len(prefix.parts)] == prefix.parts

    def __str__(self) -> str:
        return self.raw

    def __repr__(self) -> str:
        return f"AscendVersion({self.raw!r}, line={self.line.value})"


def canonical(text: str, *, line: ProductLine) -> str:
    """One spelling per version or family, for merging tables that write them differently:
    ``8.3.rc1`` and ``8.3.RC1`` → ``8.3.RC1``; ``9.0.0-beta.2`` → ``9.0.0.beta2``; ``25.7.rc1.6``
    → ``25.7.RC1.6``; a family ``9.1.x`` → ``9.1.X`` (Huawei's tables write both ``9.1.X`` and
    ``9.1.0``: a family covers its releases, see ``covers``)."""
    body = text.strip()
    if body[-2:] in (".X", ".x"):
        return canonical(body[:-2], line=line) + ".X"
    return ".".join(_display(p) for p in AscendVersion.parse(body, line=line).parts)


def covers(family: str, version: str, *, line: ProductLine) -> bool:
    """Whether ``family`` (``9.1.X``, or one release) names ``version`` (``9.1.0``, ``9.1.X``)."""
    a, b = canonical(family, line=line), canonical(version, line=line)
    return a == b or (a.endswith(".X") and b.startswith(a[:-1]))


def _bad(text: str, line: ProductLine, why: str) -> InvalidVersion:
    examples = {
        ProductLine.CANN: "8.0.RC2, 8.2.RC1.alpha001, 8.0.0, 9.0.0-beta.1",
        ProductLine.DRIVER: "24.1.rc2.2, 25.3.rc1.b020, 23.0.0",
        ProductLine.FIRMWARE: "7.5.0.2.220",
        ProductLine.COMPONENT: "7.7.0.1.238, 7.5.T11.0.B081",
        ProductLine.PTA: "6.0.rc1, 7.3.0, 26.1.0-beta.2",
        ProductLine.INNER: "V100R001C22SPC001B231",
    }[line]
    return InvalidVersion(f"not a {line.value} version: {text!r} ({why}); expected something like {examples}")


def _parse_inner(stripped: str, text: str) -> tuple[tuple, tuple]:
    match = _INNER.fullmatch(stripped)
    if not match:
        raise _bad(text, ProductLine.INNER, "expected V<n>R<n>C<n>[SPC<n>][B<n>]")
    v, r, c, spc, build = match.groups()
    # A B build without SPC (V100R001C21B081) is a pre-release build of the train; SPC packs
    # come after it. Both orderings follow the numbers as written.
    key = (int(v), int(r), int(c), int(spc) if spc else -1, int(build) if build else -1)
    return key, key


def _parse_dotted(stripped: str, text: str, line: ProductLine) -> tuple[tuple, tuple]:
    try:
        return guard.ascend_key(stripped)
    except ValueError as exc:
        raise _bad(text, line, str(exc)) from None


def _display(part: object) -> str:
    if isinstance(part, tuple):
        name, number = part
        return f"{name}{number:03d}" if name == "b" else f"{name}{number}"
    return str(part)


# --- ranges ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class VersionRange:
    """An inclusive range of one product line, as written in Ascend version.info files and
    Huawei's compatibility tables.

    * ``[7.0.0,7.7.99]`` (driver ``compatible_version_fw``): lower ≤ v ≤ upper.
    * ``[24.1,24.1.]`` (firmware ``compatible_version_drv``): a trailing dot on the upper bound
      makes it a prefix: any ``24.1.*``.
    * ``[V100R001C15]`` / ``[V100R001C13,V100R001C19]`` (toolkit ``compatible_version``): release
      trains, compared on V/R/C only (the C-code semantics are INFERRED from observed values; no spec was found).
    * ``25.0.X`` (Huawei tables): the family 25.0.*.
    * ``[8.0.RC1,]``: open upper end.
    """

    text: str
    line: ProductLine
    lower: Optional[AscendVersion]
    upper: Optional[AscendVersion]
    upper_is_prefix: bool = False

    @classmethod
    def parse(cls, text: str, *, line: ProductLine) -> VersionRange:
        body = text.strip()
        if body[:1] == "[" and body[-1:] == "]":
            bounds = [b.strip() for b in body[1:-1].split(",")]
            if len(bounds) == 1:
                bounds = bounds * 2
            if len(bounds) != 2 or not bounds[0]:
                raise InvalidVersion(f"not a {line.value} range: {text!r}; expected [low,high], [low,] or [only]")
            low, high = bounds
        elif re.fullmatch(r"[^\[\],]+\.[Xx]", body):
            low, high = body[:-2], body[:-1]  # 25.0.X → [25.0, 25.0.]
        else:
            raise InvalidVersion(f"not a {line.value} range: {text!r}; expected [low,high], [low,], [only] or X.Y.X")
        prefix = high.endswith(".")
        lower = AscendVersion.parse(low, line=line)
        upper = AscendVersion.parse(high.rstrip("."), line=line) if high else None
        return cls(text=text, line=line, lower=lower, upper=upper, upper_is_prefix=prefix)

    @classmethod
    def release_family(cls, version: str, *, line: ProductLine) -> VersionRange:
        """One release with its patches and builds: ``24.1.RC2`` → 24.1.RC2 ≤ v, v in 24.1.RC2.*
        (an HDK release ships drivers 24.1.rc2, 24.1.rc2.2, …)."""
        return cls.parse(f"[{version},{version}.]", line=line)

    def contains(self, version: AscendVersion) -> bool:
        if version.line is not self.line:
            raise IncomparableVersions(
                f"cannot test {version.line.value} version {version.raw!r} "
                f"against {self.line.value} range {self.text!r}"
            )
        if self.line is ProductLine.INNER:
            train = version.key[:3]
            return (self.lower is None or self.lower.key[:3] <= train) and (
                self.upper is None or train <= self.upper.key[:3]
            )
        if self.lower is not None and version < self.lower:
            return False
        if self.upper is None:
            return True
        return version <= self.upper or (self.upper_is_prefix and version.startswith(self.upper))

    def __str__(self) -> str:
        return self.text


def parse_range_list(text: str, *, line: ProductLine) -> tuple[VersionRange, ...]:
    """``[a,b],[c]`` (a version.info ``compatible_version*`` value) → its ranges."""
    items = re.findall(r"\[[^\[\]]*\]", text)
    if not items or re.sub(r"\[[^\[\]]*\]", "", text).strip(" ,"):
        raise InvalidVersion(f"not a list of {line.value} ranges: {text!r}; expected [a,b],[c],...")
    return tuple(VersionRange.parse(item, line=line) for item in items)


# --- Python packages ---------------------------------------------------------------------------

_RELEASE_XYZ = re.compile(r"\d+\.\d+\.\d+")


def python_version(text: str) -> packaging.version.Version:
    """A PEP 440 version (python, torch, torch_npu), or InvalidVersion quoting the text."""
    try:
        return packaging.version.Version(text)
    except (packaging.version.InvalidVersion, TypeError):
        raise InvalidVersion(f"not a PEP 440 version: {text!r}") from None


def split_local(text: str) -> tuple[str, str]:
    """``2.1.0+cpu`` → (``2.1.0``, ``+cpu``); no local label → (text, "")."""
    public, plus, local = text.partition("+")
    return public, plus + local


def torch_release(text: str) -> str:
    """The torch ``X.Y.Z`` a torch or torch_npu version stands for: ``2.1.0.post17``,
    ``2.1.0rc1``, ``2.1.0.rc1``, ``2.1.0+cxx11-abi``, ``2.1.0+cpu`` → ``2.1.0`` (torch_npu
    must match torch exactly on X.Y.Z: its wheels pin torch==X.Y.Z in Requires-Dist)."""
    match = _RELEASE_XYZ.match(text.strip())
    if not match:
        raise InvalidVersion(f"no X.Y.Z release at the start of {text!r}")
    return match.group(0)


def specifier_contains(specifier: str, version: str, *, prereleases: bool) -> bool:
    """``SpecifierSet(specifier).contains(version)`` with pre-release handling stated by the
    caller; bad input raises InvalidVersion instead of quietly returning False."""
    import packaging.specifiers  # here, not at the top: it costs doctor's start-up time

    try:
        spec = packaging.specifiers.SpecifierSet(specifier)
    except packaging.specifiers.InvalidSpecifier:
        raise InvalidVersion(f"not a PEP 440 specifier: {specifier!r}") from None
    return spec.contains(python_version(version), prereleases=prereleases)
