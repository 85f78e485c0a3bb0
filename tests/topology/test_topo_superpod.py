"""NVIDIA DGX SuperPOD H100 compute fabric (RA-11333-001 V11), Tables 3, 4 and 8 (network.md 1.1)."""

import pytest

from designer.topology import build_graph, check_graph, request_for, summarize, summarize_graph
from designer.topology.schema import MediaClass
from topo_factories import cx7, dgx_h100, dgx_request, qm9700

# Table 4: SU, nodes (32 per SU, one DGX removed to make room for the UFM ports), leaf, spine,
# compute+UFM cables, spine-leaf cables.
TABLE_4 = [
    (1, 31, 8, 4, 252, 256),
    (2, 63, 16, 8, 508, 512),
    (3, 95, 24, 16, 764, 768),
    (4, 127, 32, 16, 1020, 1024),
]

# Table 3 (and the B200 RA's 2 SU row): SU, leaf, spine, core, node-leaf, leaf-spine, spine-core.
TABLE_3 = [
    (2, 16, 8, 0, 512, 512, 0),
    (4, 32, 16, 0, 1024, 1024, 0),
    (8, 64, 32, 0, 2048, 2048, 0),
    (16, 128, 128, 64, 4096, 4096, 4096),
    (32, 256, 256, 128, 8192, 8192, 8192),
    (64, 512, 512, 256, 16384, 16384, 16384),
]


def superpod(nodes: int, **kw):
    """The SuperPOD request built from catalog entries, UFM ports reserved as in Table 4."""
    return request_for(dgx_h100(), cx7(), qm9700(), "rail_optimized", nodes, reserved_leaf_ports=4, **kw)


@pytest.mark.parametrize("su, nodes, leaf, spine, compute_cables, spine_cables", TABLE_4)
def test_table_4_from_request(su, nodes, leaf, spine, compute_cables, spine_cables):
    s = summarize(superpod(nodes))
    assert s.tiers == 2
    assert s.su_nodes == 32 and s.sus == su
    assert (s.leaves, s.spines, s.cores) == (leaf, spine, 0)
    assert s.node_leaf_links + s.reserved_links == compute_cables == 8 * nodes + 4
    assert s.leaf_spine_links == spine_cables
    assert s.gpus == 8 * nodes


def test_three_su_uses_16_spines_not_12():
    """network.md 5.3: 12 does not divide a leaf's 32 uplinks, so 3 SU take 16 spines."""
    s = summarize(superpod(95))
    assert s.spines == 16
    assert s.leaf_spine_links % s.spines == 0
    assert 32 % s.spines == 0


def test_table_8_transceivers_at_4_su():
    """1536 switch OSFP transceivers = 48 switches x 32 cages; 508 = 127 DGX x 4 OSFP; all multimode."""
    s = summarize(superpod(127))
    assert s.switches == 48
    assert s.switch_transceivers == 1536
    assert s.switch_transceivers_by_media == ((MediaClass.MULTIMODE, 1536),)
    assert s.node_transceivers == 508
    assert s.node_media is MediaClass.MULTIMODE
    # 2040 NDR cables DGX->leaf and leaf->spine, plus the UFM cables.
    assert s.node_leaf_links + s.leaf_spine_links == 2040
    assert s.cables_by_media == ((MediaClass.MULTIMODE, 2040 + 4),)


@pytest.mark.parametrize("su, leaf, spine, core, node_leaf, leaf_spine, spine_core", TABLE_3)
def test_table_3_rows(su, leaf, spine, core, node_leaf, leaf_spine, spine_core):
    s = summarize(dgx_request("rail_optimized", 32 * su))
    assert s.tiers == (3 if core else 2)
    assert (s.leaves, s.spines, s.cores) == (leaf, spine, core)
    assert (s.node_leaf_links, s.leaf_spine_links, s.spine_core_links) == (node_leaf, leaf_spine, spine_core)
    # Non-blocking: every tier carries one link per GPU.
    assert s.leaf_oversubscription == 1.0
    assert s.bisection_Bps == pytest.approx(s.gpus / 2 * 400e9 / 8)


@pytest.mark.parametrize("su", [1, 4])
def test_built_graph_matches_table_4(su):
    g = build_graph(superpod(32 * su - 1))
    check_graph(g)
    m = summarize_graph(g)
    assert m == summarize(superpod(32 * su - 1))


def test_superpod_hops_and_classes():
    """One hop on a rail inside an SU; rails and SUs meet at the spines (three switches)."""
    s = summarize(superpod(127))
    assert (s.hops_same_rail_su, s.hops_cross_rail_su, s.hops_cross_su) == (1, 3, 3)
    big = summarize(dgx_request("rail_optimized", 512))
    assert (big.hops_same_rail_su, big.hops_cross_rail_su, big.hops_cross_su, big.hops_max) == (1, 3, 5, 5)
    assert big.pods == 4


def test_injection_bandwidth_is_one_ndr_port_per_gpu():
    assert summarize(superpod(127)).injection_Bps == pytest.approx(50e9)


# A partial scalable unit (network.md 5.3): its leaves take as many uplinks as NIC downlinks
# (non-blocking), rounded up to a multiple of the spines, which are the fewest whose ports take
# every uplink with each leaf's uplinks split evenly over them.
PARTIAL = [
    # nodes, leaf, spine, node links, leaf-spine links
    (8, 8, 1, 64, 64),  # 8 leaves x 8 uplinks fit one 64-port spine
    (16, 8, 2, 128, 128),  # was 4 spines and 256 uplinks
    (20, 8, 4, 160, 160),  # 20 uplinks a leaf: 4 spines (2 would need 80 ports each)
    (34, 16, 8, 272, 320),  # 256 + 8 leaves x 8 (2 NICs rounded up to the 8 spines); was 512
    (40, 16, 8, 320, 320),
]


@pytest.mark.parametrize("nodes, leaf, spine, node_links, uplinks", PARTIAL)
def test_a_partial_su_gets_only_the_uplinks_and_spines_it_needs(nodes, leaf, spine, node_links, uplinks):
    s = summarize(dgx_request("rail_optimized", nodes))
    assert (s.leaves, s.spines, s.node_leaf_links, s.leaf_spine_links) == (leaf, spine, node_links, uplinks)
    assert s.leaf_oversubscription <= 1.0  # non-blocking still
    assert s.bisection_Bps == pytest.approx(s.gpus / 2 * 400e9 / 8)
    g = build_graph(dgx_request("rail_optimized", nodes))
    check_graph(g)
    assert summarize_graph(g) == s
