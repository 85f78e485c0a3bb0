"""Per-switch counts of a sized fabric: each leaf's NIC downlinks and uplinks, each spine's and
core's links, and the groups of identical switches of every tier.

All are read off a :class:`~designer.topology.sizing.Plan`, so the closed-form summary and the
graph builders count the same fabric (rules in :mod:`designer.topology.sizing`).
"""

from __future__ import annotations

__all__ = ["leaf_nics", "leaf_fabric", "pod_leaves", "leaf_uplinks", "spine_down", "spine_up", "core_down",
           "leaf_groups", "spine_groups", "core_groups"]

import math

from designer.topology.schema import TopologyKind
from designer.topology.sizing import Plan, nics_on_leaf


def _per_su(plan: Plan) -> int:
    """Leaves per leaf group over all fabrics (R for rail designs, 1 otherwise)."""
    return plan.leaves // plan.sus


def leaf_nics(plan: Plan, leaf: int) -> int:
    """NIC downlinks on leaf ``leaf`` (global index: rail designs number leaves su * R + rail)."""
    return nics_on_leaf(plan.request, plan.su_nodes, _per_su(plan), leaf)


def leaf_fabric(plan: Plan, leaf: int) -> tuple[int, int]:
    """(fabric, index inside the fabric) of leaf ``leaf``."""
    if plan.request.topology is TopologyKind.RAIL_ONLY:
        rails = plan.request.nics_per_node
        return leaf % rails, leaf // rails
    return 0, leaf


def pod_leaves(plan: Plan, pod: int) -> int:
    """Leaves of one fabric in pod ``pod``."""
    return min(plan.leaves_per_pod, plan.leaves_per_fabric - pod * plan.leaves_per_pod)


def leaf_uplinks(plan: Plan, leaf: int) -> int:
    """Uplinks of leaf ``leaf`` (global index): ``last_up`` in the last SU, else ``leaf_up``;
    0 in one tier."""
    if plan.tiers < 2:
        return 0
    return plan.last_up if leaf // _per_su(plan) == plan.sus - 1 else plan.leaf_up


def spine_down(plan: Plan, pod: int) -> int:
    """Downlinks of a spine in pod ``pod`` (every leaf sends its uplinks / S links to each of its
    spines; in two tiers the last SU's leaves send ``last_up`` / S)."""
    leaves = pod_leaves(plan, pod)
    if plan.last_up == plan.leaf_up:
        return leaves * plan.leaf_up // plan.spines_per_pod
    last = _per_su(plan) // plan.fabrics  # last-SU leaves in one fabric
    return ((leaves - last) * plan.leaf_up + last * plan.last_up) // plan.spines_per_pod


def spine_up(plan: Plan, pod: int) -> int:
    """Uplinks of a spine: its downlinks rounded up to a multiple of c, so every core of its plane
    gets the same number of links from it (three tiers only)."""
    if plan.tiers < 3:
        return 0
    c = plan.cores_per_plane
    return math.ceil(spine_down(plan, pod) / c) * c


def core_down(plan: Plan) -> int:
    """Downlinks of every core: the sum over pods of the plane spine's links to it."""
    c = plan.cores_per_plane
    return sum(spine_up(plan, q) // c for q in _pod_kinds(plan) for _ in range(_pod_count(plan, q)))


def _pod_kinds(plan: Plan) -> tuple[int, ...]:
    """Representative pods: the first (full) and the last (maybe partial)."""
    return (0,) if plan.pods == 1 else (0, plan.pods - 1)


def _pod_count(plan: Plan, pod: int) -> int:
    if plan.pods == 1:
        return 1
    return plan.pods - 1 if pod == 0 else 1


def leaf_groups(plan: Plan) -> tuple[tuple[int, int, int], ...]:
    """Identical leaves as (count, NIC downlinks, reserved ports), over all fabrics."""
    if plan.tiers == 0:
        return ()
    per_su = _per_su(plan)
    counts: dict[tuple[int, int], int] = {}
    if plan.sus > 1:
        counts[(leaf_nics(plan, 0), 0)] = (plan.sus - 1) * per_su
    last = leaf_nics(plan, plan.leaves - 1)
    counts[(last, 0)] = counts.get((last, 0), 0) + per_su
    for leaf, ports in plan.reserved:
        nics = leaf_nics(plan, leaf)
        counts[(nics, 0)] -= 1
        counts[(nics, ports)] = counts.get((nics, ports), 0) + 1
    return tuple(sorted((c, nics, res) for (nics, res), c in counts.items() if c > 0))


def spine_groups(plan: Plan) -> tuple[tuple[int, int, int], ...]:
    """Identical spines as (count, downlinks, uplinks), over all fabrics."""
    if plan.tiers < 2:
        return ()
    counts: dict[tuple[int, int], int] = {}
    for pod in _pod_kinds(plan):
        key = (spine_down(plan, pod), spine_up(plan, pod))
        counts[key] = counts.get(key, 0) + _pod_count(plan, pod) * plan.spines_per_pod * plan.fabrics
    return tuple(sorted((c, d, u) for (d, u), c in counts.items()))


def core_groups(plan: Plan) -> tuple[tuple[int, int], ...]:
    """Cores as (count, downlinks); all cores are alike."""
    if plan.tiers < 3:
        return ()
    return ((plan.cores, core_down(plan)),)
