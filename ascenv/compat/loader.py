"""``load(directory)``: read the three shipped files, check every key (errors name the file and the
key path: ``compat/torch_npu.toml: releases[12].cann: expected string``), parse every version into
``ascenv.versions`` types and return a frozen ``Matrix``."""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, Optional, overload

from packaging.version import Version

from ascenv import paths
from ascenv.compat.model import (
    CannRelease,
    CompatWindow,
    CompilerVersion,
    GlibcFloor,
    HdkKind,
    HdkRule,
    ImageStack,
    JitChange,
    MindieRow,
    OpsPackage,
    PciCard,
    PciDevice,
    ProductSupport,
    Provenance,
    PypiListing,
    Soc,
    Status,
    TorchNpuRelease,
    TorchPin,
    TritonAscendRow,
    VllmAscendRow,
)
from ascenv.compat.queries import Matrix
from ascenv.errors import DataFileError, InvalidVersion
from ascenv.versions import (
    AscendVersion,
    ProductLine,
    VersionRange,
    parse_range_list,
    python_version,
)

SCHEMA = 1
FILES = ("cann.toml", "torch_npu.toml", "hardware.toml", "stacks.toml")


def load(directory: Optional[Path] = None, overlay: Optional[Path] = None) -> Matrix:
    """Load and validate ``compat/*.toml`` (default: the shipped copy); a file ``overlay`` (a
    user's data directory, ``ascenv.compat.overlay``) holds replaces the one of ``directory``."""
    directory = Path(directory) if directory is not None else paths.data_dir("compat")
    unexpected = sorted(p.name for p in directory.glob("*.toml") if p.name not in FILES)
    if unexpected:
        raise DataFileError(f"{directory.name}/{unexpected[0]}: unknown data file; expected only {', '.join(FILES)}")
    offered = tuple(n for n in FILES if overlay is not None and (Path(overlay) / n).is_file())
    used: list[str] = []
    ignored: list[str] = []

    def table(name: str) -> TableReader:
        shipped = read_table(directory, name)
        if name not in offered:
            return shipped
        path = str(Path(overlay or "", name))
        mine = read_table(Path(overlay or ""), name, label=path)
        # a newer ascenv ships newer data than the overlay a user made for the old one: the
        # shipped file is read, the overlay's is named as ignored (never silently shadowing it)
        if mine.date("as_of") < shipped.date("as_of"):
            ignored.append(path)
            return shipped
        used.append(path)
        return mine

    cann = table("cann.toml")
    torch_npu = table("torch_npu.toml")
    hardware = table("hardware.toml")
    stacks = table("stacks.toml")
    matrix = Matrix(
        cann_releases=cann.rows("releases", _cann_release),
        hdk_rules=cann.rows("hdk", _hdk_rule),
        compilers=cann.rows("compiler", _compiler),
        ops_packages=cann.rows("ops_packages", _ops_package),
        torch_npu_releases=torch_npu.rows("releases", _torch_npu_release),
        windows=torch_npu.rows("windows", _window),
        pypi=_pypi(torch_npu.sub("pypi")),
        socs=hardware.rows("socs", _soc),
        pci_devices=hardware.rows("pci_devices", _pci_device),
        pci_cards=hardware.rows("pci_cards", _pci_card),
        as_of=min(reader.date("as_of") for reader in (cann, torch_npu, hardware, stacks)),
        vllm_ascend=stacks.rows("vllm_ascend", _vllm_ascend),
        triton_ascend=stacks.rows("triton_ascend", _triton_ascend),
        glibc_floors=stacks.rows("glibc_floor", _glibc_floor),
        mindie=stacks.rows("mindie", _mindie),
        images=stacks.rows("images", _image),
        products=stacks.rows("products", _products),
        jit_changes=stacks.rows("jit_change", _jit_change),
        overlay=tuple(used),
        overlay_ignored=tuple(ignored),
    )
    for reader in (cann, torch_npu, hardware, stacks):
        reader.done()
    _check_references(matrix, directory.name)
    return matrix


