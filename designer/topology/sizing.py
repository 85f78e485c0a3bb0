"""Sizing rules: leaf split, scalable units, spine and core counts, pods, reserved ports.

One :class:`Plan` per request, shared by the closed-form summary and the graph builders, so both
describe the same fabric. The rules (sources in ``docs/topology.md``):

* Leaf split (network.md 5.2): a leaf carries D NIC downlinks and u = ceil(D / r) uplinks, with
  D as large as the cages allow. A cage's ports all face one way (down to servers or up to
  spines), because the two directions may need different media; so the leaf needs
  ceil(D/p) + ceil(u/p) <= cages. With 64 ports, 32 twin-port cages and r = 1: D = u = 32.
* Scalable units: rail designs put NIC i of each of ``su_nodes`` servers on the leaf of rail i
  (su_nodes = D by default: SuperPOD's 32); the fat tree puts D / R whole servers on a leaf.
* Two tiers (network.md 5.3): each leaf spreads its u uplinks equally over S spines, S the
  smallest divisor of u with L * u / S <= k. Holds L <= k leaves (k^2/2 endpoints at 1:1).
* Three tiers: pods of P leaves (P = k/2, whole SUs for rail designs) and S spines each; a spine
  has as many uplinks as downlinks (non-blocking above the leaf). Spine j of every pod joins core
  plane j of c cores, c the smallest divisor of a full pod's spine uplinks with every core's links
  <= k. Holds k pods (k^3/4 endpoints at 1:1; Al-Fares et al. 2008).
* Rail-only (arXiv:2307.12169): the rail leaves as above, one Clos per rail and no spine joining
  rails; a rail fits one switch when its servers do.
"""

from __future__ import annotations

__all__ = ["Sizable", "Plan", "Capacity", "plan_fabric", "capacity", "leaf_nics", "leaf_fabric",
           "pod_leaves", "leaf_uplinks", "spine_down", "spine_up", "core_down", "leaf_groups",
           "spine_groups", "core_groups"]

import dataclasses
import math
from dataclasses import dataclass
from typing import Protocol

from designer.errors import TopologyError
from designer.topology.schema import TopologyKind

_EPS = 1e-9  # float slack when rounding D / r up


class Sizable(Protocol):
    """What sizing reads of a request (a :class:`~designer.topology.request.FabricRequest` has it all).

    Written out here, so that the request, which sizes itself when it is built, imports this
    module and this module needs nothing from it.
    """

    @property
    def topology(self) -> TopologyKind: ...
    @property
    def nodes(self) -> int: ...
    @property
    def nics_per_node(self) -> int: ...
    @property
    def switch_ports(self) -> int: ...
    @property
    def ports_per_cage(self) -> int: ...
    @property
    def oversubscription(self) -> float: ...
    @property
    def su_nodes(self) -> int | None: ...
    @property
    def reserved_leaf_ports(self) -> int: ...
    @property
    def endpoints(self) -> int: ...


@dataclass(frozen=True, slots=True)
class Plan:
    """How a request is built: counts per tier and the shape of each switch fabric.

    Attributes:
        request: The request sized.
        tiers: Switch tiers: 0 (cloud), 1 (one switch per fabric), 2 (leaf-spine), 3 (with cores).
        fabrics: Independent switch fabrics: the rails for rail-only, 0 for cloud, else 1.
        su_nodes: Servers per leaf group (SU); all servers when there is one group.
        sus: Leaf groups (SUs).
        leaf_down: Design NIC downlinks of a leaf (D); all ports of a one-tier switch.
        leaf_up: Uplinks of every leaf (u); 0 in one tier.
        leaves_per_fabric: Leaves in one fabric.
        leaves_per_pod: P; all leaves of the fabric below three tiers.
        pods: Pods per fabric (1 below three tiers).
        spines_per_pod: S; spines of the fabric in two tiers, 0 in one tier.
        cores_per_plane: c; 0 below three tiers.
        reserved: (leaf index, ports) for every leaf holding reserved ports.
        last_up: Uplinks of every leaf of the last SU: in two tiers, as many as its NIC
            downlinks need at the ratio, rounded up to a multiple of the spines (a partial SU
            needs fewer); else ``leaf_up``.
    """

    request: Sizable  # a FabricRequest
    tiers: int
    fabrics: int
    su_nodes: int
    sus: int
    leaf_down: int
    leaf_up: int
    leaves_per_fabric: int
    leaves_per_pod: int
    pods: int
    spines_per_pod: int
    cores_per_plane: int
    reserved: tuple[tuple[int, int], ...]
    last_up: int = -1  # -1: leaf_up

    def __post_init__(self) -> None:
        if self.last_up < 0:
            object.__setattr__(self, "last_up", self.leaf_up)

    @property
    def leaves(self) -> int:
        """Leaves (or single switches) in all fabrics."""
        return self.fabrics * self.leaves_per_fabric

    @property
    def spines(self) -> int:
        """Spines in all fabrics."""
        return self.fabrics * self.pods * self.spines_per_pod

    @property
    def cores(self) -> int:
        """Cores in all fabrics."""
        return self.fabrics * self.spines_per_pod * self.cores_per_plane


