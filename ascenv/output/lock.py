"""Human rendering of `ascenv lock` (what was written) and `ascenv lock --check` (the drift)."""

from __future__ import annotations

from rich.table import Column, Table

from ascenv import serde
from ascenv.lockfile import Change, Lock, LockCheck, lock_data
from ascenv.model import Severity
from ascenv.output import Output, safe
from ascenv.words import counted

STYLE = {Severity.ERROR: "bold red", Severity.WARN: "yellow", Severity.INFO: "cyan", Severity.OK: "green"}


def stack_summary(lock: Lock) -> str:
    active = next((c for c in lock.cann if c.active), None)
    p = lock.platform
    parts = [
        " ".join(x for x in (p.arch, p.compute_unit) if x) or "unknown platform",
        f"driver {lock.npu.driver or '-'}",
        f"firmware {lock.npu.firmware or '-'}",
        counted(len(lock.npu.chips), "chip"),
        f"CANN {active.version if active else '-'} ({len(lock.cann)} installed)",
        f"Python {lock.python.version or '-'} ({counted(len(lock.python.packages), 'package')})",
        counted(len(lock.vendors), "vendor"),
        counted(len(lock.images), "image"),
    ]
    return ", ".join(parts)


def render_written(out: Output, path: str, lock: Lock, fmt: str = "human") -> None:
    if fmt == "json":
        out.json({"path": path, "lock": lock_data(lock)})
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


def refuse_format(fmt: str, *, checking: bool) -> None:
    """Before any work: JUnit reports a check (test cases pass or fail); writing a lock is none."""
    if fmt == "junit" and not checking:
        from ascenv.errors import UsageError

        raise UsageError("--format junit reports a check", hint="use it with lock --check")


def render_check(out: Output, result: LockCheck, fmt: str = "human", accept: str = "") -> None:
    """``accept``: the command that rewrites the lock from what was checked (its machine options
    kept: ``--python``, ``--root``, ``--from``)."""
    for warning in result.warnings:
        out.warn(warning)
    if fmt == "junit":
        from ascenv.output import junit

        out.text(junit.document(f"ascenv lock --check {result.source}", junit_cases(result)))
        return
    if fmt == "json":
        out.json(
            {
                "lock": result.source,
                "in_sync": result.in_sync,
                "exit_code": result.exit_code,
                "input_hash": {"lock": result.lock.input_hash, "machine": result.machine.input_hash},
                "changes": [serde.to_data(c) for c in result.changes],
            }
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
        f"{verdict}: {counted(errors, 'error')}, {counted(warns, 'warning')}"
        f" against {safe(path)} (written {safe(lock.created or '?')})"
    )
    if errors:
        accept = accept or f"ascenv lock -o {path}"
        out.message(f"update the machine to match the lock, or accept the change with `{accept}`")


def junit_cases(result: LockCheck) -> list:
    """One test case per locked item (and per item only this machine has), in LAYERS order:
    drift that is an error fails with the fix, a warning passes with its words as output."""
    from ascenv.lockfile import LAYERS, flatten
    from ascenv.output.junit import Case

    locked, changed = flatten(result.lock), {(c.layer, c.item): c for c in result.changes}
    keys = sorted(locked.keys() | changed.keys(), key=lambda k: (LAYERS.index(k[0]), k[1]))
    cases = []
    for layer, item in keys:
        change = changed.get((layer, item))
        name = f"{layer} {item}"
        if change is None:
            cases.append(Case(f"ascenv.lock.{layer}", name, text=f"in sync: {locked[(layer, item)]}"))
            continue
        text = f"{change.severity.value}: {change.kind}: locked {change.old or '-'}, this machine {change.new or '-'}"
        fix = (
            f"make {name} {change.old} again, or accept the change: ascenv lock -o {result.source}"
            if change.old
            else f"remove {name}, or accept it: ascenv lock -o {result.source}"
        )
        failure = fix if change.severity is Severity.ERROR else None
        cases.append(Case(f"ascenv.lock.{layer}", name, failure=failure, text=text))
    return cases
