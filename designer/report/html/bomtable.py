"""The review page's bill of materials: one row per line, with its price marks and where they come from.

A line is marked ``estimate`` or ``unpriced``, and carries a price basis and date, from the line
itself when the design file records them, else from the catalog entry of the same name (the
catalog the page is rendered with), so a reviewer sees which money is soft.
"""

from __future__ import annotations

__all__ = ["LineMarks", "KNOWN_LINE_FIELDS", "line_marks", "line_key", "bom_table", "mark_counts"]

from dataclasses import dataclass
from typing import Any

from designer.catalog.types import Catalog
from designer.design import bom, sections
from designer.design.model import Design
from designer.report import fmt as f
from designer.report.html.view import Cell, Header, Row, Table, extra_fields, num

# BOM line fields the table lays out in their own columns; any other field goes to "details".
KNOWN_LINE_FIELDS = ("category", "sku", "description", "role", "quantity", "unit_price_usd", "unit_power_w",
                     "source", "estimate", "unpriced", "price_basis", "as_of",
                     "connector", "protocol", "lanes", "lane_gbps", "media", "plugs_into", "ends")
# Line category -> catalog kind holding the entry the line is priced from.
_KIND_OF = {"server": "server", "gpu": "gpu", "nic": "nic", "switch": "switch", "cable": "cable",
            "transceiver": "transceiver", "cloud": "cloud"}


@dataclass(frozen=True, slots=True)
class LineMarks:
    """What a reviewer should know about a line's price, and whence the page knows it."""

    estimate: bool
    unpriced: bool
    basis: str  # list | street | volume | quote | "" when unknown
    as_of: str  # the price's date, "" when unknown
    origin: str  # "design" (the line says so), "catalog" (looked up), "" (nothing known)


def _entry(line: bom.BomLine, design: Design, catalog: Catalog | None) -> Any:
    if catalog is None:
        return None
    kind = _KIND_OF.get(line.category)
    if kind is not None:
        return catalog.by_kind(kind).get(line.sku)
    if line.category in ("rack", "service"):
        # Racks and installation are priced from the facility the design was made for.
        name = design.facility.name if design.facility is not None else "default"
        return catalog.facilities.get(name)
    return None


def line_marks(line: bom.BomLine, design: Design, catalog: Catalog | None) -> LineMarks:
    """The price marks of one line: the line's own when the design file records them, else its catalog entry's.

    A line records its marks when it carries a price basis or a price date (design files written
    before lines carried them have neither); ``unpriced`` is a line without a unit price, or, from
    the catalog, an entry without one (``price: null``).
    """
    basis, as_of = getattr(line, "price_basis", "") or "", getattr(line, "as_of", "") or ""
    no_price = line.unit_price_usd is None
    if basis or as_of:
        return LineMarks(bool(getattr(line, "estimate", False)), no_price, basis, as_of, "design")
    entry = _entry(line, design, catalog)
    prov = getattr(entry, "provenance", None)
    if prov is None:
        return LineMarks(bool(getattr(line, "estimate", False)), no_price, "", "", "")
    price = getattr(entry, "price_usd", 0.0) if line.category != "cloud" else 0.0
    return LineMarks(bool(prov.estimate or getattr(line, "estimate", False)), no_price or price is None,
                     str(getattr(prov, "basis", "") or ""), str(prov.as_of), "catalog")


def mark_counts(design: Design, catalog: Catalog | None) -> tuple[int, int]:
    """(estimated lines, unpriced lines) of the design's BOM."""
    marks = [line_marks(line, design, catalog) for line in design.bom]
    return sum(m.estimate for m in marks), sum(m.unpriced for m in marks)


def line_key(line: bom.BomLine, lines: tuple[bom.BomLine, ...]) -> str:
    """The row key of a BOM line: ``bom|category|role|sku``, and where several lines of ``lines``
    share it (one optic in two devices, one cord between two pairs of ends) what it plugs into or
    its ends, so every row's key is its own."""
    key = f"bom|{line.category}|{line.role}|{line.sku}"
    if sum(1 for l in lines if (l.category, l.role, l.sku) == (line.category, line.role, line.sku)) > 1:
        key += "|" + (line.plugs_into or "+".join(line.ends))
    return key


