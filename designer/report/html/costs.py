"""The review page's cost breakdown: capex, opex and cloud by category, as a chart and a table.

Categories are read from the design as it is: ``capex_by_category``, ``opex_by_category`` when the
design has one (else power and maintenance), and the cloud lines of the bill of materials by
instance. Whatever part of a group its categories do not explain is shown as ``other``, so the
bars always add up to the design's own capex, opex and cloud figures.
"""

from __future__ import annotations

__all__ = ["cost_groups", "cost_chart", "cost_table"]

from typing import Mapping

from designer.design import bom
from designer.design.model import Design
from designer.report import fmt as f
from designer.report.html.charts import PALETTE, Bar, Segment, stacked_bars
from designer.report.html.view import Cell, Figure, Header, Row, Table, num
from designer.spec import units

_CENT = 0.005


def _with_other(parts: Mapping[str, float], total: float) -> list[tuple[str, float]]:
    out = [(k, v) for k, v in parts.items() if abs(v) >= _CENT]
    rest = total - sum(v for _, v in out)
    if abs(rest) >= 0.01:
        out.append(("other", rest))
    return out


def cost_groups(design: Design) -> tuple[tuple[str, float, tuple[tuple[str, float], ...]], ...]:
    """(group, group total, ((category, amount), ...)) for capex, opex and cloud, in that order.

    Each group's amounts add up to its total (an ``other`` entry takes any remainder).
    """
    c = design.cost
    capex = _with_other(c.capex_by_category, c.capex_usd)
    opex_parts = getattr(c, "opex_by_category", None)
    if not opex_parts:
        opex_parts = {"power": c.power_usd, "maintenance": c.maintenance_usd}
    opex = _with_other(opex_parts, c.opex_usd)
    clouds: dict[str, float] = {}
    for line in bom.sort_lines(design.bom):
        if line.category == "cloud":
            clouds[line.sku] = clouds.get(line.sku, 0.0) + bom.line_total_usd(line)
    cloud = _with_other(clouds, c.cloud_usd)
    return (("capex", c.capex_usd, tuple(capex)), ("opex", c.opex_usd, tuple(opex)),
            ("cloud", c.cloud_usd, tuple(cloud)))


def _colors(design: Design) -> dict[tuple[str, str], str]:
    out: dict[tuple[str, str], str] = {}
    for group, _, parts in cost_groups(design):
        for name, _ in parts:
            out[(group, name)] = PALETTE[len(out) % len(PALETTE)]
    return out


def cost_chart(design: Design) -> Figure:
    """Capex, opex and cloud as stacked bars on one scale, a segment per category."""
    colors = _colors(design)
    bars = tuple(Bar(group, tuple(Segment(f"{group}: {name}", amount, units.format_money_short(amount),
                                          colors[(group, name)]) for name, amount in parts),
                     units.format_money_short(total))
                 for group, total, parts in cost_groups(design))
    years = design.horizon_days / 365.0
    svg = stacked_bars(bars, title=f"Cost over the horizon by category: total {f.usd(design.cost.total_usd)}",
                       cls="cost-chart")
    return Figure("cost-chart", svg, f"Cost over {f.num(design.horizon_days)} days ({f.num(years)} years), "
                                     f"total {f.usd(design.cost.total_usd)}; one bar per group, one colour per category.")


def cost_table(design: Design) -> Table:
    """Every category with its amount and share of the total; group subtotals and the total."""
    total = design.cost.total_usd
    rows = []
    for group, amount, parts in cost_groups(design):
        rows.append(Row((Cell(group, cls="group"), Cell(""), Cell(f.usd(amount), num(amount), "n"),
                         Cell(f.pct(amount / total if total else None), num(amount), "n")),
                        key=f"cost|{group}", cls="subtotal"))
        for name, value in parts:
            rows.append(Row((Cell(group), Cell(name), Cell(f.usd(value), num(value), "n"),
                             Cell(f.pct(value / total if total else None), num(value), "n")),
                            key=f"cost|{group}|{name}"))
    foot = (Cell("total"), Cell(""), Cell(f.usd(total), num(total), "n total"), Cell("100.0%", cls="n"))
    return Table("costs", (Header("group"), Header("category"), Header("amount", True), Header("share", True)),
                 tuple(rows), foot, sortable=False)
