"""The one warning about old prices: which figures a design rests on and how old they are."""

from __future__ import annotations

import dataclasses
from datetime import date

from designer.design import Design, CostLine
from designer.report.prices import render_stale_prices, stale_prices


def _dated(design: Design) -> Design:
    lines = list(design.bom)
    lines[0] = dataclasses.replace(lines[0], as_of="2024-08", price_basis="quote")
    lines[1] = dataclasses.replace(lines[1], as_of="2026-03", price_basis="street")
    lines[2] = dataclasses.replace(lines[2], as_of="2023", price_basis="owned", unit_price_usd=0.0)
    cost = dataclasses.replace(design.cost, lines=(
        CostLine("support", "opex", 1.0, "", "", "2025-01"), CostLine("server", "capex", 1.0, "", "", "2020")))
    return dataclasses.replace(design, bom=tuple(lines), cost=cost)


def test_only_priced_bought_figures_older_than_18_months(design: Design) -> None:
    d = _dated(design)
    stale = stale_prices(d, date(2026, 12, 1))
    # 2024-08 is 28 months old, 2025-01 23; 2026-03 is recent; the owned line has no price; capex
    # lines are dated by their BOM lines.
    assert stale == ((d.bom[0].sku, "2024-08", 28), ("support", "2025-01", 23))
    text = render_stale_prices(stale)
    assert text.startswith("2 prices this design rests on are older than 18 months: ")
    assert "\n" not in text
    assert stale_prices(d, date(2025, 6, 1)) == ()  # nothing was old then
    assert render_stale_prices(()) == ""
