"""Lower bounds on what a design that builds a candidate can cost, from what a workspace knows so far.

A design builds at most one on-prem system. Some non-empty set S of workloads runs on it; each
needs at least its ideal-network GPU count, so the system has at least the largest of those
nodes, and their GPU-time must fit in what the system offers by their deadlines; every workload
outside S costs at least its cheapest cloud option. :mod:`designer.optimize.batches` drops a
candidate once such a bound reaches the best cost found.

Bounds, each below the cost the program would find for the candidate:

* :func:`lower_bound`: min over the system's size n of cost(n) + the least cloud spend of the
  workloads that do not fit (a fractional knapsack on GPU-time); the cost is :func:`server_cost`
  (servers and leaves only) on an ideal network,
  :meth:`~designer.optimize.workspace.Workspace.program_cost` on the best network of the
  candidate's kind.
* :func:`refined_bound`: the same at the smallest sizes and GPU-times that qualify on the
  candidate's own network.
* :func:`usage_bound`: the ``min_cost_per_token`` objective, each workload at the cheaper of its
  cloud floor and the system's charge for its fewest GPU-seconds there.
"""

from __future__ import annotations

__all__ = ["cloud_floor", "lower_bound", "server_cost", "refined_bound", "usage_bound", "flops_gpu_seconds",
           "compute_bound", "signature", "size_points"]

import math
from dataclasses import replace
from typing import Iterable, Mapping

from designer.optimize import compute_floor, ownership, pricing
from designer.optimize.ownership import usage_rate_usd_per_gpu_s
from designer.optimize.problem import CloudSystem, OnPremSystem
from designer.errors import CatalogError, TopologyError
from designer.optimize.task import Thresholds
from designer.optimize.workspace import Workspace


def cloud_floor(ws: Workspace, w: str, th: Thresholds, keys: Iterable[str] | None = None) -> float:
    """The least a workload can cost in the cloud (prepared instances among ``keys``; inf if none)."""
    keys = None if keys is None else tuple(keys)
    memo = (w, th.min_utilization, th.deadlines_s[w], keys, ws.cloud_version)
    if memo not in ws.floors:
        # Bounds ask for the same floors once per candidate; they change only when a cloud
        # system is evaluated (counted in the memo key; pricing always comes first).
        ws.floors[memo] = _cloud_floor(ws, w, th, keys)
    return ws.floors[memo]


def _cloud_floor(ws: Workspace, w: str, th: Thresholds, keys: tuple[str, ...] | None) -> float:
    best = math.inf
    allowed = None if keys is None else set(keys)
    for key, system in ws.systems.items():
        if not isinstance(system, CloudSystem) or (allowed is not None and key not in allowed):
            continue
        gpn = system.candidate.gpus_per_node
        for e in ws.evaluations.get((w, system.key), ()):
            if th.admits(w, e.time_s, e.utilization):
                best = min(best, system.cost_usd(e.gpus / gpn, e.time_s))
    return best


def lower_bound(ws: Workspace, key: str, th: Thresholds, *, sizes: Mapping[str, int] | None = None,
                keys: Iterable[str] | None = None, best: bool = True,
                gpu_seconds: Mapping[str, float] | None = None) -> float:
    """A lower bound on the total cost of any design that builds on-prem candidate ``key``.

    Model (a relaxation of the program of :mod:`designer.optimize.formulation`): a design builds
    the system at some size n and runs a set S of workloads on it; the others go to the cloud at
    no less than their cheapest cloud option f_w. A workload in S needs at least m_w nodes (its
    ideal-network count, or ``sizes``; constraint (4)) and at least e_w GPU-seconds (its
    compute at the GPU's best rates, :func:`flops_gpu_seconds`, or ``gpu_seconds``), and the
    GPU-time of the workloads of S due by each deadline D fits in the G n D GPU-seconds the system
    offers by then (constraint (5)). So

        cost >= min over n of  cost(n) + min over S of sum_{w not in S} f_w,

    and the inner minimum is bounded below by its fractional knapsack (S filled by the best
    cloud cost saved per GPU-second). cost(n) and the knapsack are monotone in n, so taking n on
    a grid, cost at an interval's left end and the knapsack at its right end, stays a bound.
    """
    if sizes is None and gpu_seconds is None:
        # Asked for again by every search over the same thresholds (explanations re-solve many
        # times): kept until a cloud evaluation changes the floors.
        memo = ("bound", key, signature(ws, th), None if keys is None else tuple(keys), best, ws.cloud_version)
        if memo not in ws.floors:
            ws.floors[memo] = _lower_bound(ws, key, th, sizes, keys, best, gpu_seconds)
        return ws.floors[memo]
    return _lower_bound(ws, key, th, sizes, keys, best, gpu_seconds)


