"""Charts for the review page as inline SVG text: stacked cost bars, step-time shares, and the schedule.

Pure functions from numbers to SVG (no JavaScript, no plotting library), so the page draws the
same in any browser and on paper. Every text is XML-escaped here; the page marks the result safe.
Colours are the Okabe & Ito palette (Color Universal Design, 2008), told apart under the common
forms of colour blindness.
"""

from __future__ import annotations

__all__ = ["PALETTE", "Segment", "Bar", "Span", "stacked_bars", "schedule_chart"]

import math
from dataclasses import dataclass
from xml.sax.saxutils import escape

# Okabe & Ito (2008) without black, then Paul Tol's "muted" scheme (also safe for colour-blind
# readers), then lighter tints: 20 colours before any repeats.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999",
           "#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677", "#882255",
           "#AA4499", "#7FB8D8", "#F2CF7F", "#7FCEB9")
_FONT = 12.0
_CHAR = 0.6 * _FONT  # average glyph advance, about 0.6 em


def _n(x: float) -> str:
    text = f"{x:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _attr(text: str) -> str:
    return escape(text, {'"': "&quot;"})


@dataclass(frozen=True, slots=True)
class Segment:
    """One part of a bar: its label (for the legend and tooltip), value and shown amount."""

    label: str
    value: float
    text: str  # the amount as people read it (``$1.93M``, ``98.7%``)
    color: str


@dataclass(frozen=True, slots=True)
class Bar:
    """A labelled row of segments; ``total_text`` is printed after the bar."""

    label: str
    segments: tuple[Segment, ...]
    total_text: str


def _svg_open(width: float, height: float, title: str, cls: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="chart {cls}" role="img" width="{_n(width)}" '
            f'height="{_n(height)}" viewBox="0 0 {_n(width)} {_n(height)}" '
            f'font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif" '
            f'font-size="{_n(_FONT)}"><title>{escape(title)}</title>')


