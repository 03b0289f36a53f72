"""The stack a project declares it needs, and the verdict of a machine against it.

Declared in ``pyproject.toml`` under ``[tool.ascenv]`` (the table PEP 518 reserves for tools) or in
an ``ascenv.toml`` (the same keys at the top)::

    cann = ">=8.5.0"                     # driver, firmware, cann, nnal: Huawei's spellings (ascenv.versions)
    torch_npu = "~=2.8"                  # python, torch, torch_npu: PEP 440 specifiers
    socs = ["ascend910b", "ascend910_93"]  # compute units (compat/hardware.toml) the project supports
    [soc.ascend910_93]                   # more ranges where such an NPU is present
    cann = ">=9.0.0"
    [vendors.customize]                  # a custom operator vendor that must be installed
    op_types = ["AddCustom"]

``load`` validates every key (errors name the file and the key path, as compat/*.toml's do);
``judge`` turns a ``Snapshot`` into the same ``Finding`` objects ``doctor`` prints, one per
declared item (OK when it holds), so ``check`` renders, counts and exits like ``doctor``. The words
of a version finding come from ``ascenv.guard``, which raises them verbatim at import time.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from ascenv import guard
from ascenv.compat.loader import TableReader
from ascenv.errors import DataFileError, InvalidVersion, UsageError
from ascenv.model import UNLISTED, Finding, Severity, Snapshot, normalize_name
from ascenv.versions import AscendVersion, ProductLine

PYPROJECT, OWN_FILE = "pyproject.toml", "ascenv.toml"
# The doctor layer each constrained item is reported under (ascenv.checks.LAYERS).
REPORT_LAYER = {
    "driver": "driver",
    "firmware": "firmware",
    "cann": "cann",
    "nnal": "cann",
    "python": "python",
    "torch": "torch_npu",
    "torch_npu": "torch_npu",
    "soc": "npu",
    "vendor": "vendors",
}
ID_PREFIX = "ASC-REQ-"  # ASC-REQ-CANN, ASC-REQ-SOC, ASC-REQ-VENDOR, ...


@dataclass(frozen=True)
class Range:
    layer: str  # a key of guard.LAYERS
    spec: str  # ">=8.5.0, <9"
    where: str  # "pyproject.toml: tool.ascenv.cann", for the finding's source
    soc: Optional[str] = None  # only where an NPU of this compute unit is present


@dataclass(frozen=True)
class VendorNeed:
    name: str
    op_types: tuple[str, ...]
    where: str


@dataclass(frozen=True)
class Constraints:
    file: str  # as given or found (shown in findings)
    who: str  # [project].name, else the directory name: "<who> needs CANN >=8.5.0"
    ranges: tuple[Range, ...] = ()
    socs: tuple[str, ...] = ()
    socs_where: str = ""
    vendors: tuple[VendorNeed, ...] = ()

    def guard_ranges(self) -> dict[str, str]:
        """layer → specifier for ``ascenv.guard.require`` (the ranges without a SoC condition)."""
        return {r.layer: r.spec for r in self.ranges if r.soc is None}


EXPLAIN = """
A project declared the stack it needs ([tool.ascenv] in its pyproject.toml, or ascenv.toml) and
`ascenv check` judged this machine against it: the finding's source names the file and key. Ranges
of driver, firmware, CANN and NNAL use Huawei's version strings, ordered as Huawei means them
(8.3.RC1 < 8.5.0.alpha001 < 8.5.0); python, torch and torch_npu use PEP 440 specifiers (packaging).
socs lists the compute units the project supports; soc.<unit> adds ranges where such an NPU is
present; vendors names custom operator vendors (and op types) that must be installed where CANN
searches. The same words are what the project's import guard raises (ascenv check --emit-guard).
"""


def explained_ids() -> dict[str, tuple[str, str]]:
    """ID → (doctor layer, title) of every finding ``judge`` can give, for ``ascenv explain``."""
    items = {layer: (REPORT_LAYER[layer], f"the project's {guard.shown(layer)} range") for layer in guard.LAYERS}
    items["soc"] = ("npu", "the compute units the project supports")
    items["vendor"] = ("vendors", "a custom operator vendor the project needs")
    return {ID_PREFIX + key.upper(): value for key, value in items.items()}


# --- loading ----------------------------------------------------------------------------------


def find(path: Path) -> Path:
    """The constraints file of ``path``: the file itself, or in a directory ``ascenv.toml``, else a
    ``pyproject.toml`` that has ``[tool.ascenv]``."""
    if not path.is_dir():
        if not path.exists():
            raise UsageError(f"{path}: no such file or directory", hint="pass a project directory or its TOML file")
        return path
    own, pyproject = path / OWN_FILE, path / PYPROJECT
    if own.is_file():
        return own
    if pyproject.is_file():
        tool = _read(pyproject, PYPROJECT).get("tool")
        if isinstance(tool, dict) and "ascenv" in tool:
            return pyproject
    raise UsageError(
        f"{path}: no {OWN_FILE}, and no [tool.ascenv] table in a {PYPROJECT}",
        hint=f'declare the stack in {PYPROJECT}: [tool.ascenv] cann = ">=8.5.0" (README "Project constraints and CI")',
    )


def load(file: Path, shown: str) -> Constraints:
    """Read and validate ``file`` (shown in messages as ``shown``)."""
    data = _read(file, shown)
    if file.name == PYPROJECT:
        table = data.get("tool", {}).get("ascenv") if isinstance(data.get("tool"), dict) else None
        if not isinstance(table, dict):
            what = "missing" if table is None else f"found {type(table).__name__} {table!r}"[:120]
            raise DataFileError(f"{shown}: tool.ascenv: expected a table of constraints, {what}")
        name = data.get("project", {}).get("name") if isinstance(data.get("project"), dict) else None
        reader = TableReader(shown, table, "tool.ascenv")
    else:
        name, reader = None, TableReader(shown, data, "")
    who = name if isinstance(name, str) and name.strip() else file.resolve().parent.name or "this project"
    ranges = _ranges(reader, None)
    socs = reader.strings("socs")
    for i, unit in enumerate(socs):
        _unit(reader, f"socs[{i}]", unit)
    if "soc" in reader.data:
        overrides = reader.sub("soc")
        for unit in overrides.data:
            _unit(overrides, unit, unit)
            ranges += _ranges(TableReader(shown, overrides.raw(unit, dict, True), overrides.where(unit)), unit)
        overrides.done()
    vendors = _vendors(reader)
    reader.done()
    if not (ranges or socs or vendors):
        raise DataFileError(
            f"{shown}: {reader.path or '<top>'}: declares nothing; expected a range ({', '.join(guard.LAYERS)}),"
            " socs, soc.<unit> or vendors"
        )
    return Constraints(shown, who, ranges, socs, f"{shown}: {reader.where('socs')}", vendors)


def _read(file: Path, shown: str) -> dict:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.9/3.10 hosts only
        import tomli as tomllib
    try:
        with open(file, "rb") as handle:
            return tomllib.load(handle)
    except OSError as exc:
        raise DataFileError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise DataFileError(f"{shown}: not valid TOML: {exc}") from None


def _unit(reader: TableReader, key: str, unit: str) -> None:
    if not re.fullmatch(r"ascend[0-9a-z_]+", unit):
        raise reader.fail(
            key, f"expected a compute unit as compat/hardware.toml names it (ascend910b, ascend910_93), found {unit!r}"
        )


def _ranges(reader: TableReader, soc: Optional[str]) -> tuple[Range, ...]:
    out = []
    for layer in guard.LAYERS:
        spec = reader.string(layer, required=False)
        if spec is not None:
            reader.parsed(layer, lambda s=spec, layer=layer: _validate(layer, s))
            out.append(Range(layer, spec.strip(), f"{reader.file}: {reader.where(layer)}", soc))
    if soc is not None:
        reader.done()
    return tuple(out)


def _validate(layer: str, spec: str) -> None:
    """Every clause parses as the layer's versions do, or InvalidVersion says which does not."""
    try:
        parsed = guard.clauses(spec)
    except ValueError as exc:
        raise InvalidVersion(str(exc)) from None
    for op, version in parsed:
        family = version.endswith((".*", ".X", ".x"))
        base = version[:-2] if family else version
        if family and op not in ("==", "!="):
            raise InvalidVersion(f"{op}{version}: a .* family goes with == or != only")
        if layer in guard.ASCEND_LAYERS:
            AscendVersion.parse(base, line=ProductLine(guard.ASCEND_LAYERS[layer]))
            if op == "~=" and len(guard.ascend_key(base)[1]) < 3:
                raise InvalidVersion(f"~={version}: ~= needs at least X.Y.Z (~=8.5.0 means >=8.5.0, 8.5.*)")
        else:
            import packaging.specifiers

            try:
                packaging.specifiers.SpecifierSet(spec)
                guard.contains(layer, f"{op}{version}", "0")  # the guard reads it too
            except (packaging.specifiers.InvalidSpecifier, ValueError):
                raise InvalidVersion(f"{op}{version}: not a PEP 440 specifier") from None


