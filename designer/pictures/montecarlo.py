"""The picture of a Monte Carlo study: every design's cost over the scenarios where it qualifies.

One row per design (most often cheapest on top): a dot per scenario in which it meets the
constraints (filled where it is the cheapest), a bar from the 10th to the 90th percentile with a
tick at the median, and on the right its share of scenarios won and missed. The robust choice and
the design chosen on the point estimates are named in the row labels. PNG or SVG, deterministic
(the dots' vertical spread comes from the scenario index).
"""

from __future__ import annotations

__all__ = ["MAX_ROWS", "render_study"]

import math

from designer.design.montecarlo import MonteCarlo
from designer.pictures.plot import matplotlib_figure, save_figure
from designer.spec import units

MAX_ROWS = 12  # designs drawn; the rest (the least often cheapest) are summarised in the title
_GOLDEN = 0.6180339887498949  # low-discrepancy spread of dots within a row


def render_study(result: MonteCarlo, fmt: str) -> bytes:
    """The study's cost distributions as PNG or SVG bytes (module docstring).

    Raises:
        InputError: ``fmt`` is not png or svg, or matplotlib is missing.
    """
    with matplotlib_figure() as Figure:
        from matplotlib.ticker import FuncFormatter

        rows = list(enumerate(result.designs))[:MAX_ROWS]
        fig = Figure(figsize=(11.0, 1.3 + 0.62 * max(len(rows), 1)))
        ax = fig.add_subplot()
        costs = []
        for r, (j, s) in enumerate(rows):
            y = len(rows) - 1 - r
            won_x, won_y, other_x, other_y = [], [], [], []
            for sc in result.scenarios:
                cell = sc.cells[j]
                if cell.status != "ok":
                    continue
                dy = ((sc.index * _GOLDEN) % 1.0 - 0.5) * 0.42
                (won_x if sc.cheapest == j else other_x).append(cell.total_usd)
                (won_y if sc.cheapest == j else other_y).append(y + dy)
                costs.append(cell.total_usd)
            color = f"C{r % 10}"
            ax.scatter(other_x, other_y, s=9, facecolors="none", edgecolors=color, linewidths=0.7, alpha=0.8, zorder=2)
            ax.scatter(won_x, won_y, s=11, color=color, alpha=0.9, zorder=3)
            if s.cost_p10_usd is not None:
                ax.plot([s.cost_p10_usd, s.cost_p90_usd], [y, y], color="black", linewidth=2.2, alpha=0.55,
                        solid_capstyle="butt", zorder=4)
                ax.plot([s.cost_p50_usd] * 2, [y - 0.3, y + 0.3], color="black", linewidth=2.0, zorder=5)
            note = f"cheapest {s.share:.0%}"
            if s.infeasible_share:
                note += f", misses {s.infeasible_share:.0%}"
            ax.text(1.01, y, note, transform=ax.get_yaxis_transform(), va="center", fontsize=8)
        labels = []
        for r, (j, s) in enumerate(rows):
            tags = [t for t, on in (("robust choice", s.robust), ("point estimate", s.base)) if on]
            labels.append(f"D{j + 1} {s.design.label}" + (f"  [{', '.join(tags)}]" if tags else ""))
        ax.set_yticks(list(range(len(rows))))
        ax.set_yticklabels(list(reversed(labels)), fontsize=8)
        for tick, (j, s) in zip(reversed(ax.get_yticklabels()), rows):
            if s.robust:
                tick.set_fontweight("bold")
        ax.set_ylim(-0.6, len(rows) - 0.4)
        if costs and min(costs) > 0 and max(costs) / min(costs) > 30:
            ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: units.format_money_short(x)))
        ax.set_xlabel("total cost over the horizon, in the scenarios where the design meets every constraint "
                      "(bar: 10th to 90th percentile, tick: median; filled: the cheapest design there)", fontsize=8)
        ax.grid(True, axis="x", alpha=0.3)
        inputs = ", ".join(f"{u.name} {u.distribution.text}" for u in result.uncertainties) or "nothing varied"
        hidden = len(result.designs) - len(rows)
        title = (f"{result.spec_name}: {result.samples} scenarios (seed {result.seed}); {inputs}"
                 + (f"; {hidden} more designs not shown" if hidden else ""))
        ax.set_title(_wrap(title, 130), fontsize=9, loc="left")
        if not rows:
            ax.text(0.5, 0.5, "no design meets the constraints in any scenario", transform=ax.transAxes,
                    ha="center", va="center")
        return save_figure(fig, fmt)


def _wrap(text: str, width: int) -> str:
    """Break a title at the last ", " or "; " before ``width`` characters, line after line."""
    lines, line = [], ""
    for part in text.replace("; ", ";\0").replace(", ", ",\0").split("\0"):
        if line and len(line) + 1 + len(part) > width:
            lines.append(line)
            line = part
        else:
            line = f"{line} {part}" if line else part
    lines.append(line)
    return "\n".join(lines[: math.ceil(len(text) / width) + 2])
