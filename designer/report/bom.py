"""Bill-of-materials renderers: the BOM as tables, CSV or JSON, and what goes in each rack."""

from __future__ import annotations

__all__ = ["BOM_FORMATS", "RACK_FORMATS", "render_bom", "render_bom_by_rack"]

import csv
import io
from typing import Any

from designer.design import bom, bomjson, sections
from designer.design.model import Design
from designer.report import escape
from designer.report import fmt as f
from designer.report import jsondoc

BOM_FORMATS = ("github", "markdown", "plain", "csv", "json")
RACK_FORMATS = BOM_FORMATS

CSV_COLUMNS = ("category", "sku", "description", "role", "quantity", "unit_price_usd", "total_usd",
               "unit_power_w", "power_w", "source")
_HEADERS = ("category", "SKU", "description", "role", "quantity", "unit price", "total", "source")
_ALIGN = "llllrrrl"
# Plain-text tables cut the source column (a citation can run to hundreds of characters);
# CSV, JSON and the Markdown tables keep it whole.
PLAIN_SOURCE_WIDTH = 60


def _unit_price(line: bom.BomLine) -> str:
    # Cloud lines count instance-hours, so their unit price is per hour. No price is never "$0.00".
    if line.unit_price_usd is None:
        return "unpriced"
    return f.usd(line.unit_price_usd) + ("/h" if line.category == "cloud" else "")


def _total(line: bom.BomLine) -> str:
    return "unpriced" if line.unit_price_usd is None else f.usd(bom.line_total_usd(line))


def _source(text: str, fmt: str) -> str:
    if fmt == "plain" and len(text) > PLAIN_SOURCE_WIDTH:
        return text[: PLAIN_SOURCE_WIDTH - 3].rstrip() + "..."
    return text


def _title(design: Design, what: str, fmt: str) -> str:
    text = f"{what}: {f.text(design.spec_name, fmt)}"
    return f"### {text}\n\n" if f.is_markdown(fmt) else f"{text}\n\n"


def _bom_table(design: Design, fmt: str) -> str:
    totals = bom.bom_totals(design.bom)
    rows: list[list[str]] = []
    blank = [""] * 5  # description .. unit price
    for section, lines in sections.group_by_section(design.bom):
        for line in lines:
            rows.append([line.category, line.sku, line.description, line.role, f.qty(line.quantity),
                         _unit_price(line), _total(line), _source(line.source, fmt)])
        label = sections.section_label(section)
        subtotal = bom.round_money(sum(bom.line_total_usd(l) for l in lines))
        rows.append([f.bold(f"{label} subtotal", fmt), *blank, f.bold(f.usd(subtotal), fmt), ""])
    if totals.cloud_usd and totals.capex_usd:
        rows.append([f.bold("purchased (capex)", fmt), *blank, f.bold(f.usd(totals.capex_usd), fmt), ""])
        rows.append([f.bold("rented (cloud)", fmt), *blank, f.bold(f.usd(totals.cloud_usd), fmt), ""])
    rows.append([f.bold("total", fmt), *blank, f.bold(f.usd(totals.total_usd), fmt), ""])
    body = f.table(rows, _HEADERS, fmt, _ALIGN)
    counts = bom.price_counts(design.bom)
    foot = (f"{totals.lines} lines ({bom.price_footer(counts)}); IT power {f.num(totals.power_w / 1e3)} kW before PUE; "
            f"prices from catalogs {design.catalog_digest[:12] or '(no digest)'}")
    if counts.unpriced:
        foot += f"\nThe totals leave out the {counts.unpriced} unpriced line{'s' if counts.unpriced != 1 else ''}."
    return _title(design, "Bill of materials", fmt) + body + "\n\n" + foot + "\n"


