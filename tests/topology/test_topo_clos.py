"""Folded Clos sizes: k-ary fat tree (Al-Fares et al., SIGCOMM 2008) and non-blocking leaf-spine
(network.md 5.1-5.2), single switch, rail-only (network.md 3.3)."""

import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from designer.errors import TopologyError
from designer.topology import FabricRequest, build_graph, capacity, check_graph, summarize
from designer.topology.schema import ROLE, ROLE_CORE, ROLE_LEAF, ROLE_NIC, ROLE_SPINE
from topo_factories import dgx_request, one_nic_request

even_k = st.integers(min_value=2, max_value=16).map(lambda h: 2 * h)


@pytest.mark.parametrize("k", range(4, 34, 2))
def test_k_ary_fat_tree_counts(k):
    """k^3/4 hosts on 5k^2/4 switches; each of the three link layers has k^3/4 links."""
    s = summarize(one_nic_request("fat_tree", k**3 // 4, k))
    assert s.tiers == 3
    assert (s.leaves, s.spines, s.cores) == (k * k // 2, k * k // 2, k * k // 4)
    assert s.switches == 5 * k * k // 4
    assert s.node_leaf_links == s.leaf_spine_links == s.spine_core_links == k**3 // 4
    assert s.pods == k
    assert s.bisection_Bps == pytest.approx(k**3 / 8 * 100e9 / 8)


@pytest.mark.parametrize("k", [4, 6, 8])
def test_k_ary_fat_tree_graph(k):
    g = build_graph(one_nic_request("fat_tree", k**3 // 4, k))
    check_graph(g)
    roles = [d[ROLE] for _, d in g.nodes(data=True)]
    assert roles.count(ROLE_NIC) == k**3 // 4
    assert roles.count(ROLE_LEAF) + roles.count(ROLE_SPINE) + roles.count(ROLE_CORE) == 5 * k * k // 4
    # Every switch uses all k ports at full size.
    for n, d in g.nodes(data=True):
        if d[ROLE] != ROLE_NIC:
            assert sum(e["links"] for _, _, e in g.edges(n, data=True)) == k


def test_k_ary_examples_from_network_md():
    """k=48 holds 27,648 hosts (HPN paper Table 1); k=64: 65,536 hosts on 5,120 switches."""
    assert summarize(one_nic_request("fat_tree", 27648, 48)).switches == 5 * 48 * 48 // 4
    s = summarize(one_nic_request("fat_tree", 65536, 64))
    assert (s.switches, s.leaves, s.spines, s.cores) == (5120, 2048, 2048, 1024)
    with pytest.raises(TopologyError, match="three tiers"):
        one_nic_request("fat_tree", 65537, 64)


@given(k=even_k, data=st.data())
@settings(max_examples=40, deadline=None)
def test_non_blocking_two_tier(k, data):
    """Up to k^2/2 endpoints: ceil(N/(k/2)) leaves, spines by the divisibility rule of 5.3. The
    last leaf takes as many uplinks as its NICs, rounded up to a multiple of the spines."""
    n = data.draw(st.integers(min_value=k // 2 + 1, max_value=k * k // 2))
    s = summarize(one_nic_request("fat_tree", n, k))
    half = k // 2
    leaves = math.ceil(n / half)
    last = n - (leaves - 1) * half
    spines = min(d for d in range(1, half + 1) if half % d == 0
                 and (leaves - 1) * (half // d) + math.ceil(last / d) <= k)
    assert s.tiers == 2
    assert (s.leaves, s.spines) == (leaves, spines)
    assert s.leaf_spine_links == (leaves - 1) * half + spines * math.ceil(last / spines)
    assert n <= s.leaf_spine_links <= leaves * half  # non-blocking, never more than full leaves
    assert spines >= math.ceil(n / k)  # every uplink has a spine port


@pytest.mark.parametrize("k", [4, 8, 40, 64])
def test_tier_boundaries(k):
    """2 tiers hold exactly k^2/2 endpoints at 1:1, 3 tiers k^3/4."""
    assert summarize(one_nic_request("fat_tree", k * k // 2, k)).tiers == 2
    assert summarize(one_nic_request("fat_tree", k * k // 2 + 1, k)).tiers == 3
    assert summarize(one_nic_request("fat_tree", k**3 // 4, k)).tiers == 3


def test_dgx_fat_tree_is_top_of_rack():
    """A fat tree puts whole servers on a leaf: 4 DGX (32 NICs) per 64-port leaf at 1:1."""
    s = summarize(dgx_request("fat_tree", 64))
    assert (s.su_nodes, s.leaves, s.leaf_uplinks) == (4, 16, 32)
    assert s.spines == 8


def test_oversubscribed_leaf_shrinks_upper_tiers():
    """3:1 at the leaf: 48 down, 16 up; spines and cores shrink accordingly (network.md 5.2)."""
    flat = summarize(one_nic_request("fat_tree", 4096, 64))
    over = summarize(one_nic_request("fat_tree", 4096, 64, oversubscription=3.0))
    assert (over.leaf_downlinks, over.leaf_uplinks) == (48, 16)
    assert over.leaf_oversubscription == 3.0
    assert over.leaves == math.ceil(4096 / 48)
    assert over.spines < flat.spines
    assert over.bisection_Bps < flat.bisection_Bps
    assert over.oversub_cross_leaf == over.oversub_cross_su == 3.0
    assert over.oversub_same_leaf == 1.0


def test_uplinks_round_up_so_ratio_never_exceeds_request():
    s = summarize(one_nic_request("fat_tree", 500, 64, oversubscription=1.5))
    assert s.leaf_oversubscription <= 1.5
    assert s.leaf_downlinks + s.leaf_uplinks <= 64


def test_single_switch():
    s = summarize(dgx_request("single_switch", 8))
    assert (s.tiers, s.leaves, s.spines, s.switches) == (1, 1, 0, 1)
    assert s.hops_max == 1
    assert s.bisection_Bps == pytest.approx(4 * 8 * 50e9)
    with pytest.raises(TopologyError, match="one switch has 64"):
        dgx_request("single_switch", 9)


def test_rail_only_one_switch_per_rail_when_it_fits():
    """network.md 3.3: a rail of K <= k servers is one switch; 8 rails, 8 switches, no spine."""
    s = summarize(dgx_request("rail_only", 64))
    assert (s.tiers, s.leaves, s.spines) == (1, 8, 0)
    assert s.cross_rail_via_nvlink
    assert s.hops_cross_rail_su == 1


def test_rail_only_two_tier_per_rail():
    s = summarize(dgx_request("rail_only", 256))
    # 8 SUs of 32: 8 leaves per rail, 32 uplinks each -> 4 spines per rail (8*32/4 = 64 ports).
    assert (s.tiers, s.leaves, s.spines) == (2, 64, 32)
    assert s.hops_cross_su == 3


@pytest.mark.parametrize("nodes", [32, 64, 512, 1024, 2048])
def test_rail_only_needs_fewer_switches_than_rail_optimized(nodes):
    """Rail-only drops the spine layer that joins rails (Wang et al., arXiv:2307.12169): a rail of
    up to k servers is one switch, and a rail stays in two tiers where rail-optimized needs three."""
    only = summarize(dgx_request("rail_only", nodes))
    opt = summarize(dgx_request("rail_optimized", nodes))
    assert only.switches < opt.switches
    assert only.tiers < opt.tiers
    assert only.bisection_Bps == pytest.approx(opt.bisection_Bps)
    assert not opt.cross_rail_via_nvlink


@given(kind=st.sampled_from(["single_switch", "fat_tree", "rail_optimized", "rail_only"]),
       k=st.sampled_from([4, 6, 8, 12]), per_cage=st.sampled_from([1, 2]), rails=st.sampled_from([1, 2, 4]),
       ratio=st.sampled_from([1.0, 2.0, 3.0]))
@settings(max_examples=80, deadline=None)
def test_capacity_is_the_largest_buildable_size(kind, k, per_cage, rails, ratio):
    """capacity() agrees with the sizing: its limits build with that many tiers, one more does not."""
    try:
        request = FabricRequest(kind, 1, rails, rails, 50e9, k, 50e9, ports_per_cage=per_cage,
                                oversubscription=ratio)
    except TopologyError:
        return  # a leaf of this switch cannot take one server at this ratio

    def tiers(nodes):
        try:
            return summarize(dataclasses.replace(request, nodes=nodes)).tiers
        except TopologyError:
            return None

    limits = capacity(request)
    assert tiers(limits.max_nodes) is not None and tiers(limits.max_nodes + 1) is None
    assert tiers(limits.max_nodes_2tier) <= 2
    assert tiers(limits.max_nodes_2tier + 1) in (None, 3)
    if limits.max_nodes_1tier:
        assert tiers(limits.max_nodes_1tier) == 1
        assert tiers(limits.max_nodes_1tier + 1) != 1
    up = limits.leaf_uplinks
    assert limits.spine_choices == tuple(d for d in range(1, up + 1) if up % d == 0)


def test_superpod_capacity():
    """QM9700 at 1:1: 8 SU in two tiers (2,048 GPUs), 64 pods of 4 SU in three (65,536 GPUs)."""
    limits = capacity(dgx_request("rail_optimized", 1))
    assert (limits.su_nodes, limits.leaf_downlinks, limits.leaf_uplinks) == (32, 32, 32)
    assert (limits.max_nodes_1tier, limits.max_nodes_2tier, limits.max_nodes) == (0, 256, 8192)
    assert capacity(dgx_request("rail_only", 1)).max_nodes_1tier == 64
