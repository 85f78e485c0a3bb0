"""Built graphs: invariants, determinism, and the closed form against measurement on every small
fabric Hypothesis generates (counts, media, racks, hops, bisection by max-flow, oversubscription)."""

import networkx as nx
import pytest
from hypothesis import HealthCheck, event, given, reject, settings
from hypothesis import strategies as st

from designer.errors import TopologyError
from designer.topology import (
    FabricRequest, TopologyKind, build_graph, check_graph, graph_problems, summarize, summarize_graph,
)
from designer.topology.schema import LINKS, RAIL, ROLE, ROLE_LEAF, ROLE_NIC, ROLE_SPINE, SWITCH_ROLES
from topo_factories import dgx_request, one_nic_request


@st.composite
def small_requests(draw, kinds=tuple(TopologyKind)):
    kind = draw(st.sampled_from(kinds))
    k = draw(st.sampled_from([4, 6, 8, 12, 16]))
    per_cage = draw(st.sampled_from([1, 2]))
    rails = draw(st.sampled_from([1, 2, 4]))
    cages = draw(st.sampled_from([c for c in (1, 2, 4) if rails % c == 0]))
    try:
        return FabricRequest(
            topology=kind,
            nodes=draw(st.integers(min_value=1, max_value=48)),
            gpus_per_node=draw(st.sampled_from([rails, 8])),
            nics_per_node=rails,
            nic_rate_Bps=50e9,
            switch_ports=k,
            switch_port_rate_Bps=50e9,
            ports_per_cage=per_cage,
            node_cages=cages,
            oversubscription=draw(st.sampled_from([1.0, 1.5, 2.0, 3.0])),
            su_nodes=draw(st.one_of(st.none(), st.integers(min_value=1, max_value=4))),
            servers_per_rack=draw(st.integers(min_value=1, max_value=6)),
            reserved_leaf_ports=draw(st.sampled_from([0, 0, 1, 3])),
            rack_units=draw(st.sampled_from([4, 42])),
        )
    except TopologyError:
        reject()


@given(small_requests())
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
def test_closed_form_equals_measured_graph(request):
    event(f"{request.topology.value}, {summarize(request).tiers} tiers")
    graph = build_graph(request)
    assert graph_problems(graph) == []
    assert summarize_graph(graph) == summarize(request)


@given(small_requests(kinds=(TopologyKind.FAT_TREE, TopologyKind.RAIL_OPTIMIZED, TopologyKind.RAIL_ONLY)))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
def test_ports_and_attachment(request):
    """Every NIC hangs off exactly one switch; no switch uses more ports than it has."""
    g = build_graph(request)
    nics = [n for n, d in g.nodes(data=True) if d[ROLE] == ROLE_NIC]
    assert len(nics) == request.nodes * request.nics_per_node
    for n in nics:
        assert g.degree(n) == 1
        (sw,) = g.neighbors(n)
        assert g.nodes[sw][ROLE] in SWITCH_ROLES
    for n, d in g.nodes(data=True):
        if d[ROLE] in SWITCH_ROLES:
            used = sum(e[LINKS] for _, _, e in g.edges(n, data=True)) + d["reserved_ports"]
            assert used <= request.switch_ports


@given(ratio=st.sampled_from([1, 2, 3, 4]), m=st.integers(min_value=1, max_value=4),
       per_cage=st.sampled_from([1, 2]), kind=st.sampled_from(["fat_tree", "rail_optimized"]),
       extra=st.integers(min_value=0, max_value=20))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
def test_measured_oversubscription_equals_requested(ratio, m, per_cage, kind, extra):
    """With k = (r + 1) * m ports (whole cages), a full leaf has r * m down and m up; one more
    server than a leaf holds makes the fabric two-tier."""
    m *= per_cage
    k = (ratio + 1) * m
    down = ratio * m
    try:
        request = one_nic_request(kind, down + 1 + extra, k, oversubscription=float(ratio),
                                  ports_per_cage=per_cage)
    except TopologyError:
        reject()  # beyond three tiers of such small switches
    measured = summarize_graph(build_graph(request))
    assert measured.leaf_oversubscription == ratio
    assert measured.oversub_cross_leaf == ratio
    assert summarize(request).leaf_oversubscription == ratio


