"""``min_time``: the fastest design within the budget, one on-prem system at a time.

A design builds at most one on-prem system, so the optimum is the best of the programs over
(every cloud instance + one on-prem system), plus the cloud alone. That is exact, and much faster
than one program over all systems, whose makespan relaxation is weak. Systems are taken in order
of the fastest they could possibly be, and a system's program is skipped when bounds show it
cannot win:

* before evaluating it: every workload runs on the system or in the cloud, on the system at
  best at the GPUs' peak (MFU <= 1) on every GPU the budget lets it have;
* after evaluating it: at best at its fastest evaluated option that the total budget can pay for
  (the system alone at that size costs :meth:`~designer.optimize.workspace.Workspace.program_cost`);
* and when it could only tie the best time, when its smallest size that finishes in time already
  costs more than the best design (ties go to the cheaper design).

A design ranks by (longest time to train, total cost); times within a relative 1e-9 tie.
"""

from __future__ import annotations

__all__ = ["solve_min_time", "time_bounds"]

import math
from dataclasses import replace

from designer.errors import InfeasibleError, SolverTimeoutError
from designer.optimize import preferences
from designer.optimize.milp import Solution
from designer.optimize.problem import Limits
from designer.optimize.rigid import solve_scheduled
from designer.optimize.task import Thresholds
from designer.optimize.workspace import Workspace
from designer.perf import flops as perf_flops
from designer.spec.choices import Deployment

_TIE = 1e-9  # relative difference of two longest times that counts as equal


def time_bounds(ws: Workspace, key: str) -> dict[str, float]:
    """Per workload, a lower bound on its time to train on ``key``: its model FLOPs at the GPUs'
    peak (MFU <= 1) on every GPU the system may have (inf when it may have none)."""
    cand = ws.by_key[key]
    gpu = ws.catalog.gpus[cand.gpu]
    gpus = ws.max_nodes(cand) * cand.gpus_per_node
    peak = max(gpu.bf16_flops, gpu.fp8_flops or 0.0)
    return {w.name: (perf_flops.model_flops(w.job.model, w.job.tokens / w.job.model.seq_len) / (peak * gpus)
                     if gpus >= 1 else math.inf) for w in ws.workloads}


def _fastest(ws: Workspace, w: str, key: str, th: Thresholds, budget_usd: float | None = None) -> float:
    """Shortest time to train of ``w`` on ``key`` among its evaluated options meeting ``th``
    (on-prem, with a budget: and whose nodes alone cost at most ``budget_usd``)."""
    cand = ws.by_key[key]
    priced = cand.deployment is Deployment.ON_PREM and budget_usd is not None
    return min((e.time_s for e in ws.evaluations.get((w, key), ()) if th.admits(w, e.time_s, e.utilization)
                and not (priced and ws.program_cost(key, -(-e.gpus // cand.gpus_per_node)) > budget_usd)),
               default=math.inf)


def _smallest_cost(ws: Workspace, key: str, th: Thresholds, within_s: float) -> float:
    """Least total cost of on-prem ``key`` built at all: its smallest size that any workload's
    evaluated option meeting ``th`` and finishing within ``within_s`` uses."""
    cand = ws.by_key[key]
    sizes = [e.gpus for w in ws.workloads for e in ws.evaluations.get((w.name, key), ())
             if th.admits(w.name, e.time_s, e.utilization) and e.time_s <= within_s]
    return ws.program_cost(key, -(-min(sizes) // cand.gpus_per_node)) if sizes else math.inf


def solve_min_time(ws: Workspace, th: Thresholds, cloud: list[str], onprem: list[str], limits: Limits | None,
                   solver: str, time_limit_s: float | None) -> Solution:
    """The fastest design over the prepared cloud instances ``cloud`` and the on-prem candidates
    ``onprem`` (see the module docstring).

    Raises:
        InfeasibleError: no design meets ``th`` and the limits.
    """
    peaks = {k: time_bounds(ws, k) for k in onprem}
    bounds = {k: min(peaks[k].values()) for k in onprem}
    order = sorted((k for k in onprem if bounds[k] < math.inf), key=lambda k: (bounds[k], k))
    budget = (limits if limits is not None else ws.limits()).total_usd
    in_cloud = {w.name: min((_fastest(ws, w.name, k, th) for k in cloud), default=math.inf)
                for w in ws.workloads}
    best: Solution | None = None
    best_key = (math.inf, math.inf)
    timed_out = False
    for group in [[], *([k] for k in order)]:
        if ws.deadline.expired():
            timed_out = True
            break
        if group:
            key = group[0]
            if bounds[key] > best_key[0] * (1 + _TIE):
                break
            if best is not None and max(min(peaks[key][w], in_cloud[w]) for w in in_cloud) > best_key[0] * (1 + _TIE):
                continue
            if not ws.prepare(key, th):
                continue
            floor = max(min(_fastest(ws, w, key, th, budget), in_cloud[w]) for w in in_cloud)
            if floor > best_key[0] * (1 + _TIE):
                continue
            if floor >= best_key[0] * (1 - _TIE) and \
                    preferences.objective_bound(_smallest_cost(ws, key, th, best_key[0] * (1 + _TIE)),
                                                ws.credits) >= best_key[1]:
                continue
        try:
            ws.solves += 1
            sol = solve_scheduled(ws.problem([*cloud, *group], th, limits=limits, objective="min_time"),
                                  solver=solver, time_limit_s=time_limit_s, deadline=ws.deadline, learned=ws.energy)
        except InfeasibleError:
            continue
        except SolverTimeoutError:
            timed_out = True
            break
        finally:
            ws.report_progress(best)
        rank = (sol.max_time_s, sol.capex_usd + sol.opex_usd + sol.cloud_usd - sol.credit_usd)
        if rank[0] < best_key[0] * (1 - _TIE) or (rank[0] <= best_key[0] * (1 + _TIE) and rank[1] < best_key[1]):
            best, best_key = sol, rank
    if best is None:
        if timed_out:
            raise SolverTimeoutError("no feasible design found within the time limit")
        raise InfeasibleError("no design over the candidates meets the constraints")
    if timed_out:
        best = replace(best, status="feasible", gap=1.0,
                       note="; ".join(x for x in (best.note, "time limit reached before every candidate was tried") if x))
    return best
