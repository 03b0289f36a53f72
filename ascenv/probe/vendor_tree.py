"""Read an installed vendor tree through a probe Root, bounded: file names, small JSON files and
the ELF heads of its libraries (ascenv.vendor_layout says what they mean)."""

from __future__ import annotations

import posixpath
from typing import Optional

from ascenv import vendor_layout as layout
from ascenv.probe.fs import Root

WALK_LIMIT = 20_000  # entries listed per vendor tree (a real package holds a few hundred)
JSON_LIMIT = 4 << 20  # bytes of one ops-info or kernel config JSON


def walk(root: Root, top: str, limit: int = WALK_LIMIT) -> list[str]:
    """Files (and symlinks) below ``top``, relative to it; at most ``limit``."""
    found: list[str] = []
    pending = [""]
    while pending and len(found) < limit:
        rel = pending.pop()
        for name in sorted(root.listdir(posixpath.join(top, rel) if rel else top)):
            child = posixpath.join(rel, name) if rel else name
            full = posixpath.join(top, child)
            if root.is_dir(full) and not root.is_symlink(full):
                pending.append(child)
            else:
                found.append(child)
    return found[:limit]


def read_vendor(root: Root, name: str, path: str) -> layout.VendorLayout:
    def read(rel: str) -> Optional[bytes]:
        # libraries: their ELF header is enough; JSON and version.info: whole, up to the limit
        limit = layout.ELF_HEAD if layout.wanted(rel) == layout.ELF_HEAD else JSON_LIMIT
        return root.read_bytes(posixpath.join(path, rel), limit=limit)

    return layout.describe(name, walk(root, path), read)