def _uplinks(down: int, ratio: float) -> int:
    return max(1, math.ceil(down / ratio - _EPS))


def _leaf_split(req: Sizable, grain: int, given: int | None) -> tuple[int, int]:
    """(D, u): NIC downlinks and uplinks per leaf; D a multiple of ``grain``."""
    k, p, r = req.switch_ports, req.ports_per_cage, req.oversubscription
    cages = k // p

    def fits(down: int) -> bool:
        return math.ceil(down / p) + math.ceil(_uplinks(down, r) / p) <= cages

    if given is not None:
        if not fits(given):
            raise TopologyError(
                f"a leaf of {k} ports ({cages} cages) cannot take {given} NIC downlinks and "
                f"{_uplinks(given, r)} uplinks at {r:g}:1; lower su_nodes"
            )
        return given, _uplinks(given, r)
    for down in range(k - k % grain, 0, -grain):
        if fits(down):
            return down, _uplinks(down, r)
    raise TopologyError(
        f"a leaf of {k} ports cannot take one server's {grain} NICs plus uplinks at {r:g}:1"
    )


def _smallest_divisor(n: int, ok) -> int | None:
    for d in range(1, n + 1):
        if n % d == 0 and ok(d):
            return d
    return None


def _max_nodes(req: Sizable, per_leaf_nodes: int, pod_leaves_: int, rails_per_pod: int) -> int:
    """Nodes that k full pods hold (every core one link per pod)."""
    return req.switch_ports * (pod_leaves_ // rails_per_pod) * per_leaf_nodes


def plan_fabric(req: Sizable) -> Plan:
    """Size the fabric of ``req`` (see the module docstring for the rules).

    Raises:
        TopologyError: The nodes need more than three tiers, a leaf cannot take one server, or the
            reserved ports do not fit the free leaf ports.
    """
    kind, n, rails, k = req.topology, req.nodes, req.nics_per_node, req.switch_ports
    if kind is TopologyKind.CLOUD:
        return Plan(req, 0, 0, n, 1, 0, 0, 0, 0, 1, 0, 0, ())
    if kind is TopologyKind.SINGLE_SWITCH:
        used = req.endpoints + req.reserved_leaf_ports
        if used > k:
            raise TopologyError(
                f"{n} nodes x {rails} NICs + {req.reserved_leaf_ports} reserved ports need {used} ports; "
                f"one switch has {k}; use fat_tree or rail_optimized"
            )
        return Plan(req, 1, 1, n, 1, k, 0, 1, 1, 1, 0, 0, _reserve(req, 1, 1, n, k))
    if kind is TopologyKind.RAIL_ONLY and n + math.ceil(req.reserved_leaf_ports / rails) <= k:
        # Rail-only guidance (network.md 3.3): one switch per rail when the rail's servers fit it.
        return Plan(req, 1, rails, n, 1, k, 0, 1, 1, 1, 0, 0, _reserve(req, rails, rails, n, k))
    fat = kind is TopologyKind.FAT_TREE
    given = None if req.su_nodes is None else req.su_nodes * (rails if fat else 1)
    down, up = _leaf_split(req, rails if fat else 1, given)
    su = down // rails if fat else down
    sus = math.ceil(n / su)
    fabrics = rails if kind is TopologyKind.RAIL_ONLY else 1
    per_su = rails if kind is TopologyKind.RAIL_OPTIMIZED else 1  # leaves per SU in one fabric
    leaves = sus * per_su  # in one fabric
    group = 1 if fat else rails  # leaves per SU over all fabrics
    if leaves == 1:
        return Plan(req, 1, fabrics, su, 1, down, 0, 1, 1, 1, 0, 0, _reserve(req, group, group, su, k))
    p = req.ports_per_cage
    reserved = _reserve(req, sus * group, group, su, (k // p - math.ceil(up / p)) * p)
    if leaves <= k:
        # Two tiers (network.md 5.3): the last SU's leaves take only the uplinks their NICs need
        # at the ratio, rounded up so they split evenly over the spines; S the smallest divisor
        # of u whose spines' ports take every leaf's uplinks.
        need = _uplinks(_nics(req, su, group, sus * group - 1), req.oversubscription)
        need = min(need, up)
        full = leaves - per_su  # leaves of the full SUs, in one fabric

        def fits(s: int) -> bool:
            return full * (up // s) + per_su * math.ceil(need / s) <= k

        spines = _smallest_divisor(up, fits)
        assert spines is not None  # s = up always fits when leaves <= k
        last = spines * math.ceil(need / spines)
        return Plan(req, 2, fabrics, su, sus, down, up, leaves, leaves, 1, spines, 0, reserved, last)
    # Three tiers. A spine keeps half its cages for uplinks, so a pod holds at most this many leaves.
    pod_max = (k // p // 2) * p
    pod = (pod_max // per_su) * per_su
    if pod == 0:
        raise TopologyError(f"a pod of {k}-port spines cannot hold the {per_su} leaves of one SU")
    max_nodes = _max_nodes(req, su, pod, per_su)
    spines = _smallest_divisor(up, lambda s: pod * up // s <= pod_max)
    assert spines is not None
    pods = math.ceil(leaves / pod)
    full = pod * up // spines
    last = (leaves - (pods - 1) * pod) * up // spines
    n_full = pods if last == full else pods - 1

    def core_ok(c: int) -> bool:
        extra = 0 if last == full else math.ceil(last / c)
        return n_full * (full // c) + extra <= k

    cores = _smallest_divisor(full, core_ok) if pods <= k else None
    if cores is None:
        raise TopologyError(
            f"{n} nodes need more than three tiers of {k}-port switches (at most {max_nodes} nodes "
            f"with {rails} NICs each at {req.oversubscription:g}:1 for {kind.value})"
        )
    return Plan(req, 3, fabrics, su, sus, down, up, leaves, pod, pods, spines, cores, reserved)


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
    down, up = _leaf_split(req, rails if fat else 1, given)
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
    three = _max_nodes(req, su, pod, per_su) if pod else two
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


def _reserve(req: Sizable, leaves: int, per_su: int, su: int, capacity: int) -> tuple[tuple[int, int], ...]:
    """Reserved ports fill the free downlink ports of the last leaves, last leaf first.

    ``leaves`` counts all leaves (leaf ``i`` serves SU ``i // per_su``); ``capacity`` is the ports
    a leaf can give to NICs and reserved ports together.
    """
    left = req.reserved_leaf_ports
    if left == 0:
        return ()
    taken = []
    for leaf in range(leaves - 1, -1, -1):
        free = capacity - _nics(req, su, per_su, leaf)
        if free > 0:
            take = min(free, left)
            taken.append((leaf, take))
            left -= take
            if left == 0:
                return tuple(sorted(taken))
    raise TopologyError(
        f"{req.reserved_leaf_ports} reserved leaf ports do not fit the free leaf ports "
        f"({req.reserved_leaf_ports - left} free); remove a node per SU as the SuperPOD does for UFM"
    )


def _nics(req: Sizable, su: int, per_su: int, leaf: int) -> int:
    if req.topology is TopologyKind.SINGLE_SWITCH:
        return req.endpoints
    nodes = min(su, req.nodes - (leaf // per_su) * su)
    return nodes * req.nics_per_node if req.topology is TopologyKind.FAT_TREE else nodes


def _per_su(plan: Plan) -> int:
    """Leaves per leaf group over all fabrics (R for rail designs, 1 otherwise)."""
    return plan.leaves // plan.sus


def leaf_nics(plan: Plan, leaf: int) -> int:
    """NIC downlinks on leaf ``leaf`` (global index: rail designs number leaves su * R + rail)."""
    return _nics(plan.request, plan.su_nodes, _per_su(plan), leaf)


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
