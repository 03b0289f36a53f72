#!/usr/bin/env python3
"""Regenerate compat/triage/ascendc_types.toml (which Ascend C built-in data types each product
has) from the saved copy of CANN's page 内置数据类型 / Built-in Data Types in compat/sources/.

Maintenance script, not imported by ascenv. The saved copy starts with ``<!-- source: … -->``,
``<!-- retrieved: … -->`` and ``<!-- saved: … -->`` lines, then the page's section
数据类型的产品支持情况 as published: one row a product, ``- <product>：<type>、<type>、…。``, each
after the source's own chip tag ``<!-- npu="910b" idN -->``. A row's compute unit is read twice, from
the chip tag (the ops-package chip tokens of bin/compat_update.py, ``a3`` → ``ascend910_93``) and
from the product's name (the product names of CANN's install steps, same script); the two must
agree, or the copy is not what it says. Every type must be a C identifier.

    python bin/ascendc_types.py            # print what would change
    python bin/ascendc_types.py --write    # write compat/triage/ascendc_types.toml
    python bin/ascendc_types.py --check    # exit 1 when the shipped file differs
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bin"))  # the chip and product names are compat_update's, read once

import regenerate  # noqa: E402
from compat_update import _CHIP_UNITS, _PRODUCT_UNITS  # noqa: E402

SOURCE = ROOT / "compat" / "sources" / "asc-devkit-builtin-data-types.zh.md"
OUTPUT = ROOT / "compat" / "triage" / "ascendc_types.toml"
SECTION = "## 数据类型的产品支持情况"
_HEADER = re.compile(r"^<!-- (source|retrieved|saved): (.*) -->$")
_TAG = re.compile(r'^<!-- npu="(?P<npu>[0-9A-Za-z_]+)" id\d+ -->$')
_ROW = re.compile(r"^- (?P<product>[^：]+)：(?P<types>.+?)。$")
_TYPE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_URL = re.compile(r"https://\S+")


class SourceError(Exception):
    """The saved copy is not in the format this script reads (what, where, what was expected)."""


@dataclass(frozen=True)
class Product:
    name: str  # as the page writes it
    npu: str  # the page's chip tag (910b, A3, 310p, …)
    compute_unit: str  # compat/hardware.toml's name of the chip family
    types: tuple[str, ...]  # in the page's order


@dataclass(frozen=True)
class Table:
    source: str  # the URL of the page's source
    retrieved: str
    products: tuple[Product, ...]


def _unit_of_name(product: str) -> str | None:
    return next((unit for pattern, unit in _PRODUCT_UNITS if re.search(pattern, product)), None)


def parse(text: str, name: str = SOURCE.name) -> Table:
    """The product rows of the saved section, each with its compute unit and types."""
    meta: dict[str, str] = {}
    lines = text.splitlines()
    for line in lines:
        found = _HEADER.match(line.strip())
        if not found:
            break
        meta[found.group(1)] = found.group(2)
    for key in ("source", "retrieved"):
        if key not in meta:
            raise SourceError(f"{name}: no <!-- {key}: … --> line at the top")
    url = _URL.search(meta["source"])
    if url is None:
        raise SourceError(f"{name}: the source line names no https:// URL")
    if not any(line.startswith(SECTION) for line in lines):
        raise SourceError(f"{name}: no section {SECTION!r}")
    products: list[Product] = []
    tag: str | None = None
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        found_tag = _TAG.match(line)
        if found_tag:
            tag = found_tag.group("npu")
            continue
        if not line.startswith("- "):
            continue
        row = _ROW.match(line)
        if row is None:
            raise SourceError(f"{name}:{number}: expected '- <product>：<type>、…。', found {line[:80]!r}")
        if tag is None:
            raise SourceError(f"{name}:{number}: the row of {row['product']!r} has no <!-- npu=… --> tag before it")
        product = row["product"].strip()
        by_tag, by_name = _CHIP_UNITS.get(tag.lower()), _unit_of_name(product)
        if by_tag is None or by_name is None or by_tag != by_name:
            raise SourceError(
                f"{name}:{number}: {product!r} tagged npu={tag!r}: the tag gives compute unit {by_tag}, "
                f"the product's name {by_name}; expected one known compute unit from both"
            )
        types = tuple(t.strip() for t in row["types"].split("、"))
        bad = [t for t in types if not _TYPE.match(t)]
        if bad or len(set(types)) != len(types):
            raise SourceError(f"{name}:{number}: {product!r}: expected distinct C type names, found {bad or types}")
        products.append(Product(product, tag, by_tag, types))
        tag = None
    if not products:
        raise SourceError(f"{name}: no product row under {SECTION!r}")
    return Table(url.group(0), meta["retrieved"], tuple(products))


def _string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render(table: Table) -> str:
    out = [
        "# Which Ascend C built-in data types each product has: generated by bin/ascendc_types.py from",
        f"# compat/sources/{SOURCE.name} (do not edit by hand). Read by",
        "# ascenv/triage/type_confirm.py: does the judged machine's chip have the type a build said is",
        "# not supported?",
        "",
        "schema = 1",
        f"source = {_string(table.source)}",
        f"retrieved = {_string(table.retrieved)}",
    ]
    for product in table.products:
        out += [
            "",
            "[[product]]",
            f"name = {_string(product.name)}",
            f"npu = {_string(product.npu)}",
            f"compute_unit = {_string(product.compute_unit)}",
            "types = [" + ", ".join(_string(t) for t in product.types) + "]",
        ]
    return "\n".join(out) + "\n"


def generate(source: Path = SOURCE) -> str:
    return render(parse(source.read_text(encoding="utf-8"), source.name))


def main(argv: list[str] | None = None) -> int:
    return regenerate.main(
        argv,
        description=(__doc__ or "").splitlines()[0],
        generate=generate,
        output=OUTPUT,
        origin=f"compat/sources/{SOURCE.name}",
        errors=SourceError,
    )


if __name__ == "__main__":
    sys.exit(main())
