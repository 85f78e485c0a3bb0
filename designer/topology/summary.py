"""Closed-form fabric summary: counts, media, racks, bandwidth, hops, oversubscription. No graph.

:func:`summarize` costs microseconds to a millisecond whatever the size, so the optimizer can call
it for every candidate. :func:`designer.topology.measure.summarize_graph` measures the same fields
on a built graph; the tests check that both agree.
"""

from __future__ import annotations

__all__ = ["FabricSummary", "TierLinks", "summarize", "half_split_units", "pooled_flow_links"]

import math
from dataclasses import dataclass
from typing import Iterator

from designer.topology import layout as layout_mod
from designer.topology import groups, sizing
from designer.topology.request import FabricRequest
from designer.topology.schema import LEAF_SPINE, NODE_LEAF, SPINE_CORE, MediaClass, TopologyKind

_OPTICAL = (MediaClass.MULTIMODE, MediaClass.SINGLE_MODE)


@dataclass(frozen=True, slots=True)
class TierLinks:
    """The links of one tier.

    Attributes:
        tier: ``"node-leaf"``, ``"leaf-spine"`` or ``"spine-core"``.
        links: Logical links, one cable each (reserved-port links not included).
        rate_Bps: Rate of one link, bytes/s, one direction.
        length_m: Worst-case cable run of the tier under the floor layout, m.
        media: Media class of the tier.
    """

    tier: str
    links: int
    rate_Bps: float
    length_m: float
    media: MediaClass


@dataclass(frozen=True, slots=True)
class FabricSummary:
    """What a fabric is made of and what it delivers. Counts are integers; rates in bytes/s.

    Attributes:
        request: The request summarised.
        topology: Its topology kind.
        tiers: Switch tiers: 0 cloud, 1 one switch (per rail for rail-only), 2, 3.
        nodes: Servers.
        gpus: GPUs.
        endpoints: Compute NIC ports (nodes x rails).
        su_nodes: Servers per scalable unit (leaf group; fat tree: servers per leaf).
        sus: Scalable units (leaf groups).
        pods: Pods per fabric (three tiers; 1 otherwise, 0 for cloud).
        leaf_downlinks: Design NIC downlinks of a leaf (D); all ports of a one-tier switch.
        leaf_uplinks: Uplinks of every leaf (u; 0 in one tier).
        leaves: Leaf switches (a single switch counts as a leaf).
        spines: Spine switches.
        cores: Core switches.
        switches: All switches.
        node_leaf_links: NIC-to-leaf links (= endpoints; 0 for cloud).
        leaf_spine_links: Leaf-to-spine links.
        spine_core_links: Spine-to-core links.
        reserved_links: Links from reserved leaf ports to management appliances (UFM).
        tier_links: Per-tier links with their rate, run length and media.
        cables: All cables: one per logical link, reserved links included.
        cables_by_media: Cables per media class, sorted by class.
        switch_cages: Switch cages in use (all media).
        switch_transceivers: Switch-side transceivers: cages in use on optical links, counted per
            switch and direction as ceil(ports / ports_per_cage).
        switch_transceivers_by_media: The same per optical media class.
        node_transceivers: Server-side transceivers: compute cages of every server when its NIC
            links are optical (DGX H100: 4 per server).
        node_media: Media class of the NIC links.
        server_racks: Racks holding servers (and top-of-rack leaves).
        switch_racks: Network racks: leaf racks in the rows, central spine/core racks and racks
            holding only management appliances.
        injection_Bps: Scale-out bandwidth per GPU, bytes/s (NIC ports x rate / GPUs per server).
        bisection_Bps: Largest traffic the first half of the servers (in node order) can send to
            the other half at once, one direction, bytes/s (the min cut between the halves).
        hops_same_rail_su: Switches crossed between NICs of one rail of two servers in one SU;
            None when no SU has two servers.
        hops_cross_rail_su: The same between different rails of two servers in one SU; for
            rail-only, after forwarding over NVLink to the destination's rail.
        hops_cross_su: Worst case between servers in different SUs; None with one SU.
        hops_max: Worst case over all pairs of servers (0 with one server).
        leaf_oversubscription: Worst leaf's NIC downlinks over its uplinks (1.0 in one tier).
        spine_oversubscription: Worst spine's downlinks over uplinks (three tiers; 1.0 otherwise).
        oversub_same_leaf: Oversubscription seen by traffic between NICs on one leaf (1.0).
        oversub_cross_leaf: Seen by traffic crossing leaf uplinks (max(1, leaf ratio); 1.0 where
            no such traffic exists).
        oversub_cross_su: Seen by traffic between SUs.
        oversub_cross_pod: Seen by traffic between pods (leaf ratio times spine ratio).
        cross_rail_via_nvlink: Cross-rail traffic must first cross NVLink (rail-only).
        appliance_racks: Of ``switch_racks``, those holding only management appliances (UFM),
            where the switches' racks have no free units for them.
    """

    request: FabricRequest
    topology: TopologyKind
    tiers: int
    nodes: int
    gpus: int
    endpoints: int
    su_nodes: int
    sus: int
    pods: int
    leaf_downlinks: int
    leaf_uplinks: int
    leaves: int
    spines: int
    cores: int
    switches: int
    node_leaf_links: int
    leaf_spine_links: int
    spine_core_links: int
    reserved_links: int
    tier_links: tuple[TierLinks, ...]
    cables: int
    cables_by_media: tuple[tuple[MediaClass, int], ...]
    switch_cages: int
    switch_transceivers: int
    switch_transceivers_by_media: tuple[tuple[MediaClass, int], ...]
    node_transceivers: int
    node_media: MediaClass
    server_racks: int
    switch_racks: int
    injection_Bps: float
    bisection_Bps: float
    hops_same_rail_su: int | None
    hops_cross_rail_su: int | None
    hops_cross_su: int | None
    hops_max: int
    leaf_oversubscription: float
    spine_oversubscription: float
    oversub_same_leaf: float
    oversub_cross_leaf: float
    oversub_cross_su: float
    oversub_cross_pod: float
    cross_rail_via_nvlink: bool
    appliance_racks: int = 0


