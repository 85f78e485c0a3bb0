"""A design's whole fabric graph for other tools: GraphML (Gephi, yEd, igraph) and node-link JSON (D3).

Unlike a drawing, which groups large tiers into boxes, an export holds every device and link the
topology builder makes (:func:`designer.topology.build_graph`), with the attributes of
:mod:`designer.topology.schema` (``role``, ``tier``, ``rail``, ``rack``, ``rate_Bps``, ``links``,
``media``, ``length_m``, ...). Both renderers are deterministic: nodes and edges in build order.
"""

from __future__ import annotations

__all__ = ["GRAPH_FORMATS", "fabric_graph", "render_graphml", "node_link_data"]

from typing import TYPE_CHECKING, Any

from designer.catalog.types import Catalog
from designer.design.model import Design
from designer.pictures.draw import fabric_request_for

if TYPE_CHECKING:  # networkx loads only when a graph is exported
    import networkx as nx

GRAPH_FORMATS = ("graphml", "json")


def fabric_graph(design: Design, catalog: Catalog) -> "nx.Graph":
    """The design's fabric as the builder makes it, with plain graph attributes in place of the
    request object: ``name`` (the spec's), ``deployment``, ``fabric``, ``topology``, ``server``,
    ``switch``, ``servers`` and ``gpus``.

    Raises:
        CatalogError: The catalog lacks a name the design uses.
        TopologyError: The catalog's entries no longer make the design's fabric.
    """
    from designer import topology

    g = topology.build_graph(fabric_request_for(design, catalog))
    s = design.system
    g.graph.clear()
    g.graph.update(name=design.spec_name, deployment=s.deployment, fabric=s.fabric, topology=s.topology,
                   server=s.server, switch=s.switch or "", servers=s.nodes, gpus=s.gpus)
    return g


def _plain(value: Any) -> Any:
    # GraphML holds str, int, float and bool; an enum value (a media class) is written as its text.
    return value.value if hasattr(value, "value") and not isinstance(value, (int, float, str, bool)) else value


def _plain_graph(g: "nx.Graph") -> "nx.Graph":
    h = g.__class__()
    h.graph.update({k: _plain(v) for k, v in g.graph.items()})
    h.add_nodes_from((n, {k: _plain(v) for k, v in d.items()}) for n, d in g.nodes(data=True))
    h.add_edges_from((a, b, {k: _plain(v) for k, v in d.items()}) for a, b, d in g.edges(data=True))
    return h


def render_graphml(g: "nx.Graph") -> str:
    """GraphML text of the fabric graph (attribute keys typed as networkx writes them)."""
    import networkx as nx

    return "\n".join(nx.generate_graphml(_plain_graph(g))) + "\n"


def node_link_data(g: "nx.Graph") -> dict[str, Any]:
    """The node-link form of the fabric graph (networkx ``node_link_data``: ``directed``,
    ``multigraph``, ``graph``, ``nodes`` with ``id``, ``links`` with ``source`` and ``target``);
    the command line writes it with ``format_version`` first, like every JSON document."""
    import networkx as nx

    return nx.node_link_data(_plain_graph(g), edges="links")