def signature(ws: Workspace, th: Thresholds) -> tuple:
    """A hashable key of ``th`` (its deadlines are a mapping), computed once per thresholds object."""
    found = ws.floors.get(("thresholds", id(th)))
    if found is None or found[0] is not th:
        # The object is kept with its key, so its id cannot be reused while the entry lives.
        found = (th, (th.min_utilization, tuple(sorted(th.deadlines_s.items()))))
        ws.floors[("thresholds", id(th))] = found
    return found[1]


def _lower_bound(ws: Workspace, key: str, th: Thresholds, sizes, keys, best: bool, gpu_seconds) -> float:
    cand = ws.by_key[key]
    if sizes is None:
        sizes = {w.name: ws.ideal_gpus(w, cand, th, best=best) for w in ws.workloads}
    gpn = cand.gpus_per_node
    need = {w: math.ceil(g / gpn) for w, g in sizes.items() if g is not None}
    if not need:
        return math.inf
    nmax = ws.max_nodes(cand)
    if ws.fixed_nodes is not None:
        points = [ws.fixed_nodes]
    else:
        points = size_points(min(need.values()), nmax, need.values())
    if not points:
        return math.inf
    if gpu_seconds is None:
        # Candidates of one GPU and node size share the knapsack (same needs, GPU-times and
        # floors): it is built once and answers each node count once.
        memo = ("knapsack", signature(ws, th), None if keys is None else tuple(keys), ws.cloud_version, cand.gpu,
                gpn, tuple(sorted(need.items())))
        rest = ws.floors.get(memo)
        if rest is None:
            seconds = flops_gpu_seconds(ws, key)
            rest = ws.floors[memo] = _Knapsack(need, {w: seconds.get(w, 0.0) for w in need},
                                               _floors(ws, th, keys), th.deadlines_s, gpn)
    else:
        rest = _Knapsack(need, {w: gpu_seconds.get(w, 0.0) for w in need}, _floors(ws, th, keys), th.deadlines_s,
                         gpn)
    bound = math.inf
    for i, nodes in enumerate(points):
        right = points[i + 1] - 1 if i + 1 < len(points) else nmax
        cloud = rest.cost(max(right, nodes))
        if cloud == math.inf:
            continue
        cost = ws.program_cost(key, nodes) if best else server_cost(ws, key, nodes)
        bound = min(bound, cost + cloud)
    return bound


def _floors(ws: Workspace, th: Thresholds, keys) -> dict[str, float]:
    return {w.name: cloud_floor(ws, w.name, th, keys) for w in ws.workloads}


_GRID_STEP = 1.25  # node grid of the bound: the cost side is read at the left end of each step


def size_points(lo: int, hi: int, needs: Iterable[int]) -> list[int]:
    """Node counts from ``lo`` to ``hi``: ``lo``, every workload's minimum and the points of one
    geometric grid from 1 (the same for every bound, so the costs at its points are computed
    once whatever the thresholds)."""
    points = {lo} | {n for n in needs if lo <= n <= hi}
    n = 1
    while n <= hi:
        if n >= lo:
            points.add(n)
        n = max(n + 1, int(n * _GRID_STEP))
    return sorted(points)


