"""The chart file of ``bench compare --chart``: a valid PNG or SVG of the documented size, one bar
group per shape, the same bytes on every write."""

from __future__ import annotations

import re
import struct
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path

import pytest

from ascenv.bench.stats import compare_runs
from ascenv.bench.store import BenchStore
from ascenv.errors import UsageError
from ascenv.output import bench_chart
from ascenv.store import Store
from tests.benchcmd.test_compare import ENV, profiled_runs
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
