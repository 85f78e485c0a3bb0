"""Graph builders: single switch, fat tree, rail-optimized, rail-only and cloud fabrics.

Every builder follows the :class:`~designer.topology.sizing.Plan` of the request and writes the
attribute schema of :mod:`designer.topology.schema`. NICs are graph nodes (one per compute port);
servers are not: a NIC's ``node`` attribute names its server, so no path can transit a server and
rail-only rails stay disconnected, as they are on the wire (cross-rail traffic uses NVLink).
"""

from __future__ import annotations

__all__ = ["build_graph"]

from typing import TYPE_CHECKING, Iterator

from designer.topology import groups, sizing
from designer.topology.layout import Layout, groups_per_row, layout_for, switches_per_rack
from designer.topology.request import FabricRequest
from designer.topology.schema import (
    CAGE, CAGES, LEAF_SPINE, LENGTH, LINKS, MEDIA, NODE, NODE_CLOUD, NODE_LEAF, NONE, PLANE, POD,
    PORTS, RACK, RAIL, RATE, RESERVED, ROLE, ROLE_CLOUD, ROLE_CORE, ROLE_LEAF, ROLE_NIC,
    ROLE_SPINE, ROLE_SWITCH, SPINE_CORE, SU, TIER, MediaClass, TopologyKind, core_name, leaf_name,
    nic_name, spine_name,
)

if TYPE_CHECKING:  # networkx takes ~0.1 s to import; only the graph functions load it
    import networkx as nx


def _attrs(role: str, tier: int, *, rail: int = NONE, su: int = NONE, pod: int = NONE,
           plane: int = NONE, node: int = NONE, cage: int = NONE, ports: int = 0, cages: int = 0,
           reserved: int = 0, rack: str = "") -> dict:
    return {ROLE: role, TIER: tier, RAIL: rail, SU: su, POD: pod, PLANE: plane, NODE: node,
            CAGE: cage, PORTS: ports, CAGES: cages, RESERVED: reserved, RACK: rack}


def _edge(tier: str, links: int, rate: float, media: MediaClass, length: float) -> dict:
    return {RATE: rate, LINKS: links, "tier": tier, MEDIA: media.value, LENGTH: length}


def _server_rack(node: int, req: FabricRequest) -> str:
    return f"rack-{node // req.servers_per_rack:04d}"


class _CentralRacks:
    """Assigns spines, then cores, to central network racks in build order."""

    def __init__(self, per_rack: int):
        self.per_rack, self.placed = per_rack, 0

    def next(self) -> str:
        rack = f"net-core-{self.placed // self.per_rack:03d}"
        self.placed += 1
        return rack


