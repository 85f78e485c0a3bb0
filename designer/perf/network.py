"""Collectives of a process group laid out over a two-tier network (scale-up inside a node,
scale-out between nodes), choosing the fastest algorithm as NCCL's tuner does.

A group of ``size`` ranks whose members are ``stride`` ranks apart (ranks numbered with TP
fastest, then CP, DP, PP, as Megatron-LM does) has ``per_node`` members in each of ``nodes``
nodes. Inside a node the group uses NVLink (or a point-to-point mesh); between nodes each
member uses its own share of NICs, so a node's aggregate rate for the group is
``per_node * inter_Bps_per_gpu * efficiency``.

All-reduce candidates on more than one node:

* flat ring with one channel per NIC (NCCL's default at large sizes): every rank moves
  ``2 (p-1)/p n`` bytes over NVLink, every NIC ``2 (p-1)/p n / per_node``;
* hierarchical: reduce-scatter inside the node, all-reduce of the ``n / per_node`` shard
  between nodes (ring or tree), all-gather inside the node (ml-engineering, "Inter-node speed
  depends on intra-node speed");
* with in-network reduction (SHARP): the same, with the inter-node step done by the
  switches, pipelined with the intra-node steps (NCCL CollNet/NVLS-Tree), so each NIC sends and
  receives ``n / per_node`` once. Only where the fabric reduces in its switches *and* the stack
  enables it (``software.in_network_reduction``; NCCL's ``NCCL_COLLNET_ENABLE`` defaults to 0).

Latency follows NCCL's own tuning model (``src/graph/tuning.cc``, Simple protocol;
:mod:`designer.perf.constants`): a base latency per collective, plus a step latency per ring
step, NVLink steps inside the node and network steps (NCCL's 14 us plus the fabric's host and
switch latency) between nodes. A ring over ``p`` ranks on ``k`` nodes pays ``2 (p - k)`` NVLink
and ``2 (k - 1)`` network steps for an all-reduce, so its latency grows linearly with the group:
~10 ms on 1,024 ranks. A tree pays ``2 ((g - 1) + log2 k)`` steps, and with one rank per node
all-gather and reduce-scatter may run NCCL's PAT algorithm (``log2 k`` network steps plus 2.8 us
per rank). Each collective takes the fastest candidate, bandwidth and latency together.
"""

from __future__ import annotations

__all__ = ["Links", "Group", "links_for", "group_layout", "ring_latency_s", "all_reduce_s", "reduce_scatter_s",
           "all_gather_s", "all_to_all_s", "p2p_group_s", "remote_nodes_per_token", "dispatch_all_to_all_s"]

import functools
import math
from dataclasses import dataclass

from designer.perf import collectives as coll
from designer.perf import constants as K
from designer.perf.cluster import Cluster
from designer.perf.constants import scaleup_profile
from designer.perf.software import Software


@dataclass(frozen=True, slots=True)
class Links:
    """Effective link rates and latencies of a cluster, resolved once per estimate."""

    gpus_per_node: int
    su_ring_Bps: float  # per-GPU achieved ring bandwidth inside a full node
    su_reduce_Bps: float  # in-switch all-reduce algorithm bandwidth (0: none)
    su_alpha_s: float  # one NVLink step of a collective (NCCL ring step)
    su_mesh: bool
    net_Bps: float  # per-GPU achieved scale-out bandwidth
    net_alpha_s: float  # one-way latency, rail-aligned (same-rank GPUs of two nodes)
    net_any_alpha_s: float  # one-way latency, any-to-any
    oversubscription: float
    bisection_Bps_per_gpu: float
    in_network_reduction: bool
    rail_only: bool
    base_s: float = K.NCCL_BASE_LATENCY_S  # paid once per collective

    @property
    def net_step_s(self) -> float:
        """One network step of a ring or tree: NCCL's protocol step plus the fabric's latency."""
        return K.NCCL_NET_STEP_S + self.net_alpha_s

    @property
    def net_any_step_s(self) -> float:
        """A network step between GPUs of different rails."""
        return K.NCCL_NET_STEP_S + self.net_any_alpha_s

    def su_Bps(self, per_node: int) -> float:
        """Ring bandwidth of ``per_node`` GPUs of one node (a mesh only uses their direct links)."""
        if self.su_mesh and self.gpus_per_node > 1:
            return self.su_ring_Bps * max(1, per_node - 1) / (self.gpus_per_node - 1)
        return self.su_ring_Bps


