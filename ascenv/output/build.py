"""Rendering of `ascenv build`, human and JSON; the log streamed while it runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from ascenv import serde
from ascenv.output import Output, safe

if TYPE_CHECKING:
    from ascenv.builder import Outcome


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


def json_payload(outcome: Outcome) -> dict:
    m = outcome.entry.manifest
    assert m is not None  # a committed or reused entry always has one
    return {
        "op": m.op,
        "target": m.target,
        "key": m.key,
        "reused": outcome.reused,
        "raced": outcome.raced,
        "verified": outcome.verified,
        "replaced": list(outcome.replaced),
        "seconds": round(outcome.seconds, 3),
        "build_seconds": [round(t, 3) for t in outcome.build_seconds],
        "matched_stored": outcome.matched_stored,
        "path": str(outcome.entry.path),
        "outputs": serde.to_data(list(m.outputs)),
    }


def render(out: Output, outcome: Outcome, fmt: str = "human") -> None:
    if fmt == "json":
        out.json(json_payload(outcome), kind="build")
        return
    entry = outcome.entry
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
        times = outcome.build_seconds or (m.timings.build_seconds,)
        verified = ""
        if outcome.verified and len(times) == 2:
            verified = f", built again from a copy in {times[1]:.1f} s: [green]byte-identical[/]"
        elif outcome.verified:
            verified = ", built twice: [green]byte-identical[/]"
        stored = ", and the same bytes as the stored build" if outcome.matched_stored else ""
        head = (
            f"[green]built[/] {safe(m.op)} ({safe(m.target)}) {safe(m.key[:12])} in {times[0]:.1f} s{verified}{stored}"
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
