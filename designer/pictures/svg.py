"""A fabric drawing as SVG text written directly, without matplotlib: for pages that embed the picture.

:func:`render_svg` lays a :class:`~designer.pictures.drawing.Drawing` out the way
:func:`designer.pictures.plot.render_drawing` does (tiers bottom-up, every row spread over the
width of the busiest one, wires in rail colours, link labels on small drawings) and writes the SVG
elements itself, so a design review page always holds its fabric inline, with or without the
``plot`` extra. Every text is XML-escaped; output is deterministic (fixed decimals, no ids).
"""

from __future__ import annotations

__all__ = ["render_svg"]

import math
from xml.sax.saxutils import escape

from designer.pictures.drawing import ROLE_FILLS, ROLE_SERVER, Drawing, rail_color
from designer.spec import units

# Geometry in CSS pixels. A box holds two lines of 11 px text; rows sit ROW_H apart.
_FONT_PX = 11.0
_CHAR_PX = 0.6 * _FONT_PX  # average DejaVu Sans / Helvetica advance, about 0.6 em
_BOX_H = 34.0
_ROW_H = 120.0
_MIN_SLOT = 44.0  # narrowest box slot (a server box labelled "n7")
_PAD = 12.0
_HEAD_H = 46.0  # title and subtitle
_LEGEND_H = 24.0
_LABELLED_WIRES = 24  # as the PNG/SVG renderer: wires get "links x rate" labels up to this many


def _attr(text: str) -> str:
    """Text for a double-quoted attribute value."""
    return escape(text, {'"': "&quot;"})


def _n(x: float) -> str:
    """A coordinate with one decimal (deterministic, no exponent)."""
    text = f"{x:.1f}"
    return text[:-2] if text.endswith(".0") else text


# Text styles as presentation attributes (no <style> element: the page's content security policy
# admits only the styles it hashes).
_STYLES = {
    "lbl": 'fill="#111111"',
    "wl": 'fill="#333333" font-size="9"',
    "th": 'fill="#333333" font-weight="bold" font-size="12"',
    "t1": 'fill="#111111" font-weight="bold" font-size="13"',
    "t2": 'fill="#444444" font-size="11"',
}


def _text(x: float, y: float, content: str, *, cls: str, anchor: str = "middle") -> str:
    """A text element; a label with line breaks becomes one ``tspan`` per line, centred on ``y``."""
    lines = content.split("\n")
    style = f'class="{cls}" {_STYLES[cls]} text-anchor="{anchor}" dominant-baseline="central"'
    if len(lines) == 1:
        return f'<text x="{_n(x)}" y="{_n(y)}" {style}>{escape(content)}</text>'
    first = y - (len(lines) - 1) * _FONT_PX * 0.6
    spans = "".join(f'<tspan x="{_n(x)}" y="{_n(first + i * _FONT_PX * 1.2)}">{escape(line)}</tspan>'
                    for i, line in enumerate(lines))
    return f"<text {style}>{spans}</text>"


def _slot_width(labels: list[str]) -> float:
    longest = max((len(line) for label in labels for line in label.split("\n")), default=1)
    return max(_MIN_SLOT, longest * _CHAR_PX + 14.0)