def stacked_bars(bars: tuple[Bar, ...], *, title: str, scale: float | None = None, width: float = 760.0,
                 cls: str = "stacked", legend: bool = True) -> str:
    """Horizontal stacked bars on one common scale, with a legend of every segment label.

    Model: a bar's length is the sum of its segments over ``scale`` (default: the longest bar),
    so bars compare by length; zero and negative segments are left out of the drawing (they stay
    in the page's tables). Each segment carries a ``<title>`` tooltip and ``data-value``.

    Args:
        bars: the rows, top to bottom.
        title: the chart's accessible name.
        scale: the value that fills the bar area.
        width: the chart's natural width in CSS pixels (it scales down to its container).
        cls: an extra class on the ``<svg>``.
        legend: whether to draw a legend of the distinct segment labels.
    """
    label_w = min(180.0, max((len(b.label) for b in bars), default=4) * _CHAR + 12.0)
    total_w = max((len(b.total_text) for b in bars), default=4) * _CHAR + 12.0
    area = max(120.0, width - label_w - total_w - 8.0)
    top = max((sum(max(s.value, 0.0) for s in b.segments) for b in bars), default=0.0)
    scale = scale if scale and scale > 0 else (top if top > 0 else 1.0)
    row_h, bar_h = 30.0, 20.0
    seen: dict[str, str] = {}
    for b in bars:
        for s in b.segments:
            if s.value > 0:
                seen.setdefault(s.label, s.color)
    per_row = max(1, int(width // 190))
    legend_rows = (len(seen) + per_row - 1) // per_row if legend else 0
    height = len(bars) * row_h + 8.0 + legend_rows * 20.0
    out = [_svg_open(width, height, title, cls)]
    for i, b in enumerate(bars):
        y = 4.0 + i * row_h
        out.append(f'<text x="0" y="{_n(y + bar_h / 2)}" dominant-baseline="central" fill="#222222">'
                   f"{escape(b.label)}</text>")
        x = label_w
        out.append(f'<rect x="{_n(label_w)}" y="{_n(y)}" width="{_n(area)}" height="{_n(bar_h)}" fill="#F3F4F6"/>')
        for s in b.segments:
            if s.value <= 0:
                continue
            w = area * s.value / scale
            out.append(f'<rect class="seg" x="{_n(x)}" y="{_n(y)}" width="{max(w, 0.5):.1f}" height="{_n(bar_h)}" '
                       f'fill="{s.color}" data-label="{_attr(s.label)}" data-value="{s.value:.2f}">'
                       f"<title>{escape(f'{b.label}: {s.label} {s.text}')}</title></rect>")
            x += w
        out.append(f'<text x="{_n(label_w + area + 6)}" y="{_n(y + bar_h / 2)}" dominant-baseline="central" '
                   f'fill="#222222" font-weight="bold">{escape(b.total_text)}</text>')
    if legend:
        y0 = len(bars) * row_h + 12.0
        for k, (label, color) in enumerate(seen.items()):
            x = (k % per_row) * 190.0
            y = y0 + (k // per_row) * 20.0
            out.append(f'<rect x="{_n(x)}" y="{_n(y)}" width="12" height="12" fill="{color}"/>')
            out.append(f'<text x="{_n(x + 17)}" y="{_n(y + 6)}" dominant-baseline="central" fill="#333333">'
                       f"{escape(label[:26])}</text>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


@dataclass(frozen=True, slots=True)
class Span:
    """One workload on the schedule: it runs from ``start`` to ``end`` (days), due by ``deadline``.

    ``low`` and ``high`` are the ends the model's error band gives for ``end`` (``None`` to draw none).
    """

    label: str
    start: float
    end: float
    deadline: float | None
    low: float | None
    high: float | None
    text: str
    color: str


def _ticks(top: float) -> list[float]:
    """Round tick values from 0 to ``top`` (1, 2 or 5 times a power of ten apart, 4-8 of them)."""
    if top <= 0:
        return [0.0]
    raw = top / 6.0
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return [i * step for i in range(int(top / step + 1e-9) + 1)]


def schedule_chart(spans: tuple[Span, ...], *, title: str, horizon: float | None, width: float = 760.0) -> str:
    """Bars on a day axis: each workload's run, its deadline (a red tick) and the error band (whiskers).

    Model: the x axis runs from day 0 to the latest end, deadline or band end (and the horizon
    when it is at most twice that); a bar spans ``start`` to ``end``; a whisker spans ``low`` to ``high`` at the bar's
    end; a dashed line marks the horizon.
    """
    label_w = min(200.0, max((len(s.label) for s in spans), default=4) * _CHAR + 12.0)
    text_w = max((len(s.text) for s in spans), default=4) * _CHAR + 12.0
    area = max(160.0, width - label_w - text_w - 8.0)
    top = max([1.0] + [v for s in spans for v in (s.end, s.deadline, s.high) if v is not None])
    # The horizon is drawn when it is near the runs; a 3-year horizon would squash 40-day bars.
    if horizon and horizon > 2.0 * top:
        horizon = None
    top = max(top, horizon or 0.0) * 1.04
    row_h, bar_h = 30.0, 16.0
    height = len(spans) * row_h + 34.0
    out = [_svg_open(width, height, title, "schedule")]
    x_of = lambda d: label_w + area * d / top  # noqa: E731 - a one-line scale
    axis_y = len(spans) * row_h + 6.0
    for t in _ticks(top):
        x = x_of(t)
        out.append(f'<line x1="{_n(x)}" y1="0" x2="{_n(x)}" y2="{_n(axis_y)}" stroke="#E5E7EB"/>')
        out.append(f'<text x="{_n(x)}" y="{_n(axis_y + 14)}" text-anchor="middle" fill="#555555" font-size="11">'
                   f"{t:g}</text>")
    out.append(f'<text x="{_n(label_w + area)}" y="{_n(axis_y + 27)}" text-anchor="end" fill="#555555" '
               f'font-size="11">days</text>')
    if horizon:
        x = x_of(horizon)
        out.append(f'<line class="horizon" x1="{_n(x)}" y1="0" x2="{_n(x)}" y2="{_n(axis_y)}" stroke="#6B7280" '
                   f'stroke-dasharray="4 3"><title>{escape(f"horizon: day {horizon:g}")}</title></line>')
    for i, s in enumerate(spans):
        y = 4.0 + i * row_h
        mid = y + bar_h / 2
        out.append(f'<text x="0" y="{_n(mid)}" dominant-baseline="central" fill="#222222">{escape(s.label)}</text>')
        x0, x1 = x_of(s.start), x_of(s.end)
        out.append(f'<rect class="run" x="{_n(x0)}" y="{_n(y)}" width="{max(x1 - x0, 1.0):.1f}" height="{_n(bar_h)}" '
                   f'fill="{s.color}" data-start="{s.start:g}" data-end="{s.end:g}">'
                   f"<title>{escape(f'{s.label}: day {s.start:g} to {s.end:.1f}')}</title></rect>")
        if s.low is not None and s.high is not None:
            xl, xh = x_of(s.low), x_of(s.high)
            out.append(f'<g class="band" stroke="#111111"><title>{escape(f"model error band: day {s.low:.1f} to {s.high:.1f}")}'
                       f'</title><line x1="{_n(xl)}" y1="{_n(mid)}" x2="{_n(xh)}" y2="{_n(mid)}"/>'
                       f'<line x1="{_n(xl)}" y1="{_n(mid - 5)}" x2="{_n(xl)}" y2="{_n(mid + 5)}"/>'
                       f'<line x1="{_n(xh)}" y1="{_n(mid - 5)}" x2="{_n(xh)}" y2="{_n(mid + 5)}"/></g>')
        if s.deadline is not None:
            xd = x_of(s.deadline)
            out.append(f'<line class="deadline" x1="{_n(xd)}" y1="{_n(y - 3)}" x2="{_n(xd)}" y2="{_n(y + bar_h + 3)}" '
                       f'stroke="#D55E00" stroke-width="3"><title>{escape(f"deadline: day {s.deadline:g}")}</title></line>')
        out.append(f'<text x="{_n(label_w + area + 6)}" y="{_n(mid)}" dominant-baseline="central" fill="#222222">'
                   f"{escape(s.text)}</text>")
    out.append("</svg>")
    return "\n".join(out) + "\n"