def _leaf_names(plan: sizing.Plan) -> list[str]:
    req = plan.request
    if req.topology is TopologyKind.SINGLE_SWITCH:
        return ["switch"]
    per_group = plan.leaves // plan.sus
    if req.topology is TopologyKind.FAT_TREE:
        return [leaf_name(i, plan.leaves) for i in range(plan.leaves)]
    return [leaf_name(i, plan.leaves, su=i // per_group, rail=i % per_group, sus=plan.sus, rails=per_group)
            for i in range(plan.leaves)]


def _leaves(plan: sizing.Plan, lay: Layout, names: list[str]) -> Iterator[tuple[str, dict]]:
    req = plan.request
    k, p = req.switch_ports, req.ports_per_cage
    per_group = plan.leaves // plan.sus
    gpr, per_rack = groups_per_row(plan), switches_per_rack(plan)
    reserved = dict(plan.reserved)
    rail_design = req.topology in (TopologyKind.RAIL_OPTIMIZED, TopologyKind.RAIL_ONLY)
    for i, name in enumerate(names):
        group = i // per_group
        if lay.top_of_rack:
            rack = _server_rack(group * plan.su_nodes, req)
        else:
            row = group // gpr
            rack = f"net-row{row:03d}-{(i - row * gpr * per_group) // per_rack:02d}"
        _, index = groups.leaf_fabric(plan, i)
        role = ROLE_SWITCH if req.topology is TopologyKind.SINGLE_SWITCH else ROLE_LEAF
        yield name, _attrs(role, 1, rail=i % per_group if rail_design else NONE, su=group,
                           pod=index // plan.leaves_per_pod, ports=k, cages=k // p,
                           reserved=reserved.get(i, 0), rack=rack)


def _nics(plan: sizing.Plan, lay: Layout, names: list[str]) -> Iterator[tuple[str, str, dict, dict]]:
    """(NIC name, leaf name, NIC attributes, edge attributes) for every NIC port."""
    req = plan.request
    n, rails, su = req.nodes, req.nics_per_node, plan.su_nodes
    per_cage = req.node_ports_per_cage
    edge = _edge(NODE_LEAF, 1, req.nic_rate_Bps, lay.node_leaf_media, lay.node_leaf_m)
    rail_design = req.topology in (TopologyKind.RAIL_OPTIMIZED, TopologyKind.RAIL_ONLY)
    per_group = plan.leaves // plan.sus
    for node in range(n):
        group = node // su
        rack = _server_rack(node, req)
        for rail in range(rails):
            leaf = group * per_group + rail if rail_design else group
            attrs = _attrs(ROLE_NIC, 0, rail=rail, su=group, node=node, cage=rail // per_cage, rack=rack)
            yield nic_name(node, rail, n, rails), names[leaf], attrs, edge


def _fabric_leaves(plan: sizing.Plan, names: list[str], fabric: int) -> list[str]:
    if plan.request.topology is TopologyKind.RAIL_ONLY:
        return names[fabric::plan.request.nics_per_node]
    return names


def _add_upper(g: nx.Graph, plan: sizing.Plan, lay: Layout, names: list[str]) -> None:
    req = plan.request
    k, p, rate = req.switch_ports, req.ports_per_cage, req.nic_rate_Bps
    s, c, pods = plan.spines_per_pod, plan.cores_per_plane, plan.pods
    index = {name: i for i, name in enumerate(names)}
    racks = _CentralRacks(switches_per_rack(plan))
    rail_only = req.topology is TopologyKind.RAIL_ONLY
    media, length = lay.inter_switch_media, lay.inter_switch_m
    for fabric in range(plan.fabrics):
        rail = fabric if rail_only else NONE
        kw = {"rail": rail, "rails": req.nics_per_node}
        leaves = _fabric_leaves(plan, names, fabric)
        spines: list[list[str]] = []
        for pod in range(pods):
            row = []
            for j in range(s):
                name = spine_name(j, s, pod=pod if plan.tiers == 3 else NONE, pods=pods, **kw)
                g.add_node(name, **_attrs(ROLE_SPINE, 2, rail=rail, pod=pod, plane=j, ports=k,
                                          cages=k // p, rack=racks.next()))
                row.append(name)
            spines.append(row)
            first = pod * plan.leaves_per_pod
            for leaf in leaves[first:first + groups.pod_leaves(plan, pod)]:
                # every leaf splits its uplinks evenly over the spines (a partial SU's are fewer)
                per_spine = groups.leaf_uplinks(plan, index[leaf]) // s
                g.add_edges_from((leaf, sp, _edge(LEAF_SPINE, per_spine, rate, media, length)) for sp in row)
        if plan.tiers < 3:
            continue
        for j in range(s):
            for t in range(c):
                core = core_name(j * c + t, s * c, **kw)
                g.add_node(core, **_attrs(ROLE_CORE, 3, rail=rail, plane=j, ports=k, cages=k // p,
                                          rack=racks.next()))
                for pod in range(pods):
                    links = groups.spine_up(plan, pod) // c
                    g.add_edge(spines[pod][j], core, **_edge(SPINE_CORE, links, rate, media, length))


def _build_cloud(g: nx.Graph, req: FabricRequest) -> None:
    g.add_node("cloud", **_attrs(ROLE_CLOUD, 1, su=0, pod=0))
    edge = _edge(NODE_CLOUD, 1, req.nic_rate_Bps, MediaClass.PROVIDER, 0.0)
    for node in range(req.nodes):
        for rail in range(req.nics_per_node):
            name = nic_name(node, rail, req.nodes, req.nics_per_node)
            g.add_node(name, **_attrs(ROLE_NIC, 0, rail=rail, su=0, node=node, cage=rail))
            g.add_edge(name, "cloud", **edge)


def build_graph(request: FabricRequest) -> nx.Graph:
    """Build the fabric graph of ``request``.

    Node and edge attributes follow :mod:`designer.topology.schema`. Parallel links between two
    switches are one edge with a ``links`` count. Node names are deterministic and sort in build
    order (``node-0012-nic3``, ``leaf-su00-r3``, ``spine-07``, ``core-003``).

    Model: SuperPOD rail-optimized fat tree (NVIDIA RA-11333-001), two- and three-tier folded Clos
    (Al-Fares et al., SIGCOMM 2008), rail-only (Wang et al., arXiv:2307.12169); sizing rules in
    :mod:`designer.topology.sizing`.

    Args:
        request: The fabric to build.

    Returns:
        An undirected ``networkx.Graph``; ``graph["request"]`` holds ``request``.

    Raises:
        TopologyError: The fabric cannot be built (raised when the request is made).

    Examples:
        >>> from designer.topology.request import FabricRequest
        >>> g = build_graph(FabricRequest("rail_optimized", 4, 8, 8, 50e9, 64, 50e9, ports_per_cage=2))
        >>> sorted(g.neighbors("node-0002-nic3"))
        ['leaf-su00-r3']
    """
    import networkx as nx

    plan = sizing.plan_fabric(request)
    g = nx.Graph(request=request, topology=request.topology.value)
    if plan.tiers == 0:
        _build_cloud(g, request)
        return g
    lay = layout_for(plan)
    names = _leaf_names(plan)
    g.add_nodes_from(_leaves(plan, lay, names))
    for nic, leaf, attrs, edge in _nics(plan, lay, names):
        g.add_node(nic, **attrs)
        g.add_edge(nic, leaf, **edge)
    if plan.tiers >= 2:
        _add_upper(g, plan, lay, names)
    return g
