"""Human rendering of `ascenv lock` (what was written) and `ascenv lock --check` (the drift)."""

from __future__ import annotations

from rich.table import Column, Table

from ascenv import serde
from ascenv.lockfile import Change, Lock, LockCheck, lock_data
from ascenv.model import Severity
from ascenv.output import Output, safe

STYLE = {Severity.ERROR: "bold red", Severity.WARN: "yellow", Severity.INFO: "cyan", Severity.OK: "green"}


def stack_summary(lock: Lock) -> str:
    active = next((c for c in lock.cann if c.active), None)
    p = lock.platform
    parts = [
        " ".join(x for x in (p.arch, p.compute_unit) if x) or "unknown platform",
        f"driver {lock.npu.driver or '-'}",
        f"firmware {lock.npu.firmware or '-'}",
        f"{len(lock.npu.chips)} chips",
        f"CANN {active.version if active else '-'} ({len(lock.cann)} installed)",
        f"Python {lock.python.version or '-'} ({len(lock.python.packages)} packages)",
        f"{len(lock.vendors)} vendors",
        f"{len(lock.images)} images",
    ]
    return ", ".join(parts)


def render_written(out: Output, path: str, lock: Lock, fmt: str = "human") -> None:
    if fmt == "json":
        out.json({"path": path, "lock": lock_data(lock)}, kind="lock")
        return
    out.console.print(f"[bold]wrote[/] {safe(path)}: {safe(stack_summary(lock))}")
    out.console.print(f"input-hash {lock.input_hash}")


def changes_table(changes: tuple[Change, ...], old: str, new: str, *, severity: bool = True) -> Table:
    """One row per change; long values (install paths, hashes) wrap instead of being cut."""
    columns = [Column(h, overflow="fold") for h in ("layer", "what", old, new)]
    table = Table(*([Column("")] if severity else []), *columns)
    for c in changes:
        row = [safe(c.layer), safe(c.item), safe(c.old or "-"), safe(c.new or "-")]
        table.add_row(*([f"[{STYLE[c.severity]}]{c.severity.value}[/]"] if severity else []), *row)
    return table


def render_check(out: Output, result: LockCheck, fmt: str = "human") -> None:
    for warning in result.warnings:
        out.warn(warning)
    if fmt == "json":
        out.json(
            {
                "lock": result.source,
                "in_sync": result.in_sync,
                "exit_code": result.exit_code,
                "input_hash": {"lock": result.lock.input_hash, "machine": result.machine.input_hash},
                "changes": [serde.to_data(c) for c in result.changes],
            },
            kind="lock-check",
        )
        return
    path, lock, changes = result.source, result.lock, result.changes
    if not changes:
        hashed = f"input-hash {lock.input_hash}" if lock.input_hash else "compared layer by layer"
        out.console.print(f"[green]in sync[/] with {safe(path)} ({hashed})")
        return
    out.console.print(changes_table(changes, f"locked ({safe(path)})", "this machine"))
    errors = sum(1 for c in changes if c.severity is Severity.ERROR)
    warns = len(changes) - errors
    verdict = "[bold red]drift[/]" if errors else "[yellow]in sync, with warnings[/]"
    out.console.print(
        f"{verdict}: {errors} error(s), {warns} warning(s) against {safe(path)} (written {safe(lock.created or '?')})"
    )
    if errors:
        out.message("update the machine to match the lock, or accept the change with `ascenv lock -o " + path + "`")
