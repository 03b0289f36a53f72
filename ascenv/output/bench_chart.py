"""``ascenv bench compare --chart FILE.png|FILE.svg``: the comparison as a picture.

One row per shape: A's median as a grey bar at 100 %, B's median as a bar in % of A's, coloured
by the verdict, with the 95 % bootstrap interval of the change as its error bar; the medians in
microseconds at the bar ends, the verdict and the change at the right, the ``--fail-over``
threshold as dashed lines. Each shape is drawn relative to its own A, because one run holds
kernels of 2 us and of 500 us: on one absolute axis the short ones would vanish.

The picture is ``WIDTH_PX`` x ``height_px(shapes)`` pixels at ``DPI`` (an SVG says the same
size in points: 1 px = 0.72 pt). matplotlib is imported here only, and only when a chart is
asked for; it draws on its Agg canvas (no display needed). Two writes of one comparison give
the same bytes: the SVG ids are salted with a constant (``svg.hashsalt``) and neither format
records a date or matplotlib's version
(https://matplotlib.org/stable/users/explain/customizing.html, ``svg.hashsalt``;
https://matplotlib.org/stable/api/_as_gen/matplotlib.figure.Figure.savefig.html, ``metadata``).
"""

from __future__ import annotations

import io
import os
from typing import Any

from ascenv import errors, fsutil
from ascenv.bench.stats import Comparison, ShapeChange
from ascenv.output import printable
from ascenv.output.bench import measure

FORMATS = {".png": "png", ".svg": "svg"}
WIDTH_PX = 1200
DPI = 100
ROW_PX = 40
FRAME_PX = 300  # title, legend, axis and margins
LEFT_PX, RIGHT_PX, TOP_PX, BOTTOM_PX = 330, 190, 110, 60
LABEL_CHARS = 44  # of a shape's label at the left; the terminal and JSON output keep it whole
INSTALL_HINT = (
    "install ascenv's chart extra, ascenv[chart]: pip install '.[chart]' in ascenv's clone "
    "(pipx: pipx inject ascenv 'matplotlib>=3.5')"
)

# verdict -> bar colour (matplotlib's default cycle: blue, orange, green, red)
COLOURS = {
    "faster": "#2ca02c",
    "slower": "#d62728",
    "same": "#1f77b4",
    "inconclusive": "#ff7f0e",
    "undecidable": "#ff7f0e",
}
A_COLOUR = "#9e9e9e"


def height_px(shapes: int) -> int:
    return FRAME_PX + ROW_PX * shapes


def chart_format(path: str) -> str:
    """ "png" or "svg" from the file name; any other suffix is a usage error (exit 2)."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in FORMATS:
        raise errors.UsageError(
            f"--chart {path}: {'the suffix ' + suffix if suffix else 'no suffix'} names no chart format",
            hint="name the chart FILE.png or FILE.svg",
        )
    return FORMATS[suffix]


def require_matplotlib() -> None:
    """A ToolMissing (exit 4) saying how to install the extra, where matplotlib is absent."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise errors.ToolMissing("--chart needs matplotlib, which is not installed", hint=INSTALL_HINT) from None


def write(path: str, result: Comparison, *, shown: str) -> None:
    """The chart of ``result`` written atomically to ``path`` (format from its suffix)."""
    data = render(result, chart_format(shown))
    try:
        fsutil.write_atomic(path, data)
    except OSError as exc:
        raise errors.UsageError(f"cannot write the chart {shown}: {exc.strerror or exc}") from None


def _label(s: ShapeChange) -> str:
    shapes = "-" if s.b.input_shapes is None else s.b.input_shapes or '""'
    if len(shapes) > LABEL_CHARS:
        shapes = shapes[: LABEL_CHARS - 3] + "..."
    title = s.b.op + (f" ({s.b.task_type})" if s.b.task_type else "")
    if len(title) > LABEL_CHARS:
        title = title[: LABEL_CHARS - 3] + "..."
    return printable(title) + "\n" + printable(shapes)


def render(result: Comparison, fmt: str) -> bytes:
    """The chart as PNG or SVG bytes."""
    require_matplotlib()
    import matplotlib

    # a constant salt for the SVG ids (random otherwise), text as paths (no font on the reader's side)
    with matplotlib.rc_context(RC):
        fig = figure(result)
        buffer = io.BytesIO()
        # no date, no version: the same comparison gives the same bytes
        metadata = {"Software": None} if fmt == "png" else {"Date": None, "Creator": None}
        fig.savefig(buffer, format=fmt, dpi=DPI, metadata=metadata)
    return buffer.getvalue()


RC: Any = {"svg.hashsalt": "ascenv", "svg.fonttype": "path", "font.size": 10}
LABEL_GAP_PT = 5  # between a bar's (or whisker's) end and its value label: clear of the cap
LABEL_ROOM_PX = 6  # between the longest value label and the axes' right edge


