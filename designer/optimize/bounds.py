"""Lower bounds on what a design that builds a candidate can cost, from what a workspace knows so far.

A design builds at most one on-prem system. Some non-empty set S of workloads runs on it; each
needs at least its ideal-network GPU count, so the system has at least the largest of those
nodes and pays for them; every workload outside S costs at least its cheapest cloud option.
:mod:`designer.optimize.batches` drops a candidate once such a bound reaches the best cost found.

Bounds, each below the cost the program would find for the candidate:

* :func:`lower_bound`: min over k of cost(nodes of the k workloads needing fewest nodes) + the
  cloud floors of the others; the cost is :func:`server_cost` (servers and leaves only) on an
  ideal network, :meth:`~designer.optimize.workspace.Workspace.program_cost` on the best network of
  the candidate's kind.
* :func:`refined_bound`: the same at the smallest sizes that qualify on the candidate's own network.
* :func:`usage_bound`: the ``min_cost_per_token`` objective, each workload at the cheaper of its
  cloud floor and the system's charge for its fewest GPU-seconds there.
"""

from __future__ import annotations

__all__ = ["cloud_floor", "lower_bound", "server_cost", "refined_bound", "usage_bound"]

import math
from dataclasses import replace
from typing import Iterable, Mapping

from designer.optimize import ownership
from designer.optimize.ownership import usage_rate_usd_per_gpu_s
from designer.optimize.problem import CloudSystem, OnPremSystem
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
                keys: Iterable[str] | None = None, best: bool = True) -> float:
    """A lower bound on the total cost of any design that builds on-prem candidate ``key``.

    Some non-empty set S of workloads runs on it; each needs at least its ideal-network GPU
    count (or ``sizes``), so the system has at least the largest of those nodes, and pays for
    those servers (with installation, maintenance and power over the horizon) and the leaves
    their NIC ports need. Every workload outside S costs at least its cheapest cloud option.
    The best S for the bound takes, for some k, the k workloads needing the fewest nodes.
    """
    cand = ws.by_key[key]
    if sizes is None:
        sizes = {w.name: ws.ideal_gpus(w, cand, th, best=best) for w in ws.workloads}
    need = sorted((math.ceil(g / cand.gpus_per_node), w) for w, g in sizes.items() if g is not None)
    if not need:
        return math.inf
    floors = {w.name: cloud_floor(ws, w.name, th, keys) for w in ws.workloads}
    inside = {w for _, w in need}
    # The first level (ideal network) prices only servers and leaves: cheap, no catalog optics.
    bound = math.inf
    for k, (nodes, _) in enumerate(need):
        rest = sum(floors[w] for w in floors if w not in inside) + sum(floors[w] for _, w in need[k + 1:])
        if ws.fixed_nodes is not None:
            nodes = ws.fixed_nodes
        cost = ws.program_cost(key, nodes) if best else server_cost(ws, key, nodes)
        bound = min(bound, cost + rest)
    return bound


def server_cost(ws: Workspace, key: str, nodes: int) -> float:
    """Servers (kept over the horizon and powered) and the leaves their NIC ports need: a part
    of :meth:`~designer.optimize.workspace.Workspace.program_cost` that needs no cabling."""
    cand = ws.by_key[key]
    system = ws.system(key)
    if not isinstance(system, OnPremSystem):
        return math.inf
    server = ws.catalog.servers[cand.server]
    switch = ws.catalog.switches[cand.switch]
    ports = switch.ports_at(cand.link_rate_Bps or ws.catalog.nics[server.nic].rate_Bps) or 1
    leaves = math.ceil(server.nics * nodes / ports)
    bare = replace(system, costs=replace(system.costs, node_link_usd=0.0, node_link_w=0.0, rack_usd=0.0,
                                         storage=None))
    return ownership.onprem_cost_usd(bare, ws.economics, nodes=nodes, switches=leaves, ls_links=0, sx_links=0,
                                     racks=0)


def refined_bound(ws: Workspace, key: str, th: Thresholds, keys: Iterable[str] | None = None) -> float:
    """:func:`lower_bound` at the smallest GPU counts that qualify on the candidate's own network."""
    sizes = {}
    for w in ws.workloads:
        ok = [e.gpus for e in ws.evaluations.get((w.name, key), ()) if th.admits(w.name, e.time_s, e.utilization)]
        sizes[w.name] = min(ok) if ok else None
    return lower_bound(ws, key, th, sizes=sizes, keys=keys)


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
