"""A part without a price adds nothing to its cost category, and that category's line of the cost
breakdown says how many of its lines are unpriced: never a silent $0 (designer.optimize.costing)."""

from __future__ import annotations

from pathlib import Path

from designer import planner
from designer.planner.inputs import load_inputs
from tiny_spec import TINY

# The pinned system's switch with its price withdrawn (a part not yet quoted).
UNQUOTED = """\
schema_version: 1
kind: switch
items:
  - name: nvidia-qm8700
    price: null
    source: no quote yet
    as_of: 2026-06
"""
PINNED = TINY + ("system: {server: dgx-a100-80g, nodes: 1, fabric: infiniband, topology: single_switch, "
                 "switch: nvidia-qm8700}\n")


def _capex(design) -> dict[str, tuple[float, str]]:
    return {l.name: (l.amount_usd, l.basis) for l in design.cost.lines if l.kind == "capex"}


def test_an_unpriced_part_is_named_on_its_category_line(tmp_path: Path):
    (tmp_path / "unquoted.yaml").write_text(UNQUOTED)
    spec = tmp_path / "spec.yaml"
    spec.write_text(PINNED + "catalogs: [unquoted.yaml]\n")
    design = planner.plan(*load_inputs(spec))
    unpriced = [l for l in design.bom if l.unit_price_usd is None]
    # The InfiniBand fabric's UFM appliances are unpriced too (no published price).
    assert sorted((l.sku, l.role) for l in unpriced) == [("nvidia-qm8700", "leaf"), ("nvidia-qm8700", "storage"),
                                                         ("nvidia-ufm-appliance-3.1", "fabric-manager")]
    capex = _capex(design)
    assert capex["switch"] == (0.0, "from the bill of materials; 1 unpriced line not counted")
    assert capex["storage"][1] == "from the bill of materials; 1 unpriced line not counted"
    assert capex["storage"][0] > 0  # the file system itself is priced


def test_a_fully_priced_category_says_nothing_more(tmp_path: Path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(PINNED)
    capex = _capex(planner.plan(*load_inputs(spec)))
    assert capex["switch"][0] > 0 and capex["switch"][1] == "from the bill of materials"