def test_every_nic_connected_and_rails_kept_apart():
    opt = build_graph(dgx_request("rail_optimized", 40))
    assert nx.is_connected(opt)
    only = build_graph(dgx_request("rail_only", 100))
    assert nx.number_connected_components(only) == 8
    for comp in nx.connected_components(only):
        assert len({only.nodes[n][RAIL] for n in comp if only.nodes[n][ROLE] == ROLE_NIC}) == 1


def test_rail_optimized_nic_i_on_leaf_of_rail_i():
    g = build_graph(dgx_request("rail_optimized", 70))
    for n, d in g.nodes(data=True):
        if d[ROLE] == ROLE_NIC:
            (leaf,) = g.neighbors(n)
            assert g.nodes[leaf][RAIL] == d[RAIL]
            assert g.nodes[leaf]["su"] == d["node"] // 32


def test_names_are_deterministic_and_sortable():
    a, b = build_graph(dgx_request("rail_optimized", 600)), build_graph(dgx_request("rail_optimized", 600))
    assert list(a.nodes) == list(b.nodes)
    assert list(a.edges(data=True)) == list(b.edges(data=True))
    assert "node-0012-nic3" in a and "leaf-su00-r3" in a and "spine-p00-07" in a and "core-003" in a
    spines = [n for n, d in a.nodes(data=True) if d[ROLE] == ROLE_SPINE]
    assert spines == sorted(spines)


def test_check_graph_catches_broken_fabrics():
    g = build_graph(dgx_request("rail_optimized", 64))
    check_graph(g)
    cut = g.copy()
    cut.remove_edge("node-0003-nic2", "leaf-su00-r2")
    with pytest.raises(TopologyError, match="node-0003-nic2"):
        check_graph(cut)
    crowded = g.copy()
    crowded.edges["leaf-su00-r0", "spine-00"][LINKS] += 40
    with pytest.raises(TopologyError, match="leaf-su00-r0: uses"):
        check_graph(crowded)
    joined = build_graph(dgx_request("rail_only", 100))
    joined.add_edge("leaf-su00-r0", "leaf-su00-r1", **joined.edges["node-0000-nic0", "leaf-su00-r0"])
    assert any("joined" in p for p in graph_problems(joined))


def test_cloud_graph_is_one_provider_node():
    request = FabricRequest("cloud", 4, 8, 8, 50e9, 0, 50e9)
    g = build_graph(request)
    check_graph(g)
    assert g.number_of_nodes() == 4 * 8 + 1
    s = summarize(request)
    assert (s.tiers, s.switches, s.cables, s.switch_transceivers) == (0, 0, 0, 0)
    assert s.hops_max == 1
    assert summarize_graph(g) == s


def test_leaves_of_one_role_have_equal_uplinks():
    g = build_graph(dgx_request("fat_tree", 50, oversubscription=2.0))
    ups = {sum(e[LINKS] for _, o, e in g.edges(n, data=True) if g.nodes[o][ROLE] == ROLE_SPINE)
           for n, d in g.nodes(data=True) if d[ROLE] == ROLE_LEAF}
    assert len(ups) == 1


@pytest.mark.parametrize("request_", [
    one_nic_request("fat_tree", 13, 4),  # 7 leaves in pods of 2: last pod partial
    one_nic_request("fat_tree", 11, 4, reserved_leaf_ports=1),
    one_nic_request("rail_only", 20, 4, oversubscription=3.0),
    FabricRequest("rail_optimized", 21, 2, 2, 50e9, 8, 50e9, su_nodes=3),  # 3 SU per pod of 6 leaves
    FabricRequest("rail_optimized", 45, 4, 2, 50e9, 8, 50e9, ports_per_cage=2, oversubscription=3.0,
                  reserved_leaf_ports=2, servers_per_rack=1),
], ids=["fat-partial-pod", "fat-reserved", "rail-only-3tier", "rail-3tier", "rail-3tier-oversub"])
def test_three_tier_partial_pods_match_measurement(request_):
    s = summarize(request_)
    assert s.tiers == 3 and s.pods >= 2
    g = build_graph(request_)
    check_graph(g)
    assert summarize_graph(g) == s


def test_rail_only_rail_switches_share_reserved_ports():
    """Rail switches that fit their servers take the reserved ports across all rails."""
    request = FabricRequest("rail_only", 4, 8, 8, 50e9, 8, 50e9, reserved_leaf_ports=30)
    s = summarize(request)
    assert (s.tiers, s.leaves, s.reserved_links) == (1, 8, 30)
    g = build_graph(request)
    check_graph(g)
    assert summarize_graph(g) == s