class _Knapsack:
    """The least cloud spend of a portfolio when the on-prem system has at most ``n`` nodes:
    fractional knapsack of the module's bound (see :func:`lower_bound`)."""

    def __init__(self, need: Mapping[str, int], gpu_s: Mapping[str, float], floors: Mapping[str, float],
                 deadlines: Mapping[str, float], gpn: int):
        self.need, self.floors, self.gpn = need, floors, gpn
        self.outside = [w for w in floors if w not in need]  # never on-prem: always in the cloud
        # Cloud cost saved per GPU-second of the system, best first (ties by name: deterministic).
        self.order = sorted(need, key=lambda w: (-(floors[w] / gpu_s[w]) if gpu_s[w] > 0 else -math.inf, w))
        self.gpu_s = gpu_s
        self.deadlines = deadlines
        self._memo: dict[int, float] = {}

    def cost(self, n: int) -> float:
        found = self._memo.get(n)
        if found is None:
            found = self._memo[n] = self._cost(n)
        return found

    def _cost(self, n: int) -> float:
        """The fractional knapsack with one capacity per deadline (constraint (5) of the
        formulation): the GPU-time of the workloads run on-prem and due by D fits in G n D, for
        every deadline D. Those capacities are nested (each holds the workloads of the ones
        before), so in GPU-seconds they bound a polymatroid, on which filling the workloads in
        order of cloud cost saved per GPU-second, each as far as every capacity it counts in
        allows, is optimal (Edmonds 1970, "Submodular functions, matroids, and certain
        polyhedra"). Workloads with no cloud option are placed first; if they do not fit, inf."""
        outside = sum(self.floors[w] for w in self.outside)
        inside = [w for w in self.order if self.need[w] <= n]
        outside += sum(self.floors[w] for w in self.need if self.need[w] > n)
        if outside == math.inf or not inside:
            return math.inf
        ends = sorted({self.deadlines[w] for w in inside})
        slack = [self.gpn * n * d for d in ends]  # GPU-seconds left by each deadline
        first = {d: i for i, d in enumerate(ends)}

        def fill(w: str, amount: float) -> float:
            """Place up to ``amount`` GPU-seconds of ``w``; what was placed."""
            i = first[self.deadlines[w]]
            placed = max(0.0, min(amount, min(slack[i:])))
            for j in range(i, len(slack)):
                slack[j] -= placed
            return placed

        # Workloads with no cloud option must run on the system.
        must = [w for w in inside if self.floors[w] == math.inf]
        for w in must:
            if fill(w, self.gpu_s[w]) < self.gpu_s[w] * (1 - 1e-12):
                return math.inf
        spend = 0.0
        for w in inside:
            if w in must:
                continue
            e, f = self.gpu_s[w], self.floors[w]
            placed = fill(w, e)
            if placed < e:
                spend += f * (1.0 - placed / e)
        return outside + spend


def flops_gpu_seconds(ws: Workspace, key: str) -> dict[str, float]:
    """Per workload, GPU-seconds no run on ``key``'s GPU can beat: its tokens at the least GPU
    time per token of any plan (:func:`designer.optimize.compute_floor.seconds_per_token`: its
    compute at the GPU's best rates, which no step undercuts)."""
    cand = ws.by_key[key]
    memo = ("flops", cand.gpu)
    if memo not in ws.floors:
        gpu = ws.catalog.gpus[cand.gpu]
        speed = ws.task.efficiency.compute
        ws.floors[memo] = {w.name: w.tokens * compute_floor.seconds_per_token(w.job, gpu, speed)
                           for w in ws.workloads}
    return ws.floors[memo]


def server_cost(ws: Workspace, key: str, nodes: int) -> float:
    """Servers (kept over the horizon and powered) and the leaves their NIC ports need: a part
    of :meth:`~designer.optimize.workspace.Workspace.program_cost` that needs no cabling."""
    memo = ("server", key, nodes)
    if memo not in ws.floors:
        # Every bound over a size grid asks for the same sizes again.
        ws.floors[memo] = _server_cost(ws, key, nodes)
    return ws.floors[memo]


def _server_cost(ws: Workspace, key: str, nodes: int) -> float:
    cand = ws.by_key[key]
    system = ws.system(key)
    if not isinstance(system, OnPremSystem):
        return math.inf
    server = ws.catalog.servers[cand.server]
    switch = ws.catalog.switches[cand.switch]
    ports = switch.ports_at(cand.link_rate_Bps or ws.catalog.nics[server.nic].rate_Bps) or 1
    leaves = math.ceil(server.nics * nodes / ports)
    bare = replace(system, costs=replace(system.costs, node_link_usd=0.0, node_link_w=0.0, rack_usd=0.0,
                                         storage=None, networks=None))
    return ownership.onprem_cost_usd(bare, ws.economics, nodes=nodes, switches=leaves, ls_links=0, sx_links=0,
                                     racks=0)


