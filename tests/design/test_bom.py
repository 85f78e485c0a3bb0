"""BOM lines, totals, rack layout and the BOM renderers (tables, CSV, JSON)."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from designer.design import bom
from designer.design import Design, dump_design, parse_design
from designer.errors import InputError
from designer.report import render_bom, render_bom_by_rack

# Factory totals, by hand: 128 x $310,000 = $39,680,000; 48 x $36,000 = $1,728,000;
# 2,048 x $1,000 = $2,048,000; 2,048 x $100 = $204,800; 46 x $5,000 = $230,000.
CAPEX = 43_890_800.00
# 128 x 10,200 W + 48 x 1,100 W + 2,048 x 15 W = 1,389,120 W
POWER_W = 1_389_120.0


def _cloud_line(hours: float = 276_480.4) -> bom.BomLine:
    # p5.48xlarge at $55.04/h (SkyPilot catalog v8, us-east-1).
    return bom.BomLine("cloud", "aws-p5.48xlarge", "8x H100, EFA 3,200 Gb/s", "training", hours, 55.04, 0.0,
                       "SkyPilot catalog v8 aws/vms.csv")


# ---------------------------------------------------------------- lines and totals


def test_totals_of_the_factory_bom(design: Design) -> None:
    totals = bom.bom_totals(design.bom)
    assert totals.capex_usd == CAPEX and totals.cloud_usd == 0 and totals.total_usd == CAPEX
    assert totals.power_w == POWER_W and totals.lines == 9
    assert dict(totals.by_category) == {"server": 39_680_000.0, "switch": 1_728_000.0, "transceiver": 2_048_000.0,
                                        "cable": 204_800.0, "rack": 230_000.0}
    assert list(totals.by_category) == ["server", "switch", "transceiver", "cable", "rack"]
    assert bom.total_capex(design.bom) == CAPEX and bom.total_power_w(design.bom) == POWER_W


def test_cloud_lines_are_rented_not_purchased(design: Design) -> None:
    lines = design.bom + (_cloud_line(),)
    totals = bom.bom_totals(lines)
    # 276,480.4 h x $55.04 = $15,217,481.216 -> $15,217,481.22
    assert totals.cloud_usd == 15_217_481.22 and totals.capex_usd == CAPEX
    assert totals.total_usd == round(CAPEX + 15_217_481.22, 2)


def test_sort_and_group_follow_category_order(design: Design) -> None:
    lines = tuple(reversed(design.bom)) + (_cloud_line(), bom.BomLine("zzz", "x", "", "", 1, 1, 0, ""))
    ordered = bom.sort_lines(lines)
    assert [l.category for l in ordered] == ["server", "switch", "switch", "transceiver", "transceiver", "cable",
                                             "cable", "rack", "rack", "cloud", "zzz"]
    assert [c for c, _ in bom.group_by_category(lines)] == ["server", "switch", "transceiver", "cable", "rack",
                                                            "cloud", "zzz"]


def test_line_total_uses_the_written_factors() -> None:
    line = bom.BomLine("cable", "x", "", "r", 3, 0.335, 0, "")  # 0.335 is written 0.34 (nearest binary is above)
    assert bom.line_total_usd(line) == 1.02  # 3 x 0.34, not round(1.005)


@given(st.floats(-1e12, 1e12))
def test_rounding_is_idempotent(x: float) -> None:
    assert bom.round_sig(bom.round_sig(x)) == bom.round_sig(x)
    assert bom.round_money(bom.round_money(x)) == bom.round_money(x)
    assert Decimal(bom.money_text(x)) == Decimal(bom.money_text(x)).quantize(Decimal("0.01"))


# ---------------------------------------------------------------- rack layout


def test_rack_layout_of_the_factory(design: Design) -> None:
    racks = bom.rack_layout(design.bom, design.system.racks)
    compute = [r for r in racks if r.kind == "compute"]
    network = [r for r in racks if r.kind == "network"]
    # 128 servers over 43 racks: 42 racks of 3 and one of 2; 48 switches in 3 racks of 16.
    assert [sum(i.quantity for i in r.items) for r in compute] == [3] * 42 + [2]
    assert [(r.name, [(i.role, i.quantity) for i in r.items]) for r in network] == [
        ("net-01", [("leaf", 16)]), ("net-02", [("leaf", 16)]), ("net-03", [("spine", 16)])]
    assert compute[0].name == "rack-01" and compute[0].power_w == 30_600.0
    # Servers and switches only: 1,305,600 W + 52,800 W.
    assert sum(r.power_w for r in racks) == 1_358_400.0


def test_rack_layout_spreads_evenly_and_mixes_lines() -> None:
    lines = (bom.BomLine("server", "a", "", "compute", 6, 1, 100, ""),
             bom.BomLine("server", "b", "", "storage", 4, 1, 50, ""),
             bom.BomLine("switch", "s", "", "spine", 3, 1, 10, ""),
             bom.BomLine("switch", "s", "", "leaf", 14, 1, 10, ""))
    # No rack lines: 17 switches take 2 network racks, leaving 4 of the 6 racks for servers.
    racks = bom.rack_layout(lines, 6)
    assert [[(i.sku, i.role, i.quantity) for i in r.items] for r in racks] == [
        [("a", "compute", 3)], [("a", "compute", 3)], [("b", "storage", 2)], [("b", "storage", 2)],
        [("s", "leaf", 9)], [("s", "leaf", 5), ("s", "spine", 3)]]  # leaves before spines
    # Rack lines give the counts: 3 compute racks, 1 network rack.
    with_racks = lines + (bom.BomLine("rack", "r", "", "compute", 3, 1, 0, ""),
                          bom.BomLine("rack", "r", "", "network", 1, 1, 0, ""))
    assert [sum(i.quantity for i in r.items) for r in bom.rack_layout(with_racks, 0)] == [4, 3, 3, 17]
    # Compute racks but no network racks: the switches go top of rack.
    tor = lines[:1] + lines[3:] + (bom.BomLine("rack", "r", "", "compute", 2, 1, 0, ""),)
    assert [[(i.category, i.quantity) for i in r.items] for r in bom.rack_layout(tor, 0)] == [
        [("server", 3), ("switch", 7)], [("server", 3), ("switch", 7)]]
    assert len(bom.rack_layout(lines[:1], 0)) == 1  # no rack count at all: one rack
    # GPUs and NICs bought apart from the servers follow them, pro rata (15 NICs for 10 servers).
    apart = (bom.BomLine("server", "s", "", "compute", 10, 1, 4400, ""),
             bom.BomLine("gpu", "g", "", "compute", 80, 1, 750, ""),
             bom.BomLine("nic", "n", "", "compute", 15, 1, 25, ""),
             bom.BomLine("rack", "r", "", "compute", 4, 1, 0, ""))
    placed = bom.rack_layout(apart, 0)
    assert [[i.quantity for i in r.items] for r in placed] == [[3, 24, 4], [3, 24, 5], [2, 16, 3], [2, 16, 3]]
    assert placed[0].power_w == 3 * 4400 + 24 * 750 + 4 * 25
    assert len(bom.rack_layout(lines[:1], 100)) == 6  # never more racks than servers
    assert bom.rack_layout((_cloud_line(),), 0) == ()


# ---------------------------------------------------------------- renderers


def test_bom_json_follows_the_contract(design: Design) -> None:
    doc = json.loads(render_bom(design, "json"))
    keys = {"category", "sku", "role", "quantity", "unit_price_usd", "total_usd", "source"}
    assert all(keys <= set(item) for item in doc["items"]) and len(doc["items"]) == 9
    assert list(doc["items"][0])[:7] == ["category", "sku", "role", "quantity", "unit_price_usd", "total_usd", "source"]
    assert doc["items"][0] | {"description": "", "source": ""} == {
        "category": "server", "sku": "dgx-h100", "role": "compute", "quantity": 128, "unit_price_usd": 310000.0,
        "total_usd": 39680000.0, "source": "", "description": "", "unit_power_w": 10200, "power_w": 1305600,
        "price_basis": "", "as_of": "", "estimate": False, "unpriced": False}
    assert {"capex_usd", "power_kw"} <= set(doc["totals"])
    assert doc["totals"]["capex_usd"] == CAPEX and doc["totals"]["power_kw"] == 1389.12
    assert {i["category"] for i in doc["items"]} <= set(bom.CATEGORIES)


def test_bom_csv_parses_back_and_sums_to_the_total(design: Design) -> None:
    d = dataclasses.replace(design, bom=design.bom + (_cloud_line(),))
    rows = list(csv.DictReader(io.StringIO(render_bom(d, "csv"))))
    assert len(rows) == 10 and list(rows[0]) == ["category", "sku", "description", "role", "quantity", "unit_price_usd",
                                                 "total_usd", "unit_power_w", "power_w", "source"]
    total = sum(Decimal(r["total_usd"]) for r in rows)
    assert total == Decimal(str(bom.bom_totals(d.bom).total_usd)) == Decimal("59108281.22")
    cent = Decimal("0.01")
    assert all(Decimal(r["total_usd"]) == (Decimal(r["quantity"]) * Decimal(r["unit_price_usd"])).quantize(cent)
               for r in rows)
    assert rows[0]["description"] == "NVIDIA DGX H100 (8x H100 SXM, 8x ConnectX-7 400G)"


def _table_rows(text: str) -> list[list[str]]:
    return [[c.strip() for c in l.strip().strip("|").split("|")] for l in text.splitlines() if l.startswith("|")]


@pytest.mark.parametrize("fmt", ["markdown", "github"])
def test_markdown_tables_group_by_category(design: Design, fmt: str) -> None:
    text = render_bom(design, fmt)
    assert text.startswith("### Bill of materials: llama3-70b-pretrain\n\n")
    rows = _table_rows(text)
    assert rows[0] == ["category", "SKU", "description", "role", "quantity", "unit price", "total", "source"]
    assert all(len(r) == 8 for r in rows)
    body = rows[2:]
    assert body[0][:7] == ["server", "dgx-h100", "NVIDIA DGX H100 (8x H100 SXM, 8x ConnectX-7 400G)", "compute", "128",
                           "$310,000.00", "$39,680,000.00"]
    subtotals = {r[0]: r[6] for r in body if r[0].endswith("subtotal**")}
    assert subtotals == {"**server subtotal**": "**$39,680,000.00**", "**switch subtotal**": "**$1,728,000.00**",
                         "**transceiver subtotal**": "**$2,048,000.00**", "**cable subtotal**": "**$204,800.00**",
                         "**rack subtotal**": "**$230,000.00**"}
    assert body[-1][0] == "**total**" and body[-1][6] == "**$43,890,800.00**"
    assert (":---" in text) == (fmt == "markdown")
    assert "IT power 1,389.12 kW before PUE" in text


def test_markdown_cells_escape_pipes(design: Design) -> None:
    line = dataclasses.replace(design.bom[0], description="a | b")
    rows = _table_rows(render_bom(dataclasses.replace(design, bom=(line,)), "markdown").replace("\\|", "\u2502"))
    assert rows[2][2] == "a \u2502 b" and all(len(r) == 8 for r in rows)


def test_plain_table_with_cloud_lines(design: Design) -> None:
    d = dataclasses.replace(design, bom=design.bom + (_cloud_line(),))
    text = render_bom(d, "plain")
    assert "$55.04/h" in text and "276,480" in text
    assert "purchased (capex)" in text and "$43,890,800.00" in text and "rented (cloud)" in text
    assert text.splitlines()[-3].split()[-1] == "$59,108,281.22"  # total row, above the foot line
    assert "..." in text  # long sources are cut in plain text only
    assert "*" not in text


def test_rack_renderers(design: Design) -> None:
    doc = json.loads(render_bom_by_rack(design, "json"))
    assert doc["totals"] == {"racks": 46, "power_kw": 1358.4} and doc["rule"] == bom.RACK_LAYOUT_RULE
    assert doc["racks"][0] == {"name": "rack-01", "kind": "compute", "power_kw": 30.6, "items": [
        {"category": "server", "role": "compute", "sku": "dgx-h100", "quantity": 3, "unit_power_w": 10200.0,
         "power_w": 30600.0}]}
    rows = list(csv.DictReader(io.StringIO(render_bom_by_rack(design, "csv"))))
    assert sum(int(r["quantity"]) for r in rows) == 128 + 48
    assert sum(float(r["power_w"]) for r in rows) == 1_358_400.0
    md = render_bom_by_rack(design, "markdown")
    assert ["net-03", "network", "16x nvidia-qm9700 (spine)", "16", "17.6"] in _table_rows(md)
    assert _table_rows(md)[-1] == ["**46 racks**", "", "", "**176**", "**1,358.4**"] and "Layout rule:" in md
    cloud = dataclasses.replace(design, bom=(_cloud_line(),))
    assert "nothing to rack" in render_bom_by_rack(cloud, "plain")


def test_unknown_format_is_an_input_error(design: Design) -> None:
    with pytest.raises(InputError, match="unknown BOM format 'xlsx'; expected one of: github, markdown, plain, csv"):
        render_bom(design, "xlsx")


# ---------------------------------------------------------------- price basis, estimates, unpriced


def test_an_unpriced_line_is_counted_never_zero(design: Design) -> None:
    unpriced = bom.BomLine("switch", "lab-tor", "lab switch", "leaf", 2.0, None, 350.0, "own", "", "", False)
    estimated = dataclasses.replace(design.bom[0], estimate=True, price_basis="street")
    d = dataclasses.replace(design, bom=(estimated, *design.bom[1:], unpriced))
    counts = bom.price_counts(d.bom)
    assert (counts.unpriced, counts.estimated) == (1, 1)
    assert bom.price_footer(counts).startswith("1 line estimated, 1 unpriced")
    doc = json.loads(render_bom(d, "json"))
    (item,) = [i for i in doc["items"] if i["sku"] == "lab-tor"]
    assert item["unit_price_usd"] is None and item["total_usd"] is None and item["unpriced"] is True
    assert doc["totals"]["unpriced_lines"] == 1 and doc["totals"]["capex_usd"] == CAPEX
    table = render_bom(d, "github")
    assert "unpriced" in table and "1 unpriced" in table and "leave out the 1 unpriced line" in table
    rows = list(csv.DictReader(io.StringIO(render_bom(d, "csv"))))
    assert [r["total_usd"] for r in rows if r["sku"] == "lab-tor"] == [""]
    # The design file writes no price for it, and reads it back as unpriced.
    text = dump_design(d)
    assert "unit_price_usd: null" in text and "total_usd: null" in text
    assert parse_design(text).bom == bom.sort_lines(d.bom)


def test_mixed_price_bases_are_named() -> None:
    a = bom.BomLine("server", "s", "", "compute", 1.0, 1.0, 0.0, "", "street")
    b = bom.BomLine("switch", "w", "", "leaf", 1.0, 1.0, 0.0, "", "volume")
    c = bom.BomLine("switch", "o", "", "leaf", 1.0, 0.0, 0.0, "", "owned")
    text = bom.price_footer(bom.price_counts([a, b, c]))
    assert text == "0 lines estimated, 0 unpriced, 1 owned (sunk), bases: 1 street, 1 volume"


def test_rack_layout_places_the_fabric_manager_appliances() -> None:
    """UFM appliances follow the switches in the network racks, with their power; beside
    top-of-rack switches they fill the rack line with role 'fabric-manager'."""
    lines = (bom.BomLine("server", "a", "", "compute", 4, 1, 100, ""),
             bom.BomLine("switch", "s", "", "leaf", 3, 1, 10, ""),
             bom.BomLine("appliance", "ufm", "", "fabric-manager", 4, None, 600, ""),
             bom.BomLine("rack", "r", "", "compute", 2, 1, 0, ""))
    net = bom.rack_layout(lines + (bom.BomLine("rack", "r", "", "network", 1, 1, 0, ""),), 0)
    assert [(r.name, [(i.sku, i.quantity) for i in r.items]) for r in net if r.kind == "network"] == [
        ("net-01", [("s", 3), ("ufm", 4)])]
    assert net[-1].power_w == 3 * 10 + 4 * 600
    tor = bom.rack_layout(lines + (bom.BomLine("rack", "r", "", "fabric-manager", 1, 1, 0, ""),), 0)
    assert [(r.name, r.kind, [i.sku for i in r.items]) for r in tor] == [
        ("rack-01", "compute", ["a", "s"]), ("rack-02", "compute", ["a", "s"]), ("net-01", "network", ["ufm"])]
    # Every part of the BOM that takes rack space is placed: nothing is left out of the racks.
    for racks in (net, tor):
        assert sum(i.quantity for r in racks for i in r.items if i.category == "appliance") == 4