def figure(result: Comparison) -> Any:
    """The chart's matplotlib Figure, drawn on an Agg canvas (under ``RC`` for the bytes
    ``render`` promises); its value labels carry the gids ``value-<i>-a`` / ``value-<i>-b``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    shapes = result.shapes
    height = height_px(len(shapes))
    fig = Figure(figsize=(WIDTH_PX / DPI, height / DPI), dpi=DPI)
    FigureCanvasAgg(fig)
    fig.subplots_adjust(
        left=LEFT_PX / WIDTH_PX, right=1 - RIGHT_PX / WIDTH_PX, top=1 - TOP_PX / height, bottom=BOTTOM_PX / height
    )
    ax = fig.add_subplot()
    text: dict[str, Any] = {"parse_math": False}  # an op name with "$" is text, not TeX
    fig.suptitle(printable(f"ascenv bench compare: A {result.a.id}  vs  B {result.b.id}"), x=0.02, ha="left", **text)
    labels = [label for i, s in enumerate(shapes) for label in _draw_shape(ax, i, s, text)]
    ax.set_xlim(0, _right_edge(fig, ax, labels))
    ax.set_ylim(len(shapes) - 0.5 if shapes else 0.5, -0.5)  # the first shape on top
    ax.set_yticks(range(len(shapes)))
    ax.set_yticklabels([_label(s) for s in shapes], fontsize=8, **text)
    for x, style in ((100, "-"), (100 * (1 - result.threshold), "--"), (100 * (1 + result.threshold), "--")):
        ax.axvline(x, color="#555555", linestyle=style, linewidth=0.8, zorder=0)
    ax.set_xlabel(
        f"median, % of A's: the duration, or duration / peer where labelled x peer "
        f"(dashed: the --fail-over threshold, {result.threshold:.0%})"
    )
    if not shapes:
        ax.text(0.5, 0.5, "no shape in both runs", transform=ax.transAxes, ha="center", va="center")
    verdicts = [v for v in COLOURS if any(s.change.verdict == v for s in shapes)]
    handles = [Patch(color=A_COLOUR, label="A")] + [Patch(color=COLOURS[v], label=f"B: {v}") for v in verdicts]
    ax.legend(
        handles=handles,
        loc="lower left",
        bbox_to_anchor=(0, 1.01),
        ncol=len(handles),
        frameon=False,
        title="each shape in one measure (bar, label, change, interval): us, or x peer = duration / peer",
        title_fontsize=9,
    )
    return fig


def _right_edge(fig: Any, ax: Any, labels: list[tuple[float, Any]]) -> float:
    """The x limit (in % of A) at which every value label, written ``LABEL_GAP_PT`` right of
    ``x``, ends inside the axes: a label's width in pixels does not depend on the limit, so
    ``x / limit * W + gap + width + room <= W`` for the axes' width W gives the limit."""
    renderer = fig.canvas.get_renderer()
    width = ax.get_window_extent(renderer).width
    gap = LABEL_GAP_PT * fig.dpi / 72
    limit = 118.0  # the 100 % line and a +5 % threshold with some air
    for x, label in labels:
        free = width - gap - label.get_window_extent(renderer).width - LABEL_ROOM_PX
        limit = max(limit, x * width / free if free > 0 else x * 2)
    return limit


def _draw_shape(ax: Any, i: int, s: ShapeChange, text: dict[str, Any]) -> list[tuple[float, Any]]:
    """A's and B's bars of row ``i``, all in the shape's one measure (``ShapeChange.medians``:
    B's bar is 100 % plus the change the interval is of); returns each value label and the x
    (in % of A) it is written after."""
    c = s.change
    a, b = s.medians
    b_pct = b / a * 100 if a else 0.0
    colour = COLOURS[c.verdict]
    (bar_a,) = ax.barh(i - 0.2, 100 if a else 0, height=0.38, color=A_COLOUR)
    interval = not (c.verdict == "inconclusive" and c.low == c.high)  # none computed (too few launches)
    xerr = [[max(0.0, b_pct - 100 * (1 + c.low))], [max(0.0, 100 * (1 + c.high) - b_pct)]] if interval and a else None
    bars = ax.barh(i + 0.2, b_pct, height=0.38, color=colour, xerr=xerr, capsize=3, error_kw={"elinewidth": 1})
    (bar_b,) = bars
    bar_a.set_gid(f"shape-{i}-a")  # one group of two bars per shape, named in the SVG
    bar_b.set_gid(f"shape-{i}-b")
    reach = max(b_pct, 100 * (1 + c.high) if interval and a else 0.0)
    labels = []
    for side, x, y, value, n in (
        ("a", 100 if a else 0, i - 0.2, a, s.a.samples),
        ("b", reach, i + 0.2, b, s.b.samples),
    ):
        label = ax.annotate(
            f"{measure(value, s.unit).strip()}  n={n}",
            (x, y),
            xytext=(LABEL_GAP_PT, 0),
            textcoords="offset points",
            va="center",
            fontsize=8,
            annotation_clip=False,
            # the 100 % and threshold lines pass behind the label, not through it; 1 pt < the gap
            bbox={"facecolor": "white", "edgecolor": "none", "pad": 1},
            **text,
        )
        label.set_gid(f"value-{i}-{side}")
        labels.append((float(x), label))
    noise = f"95% {c.low:+.1%} .. {c.high:+.1%}" if interval else "no interval"
    ax.text(
        1.01,
        i,
        f"{c.verdict} {c.change:+.1%}\n{noise}",
        transform=ax.get_yaxis_transform(),
        va="center",
        color=colour,
        fontsize=9,
        **text,
    )
    return labels