def render_svg(drawing: Drawing) -> str:
    """The drawing as a standalone ``<svg>`` element (UTF-8 text, no XML declaration).

    Model: the busiest row sets the width (one slot per box, wide enough for the longest label of
    that row); the other rows spread their boxes evenly over it. Wires join the top of the lower
    box to the bottom of the upper one, coloured by rail (grey when they carry several), thicker
    for bundles (logarithmically) and fainter in dense meshes, as in the matplotlib renderer.
    Boxes carry ``class="box role-<role>"`` and ``data-count``; each has a ``<title>`` tooltip.

    Args:
        drawing: a drawing from :func:`designer.pictures.draw.draw_design` or
            :func:`designer.pictures.layout.drawing_from_graph`.

    Returns:
        SVG text with a ``viewBox`` (it scales to its container) and its natural size.
    """
    rows: dict[int, list] = {}
    for b in drawing.boxes:
        rows.setdefault(b.tier, []).append(b)
    tiers = sorted(rows)
    width = max((len(bs) * _slot_width([b.label for b in bs]) for bs in rows.values()), default=200.0)
    width = max(width, 360.0) + 2 * _PAD
    rails = sorted({w.rails[0] for w in drawing.wires if len(w.rails) == 1})
    legend = len(rails) > 1
    height = _HEAD_H + len(tiers) * _ROW_H + (_LEGEND_H if legend else 0.0) + _PAD
    # Row i (0 = the bottom tier) has its box centres at y[i]; the top tier sits under the heading.
    y_of = {t: _HEAD_H + (len(tiers) - 1 - i) * _ROW_H + _ROW_H * 0.62 for i, t in enumerate(tiers)}
    pos: dict[str, tuple[float, float, float]] = {}  # box id -> centre x, centre y, box width
    for tier, boxes in rows.items():
        slot = (width - 2 * _PAD) / len(boxes)
        box_w = min(0.88 * slot, 200.0)
        for i, b in enumerate(boxes):
            pos[b.id] = (_PAD + (i + 0.5) * slot, y_of[tier], box_w)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="fabric-drawing" role="img" '
           f'width="{_n(width)}" height="{_n(height)}" viewBox="0 0 {_n(width)} {_n(height)}" '
           f'font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="{_n(_FONT_PX)}">',
           f"<title>{escape(drawing.title)}</title>",
           _text(_PAD, 16.0, drawing.title, cls="t1", anchor="start"),
           _text(_PAD, 34.0, drawing.subtitle, cls="t2", anchor="start")]
    tier_of = {b.id: b.tier for b in drawing.boxes}
    by_tier: dict[str, list] = {}
    for w in drawing.wires:
        if tier_of[w.a] != tier_of[w.b]:
            by_tier.setdefault(w.tier, []).append(w)
    out.append('<g class="wires" fill="none">')
    for tier_name, wires in by_tier.items():
        opacity = max(0.3, min(0.9, 80.0 / max(len(wires), 1)))
        for w in wires:
            (xa, ya, _), (xb, yb, _) = pos[w.a], pos[w.b]
            stroke = min(3.0, 0.6 + 0.3 * math.log2(max(w.links, 1))) * 1.3
            out.append(f'<line x1="{_n(xa)}" y1="{_n(ya - _BOX_H / 2)}" x2="{_n(xb)}" y2="{_n(yb + _BOX_H / 2)}" '
                       f'stroke="{w.color}" stroke-width="{stroke:.2f}" stroke-opacity="{opacity:.2f}" '
                       f'data-links="{w.links}"><title>{escape(f"{w.links} x {units.format_bandwidth(w.rate_Bps)} ({tier_name})")}'
                       f"</title></line>")
    out.append("</g>")
    if len(drawing.wires) <= _LABELLED_WIRES:
        for w in drawing.wires:
            (xa, ya, _), (xb, yb, _) = pos[w.a], pos[w.b]
            label = f"{w.links} x {units.format_bandwidth(w.rate_Bps)}"
            tw = len(label) * 0.6 * 9 + 4
            xm, ym = (xa + xb) / 2, (ya + yb) / 2
            out.append(f'<rect x="{_n(xm - tw / 2)}" y="{_n(ym - 6.5)}" width="{_n(tw)}" height="13" fill="#fff" '
                       f'fill-opacity="0.8"/>')
            out.append(_text(xm, ym, label, cls="wl"))
    for tier in tiers:
        for b in rows[tier]:
            x, y, bw = pos[b.id]
            thick = len(b.rails) == 1 and b.role != ROLE_SERVER
            out.append(f'<g class="box role-{_attr(b.role)}" data-count="{b.count}">'
                       f"<title>{escape(f'{b.role} x {b.count}')}</title>"
                       f'<rect x="{_n(x - bw / 2)}" y="{_n(y - _BOX_H / 2)}" width="{_n(bw)}" height="{_n(_BOX_H)}" '
                       f'rx="5" fill="{ROLE_FILLS.get(b.role, "#FFFFFF")}" stroke="{b.color}" '
                       f'stroke-width="{"1.8" if thick else "0.9"}"/>'
                       f"{_text(x, y, b.label, cls='lbl')}</g>")
    for tier, heading in drawing.tier_labels:
        y = y_of[tier] - _BOX_H / 2 - 12.0
        # A white ground keeps the heading readable over the wires that pass behind it.
        out.append(f'<rect x="{_n(_PAD - 2)}" y="{_n(y - 8)}" width="{_n(len(heading) * 0.62 * 12 + 4)}" height="16" '
                   f'fill="#FFFFFF" fill-opacity="0.85"/>')
        out.append(_text(_PAD, y, heading, cls="th", anchor="start"))
    if legend:
        y = height - _PAD - _LEGEND_H / 2
        x = _PAD
        for r in rails:
            out.append(f'<line x1="{_n(x)}" y1="{_n(y)}" x2="{_n(x + 18)}" y2="{_n(y)}" stroke="{rail_color(r)}" '
                       f'stroke-width="3"/>')
            out.append(_text(x + 22, y, f"rail {r}", cls="t2", anchor="start"))
            x += 74.0
    out.append("</svg>")
    return "\n".join(out) + "\n"