def _csv(header: tuple[str, ...], rows: list[list[Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    # Text from catalogs is escaped so that a spreadsheet never runs it as a formula; numbers as they are.
    writer.writerows([escape.csv_cell(c) if isinstance(c, str) and not _is_number(c) else c for c in row]
                     for row in rows)
    return out.getvalue()


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _by_network(lines: tuple[bom.BomLine, ...]) -> dict[str, float]:
    """Capex of each storage or management network present (its switches, optics and cables)."""
    out: dict[str, float] = {}
    for section, group in sections.group_by_section(lines):
        if section in sections.NETWORK_SECTIONS:
            out[section] = bom.round_money(sum(bom.line_total_usd(l) for l in group))
    return out


def render_bom(design: Design, fmt: str = "github") -> str:
    """The bill of materials of ``design``.

    Formats: ``github`` / ``markdown`` (GitHub table / pipe table), ``plain`` (terminal table):
    columns category, SKU, description, role, quantity, unit price, total, source, grouped by
    category, the storage fabric, in-band and out-of-band networks in sections of their own
    (:func:`designer.design.sections.group_by_section`), with a subtotal row per group and a total row
    (purchased and rented totals too when both exist). ``csv``: one row per line item (columns :data:`CSV_COLUMNS`, money as
    ``"12500.00"``), no subtotal rows, so the ``total_usd`` column sums to the total. ``json``:
    ``{"items": [...], "totals": {...}}`` with docs/contract.md's keys (``category, sku, role, quantity,
    unit_price_usd, total_usd, source`` per item, ``capex_usd, power_kw`` in totals) and more.

    Raises:
        InputError: an unknown format.
    """
    f.check_format(fmt, BOM_FORMATS, "BOM")
    lines = bom.sort_lines(design.bom)
    if fmt == "json":
        totals = bom.bom_totals(lines)
        counts = bom.price_counts(lines)
        doc = {
            "items": [bomjson.line_to_json(line) for line in lines],
            "totals": {
                "capex_usd": totals.capex_usd,
                "power_kw": bom.round_sig(totals.power_w / 1e3),
                "cloud_usd": totals.cloud_usd,
                "total_usd": totals.total_usd,
                "lines": totals.lines,
                "by_category": dict(totals.by_category),
                "by_network": _by_network(lines),
                "estimated_lines": counts.estimated,
                "unpriced_lines": counts.unpriced,
                "owned_lines": counts.owned,
                "price_bases": dict(counts.bases),
            },
        }
        return jsondoc.dumps(doc)
    if fmt == "csv":
        rows = []
        for line in lines:
            item = bomjson.line_to_json(line)
            unpriced = line.unit_price_usd is None
            rows.append([item["category"], item["sku"], item["description"], item["role"], item["quantity"],
                         "" if unpriced else bom.money_text(line.unit_price_usd),
                         "" if unpriced else bom.money_text(item["total_usd"]),
                         item["unit_power_w"], item["power_w"], item["source"]])
        return _csv(CSV_COLUMNS, rows)
    return _bom_table(design, fmt)


def render_bom_by_rack(design: Design, fmt: str = "github") -> str:
    """What goes in each rack, from :func:`designer.design.bom.rack_layout` (the rule is printed with it).

    Servers are spread evenly over ``design.system.racks`` racks; switches fill their own network
    racks. Table formats list per rack its contents and power, then the rule; ``csv`` has one row
    per (rack, part); ``json`` is ``{"rule", "racks": [{"name", "kind", "power_kw", "items": [...]}],
    "totals": {"racks", "power_kw"}}``.

    Raises:
        InputError: an unknown format.
    """
    f.check_format(fmt, RACK_FORMATS, "rack")
    racks = bom.rack_layout(design.bom, design.system.racks)
    total_kw = bom.round_sig(sum(r.power_w for r in racks) / 1e3)
    if fmt == "json":
        doc = {
            "rule": bom.RACK_LAYOUT_RULE,
            "racks": [{"name": r.name, "kind": r.kind, "power_kw": bom.round_sig(r.power_w / 1e3),
                       "items": [{"category": i.category, "role": i.role, "sku": i.sku, "quantity": i.quantity,
                                  "unit_power_w": bom.round_sig(i.unit_power_w),
                                  "power_w": bom.round_sig(i.power_w)} for i in r.items]}
                      for r in racks],
            "totals": {"racks": len(racks), "power_kw": total_kw},
        }
        return jsondoc.dumps(doc)
    if fmt == "csv":
        rows = [[r.name, r.kind, i.category, i.role, i.sku, i.quantity, f.num(i.unit_power_w).replace(",", ""),
                 f.num(i.power_w).replace(",", "")] for r in racks for i in r.items]
        return _csv(("rack", "kind", "category", "role", "sku", "quantity", "unit_power_w", "power_w"), rows)
    title = _title(design, "Racks", fmt)
    if not racks:
        return title + "No purchased servers or switches: nothing to rack (a cloud design).\n"
    rows = []
    for r in racks:
        contents = ", ".join(f"{i.quantity}x {i.sku}" + (f" ({i.role})" if i.role else "") for i in r.items)
        rows.append([r.name, r.kind, contents, f.num(sum(i.quantity for i in r.items)), f.num(r.power_w / 1e3)])
    items_total = sum(i.quantity for r in racks for i in r.items)  # pieces, not rack units (U)
    rows.append([f.bold(f"{len(racks)} racks", fmt), "", "", f.bold(f.num(items_total), fmt),
                 f.bold(f.num(total_kw), fmt)])
    body = f.table(rows, ("rack", "kind", "contents", "items", "power (kW)"), fmt, "lllrr")
    return title + body + f"\n\nLayout rule: {bom.RACK_LAYOUT_RULE}.\n"
