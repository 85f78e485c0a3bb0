"""Property over the built-in catalogs and generated systems (every fabric, topology and server
the optimizer enumerates, at any size it can build, with its storage, in-band and out-of-band
networks): every optic of the priced bill of materials fits the cage it plugs into, and every
link's two ends agree in protocol and lanes x lane rate."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from designer.catalog import load_builtin
from designer.optimize import pricing
from designer.planner.candidates import enumerate_candidates
from designer.spec.load import parse_spec
from designer.spec.yamlio import load_yaml_text
from tiny_spec import EVERY_SYSTEM
from designer.topology import summarize
from designer.design.bom import BomLine
from designer.topology import networks as nw
from designer.topology.bomcheck import check_bom
from designer.topology.network_bom import network_bom
from designer.topology.materials import tier_links
from designer.topology.ports import fits

CAT = load_builtin()
FACILITY = CAT.facilities["default"]
CANDIDATES = enumerate_candidates(parse_spec(load_yaml_text(EVERY_SYSTEM)), CAT)[0]
SHAPES = {c.key: pricing.fabric_shape(c, CAT, FACILITY) for c in CANDIDATES}


def test_the_generated_systems_cover_every_fabric_topology_and_server():
    assert {c.fabric for c in CANDIDATES} == {"ethernet", "roce", "infiniband"}
    assert {c.topology for c in CANDIDATES} == {"single_switch", "fat_tree", "rail_optimized", "rail_only"}
    priced = {s.name for s in CAT.servers.values() if s.price_usd is not None}
    assert {c.server for c in CANDIDATES} == priced


@st.composite
def systems(draw):
    cand = draw(st.sampled_from(CANDIDATES))
    nodes = draw(st.integers(1, min(SHAPES[cand.key].max_nodes, 600)))
    return cand, nodes, draw(st.integers(1, 16)), draw(st.sampled_from(sorted(CAT.storage)))


@settings(max_examples=150, deadline=None)
@given(systems())
def test_every_optic_fits_its_cage_and_every_link_agrees(system):
    cand, nodes, units, storage = system
    lines, summary = pricing.onprem_bom(cand, CAT, FACILITY, nodes, 0.05)
    # The storage, in-band and out-of-band networks of the same system, every one switched on.
    parts = nw.network_parts(CAT.servers[cand.server], CAT, CAT.storage[storage], nw.Networks())
    sizes = nw.size_networks(parts, nodes, units, summary.leaves + summary.spines + summary.cores)
    net = network_bom(parts, sizes, cand.switch)
    assert {l.role for l in net} == {"storage", "inband", "oob"}
    lines = lines + net + (BomLine("storage", storage, "", "storage", float(units), None, 0.0, ""),)
    found = check_bom(lines, CAT)
    assert found.mismatches == (), (cand.key, nodes, found.mismatches)
    assert found.unstated == 0
    if summary.tiers == 0:
        return
    switch = CAT.switches[cand.switch]
    for tier, lp in tier_links(summary, switch, CAT, pricing.node_port(cand, CAT)).items():
        assert lp.a.protocol is lp.b.protocol is lp.protocol, (cand.key, tier)
        assert lp.a.rate_Bps == lp.b.rate_Bps and abs(lp.lanes * lp.lane_Bps - lp.a.rate_Bps) < 1.0
        for optic, port in ((lp.optic_a, lp.a), (lp.optic_b, lp.b)):
            if optic is not None:
                assert fits(optic.connector, port.cage) and port.protocol in optic.protocols
                assert optic.lane_Bps <= port.lane_Bps + 1.0
        if lp.optic_a is None:
            assert fits(lp.cable.connector, lp.a.cage) or fits(lp.cable.far, lp.a.cage)
            assert lp.protocol in lp.cable.protocols