def _vendors(reader: TableReader) -> tuple[VendorNeed, ...]:
    """``vendors = ["customize"]``, or ``[vendors.customize] op_types = [...]``."""
    if isinstance(reader.data.get("vendors"), list):
        where = f"{reader.file}: {reader.where('vendors')}"
        return tuple(VendorNeed(name, (), where) for name in reader.strings("vendors"))
    if "vendors" not in reader.data:
        return ()
    table = reader.sub("vendors")
    needs = []
    for name in table.data:
        entry = TableReader(reader.file, table.raw(name, dict, True), table.where(name))
        needs.append(VendorNeed(name, entry.strings("op_types"), f"{reader.file}: {table.where(name)}"))
        entry.done()
    table.done()
    return tuple(needs)


# --- judging ----------------------------------------------------------------------------------


def judge(snap: Snapshot, constraints: Constraints, matrix: Any) -> tuple[Finding, ...]:
    """One finding per declared item: OK when the machine satisfies it."""
    from ascenv.checks._facts import device_units

    units = device_units(snap, matrix)
    found = machine_versions(snap)
    findings = [
        _version_finding(constraints.who, r, found) for r in constraints.ranges if r.soc is None or r.soc in units
    ]
    if constraints.socs:
        findings.append(_soc_finding(constraints, units))
    findings += [_vendor_finding(snap, need) for need in constraints.vendors]
    return tuple(findings)


