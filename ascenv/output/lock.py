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
        out.json({"path": path, "lock": lock_data(lock)}, kind="lock")
        return
    out.console.print(f"[bold]wrote[/] {safe(path)}: {safe(stack_summary(lock))}")
    out.console.print(f"input-hash {lock.input_hash}")


RECORD_HASH = ": record-hash"


def package_rows(changes: tuple[Change, ...]) -> list[Change]:
    """``changes`` with a package's version and its ``<pkg>: record-hash`` merged into one row
    naming both (issue 25: a 130-package upgrade printed 260 rows), the worse severity kept; a
    reinstall that changed only the files keeps its one record-hash row. The core's changes stay
    one fact each (JSON)."""
    rows: list[Change] = []
    versions: dict[str, int] = {}  # package name -> its row
    hashes: dict[str, Change] = {}
    for c in changes:
        if c.layer == "packages" and c.item.endswith(RECORD_HASH):
            hashes[c.item[: -len(RECORD_HASH)]] = c
            continue
        if c.layer == "packages" and ":" not in c.item:
            versions[c.item] = len(rows)
        rows.append(c)
    for name, h in hashes.items():
        if name not in versions:
            rows.append(h)  # only the files changed: its own row, in name order below
            continue
        v = rows[versions[name]]
        worse = Severity.ERROR if Severity.ERROR in (v.severity, h.severity) else v.severity
        rows[versions[name]] = Change(
            v.layer,
            f"{name}: version, record-hash",
            v.kind if v.kind == h.kind else "changed",
            None if v.old is None and h.old is None else f"{v.old or '-'}, record-hash {h.old or '-'}",
            None if v.new is None and h.new is None else f"{v.new or '-'}, record-hash {h.new or '-'}",
            worse,
        )
    rank = {layer: i for i, layer in reversed(list(enumerate(c.layer for c in changes)))}  # the core's order
    return sorted(rows, key=lambda c: (rank[c.layer], c.item))


def changes_table(changes: tuple[Change, ...], old: str, new: str, *, severity: bool = True) -> Table:
    """One row per change (per package: ``package_rows``); long values (install paths, hashes)
    wrap instead of being cut."""
    columns = [Column(h, overflow="fold") for h in ("layer", "what", old, new)]
    table = Table(*([Column("")] if severity else []), *columns)
    for c in package_rows(changes):
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
    rows = package_rows(changes)  # counted as shown: one per package
    errors = sum(1 for c in rows if c.severity is Severity.ERROR)
    warns = len(rows) - errors
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
