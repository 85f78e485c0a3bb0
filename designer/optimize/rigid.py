"""Designs whose GPU counts form a feasible schedule: solve, pack the chosen sizes, cut, and re-solve until they fit.

Constraint (5) of :mod:`designer.optimize.formulation` admits any assignment whose GPU-time fits
before each deadline, as if jobs could stretch over whatever GPUs are free. Jobs run at a fixed
size, so after each solve the on-prem jobs are packed (:func:`designer.optimize.schedule.pack`).
When they do not fit, the smallest node count N_A at which the same assignment A packs is found
by bisection, between the program's count and every job side by side (which always packs: each
job meets its deadline alone), and constraint (15) is added: A is chosen only on at least N_A
nodes (never, when no allowed size packs it). This is a combinatorial Benders cut (Codato &
Fischetti 2006, "Combinatorial Benders' cuts for mixed-integer linear programming"), with the
packing as the oracle; the program, free to pick other sizes, other systems or the cloud, is
solved again. Each cut removes only designs the packing cannot run, so every program's optimum is
a lower bound and the first that packs is optimal as far as the packing can tell.

After :data:`_ROUNDS` cuts, or when the command's deadline passes, the last assignment is kept
on the nodes it needs (constraint 14) and the design reported ``feasible`` with its gap to the
last program's bound.
"""

from __future__ import annotations

__all__ = ["solve_scheduled", "pack_solution"]

import math
from dataclasses import replace
from types import MappingProxyType

from designer.errors import InfeasibleError
from designer.optimize.clock import Deadline
from designer.optimize.milp import Solution, solve_problem
from designer.optimize.problem import OnPremSystem, Problem
from designer.optimize.schedule import Job, Slot, pack

_ROUNDS = 12  # cuts allowed per program before the last assignment is kept at the size it needs
_SAME = 1e-6  # relative objective difference that counts as equal to the bound


def _system(problem: Problem, key: str) -> OnPremSystem:
    return next(s for s in problem.onprem if s.key == key)


def _node_cap(problem: Problem, system: OnPremSystem) -> int:
    cap = system.shape.max_nodes
    for limit in (problem.limits.nodes, problem.fixed_nodes):
        if limit is not None:
            cap = min(cap, limit)
    return cap


def pack_solution(problem: Problem, sol: Solution, nodes: int | None = None) -> dict[str, Slot] | None:
    """The schedule of ``sol``: its on-prem jobs packed on ``nodes`` nodes (its own by default),
    each cloud job from day 0 on its own instances. None when the on-prem jobs do not pack."""
    cloud = {w: Slot(w, 0.0, o.time_s, o.gpus) for w, (key, o) in sol.assignment.items() if key != sol.onprem_key}
    # A job on part of each scale-up domain (64 of an NVL72's 72) keeps the whole domains from others.
    jobs = [Job(w, o.held_gpus, o.time_s, problem.deadlines_s[w]) for w, (key, o) in sol.assignment.items()
            if key == sol.onprem_key]
    if not jobs:
        return cloud
    gpn = _system(problem, sol.onprem_key).candidate.gpus_per_node
    placed = pack(jobs, gpn * (sol.nodes if nodes is None else nodes))
    return None if placed is None else {**placed, **cloud}


def _nodes_to_pack(problem: Problem, sol: Solution) -> int | None:
    """Smallest node count (by bisection) at which ``sol``'s on-prem jobs pack, within the
    system's cap; None if none does."""
    system = _system(problem, sol.onprem_key)
    gpn = system.candidate.gpus_per_node
    side_by_side = math.ceil(sum(o.held_gpus for key, o in sol.assignment.values() if key == sol.onprem_key) / gpn)
    hi = min(side_by_side, _node_cap(problem, system))
    if hi <= sol.nodes or pack_solution(problem, sol, hi) is None:
        return None
    lo = sol.nodes  # does not pack
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if pack_solution(problem, sol, mid) is None:
            lo = mid
        else:
            hi = mid
    return hi


def solve_scheduled(problem: Problem, *, solver: str = "highs", time_limit_s: float | None = None,
                    deadline: Deadline | None = None) -> Solution:
    """The program's optimum among designs whose on-prem jobs pack (module docstring), with its
    schedule.

    Raises:
        InfeasibleError: no design meets the constraints, or none whose sizes pack.
        SolverTimeoutError: the time ran out before any design was found.
    """
    run = dict(solver=solver, time_limit_s=time_limit_s, deadline=deadline)
    sol = solve_problem(problem, **run)
    rounds = 0
    while True:
        slots = pack_solution(problem, sol)
        if slots is not None:
            return replace(sol, schedule=MappingProxyType(dict(sorted(slots.items()))))
        need = _nodes_to_pack(problem, sol)
        if rounds >= _ROUNDS or (deadline is not None and deadline.expired()):
            return _kept_at_size(problem, sol, need, run)
        combo = tuple(sorted((w, key, o.index) for w, (key, o) in sol.assignment.items() if key == sol.onprem_key))
        problem = replace(problem, exclude=(*problem.exclude, (combo, need or 0)))
        rounds += 1
        sol = solve_problem(problem, **run)


def _kept_at_size(problem: Problem, sol: Solution, need: int | None, run: dict) -> Solution:
    """``sol``'s assignment on the ``need`` nodes its jobs pack on, priced by the program; gap to
    ``sol``'s own objective (a lower bound)."""
    if need is None:
        raise InfeasibleError("no design found whose workloads' GPU counts fit a schedule on the cluster by their "
                              "deadlines", reasons=("the workloads' GPU-time fits before their deadlines, but no "
                                                    "packing of their fixed sizes was found",))
    key = sol.onprem_key
    chosen = {(w, k): (o,) for w, (k, o) in sol.assignment.items()}
    fixed = replace(problem, options=MappingProxyType(chosen), exclude=(),
                    min_nodes=MappingProxyType({**problem.min_nodes, key: need}))
    out = solve_problem(fixed, **run)
    slots = pack_solution(fixed, out)
    if slots is None:
        raise InfeasibleError("no design found whose workloads' GPU counts fit a schedule on the cluster")
    gap = max(out.gap, (out.objective - sol.objective) / max(abs(out.objective), 1e-12))
    note = (f"the workloads' fixed GPU counts needed {need - sol.nodes} more nodes than their GPU-time alone; "
            f"within {gap:.2%} of the program's bound")
    return replace(out, schedule=MappingProxyType(dict(sorted(slots.items()))), status="feasible", gap=gap, note=note)
