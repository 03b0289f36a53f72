#!/usr/bin/env python3
"""Regenerate compat/triage/libraries.toml (which package ships which shared library, and in
which layer of the stack) from the saved file lists of real packages in compat/sources/filelists/.

Maintenance script, not imported by ascenv. Each saved list starts with ``# key: value`` lines:
``source`` (how it was read), ``retrieved``, ``package``, ``layer`` (one of triage's library
layers), ``kind`` (``ships``: the package installs these files; ``mounts``: the files a runtime
bind-mounts from the host, which may include system libraries), ``url`` (the public page of the
package or list) and optionally ``format``. The body is the list as published, in its format:
``paths`` (the default: one path per line, or a wheel's RECORD rows ``path,hash,size``),
``cann-filelist`` (the ``filelist.csv`` a CANN .run package installs: a CSV whose
``relative_install_path`` column names each file; ``mkdir``/``del`` rows and link-time stubs
under ``devlib/`` or ``stub/``, stand-ins for the driver's libraries, are not shipped libraries)
or ``tree`` (the output of ``tree``: indentation gives the folders). Only library files
(``lib*.so``, ``lib*.so.N``) become rows.

A name listed by a ``ships`` list of one layer and a ``mounts`` list of another belongs to the
shipping package (the Ascend Docker runtime mounts libsemanage from the OS: the OS ships it).
A name two ``ships`` lists of different layers both install (the driver and the CANN runtime
each ship libc_sec.so and libmmpa.so) belongs to the first of PRECEDENCE (the OS, then the lower
layer of the stack: what a copy further up bundles is still the lower package's library), and
its row names every package. A family glob
(``libaicpu_*.so*``) is written where a layer has two or more libraries sharing a ``lib<word>_``
prefix and no library of another layer matches it.

    python bin/triage_libraries.py            # print what would change
    python bin/triage_libraries.py --write    # write compat/triage/libraries.toml
    python bin/triage_libraries.py --check    # exit 1 when the shipped file differs
"""

from __future__ import annotations

import csv
import fnmatch
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the library-name rule is triage's own, read from one place
sys.path.insert(0, str(ROOT / "bin"))  # the --write / --check command line of bin/'s generators

import regenerate  # noqa: E402

from ascenv.triage.families import DOCTOR_LAYER  # noqa: E402
from ascenv.triage.libraries import library_name  # noqa: E402

LISTS = ROOT / "compat" / "sources" / "filelists"
OUTPUT = ROOT / "compat" / "triage" / "libraries.toml"
LAYERS = tuple(DOCTOR_LAYER)
KINDS = ("ships", "mounts")
FORMATS = ("paths", "cann-filelist", "tree")
# who a library two layers both ship belongs to: the OS first, then from the bottom of the stack up
PRECEDENCE = ("system", "driver", "cann", "cann_compiler", "nnal", "torch", "torch_npu", "python", "framework")
_TREE = re.compile(r"^((?:[|` ] {3})*)(?:\|-- |`-- )(.*)$")
_STUB = re.compile(r"(^|/)(devlib|stub)/")
REQUIRED = ("source", "retrieved", "package", "layer", "kind", "url")
_FAMILY = re.compile(r"^(lib[a-z]+_)")


class ListError(ValueError):
    """A saved file list that cannot be read (says which file and what is wrong)."""


@dataclass(frozen=True)
class FileList:
    name: str
    meta: dict[str, str]
    paths: tuple[str, ...]


@dataclass
class Row:
    name: str  # the library's name up to ".so" (libz.so for libz.so.1.2.13)
    layer: str
    package: str
    url: list[str] = field(default_factory=list)
    also: list[str] = field(default_factory=list)  # the packages of other layers that ship it too
    lists: list[str] = field(default_factory=list)


def parse_filelist(name: str, text: str) -> FileList:
    """A saved list: its leading ``# key: value`` lines, then one path (or RECORD row) a line."""
    meta: dict[str, str] = {}
    lines = text.splitlines()
    index = 0
    while index < len(lines) and lines[index].startswith("#"):
        key, sep, value = lines[index][1:].partition(":")
        if not sep:
            raise ListError(f"{name}: line {index + 1}: expected '# key: value', found {lines[index]!r}")
        meta[key.strip()] = value.strip()
        index += 1
    for key in REQUIRED:
        if not meta.get(key):
            raise ListError(f"{name}: no '# {key}:' line (each list says {', '.join(REQUIRED)})")
    if meta["layer"] not in LAYERS:
        raise ListError(f"{name}: layer: expected one of {', '.join(LAYERS)}, found {meta['layer']!r}")
    if meta["kind"] not in KINDS:
        raise ListError(f"{name}: kind: expected one of {', '.join(KINDS)}, found {meta['kind']!r}")
    if not meta["url"].startswith("https://"):
        raise ListError(f"{name}: url: expected an https:// URL, found {meta['url']!r}")
    fmt = meta.setdefault("format", "paths")
    body = lines[index:]
    if fmt == "cann-filelist":
        paths = _cann_filelist(name, body)
    elif fmt == "tree":
        paths = _tree(body)
    elif fmt == "paths":
        # a RECORD row is "path,hash,size": a path never holds a comma in these lists
        paths = tuple(line.split(",", 1)[0].strip().rstrip("/") for line in body if line.strip())
    else:
        raise ListError(f"{name}: format: expected one of {', '.join(FORMATS)}, found {fmt!r}")
    return FileList(name, meta, paths)


