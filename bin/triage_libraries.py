#!/usr/bin/env python3
"""Regenerate compat/triage/libraries.toml (which package ships which shared library, and in
which layer of the stack) from the saved file lists of real packages in compat/sources/filelists/.

Maintenance script, not imported by ascenv. Each saved list starts with ``# key: value`` lines:
``source`` (how it was read), ``retrieved``, ``package``, ``layer`` (one of triage's library
layers), ``kind`` (``ships``: the package installs these files; ``mounts``: the files a runtime
bind-mounts from the host, which may include system libraries) and ``url`` (the public page of the
package or list). The body is the list as published: one path per line, or a wheel's RECORD rows
(``path,hash,size``). Only library files (``lib*.so``, ``lib*.so.N``) become rows.

A name listed by a ``ships`` list of one layer and a ``mounts`` list of another belongs to the
shipping package (the Ascend Docker runtime mounts libsemanage from the OS: the OS ships it).
Two ``ships`` lists of different layers naming one library are an error. A family glob
(``libaicpu_*.so*``) is written where a layer has two or more libraries sharing a ``lib<word>_``
prefix and no library of another layer matches it.

    python bin/triage_libraries.py            # print what would change
    python bin/triage_libraries.py --write    # write compat/triage/libraries.toml
    python bin/triage_libraries.py --check    # exit 1 when the shipped file differs
"""

from __future__ import annotations

import argparse
import fnmatch
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the library-name rule is triage's own, read from one place

from ascenv.triage.families import DOCTOR_LAYER  # noqa: E402
from ascenv.triage.libraries import library_name  # noqa: E402

LISTS = ROOT / "compat" / "sources" / "filelists"
OUTPUT = ROOT / "compat" / "triage" / "libraries.toml"
LAYERS = tuple(DOCTOR_LAYER)
KINDS = ("ships", "mounts")
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
    # a RECORD row is "path,hash,size": a path never holds a comma in these lists
    paths = tuple(line.split(",", 1)[0].strip().rstrip("/") for line in lines[index:] if line.strip())
    return FileList(name, meta, paths)


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
                raise ListError(
                    f"{file_list.name}: {name} is shipped in layer {file_list.meta['layer']!r}, "
                    f"and in layer {row.layer!r} by {', '.join(row.lists)}"
                )
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
                f"package = {_string(row.package)}",
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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="write compat/triage/libraries.toml")
    mode.add_argument("--check", action="store_true", help="exit 1 when the shipped file differs")
    args = parser.parse_args(argv)
    try:
        text = generate()
    except ListError as exc:
        print(f"triage_libraries: {exc}", file=sys.stderr)
        return 2
    current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
    if args.write:
        OUTPUT.write_text(text, encoding="utf-8")
        print(f"wrote {OUTPUT.relative_to(ROOT)}")
        return 0
    if text == current:
        print(f"{OUTPUT.relative_to(ROOT)} is what compat/sources/filelists/ regenerate")
        return 0
    print(f"{OUTPUT.relative_to(ROOT)} differs from what compat/sources/filelists/ regenerate (--write updates it)")
    return 1 if args.check else 0


if __name__ == "__main__":
    sys.exit(main())