def half_split_units(nodes: int, su: int) -> Iterator[tuple[int, int, int]]:
    """Leaf groups as (count, servers in the first half, servers in the second half).

    The first half is servers ``0 .. nodes // 2 - 1``; groups hold ``su`` consecutive servers.
    Run-length encoded: at most four tuples.
    """
    half, units = nodes // 2, math.ceil(nodes / su)
    below = half // su
    if below:
        yield below, su, 0
    if below < units:
        size = min(su, nodes - below * su)
        yield 1, half - below * su, size - (half - below * su)
    after = units - below - 1
    if after > 0:
        last = nodes - (units - 1) * su
        if after > 1:
            yield after - 1, 0, su
        yield 1, 0, last


def pooled_flow_links(leaves: list[tuple[int, int, int]], up: int | list[int]) -> int:
    """Max flow, in links, from first-half to second-half NICs through leaves and a non-blocking
    upper layer: every leaf exchanges min(a, b) locally, then each leaf's leftover sources (or
    sinks) use at most its uplinks (``up``: one count for all, or one per entry of ``leaves``).
    ``leaves`` holds (count, a, b) per identical leaf."""
    ups = up if isinstance(up, list) else [up] * len(leaves)
    local = sum(c * min(a, b) for c, a, b in leaves)
    send = sum(c * min(a - min(a, b), u) for (c, a, b), u in zip(leaves, ups))
    recv = sum(c * min(b - min(a, b), u) for (c, a, b), u in zip(leaves, ups))
    return local + min(send, recv)


