"""How many servers a request's topology, switch and ratio hold, by tier count.

The limits follow the sizing rules of :mod:`designer.topology.sizing` (network.md 5.2-5.3): one
switch holds k NIC ports, two tiers k leaves, three tiers k pods of P leaves; with reserved leaf
ports (the fabric manager's), each limit is the largest node count whose reserved ports fit.
"""

from __future__ import annotations

__all__ = ["Capacity", "capacity"]

import dataclasses
from dataclasses import dataclass

from designer.errors import TopologyError
from designer.topology.schema import TopologyKind
from designer.topology.sizing import Sizable, leaf_split, max_nodes, plan_fabric


@dataclass(frozen=True, slots=True)
class Capacity:
    """How many servers a request's topology, switch and ratio hold, by tier count.

    Attributes:
        su_nodes: Servers per scalable unit (leaf group).
        leaf_downlinks: Design NIC downlinks of a leaf (D).
        leaf_uplinks: Uplinks of a leaf in two or three tiers (u).
        spine_choices: Admissible two-tier spine counts per fabric: the divisors of u (network.md 5.3).
        max_nodes_1tier: Servers one switch (one per rail for rail-only) holds; 0 where the
            topology has no one-tier form (rail-optimized with several rails).
        max_nodes_2tier: Servers two tiers hold.
        max_nodes: Servers the topology holds at all (three tiers where it has them).
    """

    su_nodes: int
    leaf_downlinks: int
    leaf_uplinks: int
    spine_choices: tuple[int, ...]
    max_nodes_1tier: int
    max_nodes_2tier: int
    max_nodes: int


def capacity(req: Sizable) -> Capacity:
    """Size limits of ``req``'s topology, switch and ratio; ``req.nodes`` is ignored.

    Rules as in :func:`plan_fabric`: one switch holds k NIC ports; two tiers hold k leaves; three
    tiers k pods of P leaves (network.md 5.2-5.3). Reserved ports need free leaf ports, which full
    fabrics do not have: each limit is then the largest node count whose reserved ports fit with
    no more tiers, as the SuperPOD removes a DGX for its UFM ports (256 -> 255 DGX in two tiers).

    Raises:
        TopologyError: A leaf cannot take one server (or the request is cloud, which has no limit).
    """
    kind, rails, k = req.topology, req.nics_per_node, req.switch_ports
    if kind is TopologyKind.CLOUD:
        raise TopologyError("a cloud fabric has no switch to size")
    if kind is TopologyKind.SINGLE_SWITCH:
        one = (k - req.reserved_leaf_ports) // rails
        return Capacity(one, k, 0, (), one, one, one)
    fat = kind is TopologyKind.FAT_TREE
    given = None if req.su_nodes is None else req.su_nodes * (rails if fat else 1)
    down, up = leaf_split(req, rails if fat else 1, given)
    su = down // rails if fat else down
    per_su = rails if kind is TopologyKind.RAIL_OPTIMIZED else 1
    choices = tuple(d for d in range(1, up + 1) if up % d == 0)
    if kind is TopologyKind.RAIL_ONLY:
        one = k
    else:
        one = su if per_su == 1 else 0
    two = (k // per_su) * su
    p = req.ports_per_cage
    pod = ((k // p // 2) * p // per_su) * per_su
    three = max_nodes(req, su, pod, per_su) if pod else two
    two, three = max(one, two), max(one, two, three)
    if req.reserved_leaf_ports:
        one, two, three = (_with_reserved(req, n, tiers) for n, tiers in ((one, 1), (two, 2), (three, 3)))
    return Capacity(su, down, up, choices, one, two, three)


def _with_reserved(req: Sizable, limit: int, tiers: int) -> int:
    """The largest node count up to ``limit`` whose reserved ports fit in at most ``tiers`` tiers
    (0 when none does); a node less frees one port on each of its leaves."""
    for n in range(limit, 0, -1):
        try:  # a request sizes itself when it is made (a FabricRequest, a dataclass)
            if plan_fabric(dataclasses.replace(req, nodes=n)).tiers <= tiers:
                return n
        except TopologyError:
            pass
    return 0
