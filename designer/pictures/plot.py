"""Pictures: fabric drawings as Graphviz DOT, PNG or SVG, and cost frontiers as PNG or SVG.

Pure renderers: data in, bytes (or text) out. DOT needs nothing beyond the standard library.
PNG and SVG use matplotlib, imported inside the functions (the ``plot`` extra:
``pip install 'designer[plot]'``) so the rest of the package never needs it; without it they
raise :class:`~designer.errors.InputError` with that hint. Output is deterministic: no dates or
software versions in the files, and SVG element ids from a fixed salt.
"""

from __future__ import annotations

__all__ = ["IMAGE_FORMATS", "FORMATS", "format_of", "check_matplotlib", "matplotlib_figure", "save_figure",
           "render_dot", "render_drawing", "render_frontier"]

import io
import math
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from designer.design.study import Frontier
from designer.errors import InputError
from designer.pictures.drawing import ROLE_FILLS, Drawing, rail_color
from designer.spec import units

IMAGE_FORMATS = ("png", "svg")
FORMATS = ("dot", *IMAGE_FORMATS)
_INSTALL_HINT = "pip install 'designer[plot]'"
_DPI = 120  # PNG resolution: sharp on screens and in docs at a few hundred kB per picture
_BOX_H = 0.38  # box height in row units (rows are 1 apart)
_DEPLOYMENT_PREFIX = "deployment="
_LABELLED_WIRES = 24  # wires get a "links x rate" label when there are at most this many


def format_of(path: str | Path, allowed: tuple[str, ...] = FORMATS) -> str:
    """The output format named by a file's extension.

    Raises:
        InputError: The extension is not one of ``allowed``.

    Examples:
        >>> format_of("fabric.SVG")
        'svg'
    """
    ext = Path(path).suffix.lower().lstrip(".")
    if ext not in allowed:
        shown = ", ".join(f".{a}" for a in allowed)
        raise InputError(f"cannot write {str(path)!r}: unknown picture format {('.' + ext) if ext else '(none)'}; "
                         f"use one of {shown}")
    return ext


# ---------------------------------------------------------------- DOT


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _penwidth(links: int) -> float:
    # Thicker for bundles, logarithmically, so a 32-link bundle does not swamp the picture.
    return 1.0 + 0.5 * math.log2(max(links, 1))


def render_dot(drawing: Drawing) -> str:
    """Graphviz DOT text of a drawing (``dot -Tsvg``): tiers as ranks, servers at the bottom.

    Each node carries ``class`` (its role) and ``tooltip`` (``leaf x 32``); a wire is labelled
    with its link count when it stands for more than one link. Deterministic.

    Examples:
        >>> from designer.pictures.drawing import Box, Wire
        >>> d = Drawing("t", "s", (Box("a", 0, "server", 1, "n0", (0,)), Box("b", 1, "leaf", 1, "r0", (0,))),
        ...             (Wire("a", "b", 1, (0,), "node-leaf", 50e9),), ((0, "servers"), (1, "leaf")), False, 1)
        >>> print(render_dot(d).splitlines()[-2])
          "a" -- "b" [color="#E69F00", penwidth=1.00];
    """
    out = [
        "graph fabric {",
        "  graph [rankdir=BT, labelloc=t, fontname=Helvetica, nodesep=0.15, ranksep=1.2, "
        f"label={_quote(drawing.title + chr(10) + drawing.subtitle)}];",
        '  node [shape=box, style="rounded,filled", fontname=Helvetica, fontsize=10];',
        "  edge [fontname=Helvetica, fontsize=8];",
    ]
    for tier, heading in drawing.tier_labels:
        out.append(f"  subgraph tier{tier} {{")
        out.append("    rank=same;")
        out.append(f'    tier{tier} [shape=plaintext, style="", label={_quote(heading)}];')
        for b in (b for b in drawing.boxes if b.tier == tier):
            out.append(f"    {_quote(b.id)} [label={_quote(b.label)}, class={_quote(b.role)}, "
                       f"tooltip={_quote(f'{b.role} x {b.count}')}, "
                       f"fillcolor={_quote(ROLE_FILLS.get(b.role, '#FFFFFF'))}, color={_quote(b.color)}];")
        out.append("  }")
    tiers = [t for t, _ in drawing.tier_labels]
    out.extend(f"  tier{low} -- tier{high} [style=invis];" for low, high in zip(tiers, tiers[1:]))
    for w in drawing.wires:
        label = f", label={_quote(str(w.links))}" if w.links > 1 else ""
        out.append(f"  {_quote(w.a)} -- {_quote(w.b)} [color={_quote(w.color)}, "
                   f"penwidth={_penwidth(w.links):.2f}{label}];")
    out.append("}")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- matplotlib


