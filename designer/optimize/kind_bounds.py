"""Bounds on the on-prem candidates a budgeted search left untried, one program per server.

Past :data:`~designer.optimize.batches.EXACT_UP_TO` workloads the search evaluates a few
candidates; the others only have their first bound (:func:`~designer.optimize.bounds.lower_bound`:
an ideal network, the compute floor, a fractional knapsack that sees no packing), far below what
their programs find (50 workloads: $60M against designs of $130-160M). The candidates of one
server differ only in their fabric, so one program bounds them all:

1. at each node count n, the network a job sees on any of them
   (:func:`designer.optimize.evaluate.network_view`) is no better than their best at n, field by
   field (:func:`best_of`: most bandwidth and bisection, least latency, fewest hops, least
   taper, in-network reduction if any has it, rail-only only if all are). The performance
   model never predicts a faster step on a better network (``tests/optimize/test_kind_bounds.py``),
   so at every GPU count a workload takes no less time on a member than on that view;
2. the program over the cloud and one member R, with R's options replaced by the view's at every
   grid count a member can use (:func:`server_options`), the learned energetic intervals of
   constraint (16), no budget, power or rack limit and no management networks, is solved to 1%
   (:func:`reference_bound`): its bound P0 is at most the cost of the image on R of every design
   on a member B, the same assignment, each job no longer, on the same nodes (the same server:
   the same held GPUs, busy power and file system), without its management networks;
3. the image costs the design's cost less B's fabric and management networks plus R's fabric
   (:mod:`designer.optimize.transfer`), so every design that builds B costs at least
   P0 - max_n (U_R(n) - L_B(n)) (:func:`~designer.optimize.transfer.fabric_gap`).

A member's program holds only the counts its scan keeps (from the first that qualifies on it to
1.5 times that); every member qualifies no sooner than the best of their networks and no later
than the worst, so the best network's options between those hold every member's
(:func:`server_options`). Counts stop at the node count N* at which the servers alone cost the
best design found (:func:`top_nodes`): a design with a larger job cannot be cheaper, so the
bound is one on the designs that matter. :func:`tighten` bounds the servers of the untried
candidates lowest bound first, within a budget of work (:data:`WORK`).
"""

from __future__ import annotations

__all__ = ["best_of", "worst_of", "reference_bound", "server_options", "servers_cost", "tighten", "top_nodes",
           "fabric_gap", "reference", "WORK", "BOUND_GAP", "work_done"]

import math
from dataclasses import replace
from types import MappingProxyType
from typing import Callable, Sequence

from designer import perf
from designer.errors import InfeasibleError, SolverTimeoutError
from designer.optimize.formulation import TIE_USD
from designer.optimize.milp import solve_problem
from designer.optimize.problem import Limits, OnPremSystem, Option, pareto
from designer.optimize.task import Thresholds
from designer.optimize.transfer import fabric_above, fabric_gap, servers_cost, top_nodes, without_management
from designer.optimize.workspace import Workspace

_UTIL_STOP = 0.85  # as designer.optimize.workspace: three sizes this far below the target end a scan
BOUND_GAP = 0.01  # relative gap each bounding program is solved to: a bound needs no finer figure
# The work :func:`tighten` may start servers within, in plan searches of the performance model, a
# program counting as PROGRAM_WORK of them (the units of designer.optimize.explain.budget, whose
# budget it shares); a server begun is finished, so the same spec stops at the same point on any
# machine. Measured on benchmarks/specs_large.py: 120-180 units and about 1 s per server on a
# shared 2-core machine (68-129 plan searches and its program); 1,250 bounds all eight servers
# below the design at 50 and at 100 workloads (1,209 and 1,289 units), where the lowest of them
# sets the gap: with 800, DGX H100 and HGX H200 (50) or three servers (100) kept their first
# bounds, far lower.
WORK = 1250
PROGRAM_WORK = 50


