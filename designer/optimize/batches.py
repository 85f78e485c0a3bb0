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

__all__ = ["solve", "search_budget", "NONE_IN_BUDGET", "EXACT_UP_TO", "SEARCH_SCANS"]

import math
from typing import Iterable

from dataclasses import replace

from designer.errors import InfeasibleError, SolverTimeoutError
from designer.optimize import bounds, dominance, kind_bounds, preferences
from designer.optimize.milp import Solution
from designer.optimize.min_time import solve_min_time
from designer.optimize.problem import Limits, Option, pareto
from designer.optimize.rigid import solve_scheduled
from designer.optimize.task import Thresholds
from designer.optimize.workspace import Workspace
from designer.spec.choices import Deployment

# Up to this many workloads the search is exact; beyond, it evaluates at most
# search_budget(workloads) on-prem candidates (workload scans: SEARCH_SCANS over the workloads,
# at least MIN_SEARCH), cheapest bound first, and the design is reported `feasible` with its gap
# to the lowest bound of those left. Measured on benchmarks/specs_large.py: at 50 workloads each
# on-prem candidate costs 2-4 s (its evaluation, then the programs of its cut loop), and the
# design of the 2nd-4th cheapest bounds is within 1-2% of the best of all 190 (100 s more).
EXACT_UP_TO = 10
SEARCH_SCANS = 100
MIN_SEARCH = 2
_BATCH = 1  # on-prem candidates per program: small batches find an incumbent early, and it prunes
# Objectives whose optimum can be bounded by a lower bound on total cost.
_PRUNABLE = ("min_total_cost",)
_SAME_OBJECTIVE = 1e-9  # relative difference of two programs' objectives that counts as equal


