"""Rendering of `ascenv package inspect` and `ascenv package normalize`."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from ascenv.output import Output, printable, safe
from ascenv.package.contents import Member
from ascenv.package.inspection import Inspection
from ascenv.package.normalize import Normalized
from ascenv.vendor_layout import VendorLayout
from ascenv.words import counted

TABLE_ROWS = 2000  # files shown as a table; more as plain lines
SHOWN_DANGERS = 50  # unsafe members named in the human warning


def _vendor_json(vendor: VendorLayout) -> dict[str, Any]:
    return {
        "name": vendor.name,
        "op_types": list(vendor.op_types),
        "compute_units": list(vendor.compute_units),
        "compiler_version": vendor.compiler_version,
        "ops_info_units": {u: list(ops) for u, ops in vendor.ops_info.items()},
        "kernel_binaries": dict(vendor.kernel_binaries),
        "libraries": [
            {"kind": lib.kind, "path": lib.path, "dir_arch": lib.dir_arch, "elf_arch": lib.elf_arch}
            for lib in vendor.libraries
        ],
        "aclnn_headers": list(vendor.aclnn_headers),
        "problems": list(vendor.problems),
    }


def inspection_json(found: Inspection) -> dict[str, Any]:
    h = found.header
    return {
        "package": found.path,
        "makeself": {
            "version": h.version,
            "label": h.label,
            "target_dir": h.target_dir,
            "date": h.date,
            "compression": h.compression,
            "script": h.script,
            "header_lines": h.skip,
            "offset": h.offset,
            "sizes": list(h.sizes),
            "uncompressed_kb": h.uncompressed_kb,
            "checksums": [{"kind": c.kind, "value": c.expected, "verified": c.ok} for c in found.checksums],
        },
        "files": [
            {"path": m.path, "type": m.kind, "size": m.size, "mode": f"{m.mode:04o}", "sha256": m.sha256}
            | ({"link": m.link} if m.link is not None else {})
            | ({"dangers": list(m.dangers)} if m.dangers else {})
            for m in found.members
            if m.kind != "dir" or m.dangers
        ],
        "dangerous_members": len(found.dangerous),
        "vendors": [_vendor_json(v) for v in found.vendors],
    }


def render_inspection(out: Output, found: Inspection, fmt: str = "human") -> None:
    if fmt == "json":
        out.json(inspection_json(found), kind="package-inspect")
        return
    h = found.header
    console = out.console
    console.print(f"[bold]{safe(found.path)}[/]: makeself {safe(h.version or '?')}, label {safe(h.label)!r}")
    console.print(f"  packaged {safe(h.date or '?')}, target directory {safe(h.target_dir)}, {safe(h.compression)}")
    sums = ", ".join(f"{c.kind} ok" for c in found.checksums) or "no checksum recorded"
    console.print(f"  payload {sum(h.sizes)} bytes at offset {h.offset}: {sums}")
    _files(out, [m for m in found.members if m.kind != "dir" or m.dangers])
    dangerous = found.dangerous
    if dangerous:
        console.print(
            f"[yellow]warning[/]: {counted(len(dangerous), 'member')} unsafe to extract (not counted in any vendor):"
        )
        for m in dangerous[:SHOWN_DANGERS]:
            console.print(f"  {safe(m.path)}: {safe(', '.join(m.dangers))}")
        if len(dangerous) > SHOWN_DANGERS:
            console.print(f"  ... and {len(dangerous) - SHOWN_DANGERS} more (--format json lists them all)")
    if not found.vendors:
        console.print("[yellow]no vendor[/]: the package has no packages/vendors/<vendor>/ tree")
    for v in found.vendors:
        console.print(f"[bold]vendor {safe(v.name)}[/] (compiler {safe(v.compiler_version or 'unknown')})")
        console.print(f"  OpTypes: {safe(', '.join(v.op_types) or 'none')}")
        console.print(f"  kernels for: {safe(', '.join(v.compute_units) or 'no compute unit')}")
        console.print(f"  ops-info for: {safe(', '.join(v.ops_info) or 'no compute unit')}")
        for lib in v.libraries:
            console.print(f"  {lib.kind}: {safe(lib.path)} ({safe(lib.elf_arch or 'not ELF')})")
        console.print(f"  aclnn headers: {safe(', '.join(v.aclnn_headers) or 'none')}")
        for problem in v.problems:
            console.print(f"  [yellow]warning[/]: {safe(problem)}")


def _files(out: Output, members: list[Member]) -> None:
    """A table up to TABLE_ROWS files; past that plain lines, as fast for 100k members as for 10
    (rich lays out a whole table before printing it)."""
    rows = [
        (
            f"{m.mode:04o}",
            str(m.size),
            (m.sha256 or "")[:16],
            _kind_mark(m) + m.path + (f" -> {m.link}" if m.link else ""),
        )
        for m in members
    ]
    if len(rows) > TABLE_ROWS:
        width = max(len(r[1]) for r in rows)
        out.text("\n".join(f"{mode}  {size:>{width}}  {sha:16}  {printable(path)}" for mode, size, sha, path in rows))
        return
    table = Table(box=None, pad_edge=False)
    for column in ("mode", "size", "sha256", "path"):
        table.add_column(column, justify="right" if column == "size" else "left")
    for mode, size, sha, path in rows:
        table.add_row(mode, size, sha, safe(path))
    out.console.print(table)


def _kind_mark(member: Member) -> str:
    """``ls -l``'s type letter for what is not a file, link or directory."""
    return {"chardev": "(c) ", "blockdev": "(b) ", "fifo": "(p) ", "hardlink": "(hard) ", "other": "(?) "}.get(
        member.kind, ""
    )


def normalized_json(result: Normalized) -> dict[str, Any]:
    return {
        "package": result.source,
        "output": result.output,
        "source_sha256": result.source_sha256,
        "sha256": result.sha256,
        "members": result.members,
        "source_date_epoch": result.source_date_epoch,
        "date": result.date,
    }


def render_normalized(out: Output, result: Normalized, fmt: str = "human") -> None:
    if fmt == "json":
        out.json(normalized_json(result), kind="package-normalize")
        return
    out.console.print(
        f"{safe(result.output)}: {result.members} members, packaged {safe(result.date)}, sha256 {result.sha256}"
    )