def check_matplotlib() -> None:
    """Fail early, before long work, when PNG and SVG output is impossible.

    Raises:
        InputError: matplotlib is not installed (with the install hint).
    """
    with _matplotlib():
        pass


@contextmanager
def _matplotlib() -> Iterator[Any]:
    """The matplotlib ``Figure`` class, under settings that make SVG output deterministic."""
    try:
        import matplotlib
        from matplotlib.figure import Figure
    except ImportError:
        raise InputError(f"PNG and SVG pictures need matplotlib: {_INSTALL_HINT} (or write .dot)") from None
    # A fixed hash salt makes SVG element ids stable; text stays text (smaller, searchable).
    with matplotlib.rc_context({"svg.hashsalt": "designer", "svg.fonttype": "none",
                                "font.family": "DejaVu Sans"}):
        yield Figure


def matplotlib_figure():
    """Context manager giving matplotlib's ``Figure`` class under the settings that make output
    deterministic (for the other picture modules).

    Raises:
        InputError: matplotlib is missing (with the install hint).
    """
    return _matplotlib()


def save_figure(fig: Any, fmt: str) -> bytes:
    """A figure as PNG or SVG bytes without dates or software versions (the same picture, the same bytes)."""
    return _save(fig, fmt)


def _save(fig: Any, fmt: str) -> bytes:
    if fmt not in IMAGE_FORMATS:
        raise InputError(f"unknown image format {fmt!r}; expected one of {', '.join(IMAGE_FORMATS)}")
    buf = io.BytesIO()
    # No creation date or software version: the same picture gives the same bytes.
    metadata = {"Date": None, "Creator": None} if fmt == "svg" else {"Software": None}
    fig.savefig(buf, format=fmt, dpi=_DPI, bbox_inches="tight", metadata=metadata)
    return buf.getvalue()


def _positions(drawing: Drawing) -> tuple[dict[str, tuple[float, float]], float, int, dict[int, float],
                                          dict[int, float]]:
    """Box centres (x, y), the drawing's width, its rows, the box width per tier, and each tier's y.

    Every row is spread over the same width: the busiest row gets one unit per box.
    """
    rows: dict[int, list[str]] = {}
    for b in drawing.boxes:
        rows.setdefault(b.tier, []).append(b.id)
    width = float(max(len(ids) for ids in rows.values()))
    level = {tier: float(i) for i, tier in enumerate(sorted(rows))}
    pos: dict[str, tuple[float, float]] = {}
    box_w: dict[int, float] = {}
    for tier, ids in rows.items():
        slot = width / len(ids)
        box_w[tier] = min(0.86 * slot, 4.0)
        for i, box_id in enumerate(ids):
            pos[box_id] = ((i + 0.5) * slot, level[tier])
    return pos, width, len(rows), box_w, level


# Text metrics for sizing: an average DejaVu Sans character is about 0.6 em wide.
_CHAR_EM = 0.6
_PAD_IN = 0.2  # inches around a box label
_FONT_PT = (4.5, 9.0)  # smallest and largest box font
_WIDTH_IN = (8.0, 30.0)  # narrowest and widest figure