def search_budget(workloads: int) -> int | None:
    """On-prem candidates the design's search may evaluate for ``workloads`` workloads: None
    (every one that its bounds cannot rule out) up to :data:`EXACT_UP_TO`, else
    max(:data:`MIN_SEARCH`, :data:`SEARCH_SCANS` / workloads), so the search's cost grows
    no faster than its workloads."""
    return None if workloads <= EXACT_UP_TO else max(MIN_SEARCH, SEARCH_SCANS // workloads)


def solve(ws: Workspace, th: Thresholds, *, keys: Iterable[str] | None = None, limits: Limits | None = None,
          objective: str | None = None, solver: str = "highs", time_limit_s: float | None = None,
          cutoff: float | None = None, evaluations: int | None = None, below: float | None = None,
          require_onprem: bool = False, until_found: bool = False, tighten: bool = False) -> Solution:
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
        evaluations: evaluate at most this many on-prem candidates not evaluated before (those
            the workspace has already evaluated are free). When the search needs more, the best
            design so far is returned as ``feasible`` with its gap to the lowest bound of the
            candidates left, as when the deadline passes; explanations use it to stay cheap.
        below: only a design whose objective is below this is wanted (a binding test asks
            whether relaxing a constraint finds a better design than the one chosen): every
            program stops as soon as its bound reaches it.
        require_onprem: only designs that build an on-prem system (the cloud alone is never
            the answer).
        until_found: ``evaluations`` stops the search only once it holds a design (the
            design's own search: a budget spent before any design is found would report none
            where one exists).
        tighten: when ``evaluations`` stops the search, raise the untried candidates' bounds
            from the best network of their kind (:func:`designer.optimize.kind_bounds.tighten`)
            before the gap is measured.

    When the workspace's deadline (:class:`~designer.optimize.clock.Deadline`) passes, the best
    design so far is returned as ``feasible``, its gap measured against the lowest bound of the
    candidates not yet tried.

    Raises:
        InfeasibleError: no design over those candidates meets ``th`` and the limits (and,
            with ``cutoff``, none is cheaper than it).
        SolverTimeoutError: the deadline passed before any design was found.
    """
    keys = sorted(ws.by_key if keys is None else set(keys))
    objective = objective or ws.task.objective
    prunable = objective in _PRUNABLE
    per_token = objective == "min_cost_per_token"
    cloud = [k for k in keys if ws.by_key[k].deployment is Deployment.CLOUD]
    deadline = ws.deadline
    ready = []
    cut = False  # the deadline passed before every cloud offer was evaluated
    # The offers likeliest to be cheap come first: a limit that passes among them leaves a good
    # design in hand, and (minimizing cost) an offer no workload can run cheaper on than on
    # those before is never evaluated.
    dominated = _DominatedOffers(ws, th) if prunable and not ws.credits else None
    for k in _cheapest_first(ws, cloud):
        if deadline.expired():
            cut = True
            break
        if dominated is not None and dominated.beaten(k):
            continue
        if ws.prepare(k, th):
            ready.append(k)
            if dominated is not None:
                dominated.add(k)
        elif deadline.expired():
            cut = True  # its evaluation was cut short
            break
    ready.sort()
    if cut:
        return _cloud_in_time(ws, ready, len(cloud), th, limits, objective, solver, time_limit_s,
                              cutoff if prunable else None, require_onprem)
    best: Solution | None = None
    if deadline.limit_s is not None and ready and objective != "min_time" and not require_onprem:
        # Under a time limit, the cloud alone first: a design in hand before the long search.
        best = _cloud_only(ws, ready, th, limits, objective, solver, time_limit_s, cutoff if prunable else None)
    onprem = dominance.undominated(ws, [k for k in keys if ws.by_key[k].deployment is Deployment.ON_PREM])
    if objective == "min_time":
        return solve_min_time(ws, th, ready, onprem, limits, solver, time_limit_s)
    # Two levels of bound: an ideal network first (shared by all candidates with one GPU type),
    # then the best network of the candidate's own kind for those that survive the first.
    late = None  # the candidates not tried when the deadline passed
    # With soft preferences the program minimises cost - credit: a cost bound becomes a bound on
    # that (designer.optimize.preferences.objective_bound), and designs compare by cost - credit.
    def adjusted(bound: float) -> float:
        return preferences.objective_bound(bound, ws.credits)

    first_bounds = {}
    for k in onprem:
        if deadline.expired():
            late = [k for k in onprem if k not in first_bounds]
            break
        first_bounds[k] = adjusted(bounds.lower_bound(ws, k, th, keys=cloud, best=False))
    pending = sorted((k for k in first_bounds if first_bounds[k] < math.inf), key=lambda k: (first_bounds[k], k))
    best_total = cutoff if (prunable and cutoff is not None) else math.inf
    if best is not None and prunable:
        best_total = min(best_total, best.capex_usd + best.opex_usd + best.cloud_usd - best.credit_usd)
    first = late is None
    if late is not None:
        late, pending = [*pending, *late], []
    budget_out = False  # the search stopped because ``evaluations`` were spent
    while first or pending:
        first = False
        batch = []
        while pending and len(batch) < _BATCH:
            if deadline.expired():
                late = list(pending)
                break
            k = pending.pop(0)
            if prunable and first_bounds[k] >= best_total:
                pending = []  # every later bound is no lower
                break
            if prunable and adjusted(bounds.lower_bound(ws, k, th, keys=cloud)) >= best_total:
                continue
            if evaluations is not None and not ws.evaluated(k):
                if evaluations <= 0 and (best is not None or not until_found):
                    late, budget_out = [k, *pending], True
                    break
                evaluations -= 1
            if not ws.prepare(k, th, order=_largest_first(ws, k), pruned=_pruning(ws, k, th, cloud, best_total,
                                                                               adjusted) if prunable else None):
                continue
            if prunable and adjusted(bounds.refined_bound(ws, k, th, cloud)) >= best_total:
                continue
            if per_token and best is not None and adjusted(bounds.usage_bound(ws, k, th, cloud)) >= \
                    best.objective - _SAME_OBJECTIVE * max(1.0, abs(best.objective)):
                continue
            batch.append(k)
        if late is not None:
            break
        if not batch and (best is not None or pending or require_onprem):
            continue  # the cloud alone is in every program: solved alone only when nothing else is
        # A design builds at most one on-prem system, so the optimum is the best of the
        # programs over (cloud + each batch); each is small, and objectives of different
        # batches compare directly (ties are priced by each system's global rank).
        try:
            ws.solves += 1
            problem = ws.problem([*ready, *batch], th, limits=limits, objective=objective)
            if require_onprem:
                problem = replace(problem, onprem_required=True)
            sol = solve_scheduled(problem, solver=solver, time_limit_s=time_limit_s, deadline=deadline,
                                  cutoff=_beats(best, below), learned=ws.energy)
        except InfeasibleError:
            continue
        except SolverTimeoutError:
            late = list(batch) + list(pending)
            break
        finally:
            ws.report_progress(best)
        total = sol.capex_usd + sol.opex_usd + sol.cloud_usd
        if prunable and cutoff is not None and total >= cutoff * (1 - 1e-9):
            continue  # only a design cheaper than the cutoff is wanted
        if best is not None and sol.objective >= best.objective - _SAME_OBJECTIVE * max(1.0, abs(best.objective)):
            continue  # the first of equal designs is kept
        if below is not None and sol.objective >= below:
            continue
        best, best_total = sol, (total - sol.credit_usd if prunable else math.inf)
    if best is None:
        if late is not None:
            raise SolverTimeoutError(NONE_IN_BUDGET if budget_out else _NONE_IN_TIME)
        raise InfeasibleError("no design over the candidates meets the constraints"
                              + (" and is cheaper than the cutoff" if cutoff is not None else ""))
    if late:
        late_bounds = None
        if prunable:
            # A candidate reached before its first bound still has the one of its servers at
            # their compute floor (no plan search: quick once the time is up).
            late_bounds = [first_bounds[k] if k in first_bounds else adjusted(bounds.compute_bound(ws, k, th, cloud))
                           for k in late]
        if tighten and prunable and budget_out and not deadline.expired():
            late_bounds = kind_bounds.tighten(ws, th, late, late_bounds, cloud, best_total, adjusted, solver)
        unbounded = sum(k not in first_bounds and not (late_bounds and late_bounds[i] > 0)
                        for i, k in enumerate(late))
        best = _out_of_time(best, late_bounds, len(late), len(onprem), budget_out, unbounded)
    return best


# Workloads evaluated on a candidate before its bound is checked again: about 1.5x apart, so a
# candidate of W workloads is checked about log(W) times.
def _checkpoints(total: int) -> frozenset[int]:
    points, n = set(), 1
    while n < total:
        points.add(n)
        n = max(n + 1, int(n * 1.5))
    return frozenset(points)


def _largest_first(ws: Workspace, key: str) -> list:
    """The workloads in order of their least GPU-time on ``key``'s GPU, largest first: those
    raise the candidate's bound the most once evaluated."""
    floor = bounds.flops_gpu_seconds(ws, key)
    return sorted(ws.workloads, key=lambda w: (-floor[w.name], w.name))


def _pruning(ws: Workspace, key: str, th: Thresholds, cloud: list[str], best_total: float, adjusted):
    """Whether candidate ``key`` can no longer beat ``best_total``, asked while its workloads
    are evaluated one by one (:meth:`~designer.optimize.workspace.Workspace.prepare`): its
    bound with the evaluated workloads at what their evaluation found
    (:func:`~designer.optimize.bounds.refined_bound`). Most candidates whose bound before
    evaluation was below the best design are dropped after a part of their workloads."""
    if best_total == math.inf:
        return None
    points = _checkpoints(len(ws.workloads))

    def pruned(done) -> bool:
        return len(done) in points and adjusted(bounds.refined_bound(ws, key, th, cloud, scanned=done)) >= best_total
    return pruned


def _beats(best: Solution | None, below: float | None) -> float | None:
    """The objective a new program's design must stay under to matter: below ``best``'s by more
    than float noise (the first of equal designs is kept) and below ``below``; None: any."""
    limits = [] if below is None else [below]
    if best is not None:
        limits.append(best.objective - _SAME_OBJECTIVE * max(1.0, abs(best.objective)))
    return min(limits) if limits else None


def _cloud_only(ws: Workspace, ready: list[str], th: Thresholds, limits: Limits | None, objective: str,
                solver: str, time_limit_s: float | None, cutoff: float | None) -> Solution | None:
    """The best design in the cloud alone, or None (none, or not cheaper than ``cutoff``)."""
    try:
        ws.solves += 1
        sol = solve_scheduled(ws.problem(ready, th, limits=limits, objective=objective), solver=solver,
                              time_limit_s=time_limit_s, deadline=ws.deadline)
    except (InfeasibleError, SolverTimeoutError):
        return None
    ws.report_progress(sol)
    total = sol.capex_usd + sol.opex_usd + sol.cloud_usd
    return None if cutoff is not None and total >= cutoff * (1 - 1e-9) else sol


def _cheapest_first(ws: Workspace, cloud: list[str]) -> list[str]:
    """The cloud offers in order of the least their bill for every workload can be: each
    workload's least GPU-seconds on the offer's GPU (its compute floor,
    :func:`~designer.optimize.bounds.flops_gpu_seconds`: no plan search) at the offer's price per
    instance-second over its GPUs; offers that cannot be priced last."""
    def floor(key: str) -> float:
        system = ws.system(key)
        if system is None:
            return math.inf
        gpu_s = sum(bounds.flops_gpu_seconds(ws, key).values())
        return gpu_s / system.candidate.gpus_per_node * system.usd_per_node_s
    return sorted(cloud, key=lambda k: (floor(k), k))


class _DominatedOffers:
    """Cloud offers that cannot be in a design of least cost: a cloud job's option adds only its
    bill to the objective (it shares no capacity, schedule or limit but the budgets, which a
    cheaper bill only helps), so an offer matters only if it bills some workload less than the
    offers evaluated before. Its least bill for a workload is the workload's compute floor
    (:func:`~designer.optimize.bounds.flops_gpu_seconds`) in instance-seconds at its rate: every
    pricing model bills at least the instance-seconds used. An offer whose least bill exceeds the
    best evaluated bill of every workload is dominated, and left unevaluated (exact: the
    workloads' cloud floors, :func:`~designer.optimize.bounds.cloud_floor`, are those of the offers
    evaluated, as no other bills less)."""

    def __init__(self, ws: Workspace, th: Thresholds):
        self.ws, self.th = ws, th
        self.best = {w.name: math.inf for w in ws.workloads}

    def add(self, key: str) -> None:
        """Take the bills of the evaluated offer ``key`` into each workload's best: over the
        options its program holds (the qualifying evaluations no other matches in GPUs and
        bill, as :meth:`~designer.optimize.workspace.Workspace.problem` keeps them)."""
        system = self.ws.system(key)
        gpn = system.candidate.gpus_per_node

        def bill(o: Option) -> float:
            return system.cost_usd(o.gpus / gpn, o.time_s)

        for w in self.ws.workloads:
            opts = [Option(e.gpus, e.time_s, e.utilization, i, e.gpus)
                    for i, e in enumerate(self.ws.evaluations.get((w.name, key), ()))
                    if self.th.admits(w.name, e.time_s, e.utilization)]
            for o in pareto(opts, keep_time=False, bill=bill):
                self.best[w.name] = min(self.best[w.name], bill(o))

    def beaten(self, key: str) -> bool:
        """Whether offer ``key`` bills every workload more than its best evaluated bill."""
        system = self.ws.system(key)
        if system is None:
            return False
        floor = bounds.flops_gpu_seconds(self.ws, key)
        rate = system.usd_per_node_s / system.candidate.gpus_per_node
        return all(floor[w] * rate > best * (1 + 1e-9) for w, best in self.best.items())


def _cloud_in_time(ws: Workspace, ready: list[str], offers: int, th: Thresholds, limits: Limits | None,
                   objective: str, solver: str, time_limit_s: float | None, cutoff: float | None,
                   require_onprem: bool) -> Solution:
    """The answer when the deadline passes while the cloud offers are evaluated (many workloads,
    a short limit): the best design in the cloud offers evaluated so far, ``feasible`` with an
    unbounded gap (no on-prem candidate has a bound yet), so the limit still yields a design.

    Raises:
        SolverTimeoutError: none of them runs every workload (or the search must build on-prem)."""
    best = None if objective == "min_time" or require_onprem or not ready else \
        _cloud_only(ws, ready, th, limits, objective, solver, time_limit_s, cutoff)
    if best is None:
        raise SolverTimeoutError(_NONE_IN_TIME)
    note = (f"time limit reached with {offers - len(ready)} of {offers} cloud offers and every on-prem candidate "
            "untried (before their cost bound was computed, so the gap is not bounded; a longer --time-limit "
            "bounds it)")
    return replace(best, status="feasible", gap=1.0, note="; ".join(x for x in (best.note, note) if x))


_NONE_IN_TIME = "no feasible design found within the time limit"
NONE_IN_BUDGET = "no feasible design found among the candidates evaluated"


def _out_of_time(best: Solution, late_bounds: list[float] | None, left: int, total: int,
                 budget_out: bool = False, unbounded: int = 0) -> Solution:
    """``best`` as the answer of a search the deadline (or its evaluation budget) cut short:
    ``feasible``, its gap to the lowest cost bound of the candidates left untried (unknown,
    100%, where costs have no bound, or ``unbounded`` candidates' bounds were not reached: the
    note then says so, as a 100% gap alone would not)."""
    total_usd = best.capex_usd + best.opex_usd + best.cloud_usd
    if late_bounds is not None and total_usd > 0:
        gap = max(best.gap, (total_usd - min(min(late_bounds), total_usd)) / total_usd)
    else:
        gap = 1.0
    if budget_out and late_bounds is not None and gap <= 0.0 and best.status == "optimal":
        return best  # every candidate the budget left has a bound at the design's cost: proven optimal
    why = "evaluation budget spent" if budget_out else "time limit reached"
    note = f"{why} with {left} of {total} on-prem candidates untried"
    if unbounded and gap >= 1.0:
        note += (f" ({unbounded} before their cost bound was computed, so the gap is not bounded; "
                 "a longer --time-limit bounds it)")
    return replace(best, status="feasible", gap=gap, note="; ".join(x for x in (best.note, note) if x))
