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

After :data:`_ROUNDS` cuts, after :data:`_STALL` rounds in a row that leave the program's bound
where it was, or when the command's deadline passes, the last assignment is kept on the nodes it
needs (constraint 14) or repaired (:mod:`designer.optimize.repair`), and the design reported
``feasible`` with its gap to the last program's bound. A round that does not raise the bound
found an equally cheap assignment that does not pack either: the no-good cuts (15) remove one
assignment at a time, and with many workloads there are more of equal cost than rounds, while
each such round costs the solver more than the last (50 workloads: the energetic rounds take
0.3-0.7 s each and lift the bound from $100M to $131M, the no-good rounds after them 0.5-13 s
each and lift it by nothing). So with more than :data:`_NOGOOD_UP_TO` jobs on the cluster, a
round that finds no overfull interval goes straight to the fallback: a no-good cut removes one
assignment of fixed sizes among the many of equal cost.
"""

from __future__ import annotations

__all__ = ["solve_scheduled", "pack_solution", "overfull", "NOT_BELOW_CUTOFF"]

import math
from dataclasses import replace

import numpy as np
from types import MappingProxyType

from designer.errors import InfeasibleError
from designer.optimize.clock import Deadline
from designer.optimize.milp import Solution, solve_problem
from designer.optimize.problem import OnPremSystem, Problem
from designer.optimize import repair
from designer.optimize.schedule import Job, Slot, pack

_ROUNDS = 12  # cuts allowed per program before the last assignment is kept at the size it needs
_STALL = 2  # rounds in a row whose bound does not rise before the cuts stop
_ENERGY_CUTS = 16  # energetic intervals added per round (50 workloads: 3 rounds instead of 6 to reach the bound)
_NOGOOD_UP_TO = 8  # on-prem jobs up to which a round without an overfull interval adds a no-good cut
_ENERGY_TOL = 1e-6  # relative overfill of an interval that counts as a violation
_SAME = 1e-6  # relative objective difference that counts as equal to the bound


NOT_BELOW_CUTOFF = "no design of the program beats the best one known"


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


def _conflict_cut(problem: Problem, sol: Solution) -> tuple[tuple[tuple[str, str, int], ...], int]:
    """Constraint (15) for the smallest set of ``sol``'s on-prem jobs that alone does not pack on
    its nodes (:func:`designer.optimize.repair.conflict`), with the node count that set needs
    (0: none allowed). A set that does not pack keeps not packing with jobs added, so the cut
    removes every assignment containing it, not only this one."""
    key = sol.onprem_key
    system = _system(problem, key)
    gpn = system.candidate.gpus_per_node
    core = repair.conflict(problem, sol.assignment, key, gpn * sol.nodes)
    need = repair.nodes_needed(problem, sol.assignment, key, core, gpn, sol.nodes, _node_cap(problem, system))
    return tuple(sorted((w, key, sol.assignment[w][1].index) for w in core)), need or 0


def solve_scheduled(problem: Problem, *, solver: str = "highs", time_limit_s: float | None = None,
                    deadline: Deadline | None = None, cutoff: float | None = None,
                    learned: set[tuple[float, float]] | None = None) -> Solution:
    """The program's optimum among designs whose on-prem jobs pack (module docstring), with its
    schedule.

    ``cutoff``: only a design whose objective is below it is wanted (the caller holds one that
    good). Each round's optimum is a lower bound on every later round's (cuts only remove
    designs), so once one reaches the cutoff no design of this program can beat it and the
    loop stops without further cuts.

    ``learned``: the energetic intervals (constraint 16) added here are put in it. An interval's
    cut holds for every design that packs, whatever its system, sizes or deadlines (each job's
    least overlap is computed from its own), so a search passes the intervals its earlier
    programs found to the later ones, which then start from them instead of finding them again.

    Raises:
        InfeasibleError: no design meets the constraints, or none whose sizes pack, or (with
            ``cutoff``) none whose objective is below the cutoff.
        SolverTimeoutError: the time ran out before any design was found.
    """
    run = dict(solver=solver, time_limit_s=time_limit_s, deadline=deadline)
    sol = solve_problem(problem, **run)
    rounds = stalled = 0
    bound = -math.inf
    while True:
        if cutoff is not None and sol.objective >= cutoff:
            raise InfeasibleError(NOT_BELOW_CUTOFF)
        slots = pack_solution(problem, sol)
        if slots is not None:
            return replace(sol, schedule=MappingProxyType(dict(sorted(slots.items()))))
        stalled = stalled + 1 if sol.objective <= bound + _SAME * max(1.0, abs(bound)) else 0
        bound = max(bound, sol.objective)
        if rounds >= _ROUNDS or stalled >= _STALL or (deadline is not None and deadline.expired()):
            return _fallback(problem, sol, run)
        energy = _energy_cuts(problem, sol)
        if energy:
            problem = replace(problem, energy=(*problem.energy, *energy))
            if learned is not None:
                learned.update(energy)
        elif _onprem_jobs(sol) > _NOGOOD_UP_TO:
            return _fallback(problem, sol, run)
        else:
            problem = replace(problem, exclude=(*problem.exclude, _conflict_cut(problem, sol)))
        rounds += 1
        sol = solve_problem(problem, **run)


def _onprem_jobs(sol: Solution) -> int:
    """How many of ``sol``'s workloads run on its on-prem system."""
    return sum(key == sol.onprem_key for key, _ in sol.assignment.values()) if sol.onprem_key else 0


