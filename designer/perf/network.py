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
  receives ``n / per_node`` once.
"""

from __future__ import annotations

__all__ = ["Links", "Group", "links_for", "group_layout", "all_reduce_s", "reduce_scatter_s",
           "all_gather_s", "all_to_all_s", "p2p_group_s"]

import functools
import math
from dataclasses import dataclass

from designer.perf import collectives as coll
from designer.perf.cluster import Cluster
from designer.perf.constants import scaleup_profile


@dataclass(frozen=True, slots=True)
class Links:
    """Effective link rates and latencies of a cluster, resolved once per estimate."""

    gpus_per_node: int
    su_ring_Bps: float  # per-GPU achieved ring bandwidth inside a full node
    su_reduce_Bps: float  # in-switch all-reduce algorithm bandwidth (0: none)
    su_alpha_s: float
    su_mesh: bool
    net_Bps: float  # per-GPU achieved scale-out bandwidth
    net_alpha_s: float  # rail-aligned (same-rank GPUs of two nodes)
    net_any_alpha_s: float  # any-to-any
    oversubscription: float
    bisection_Bps_per_gpu: float
    in_network_reduction: bool
    rail_only: bool

    def su_Bps(self, per_node: int) -> float:
        """Ring bandwidth of ``per_node`` GPUs of one node (a mesh only uses their direct links)."""
        if self.su_mesh and self.gpus_per_node > 1:
            return self.su_ring_Bps * max(1, per_node - 1) / (self.gpus_per_node - 1)
        return self.su_ring_Bps


def links_for(cluster: Cluster) -> Links:
    """Resolve a cluster's network view into effective rates (scale-up defaults from the GPU kind)."""
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
    return Links(
        gpus_per_node=net.gpus_per_node,
        su_ring_Bps=su_Bps * ring_eff,
        su_reduce_Bps=su_Bps * red_eff,
        su_alpha_s=su_alpha,
        su_mesh=mesh,
        net_Bps=net_Bps,
        net_alpha_s=net.host_latency_s + same_rail * net.switch_latency_s,
        net_any_alpha_s=net.host_latency_s + net.hops * net.switch_latency_s,
        oversubscription=net.oversubscription,
        bisection_Bps_per_gpu=bisection * net.efficiency,
        in_network_reduction=net.in_network_reduction,
        rail_only=net.rail_only,
    )


@dataclass(frozen=True, slots=True)
class Group:
    """A process group: ``size`` ranks, ``per_node`` of them in each of ``nodes`` nodes."""

    size: int
    per_node: int
    nodes: int


@functools.lru_cache(maxsize=4096)  # asked for a few shapes, many times, by every plan timing
def group_layout(size: int, stride: int, gpus_per_node: int) -> Group:
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
    """
    if size <= 1:
        return Group(1, 1, 1)
    per_node = max(1, min(size, gpus_per_node // max(1, stride)))
    return Group(size, per_node, math.ceil(size / per_node))


def _intra_all_reduce_s(n: float, per_node: int, links: Links) -> float:
    ring = coll.ring_all_reduce_s(n, per_node, links.su_Bps(per_node), links.su_alpha_s)
    if links.su_reduce_Bps > 0.0 and per_node > 2:
        # NVLS latency is paid per all-reduce; the measured fixed cost matches 2(p-1) steps.
        nvls = coll.in_switch_all_reduce_s(n, links.su_reduce_Bps, links.su_alpha_s, 2 * (per_node - 1))
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
    a_net = links.net_alpha_s
    # 1. flat ring, one channel per NIC; bounded by NVLink and by the node's NICs.
    p = group.size
    ring = 2.0 * (p - 1) / p * n / min(su, node_Bps) + 2.0 * (p - 1) * max(a_net, links.su_alpha_s)
    # 2. hierarchical: intra reduce-scatter, inter all-reduce of a shard (ring or tree),
    #    intra all-gather.
    intra = 2.0 * coll.ring_reduce_scatter_s(n, g, su, links.su_alpha_s)
    shard = n / g
    hier_ring = coll.hierarchical_all_reduce_s(n, g, k, su, links.su_alpha_s, net, a_net)
    hier_tree = intra + coll.tree_all_reduce_s(shard, k, net, a_net)
    best = min(ring, hier_ring, hier_tree)
    # 3. in-network reduction, pipelined with the intra-node steps.
    if links.in_network_reduction:
        if links.su_reduce_Bps > 0.0 and g > 2:
            intra_piped = n / links.su_reduce_Bps
        else:
            intra_piped = intra
        sharp_bw = max(intra_piped, shard / net)
        sharp = sharp_bw + 2.0 * (g - 1) * links.su_alpha_s + 2.0 * links.net_any_alpha_s
        best = min(best, sharp)
    return best


def _rs_or_ag_s(n: float, group: Group, links: Links, cross_leaf: bool) -> float:
    if group.size <= 1 or n <= 0.0:
        return 0.0
    g, k = group.per_node, group.nodes
    su = links.su_Bps(g)
    if k == 1:
        return coll.ring_reduce_scatter_s(n, g, su, links.su_alpha_s)
    net = links.net_Bps / (links.oversubscription if cross_leaf else 1.0)
    p = group.size
    a_net = links.net_alpha_s
    ring = (p - 1) / p * n / min(su, g * net) + (p - 1) * max(a_net, links.su_alpha_s)
    hier = (coll.ring_reduce_scatter_s(n, g, su, links.su_alpha_s)
            + coll.ring_reduce_scatter_s(n / g, k, net, a_net))
    return min(ring, hier)


def reduce_scatter_s(n: float, group: Group, links: Links, *, cross_leaf: bool = False) -> float:
    """Fastest reduce-scatter of an ``n``-byte vector over ``group`` (flat ring or hierarchical)."""
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
    adds an NVLink stage. Latency: ``size - 1`` pairwise steps (Thakur et al. 2005).
    """
    if group.size <= 1 or n <= 0.0:
        return 0.0
    p, g = group.size, group.per_node
    su = links.su_Bps(g)
    intra = n * (g - 1) / p / su
    if group.nodes == 1:
        return intra + (p - 1) * links.su_alpha_s
    off = n * (p - g) / p
    inject = off * links.oversubscription / links.net_Bps
    bisect = off / (4.0 * links.bisection_Bps_per_gpu)
    t = max(intra, inject, bisect)
    if links.rail_only:
        t += off * (links.gpus_per_node - 1) / links.gpus_per_node / links.su_ring_Bps
    return t + (g - 1) * links.su_alpha_s + (p - g) * links.net_any_alpha_s


def p2p_group_s(n: float, crosses_node: bool, links: Links) -> float:
    """One point-to-point send of ``n`` bytes, over NVLink or over the sender's NIC."""
    if n <= 0.0:
        return 0.0
    if crosses_node:
        return coll.p2p_s(n, links.net_Bps, links.net_alpha_s)
    return coll.p2p_s(n, links.su_ring_Bps, links.su_alpha_s)