def bom_table(design: Design, catalog: Catalog | None) -> Table:
    """Every BOM line, in :func:`designer.design.bom.sort_lines` order, sortable and filterable.

    Columns: category, role, SKU, description, quantity, unit price, total, share of the BOM
    total, power, marks, price date, source, and ``details`` for fields the table has no column
    for. The filter selects on a line's section (its category, or its network:
    :func:`designer.design.sections.section_of`). The footer holds the BOM total; the page's script recomputes it over the rows shown.
    """
    lines = bom.sort_lines(design.bom)
    totals = bom.bom_totals(lines)
    headers = (Header("category"), Header("role"), Header("SKU", note="and description"),
               Header("quantity", True), Header("unit price", True), Header("total", True),
               Header("share", True, "of the BOM total"), Header("power", True, "all units, before PUE"),
               Header("price", note="estimate / unpriced / price basis"), Header("as of"), Header("source"),
               Header("details"))
    rows = []
    # The details column is there only when some line has a field the other columns do not show.
    has_details = any(extra_fields(line, KNOWN_LINE_FIELDS) for line in lines)
    if not has_details:
        headers = headers[:-1]
    for line in lines:
        m = line_marks(line, design, catalog)
        total = bom.line_total_usd(line)
        share = total / totals.total_usd if totals.total_usd else None
        marks = tuple(x for x, on in (("estimate", m.estimate), ("unpriced", m.unpriced)) if on)
        if m.basis:
            marks += (m.basis,)
        details = "; ".join(f"{i.name}: {i.value}" for i in extra_fields(line, KNOWN_LINE_FIELDS))
        unit = "/h" if line.category == "cloud" else ""
        cells = (
            Cell(line.category), Cell(line.role), Cell(line.sku, cls="sku", sub=line.description + _fits(line)),
            Cell(f.qty(line.quantity) + (" h" if line.category == "cloud" else ""), num(line.quantity), "n"),
            Cell("unpriced" if line.unit_price_usd is None else f.usd(line.unit_price_usd) + unit,
                 num(-1.0 if line.unit_price_usd is None else bom.round_money(line.unit_price_usd)), "n"),
            Cell("-" if line.unit_price_usd is None else f.usd(total), num(total), "n total"),
            Cell(f.pct(share), num(share or 0.0), "n"),
            Cell(f"{f.num(line.power_w / 1e3)} kW" if line.power_w else "-", num(line.power_w), "n"),
            Cell(", ".join(marks) if marks else "-", " ".join(marks), "marks", marks),
            Cell(m.as_of or "-", m.as_of, "date"), Cell(line.source, cls="src", clamp=True),
            Cell(details or "-", cls="src", clamp=True))[: len(headers)]
        cls = " ".join(x for x in ("estimate" if m.estimate else "", "unpriced" if m.unpriced else "") if x)
        rows.append(Row(cells, key=line_key(line, lines), cls=cls,
                        category=sections.section_label(sections.section_of(line))))
    foot = (Cell("total"), Cell(""), Cell(f"{len(lines)} lines", cls="count"), Cell(""), Cell(""),
            Cell(f.usd(totals.total_usd), num(totals.total_usd), "n total"), Cell("100.0%", cls="n"),
            Cell(f"{f.num(totals.power_w / 1e3)} kW", cls="n"), Cell(""), Cell(""), Cell(""), Cell(""))[: len(headers)]
    return Table("bom", headers, tuple(rows), foot)


def _fits(line: bom.BomLine) -> str:
    """What fits where, after a transceiver's or cable's description: ``; OSFP, infiniband 8 x
    100G, multimode, in dgx-h100`` (``between A and B`` for a cable)."""
    if not line.connector:
        return ""
    where = f"in {line.plugs_into}" if line.plugs_into else ("between " + " and ".join(line.ends) if line.ends else "")
    parts = [line.connector.upper(), f"{line.protocol} {line.lanes} x {f.num(line.lane_gbps)}G", line.media, where]
    return "; " + ", ".join(p for p in parts if p)