def _bisection_Bps(plan: sizing.Plan) -> float:
    req = plan.request
    kind, rails = req.topology, req.nics_per_node
    units = list(half_split_units(req.nodes, plan.su_nodes))
    up = plan.leaf_up if plan.tiers >= 2 else 0
    last = plan.last_up if plan.tiers >= 2 else 0
    # Only the last SU can be partial; its leaves have last_up uplinks.
    ups = [last if a + b < plan.su_nodes else up for _, a, b in units]
    if kind is TopologyKind.RAIL_OPTIMIZED:
        flow = pooled_flow_links([(c * rails, a, b) for c, a, b in units], ups)
    elif kind is TopologyKind.RAIL_ONLY:
        flow = rails * pooled_flow_links(units, ups)
    else:  # fat tree, single switch, cloud: a server's NICs share its leaf
        flow = pooled_flow_links([(c, a * rails, b * rails) for c, a, b in units], ups)
    return flow * req.nic_rate_Bps


def _hops(plan: sizing.Plan) -> tuple[int | None, int | None, int | None]:
    req = plan.request
    kind = req.topology
    pairs_in_su = min(plan.su_nodes, req.nodes) >= 2
    same = 1 if pairs_in_su else None
    if not pairs_in_su or req.nics_per_node < 2:
        cross_rail = None
    elif kind is TopologyKind.RAIL_OPTIMIZED:
        cross_rail = 3  # leaf of rail i, spine, leaf of rail j
    else:
        cross_rail = 1  # same leaf; rail-only: NVLink to the right rail, then the same leaf
    cross_su = None
    if plan.sus >= 2:
        cross_su = 3 if plan.tiers == 2 else 5
    return same, cross_rail, cross_su


def _media_counts(pairs: list[tuple[MediaClass, int]]) -> tuple[tuple[MediaClass, int], ...]:
    out: dict[MediaClass, int] = {}
    for media, n in pairs:
        if n:
            out[media] = out.get(media, 0) + n
    return tuple(sorted(out.items(), key=lambda kv: kv[0].value))


