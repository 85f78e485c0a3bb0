"""The review page's cost breakdown: capex, opex, cloud and the residual credit, as a chart and a table.

The items are the design's cost lines (``cost.lines``: each with its basis, source, date and
estimate mark) when it has them; older designs fall back to ``capex_by_category``,
``opex_by_category`` (else power and maintenance) and the BOM's cloud lines by instance. Whatever
part of a group its items do not explain is shown as ``other``, so each group adds up to the
design's own capex, opex and cloud figures and the groups to its total.
"""

from __future__ import annotations

__all__ = ["CostItem", "cost_groups", "cost_chart", "cost_table"]

from dataclasses import dataclass
from typing import Iterable

from designer.design import bom
from designer.design.model import Design
from designer.report import fmt as f
from designer.report.html.charts import PALETTE, Bar, Segment, stacked_bars
from designer.report.html.view import Cell, Figure, Header, Row, Table, num
from designer.spec import units

_GROUPS = ("capex", "opex", "cloud", "residual")


@dataclass(frozen=True, slots=True)
class CostItem:
    """One item of a cost group; ``amount_usd`` is negative for the residual credit."""

    name: str
    amount_usd: float
    basis: str = ""
    source: str = ""
    as_of: str = ""
    estimate: bool = False


def _with_other(items: Iterable[CostItem], total: float) -> tuple[CostItem, ...]:
    out = [i for i in items if abs(i.amount_usd) >= 0.005]
    rest = total - sum(i.amount_usd for i in out)
    # Every written amount is rounded to the cent, so a sum of n of them may be off by n/2 cents.
    if abs(rest) > 0.005 * (len(out) + 1):
        out.append(CostItem("other", rest, "not split into categories in the design file"))
    return tuple(out)


def cost_groups(design: Design) -> tuple[tuple[str, float, tuple[CostItem, ...]], ...]:
    """(group, group total, items) for capex, opex, cloud and, when there is one, the residual credit.

    The group totals are the design's ``capex_usd``, ``opex_usd``, ``cloud_usd`` and minus
    ``residual_usd``, so they add up to ``total_usd``.
    """
    c = design.cost
    residual = getattr(c, "residual_usd", 0.0)
    totals = {"capex": c.capex_usd, "opex": c.opex_usd, "cloud": c.cloud_usd, "residual": -residual}
    lines = getattr(c, "lines", ())
    items: dict[str, list[CostItem]] = {g: [] for g in _GROUPS}
    if lines:
        for line in lines:
            sign = -1.0 if line.kind == "residual" else 1.0
            items.setdefault(line.kind, []).append(CostItem(line.name, sign * line.amount_usd, line.basis,
                                                            line.source, line.as_of, line.estimate))
    else:
        items["capex"] = [CostItem(k, v) for k, v in c.capex_by_category.items()]
        opex = getattr(c, "opex_by_category", None) or {"power": c.power_usd, "maintenance": c.maintenance_usd}
        items["opex"] = [CostItem(k, v) for k, v in opex.items()]
        clouds: dict[str, float] = {}
        for line in bom.sort_lines(design.bom):
            if line.category == "cloud":
                clouds[line.sku] = clouds.get(line.sku, 0.0) + bom.line_total_usd(line)
        items["cloud"] = [CostItem(k, v) for k, v in clouds.items()]
        if residual:
            items["residual"] = [CostItem("residual", -residual)]
    out = []
    for group in [*_GROUPS, *sorted(set(items) - set(_GROUPS))]:
        total = totals.get(group, sum(i.amount_usd for i in items[group]))
        if group == "residual" and not residual and not items[group]:
            continue
        out.append((group, total, _with_other(items[group], total)))
    return tuple(out)


def cost_chart(design: Design) -> Figure:
    """The cost groups as stacked bars on one scale, a segment per item (the residual is a credit)."""
    groups = cost_groups(design)
    colors: dict[tuple[str, str], str] = {}
    for group, _, items in groups:
        for i in items:
            colors.setdefault((group, i.name), PALETTE[len(colors) % len(PALETTE)])
    # The residual credit is drawn at its size, on its own bar, and labelled a credit.
    bars = tuple(Bar(group, tuple(Segment(f"{group}: {i.name}" + (" (credit)" if i.amount_usd < 0 else ""),
                                          abs(i.amount_usd), units.format_money_short(i.amount_usd),
                                          colors[(group, i.name)]) for i in items),
                     units.format_money_short(total) + (" credit" if total < 0 else ""))
                 for group, total, items in groups)
    years = design.horizon_days / 365.0
    svg = stacked_bars(bars, title=f"Cost over the horizon by category: total {f.usd(design.cost.total_usd)}",
                       cls="cost-chart")
    credit = (", after the residual value recovered at the horizon (a credit)"
              if any(g == "residual" for g, _, _ in groups) else "")
    return Figure("cost-chart", svg, f"Cost over {f.num(design.horizon_days)} days ({f.num(years)} years), "
                                     f"total {f.usd(design.cost.total_usd)}{credit}; one bar per group, one colour "
                                     "per item.")


def cost_table(design: Design) -> Table:
    """Every item with its amount, share of the total, basis and marks; group subtotals and the total."""
    total = design.cost.total_usd
    rows = []
    for group, amount, items in cost_groups(design):
        rows.append(Row((Cell(group, cls="group"), Cell(""), Cell(f.usd_delta(amount) if amount < 0 else f.usd(amount),
                                                                   num(amount), "n"),
                         Cell(f.pct(amount / total if total else None), num(amount), "n"), Cell(""), Cell("")),
                        key=f"cost|{group}", cls="subtotal"))
        for i in items:
            marks = ("estimate",) if i.estimate else ()
            rows.append(Row((Cell(group), Cell(i.name),
                             Cell(f.usd_delta(i.amount_usd) if i.amount_usd < 0 else f.usd(i.amount_usd),
                                  num(i.amount_usd), "n"),
                             Cell(f.pct(i.amount_usd / total if total else None), num(i.amount_usd), "n"),
                             Cell(", ".join(marks) or "-", " ".join(marks), "marks", marks),
                             Cell(i.basis + (f" (as of {i.as_of})" if i.as_of else ""), cls="src", clamp=True)),
                            key=f"cost|{group}|{i.name}"))
    foot = (Cell("total"), Cell(""), Cell(f.usd(total), num(total), "n total"), Cell("100.0%", cls="n"), Cell(""),
            Cell(""))
    return Table("costs", (Header("group"), Header("item"), Header("amount", True), Header("share", True),
                           Header("price"), Header("basis")), tuple(rows), foot, sortable=False)
