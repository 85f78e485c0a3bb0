"""Invariants every built fabric must hold; a violation is a bug in a builder or a bad graph."""

from __future__ import annotations

__all__ = ["check_graph", "graph_problems"]

import math
from collections import defaultdict
from typing import TYPE_CHECKING

from designer.errors import TopologyError
from designer.topology.measure import switch_ports_by_direction
from designer.topology.request import FabricRequest
from designer.topology.schema import (
    CAGES, LINK_TIERS, LINKS, MEDIA, NODE, PORTS, RAIL, RATE, RESERVED, ROLE, ROLE_CLOUD, ROLE_NIC,
    ROLES, SWITCH_ROLES, TIER, MediaClass, TopologyKind,
)

if TYPE_CHECKING:  # networkx takes ~0.1 s to import; only the graph functions load it
    import networkx as nx

_EPS = 1e-9
_MEDIA = {m.value for m in MediaClass}


def graph_problems(g: nx.Graph) -> list[str]:
    """Every invariant the graph breaks, as one message each (empty when it holds them all).

    Checked: the attribute schema; every server has one NIC per rail and each NIC one link to a
    switch (or the cloud); rail-optimized NICs land on their rail's leaf; no switch uses more ports
    or cages than it has; every leaf's oversubscription is at most the requested one; the fabric is
    connected (rail-only: each rail is, and no two rails are joined).
    """
    import networkx as nx

    req: FabricRequest = g.graph["request"]
    problems: list[str] = []
    nics: dict[int, set[int]] = defaultdict(set)
    for n, d in g.nodes(data=True):
        if d.get(ROLE) not in ROLES:
            problems.append(f"{n}: unknown role {d.get(ROLE)!r}")
            continue
        if d[ROLE] != ROLE_NIC:
            continue
        nics[d[NODE]].add(d[RAIL])
        attached = list(g.neighbors(n))
        if len(attached) != 1 or g.nodes[attached[0]][ROLE] not in (*SWITCH_ROLES, ROLE_CLOUD):
            problems.append(f"{n}: attached to {attached}, expected exactly one switch")
        elif req.topology is TopologyKind.RAIL_OPTIMIZED and g.nodes[attached[0]][RAIL] != d[RAIL]:
            problems.append(f"{n}: rail {d[RAIL]} NIC on {attached[0]} (rail {g.nodes[attached[0]][RAIL]})")
    if len(nics) != req.nodes or any(r != set(range(req.nics_per_node)) for r in nics.values()):
        problems.append(f"expected {req.nodes} servers with NICs on rails 0..{req.nics_per_node - 1}")
    for u, v, e in g.edges(data=True):
        if e.get("tier") not in LINK_TIERS or e.get(MEDIA) not in _MEDIA or e.get(LINKS, 0) < 1:
            problems.append(f"{u}-{v}: bad edge attributes {e}")
        elif abs(e[RATE] - req.nic_rate_Bps) >= 1.0:
            problems.append(f"{u}-{v}: rate {e[RATE]} B/s, expected {req.nic_rate_Bps}")
    for n, d in g.nodes(data=True):
        if d.get(ROLE) not in SWITCH_ROLES:
            continue
        ports = switch_ports_by_direction(g, n)
        used = sum(ports.values())
        per_cage = d[PORTS] // d[CAGES]
        cages = sum(math.ceil(v / per_cage) for v in ports.values())
        if used > d[PORTS] or cages > d[CAGES]:
            problems.append(f"{n}: uses {used} ports in {cages} cages, has {d[PORTS]} in {d[CAGES]}")
        down = sum(v for (w, _), v in ports.items() if w == "down") - d[RESERVED]
        up = sum(v for (w, _), v in ports.items() if w == "up")
        if d[TIER] == 1 and up and down / up > req.oversubscription + _EPS:
            problems.append(f"{n}: {down}:{up} exceeds {req.oversubscription:g}:1")
    if req.topology is TopologyKind.RAIL_ONLY:
        for comp in nx.connected_components(g):
            rails = {g.nodes[n][RAIL] for n in comp if g.nodes[n][ROLE] == ROLE_NIC}
            if len(rails) > 1:
                problems.append(f"rails {sorted(rails)} are joined; rail-only rails must stay apart")
        found = nx.number_connected_components(g)
        if found != req.nics_per_node:
            problems.append(f"expected {req.nics_per_node} rail fabrics, found {found}")
    elif g.number_of_nodes() and not nx.is_connected(g):
        problems.append("the fabric is not connected")
    return problems


def check_graph(g: nx.Graph) -> None:
    """Raise if the graph breaks an invariant listed in :func:`graph_problems`.

    Raises:
        TopologyError: With every broken invariant, one per line.
    """
    problems = graph_problems(g)
    if problems:
        shown = problems[:20]
        more = f"\n... and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise TopologyError("fabric graph breaks its invariants:\n" + "\n".join(shown) + more)