def links_for(cluster: Cluster, software: Software | None = None) -> Links:
    """Resolve a cluster's network view into effective rates (scale-up defaults from the GPU kind),
    bandwidths scaled by the cluster's network efficiency multiplier.

    In-network reduction needs both a fabric that reduces in its switches
    (``NetworkView.in_network_reduction``) and a stack that enables NCCL's CollNet
    (``software.in_network_reduction``; NCCL docs: ``NCCL_COLLNET_ENABLE`` defaults to 0 and needs
    the NCCL-RDMA-SHARP plugin); ``software`` ``None`` is the default stack, without it.
    """
    net = cluster.network
    gpu = cluster.gpu
    prof = scaleup_profile(gpu.scaleup_kind)
    su_Bps = net.scaleup_Bps if net.scaleup_Bps is not None else gpu.scaleup_Bps
    ring_eff = net.scaleup_efficiency if net.scaleup_efficiency is not None else prof.ring_efficiency
    red_eff = (net.scaleup_reduction_efficiency if net.scaleup_reduction_efficiency is not None
               else prof.reduction_efficiency)
    su_alpha = net.scaleup_latency_s if net.scaleup_latency_s is not None else prof.latency_s
    mesh = net.scaleup_mesh if net.scaleup_mesh is not None else prof.mesh
    net_Bps = net.inter_Bps_per_gpu * net.efficiency
    same_rail = net.hops if net.hops_same_rail is None else net.hops_same_rail
    bisection = net.bisection_Bps_per_gpu
    if bisection is None:
        bisection = net.inter_Bps_per_gpu / (2.0 * net.oversubscription)
    # The network multiplier (ModelEfficiency.network) scales every achieved bandwidth, the
    # quantity whose error the validation measures (large-message bus bandwidth); latencies stay
    # as modelled.
    f = cluster.efficiency.network
    return Links(
        gpus_per_node=net.gpus_per_node,
        su_ring_Bps=su_Bps * ring_eff * f,
        su_reduce_Bps=su_Bps * red_eff * f,
        su_alpha_s=su_alpha,
        su_mesh=mesh,
        net_Bps=net_Bps * f,
        net_alpha_s=net.host_latency_s + same_rail * net.switch_latency_s,
        net_any_alpha_s=net.host_latency_s + net.hops * net.switch_latency_s,
        oversubscription=net.oversubscription,
        bisection_Bps_per_gpu=bisection * net.efficiency * f,
        in_network_reduction=net.in_network_reduction and software is not None and software.in_network_reduction,
        rail_only=net.rail_only,
    )


@dataclass(frozen=True, slots=True)
class Group:
    """A process group: ``size`` ranks, ``per_node`` of them in each of ``nodes`` nodes."""

    size: int
    per_node: int
    nodes: int


