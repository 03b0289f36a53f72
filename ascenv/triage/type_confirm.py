"""Confirm "the SoC lacks this Ascend C data type" with the judged machine's chip and CANN's table
of which product has which built-in data type.

Ascend C's built-in types differ per product: int4x2_t, hifloat8_t and the fp8/fp4 types are the
Ascend 950's only, bfloat16_t is not on the Atlas 200I/500 A2, inference (310P) or training (910)
products (CANN's page 内置数据类型 / Built-in Data Types, atlas_ascendc_10_0019, saved in
compat/sources/ and generated into compat/triage/ascendc_types.toml by bin/ascendc_types.py). A
build that stops on "<type> is not supported" either compiles for a SoC without the type, or
targets another SoC than the chip (a SOC_TYPE set by hand, a build-script regression): the text
cannot tell, the machine can. For a soc_unsupported cause whose lines name a type, the table
answers on the chip ``npu-smi info`` (or the PCI id) names, mapped to its compute unit by the
hardware table the doctor uses:

- confirmed when the chip's product lacks a type the log names;
- ruled out when it has every one of them (what is left, a build targeting another SoC, is not
  confirmed by this: it is only what the text's other cause says);
- not checkable, with the reason, where the machine is no Ascend host, its chip is not known, the
  table has no row for its product, or no row names the type.

The graph data type of bfloat16 (DT_BFLOAT16 / DT_BF16 / ACL_BF16, the CANN runtime's aclDataType
and GE's DataType) is Ascend C's bfloat16_t: a kernel computes in bf16 only where the product's
Ascend C has the type (issue #24: "DT_BFLOAT16 on a 910A or 310P").
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from ascenv.model import Snapshot
from ascenv.triage.scan import LineGroup
from ascenv.triage.verdict import CONFIRMED, NOT_CHECKABLE, RULED_OUT, CheckVerdict, Machine

CHECK = "ascendc-types"  # CANN's table of Ascend C built-in data types per product (no doctor check)
CAUSE = "soc_unsupported"
FILE = "ascendc_types.toml"
# the bfloat16 of the runtime's and the graph's data-type enums (aclDataType ACL_BF16, ge DT_BF16)
ALIASES = {"DT_BFLOAT16": "bfloat16_t", "DT_BF16": "bfloat16_t", "ACL_BF16": "bfloat16_t"}
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_UNIT = re.compile(r"^ascend[0-9a-z_]+$")


@dataclass(frozen=True)
class ProductTypes:
    name: str  # as CANN's page writes it ("Atlas A2 训练系列产品/Atlas A2 推理系列产品")
    compute_unit: str  # compat/hardware.toml's chip family (ascend910b)
    types: frozenset[str]


@dataclass(frozen=True)
class TypeTable:
    source: str
    products: tuple[ProductTypes, ...]

    @property
    def known(self) -> frozenset[str]:
        """Every type some product row names."""
        return frozenset().union(*(p.types for p in self.products))

    def rows(self, unit: str) -> tuple[ProductTypes, ...]:
        return tuple(p for p in self.products if p.compute_unit == unit)


def load_types(directory: Optional[Path] = None) -> TypeTable:
    """Read and validate ``ascendc_types.toml`` (compat/triage by default), failing with the key path."""
    from ascenv import compat
    from ascenv.paths import data_dir

    directory = Path(directory) if directory is not None else data_dir("compat") / "triage"
    reader = compat.read_table(directory, FILE)
    source = reader.string("source")
    if not source.startswith("https://"):
        raise reader.fail("source", f"expected an https:// URL, found {source!r}")
    reader.string("retrieved")

    def product(row: Any) -> ProductTypes:
        unit = row.string("compute_unit")
        if not _UNIT.match(unit):
            raise row.fail("compute_unit", f"expected a compute unit like 'ascend910b', found {unit!r}")
        row.string("npu")
        types = row.strings("types", required=True)
        for i, name in enumerate(types):
            if not _IDENTIFIER.match(name):
                raise row.fail(f"types[{i}]", f"expected a C type name, found {name!r}")
        return ProductTypes(row.string("name"), unit, frozenset(types))

    products = reader.rows("product", product)
    if not products:
        raise reader.fail("product", "expected at least one product row")
    reader.done()
    return TypeTable(source, products)


@functools.cache
def _shipped() -> TypeTable:
    return load_types()


@functools.cache
def _hardware() -> Any:
    # the shipped hardware table maps an npu-smi name or PCI id to its compute unit (the doctor's)
    from ascenv import compat

    return compat.load()


def named_types(lines: Sequence[LineGroup], known: frozenset[str]) -> list[str]:
    """The Ascend C types the lines name, in order, once each: the table's, an alias as its type,
    and any other ``<name>_t`` (Ascend C's spelling of a type: one the table lacks, say)."""
    names = sorted(set(known) | set(ALIASES), key=len, reverse=True)
    pattern = re.compile(
        r"(?<![A-Za-z0-9_])(" + "|".join(map(re.escape, names)) + r"|[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*_t)"
        r"(?![A-Za-z0-9_])"
    )
    found = (ALIASES.get(m.group(1), m.group(1)) for group in lines for m in pattern.finditer(group.text))
    return list(dict.fromkeys(found))


def with_type_verdict(
    cause: str,
    verdicts: tuple[CheckVerdict, ...],
    lines: Sequence[LineGroup],
    snapshot: Snapshot,
    machine: Machine,
    table: Optional[TypeTable] = None,
    hardware: Any = None,
) -> tuple[CheckVerdict, ...]:
    """The verdicts of a soc_unsupported cause with the type table's answer on this chip, when the
    cause's lines name an Ascend C type; the others unchanged."""
    if cause != CAUSE:
        return verdicts
    table = table or _shipped()
    named = named_types(lines, table.known)
    if not named:
        return verdicts
    mine = type_verdict(named, table, snapshot, machine, hardware)
    return (*(v for v in verdicts if v.check != CHECK), mine)


def type_verdict(
    named: Sequence[str], table: TypeTable, snapshot: Snapshot, machine: Machine, hardware: Any = None
) -> CheckVerdict:
    missing = machine.missing(("ascend",))
    if missing:
        return CheckVerdict(CHECK, NOT_CHECKABLE, missing)
    listed = [t for t in named if t in table.known]
    unlisted = [t for t in named if t not in table.known]
    from ascenv.checks._facts import device_socs

    socs = [s for s in device_socs(snapshot, hardware if hardware is not None else _hardware()) if s.compute_unit]
    if not socs:
        return CheckVerdict(
            CHECK, NOT_CHECKABLE, "this machine's chip is not known (npu-smi names no chip the hardware table has)"
        )
    lacking, having, undecided = [], [], []
    for soc in socs:
        unit = soc.compute_unit or ""
        rows = table.rows(unit)
        chip = f"{soc.name} ({unit})"
        if not rows:
            undecided.append(f"CANN's Ascend C data-type table has no product of {chip}")
            continue
        product = " / ".join(r.name for r in rows)
        absent = [t for t in listed if not any(t in r.types for r in rows)]
        partial = [t for t in listed if t not in absent and not all(t in r.types for r in rows)]
        if absent:
            lacking.append(f"{chip}, {product}, has no {', '.join(absent)} in Ascend C")
        elif partial:
            undecided.append(f"{chip}: only some cores of {product} have {', '.join(partial)}")
        elif listed:
            having.append(f"{chip}, {product}, has {', '.join(listed)} in Ascend C")
    said = f"the log names {', '.join(named)}; "
    if lacking:
        return CheckVerdict(CHECK, CONFIRMED, said + "; ".join(lacking) + f" ({table.source})")
    if unlisted:
        undecided.append(f"no product of CANN's Ascend C data-type table lists {', '.join(unlisted)}")
    if undecided:
        return CheckVerdict(CHECK, NOT_CHECKABLE, said + "; ".join(undecided))
    return CheckVerdict(CHECK, RULED_OUT, said + "; ".join(having) + f" ({table.source})")
