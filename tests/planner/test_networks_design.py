"""Designs carry the storage, in-band and out-of-band networks: RA-11333's 4-SU pod, and each
network turned off takes exactly its section, its cost and its power with it."""

from __future__ import annotations

import json

import pytest

from designer import solve
from designer.design import sections
from designer.report import render_bom

# The RA-11333 4-SU pod: 127 DGX H100 (one SU node less each for UFM), and the file system of
# RA-11333 Table 8's 48 2x200G storage cables: 96 appliance ports, 12 AI400X2T (80 GB/s each).
POD = """\
version: 1
name: ra-11333-4su
horizon: 3 years
workloads:
  - name: llama3-70b
    model: {preset: llama3-70b}
    tokens: 1T
    global_batch: 1016
    precision: bf16
    parallelism: {tp: 8, pp: 1, dp: auto, microbatch: 1}
    gpus: 1016
constraints:
  deployments: [on_prem]
storage: {system: ddn-ai400x2t, read_bandwidth: 960 GB/s}
system:
  server: dgx-h100
  switch: nvidia-qm9700
  nodes: 127
  fabric: infiniband
  topology: rail_optimized
  oversubscription: 1
"""


def _design(tmp_path, networks: str = ""):
    path = tmp_path / "pod.yaml"
    path.write_text(POD + networks)
    return solve(str(path))


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    return _design(tmp_path_factory.mktemp("pod"))


def _switches(design):
    return {l.role: int(l.quantity) for l in design.bom if l.category == "switch"}


def test_the_pod_has_the_ra_switch_counts(full):
    """RA-11333 Table 7: 32 leaf + 16 spine compute, 16 storage, 8 in-band, 8 out-of-band switches."""
    assert _switches(full) == {"leaf": 32, "spine": 16, "storage": 16, "inband": 8, "oob": 8}
    assert [l.quantity for l in full.bom if l.category == "storage"] == [12]
    listed = [name for name, _ in sections.group_by_section(full.bom)]
    assert [s for s in listed if s in ("storage", "inband", "oob")] == ["storage", "inband", "oob"]
    doc = json.loads(render_bom(full, "json"))
    assert set(doc["totals"]["by_network"]) == {"storage", "inband", "oob"}
    assert {i["role"] for i in doc["items"]} >= {"storage", "inband", "oob"}
    # The cost lines: the storage fabric with the file system, the management networks apart.
    mgmt = sum(l.total_usd for l in full.bom if l.role in ("inband", "oob"))
    assert full.cost.capex_by_category["management"] == pytest.approx(mgmt, abs=0.01)
    table = render_bom(full, "markdown")
    for heading in ("storage system and fabric subtotal", "in-band management subtotal",
                    "out-of-band management subtotal"):
        assert heading in table


def test_the_pod_has_the_ra_parts(full):
    """RA-11333 Table 8 at the design: 254 DGX QSFP112 storage optics (and one at each of the 96
    file-system ports), 48 NDR 2x200G splitters, 254 + 24 in-band AOC, 6 copper peer links, 16
    out-of-band 100G uplinks, and a Cat6 cord at each of the 127 BMCs and 72 switches."""
    parts: dict[tuple[str, str], int] = {}
    for l in full.bom:  # lines of one part differ by what they plug into: summed per part
        if l.category in ("transceiver", "cable") and l.role in ("storage", "inband", "oob"):
            parts[(l.role, l.sku)] = parts.get((l.role, l.sku), 0) + int(l.quantity)
    assert parts[("storage", "qsfp112-400g-sr4")] == 254 + 96
    assert parts[("storage", "mpo-splitter-mm-2x200g")] == 48
    assert parts[("inband", "aoc-100g-qsfp28")] == 254 + 24 and parts[("inband", "dac-100g-qsfp28")] == 6
    assert parts[("oob", "aoc-100g-qsfp28")] == 16 and parts[("oob", "cat6-1g-rj45")] == 127 + 48 + 16 + 8


def test_networks_false_takes_all_three(tmp_path, full):
    none = _design(tmp_path, "networks: false\n")
    assert _switches(none) == {"leaf": 32, "spine": 16}
    assert not [l for l in none.bom if l.role in ("inband", "oob") or (l.role == "storage" and l.category != "storage")]
    assert "management" not in none.cost.capex_by_category
    assert none.cost.capex_usd < full.cost.capex_usd


@pytest.mark.parametrize("flag", ["storage", "inband", "oob"])
def test_turning_a_network_off_takes_its_section_and_cost(tmp_path, full, flag):
    cut = _design(tmp_path, f"networks: {{{flag}: false}}\n")
    assert flag not in _switches(cut)
    assert not [l for l in cut.bom if l.role == flag and l.category != "storage"]
    key = lambda l: (l.category, l.sku, l.role, l.plugs_into, l.ends)  # noqa: E731
    before = {key(l): l for l in full.bom if l.category != "service"}
    after = {key(l): l for l in cut.bom if l.category != "service"}
    gone = [before[k] for k in before if k not in after]
    changed = [(before[k], after[k]) for k in after if before[k].quantity != after[k].quantity]
    assert flag in {l.role for l in gone}
    # Only the out-of-band network follows: fewer switches to manage, and without in-band no uplinks.
    assert all(l.role == flag or (flag == "inband" and l.role == "oob" and l.category == "cable") for l in gone)
    assert all(old.role == "oob" for old, _ in changed), changed
    assert set(after) <= set(before)
    removed_usd = sum(l.total_usd for l in gone) + sum(o.total_usd - n.total_usd for o, n in changed)
    removed_w = sum(l.power_w for l in gone) + sum(o.power_w - n.power_w for o, n in changed)
    assert full.system.power_kw - cut.system.power_kw == pytest.approx(removed_w / 1e3)
    inst = full.facility.installation_fraction
    spares = {k: v for k, v in full.facility.spares.items()}
    with_services = sum(l.total_usd * (1 + inst + spares.get(l.category, 0.0)) for l in gone) + sum(
        (o.total_usd - n.total_usd) * (1 + inst + spares.get(o.category, 0.0)) for o, n in changed)
    assert full.cost.capex_usd - cut.cost.capex_usd == pytest.approx(with_services, rel=1e-9)
    assert full.cost.total_usd - cut.cost.total_usd > removed_usd  # and its support, power and space


def test_cloud_designs_have_no_networks(tmp_path):
    path = tmp_path / "cloud.yaml"
    path.write_text(POD.replace("deployments: [on_prem]", "deployments: [cloud]").split("\nsystem:")[0] + "\n")
    design = solve(str(path))
    assert not [l for l in design.bom if l.role in ("storage", "inband", "oob")]