def summarize(request: FabricRequest) -> FabricSummary:
    """Closed-form summary of the fabric ``request`` describes (no graph is built).

    Model: the sizing rules of :mod:`designer.topology.sizing` (SuperPOD RA-11333-001 section on
    the compute fabric, network.md 5.2-5.4; Al-Fares et al., SIGCOMM 2008; Rail-only,
    arXiv:2307.12169) and the floor layout of :mod:`designer.topology.layout`.

    Args:
        request: The fabric to summarise.

    Returns:
        The summary; every field is documented on :class:`FabricSummary`.

    Raises:
        TopologyError: The fabric cannot be built (raised when the request is made).

    Examples:
        >>> from designer.topology.request import FabricRequest
        >>> s = summarize(FabricRequest("rail_optimized", 127, 8, 8, 50e9, 64, 50e9, ports_per_cage=2,
        ...                             node_cages=4, reserved_leaf_ports=4))
        >>> (s.leaves, s.spines, s.node_leaf_links + s.reserved_links, s.leaf_spine_links)
        (32, 16, 1020, 1024)
        >>> (s.switch_transceivers, s.node_transceivers)
        (1536, 508)
    """
    plan = sizing.plan_fabric(request)
    lay = layout_mod.layout_for(plan)
    req = request
    p, rate = req.ports_per_cage, req.nic_rate_Bps
    leaf_g, spine_g, core_g = groups.leaf_groups(plan), groups.spine_groups(plan), groups.core_groups(plan)
    up = plan.leaf_up if plan.tiers >= 2 else 0
    last_up = plan.last_up if plan.tiers >= 2 else 0
    last_leaves = plan.leaves // plan.sus if plan.tiers >= 2 else 0  # the last SU's, all fabrics
    cloud = plan.tiers == 0
    node_links = 0 if cloud else req.endpoints
    leaf_spine = (plan.leaves - last_leaves) * up + last_leaves * last_up
    spine_core = sum(c * u for c, _, u in spine_g)
    nm, im = lay.node_leaf_media, lay.inter_switch_media

    tiers: list[TierLinks] = []
    if not cloud:
        tiers.append(TierLinks(NODE_LEAF, node_links, rate, lay.node_leaf_m, nm))
    if leaf_spine:
        tiers.append(TierLinks(LEAF_SPINE, leaf_spine, rate, lay.inter_switch_m, im))
    if spine_core:
        tiers.append(TierLinks(SPINE_CORE, spine_core, rate, lay.inter_switch_m, im))
    reserved = req.reserved_leaf_ports if not cloud else 0
    cables = _media_counts([(nm, node_links + reserved), (im, leaf_spine + spine_core)])

    cages = [(nm, sum(c * math.ceil((n + r) / p) for c, n, r in leaf_g)),
             (im, (plan.leaves - last_leaves) * math.ceil(up / p) + last_leaves * math.ceil(last_up / p)),
             (im, sum(c * (math.ceil(d / p) + math.ceil(u / p)) for c, d, u in spine_g)),
             (im, sum(c * math.ceil(d / p) for c, d in core_g))]
    by_media = _media_counts(cages)
    optics = tuple((m, n) for m, n in by_media if m in _OPTICAL)

    same, cross_rail, cross_su = _hops(plan)
    known = [h for h in (same, cross_rail, cross_su) if h is not None]
    leaf_ratio = 1.0
    if up:  # the last SU's leaves (its NICs on last_up uplinks) and the full ones
        full_nics = [n for _, n, _ in leaf_g if n == plan.leaf_down]
        leaf_ratio = max([n / up for n in full_nics] + [groups.leaf_nics(plan, plan.leaves - 1) / last_up])
    spine_ratio = max((d / u for _, d, u in spine_g), default=1.0) if plan.tiers == 3 else 1.0
    cross_leaf = max(1.0, leaf_ratio)
    return FabricSummary(
        request=req,
        topology=req.topology,
        tiers=plan.tiers,
        nodes=req.nodes,
        gpus=req.gpus,
        endpoints=req.endpoints,
        su_nodes=plan.su_nodes,
        sus=plan.sus,
        pods=0 if cloud else plan.pods,
        leaf_downlinks=plan.leaf_down,
        leaf_uplinks=up if plan.sus > 1 else last_up,
        leaves=plan.leaves,
        spines=plan.spines,
        cores=plan.cores,
        switches=plan.leaves + plan.spines + plan.cores,
        node_leaf_links=node_links,
        leaf_spine_links=leaf_spine,
        spine_core_links=spine_core,
        reserved_links=reserved,
        tier_links=tuple(tiers),
        cables=sum(n for _, n in cables),
        cables_by_media=cables,
        switch_cages=sum(n for _, n in by_media),
        switch_transceivers=sum(n for _, n in optics),
        switch_transceivers_by_media=optics,
        node_transceivers=req.nodes * req.cages_per_node if nm in _OPTICAL else 0,
        node_media=nm,
        server_racks=lay.server_racks,
        switch_racks=lay.switch_racks,
        injection_Bps=req.nics_per_node * rate / req.gpus_per_node,
        bisection_Bps=_bisection_Bps(plan),
        hops_same_rail_su=same,
        hops_cross_rail_su=cross_rail,
        hops_cross_su=cross_su,
        hops_max=max(known, default=0),
        leaf_oversubscription=leaf_ratio,
        spine_oversubscription=spine_ratio,
        oversub_same_leaf=1.0,
        oversub_cross_leaf=cross_leaf,
        oversub_cross_su=cross_leaf,
        oversub_cross_pod=cross_leaf * max(1.0, spine_ratio),
        cross_rail_via_nvlink=req.topology is TopologyKind.RAIL_ONLY and req.nics_per_node >= 2,
        appliance_racks=lay.appliance_racks,
    )
