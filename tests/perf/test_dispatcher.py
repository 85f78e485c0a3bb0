"""MoE token dispatch: NCCL all-to-all against DeepEP (designer.perf.network.dispatch_all_to_all_s).

NCCL's all-to-all puts every routed copy of a token on the wire: with EP 64 over 8 DGX nodes and
8 experts a token, 8 x 56/64 = 7 copies leave the node. DeepEP (DeepSeek-V3 report sec. 3.2.2;
deepseek-ai/DeepEP) sends a token once per other node that holds one of its experts and forwards
it over NVLink: 7 x (1 - (7/8)^8) = 4.59 copies, so a network-bound dispatch takes 0.656 of NCCL's.
"""

from __future__ import annotations

import pytest

import itertools

from designer.perf import Cluster, MoE, network as netm
from designer.perf.software import resolve
from designer.errors import PerfError

from .factories import H100, NDR

LINKS = netm.links_for(Cluster(H100, NDR))
EP64 = netm.group_layout(64, 1, 8)  # 8 ranks on each of 8 nodes


def test_deepep_sends_each_token_once_per_remote_node():
    assert netm.remote_nodes_per_token(8, 8) == pytest.approx(7 * (1 - (7 / 8) ** 8))
    n = 64e6  # bytes a rank sends: large, so bandwidth sets the time
    nccl = netm.dispatch_all_to_all_s(n, EP64, LINKS, 8, "nccl")
    deepep = netm.dispatch_all_to_all_s(n, EP64, LINKS, 8, "deepep")
    assert nccl == netm.all_to_all_s(n, EP64, LINKS)
    # both NIC-bound: the off-node bytes' ratio, 4.595/8 against 56/64
    lat_nccl = LINKS.base_s + 7 * LINKS.su_alpha_s + 56 * LINKS.net_any_alpha_s
    lat_deepep = LINKS.base_s + 7 * LINKS.su_alpha_s + 7 * LINKS.net_any_alpha_s
    assert (deepep - lat_deepep) / (nccl - lat_nccl) == pytest.approx((4.595 / 8) / (56 / 64), rel=1e-3)


def test_inside_one_node_both_are_the_same_all_to_all():
    group = netm.group_layout(8, 1, 8)
    assert netm.dispatch_all_to_all_s(8e6, group, LINKS, 8, "deepep") == netm.all_to_all_s(8e6, group, LINKS)


def test_the_dispatcher_is_a_software_knob():
    assert resolve("fsdp2", moe_dispatcher="deepep").moe_dispatcher == "deepep"
    assert resolve("megatron-core").moe_dispatcher == "nccl"
    assert resolve("fsdp2", moe_dispatcher="deepep").describe()["moe_dispatcher"] == "deepep"
    with pytest.raises(PerfError, match="no expert parallelism"):
        resolve("megatron-lm-2021", moe_dispatcher="deepep")


def test_node_limited_routing_reaches_fewer_nodes():
    """DeepSeek-V3's node-limited routing (8 groups, 4 a token): on EP 64 over 8 nodes each node
    holds one group, so a token reaches a node only if its group is among the 4 chosen."""
    grouped = netm.remote_nodes_per_token(8, 8, groups=8, group_top_k=4)
    assert grouped == pytest.approx(7 * 0.5 * (1 - 0.75 ** 8))
    assert grouped < netm.remote_nodes_per_token(8, 8)
    assert netm.remote_nodes_per_token(8, 8, groups=8, group_top_k=8) == netm.remote_nodes_per_token(8, 8)
    n = 64e6
    deepep = netm.dispatch_all_to_all_s(n, EP64, LINKS, 8, "deepep")
    limited = netm.dispatch_all_to_all_s(n, EP64, LINKS, 8, "deepep", groups=8, group_top_k=4)
    assert limited < deepep
    # NCCL's all-to-all carries every routed copy whatever the groups
    assert netm.dispatch_all_to_all_s(n, EP64, LINKS, 8, "nccl", groups=8, group_top_k=4) == \
        netm.dispatch_all_to_all_s(n, EP64, LINKS, 8, "nccl")


@pytest.mark.parametrize("nodes, groups, chosen, top_k", [(4, 8, 4, 2), (2, 8, 3, 8), (16, 8, 4, 8), (8, 4, 2, 3)])
def test_group_limited_reach_matches_enumeration(nodes, groups, chosen, top_k):
    """The closed form against every choice of groups, experts uniform inside the chosen groups."""
    node_of_group_share = []  # per group: {node: share of the group's experts}
    for gi in range(groups):
        if nodes <= groups:
            node_of_group_share.append({gi * nodes // groups: 1.0})
        else:
            r = nodes // groups
            node_of_group_share.append({gi * r + j: 1.0 / r for j in range(r)})
    subsets = list(itertools.combinations(range(groups), chosen))
    reach = 0.0
    for subset in subsets:
        share = {}
        for gi in subset:
            for node, f in node_of_group_share[gi].items():
                share[node] = share.get(node, 0.0) + f / chosen
        reach += sum(1.0 - (1.0 - f) ** top_k for node, f in share.items() if node != 0) / len(subsets)
    assert netm.remote_nodes_per_token(nodes, top_k, groups, chosen) == pytest.approx(reach)


def test_routing_groups_are_checked():
    assert MoE(experts=256, top_k=8, groups=8, group_top_k=4).group_top_k == 4
    with pytest.raises(PerfError, match="must divide"):
        MoE(experts=256, top_k=8, groups=7)
    with pytest.raises(PerfError, match="exceeds moe.groups"):
        MoE(experts=256, top_k=8, groups=8, group_top_k=9)
    with pytest.raises(PerfError, match="exceeds the experts"):
        MoE(experts=16, top_k=8, groups=8, group_top_k=2)
