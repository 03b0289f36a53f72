"""The chart file of ``bench compare --chart``: a valid PNG or SVG of the documented size, one bar
group per shape, the same bytes on every write."""

from __future__ import annotations

import io
import random
import re
import struct
import xml.etree.ElementTree as ET
import zlib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ascenv.bench.stats import Comparison, compare_runs
from ascenv.bench.store import BenchStore
from ascenv.errors import UsageError
from ascenv.output import Output, bench_chart
from ascenv.output import bench as render
from ascenv.store import Store
from tests.benchcmd.test_compare import ENV, noisy, profiled_runs, record, run_of
from tests.cli_helpers import run_cli

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SVG = "{http://www.w3.org/2000/svg}"


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) from IHDR, after checking the signature, every chunk's CRC and that the
    image data inflates to exactly one filter byte plus one row of pixels per line
    (https://www.w3.org/TR/png/#5Chunk-layout, #11IHDR)."""
    assert data[:8] == PNG_SIGNATURE
    chunks, pos = [], 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert zlib.crc32(kind + body) == crc, kind
        chunks.append((kind, body))
        pos += 12 + length
    assert chunks[0][0] == b"IHDR" and chunks[-1][0] == b"IEND"
    width, height, depth, colour = struct.unpack(">IIBB", chunks[0][1][:10])
    channels = {0: 1, 2: 3, 4: 2, 6: 4}[colour]
    pixels = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    assert len(pixels) == height * (1 + width * channels * depth // 8)
    return width, height


def svg_facts(data: bytes) -> tuple[float, float, list[int]]:
    """(width pt, height pt, the shapes that have both an A and a B bar) of an SVG document."""
    root = ET.fromstring(data)
    assert root.tag == SVG + "svg"
    width, height = (float(re.fullmatch(r"([\d.]+)pt", root.attrib[k]).group(1)) for k in ("width", "height"))  # type: ignore[union-attr]
    bars: dict[int, set[str]] = {}
    for g in root.iter(SVG + "g"):
        found = re.fullmatch(r"shape-(\d+)-([ab])", g.attrib.get("id", ""))
        if found:
            bars.setdefault(int(found.group(1)), set()).add(found.group(2))
    return width, height, sorted(i for i, sides in bars.items() if sides == {"a", "b"})


def test_compare_chart_png_and_svg(tmp_path: Path) -> None:
    store, a, b = profiled_runs(tmp_path)
    for name in ("x.png", "x.svg"):
        code, _, err = run_cli(["bench", "compare", a, b, "--store", str(store), "--chart", name], ENV, cwd=tmp_path)
        assert code == 1 and f"chart written to {name}" in err  # the chart does not change the verdict
    height = 300 + 40 * 8  # the documented size: 1200 x (300 + 40 per shape) px at 100 dpi
    assert png_size((tmp_path / "x.png").read_bytes()) == (1200, height)
    width_pt, height_pt, groups = svg_facts((tmp_path / "x.svg").read_bytes())
    assert (width_pt, height_pt) == (864, pytest.approx(height * 0.72)) and groups == list(range(8))
    assert not list(tmp_path.glob(".ascenv-*.tmp"))  # written atomically


def test_two_writes_are_byte_identical(tmp_path: Path) -> None:
    store, a, b = profiled_runs(tmp_path)
    bench = BenchStore(Store(store))
    result = compare_runs(bench.resolve(a, None).run, bench.resolve(b, None).run, 0.05)
    for fmt in ("png", "svg"):
        assert bench_chart.render(result, fmt) == bench_chart.render(result, fmt)
    assert b"Date" not in bench_chart.render(result, "svg")


def test_no_shape_in_common_still_draws_the_frame(tmp_path: Path) -> None:
    store, a, b = profiled_runs(tmp_path)
    bench = BenchStore(Store(store))
    result = compare_runs(bench.resolve(a, None).run, bench.resolve(b, None).run, 0.05)
    empty = type(result)(result.a, result.b, 0.05, (), (), result.a.records, result.b.records)
    assert png_size(bench_chart.render(empty, "png")) == (1200, 300)
    assert svg_facts(bench_chart.render(empty, "svg"))[2] == []


def test_chart_format_from_the_suffix() -> None:
    assert [bench_chart.chart_format(p) for p in ("a.png", "dir.x/B.SVG")] == ["png", "svg"]
    for bad in ("a.pdf", "a", "png"):
        with pytest.raises(UsageError, match="names no chart format"):
            bench_chart.chart_format(bad)


# --- one measure per bar, and labels clear of the whiskers and the frame (issue 25)


def peer_comparison(kernel: float, peer: float, rounds: int = 1) -> Comparison:
    """A against B where B's durations are ``kernel`` times A's and its peers ``peer`` times:
    e.g. 0.913 and 0.952 give durations 8.7 % shorter and a launch/peer ratio 4.1 % lower."""
    rng = random.Random(5)
    records_a, records_b = [], []
    for k in range(rounds):
        durations = noisy(rng, 100 * (1 + 3 * k))
        peers = [d / 2 for d in durations]
        base = record(durations, shapes=f"n={k}")
        records_a.append(replace(base, peers=tuple(peers)))
        records_b.append(
            replace(record([d * kernel for d in durations], shapes=f"n={k}"), peers=tuple(p * peer for p in peers))
        )
    a = replace(run_of(records_a[0]), id="a", records=tuple(records_a))
    b = replace(run_of(records_b[0]), id="b", records=tuple(records_b))
    return compare_runs(a, b, 0.05)


def test_the_terminal_block_prints_one_measure_per_shape() -> None:
    result = peer_comparison(0.913, 0.952)
    (shape,) = result.shapes
    assert shape.against_peer and abs(shape.change.change - (-0.041)) < 0.002
    assert abs(shape.b.duration_us / shape.a.duration_us - 1 - (-0.087)) < 0.002  # the durations' change
    stdout = io.StringIO()
    render.comparison(Output("human", stdout=stdout, stderr=io.StringIO()), result, "human", False)
    lines = stdout.getvalue().splitlines()
    row_a, row_b = (next(line for line in lines if line.startswith(f"  {side}  ")) for side in "AB")
    value_a, value_b = (float(re.search(r"([\d.]+) x peer", row).group(1)) for row in (row_a, row_b))  # type: ignore[union-attr]
    assert " us " not in row_a + row_b  # the durations are not printed beside the ratio's change
    assert value_b / value_a - 1 == pytest.approx(shape.change.change, abs=0.001)
    assert "-4.1%" in row_b and "-8.7%" not in stdout.getvalue()
    bars = [row.count("\u2588") for row in (row_a, row_b)]
    assert abs(bars[0] * value_b - bars[1] * value_a) <= (value_a + value_b) / 2  # the bars are of the ratio


def drawn(result: Comparison) -> tuple[Any, Any, Any]:
    import matplotlib

    with matplotlib.rc_context(bench_chart.RC):
        fig = bench_chart.figure(result)
        renderer = fig.canvas.get_renderer()
    (ax,) = fig.axes
    return fig, ax, renderer


def whiskers(ax: Any, renderer: Any) -> list[Any]:
    """The window extents of every error bar's line and caps."""
    from matplotlib.transforms import Bbox

    found = []
    for container in ax.containers:
        errorbar = getattr(container, "errorbar", None)
        if errorbar is None:
            continue
        _, caps, lines = errorbar.lines
        found += [cap.get_window_extent(renderer) for cap in caps]
        for collection in lines:  # a LineCollection's own extent is empty under Agg: its segments
            for segment in collection.get_segments():
                (x0, y0), (x1, y1) = (
                    ax.transData.transform(segment).min(axis=0),
                    ax.transData.transform(segment).max(axis=0),
                )
                found.append(Bbox.from_extents(x0, y0 - 1, x1, y1 + 1))  # the line's width, 1 px a side
    assert found, "no error bar drawn"
    return found


def value_labels(fig: Any, renderer: Any) -> dict[str, Any]:
    return {t.get_gid(): t.get_window_extent(renderer) for t in fig.findobj() if str(t.get_gid()).startswith("value-")}


@pytest.mark.parametrize(
    "kernel,peer,rounds",
    [(0.913, 0.952, 1), (3.0, 1.0, 3), (1.0, 1.0, 4), (0.3, 1.0, 2)],  # the report's case, far slower, same, faster
)
def test_chart_bars_whiskers_and_labels_are_one_measure_and_do_not_overlap(
    kernel: float, peer: float, rounds: int
) -> None:
    result = peer_comparison(kernel, peer, rounds)
    fig, ax, renderer = drawn(result)
    frame = ax.get_window_extent(renderer)
    labels = value_labels(fig, renderer)
    assert len(labels) == 2 * rounds
    for name, box in labels.items():
        inside = frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
        assert inside, (name, box, frame)
        assert not any(box.overlaps(w) for w in whiskers(ax, renderer)), name
    boxes = list(labels.values())
    assert not any(p.overlaps(q) for i, p in enumerate(boxes) for q in boxes[i + 1 :])
    texts = {t.get_gid(): t.get_text() for t in fig.findobj() if str(t.get_gid()).startswith("value-")}
    for i, shape in enumerate(result.shapes):
        (bar_b,) = [p for p in ax.patches if p.get_gid() == f"shape-{i}-b"]
        # B's bar is 100 % plus the very change the interval and the verdict are of
        assert bar_b.get_width() == pytest.approx(100 * (1 + shape.change.change))
        assert texts[f"value-{i}-b"].startswith(f"{shape.medians[1]:.3f} x peer")


def test_chart_of_durations_labels_in_us_clear_of_the_frame(tmp_path: Path) -> None:
    store, a, b = profiled_runs(tmp_path, {"MatMulV2": 4.0, "FlashAttentionScoreGrad": 0.8})
    bench = BenchStore(Store(store))
    result = compare_runs(bench.resolve(a, None).run, bench.resolve(b, None).run, 0.05)
    fig, ax, renderer = drawn(result)
    frame = ax.get_window_extent(renderer)
    labels = value_labels(fig, renderer)
    assert len(labels) == 2 * len(result.shapes) == 16
    for name, box in labels.items():
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1, name
        assert not any(box.overlaps(w) for w in whiskers(ax, renderer)), name
    texts = [t.get_text() for t in fig.findobj() if str(t.get_gid()).startswith("value-")]
    assert all(" us  n=" in t for t in texts)
    legend = ax.get_legend().get_window_extent(renderer)  # all four verdicts and the measure
    assert "one measure" in ax.get_legend().get_title().get_text()
    assert 0 <= legend.x0 and legend.x1 <= fig.bbox.x1 and legend.y1 <= fig.bbox.y1
