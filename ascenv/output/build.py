"""Human rendering of `ascenv build`, `ascenv store` and `ascenv install`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Callable

from rich.table import Table

from ascenv.output import Output, safe
from ascenv.store import Entry, GcResult


def size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def log_writer(out: Output) -> Callable[[str], None]:
    """The build log, streamed raw to stderr as it arrives (stdout stays for the result)."""

    def write(text: str) -> None:
        out.stderr.write(text)
        out.stderr.flush()

    return write


def render_build(out: Output, outcome, store_root: str) -> None:  # outcome: builder.Outcome
    entry: Entry = outcome.entry
    m = entry.manifest
    assert m is not None
    if outcome.reused:
        head = (
            f"[green]store hit[/]: {safe(m.op)} ({safe(m.target)}) {safe(m.key[:12])}, "
            f"outputs verified, nothing built ({outcome.seconds:.2f} s)"
        )
    elif outcome.raced:
        head = (
            f"[green]built[/] {safe(m.op)} ({safe(m.target)}) "
            f"{safe(m.key[:12])}; an identical build finished first and is kept"
        )
    else:
        verified = ", built twice: [green]byte-identical[/]" if outcome.verified else ""
        head = (
            f"[green]built[/] {safe(m.op)} ({safe(m.target)}) "
            f"{safe(m.key[:12])} in {m.timings.build_seconds:.1f} s{verified}"
        )
    out.console.print(head)
    if outcome.replaced:
        out.console.print(f"replaced a damaged entry: {safe('; '.join(outcome.replaced))}")
    out.console.print(
        f"image {safe(m.toolchain.image)} {safe(m.toolchain.image_id)}; "
        f"SOURCE_DATE_EPOCH={safe(m.source_date_epoch)} ({safe(m.source_date_epoch_from)})"
    )
    for o in m.outputs:
        out.console.print(f"  {safe(str(entry.outputs / o.path))}  {size(o.size)}  sha256:{safe(o.sha256)}")
    out.console.print(f"manifest {safe(str(entry.path / 'manifest.toml'))}")


def render_ls(out: Output, entries: Iterable[Entry], problems: dict) -> None:
    entries = list(entries)
    table = Table(box=None, pad_edge=False)
    for title in ("OP", "TARGET", "KEY", "FINISHED", "OUTPUTS", "SIZE", "IMAGE", "STATE"):
        table.add_column(title, no_wrap=True)
    for e in entries:
        m = e.manifest
        state = "[green]ok[/]" if not problems[e.key] else f"[red]{safe(problems[e.key][0])}[/]"
        table.add_row(
            safe(e.op),
            safe(m.target if m else "?"),
            safe(e.key[:12]),
            safe(m.timings.finished if m else "?"),
            str(len(m.outputs)) if m else "?",
            size(sum(o.size for o in m.outputs)) if m else "?",
            safe(m.toolchain.image if m else "?"),
            state,
        )
    if entries:
        out.console.print(table)
    out.console.print(f"{len(entries)} build{'s' if len(entries) != 1 else ''} in the store.")


def render_show(out: Output, entry: Entry, text: str, problems: list) -> None:
    out.console.print(f"[bold]{safe(str(entry.path))}[/]")
    out.text(text)
    for problem in problems:
        out.warn(problem)


def render_gc(out: Output, result: GcResult) -> None:
    for e in result.removed:
        out.message(f"removed {e.op}/{e.key[:12]}")
    for e in result.kept_referenced:
        out.message(f"kept {e.op}/{e.key[:12]}: a lock references it")
    if result.swept_tmp:
        out.message(
            f"removed {len(result.swept_tmp)} leftover staging director{'y' if len(result.swept_tmp) == 1 else 'ies'}"
        )
    out.console.print(f"{len(result.removed)} build(s) removed, {size(result.freed)} freed.")


def render_install(out: Output, run_file: str, install_path: str, manifests: list) -> None:
    out.console.print(f"[green]installed[/] {safe(run_file)} into {safe(install_path)}")
    for path in manifests:
        out.console.print(f"  manifest recorded: {safe(path)}")