_SCALEUP = ("gpus_per_node", "scaleup_Bps", "scaleup_latency_s", "scaleup_efficiency", "scaleup_reduction_efficiency",
            "scaleup_mesh")


def _bisection(v: perf.NetworkView) -> float:
    return v.bisection_Bps_per_gpu if v.bisection_Bps_per_gpu is not None else \
        v.inter_Bps_per_gpu / (2 * v.oversubscription)


def _bracket(views: Sequence[perf.NetworkView], best: bool) -> perf.NetworkView | None:
    """The network at the good (``best``) or bad end of ``views`` in every field the step time
    reads; None when their scale-up domains differ."""
    if not views or any(getattr(v, f) != getattr(views[0], f) for v in views for f in _SCALEUP):
        return None
    more, less = (max, min) if best else (min, max)  # "more" of a quantity where more is better
    some, every = (any, all) if best else (all, any)
    return replace(views[0], inter_Bps_per_gpu=more(v.inter_Bps_per_gpu for v in views),
                   efficiency=more(v.efficiency for v in views),
                   host_latency_s=less(v.host_latency_s for v in views),
                   switch_latency_s=less(v.switch_latency_s for v in views),
                   hops=less(v.hops for v in views), hops_same_rail=less(v.hops_same_rail or v.hops for v in views),
                   oversubscription=less(v.oversubscription for v in views),
                   bisection_Bps_per_gpu=more(_bisection(v) for v in views),
                   in_network_reduction=some(v.in_network_reduction for v in views),
                   rail_only=every(v.rail_only for v in views),
                   fabric="best of the members" if best else "worst of the members")


def best_of(views: Sequence[perf.NetworkView]) -> perf.NetworkView | None:
    """The network no worse than any of ``views`` in every field the step time reads: most
    bandwidth and bisection, least latency, fewest hops, least taper, in-network reduction if
    any has it, rail-only only if all are. None when their scale-up domains differ."""
    return _bracket(views, best=True)


def worst_of(views: Sequence[perf.NetworkView]) -> perf.NetworkView | None:
    """The network no better than any of ``views`` in every field (the reverse of
    :func:`best_of`); None when their scale-up domains differ."""
    return _bracket(views, best=False)


def _views_at(ws: Workspace, members: Sequence[str], gpus: int) -> tuple[perf.NetworkView, perf.NetworkView] | None:
    """(:func:`best_of`, :func:`worst_of`) the networks a job on ``gpus`` GPUs sees on each of
    ``members`` (one server: the same nodes and share of each scale-up domain) that can build
    it; None when none can."""
    ev = ws.evaluator
    nodes, used = ev.placement(ws.by_key[members[0]], gpus)
    views = [v for v in (ev.view(ws.by_key[k], nodes) for k in members) if v is not None]
    best, worst = best_of(views), worst_of(views)
    if best is None or worst is None:
        return None
    if nodes > 1 and used < best.gpus_per_node:
        # As designer.optimize.evaluate.Evaluator.evaluate: whole groups in each domain, the rest idle.
        best, worst = replace(best, gpus_per_node=used), replace(worst, gpus_per_node=used)
    return best, worst


