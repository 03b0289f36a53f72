"""``ascenv package inspect``: a package's header, verified checksums, files and vendors."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ascenv.package import contents, layout, makeself

VENDORS = "packages/vendors/"  # where install.sh takes the vendor trees from ($PWD/packages)


@dataclass(frozen=True)
class Inspection:
    path: str
    header: makeself.Header
    checksums: tuple[makeself.Checksum, ...]  # all verified (a mismatch raises)
    members: tuple[contents.Member, ...]
    vendors: tuple[layout.VendorLayout, ...]


def inspect_package(
    path: Path, *, max_bytes: int = contents.MAX_BYTES, max_members: int = contents.MAX_MEMBERS
) -> Inspection:
    header = makeself.read_header(path)
    checksums = makeself.require_valid(path, header)
    members, kept = contents.read_members(path, header, max_bytes=max_bytes, max_members=max_members)
    return Inspection(str(path), header, tuple(checksums), members, vendors_of(members, kept))


def vendors_of(members: tuple[contents.Member, ...], kept: dict[str, bytes]) -> tuple[layout.VendorLayout, ...]:
    trees: dict[str, list[str]] = {}
    for member in members:
        if member.path.startswith(VENDORS) and member.kind != "dir":
            name, _, rest = member.path[len(VENDORS) :].partition("/")
            if rest:
                trees.setdefault(name, []).append(rest)
    return tuple(
        layout.describe(name, paths, lambda rel, name=name: kept.get(f"{VENDORS}{name}/{rel}"))  # type: ignore[misc]
        for name, paths in sorted(trees.items())
    )
