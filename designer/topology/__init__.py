"""Fabric topologies: requests, closed-form summaries, graphs, invariants and network BOM lines.

Public API::

    request = request_for(server, nic, switch, "rail_optimized", nodes=128)
    summary = summarize(request)            # closed form, no graph: for every candidate
    limits = capacity(request)              # servers one, two and three tiers hold
    graph = build_graph(request)            # networkx graph, for the chosen design and tests
    check_graph(graph)                      # invariants (ports, cages, attachment, connectivity)
    measured = summarize_graph(graph)       # the same FabricSummary, measured on the graph
    node = server_port(server, nic, Protocol.INFINIBAND)   # a server's compute cage in use
    lines = fabric_bom(summary, switch, catalog, node)  # every link built end to end (links.py)

The graph attribute schema (node ``role``, ``tier``, ``rail``, ``su``...; edge ``rate_Bps``,
``links``, ``tier``, ``media``, ``length_m``) is documented and defined in
:mod:`designer.topology.schema`; builders and tests use those constants.
"""

from designer.topology import schema
from designer.topology.build import build_graph
from designer.topology.checks import check_graph, graph_problems
from designer.topology.links import LinkParts, build_link, link_problem
from designer.topology.materials import ROLE_MANAGER, fabric_bom, manager_leaf_ports
from designer.topology.ports import Port, nic_port, server_port, switch_port
from designer.topology.measure import summarize_graph
from designer.topology.request import FabricRequest, request_for, request_for_cloud
from designer.topology.capacity import Capacity, capacity
from designer.topology.schema import (
    LEAF_SPINE, LINK_TIERS, NODE_CLOUD, NODE_LEAF, ROLE_CLOUD, ROLE_CORE, ROLE_LEAF, ROLE_NIC,
    ROLE_SPINE, ROLE_SWITCH, ROLES, SPINE_CORE, MediaClass, TopologyKind,
)
from designer.topology.summary import FabricSummary, TierLinks, summarize

__all__ = [
    "TopologyKind",
    "MediaClass",
    "FabricRequest",
    "FabricSummary",
    "TierLinks",
    "request_for",
    "request_for_cloud",
    "summarize",
    "Capacity",
    "capacity",
    "build_graph",
    "summarize_graph",
    "check_graph",
    "graph_problems",
    "fabric_bom",
    "manager_leaf_ports",
    "ROLE_MANAGER",
    "Port",
    "server_port",
    "nic_port",
    "switch_port",
    "LinkParts",
    "build_link",
    "link_problem",
    "schema",
    "ROLES",
    "ROLE_NIC",
    "ROLE_LEAF",
    "ROLE_SPINE",
    "ROLE_CORE",
    "ROLE_SWITCH",
    "ROLE_CLOUD",
    "LINK_TIERS",
    "NODE_LEAF",
    "LEAF_SPINE",
    "SPINE_CORE",
    "NODE_CLOUD",
]
