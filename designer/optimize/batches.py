"""Solving by batches: on-prem candidates in order of a cost bound, a few per program, pruned by the best found.

1. For every server type, the smallest GPU count at which each workload meets its deadline and
   utilization target on an *ideal* network (infinite bandwidth, zero latency) is a lower bound
   on the count any real fabric needs (:meth:`~designer.optimize.workspace.Workspace.ideal_gpus`).
2. Each candidate's cost is then bounded below by its servers, their NIC links and the leaves
   those links need at that count (:func:`~designer.optimize.bounds.lower_bound`), with no
   spines, cores or racks.
3. Candidates are taken in order of that bound, cheapest first, in batches of a few. A design
   builds at most one on-prem system, so the optimum is the best of the programs over (every
   cloud instance + one batch); once one has an answer of cost C, every candidate whose bound is
   at least C is dropped: it cannot do better. The result is the optimum over all candidates,
   found after evaluating few (``tests/optimize/test_batches.py`` compares it with the program
   over every candidate).
4. ``min_time`` is solved one on-prem system at a time (:mod:`designer.optimize.min_time`).
"""

from __future__ import annotations

__all__ = ["solve"]

import math
from typing import Iterable

from designer.errors import InfeasibleError
from designer.optimize import bounds, dominance
from designer.optimize.milp import Solution, solve_problem
from designer.optimize.min_time import solve_min_time
from designer.optimize.problem import Limits
from designer.optimize.task import Thresholds
from designer.optimize.workspace import Workspace
from designer.spec.choices import Deployment

_BATCH = 1  # on-prem candidates per program: small batches find an incumbent early, and it prunes
# Objectives whose optimum can be bounded by a lower bound on total cost.
_PRUNABLE = ("min_total_cost",)
_SAME_OBJECTIVE = 1e-9  # relative difference of two programs' objectives that counts as equal


def solve(ws: Workspace, th: Thresholds, *, keys: Iterable[str] | None = None, limits: Limits | None = None,
          objective: str | None = None, solver: str = "highs", time_limit_s: float | None = None,
          cutoff: float | None = None) -> Solution:
    """Optimum over the candidates ``keys`` (all by default): on-prem candidates in order of
    their cost bound, a batch at a time (see the module docstring), stopping once the bound
    reaches the best cost found (``min_total_cost``; other objectives try every candidate).

    Args:
        ws: the task's workspace (evaluations found here are kept there for later solves).
        th: the thresholds an option must reach.
        keys: the candidates to choose among.
        limits: the limits (the task's own by default).
        objective: the objective (the task's own by default).
        solver: ``highs`` or ``cbc``.
        time_limit_s: a time limit for each integer program.
        cutoff: only a design cheaper than this is wanted (a known design's total cost);
            candidates whose bound reaches it are never evaluated.

    Raises:
        InfeasibleError: no design over those candidates meets ``th`` and the limits (and,
            with ``cutoff``, none is cheaper than it).
    """
    keys = sorted(ws.by_key if keys is None else set(keys))
    objective = objective or ws.task.objective
    prunable = objective in _PRUNABLE
    per_token = objective == "min_cost_per_token"
    cloud = [k for k in keys if ws.by_key[k].deployment is Deployment.CLOUD]
    onprem = dominance.undominated(ws, [k for k in keys if ws.by_key[k].deployment is Deployment.ON_PREM])
    ready = [k for k in cloud if ws.prepare(k, th)]
    if objective == "min_time":
        return solve_min_time(ws, th, ready, onprem, limits, solver, time_limit_s)
    # Two levels of bound: an ideal network first (shared by all candidates with one GPU type),
    # then the best network of the candidate's own kind for those that survive the first.
    first_bounds = {k: bounds.lower_bound(ws, k, th, keys=cloud, best=False) for k in onprem}
    pending = sorted((k for k in onprem if first_bounds[k] < math.inf), key=lambda k: (first_bounds[k], k))
    best: Solution | None = None
    best_total = cutoff if (prunable and cutoff is not None) else math.inf
    first = True
    while first or pending:
        first = False
        batch = []
        while pending and len(batch) < _BATCH:
            k = pending.pop(0)
            if prunable and first_bounds[k] >= best_total:
                pending = []  # every later bound is no lower
                break
            if prunable and bounds.lower_bound(ws, k, th, keys=cloud) >= best_total:
                continue
            if not ws.prepare(k, th):
                continue
            if prunable and bounds.refined_bound(ws, k, th, cloud) >= best_total:
                continue
            if per_token and best is not None and bounds.usage_bound(ws, k, th, cloud) >= \
                    best.objective - _SAME_OBJECTIVE * max(1.0, abs(best.objective)):
                continue
            batch.append(k)
        if not batch and (best is not None or pending):
            continue  # the cloud alone is in every program: solved alone only when nothing else is
        # A design builds at most one on-prem system, so the optimum is the best of the
        # programs over (cloud + each batch); each is small, and objectives of different
        # batches compare directly (ties are priced by each system's global rank).
        try:
            ws.solves += 1
            sol = solve_problem(ws.problem([*ready, *batch], th, limits=limits, objective=objective),
                                solver=solver, time_limit_s=time_limit_s)
        except InfeasibleError:
            continue
        total = sol.capex_usd + sol.opex_usd + sol.cloud_usd
        if prunable and cutoff is not None and total >= cutoff * (1 - 1e-9):
            continue  # only a design cheaper than the cutoff is wanted
        if best is not None and sol.objective >= best.objective - _SAME_OBJECTIVE * max(1.0, abs(best.objective)):
            continue  # the first of equal designs is kept
        best, best_total = sol, (total if prunable else math.inf)
    if best is None:
        raise InfeasibleError("no design over the candidates meets the constraints"
                              + (" and is cheaper than the cutoff" if cutoff is not None else ""))
    return best