@functools.lru_cache(maxsize=4096)  # asked for a few shapes, many times, by every plan timing
def group_layout(size: int, stride: int, gpus_per_node: int, job_gpus: int = 0) -> Group:
    """Place a group of ``size`` ranks spaced ``stride`` ranks apart on nodes of ``gpus_per_node``.

    Examples:
        >>> group_layout(8, 1, 8)
        Group(size=8, per_node=8, nodes=1)
        >>> group_layout(16, 1, 8)
        Group(size=16, per_node=8, nodes=2)
        >>> group_layout(32, 2, 8)
        Group(size=32, per_node=4, nodes=8)
        >>> group_layout(4, 8, 8)
        Group(size=4, per_node=1, nodes=4)

    In a job of ``job_gpus`` ranks over several domains, groups that do not tile the domain
    straddle two: on 72-GPU NVL72s, ranks 64-79 of a TP group of 16 sit 8 in one rack and 8 in
    the next, and a synchronous job waits for its slowest group, so the group is taken as
    ``gcd(domain, span)`` ranks on one side of a scale-out link:

        >>> group_layout(16, 1, 72, job_gpus=576)
        Group(size=16, per_node=8, nodes=2)
        >>> group_layout(8, 1, 72, job_gpus=576)
        Group(size=8, per_node=8, nodes=1)
    """
    if size <= 1:
        return Group(1, 1, 1)
    stride = max(1, stride)
    span = size * stride
    if job_gpus > gpus_per_node and span < gpus_per_node and gpus_per_node % span:
        return Group(size, max(1, math.gcd(gpus_per_node, span) // stride), 2)
    per_node = max(1, min(size, gpus_per_node // stride))
    return Group(size, per_node, math.ceil(size / per_node))


def ring_latency_s(p: int, k: int, links: Links, passes: int) -> float:
    """NCCL ring latency: base + NVLink steps + network steps, ``passes`` times around the ring
    (2 for all-reduce, 1 for reduce-scatter and all-gather)."""
    inter = passes * (k - 1)
    intra = passes * (p - 1) - inter
    return links.base_s + intra * links.su_alpha_s + inter * links.net_step_s


def _intra_all_reduce_s(n: float, per_node: int, links: Links) -> float:
    ring = (coll.ring_all_reduce_s(n, per_node, links.su_Bps(per_node), 0.0)
            + ring_latency_s(per_node, 1, links, 2))
    if links.su_reduce_Bps > 0.0 and per_node > 2:
        # NVLS latency as measured: the fixed cost of the H200 sweep matches a ring's 2(p-1)
        # steps (stas00/ml-engineering), above NCCL's tuner constant of 25 us
        nvls = n / links.su_reduce_Bps + ring_latency_s(per_node, 1, links, 2)
        return min(ring, nvls)
    return ring


def all_reduce_s(n: float, group: Group, links: Links, *, cross_leaf: bool = False) -> float:
    """Fastest all-reduce of ``n`` bytes over ``group`` (see the module docstring).

    ``cross_leaf`` applies the fabric's oversubscription to the inter-node traffic
    (data-parallel groups spread over many leaves).
    """
    if group.size <= 1 or n <= 0.0:
        return 0.0
    g, k = group.per_node, group.nodes
    if k == 1:
        return _intra_all_reduce_s(n, g, links)
    net = links.net_Bps / (links.oversubscription if cross_leaf else 1.0)
    node_Bps = g * net
    su = links.su_Bps(g)
    p = group.size
    intra_lat = 2 * (g - 1) * links.su_alpha_s
    # 1. flat ring, one channel per NIC; bounded by NVLink and by the node's NICs.
    ring = 2.0 * (p - 1) / p * n / min(su, node_Bps) + ring_latency_s(p, k, links, 2)
    # 2. hierarchical: intra reduce-scatter, inter all-reduce of a shard (ring or tree),
    #    intra all-gather. NCCL's tree: base + 2 ((g - 1) NVLink + log2 k network) steps.
    intra = 2.0 * coll.ring_reduce_scatter_s(n, g, su, 0.0)
    shard = n / g
    hier_ring = intra + coll.ring_all_reduce_s(shard, k, net, 0.0) + ring_latency_s(p, k, links, 2)
    tree_lat = links.base_s + 2.0 * ((g - 1) * K.NCCL_NVLINK_TREE_STEP_S
                                     + math.ceil(math.log2(k)) * links.net_step_s)
    hier_tree = intra + coll.tree_all_reduce_s(shard, k, net, 0.0) + tree_lat
    best = min(ring, hier_ring, hier_tree)
    # 3. in-network reduction, pipelined with the intra-node steps.
    if links.in_network_reduction:
        if links.su_reduce_Bps > 0.0 and g > 2:
            intra_piped = n / links.su_reduce_Bps
        else:
            intra_piped = intra
        sharp_bw = max(intra_piped, shard / net)
        sharp = sharp_bw + links.base_s + intra_lat + 2.0 * links.net_any_step_s
        best = min(best, sharp)
    return best


def _rs_or_ag_s(n: float, group: Group, links: Links, cross_leaf: bool) -> float:
    if group.size <= 1 or n <= 0.0:
        return 0.0
    g, k = group.per_node, group.nodes
    su = links.su_Bps(g)
    p = group.size
    if k == 1:
        return coll.ring_reduce_scatter_s(n, g, su, 0.0) + ring_latency_s(p, 1, links, 1)
    net = links.net_Bps / (links.oversubscription if cross_leaf else 1.0)
    lat = ring_latency_s(p, k, links, 1)
    ring = (p - 1) / p * n / min(su, g * net) + lat
    hier = (coll.ring_reduce_scatter_s(n, g, su, 0.0)
            + coll.ring_reduce_scatter_s(n / g, k, net, 0.0) + lat)
    best = min(ring, hier)
    if g == 1:
        # PAT (NCCL 2.23+): logarithmic network steps, a small linear term per rank.
        pat_lat = (K.NCCL_PAT_BASE_S + math.ceil(math.log2(k)) * links.net_step_s / 3.5
                   + K.NCCL_PAT_PER_RANK_S * p)
        best = min(best, (p - 1) / p * n / net + pat_lat)
    return best


def reduce_scatter_s(n: float, group: Group, links: Links, *, cross_leaf: bool = False) -> float:
    """Fastest reduce-scatter of an ``n``-byte vector over ``group`` (ring, hierarchical, PAT)."""
    return _rs_or_ag_s(n, group, links, cross_leaf)


def all_gather_s(n: float, group: Group, links: Links, *, cross_leaf: bool = False) -> float:
    """Fastest all-gather into an ``n``-byte vector over ``group`` (the mirror of reduce-scatter)."""
    return _rs_or_ag_s(n, group, links, cross_leaf)


def all_to_all_s(n: float, group: Group, links: Links) -> float:
    """All-to-all where each rank sends ``n`` bytes in total, spread evenly over the group.

    The slowest resource sets the time (every rank waits for the last byte):

    * NVLink for the ``(per_node-1)/size`` share that stays in the node;
    * the rank's NIC for the ``(size-per_node)/size`` share that leaves it, slowed by the leaf
      oversubscription;
    * the fabric bisection: half of the off-node bytes cross a balanced cut, so
      ``off / (4 * bisection_per_gpu)`` when every GPU exchanges at once.

    A rail-only fabric first forwards cross-rail bytes over NVLink (Wang et al. 2023), which
    adds an NVLink stage. Latency: the base latency and ``size - 1`` pairwise one-way latencies
    (Thakur et al. 2005).
    """
    if group.size <= 1 or n <= 0.0:
        return 0.0
    p, g = group.size, group.per_node
    su = links.su_Bps(g)
    intra = n * (g - 1) / p / su
    if group.nodes == 1:
        return intra + links.base_s + (p - 1) * links.su_alpha_s
    off = n * (p - g) / p
    inject = off * links.oversubscription / links.net_Bps
    bisect = off / (4.0 * links.bisection_Bps_per_gpu)
    t = max(intra, inject, bisect)
    if links.rail_only:
        t += off * (links.gpus_per_node - 1) / links.gpus_per_node / links.su_ring_Bps
    return t + links.base_s + (g - 1) * links.su_alpha_s + (p - g) * links.net_any_alpha_s


def remote_nodes_per_token(nodes: int, top_k: int, groups: int = 1, group_top_k: int | None = None) -> float:
    """Expected other nodes a token's ``top_k`` experts sit on, experts spread evenly and in order
    over ``nodes`` nodes of the expert-parallel group and chosen uniformly (balanced routing).

    Without group-limited routing: ``(k - 1) (1 - (1 - 1/k)^top_k)``. With it, the experts form
    ``groups`` equal groups and each token picks ``group_top_k`` of them first, then its ``top_k``
    experts inside those (DeepSeek-V3 report sec. 2.1.2, node-limited routing: at most 4 nodes a
    token; Megatron-Core ``moe_router_num_groups`` / ``moe_router_group_topk``, "set equal to number
    of nodes in EP group" for node-limited routing). A node holding ``q = groups / k`` groups is
    reached unless none of the token's experts is there: ``sum_c H(c) (1 - (1 - c/M)^top_k)`` over
    the hypergeometric count ``c`` of its groups among the ``M`` chosen; a group spread over ``r =
    k / groups`` nodes reaches one of them with ``M/groups (1 - (1 - 1/(r M))^top_k)``. Groups
    that do not align with nodes count as ungrouped.

    Examples:
        >>> round(remote_nodes_per_token(8, 8), 3), remote_nodes_per_token(1, 8)
        (4.595, 0.0)
        >>> round(remote_nodes_per_token(8, 8, groups=8, group_top_k=4), 3)  # DeepSeek-V3 on EP64, 8 nodes
        3.15
        >>> remote_nodes_per_token(8, 8, groups=8, group_top_k=8) == remote_nodes_per_token(8, 8)
        True
    """
    if nodes <= 1:
        return 0.0
    m = groups if group_top_k is None else min(group_top_k, groups)
    if groups > 1 and m < groups and nodes <= groups and groups % nodes == 0:
        q = groups // nodes
        total = math.comb(groups, m)
        reach = sum(math.comb(q, c) * math.comb(groups - q, m - c) / total * (1.0 - (1.0 - c / m) ** top_k)
                    for c in range(1, min(q, m) + 1))
        return (nodes - 1) * reach
    if groups > 1 and m < groups and nodes % groups == 0:
        r = nodes // groups
        return (nodes - 1) * m / groups * (1.0 - (1.0 - 1.0 / (r * m)) ** top_k)
    return (nodes - 1) * (1.0 - (1.0 - 1.0 / nodes) ** top_k)


# DeepEP across a multi-node NVLink domain (GB200 NVL72, EP32, the community PR that extends it past 8
# GPUs): "the dispatch can only reach about 400 GB/s and the combine can only reach about 190 GB/s
# algorithm bandwidth with 24 SMs" (Megatron-LM docs/discussions/deepseek-v3-gb200-optimization,
# commit 79e8592, sec. 2.2.1; measured). HybridEP "can fully release the performance potential of the
# NVL72 architecture" (sec. 2.5) and runs at the domain's own rate.
DEEPEP_MNNVL_DISPATCH_Bps = 400e9
DEEPEP_MNNVL_COMBINE_Bps = 190e9
_DEEPEP_NVLINK_GPUS = 8  # DeepEP's own NVLink path covers domains of up to 8 GPUs


def dispatch_all_to_all_s(n: float, group: Group, links: Links, top_k: int, dispatcher: str, *,
                          groups: int = 1, group_top_k: int | None = None, combine: bool = False) -> float:
    """One MoE dispatch or combine: each rank sends ``n`` bytes, ``top_k`` routed copies of its tokens.

    ``nccl``: :func:`all_to_all_s`, every copy for an off-node expert on the wire. ``deepep`` (and
    ``hybridep``, HybridEP, which also "ensured that there is no redundant communication during data
    distribution": Megatron-LM docs/discussions/deepseek-v3-gb200-optimization, sec. 2.5)
    (DeepEP normal kernels, DeepSeek-V3 report sec. 3.2.2 and deepseek-ai/DeepEP): a token goes
    over the network once per other node holding one of its experts, to the GPU of the same rail,
    which forwards it over NVLink, the two stages pipelined; so the NIC carries ``n / top_k x``
    :func:`remote_nodes_per_token` instead of ``n (p - g) / p``, and NVLink the node's share plus
    the forwarded copies. Inside one node both are the same all-to-all. ``groups`` and
    ``group_top_k``: the model's group-limited routing (:func:`remote_nodes_per_token`), which
    only DeepEP's once-per-node copies gain from: NCCL's all-to-all still carries every copy, and
    the share of a token's experts off its node stays ``(p - g) / p``. DeepEP inside a scale-up
    domain of more than 8 GPUs runs at no more than its measured algorithm bandwidth there,
    :data:`DEEPEP_MNNVL_DISPATCH_Bps` for a dispatch and :data:`DEEPEP_MNNVL_COMBINE_Bps` for a
    ``combine``: ``max(t, n / rate)``.
    """
    if dispatcher == "deepep" and group.per_node > _DEEPEP_NVLINK_GPUS and group.size > 1 and n > 0.0:
        rate = DEEPEP_MNNVL_COMBINE_Bps if combine else DEEPEP_MNNVL_DISPATCH_Bps
        return max(dispatch_all_to_all_s(n, group, links, top_k, "hybridep", groups=groups, group_top_k=group_top_k),
                   n / rate)
    if dispatcher not in ("deepep", "hybridep") or group.nodes <= 1 or group.size <= 1 or n <= 0.0:
        return all_to_all_s(n, group, links)
    p, g = group.size, group.per_node
    su = links.su_Bps(g)
    off = n / top_k * remote_nodes_per_token(group.nodes, top_k, groups, group_top_k)
    inject = off * links.oversubscription / links.net_Bps
    bisect = off / (4.0 * links.bisection_Bps_per_gpu)
    nvlink = n * (g - 1) / p / su + n * (p - g) / p / su  # local copies, then the forwarded ones
    t = max(nvlink, inject, bisect)
    return t + links.base_s + (g - 1) * links.su_alpha_s + (group.nodes - 1) * links.net_any_alpha_s


def p2p_group_s(n: float, crosses_node: bool, links: Links) -> float:
    """One point-to-point send of ``n`` bytes, over NVLink or over the sender's NIC."""
    if n <= 0.0:
        return 0.0
    if crosses_node:
        return coll.p2p_s(n, links.net_Bps, links.base_s + links.net_alpha_s)
    return coll.p2p_s(n, links.su_ring_Bps, links.base_s + links.su_alpha_s)
