"""Rules over the *kind* of a message, not over one known log: a missing shared library is judged
by the package that ships it, an undefined symbol by the namespace it belongs to and the library
that wants it, an out-of-memory error by its numbers.

compat/triage/layers.toml says what belongs to which layer (library name patterns, C++ namespaces)
and what each situation means (``[[meaning]]``: causes with the checks that decide them), each row
with its public source; it is validated at load like the signature table. A family signature of
signatures.toml selects the line and captures the names (``lib``, ``symbol``); ``derive`` turns
the line into a concrete signature, so a new log of a known kind needs no new entry.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Optional

from ascenv.triage.libraries import EMPTY, Libraries, Shipped, load_libraries
from ascenv.triage.rules import CauseRule, Signature, cause_rule

FILE = "layers.toml"

# What a library or a symbol can belong to, and the doctor layer each is shown under.
DOCTOR_LAYER = {
    "driver": "driver",
    "cann": "cann",
    "cann_compiler": "cann",
    "nnal": "cann",
    "torch": "python",
    "torch_npu": "torch_npu",
    "framework": "application",
    "python": "python",
    "system": "application",
}
UNKNOWN_LIBRARY = "framework"  # a library no row knows is some framework's or project's own
OWN = "own"  # a symbol of no known namespace: the library's own code
ABSENT = "absent"  # the message names no library
WINDOW = 640  # characters around a family's literal that its regex reads
# the meanings the memory family picks from by the numbers
MEMORY_MEANINGS = ("memory_held_elsewhere", "memory_exhausted")


@dataclass(frozen=True)
class Library:
    patterns: tuple[str, ...]  # fnmatch globs over the file name, or over the path when they hold "/"
    layer: str
    package: str  # what ships it, in words
    missing: str  # the [[meaning]] id of its absence
    source: tuple[str, ...]
    # a judgment no file list can make (e.g. which releases lack the library): before the lists
    over_lists: bool = False


@dataclass(frozen=True)
class Namespace:
    names: tuple[str, ...]  # the leading C++ namespace / class, exactly
    prefixes: tuple[str, ...]  # C function name prefixes (aclrt..., Hccl...)
    layer: str
    source: tuple[str, ...]


@dataclass(frozen=True)
class Meaning:
    id: str
    summary: str
    source: tuple[str, ...]
    causes: tuple[CauseRule, ...]


@dataclass(frozen=True)
class Undefined:
    symbol: tuple[str, ...]  # layers of the symbol ("*": any, "own": no known namespace)
    library: tuple[str, ...]  # layers of the library that wants it ("*", "absent")
    meaning: str


@dataclass(frozen=True)
class Importer:
    names: tuple[str, ...]  # a Python package's import / distribution names
    library: str  # the native library it stands for
    source: tuple[str, ...]
    pattern: re.Pattern[str]  # the names as whole words


@dataclass(frozen=True)
class Layers:
    libraries: tuple[Library, ...]
    namespaces: tuple[Namespace, ...]
    meanings: dict[str, Meaning]
    undefined: tuple[Undefined, ...]
    missing: dict[str, str]  # layer -> the [[meaning]] of the absence of one of its libraries
    shipped: Libraries = EMPTY  # libraries.toml: read from real packages' file lists
    importers: tuple[Importer, ...] = ()  # packages that stand for a library the message omits

    def library(self, name: str) -> Optional[Library]:
        """What ships ``name`` (a file name or a path): a library a real package's file list
        names, else the first hand-kept row whose pattern matches, else a family glob of the
        file lists (a name is more certain than a judgment, a judgment than a shared prefix).
        A hand-kept row marked ``over_lists`` (what older releases lack) comes before the lists."""
        base = name.rsplit("/", 1)[-1]
        for row in self.libraries:
            if row.over_lists and any(fnmatch.fnmatchcase(name if "/" in p else base, p) for p in row.patterns):
                return row
        shipped = self.shipped.exact(name)
        if shipped is not None:
            return self._row(shipped)
        for row in self.libraries:
            for pattern in row.patterns:
                if fnmatch.fnmatchcase(name if "/" in pattern else base, pattern):
                    return row
        family = self.shipped.family(name)
        return self._row(family) if family is not None else None

    def _row(self, shipped: Shipped) -> Library:
        return Library((shipped.pattern,), shipped.layer, shipped.package, self.missing[shipped.layer], shipped.source)

    def importer(self, text: str) -> Optional[str]:
        """The library of the first [[importer]] package the text names, or None."""
        return next((i.library for i in self.importers if i.pattern.search(text)), None)

    def symbol_layer(self, symbol: str) -> str:
        head = leading_name(symbol)
        for row in self.namespaces:
            if head in row.names or head.startswith(row.prefixes):
                return row.layer
        return OWN


def leading_name(symbol: str) -> str:
    """The first name of a symbol: the outermost namespace or class of an Itanium-mangled C++ name
    (``_ZN7c10_npu3acl20AclrtPeekAtLastError...`` -> ``c10_npu``; ``_ZNK3c1010TensorImpl...`` ->
    ``c10``), or a C name itself (``aclrtMalloc``). Only the prefix is decoded: <nested-name> is
    N [<CV-qualifiers>] [<ref-qualifier>] <source-name>..., <source-name> is <length><identifier>
    (Itanium C++ ABI, "Mangling": https://itanium-cxx-abi.github.io/cxx-abi/abi.html#mangling)."""
    text = symbol.strip().strip("'\"`,.;")
    text = text.split("@", 1)[0]  # symbol versions: name@VERSION
    if not text.startswith("_Z"):
        return re.split(r"[^A-Za-z0-9_]", text, maxsplit=1)[0]
    rest = text[2:]
    if rest[:2] in ("TV", "TI", "TS", "Th", "Tv"):  # vtable, typeinfo, its name, thunks: then a name
        rest = rest[2:]
    if rest.startswith("L"):  # internal linkage
        rest = rest[1:]
    if rest.startswith("N"):
        rest = rest[1:].lstrip("rVKRO")
    if rest.startswith("St"):  # ::std::
        return "std"
    digits = re.match(r"\d+", rest)
    if digits is None:
        return ""
    length = int(digits.group())
    return rest[digits.end() : digits.end() + length]


def derive(signature: Signature, text: str, layers: Optional[Layers]) -> Optional[Signature]:
    """The concrete signature a family signature's line stands for, or None (the line is not of
    the kind after all, e.g. a number the memory rules cannot read)."""
    if layers is None or signature.regex is None:
        return None
    # only the text around the literal: a capture such as "<library>: undefined symbol" tries up
    # to 300 characters at each start, which over a whole 64 KiB line would be quadratic
    at = min((i for i in (text.find(literal) for literal in signature.literals) if i >= 0), default=0)
    text = text[max(0, at - WINDOW) : at + WINDOW]
    found = signature.regex.search(text)
    if found is None:
        return None
    groups = found.groupdict()
    if signature.family == "missing_library":
        return _missing_library(signature, groups, layers)
    if signature.family == "undefined_symbol":
        return _undefined_symbol(signature, groups, layers, text)
    if signature.family == "memory":
        return _memory(signature, text, layers)
    return None


def _library_name(groups: dict[str, Optional[str]]) -> Optional[str]:
    lib = groups.get("lib")
    if lib:
        return lib.strip("'\"`()[],;:")
    link = groups.get("link")  # ld: cannot find -lNAME
    return f"lib{link}.so" if link else None


def _missing_library(signature: Signature, groups: dict, layers: Layers) -> Optional[Signature]:
    name = _library_name(groups)
    if not name:
        return None
    row = layers.library(name)
    meaning = layers.meanings[row.missing if row else "library_unknown"]
    base = name.rsplit("/", 1)[-1]
    shipped = f"{row.package} ships it" if row else "no known Ascend package ships it"
    return _concrete(
        signature,
        meaning,
        layer=DOCTOR_LAYER[row.layer] if row else "application",
        summary=f"{base} not found ({shipped}): {meaning.summary}",
        source=row.source if row else (),
    )


def _undefined_symbol(signature: Signature, groups: dict, layers: Layers, text: str) -> Optional[Signature]:
    symbol = groups.get("symbol")
    if not symbol:
        return None
    symbol_layer = layers.symbol_layer(symbol)
    # no library in the message: the package being imported around it stands for its library
    name = _library_name(groups) or layers.importer(text)
    row = layers.library(name) if name else None
    library_layer = row.layer if row else (UNKNOWN_LIBRARY if name else ABSENT)
    rule = next(
        (
            u
            for u in layers.undefined
            if (symbol_layer in u.symbol or "*" in u.symbol) and (library_layer in u.library or "*" in u.library)
        ),
        None,
    )
    if rule is None:
        return None
    meaning = layers.meanings[rule.meaning]
    head = leading_name(symbol) or symbol
    where = name.rsplit("/", 1)[-1] if name else "a library"
    return _concrete(
        signature,
        meaning,
        layer=DOCTOR_LAYER.get(library_layer, "application"),
        summary=f"{where} ({library_layer}) needs a {head}:: symbol ({symbol_layer}), not there: {meaning.summary}",
        source=row.source if row else (),
    )


# Numbers of the memory messages. torch_npu's caching allocator (the same text as PyTorch's CUDA
# allocator, torch_npu/csrc/core/npu/NPUCachingAllocator.cpp): "Tried to allocate 98.00 MiB (NPU 0;
# 29.50 GiB total capacity; 1010.15 MiB already allocated; ... 39.48 MiB free; 1.02 GiB reserved in
# total by PyTorch)"; vllm-ascend's start-up check (vllm_ascend/worker/worker.py): "Free memory on
# device (27.18/60.96 GiB) on startup is less than desired ..."; MindSpore's memory pool: "Out of
# Memory!!! total[3212254720] ... malloc[32611480064] failed".
_SIZE = r"([\d.]+) ?([KMGT]i?B|B)"
_TOTAL = re.compile(_SIZE + r" total capacity")
_ALLOCATED = re.compile(_SIZE + r" already allocated")
_FREE = re.compile(_SIZE + r" free")
_RESERVED = re.compile(_SIZE + r" reserved in total")
_VLLM = re.compile(r"Free memory on device \(([\d.]+)/([\d.]+) ?GiB\)")
_MINDSPORE = re.compile(r"total\[(\d+)\].{0,200}?malloc\[(\d+)\]")
_UNITS = {"B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
HELD_ELSEWHERE = 0.25  # of the card's memory held by no one this process knows: another process


def _bytes(found: Optional[re.Match]) -> Optional[float]:
    if found is None:
        return None
    unit = found.group(2)
    return float(found.group(1)) * _UNITS.get(unit, _UNITS.get(unit.replace("i", ""), 1))


def held_elsewhere(text: str) -> Optional[tuple[float, float]]:
    """(bytes held outside this process, total bytes) read from a memory message, or None."""
    total = _bytes(_TOTAL.search(text))
    free = _bytes(_FREE.search(text))
    if total is not None and free is not None:
        mine = max(_bytes(_RESERVED.search(text)) or 0.0, _bytes(_ALLOCATED.search(text)) or 0.0)
        return max(total - free - mine, 0.0), total
    vllm = _VLLM.search(text)
    if vllm is not None:  # vLLM checks before it allocates anything: all used memory is someone else's
        free_gib, total_gib = float(vllm.group(1)), float(vllm.group(2))
        return (total_gib - free_gib) * _UNITS["GiB"], total_gib * _UNITS["GiB"]
    mindspore = _MINDSPORE.search(text)
    if mindspore is not None:  # a request larger than the whole pool: nobody else is involved
        return 0.0, float(mindspore.group(1))
    return None


def _memory(signature: Signature, text: str, layers: Layers) -> Optional[Signature]:
    numbers = held_elsewhere(text)
    if numbers is None:
        return None
    other, total = numbers
    busy = total > 0 and other / total >= HELD_ELSEWHERE
    meaning = layers.meanings["memory_held_elsewhere" if busy else "memory_exhausted"]
    summary = f"{other / 2**30:.2f} GiB of {total / 2**30:.2f} GiB held outside this process: {meaning.summary}"
    return _concrete(signature, meaning, layer="npu", summary=summary, source=())


def _concrete(signature: Signature, meaning: Meaning, layer: str, summary: str, source: tuple) -> Signature:
    return replace(
        signature,
        id=f"{signature.id}:{meaning.id}",
        layer=layer,
        summary=summary,
        causes=meaning.causes,
        source=tuple(dict.fromkeys((*signature.source, *meaning.source, *source))),
        family=None,
    )


def load_layers(directory: Path, known_checks: Optional[set[str]] = None) -> Optional[Layers]:
    """Read and validate layers.toml next to signatures.toml (errors name file and key path);
    None when the directory has none (a table without family signatures needs none)."""
    from ascenv import compat

    if not (directory / FILE).exists():
        return None

    reader = compat.read_table(directory, FILE)

    def sources(row: Any) -> tuple[str, ...]:
        urls = row.strings("source", required=True)
        for i, url in enumerate(urls):
            if not url.startswith("https://"):
                raise row.fail(f"source[{i}]", f"expected an https:// URL, found {url!r}")
        return urls

    def one_of(row: Any, key: str, allowed: Any, problem: str) -> str:
        value = row.string(key)
        if value not in allowed:
            raise row.fail(key, problem.format(value=value))
        return value

    def layer(row: Any) -> str:
        return one_of(row, "layer", DOCTOR_LAYER, f"expected one of {', '.join(DOCTOR_LAYER)}, found {{value!r}}")

    def meaning(row: Any) -> Meaning:
        return Meaning(
            id=row.string("id"),
            summary=row.string("summary"),
            source=sources(row),
            causes=row.rows("cause", lambda r: cause_rule(r, known_checks)),
        )

    meanings: dict[str, Meaning] = {}
    for index, m in enumerate(reader.rows("meaning", meaning)):
        if m.id in meanings:
            raise reader.fail(f"meaning[{index}].id", f"{m.id!r} used twice")
        meanings[m.id] = m

    def known_meaning(row: Any, key: str) -> str:
        return one_of(row, key, meanings, "no [[meaning]] with id {value!r}")

    def library(row: Any) -> Library:
        return Library(
            patterns=row.strings("patterns", required=True),
            layer=layer(row),
            package=row.string("package"),
            missing=known_meaning(row, "missing"),
            source=sources(row),
            over_lists=bool(row.raw("over_lists", bool, False)),
        )

    def namespace(row: Any) -> Namespace:
        names, prefixes = row.strings("names"), row.strings("prefixes")
        if not names and not prefixes:
            raise row.fail("names", "expected names or prefixes")
        return Namespace(names=names, prefixes=prefixes, layer=layer(row), source=sources(row))

    symbol_layers = (*DOCTOR_LAYER, OWN, "*")
    library_layers = (*DOCTOR_LAYER, ABSENT, "*")

    def undefined(row: Any) -> Undefined:
        for key, allowed in (("symbol", symbol_layers), ("library", library_layers)):
            for i, value in enumerate(row.strings(key, required=True)):
                if value not in allowed:
                    raise row.fail(f"{key}[{i}]", f"expected one of {', '.join(allowed)}, found {value!r}")
        return Undefined(row.strings("symbol"), row.strings("library"), known_meaning(row, "meaning"))

    def importer(row: Any) -> Importer:
        names = row.strings("names", required=True)
        library = row.string("library")
        words = "|".join(re.escape(n) for n in names)
        # whole words in ASCII: Chinese text glued to the name ("导入torch_npu时") is a boundary
        return Importer(names, library, sources(row), re.compile(rf"(?<![A-Za-z0-9_.-])(?:{words})(?![A-Za-z0-9_])"))

    missing: dict[str, str] = {}
    for index, (which, meaning_id) in enumerate(
        reader.rows("missing", lambda row: (layer(row), known_meaning(row, "meaning")))
    ):
        if which in missing:
            raise reader.fail(f"missing[{index}].layer", f"{which!r} listed twice")
        missing[which] = meaning_id
    for which in DOCTOR_LAYER:
        if which not in missing:
            raise reader.fail("missing", f"no [[missing]] row for layer {which!r} (libraries.toml may name one)")

    layers = Layers(
        libraries=reader.rows("library", library),
        namespaces=reader.rows("namespace", namespace),
        meanings=meanings,
        undefined=reader.rows("undefined", undefined),
        missing=missing,
        shipped=load_libraries(directory, tuple(DOCTOR_LAYER)),
        # optional: a table without [[importer]] rows reads the libraries messages name, only
        importers=reader.rows("importer", importer) if reader.raw("importer", list, False) else (),
    )
    for index, row in enumerate(layers.importers):
        if layers.library(row.library) is None:
            problem = f"no library row or package file list names {row.library!r}"
            raise reader.fail(f"importer[{index}].library", problem)
    for needed in (*MEMORY_MEANINGS, "library_unknown"):
        if needed not in meanings:
            raise reader.fail("meaning", f"no [[meaning]] with id {needed!r} (the families need it)")
    reader.done()
    return layers