def _size(drawing: Drawing) -> tuple[float, float]:
    """Figure width (inches) and box font size (points) that fit the widest row's labels."""
    rows: dict[int, list[int]] = {}
    for b in drawing.boxes:
        rows.setdefault(b.tier, []).append(max(len(line) for line in b.label.split("\n")))
    def need(font: float) -> float:
        return max(len(chars) * (max(chars) * _CHAR_EM * font / 72 + _PAD_IN) for chars in rows.values())
    fig_w = min(_WIDTH_IN[1], max(_WIDTH_IN[0], need(8.0) + 1.5))
    font = 8.0
    while font > _FONT_PT[0] and need(font) + 1.5 > fig_w:
        font -= 0.5
    if need(font) + 1.5 < fig_w * 0.6:
        font = min(_FONT_PT[1], font + 1.0)
    return fig_w, font


def render_drawing(drawing: Drawing, fmt: str) -> bytes:
    """A drawing as PNG or SVG bytes: tiers bottom-up, boxes with labels, wires in rail colours.

    Raises:
        InputError: ``fmt`` is not png or svg, or matplotlib is missing.
    """
    with _matplotlib() as Figure:
        from matplotlib.collections import LineCollection
        from matplotlib.lines import Line2D
        from matplotlib.patches import FancyBboxPatch

        pos, width, rows, box_w, level = _positions(drawing)
        fig_w, font = _size(drawing)
        fig = Figure(figsize=(fig_w, 2.0 * rows + 1.3))
        fig.subplots_adjust(left=0.01, right=0.99)  # the legend goes outside; "tight" saving keeps it
        ax = fig.add_subplot()
        ax.set_axis_off()
        ax.set_xlim(-0.1, width + 0.1)
        ax.set_ylim(-0.55, rows - 1 + 0.75)
        tier_of = {b.id: b.tier for b in drawing.boxes}
        by_tier: dict[str, list] = {}
        for w in drawing.wires:
            by_tier.setdefault(w.tier, []).append(w)
        for wires in by_tier.values():
            wires = [w for w in wires if tier_of[w.a] != tier_of[w.b]]
            # Dense meshes (a 32 x 16 leaf-spine) fade so the boxes stay readable; bundles of many
            # links draw thicker, logarithmically and capped.
            ax.add_collection(LineCollection(
                [((pos[w.a][0], pos[w.a][1] + _BOX_H / 2), (pos[w.b][0], pos[w.b][1] - _BOX_H / 2)) for w in wires],
                colors=[w.color for w in wires], alpha=max(0.3, min(0.9, 80.0 / max(len(wires), 1))),
                linewidths=[min(3.0, 0.6 + 0.3 * math.log2(max(w.links, 1))) for w in wires], zorder=1))
        if len(drawing.wires) <= _LABELLED_WIRES:
            for w in drawing.wires:
                (xa, ya), (xb, yb) = pos[w.a], pos[w.b]
                ax.text((xa + xb) / 2, (ya + yb) / 2, f"{w.links} x {units.format_bandwidth(w.rate_Bps)}",
                        ha="center", va="center", fontsize=max(_FONT_PT[0], font - 1.5), color="#333333",
                        zorder=3, bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.7, "pad": 0.5})
        for b in drawing.boxes:
            x, y = pos[b.id]
            bw = box_w[b.tier]
            ax.add_patch(FancyBboxPatch((x - bw / 2, y - _BOX_H / 2), bw, _BOX_H,
                                        boxstyle="round,pad=0,rounding_size=0.06",
                                        facecolor=ROLE_FILLS.get(b.role, "#FFFFFF"), edgecolor=b.color,
                                        linewidth=1.6 if len(b.rails) == 1 and b.role != "server" else 0.8, zorder=2))
            ax.text(x, y, b.label, ha="center", va="center", fontsize=font, zorder=3)
        for tier, heading in drawing.tier_labels:
            ax.text(0.0, level[tier] + _BOX_H / 2 + 0.1, heading, ha="left", va="bottom", fontsize=9,
                    color="#333333", fontweight="bold", zorder=4,
                    bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1.0})
        ax.set_title(f"{drawing.title}\n{drawing.subtitle}", fontsize=10, loc="left")
        rails = sorted({w.rails[0] for w in drawing.wires if len(w.rails) == 1})
        if len(rails) > 1:
            handles = [Line2D([], [], color=rail_color(r), linewidth=2, label=f"rail {r}") for r in rails]
            ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
        return _save(fig, fmt)


