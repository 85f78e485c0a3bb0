"""Measure a built fabric graph: the same :class:`FabricSummary` as the closed form, from the graph.

Counts come from node roles and edge ``links``; hops from breadth-first search between the
switches NICs attach to; bisection from a max-flow/min-cut between the two halves of the servers;
oversubscription from each switch's down- and uplinks. Meant for graphs of up to a few thousand
NICs (tests and checks of the closed form); its cost grows with the square of the leaf count.
"""

from __future__ import annotations

__all__ = ["summarize_graph", "switch_ports_by_direction"]

import math
from collections import defaultdict
from typing import TYPE_CHECKING

from designer.topology import sizing
from designer.topology.request import FabricRequest
from designer.topology.schema import (
    CAGE, LEAF_SPINE, LENGTH, LINKS, MEDIA, NODE, NODE_CLOUD, NODE_LEAF, POD, RACK, RAIL,
    RATE, RESERVED, ROLE, ROLE_CLOUD, ROLE_CORE, ROLE_LEAF, ROLE_NIC, ROLE_SPINE, ROLE_SWITCH,
    SPINE_CORE, SU, SWITCH_ROLES, TIER, MediaClass, TopologyKind,
)
from designer.topology.summary import FabricSummary, TierLinks

if TYPE_CHECKING:  # networkx takes ~0.1 s to import; only the graph functions load it
    import networkx as nx


_OPTICAL = (MediaClass.MULTIMODE.value, MediaClass.SINGLE_MODE.value)


def switch_ports_by_direction(g: nx.Graph, switch: str) -> dict[tuple[str, str], int]:
    """Ports a switch uses, keyed by (``"down"`` or ``"up"``, media); reserved ports count as
    downlinks on the media of the switch's NIC links."""
    tier = g.nodes[switch][TIER]
    used: dict[tuple[str, str], int] = defaultdict(int)
    for _, other, e in g.edges(switch, data=True):
        way = "down" if g.nodes[other][TIER] < tier else "up"
        used[(way, e[MEDIA])] += e[LINKS]
    reserved = g.nodes[switch][RESERVED]
    if reserved:
        media = next((m for (w, m) in used if w == "down"), MediaClass.MULTIMODE.value)
        used[("down", media)] += reserved
    return dict(used)


def _hops(g: nx.Graph, nics: list[str], rail_only: bool, rails: int) -> tuple[int | None, int | None, int | None]:
    """Worst switch hops per class, over pairs of NICs of different servers."""
    import networkx as nx

    groups: dict[tuple[str, int, int], set[int]] = defaultdict(set)
    for nic in nics:
        a = g.nodes[nic]
        (attach,) = g.neighbors(nic)
        groups[(attach, a[SU], a[RAIL])].add(a[NODE])
    switches = g.subgraph(n for n, d in g.nodes(data=True) if d[ROLE] != ROLE_NIC)
    attach_points = sorted({key[0] for key in groups})
    dist = {a: nx.single_source_shortest_path_length(switches, a) for a in attach_points}
    best: dict[str, int] = {}
    keys = sorted(groups)
    for i, k1 in enumerate(keys):
        for k2 in keys[i:]:
            n1, n2 = groups[k1], groups[k2]
            distinct = len(n1) >= 2 if k1 == k2 else not (len(n1) == 1 and n1 == n2)
            d = dist[k1[0]].get(k2[0])
            if not distinct or d is None:
                continue
            if k1[2] != k2[2] and rail_only:
                continue  # measured on the destination's rail after NVLink, as a same-rail pair
            cls = ("same" if k1[2] == k2[2] else "cross_rail") if k1[1] == k2[1] else "cross_su"
            best[cls] = max(best.get(cls, 0), d + 1)
    same = best.get("same")
    cross_rail = (same if rails >= 2 else None) if rail_only else best.get("cross_rail")
    return same, cross_rail, best.get("cross_su")


def _bisection_links(g: nx.Graph, nics: list[str], nodes: int) -> int:
    """Max flow, in links, from NICs of servers 0 .. nodes//2 - 1 to the other servers' NICs."""
    import networkx as nx

    half = nodes // 2
    if half == 0:
        return 0
    flow = nx.DiGraph()
    for u, v, e in g.edges(data=True):
        flow.add_edge(u, v, capacity=e[LINKS])
        flow.add_edge(v, u, capacity=e[LINKS])
    for nic in nics:
        if g.nodes[nic][NODE] < half:
            flow.add_edge("_source", nic, capacity=1)
        else:
            flow.add_edge(nic, "_sink", capacity=1)
    return int(nx.maximum_flow_value(flow, "_source", "_sink"))


def _media_counts(counts: dict[str, int]) -> tuple[tuple[MediaClass, int], ...]:
    return tuple(sorted(((MediaClass(m), n) for m, n in counts.items() if n), key=lambda kv: kv[0].value))


