"""``ascenv package inspect``: a package's header, verified checksums, files and vendors."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ascenv import vendor_layout as layout
from ascenv.package import contents, makeself

VENDORS = "packages/vendors/"  # where install.sh takes the vendor trees from ($PWD/packages)


@dataclass(frozen=True)
class Inspection:
    path: str
    header: makeself.Header
    checksums: tuple[makeself.Checksum, ...]  # all verified (a mismatch raises)
    members: tuple[contents.Member, ...]
    vendors: tuple[layout.VendorLayout, ...]

    @property
    def dangerous(self) -> tuple[contents.Member, ...]:
        return tuple(m for m in self.members if m.dangers)


def inspect_package(
    path: Path, *, max_bytes: int = contents.MAX_BYTES, max_members: int = contents.MAX_MEMBERS
) -> Inspection:
    header = makeself.read_header(path)
    checksums = makeself.require_valid(path, header)
    members, data = contents.read_members(path, header, max_bytes=max_bytes, max_members=max_members, keep=kept)
    return Inspection(str(path), header, tuple(checksums), members, vendors_of(members, data))


def kept(path: str, size: int) -> int:
    """Bytes of a member to keep: what ``layout`` reads of a vendor's file, whole files up to
    contents.KEEP_LIMIT (a larger one is "not read", a problem layout reports)."""
    found = vendor_file(path)
    want = layout.wanted(found[1]) if found else 0
    if want == layout.WHOLE:
        return size if size <= contents.KEEP_LIMIT else 0
    return want


def vendor_file(path: str) -> Optional[tuple[str, str]]:
    """(vendor, vendor-relative path) of a member below packages/vendors/<vendor>/; None for any
    other member, and for a vendor name that is not a plain directory name. Read as tar extracts
    it: ``packages/vendors/./x/a`` and ``packages//vendors/x/a`` are vendor x's."""
    path = "/".join(part for part in path.split("/") if part not in ("", "."))
    if not path.startswith(VENDORS):
        return None
    name, _, rest = path[len(VENDORS) :].partition("/")
    if not rest or name in ("", ".", ".."):
        return None
    return name, rest


def vendors_of(members: tuple[contents.Member, ...], kept: dict[str, bytes]) -> tuple[layout.VendorLayout, ...]:
    """The vendor trees, from the members that are safe to extract: a dangerous one (``..``, an
    absolute path, a link out of the package, a device) never becomes part of a vendor."""
    trees: dict[str, list[str]] = {}
    named: dict[tuple[str, str], str] = {}  # (vendor, rel) -> the member's own name, which ``kept`` uses
    for member in members:
        found = vendor_file(member.path) if member.kind != "dir" and member.safe else None
        if found:
            trees.setdefault(found[0], []).append(found[1])
            named[found] = member.path
    return tuple(
        layout.describe(name, paths, lambda rel, name=name: kept.get(named.get((name, rel), "")))  # type: ignore[misc]
        for name, paths in sorted(trees.items())
    )