def read_table(directory: Path, name: str, label: Optional[str] = None) -> TableReader:
    # imported here: a cached matrix (load_cached) needs no TOML parser at start-up
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.9/3.10 hosts only
        import tomli as tomllib

    label = label or f"{directory.name}/{name}"
    try:
        with open(directory / name, "rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError:
        raise DataFileError(f"{label}: missing (ascenv's compatibility data is incomplete)") from None
    except tomllib.TOMLDecodeError as exc:
        raise DataFileError(f"{label}: not valid TOML: {exc}") from None
    reader = TableReader(label, data, "")
    schema = reader.integer("schema")
    if schema != SCHEMA:
        raise DataFileError(
            f"{label}: schema: this ascenv reads schema {SCHEMA}, the file says {schema}",
            hint="use the data files shipped with this ascenv version",
        )
    return reader


_TYPE_WORDS = {str: "string", int: "integer", bool: "boolean", list: "list", dict: "table"}


class TableReader:
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

    @overload
    def string(self, key: str, required: Literal[True] = ...) -> str: ...

    @overload
    def string(self, key: str, required: bool) -> Optional[str]: ...

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

        text = self.string(key)
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

    @overload
    def version(self, key: str, line: ProductLine, required: Literal[True] = ...) -> AscendVersion: ...

    @overload
    def version(self, key: str, line: ProductLine, required: bool) -> Optional[AscendVersion]: ...

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

    def sub(self, key: str) -> TableReader:
        return TableReader(self.file, self.raw(key, dict, True), self.where(key))

    def rows(self, key: str, build: Any) -> tuple[Any, ...]:
        items = self.raw(key, list, True)
        out = []
        for i, item in enumerate(items):
            where = f"{self.where(key)}[{i}]"
            if not isinstance(item, dict):
                raise DataFileError(f"{self.file}: {where}: expected a table, found {item!r}"[:200])
            row = TableReader(self.file, item, where)
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


def _cann_release(row: TableReader) -> CannRelease:
    return CannRelease(
        version=row.version("version", ProductLine.CANN),
        chips=row.strings("chips"),
        packages=row.mapping("packages"),
        packages_inferred=row.mapping("packages_inferred"),
        innerversion=row.version("innerversion", ProductLine.INNER, required=False),
        toolkit_compatible_version=row.ranges("toolkit_compatible_version", ProductLine.INNER),
        provenance=row.provenance(),
    )


def _hdk_rule(row: TableReader) -> HdkRule:
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


def _ops_package(row: TableReader) -> OpsPackage:
    return OpsPackage(
        cann=row.version("cann", ProductLine.CANN),
        compute_unit=row.string("compute_unit"),
        package=row.string("package"),
        provenance=row.provenance(),
    )


def _compiler(row: TableReader) -> CompilerVersion:
    return CompilerVersion(
        cann=row.version("cann", ProductLine.CANN),
        version=row.version("version", ProductLine.COMPONENT),
        read_from=row.string("read_from"),
        provenance=row.provenance(),
    )


def _torch_npu_release(row: TableReader) -> TorchNpuRelease:
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


def _window(row: TableReader) -> CompatWindow:
    kind = row.string("kind", required=False) or "compatible"
    if kind not in ("compatible", "incompatible"):
        raise row.fail("kind", f"expected compatible or incompatible, found {kind!r}")
    return CompatWindow(
        pta=row.patterns("pta", ProductLine.PTA),
        cann=row.patterns("cann", ProductLine.CANN),
        provenance=row.provenance(),
        cann_text=row.strings("cann"),
        kind=kind,
        torch_npu=tuple(
            row.parsed(f"torch_npu[{i}]", lambda t=t: python_version(t)) for i, t in enumerate(row.strings("torch_npu"))
        ),
    )


def _package_version(row: TableReader, key: str, required: bool = True) -> Optional[Version]:
    text = row.string(key, required)
    return None if text is None else row.parsed(key, lambda: python_version(text))


def _vllm_ascend(row: TableReader) -> VllmAscendRow:
    return VllmAscendRow(
        version=row.python_version("version"),
        text=row.string("version"),
        vllm=tuple(
            row.parsed(f"vllm[{i}]", lambda t=t: python_version(t)) for i, t in enumerate(row.strings("vllm", True))
        ),
        python=row.string("python"),
        cann=row.version("cann", ProductLine.CANN),
        torch=row.python_version("torch"),
        torch_npu=row.python_version("torch_npu"),
        triton_ascend=_package_version(row, "triton_ascend", required=False),
        provenance=row.provenance(),
    )


def _triton_ascend(row: TableReader) -> TritonAscendRow:
    canns = tuple(
        row.parsed(f"cann[{i}]", lambda t=t: AscendVersion.parse(t, line=ProductLine.CANN))
        for i, t in enumerate(row.strings("cann", True))
    )
    return TritonAscendRow(version=row.python_version("version"), cann=canns, provenance=row.provenance())


def _glibc_floor(row: TableReader) -> GlibcFloor:
    glibc = row.string("glibc")
    if not re.fullmatch(r"\d+\.\d+", glibc):
        raise row.fail("glibc", f"expected a glibc version like 2.27, found {glibc!r}")
    return GlibcFloor(row.string("package"), row.python_version("version"), glibc, row.provenance())


def _products(row: TableReader) -> ProductSupport:
    kind = row.string("kind")
    if kind not in ("supported", "unsupported"):
        raise row.fail("kind", f"expected supported or unsupported, found {kind!r}")
    return ProductSupport(row.string("package"), kind, row.strings("compute_units", True), row.provenance())


def _jit_change(row: TableReader) -> JitChange:
    text = row.string("cann")
    return JitChange(
        frontend=row.string("frontend"),
        cann=row.parsed("cann", lambda: pattern(text, ProductLine.CANN)),
        uses=row.strings("uses", True),
        has=row.strings("has", True),
        change=row.string("change"),
        fixed_in=row.string("fixed_in"),
        provenance=row.provenance(),
    )


def _mindie(row: TableReader) -> MindieRow:
    return MindieRow(
        version=row.version("version", ProductLine.CANN),
        text=row.string("version"),
        cann=row.version("cann", ProductLine.CANN),
        pta=row.string("pta"),
        provenance=row.provenance(),
    )


def _image(row: TableReader) -> ImageStack:
    return ImageStack(
        cann=row.version("cann", ProductLine.CANN),
        chip=row.string("chip"),
        python=row.strings("python", True),
        vllm_ascend=_package_version(row, "vllm_ascend", required=False),
        vllm=_package_version(row, "vllm", required=False),
        nnal=row.version("nnal", ProductLine.CANN, required=False),
        ops_package=row.string("ops_package", required=False),
        provenance=row.provenance(),
        torch_npu=_package_version(row, "torch_npu", required=False),
        triton_ascend=_package_version(row, "triton_ascend", required=False),
        sglang=row.string("sglang", required=False),
    )


def _pypi(table: TableReader) -> PypiListing:
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


def _soc(row: TableReader) -> Soc:
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


def _pci_device(row: TableReader) -> PciDevice:
    return PciDevice(
        vendor=row.pci_id("vendor"),
        device=row.pci_id("device"),
        chip=row.string("chip"),
        compute_unit=row.string("compute_unit", required=False),
        family=row.string("family"),
        provenance=row.provenance(),
    )


def _pci_card(row: TableReader) -> PciCard:
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
    units = {s.compute_unit for s in matrix.socs}
    named = [
        (f"cann.toml: releases[{i}].{key}", unit)
        for i, release in enumerate(matrix.cann_releases)
        for key in ("chips", "packages", "packages_inferred")
        for unit in getattr(release, key)
    ]
    named += [(f"cann.toml: ops_packages[{i}].compute_unit", p.compute_unit) for i, p in enumerate(matrix.ops_packages)]
    named += [
        (f"stacks.toml: products[{i}].compute_units", u) for i, p in enumerate(matrix.products) for u in p.compute_units
    ]
    for where, unit in named:
        if unit not in units:
            expected = ", ".join(sorted(units))
            raise DataFileError(f"{folder}/{where}: unknown compute unit {unit!r}; expected one of {expected}")
    rows = {r.version for r in matrix.torch_npu_releases}
    for i, text in enumerate(matrix.pypi.versions):
        if python_version(text) not in rows:
            raise DataFileError(
                f"{folder}/torch_npu.toml: pypi.versions[{i}]: {text} is on PyPI but has no [[releases]] row"
            )