def summarize_graph(g: nx.Graph) -> FabricSummary:
    """Measure the :class:`FabricSummary` of a graph made by :func:`build_graph`.

    Design parameters that a graph cannot show (``su_nodes``, ``leaf_downlinks``) come from the
    request's sizing plan; everything else is measured.

    Args:
        g: A fabric graph; ``g.graph["request"]`` must hold its :class:`FabricRequest`.

    Returns:
        The measured summary.
    """
    import networkx as nx

    req: FabricRequest = g.graph["request"]
    plan = sizing.plan_fabric(req)
    nodes = dict(g.nodes(data=True))
    by_role: dict[str, list[str]] = defaultdict(list)
    for n, d in nodes.items():
        by_role[d[ROLE]].append(n)
    nics = sorted(by_role[ROLE_NIC])
    switches = [n for n in sorted(nodes) if nodes[n][ROLE] in SWITCH_ROLES]
    leaves = sorted(by_role[ROLE_LEAF] + by_role[ROLE_SWITCH])
    cloud = bool(by_role[ROLE_CLOUD])

    per_tier: dict[str, int] = defaultdict(int)
    length: dict[str, float] = defaultdict(float)
    media_of: dict[str, str] = {}
    rate_of: dict[str, float] = {}
    cables: dict[str, int] = defaultdict(int)
    for _, _, e in g.edges(data=True):
        t = e["tier"]
        per_tier[t] += e[LINKS]
        if e[LENGTH] >= length[t]:
            length[t], media_of[t] = e[LENGTH], e[MEDIA]
        rate_of[t] = e[RATE]
        if t != NODE_CLOUD:
            cables[e[MEDIA]] += e[LINKS]
    reserved = sum(nodes[n][RESERVED] for n in leaves)
    if reserved:
        cables[media_of[NODE_LEAF]] += reserved
    tier_links = tuple(TierLinks(t, per_tier[t], rate_of[t], length[t], MediaClass(media_of[t]))
                       for t in (NODE_LEAF, LEAF_SPINE, SPINE_CORE) if per_tier[t])

    cages: dict[str, int] = defaultdict(int)
    for sw in switches:
        p = nodes[sw]["ports"] // nodes[sw]["cages"]
        for (_, media), used in switch_ports_by_direction(g, sw).items():
            cages[media] += math.ceil(used / p)
    node_cages = set()
    for nic in nics:
        (_, _, e), = g.edges(nic, data=True)
        if e[MEDIA] in _OPTICAL:
            node_cages.add((nodes[nic][NODE], nodes[nic][CAGE]))

    tiers = max((nodes[s][TIER] for s in switches), default=0)
    rail_only = req.topology is TopologyKind.RAIL_ONLY
    same, cross_rail, cross_su = _hops(g, nics, rail_only, req.nics_per_node)
    known = [h for h in (same, cross_rail, cross_su) if h is not None]

    def ratio(names: list[str]) -> float:
        worst = None
        for sw in names:
            ports = switch_ports_by_direction(g, sw)
            down = sum(v for (w, _), v in ports.items() if w == "down") - nodes[sw][RESERVED]
            up = sum(v for (w, _), v in ports.items() if w == "up")
            if up:
                worst = down / up if worst is None else max(worst, down / up)
        return 1.0 if worst is None else worst

    leaf_ratio = ratio(leaves)
    spine_ratio = ratio(by_role[ROLE_SPINE]) if tiers == 3 else 1.0
    cross_leaf = max(1.0, leaf_ratio)
    rails_per_component = [{nodes[n][RAIL] for n in comp if nodes[n][ROLE] == ROLE_NIC}
                           for comp in nx.connected_components(g)]
    server_racks = {nodes[n][RACK] for n in nics if nodes[n][RACK]}
    switch_racks = {nodes[n][RACK] for n in switches if nodes[n][RACK] not in server_racks}
    node_media = MediaClass(media_of.get(NODE_LEAF, media_of.get(NODE_CLOUD, MediaClass.PROVIDER.value)))
    optics = _media_counts({m: n for m, n in cages.items() if m in _OPTICAL})
    up_links = [sum(v for (w, _), v in switch_ports_by_direction(g, s).items() if w == "up") for s in leaves]
    server_ids = {nodes[n][NODE] for n in nics}
    nic_rate_total = sum(e[RATE] for nic in nics for _, _, e in g.edges(nic, data=True))
    return FabricSummary(
        request=req,
        topology=req.topology,
        tiers=tiers,
        nodes=len(server_ids),
        gpus=len(server_ids) * req.gpus_per_node,
        endpoints=len(nics),
        su_nodes=plan.su_nodes,
        sus=len({nodes[n][SU] for n in nics}),
        pods=len({nodes[n][POD] for n in leaves}) if not cloud else 0,
        leaf_downlinks=plan.leaf_down,
        leaf_uplinks=max(up_links, default=0),
        leaves=len(leaves),
        spines=len(by_role[ROLE_SPINE]),
        cores=len(by_role[ROLE_CORE]),
        switches=len(switches),
        node_leaf_links=per_tier[NODE_LEAF],
        leaf_spine_links=per_tier[LEAF_SPINE],
        spine_core_links=per_tier[SPINE_CORE],
        reserved_links=reserved,
        tier_links=tier_links,
        cables=sum(cables.values()),
        cables_by_media=_media_counts(cables),
        switch_cages=sum(cages.values()),
        switch_transceivers=sum(n for _, n in optics),
        switch_transceivers_by_media=optics,
        node_transceivers=len(node_cages),
        node_media=node_media,
        server_racks=len(server_racks),
        switch_racks=len(switch_racks),
        injection_Bps=nic_rate_total / (len(server_ids) * req.gpus_per_node),
        bisection_Bps=_bisection_links(g, nics, len(server_ids)) * req.nic_rate_Bps,
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
        cross_rail_via_nvlink=req.nics_per_node >= 2 and all(len(r) <= 1 for r in rails_per_component),
    )
