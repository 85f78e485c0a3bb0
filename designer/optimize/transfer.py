"""What a design on one candidate of a server costs on another: the bound of
:mod:`designer.optimize.kind_bounds` carried from its reference member R to every member B.

Two candidates of one server differ only in their compute fabric: the same servers, racks of
servers, busy power and file system (the unit costs :data:`SAME_SERVER` must agree), and the same
storage fabric (its parts are the server's storage ports and the file system's, :data:`SAME_STORAGE`).
A design on B of n nodes and A file-system units costs

    C_B = S(n) + K_B(n) + St(n, A) + M_B(n, A) + (busy energy, cloud),

S the servers alone (:func:`servers_cost`), K the compute fabric with its racks and the fabric
manager's parts, St the file system and its storage fabric, M the in-band and out-of-band
networks. M is not the same on both: the out-of-band network manages the compute switches and
the storage switches, and the in-band network takes its uplinks, so the difference of the two
depends on A through the storage switches, by about one switch of each rounding
(``tests/optimize/test_transfer.py`` shows a case). So the reference program leaves R's
management networks out (:func:`without_management`): its bound P0 is below the cost of B's
design moved to R without them, S(n) + K_R(n) + St(n, A) + (the same), and

    C_B >= P0 - K_R(n) + K_B(n) + M_B(n, A) >= P0 - (U_R(n) - L_B(n)),

with U_R(n) = K_R(n) + St(n, A0) what R costs at n beyond its servers without the management
networks, exactly as the program prices it (:func:`fabric_above`), and L_B(n) = K_B(n) + St(n, A0)
+ M_B(n, A0) <= B's own (:meth:`~designer.optimize.workspace.Workspace.program_cost` less S),
A0 the file system's baseline need (every form is non-decreasing in A, and St cancels at any A).
Both are non-decreasing in n, so over a step [a, b] of sizes U_R(b) - L_B(a) bounds the
difference (:func:`fabric_gap`).
"""

from __future__ import annotations

__all__ = ["servers_cost", "top_nodes", "fabric_above", "fabric_gap", "without_management", "SAME_SERVER"]

import math
from dataclasses import replace

from designer.errors import CatalogError, TopologyError
from designer.optimize import bounds, ownership, pricing
from designer.optimize import networks as network_costs
from designer.optimize.problem import OnPremSystem
from designer.optimize.workspace import Workspace
from designer.topology import networks as nw

# Unit costs that must be equal for a design on one member to cost the same on another but for
# the fabric: the servers, their racks, power and file system (as designer.optimize.dominance).
SAME_SERVER = ("node_usd", "node_w", "node_ru", "servers_per_rack", "rack_units", "rack_usd", "node_support",
               "node_spares", "node_training_w", "node_idle_w", "owned_nodes", "storage")
# The parts of the storage fabric: equal on both, it costs the same at every (n, A).
SAME_STORAGE = ("storage_ports", "storage_rate_Bps", "appliance_ports", "appliance_rate_Bps", "storage_switch",
                "storage_k", "storage_node_link", "storage_appliance_link", "storage_uplink")


def servers_cost(ws: Workspace, key: str, nodes: int) -> float:
    """The servers of ``nodes`` nodes of ``key`` alone over the horizon (no switch, link, rack,
    file system or network): :func:`~designer.optimize.ownership.onprem_cost_usd` with every
    other count 0, the same for every candidate of the server and below each one's program cost."""
    cand = ws.by_key[key]
    memo = ("servers", cand.server, nodes)
    if memo not in ws.floors:
        bare = ws.floors.get(("bare servers", cand.server))
        if bare is None:
            try:
                shape = pricing.fabric_shape(cand, ws.catalog, ws.facility)
                costs = pricing.unit_costs(cand, ws.catalog, ws.facility, 1, owned=ws.task.owned)
            except (CatalogError, TopologyError):
                return 0.0
            bare = ws.floors[("bare servers", cand.server)] = OnPremSystem(
                cand, shape, replace(costs, node_link_usd=0.0, node_link_w=0.0, rack_usd=0.0, storage=None,
                                     networks=None))
        ws.floors[memo] = ownership.onprem_cost_usd(bare, ws.economics, nodes=nodes, switches=0, ls_links=0,
                                                    sx_links=0, racks=0)
    return ws.floors[memo]