def _cann_filelist(name: str, body: list[str]) -> tuple[str, ...]:
    rows = list(csv.reader(body))
    columns = [c.strip() for c in rows[0]] if rows else []
    if "operation" not in columns or "relative_install_path" not in columns:
        found = body[0] if body else "nothing"
        raise ListError(
            f"{name}: expected a CANN filelist.csv header with operation and relative_install_path, found {found!r}"
        )
    op, target = columns.index("operation"), columns.index("relative_install_path")
    return tuple(
        row[target].strip()
        for row in rows[1:]
        if len(row) > target and row[op].strip() not in ("mkdir", "del") and not _STUB.search(row[target])
    )


def _tree(body: list[str]) -> tuple[str, ...]:
    """The paths of a ``tree`` listing: each level indents by four characters (``|   ``)."""
    paths: list[str] = []
    stack: list[str] = []
    for line in body:
        found = _TREE.match(line)
        if found is None:
            if line.strip() and not stack and " directories" not in line:
                stack = [line.strip().rstrip("/")]  # the root line
            continue
        depth = len(found.group(1)) // 4
        entry = found.group(2).split(" -> ", 1)[0].strip()
        del stack[depth + 1 :]
        stack.append(entry)
        paths.append("/".join(stack))
    return tuple(paths)


def build(lists: Iterable[FileList]) -> tuple[list[Row], list[Row]]:
    """(library rows, family rows), each sorted by name."""
    shipped: dict[str, Row] = {}
    mounted: dict[str, Row] = {}
    for file_list in lists:
        target = shipped if file_list.meta["kind"] == "ships" else mounted
        for path in file_list.paths:
            name = library_name(path)
            if name is None:
                continue
            row = target.get(name)
            if row is None:
                row = target[name] = Row(name, file_list.meta["layer"], file_list.meta["package"])
            elif row.layer != file_list.meta["layer"] and target is shipped:
                # two layers ship it: it is the one PRECEDENCE names first; the row names both
                other, package = file_list.meta["layer"], file_list.meta["package"]
                if PRECEDENCE.index(other) < PRECEDENCE.index(row.layer):
                    row.also.insert(0, row.package)
                    row.layer, row.package = other, package
                elif package not in row.also:
                    row.also.append(package)
            if file_list.meta["url"] not in row.url:
                row.url.append(file_list.meta["url"])
            if file_list.name not in row.lists:
                row.lists.append(file_list.name)
    rows = dict(mounted)
    rows.update(shipped)  # a mounted system library belongs to the package that ships it
    libraries = sorted(rows.values(), key=lambda r: r.name)
    return libraries, families(libraries)


def families(libraries: list[Row]) -> list[Row]:
    groups: dict[tuple[str, str], list[Row]] = {}
    for row in libraries:
        found = _FAMILY.match(row.name)
        if found:
            groups.setdefault((found.group(1), row.layer), []).append(row)
    result = []
    for (prefix, layer), members in sorted(groups.items()):
        pattern = f"{prefix}*.so*"
        others = [r.name for r in libraries if r.layer != layer and fnmatch.fnmatchcase(r.name, pattern)]
        if len(members) < 2 or others:
            continue
        family = Row(pattern, layer, members[0].package)
        for member in members:
            family.url.extend(u for u in member.url if u not in family.url)
            family.lists.extend(n for n in member.lists if n not in family.lists)
        result.append(family)
    return result


def render(libraries: list[Row], family_rows: list[Row]) -> str:
    def quoted(values: Iterable[str]) -> str:
        return "[" + ", ".join(_string(v) for v in values) + "]"

    out = [
        "# Which package ships which shared library, and its layer: generated by bin/triage_libraries.py",
        "# from the saved file lists of real packages in compat/sources/filelists/ (do not edit by hand).",
        "# Read by ascenv/triage/families.py for the missing_library and undefined_symbol families.",
        "",
        "schema = 1",
    ]
    for table, rows, key in (("library", libraries, "name"), ("family", family_rows, "pattern")):
        for row in rows:
            out += [
                "",
                f"[[{table}]]",
                f"{key} = {_string(row.name)}",
                f"layer = {_string(row.layer)}",
                f"package = {_string('; also '.join([row.package, *row.also]))}",
                f"source = {quoted(row.url)}",
                f"lists = {quoted(row.lists)}",
            ]
    return "\n".join(out) + "\n"


def _string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def generate(directory: Path = LISTS) -> str:
    lists = [parse_filelist(p.name, p.read_text(encoding="utf-8")) for p in sorted(directory.glob("*.txt"))]
    return render(*build(lists))


def main(argv: list[str] | None = None) -> int:
    return regenerate.main(
        argv,
        description=__doc__.splitlines()[0],
        generate=generate,
        output=OUTPUT,
        origin="compat/sources/filelists/",
        errors=ListError,
    )


if __name__ == "__main__":
    sys.exit(main())
