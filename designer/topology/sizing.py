"""Sizing rules: leaf split, scalable units, spine and core counts, pods, reserved ports.

One :class:`Plan` per request, shared by the closed-form summary and the graph builders, so both
describe the same fabric; :mod:`designer.topology.groups` reads the per-switch counts of a plan
and :mod:`designer.topology.capacity` the largest fabric each tier count holds. The rules
(sources in ``docs/topology.md``):

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

__all__ = ["Sizable", "Plan", "plan_fabric", "leaf_split", "max_nodes", "nics_on_leaf"]

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


def leaf_split(req: Sizable, grain: int, given: int | None) -> tuple[int, int]:
    """(D, u): NIC downlinks and uplinks per leaf, D a multiple of ``grain`` (``given`` if set) and
    as large as the cages allow: ceil(D / p) + ceil(u / p) <= cages, u = ceil(D / r) (network.md 5.2).

    Raises:
        TopologyError: ``given`` (or one server's ``grain`` NICs) and its uplinks do not fit a leaf.
    """
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


def max_nodes(req: Sizable, per_leaf_nodes: int, pod_leaves_: int, rails_per_pod: int) -> int:
    """Nodes that k full pods hold (every core one link per pod): k x (P / R) x servers per leaf."""
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
    down, up = leaf_split(req, rails if fat else 1, given)
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
        need = _uplinks(nics_on_leaf(req, su, group, sus * group - 1), req.oversubscription)
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
    most = max_nodes(req, su, pod, per_su)
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
            f"{n} nodes need more than three tiers of {k}-port switches (at most {most} nodes "
            f"with {rails} NICs each at {req.oversubscription:g}:1 for {kind.value})"
        )
    return Plan(req, 3, fabrics, su, sus, down, up, leaves, pod, pods, spines, cores, reserved)


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
        free = capacity - nics_on_leaf(req, su, per_su, leaf)
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


def nics_on_leaf(req: Sizable, su: int, per_su: int, leaf: int) -> int:
    """NIC downlinks on leaf ``leaf`` of ``req`` with ``su`` servers per SU and ``per_su`` leaves per
    SU: the SU's servers (the last SU's remainder), times the NICs per server in a fat tree."""
    if req.topology is TopologyKind.SINGLE_SWITCH:
        return req.endpoints
    nodes = min(su, req.nodes - (leaf // per_su) * su)
    return nodes * req.nics_per_node if req.topology is TopologyKind.FAT_TREE else nodes
