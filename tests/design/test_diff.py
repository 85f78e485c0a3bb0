"""Design diffs: what counts as a change, the deltas, and the three renderings."""

from __future__ import annotations

import dataclasses
import json

import pytest

from designer.design import Design, dump_design, parse_design
from designer.design.diff import ChangeKind, FieldChange, diff_designs
from designer.errors import InputError
from designer.report import render_diff


def test_identical_designs_have_an_empty_diff(design: Design) -> None:
    d = diff_designs(design, design)
    assert d.is_empty and d.system == () and d.workloads == () and d.bom == () and d.inputs == ()
    assert d.total.delta_usd == 0 and d.total.delta_pct == 0 and d.cloud.delta_pct is None
    assert render_diff(d, "table").startswith("designer: no change to cost, system, workloads or bill of materials\n")
    assert json.loads(render_diff(d, "json"))["is_empty"] is True


def test_noise_below_the_written_precision_is_no_change(design: Design) -> None:
    loaded = parse_design(dump_design(design))  # every float rounded as written
    assert diff_designs(design, loaded).is_empty and diff_designs(loaded, design).is_empty
    w = dataclasses.replace(design.workloads[0], utilization=0.86 + 1e-12)
    cost = dataclasses.replace(design.cost, total_usd=design.cost.total_usd + 0.0001)  # .6544 -> .6545
    assert diff_designs(design, dataclasses.replace(design, workloads=(w,), cost=cost)).is_empty


def test_fabric_change_and_bom_deltas(design: Design, roce_design: Design) -> None:
    d = diff_designs(design, roce_design)
    assert not d.is_empty
    changes = {c.field: (c.old, c.new) for c in d.system}
    assert changes["fabric"] == ("infiniband", "roce")
    assert changes["nodes"] == (128, 144) and changes["gpus"] == (1024, 1152)
    assert changes["switch"] == ("nvidia-qm9700", "nvidia-sn5600")
    assert "deployment" not in changes and "tiers" not in changes

    by_key = {(c.category, c.role, c.sku): c for c in d.bom}
    server = by_key[("server", "compute", "dgx-h100")]
    # 16 more DGX H100 at $310,000
    assert (server.kind, server.old_quantity, server.new_quantity, server.quantity_delta, server.delta_usd) == (
        ChangeKind.CHANGED, 128, 144, 16, 4_960_000.0)
    leaf_ib = by_key[("switch", "leaf", "nvidia-qm9700")]
    assert (leaf_ib.kind, leaf_ib.new_quantity, leaf_ib.new_unit_price_usd, leaf_ib.delta_usd) == (
        ChangeKind.REMOVED, 0, None, -1_152_000.0)
    leaf_eth = by_key[("switch", "leaf", "nvidia-sn5600")]
    # 1,152 NIC ports / 64 down ports = 18 leaves at $60,000
    assert (leaf_eth.kind, leaf_eth.new_quantity, leaf_eth.delta_usd) == (ChangeKind.ADDED, 18, 1_080_000.0)
    categories = ["server"] + ["switch"] * 4 + ["transceiver"] * 2 + ["cable"] * 2 + ["rack"] * 2
    assert [c.category for c in d.bom] == categories
    # 144 servers at 3 per rack fill 48 compute racks; 27 switches fit 2 network racks of 16.
    assert [(c.role, c.old_quantity, c.new_quantity) for c in d.bom[-2:]] == [("compute", 43, 48), ("network", 3, 2)]

    # Capex is the sum of the BOM in these designs, so the line deltas add up to the capex change.
    assert d.capex.delta_usd == d.bom_delta_usd == 49_044_400.0 - 43_890_800.0
    # The change between the written totals ($47,687,431.65 -> $53,234,436.95), not the raw floats.
    assert d.total.delta_usd == 5_547_005.30
    assert round(d.total.delta_pct, 3) == 11.632  # 5,547,005.30 / 47,687,431.65

    (w,) = d.workloads
    assert w.kind is ChangeKind.CHANGED and round(w.utilization_delta, 6) == -0.04
    assert round(w.days_delta, 3) == round(157.435 - 168.876, 3)
    assert FieldChange("dp", 32, 36) in w.fields


def test_input_changes_alone_leave_the_diff_empty(design: Design) -> None:
    other = dataclasses.replace(design, tool_version="0.2.0", spec_digest="0" * 64)
    d = diff_designs(design, other)
    assert d.is_empty
    assert [c.field for c in d.inputs] == ["spec_digest", "tool_version"]
    assert "Inputs (for information)" in render_diff(d, "table")


