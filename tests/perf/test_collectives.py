"""Closed forms of the collective model and the two-tier algorithm choice."""

from __future__ import annotations

import doctest
import math
from dataclasses import replace

import pytest

from designer.perf import Cluster, resolve_software
from designer.perf import collectives as coll
from designer.perf import flops, network, overlap, pipeline, transport
from designer.spec import load as spec_load
from designer.perf.collectives import Collective

from .factories import A100, H100, HDR, NDR

REL = 1e-12


@pytest.mark.parametrize("module", [coll, network, flops, overlap, pipeline, transport, spec_load])
def test_doctests_pass(module):
    result = doctest.testmod(module)
    assert result.attempted > 0
    assert result.failed == 0


def test_ring_all_reduce_closed_form():
    # 2(p-1)/p n/B + 2(p-1) alpha with p=4, n=1 GB, B=100 GB/s, alpha=5 us
    t = coll.ring_all_reduce_s(1e9, 4, 100e9, 5e-6)
    assert t == pytest.approx(2 * 3 / 4 * 0.01 + 2 * 3 * 5e-6, rel=REL)


def test_ring_all_reduce_is_reduce_scatter_plus_all_gather():
    n, p, bw, a = 3e8, 16, 40e9, 2e-6
    ar = coll.ring_all_reduce_s(n, p, bw, a)
    assert ar == pytest.approx(coll.ring_reduce_scatter_s(n, p, bw, a) + coll.ring_all_gather_s(n, p, bw, a))


def test_tree_latency_is_logarithmic():
    assert coll.tree_all_reduce_s(0.0, 1024, 1e9, 1e-6) == pytest.approx(2 * 10 * 1e-6)
    assert coll.tree_all_reduce_s(0.0, 1000, 1e9, 1e-6) == pytest.approx(2 * 10 * 1e-6)


def test_in_switch_reduction_halves_bandwidth_term():
    n, bw = 1e9, 50e9
    ring_large_p = coll.ring_all_reduce_s(n, 4096, bw, 0.0)
    assert coll.in_switch_all_reduce_s(n, bw, 0.0) == pytest.approx(ring_large_p / 2, rel=1e-3)


def test_all_to_all_and_p2p_closed_forms():
    assert coll.pairwise_all_to_all_s(8e9, 8, 1e9, 1e-6) == pytest.approx(7.0 + 7e-6)
    assert coll.p2p_s(2e6, 1e9, 3e-6) == pytest.approx(2e-3 + 3e-6)
    assert coll.ring_all_reduce_s(1e9, 1, 1e9, 1.0) == 0.0


def test_bus_bandwidth_definitions():
    # nccl-tests doc/PERFORMANCE.md: all-reduce busbw = algbw 2(n-1)/n; all-gather (n-1)/n.
    assert coll.bus_bandwidth(Collective.ALL_REDUCE, 8e9, 8, 1.0) == pytest.approx(14e9)
    assert coll.bus_bandwidth(Collective.ALL_GATHER, 8e9, 8, 1.0) == pytest.approx(7e9)
    assert coll.bus_bandwidth(Collective.P2P, 8e9, 2, 1.0) == pytest.approx(8e9)


def test_ring_bus_bandwidth_equals_link_rate_without_latency():
    t = coll.ring_all_reduce_s(1e9, 8, 123e9, 0.0)
    assert coll.bus_bandwidth(Collective.ALL_REDUCE, 1e9, 8, t) == pytest.approx(123e9)


def _links(gpu=H100, view=NDR, software=None, **changes):
    return network.links_for(Cluster(gpu, replace(view, **changes)), software)


def test_group_layout_places_strided_groups():
    assert network.group_layout(8, 1, 8) == network.Group(8, 8, 1)
    assert network.group_layout(64, 8, 8) == network.Group(64, 1, 64)
    assert network.group_layout(16, 4, 8) == network.Group(16, 2, 8)
    assert network.group_layout(1, 1, 8) == network.Group(1, 1, 1)


def test_nvls_used_inside_an_h100_node_but_not_on_a100():
    n = 2**30
    group = network.group_layout(8, 1, 8)
    h100 = network.all_reduce_s(n, group, _links())
    h100_ring = network.all_reduce_s(n, group, _links(scaleup_reduction_efficiency=0.0))
    assert h100 < h100_ring
    a100 = network.all_reduce_s(n, group, _links(A100, HDR))
    # NCCL's latency: base 8.4 us and 14 NVLink steps of 3.4 us
    assert a100 == pytest.approx(coll.ring_all_reduce_s(n, 8, 300e9 * 0.75, 3.4e-6) + 8.4e-6)