def _energy_cuts(problem: Problem, sol: Solution) -> list[tuple[float, float]]:
    """The intervals (at most :data:`_ENERGY_CUTS`, most overfull first) in which ``sol``'s
    on-prem jobs must spend more GPU-time than its cluster has (constraint 16), not yet held.

    Intervals start at 0 or a job's latest start and end at a job's earliest end or its
    deadline: the points where some job's least overlap changes slope (Baptiste, Le Pape &
    Nuijten 2001, 3.3). Such an interval is violated by this assignment and valid for every
    design that packs, so the cut removes it and keeps the program a lower bound."""
    key = sol.onprem_key
    capacity = _system(problem, key).candidate.gpus_per_node * sol.nodes
    jobs = [(o.held_gpus, o.time_s, problem.deadlines_s[w]) for w, (k, o) in sol.assignment.items() if k == key]
    return overfull(jobs, capacity, set(problem.energy))


def overfull(jobs: list[tuple[int, float, float]], capacity: int,
             held: set[tuple[float, float]] | frozenset = frozenset()) -> list[tuple[float, float]]:
    """The intervals of :func:`_energy_cuts` for ``jobs`` ((GPUs, time, deadline), seconds) on
    ``capacity`` GPUs: at most :data:`_ENERGY_CUTS`, most overfull first, none of ``held``."""
    if not jobs:
        return []
    starts = sorted({0.0} | {d - t for _, t, d in jobs if d > t})
    ends = sorted({t for _, t, _ in jobs} | {d for _, _, d in jobs})
    # Every interval at once (intervals x jobs): the least overlap of
    # designer.optimize.problem.min_overlap_s, as arrays; a portfolio of W jobs has ~W^2 intervals.
    g, t, d = (np.array(col, dtype=float) for col in zip(*jobs))
    t1 = np.array(starts)[:, None, None]
    t2 = np.array(ends)[None, :, None]
    first = np.minimum(t2, t) - np.maximum(t1, 0.0)
    last = np.minimum(t2, d) - np.maximum(t1, d - t)
    overlap = np.maximum(0.0, np.minimum(np.minimum(first, last), t2 - t1))
    need = (overlap * g).sum(axis=2)
    width = (t2 - t1)[:, :, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        over = np.where(width > 0, need / (capacity * np.where(width > 0, width, 1.0)), 0.0)
    found = [(-float(over[i, j]), starts[i], ends[j]) for i, j in zip(*np.nonzero(over > 1 + _ENERGY_TOL))
             if (starts[i], ends[j]) not in held]
    return [(a, b) for _, a, b in sorted(found)[:_ENERGY_CUTS]]


def _fallback(problem: Problem, sol: Solution, run: dict) -> Solution:
    """When the cuts ran out: the cheaper of ``sol``'s assignment on the nodes it needs and, for
    the cost objective, the sizes the local search of :mod:`designer.optimize.repair` finds to
    pack on ``sol``'s own nodes; with its gap to ``sol``'s objective, the program's bound."""
    need = _nodes_to_pack(problem, sol)
    found = [f for f in (_repaired(problem, sol, run) if sol.option_usd else None,
                         _kept_at_size(problem, sol, need, run, strict=False)) if f is not None]
    if not found:
        return _kept_at_size(problem, sol, need, run)  # raises: nothing packs
    return _bounded(min(found, key=lambda f: f.objective), sol.objective)


def _bounded(found: Solution, bound: float) -> Solution:
    """``found`` (a design that packs) with its gap to ``bound``, the program's lower bound."""
    gap = max(found.gap, (found.objective - bound) / max(abs(found.objective), 1e-12))
    if gap <= _SAME:
        return replace(found, gap=found.gap, note="")
    note = (f"the program's GPU counts did not fit a schedule; the best design found that does is within {gap:.2%} "
            "of the program's bound")
    return replace(found, status="feasible", gap=gap, note=note)


def _priced(problem: Problem, assignment, key: str | None, nodes: int, run: dict) -> Solution | None:
    """``assignment`` on at least ``nodes`` nodes of system ``key``, priced by the program with
    every option fixed, with its schedule; None when the limits refuse it or it does not pack."""
    chosen = {(w, k): (o,) for w, (k, o) in assignment.items()}
    min_nodes = problem.min_nodes if key is None else {**problem.min_nodes, key: nodes}
    fixed = replace(problem, options=MappingProxyType(chosen), exclude=(), min_nodes=MappingProxyType(min_nodes))
    try:
        out = solve_problem(fixed, **run)
    except InfeasibleError:
        return None
    slots = pack_solution(fixed, out)
    if slots is None:
        return None
    return replace(out, schedule=MappingProxyType(dict(sorted(slots.items()))))


def _repaired(problem: Problem, sol: Solution, run: dict) -> Solution | None:
    """``sol``'s cluster at its own node count with the sizes :func:`designer.optimize.repair.repair`
    finds to pack, priced; None when the search finds none."""
    system = _system(problem, sol.onprem_key)
    found = repair.repair(problem, sol, system.candidate.gpus_per_node, _node_cap(problem, system))
    if found is None:
        return None
    on_cluster = any(k == sol.onprem_key for k, _ in found.values())
    return _priced(problem, found, sol.onprem_key if on_cluster else None, sol.nodes, run)


def _kept_at_size(problem: Problem, sol: Solution, need: int | None, run: dict, strict: bool = True) -> Solution | None:
    """``sol``'s assignment on the ``need`` nodes its jobs pack on, priced by the program; gap to
    ``sol``'s own objective (a lower bound). With ``strict=False``, None instead of an error."""
    found = None if need is None else _priced(problem, sol.assignment, sol.onprem_key, need, run)
    if found is None:
        if not strict:
            return None
        if need is None:
            raise InfeasibleError("no design found whose workloads' GPU counts fit a schedule on the cluster by their "
                                  "deadlines", reasons=("the workloads' GPU-time fits before their deadlines, but no "
                                                        "packing of their fixed sizes was found",))
        raise InfeasibleError("no design found whose workloads' GPU counts fit a schedule on the cluster")
    gap = max(found.gap, (found.objective - sol.objective) / max(abs(found.objective), 1e-12))
    note = (f"the workloads' fixed GPU counts needed {need - sol.nodes} more nodes than their GPU-time alone; "
            f"within {gap:.2%} of the program's bound")
    return replace(found, status="feasible", gap=gap, note=note)