def test_workloads_added_and_removed(design: Design) -> None:
    extra = dataclasses.replace(design.workloads[0], name="llama3-8b", gpus=64, dp=2)
    d = diff_designs(design, dataclasses.replace(design, workloads=(extra,)))
    assert [(w.name, w.kind) for w in d.workloads] == [("llama3-70b", ChangeKind.REMOVED),
                                                       ("llama3-8b", ChangeKind.ADDED)]
    assert d.workloads[0].utilization_delta is None and not d.is_empty


def test_unit_price_change_only(design: Design) -> None:
    cheaper = dataclasses.replace(design.bom[0], unit_price_usd=300_000.0)
    d = diff_designs(design, dataclasses.replace(design, bom=(cheaper,) + design.bom[1:]))
    (c,) = d.bom
    assert c.kind is ChangeKind.CHANGED and c.quantity_delta == 0 and c.delta_usd == -1_280_000.0
    assert "$310,000.00 -> $300,000.00" in render_diff(d, "table")


def test_repeated_bom_keys_are_summed(design: Design) -> None:
    half = dataclasses.replace(design.bom[0], quantity=64)
    split = dataclasses.replace(design, bom=(half, half) + design.bom[1:])
    assert diff_designs(design, split).bom == ()


def test_markdown_is_a_pull_request_comment(design: Design, roce_design: Design) -> None:
    text = render_diff(diff_designs(design, roce_design), "markdown")
    first = text.splitlines()[0]
    assert first == "## designer: total cost up $5,547,005.30 (+11.6%), $47,687,431.65 → $53,234,436.95"
    for section in ("### Cost over the horizon", "### System", "### Workloads",
                    "### Bill of materials (+2 added, ~7 changed, -2 removed; +$5,153,600.00)"):
        assert section in text
    assert "| fabric   | infiniband     | roce          |" in text
    assert "| **total** | **$47,687,431.65** | **$53,234,436.95** | **+$5,547,005.30** | **+11.6%** |" in text
    down = render_diff(diff_designs(roce_design, design), "markdown").splitlines()[0]
    assert down.startswith("## designer: total cost down $5,547,005.30 (-10.4%)")


def test_json_rendering(design: Design, roce_design: Design) -> None:
    doc = json.loads(render_diff(diff_designs(design, roce_design), "json"))
    assert doc["is_empty"] is False
    assert doc["cost"]["total"] == {"old_usd": 47687431.65, "new_usd": 53234436.95, "delta_usd": 5547005.3,
                                    "delta_pct": 11.632}
    assert {"field": "fabric", "old": "infiniband", "new": "roce"} in doc["system"]
    server = doc["bom"][0]
    assert server["status"] == "changed" and server["quantity_delta"] == 16 and server["delta_usd"] == 4960000.0
    assert doc["workloads"][0]["utilization"] == {"old": 0.86, "new": 0.82, "delta": -0.04}


def test_unknown_format(design: Design) -> None:
    with pytest.raises(InputError, match="unknown diff format"):
        render_diff(diff_designs(design, design), "html")


def test_the_cost_rows_add_up_to_the_total_with_the_residual_credit() -> None:
    from pathlib import Path

    golden = Path(__file__).resolve().parents[1] / "golden" / "diff-quickstart-infiniband"
    d = diff_designs(*(parse_design((golden / f"{side}.yaml").read_text()) for side in ("old", "new")))
    # The written credits: $2,120,424.00 -> $2,174,993.60 of hardware value recovered at the horizon.
    assert (d.residual.old_usd, d.residual.new_usd, d.residual.delta_usd) == (-2_120_424.0, -2_174_993.6, -54_569.6)
    assert d.money_rows() == ("capex", "opex", "residual", "cloud", "total")
    for side in ("old_usd", "new_usd"):
        parts = sum(getattr(getattr(d, name), side) for name in d.money_rows()[:-1])
        assert round(parts, 2) == getattr(d.total, side)
    table = render_diff(d, "table")
    assert "residual  -$2,120,424.00  -$2,174,993.60   -$54,569.60" in table
    doc = json.loads(render_diff(d, "json"))
    assert doc["cost"]["residual"]["delta_usd"] == -54_569.6


def test_designs_without_a_credit_show_no_residual_row(design: Design, roce_design: Design) -> None:
    d = diff_designs(design, roce_design)
    assert d.money_rows() == ("capex", "opex", "cloud", "total")
    assert "residual" not in render_diff(d, "table")
    assert json.loads(render_diff(d, "json"))["cost"]["residual"] == {
        "old_usd": 0.0, "new_usd": 0.0, "delta_usd": 0.0, "delta_pct": None}
