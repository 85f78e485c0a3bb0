"""Repairing an assignment whose fixed GPU counts do not pack: other sizes on the same cluster, found by local search.

The program of :mod:`designer.optimize.formulation` picks each workload's GPU count with the
cluster's GPU-time as the only check (constraint 5). When the chosen counts do not pack
(:func:`designer.optimize.schedule.pack`), the cluster often still holds a schedule with a few
workloads at other counts, or one in the cloud. With the node count held, what an option adds
to the objective is its own coefficient (its busy power, its cloud bill, less any credit;
:attr:`designer.optimize.milp.Solution.option_usd`), so moves can be ranked without a solver.

Local search (a conflict-directed repair, Minton et al. 1992, "Minimizing conflicts"): find the
smallest set of on-prem jobs that alone does not pack (a deletion filter), try every other option
of each of its workloads (another count on the cluster, or the cloud), and take the move that
packs at the least added cost; when none packs, the one that most lowers the node count the jobs
need. At most one move per workload. The result always packs (it is checked by the packing
itself), so the schedule of a repaired design is feasible by construction; it is a heuristic,
and its design is reported with its gap to the program's bound.
"""

from __future__ import annotations

__all__ = ["conflict", "nodes_needed", "repair"]

import math
from typing import Mapping

from designer.optimize.milp import Solution
from designer.optimize.problem import Option, Problem
from designer.optimize.schedule import Job, pack

Assignment = dict[str, tuple[str, Option]]


def _jobs(problem: Problem, assignment: Mapping[str, tuple[str, Option]], names) -> list[Job]:
    return [Job(w, assignment[w][1].held_gpus, assignment[w][1].time_s, problem.deadlines_s[w]) for w in names]


def _onprem(problem: Problem, assignment: Mapping[str, tuple[str, Option]], key: str) -> list[str]:
    return sorted((w for w, (k, _) in assignment.items() if k == key), key=lambda w: (problem.deadlines_s[w], w))


def conflict(problem: Problem, assignment: Mapping[str, tuple[str, Option]], key: str, capacity: int) -> list[str]:
    """The workloads of a smallest set of ``key``'s jobs that alone does not pack on ``capacity``
    GPUs (a deletion filter, Chinneck & Dravnieks 1991: each job is left out in turn when the
    others still do not pack). Removing jobs from a schedule leaves a schedule, so every
    assignment holding this set at these sizes does not pack either."""
    names = _onprem(problem, assignment, key)
    core = list(names)
    for w in names:
        rest = [v for v in core if v != w]
        if rest and pack(_jobs(problem, assignment, rest), capacity) is None:
            core = rest
    return core


def nodes_needed(problem: Problem, assignment: Mapping[str, tuple[str, Option]], key: str, names, gpn: int,
                 lo: int, cap: int) -> int | None:
    """Smallest node count above ``lo`` (which does not pack) at which the jobs ``names`` pack,
    by bisection up to every job side by side (which always packs: each meets its deadline
    alone) or ``cap``; None when none up to ``cap`` does."""
    jobs = _jobs(problem, assignment, names)
    hi = min(math.ceil(sum(j.gpus for j in jobs) / gpn), cap)
    if hi <= lo or pack(jobs, gpn * hi) is None:
        return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if pack(jobs, gpn * mid) is None:
            lo = mid
        else:
            hi = mid
    return hi


def repair(problem: Problem, sol: Solution, gpn: int, cap: int) -> Assignment | None:
    """An assignment whose on-prem jobs pack on ``sol``'s own node count, found from ``sol``'s by
    the local search of the module docstring, or None when it finds none."""
    key, nodes = sol.onprem_key, sol.nodes
    capacity = gpn * nodes
    usd = sol.option_usd
    choices: dict[str, list[tuple[str, Option]]] = {}
    for (w, k), opts in problem.options.items():
        for o in opts:
            if (w, k, o.index) in usd and (k != key or o.held_gpus <= capacity):
                choices.setdefault(w, []).append((k, o))
    assignment: Assignment = dict(sol.assignment)
    moved: set[str] = set()
    need = nodes_needed(problem, assignment, key, _onprem(problem, assignment, key), gpn, nodes, cap) or math.inf
    for _ in range(len(assignment)):
        core = [w for w in conflict(problem, assignment, key, capacity) if w not in moved]
        best = None  # (packs?, need, added cost, workload, choice)
        for w in core:
            here = usd[(w, assignment[w][0], assignment[w][1].index)]
            for k, o in choices.get(w, ()):
                if (k, o.index) == (assignment[w][0], assignment[w][1].index):
                    continue
                trial = {**assignment, w: (k, o)}
                names = _onprem(problem, trial, key)
                if not names or pack(_jobs(problem, trial, names), capacity) is not None:
                    rank = (0, nodes, usd[(w, k, o.index)] - here, w, k, o.index)
                else:
                    n = nodes_needed(problem, trial, key, names, gpn, nodes, cap)
                    rank = (1, math.inf if n is None else n, usd[(w, k, o.index)] - here, w, k, o.index)
                if best is None or rank < best[0]:
                    best = (rank, w, (k, o))
        if best is None or (best[0][0] == 1 and best[0][1] >= need):
            return None  # no move packs or brings the schedule closer
        assignment[best[1]] = best[2]
        moved.add(best[1])
        if best[0][0] == 0:
            return assignment
        need = best[0][1]
    return None