def server_options(ws: Workspace, members: Sequence[str], th: Thresholds,
                   top_gpus: int) -> dict[str, tuple[Option, ...]]:
    """Per workload, options on the best network of ``members`` (one server) at no longer a
    time than any member's at every count a member's program can hold.

    A member's scan (:meth:`~designer.optimize.workspace.Workspace.prepare`) keeps the counts
    from the smallest that qualifies on it, f, to the first grid count at least 1.5 f. No member
    qualifies below the first count that qualifies on the best of their networks, and every
    member qualifies at the first count that qualifies on the worst of them, f_worst
    (qualifying is monotone in the network, as
    :meth:`~designer.optimize.workspace.Workspace.ideal_gpus` assumes). So the counts from the
    first to the first grid count at least 1.5 f_worst (and at most ``top_gpus``) hold every
    option of every member; at each, the best network's fastest plan, kept where it meets the
    thresholds (a member's does only where it does). Above f_worst, a count whose GPU-time on the
    best network is at least the worst network's at f_worst is left out: every member's program
    holds its own option at f_worst instead, which it prefers (fewer GPUs, no more GPU-time)."""
    cand = ws.by_key[members[0]]
    gpu = ws.catalog.gpus[cand.gpu]
    max_nodes = max(ws.max_nodes(ws.by_key[k]) for k in members)
    views: dict[int, tuple | None] = {}
    found: dict[str, tuple[Option, ...]] = {}

    def step(w, g: int, which: int):
        if g not in views:
            views[g] = _views_at(ws, members, g)
        if views[g] is None:
            return None
        est = ws.evaluator.step(w, perf.Cluster(gpu=gpu, network=views[g][which], efficiency=ws.task.efficiency), g)
        return None if isinstance(est, str) else est

    for w in ws.workloads:
        # No network qualifies below the ideal one's smallest count (shared by the GPU's candidates).
        start = ws.ideal_gpus(w, cand, th, best=False)
        grid = [g for g in ws.grid(w, cand, max_nodes) if start is not None and start <= g <= top_gpus]
        opts: list[Option] = []
        first = end = None  # the best network's first qualifying count; the last count kept
        worst_at, worst_gpu_s = math.inf, math.inf  # f_worst and the worst network's GPU-time there
        below = 0
        for i, g in enumerate(grid):
            if (end is not None and g > end) or ws.deadline.expired():
                break
            est = step(w, g, 0)
            if est is None:
                continue
            time_s = w.tokens / est.tokens_per_s
            if first is None and time_s <= th.deadlines_s[w.name] and est.utilization < _UTIL_STOP * th.min_utilization:
                below += 1
                if below >= 3:
                    break  # as a member's scan ends: utilization falls as a job spreads
                continue
            below = 0
            if not th.admits(w.name, time_s, est.utilization):
                continue
            opts.append(Option(g, w.tokens / est.tokens_per_s, est.utilization, len(opts), ws.held(cand, g)))
            if first is None:
                first, end = g, grid[-1]
                # f_worst: the worst network qualifies no sooner than the best one.
                for h in grid[i:]:
                    step(w, h, 0)  # needed below; its plan starts the worse network's search
                    worst = step(w, h, 1)
                    if worst is not None and th.admits(w.name, w.tokens / worst.tokens_per_s, worst.utilization):
                        end = next((x for x in grid if x >= 1.5 * h), grid[-1])
                        worst_at, worst_gpu_s = h, ws.held(cand, h) * w.tokens / worst.tokens_per_s
                        break
        # A count above f_worst whose best GPU-time is no less than the worst network's at f_worst
        # is in no member's program: every member that reaches it has its own option at f_worst,
        # on fewer GPUs and no more GPU-time, and its program keeps only options no other beats
        # in both (designer.optimize.problem.pareto).
        opts = [o for o in opts if o.gpus <= worst_at or o.gpu_seconds < worst_gpu_s]
        found[w.name] = pareto(opts, keep_time=True)
    return found


def reference_bound(ws: Workspace, ref: str, options: dict[str, tuple[Option, ...]], th: Thresholds,
                    cloud: Sequence[str], solver: str = "highs") -> float | None:
    """P0 of the module docstring: a lower bound on the program over ``cloud`` and on-prem
    ``ref`` without its management networks (:func:`~designer.optimize.transfer.without_management`),
    with ``ref``'s options ``options`` (solved to :data:`BOUND_GAP`); inf when it has no design,
    None when the deadline leaves no bound."""
    system = ws.system(ref)
    if not isinstance(system, OnPremSystem) or not any(options.values()):
        return None
    system = without_management(system)
    problem = ws.problem(cloud, th, limits=Limits(nodes=ws.limits().nodes))
    merged = dict(problem.options)
    merged.update({(w, ref): found for w, found in options.items() if found})
    problem = replace(problem, onprem=(system,), options=MappingProxyType(merged), energy=tuple(sorted(ws.energy)))
    try:
        ws.solves += 1
        sol = solve_problem(problem, solver=solver, deadline=ws.deadline, rel_gap=BOUND_GAP)
    except InfeasibleError:
        return math.inf
    except SolverTimeoutError:
        return None
    if sol.gap >= 1.0:
        return None
    # The solver's bound is on the objective, which adds up to TIE_USD per rank to the cost.
    return (sol.capex_usd + sol.opex_usd + sol.cloud_usd) * (1.0 - sol.gap) - TIE_USD * len(ws.by_key)