def machine_versions(snap: Snapshot) -> dict[str, tuple[str, str]]:
    """layer → (version, where it was read) from a snapshot, as ``guard.read_versions`` reads a
    live machine; NNAL from its ``version.info`` (``snap.stack``, the probe of the layer above
    torch_npu)."""
    from ascenv.checks._facts import active_install, driver_file, driver_version

    install = active_install(snap)
    dists = {normalize_name(d.name): d for d in reversed(snap.python.distributions)}  # the first one wins
    found = {
        "driver": (driver_version(snap) or "", next(iter(driver_file(snap)), "")),
        "firmware": (snap.firmware.version or "", snap.firmware.source),
        "cann": (install.version or "", install.info_file or install.path) if install else ("", ""),
        "python": (snap.python.version or "", snap.python.executable or ""),
    }
    nnal = next((part for part in snap.stack if part.name == "nnal-atb"), None)
    found["nnal"] = (nnal.version or "", nnal.source) if nnal is not None else ("", "")
    for layer in ("torch", "torch_npu"):
        dist = dists.get(normalize_name(layer))
        found[layer] = (dist.version, dist.dist_info) if dist else ("", "")
    return found


def _version_finding(who: str, need: Range, found: dict[str, tuple[str, str]]) -> Finding:
    id = ID_PREFIX + need.layer.upper()
    layer = REPORT_LAYER[need.layer]
    where = f" where an NPU of {need.soc} is present" if need.soc else ""
    if need.layer not in found:
        return _finding(
            id,
            Severity.INFO,
            f"{who} needs {guard.shown(need.layer)} {need.spec}: not judged",
            found=f"ascenv does not read the {guard.shown(need.layer)} version",
            layer=layer,
            expected=need.spec + where,
            source=need.where,
        )
    version, evidence = found[need.layer]
    title = guard.title(who, need.layer, need.spec + (f" on {need.soc}" if need.soc else ""), version)
    common: dict = dict(expected=f"{guard.shown(need.layer)} {need.spec}{where}", source=need.where)
    if version:
        common["evidence"] = (evidence,) if evidence else ()
    try:
        ok = bool(version) and guard.contains(need.layer, need.spec, version)
    except ValueError as exc:
        return _finding(
            id, Severity.ERROR, title, found=str(exc), fix=guard.fix(need.layer, need.spec), layer=layer, **common
        )
    shown = f"{guard.shown(need.layer)} {version or 'none'}" + (f" ({evidence})" if evidence else "")
    if ok:
        return _finding(
            id,
            Severity.OK,
            f"{guard.shown(need.layer)} {version} is within {need.spec}",
            found=shown,
            layer=layer,
            **common,
        )
    return _finding(id, Severity.ERROR, title, found=shown, fix=guard.fix(need.layer, need.spec), layer=layer, **common)