_TARGET_AXES = {
    "utilization": "minimum GPU utilization target",
    "deadline_scale": "deadline scale (x the spec's deadlines)",
    "budget": "total budget (USD)",
}


def render_frontier(frontier: Frontier, fmt: str, *, name: str = "") -> bytes:
    """Total cost against the target: the optimum (thick), one curve per class, and switchovers.

    Infeasible points are left out of every curve and marked with an ``x`` on the axis; each
    change of the optimum's technology is a dotted line between the two values, labelled with the
    new technology. The cost axis is logarithmic when the costs span more than 30x.

    Raises:
        InputError: ``fmt`` is not png or svg, or matplotlib is missing.
    """
    with _matplotlib() as Figure:
        from matplotlib.ticker import FuncFormatter

        xs = [p.value for p in frontier.points]
        fig = Figure(figsize=(10.0, 5.5))
        ax = fig.add_subplot()
        nan = float("nan")
        costs = []
        for i, label in enumerate(frontier.classes):
            ys = [dict(p.outcome.classes).get(label) for p in frontier.points]
            ys = [nan if y is None else y for y in ys]
            costs.extend(y for y in ys if not math.isnan(y))
            ax.plot(xs, ys, marker="o", markersize=3, linewidth=1.0, color=f"C{i % 10}",
                    linestyle="--" if label.startswith(_DEPLOYMENT_PREFIX) else "-", label=label, zorder=2)
        best = [nan if p.outcome.total_usd is None else p.outcome.total_usd for p in frontier.points]
        costs.extend(y for y in best if not math.isnan(y))
        # A wide translucent band, so the class curve that is the optimum shows through it.
        ax.plot(xs, best, marker="o", markersize=9, linewidth=7, color="black", alpha=0.25, label="optimum",
                zorder=1.5)
        if costs and min(costs) > 0 and max(costs) / min(costs) > 30:
            ax.set_yscale("log")
        bad = [p.value for p in frontier.points if p.outcome.status != "ok"]
        if bad:
            ax.plot(bad, [0.0] * len(bad), linestyle="none", marker="x", color="#D55E00", markersize=9,
                    clip_on=False, transform=ax.get_xaxis_transform(), label="no design", zorder=4)
        for s in frontier.switchovers:
            mid = (s.low + s.high) / 2
            ax.axvline(mid, color="#666666", linestyle=":", linewidth=1.2, zorder=1)
            ax.text(mid, 0.98, f" -> {s.after}", rotation=90, va="top", ha="right", fontsize=8, color="#333333",
                    transform=ax.get_xaxis_transform(), zorder=5,
                    bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1.0})
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: units.format_money_short(y)))
        if frontier.target == "budget":
            ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: units.format_money_short(x)))
        elif frontier.target == "utilization":
            ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:.0%}"))
        ax.set_xlabel(_TARGET_AXES.get(frontier.target, frontier.target))
        ax.set_ylabel("total cost over the horizon")
        ax.grid(True, which="major", alpha=0.3)
        axis = _TARGET_AXES.get(frontier.target, frontier.target)
        ax.set_title(f"{name + ': ' if name else ''}total cost against the {axis}", fontsize=11, loc="left")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
        return _save(fig, fmt)