def top_nodes(ws: Workspace, key: str, incumbent: float) -> int:
    """N*: the fewest nodes whose servers alone (:func:`servers_cost`) cost at least
    ``incumbent``, or the candidate's largest size plus one when none does (bisection: the cost
    is non-decreasing in the nodes)."""
    hi = ws.max_nodes(ws.by_key[key])
    if hi < 1 or servers_cost(ws, key, hi) < incumbent:
        return hi + 1
    lo = 0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if servers_cost(ws, key, mid) >= incumbent:
            hi = mid
        else:
            lo = mid
    return hi


def without_management(system: OnPremSystem) -> OnPremSystem:
    """``system`` with its storage fabric but no in-band or out-of-band network (module
    docstring: the reference program's system)."""
    plan = system.costs.networks
    if plan is None:
        return system
    if plan.parts.storage_switch is None:
        return replace(system, costs=replace(system.costs, networks=None))
    parts = replace(plan.parts, inband_switch=None, oob_switch=None, oob_uplink=None)
    kept = network_costs.NetworkPlan(parts, tuple(i for i in plan.items if i.role == nw.ROLE_STORAGE))
    return replace(system, costs=replace(system.costs, networks=kept))


def fabric_above(ws: Workspace, key: str, nodes: int) -> float:
    """U(n) of the module docstring: what ``nodes`` nodes of ``key`` cost beyond their servers
    without the management networks, as the program prices the closed forms (constraint 11's
    racks with the fabric manager's rack units; the file system at its baseline need)."""
    memo = ("above", key, nodes)
    if memo not in ws.floors:
        system = ws.system(key)
        if not isinstance(system, OnPremSystem):
            return math.inf
        system = without_management(system)
        n = min(max(nodes, 1), system.shape.max_nodes)
        ws.floors[memo] = (ws.closed_form_cost(system, n, fixed_ru=system.costs.fixed_ru)
                           - servers_cost(ws, key, n))
    return ws.floors[memo]


def _storage_parts(system: OnPremSystem) -> tuple | None:
    plan = system.costs.networks
    return None if plan is None else tuple(getattr(plan.parts, f) for f in SAME_STORAGE)


def fabric_gap(ws: Workspace, ref: str, key: str, incumbent: float) -> float | None:
    """An upper bound on U_ref(n) - L_key(n) (module docstring) over the sizes of ``key``'s
    designs that can cost less than ``incumbent``, so that ``key`` costs at least P0 - this;
    None when the servers' unit costs or storage fabrics differ or ``key`` reaches sizes ``ref``
    cannot build (no transfer)."""
    a, b = ws.system(ref), ws.system(key)
    if not isinstance(a, OnPremSystem) or not isinstance(b, OnPremSystem):
        return None
    if any(getattr(a.costs, n) != getattr(b.costs, n) for n in SAME_SERVER) or _storage_parts(a) != _storage_parts(b):
        return None
    reach = min(top_nodes(ws, key, incumbent) - 1, ws.max_nodes(ws.by_key[key]))
    if reach > ws.max_nodes(ws.by_key[ref]):
        return None
    if reach < 1:
        return 0.0

    def below(n: int) -> float:
        return ws.program_cost(key, n) - servers_cost(ws, key, n)

    # On each step of the bounds' node grid: the reference's U at its right end less ``key``'s L
    # at its left (both non-decreasing in n).
    points = bounds.size_points(1, reach, ())
    worst = -math.inf
    for i, left in enumerate(points):
        right = points[i + 1] - 1 if i + 1 < len(points) else reach
        worst = max(worst, fabric_above(ws, ref, right) - below(left))
    return worst