def _finding(id: str, severity: Severity, title: str, **fields: Any) -> Finding:
    return Finding(id=id, severity=severity, title=title, **fields)


def _soc_finding(constraints: Constraints, units: tuple[str, ...]) -> Finding:
    id, declared = ID_PREFIX + "SOC", ", ".join(constraints.socs)
    common: dict = dict(layer="npu", expected=f"NPUs of {declared}", source=constraints.socs_where)
    if not units:
        return _finding(id, Severity.INFO, f"no NPU to judge against {declared}", found="no NPU listed", **common)
    other = [u for u in units if u not in constraints.socs]
    if other:
        return _finding(
            id,
            Severity.ERROR,
            f"{constraints.who} supports {declared}, found {', '.join(other)}",
            found=", ".join(units),
            fix=f"run it on an NPU of {declared}, or add {other[0]} to socs once it is built and tested there",
            **common,
        )
    return _finding(id, Severity.OK, f"NPUs of {', '.join(units)}, as declared", found=", ".join(units), **common)


def _vendor_finding(snap: Snapshot, need: VendorNeed) -> Finding:
    id = ID_PREFIX + "VENDOR"
    vendor = next((v for v in snap.vendors if v.name == need.name and v.exists and v.priority != UNLISTED), None)
    wanted = f"custom operator vendor {need.name}" + (f" with {', '.join(need.op_types)}" if need.op_types else "")
    common: dict = dict(layer="vendors", expected=wanted, source=need.where)
    fix = f"install the {need.name} operator package (ascenv install, or its run file) where CANN searches it"
    if vendor is None:
        listed = ", ".join(v.name for v in snap.vendors if v.exists) or "none"
        return _finding(
            id, Severity.ERROR, f"no {wanted} where CANN searches", found=f"vendors: {listed}", fix=fix, **common
        )
    ops = {op for table in (vendor.ops_info, vendor.kernel_ops) for types in table.values() for op in types}
    missing = [op for op in need.op_types if op not in ops]
    if missing:
        return _finding(
            id,
            Severity.ERROR,
            f"vendor {need.name} lacks {', '.join(missing)}",
            found=f"{vendor.path}: {', '.join(sorted(ops)) or 'no op types'}",
            evidence=(vendor.path,),
            fix=fix,
            **common,
        )
    return _finding(
        id, Severity.OK, f"vendor {need.name} is installed", found=vendor.path, evidence=(vendor.path,), **common
    )


def shown_path(path: str, cwd: str) -> str:
    """A constraints path relative to the cwd when it lies below it (shorter findings)."""
    relative = os.path.relpath(path, cwd)
    return path if relative.startswith("..") else relative


GUARD_HEADER = """\
# Generated by `ascenv check --emit-guard` from {file}; regenerate it there, do not edit.
# Importing this module raises ImportError (StackMismatch) when this machine's driver, firmware,
# CANN, Python, torch or torch_npu are outside the project's ranges. Standard library only.
"""


def guard_module(constraints: Constraints) -> str:
    """The source of an importable guard: ``ascenv.guard`` itself, then the project's ranges and
    the call. SoC-conditional ranges, socs and vendors are left to ``ascenv check`` (they need
    npu-smi and the vendor trees)."""
    source = Path(guard.__file__).read_text(encoding="utf-8")
    call = f"\n\nRANGES = {constraints.guard_ranges()!r}\nrequire(who={constraints.who!r}, **RANGES)\n"
    # repr: a file name is data, and a newline in it must not end the comment and become code
    return GUARD_HEADER.format(file=repr(constraints.file)) + source + call