def reference(ws: Workspace, members: Sequence[str], incumbent: float) -> str:
    """The member whose program bounds the others (:func:`tighten`): among those that build the
    largest size the members' designs below ``incumbent`` reach, the one whose fabric costs
    least there (:func:`~designer.optimize.transfer.fabric_above`: the transfer then takes
    little off its bound); ties: key order."""
    top = top_nodes(ws, members[0], incumbent)
    size = max(1, min(top - 1, max(ws.max_nodes(ws.by_key[k]) for k in members)))
    able = [k for k in members if ws.max_nodes(ws.by_key[k]) >= size]
    return min(able, key=lambda k: (fabric_above(ws, k, size), k))


def work_done(ws: Workspace) -> int:
    """The work a workspace has done so far, in the units of :data:`WORK`."""
    return ws.evaluator.calls + PROGRAM_WORK * ws.solves


def tighten(ws: Workspace, th: Thresholds, late: Sequence[str], late_bounds: Sequence[float],
            cloud: Sequence[str], incumbent: float, adjusted: Callable[[float], float],
            solver: str = "highs", work: int = WORK) -> list[float]:
    """``late_bounds`` (the bounds of the untried candidates ``late``, in order) raised by one
    program per server (module docstring), the server of the lowest bound below ``incumbent``
    first, while less than ``work`` (:data:`WORK`) has been spent. The reference is the member
    whose fabric costs least at the largest size the members' bounds reach (among those that
    build it). Stops at the deadline, every bound found kept. ``adjusted`` maps a cost bound to
    one on the objective (soft preferences)."""
    out = list(late_bounds)
    if ws.credits:
        return out  # a soft preference's credit is no cost: the transfer does not hold
    index = {k: i for i, k in enumerate(late)}
    begun = work_done(ws)
    stop = begun + work
    try:
        _tighten(ws, th, late, out, index, cloud, incumbent, adjusted, solver, stop)
    finally:
        ws.bound_work += work_done(ws) - begun
    return out


def _tighten(ws: Workspace, th: Thresholds, late: Sequence[str], out: list[float], index: dict[str, int],
             cloud: Sequence[str], incumbent: float, adjusted: Callable[[float], float], solver: str,
             stop: int) -> None:
    tried: set[str] = set()
    while work_done(ws) < stop and not ws.deadline.expired():
        below = [k for k in late if out[index[k]] < incumbent and ws.by_key[k].server not in tried]
        if not below:
            break
        server = ws.by_key[min(below, key=lambda k: (out[index[k]], k))].server
        tried.add(server)
        members = sorted(k for k in below if ws.by_key[k].server == server and ws.system(k) is not None)
        if not members:
            continue
        top = top_nodes(ws, members[0], incumbent)
        ref = reference(ws, members, incumbent)
        gaps = {k: g for k in members if (g := fabric_gap(ws, ref, k, incumbent)) is not None}
        if not gaps:
            continue
        options = server_options(ws, members, th, top * ws.by_key[ref].gpus_per_node)
        bound = None if ws.deadline.expired() else reference_bound(ws, ref, options, th, cloud, solver)
        if bound is None:
            continue
        for k, gap in gaps.items():
            out[index[k]] = max(out[index[k]], adjusted(bound - gap))
