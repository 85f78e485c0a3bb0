"""MoE token dispatch: NCCL all-to-all against DeepEP (designer.perf.network.dispatch_all_to_all_s).

NCCL's all-to-all puts every routed copy of a token on the wire: with EP 64 over 8 DGX nodes and
8 experts a token, 8 x 56/64 = 7 copies leave the node. DeepEP (DeepSeek-V3 report sec. 3.2.2;
deepseek-ai/DeepEP) sends a token once per other node that holds one of its experts and forwards
it over NVLink: 7 x (1 - (7/8)^8) = 4.59 copies, so a network-bound dispatch takes 0.656 of NCCL's.
"""

from __future__ import annotations

import pytest

from designer.perf import Cluster, network as netm
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