def test_cross_node_all_reduce_is_bounded_by_the_nics():
    # 4 nodes x 8 GPUs: the flat ring moves 2(p-1)/p n through each node's 8 NICs, so the
    # bus bandwidth is min(NVLink ring, 8 x NIC) = 8 x 25 GB/s x 0.94 with 200G NICs.
    n, group = 2**34, network.group_layout(32, 1, 8)
    t = network.all_reduce_s(n, group, _links(inter_Bps_per_gpu=25e9))
    busbw = coll.bus_bandwidth(Collective.ALL_REDUCE, n, 32, t)
    assert busbw == pytest.approx(8 * 25e9 * 0.94, rel=0.02)
    # With 400G NICs the NVLink ring (0.815 x 450 GB/s) is the tighter bound.
    t = network.all_reduce_s(n, group, _links())
    busbw = coll.bus_bandwidth(Collective.ALL_REDUCE, n, 32, t)
    assert busbw == pytest.approx(min(0.815 * 450e9, 8 * 50e9 * 0.94), rel=0.02)


def test_in_network_reduction_speeds_up_cross_node_all_reduce():
    n, group = 2**32, network.group_layout(1024, 1, 8)
    plain = network.all_reduce_s(n, group, _links())
    collnet = resolve_software(in_network_reduction=True)
    sharp = network.all_reduce_s(n, group, _links(in_network_reduction=True, software=collnet))
    assert sharp < 0.8 * plain
    # NCCL's default (NCCL_COLLNET_ENABLE=0) leaves the switches' reduction unused
    assert network.all_reduce_s(n, group, _links(in_network_reduction=True)) == plain
    assert network.all_reduce_s(n, group, _links(software=collnet)) == plain  # a fabric that cannot


def test_oversubscription_slows_cross_leaf_traffic_only():
    n, group = 2**30, network.group_layout(64, 8, 8)
    base = network.all_reduce_s(n, group, _links(), cross_leaf=True)
    tapered = _links(oversubscription=3.0)
    assert network.all_reduce_s(n, group, tapered, cross_leaf=True) > 2.5 * base
    assert network.all_reduce_s(n, group, tapered) == pytest.approx(network.all_reduce_s(n, group, _links()))


def test_all_to_all_bounds_injection_bisection_and_rail_only():
    n, group = 2**30, network.group_layout(64, 1, 8)  # 8 nodes
    links = _links()
    t = network.all_to_all_s(n, group, links)
    off = n * 56 / 64
    assert t >= off / (50e9 * 0.94)  # the NIC carries the off-node share
    thin = _links(bisection_Bps_per_gpu=2e9)  # a heavily tapered fabric
    assert network.all_to_all_s(n, group, thin) == pytest.approx(
        off / (4 * 2e9 * 0.94) + links.base_s + 7 * links.su_alpha_s + 56 * links.net_any_alpha_s)
    rail_only = _links(rail_only=True)
    assert network.all_to_all_s(n, group, rail_only) > t


def test_tp_group_across_nodes_is_slower_than_inside():
    msg = 50e6
    inside = network.all_reduce_s(msg, network.group_layout(8, 1, 8), _links())
    across = network.all_reduce_s(msg, network.group_layout(16, 1, 8), _links())
    assert across > 1.5 * inside


def test_ring_latency_follows_nccls_tuner_on_large_groups():
    """NCCL's own model (src/graph/tuning.cc, Simple): a ring all-reduce over 1,024 ranks on 128
    nodes pays 8.4 + 1,792 x 3.4 + 254 x 14 us ~ 9.7 ms of latency before the fabric's; a tree
    over 128 nodes 8.4 + 2 (7 x 4.0 + 7 x 14) ~ 0.26 ms, so a small all-reduce takes the tree."""
    links = _links(host_latency_s=0.0, switch_latency_s=0.0)
    assert network.ring_latency_s(1024, 128, links, 2) == pytest.approx(9657e-6, rel=1e-3)
    small = network.all_reduce_s(1e3, network.group_layout(1024, 1, 8), links)
    assert small == pytest.approx(260.4e-6, rel=0.02)
    # one rank per node: all-gather may use PAT, logarithmic in nodes plus 2.8 us per rank
    ag = network.all_gather_s(1e3, network.group_layout(1024, 8, 8), links)
    assert ag == pytest.approx(8e-6 + 10 * 14e-6 / 3.5 + 2.8e-6 * 1024, rel=0.01)


def test_mesh_partial_group_uses_only_direct_links():
    mi300x = replace(H100, name="mi300x", scaleup_Bps=448e9, scaleup_kind="infinity-fabric")
    links = _links(mi300x)
    assert links.su_Bps(2) == pytest.approx(links.su_Bps(8) / 7)
    assert math.isclose(links.su_Bps(8), 448e9 * 0.70)