def refined_bound(ws: Workspace, key: str, th: Thresholds, keys: Iterable[str] | None = None,
                  scanned: Iterable[str] | None = None) -> float:
    """:func:`lower_bound` at the smallest GPU counts and fewest GPU-seconds of the options that
    qualify on the candidate's own network (the program chooses among those alone).

    ``scanned``: only these workloads have been evaluated on the candidate under ``th``; the
    others keep the bounds of :func:`lower_bound` (the smallest count on the best network of the
    candidate's kind, the FLOPs at peak), each no more than what its evaluation would give, so
    the result stays a bound however few are evaluated."""
    sizes: dict[str, int | None] = {}
    seconds: dict[str, float] = {}
    names = None if scanned is None else set(scanned)
    cand = ws.by_key[key]
    floor = flops_gpu_seconds(ws, key)
    for w in ws.workloads:
        if names is not None and w.name not in names:
            sizes[w.name] = ws.ideal_gpus(w, cand, th)
            seconds[w.name] = floor[w.name]
            continue
        ok = [e for e in ws.evaluations.get((w.name, key), ()) if th.admits(w.name, e.time_s, e.utilization)]
        sizes[w.name] = min(e.gpus for e in ok) if ok else None
        if ok:
            seconds[w.name] = min(e.gpus * e.time_s for e in ok)
    return lower_bound(ws, key, th, sizes=sizes, keys=keys, gpu_seconds=seconds)


def usage_bound(ws: Workspace, key: str, th: Thresholds, keys: Iterable[str] | None = None) -> float:
    """A lower bound on the ``min_cost_per_token`` objective of any design that builds
    (evaluated) on-prem ``key``: each workload at the cheaper of its cheapest cloud bill and
    the system's charge for its fewest GPU-seconds there. Exact without limits, as the charge
    is per workload and does not depend on the system's size."""
    system = ws.systems.get(key)
    if not isinstance(system, OnPremSystem):
        return math.inf
    rate = usage_rate_usd_per_gpu_s(system, ws.economics)
    bound = 0.0
    for w in ws.workloads:
        seconds = min((e.gpus * e.time_s for e in ws.evaluations.get((w.name, key), ())
                       if th.admits(w.name, e.time_s, e.utilization)), default=math.inf)
        bound += min(cloud_floor(ws, w.name, th, keys), rate * seconds)
    return bound


def compute_bound(ws: Workspace, key: str, th: Thresholds, keys: Iterable[str] | None = None) -> float:
    """A lower bound on the total cost of any design that builds on-prem candidate ``key`` that
    needs no plan search: :func:`lower_bound` with each workload's GPUs and GPU-seconds at their
    compute floor (:func:`designer.optimize.compute_floor.seconds_per_token`; no network, ideal
    or real, does better) and the system at its servers alone (no switch, link, rack, file system
    or network; every count only adds cost). Candidates of one server share it. The search uses
    it for the gap of a design found when the time limit passed before a candidate's own bounds
    were computed. ``keys``: the cloud candidates (prepared) whose floors count."""
    cand = ws.by_key[key]
    memo = ("compute bound", cand.server, signature(ws, th), None if keys is None else tuple(keys),
            ws.cloud_version)
    if memo not in ws.floors:
        ws.floors[memo] = _compute_bound(ws, key, th, keys)
    return ws.floors[memo]


def _compute_bound(ws: Workspace, key: str, th: Thresholds, keys) -> float:
    cand = ws.by_key[key]
    try:
        shape = pricing.fabric_shape(cand, ws.catalog, ws.facility)
        costs = pricing.unit_costs(cand, ws.catalog, ws.facility, 1, owned=ws.task.owned)
    except (CatalogError, TopologyError):
        return 0.0  # nothing known of this candidate: no bound
    bare = OnPremSystem(cand, shape, replace(costs, node_link_usd=0.0, node_link_w=0.0, rack_usd=0.0,
                                             storage=None, networks=None))
    gpu = ws.catalog.gpus[cand.gpu]
    speed = ws.task.efficiency.compute
    gpn = cand.gpus_per_node
    seconds = {w.name: w.tokens * compute_floor.seconds_per_token(w.job, gpu, speed) for w in ws.workloads}
    need = {w: max(1, math.ceil(s / th.deadlines_s[w] / gpn - 1e-9)) for w, s in seconds.items()}
    nmax = ws.max_nodes(cand)
    if nmax < 1:
        return math.inf
    points = [ws.fixed_nodes] if ws.fixed_nodes is not None else size_points(min(need.values()), nmax,
                                                                                 need.values())
    rest = _Knapsack(need, seconds, _floors(ws, th, keys), th.deadlines_s, gpn)
    bound = math.inf
    for i, nodes in enumerate(points):
        right = points[i + 1] - 1 if i + 1 < len(points) else nmax
        cloud = rest.cost(max(right, nodes))
        if cloud < math.inf:
            cost = ownership.onprem_cost_usd(bare, ws.economics, nodes=nodes, switches=0, ls_links=0, sx_links=0,
                                             racks=0)
            bound = min(bound, cost + cloud)
    return bound
