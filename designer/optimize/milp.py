"""Solving the integer program of :mod:`designer.optimize.formulation`: solvers, phases and the answer.

HiGHS (through highspy) or CBC solve the model single-threaded with a fixed seed, so ties break
alike on every run. ``min_time`` and ``min_cost_per_token`` are lexicographic: a first phase
fixes the primary objective (the longest time to train, the GPU-seconds' cost), a second prices
the cheapest design that keeps it. With :mod:`designer.optimize.formulation`, the only modules
importing PuLP.
"""

from __future__ import annotations

__all__ = ["Solution", "solve_problem", "SOLVERS"]

import math
import os
import sys
import tempfile
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Mapping

import pulp

from designer.errors import InfeasibleError, SolverError, SolverTimeoutError
from designer.optimize.clock import Deadline
from designer.optimize.formulation import SCALE_USD, Builder, var_name
from designer.optimize.ownership import fixed_cost_usd, usage_rate_usd_per_gpu_s
from designer.optimize.problem import Option, Problem
from designer.optimize.schedule import Slot

SOLVERS = ("highs", "cbc")
REL_GAP = 1e-9
MIN_TIME_GAP = 1e-4


@dataclass(frozen=True, slots=True)
class Solution:
    """What the program chose. Money in US dollars."""

    status: str  # optimal | feasible
    gap: float
    onprem_key: str | None
    nodes: int
    counts: Mapping[str, int]  # leaf, spine, core, leaf_spine_links, spine_core_links, racks, tiers
    assignment: Mapping[str, tuple[str, Option]]  # workload -> (system key, option)
    capex_usd: float
    opex_usd: float
    cloud_usd: float
    objective: float
    variables: int
    constraints: int
    solver: str
    max_time_s: float = 0.0  # min_time: the longest time to train, seconds
    # The soft preferences' credit the design earned (in the objective, never in its cost).
    credit_usd: float = 0.0
    extras: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    # When each workload runs (designer.optimize.rigid fills it in): workload -> Slot.
    schedule: Mapping[str, Slot] = field(default_factory=lambda: MappingProxyType({}))
    # What choosing each option adds to the objective with the system's size held (its busy power,
    # its cloud bill, less its credit), in dollars: (workload, system key, option index) -> USD.
    option_usd: Mapping[tuple[str, str, int], float] = field(default_factory=lambda: MappingProxyType({}))
    # Why the design is not proven optimal beyond the solver's own gap (a schedule needed more
    # nodes than the program's GPU-time bound, the command's time limit): one sentence, or "".
    note: str = ""
    # The storage and management networks' counts the program chose for the on-prem system:
    # (role, designer.topology.networks.NetworkSize field) -> count (designer.optimize.networks).
    network_counts: Mapping[tuple[str, str], int] = field(default_factory=lambda: MappingProxyType({}))


_QUIETED = False


def _quiet_highs() -> None:
    """HiGHS prints a banner to the process's stdout when its first instance is created; create
    that first instance with stdout pointed at /dev/null so JSON output stays clean."""
    global _QUIETED
    if _QUIETED:
        return
    _QUIETED = True
    try:
        import highspy
    except ImportError:
        return
    sys.stdout.flush()
    saved = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(null)


def _solver(name: str, time_limit_s: float | None, gap: float = REL_GAP):
    if name == "highs":
        _quiet_highs()
        solver = pulp.HiGHS(msg=False, timeLimit=time_limit_s, gapRel=gap, threads=1, random_seed=0)
    elif name == "cbc":
        solver = pulp.PULP_CBC_CMD(msg=False, timeLimit=time_limit_s, gapRel=gap, threads=1)
    else:
        raise SolverError(f"unknown solver {name!r}; choose one of {', '.join(SOLVERS)}")
    if not solver.available():
        hint = "pip install highspy" if name == "highs" else "pip install 'pulp>=3.3,<4'"
        raise SolverError(f"solver {name} is not available ({hint})")
    return solver


def _value(v) -> float:
    if v is None:
        return 0.0
    val = pulp.value(v)
    return 0.0 if val is None else float(val)


def _run(b: Builder, objective, solver: str, time_limit_s: float | None, gap: float = REL_GAP) -> str:
    b.m.setObjective(objective)
    engine = _solver(solver, time_limit_s, gap)
    # CBC works through files (model, solution): in a folder of this run's own, removed on every
    # way out (an error, Ctrl-C, SIGTERM), not left in the shared temporary folder.
    with tempfile.TemporaryDirectory(prefix="designer-solver-") as folder:
        if hasattr(engine, "tmpDir"):
            engine.tmpDir = folder
        try:
            b.m.solve(engine)
        except pulp.PulpSolverError as exc:
            raise SolverError(f"solver {solver} failed: {exc}") from None
    status = pulp.LpStatus[b.m.status]
    has_solution = b.m.sol_status in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible)
    if status == "Optimal" and b.m.sol_status == pulp.LpSolutionOptimal:
        return "optimal"
    if has_solution:
        return "feasible"
    if status == "Infeasible":
        raise InfeasibleError("no design meets every constraint")
    if time_limit_s is not None:
        raise SolverTimeoutError(f"no feasible design found within the time limit of {time_limit_s:g} s")
    raise InfeasibleError(f"the solver ended with status {status.lower()}")


def solve_problem(problem: Problem, *, solver: str = "highs", time_limit_s: float | None = None,
                  deadline: Deadline | None = None, rel_gap: float = REL_GAP) -> Solution:
    """Build and solve the program of :mod:`designer.optimize.formulation`.

    Args:
        problem: systems, options, economics and limits.
        solver: ``highs`` (HiGHS through highspy) or ``cbc`` (PuLP's bundled CBC).
        time_limit_s: stop each solver run after this long and return the best design found, if any.
        deadline: the command's deadline: each solver run gets at most what is left of it.
        rel_gap: the relative gap at which the solver stops (``min_total_cost``; a bound on the
            optimum needs no more than its own precision). The solution's ``gap`` is then at
            least the solver's, and ``objective x (1 - gap)`` is below the optimum.

    Raises:
        InfeasibleError: no design meets the constraints (the caller explains why).
        SolverTimeoutError: the time limit passed with no feasible design.
        SolverError: the solver is missing or failed.
    """
    def limit() -> float | None:
        return time_limit_s if deadline is None else deadline.solver_limit(time_limit_s)

    b = Builder(problem)
    b.build()
    b.constrain_limits()
    capex, opex, cloud, _power = b.totals()
    total = capex + opex + cloud
    max_time_days = 0.0
    if problem.objective == "min_time":
        tmax = b.m.add_variable("longest_time_days", lowBound=0)
        for w in problem.workloads:
            terms = [b.option_of[(ww, key, idx)].time_s / 86400.0 * var
                     for (ww, key, idx), var in b.x.items() if ww == w]
            b.m += tmax >= pulp.lpSum(terms), f"longest__{var_name(w)}"
        # Phase 1: the longest time to train alone, to 0.01% (a makespan objective has many
        # equal optima; proving the last digits costs far more than they are worth).
        max_time_days = _first_phase(b, tmax, "time_fixed", solver, limit(), MIN_TIME_GAP)
        objective = (total - b.credit() + b.tie_break()) / SCALE_USD
    elif problem.objective == "min_cost_per_token":
        # Phase 1: the cost of the GPU-seconds used, less the soft preferences' credit on it. It
        # does not see how big the system is (a node left idle costs nothing there), so phase 2
        # then builds the cheapest system that keeps that charge: without it the solver may size
        # the cluster and fabric at random.
        primary = (_usage_cost(b, problem) + cloud - _usage_credit(b, problem) + b.tie_break()) / SCALE_USD
        primary_value = _first_phase(b, primary, "usage_cost_fixed", solver, limit(), REL_GAP)
        objective = (total - b.credit() + b.tie_break()) / SCALE_USD
    elif problem.objective == "min_capex":
        objective = (capex + b.tie_break()) / SCALE_USD
    elif problem.objective == "min_power":
        objective = _power / 1e6 + (total + b.tie_break()) / SCALE_USD * 1e-9
    elif problem.objective == "min_racks":
        objective = pulp.lpSum(b.racks.values()) + (total + b.tie_break()) / SCALE_USD * 1e-9
    else:
        objective = (total - b.credit() + b.tie_break()) / SCALE_USD
    # min_time's second phase (cost at the best time) is solved to 1e-6: with many systems in the
    # program, proving the cost to the last dollar costs more than it is worth.
    status = _run(b, objective, solver, limit(), gap=1e-6 if problem.objective == "min_time" else rel_gap)
    gap = 0.0 if status == "optimal" else _gap(b)
    if rel_gap > REL_GAP:
        gap = max(gap, rel_gap)  # stopped within rel_gap of its bound: "optimal" to that precision
    sol = _extract(b, problem, status, gap, solver, max_time_days)
    if problem.objective == "min_cost_per_token":
        # The objective that ranks designs is phase 1's; phase 2 only sized the system.
        sol = replace(sol, objective=primary_value * SCALE_USD)
    return sol


def _first_phase(b: Builder, primary, name: str, solver: str, time_limit_s: float | None, gap: float) -> float:
    """Lexicographic optimisation, first step: minimise ``primary``, then hold it at its optimum
    (to the relative ``gap``) with a constraint called ``name`` while a second objective is
    minimised. Returns the optimum of ``primary``."""
    _run(b, primary, solver, time_limit_s, gap=gap)
    value = _value(primary)
    b.m += primary <= value * (1 + gap) + 1e-9, name
    return value


def _usage_cost(b: Builder, problem: Problem) -> pulp.LpAffineExpression:
    """On-prem cost charged by GPU-seconds used, at each system's full-horizon cost per GPU-second
    (:func:`~designer.optimize.problem.usage_rate_usd_per_gpu_s`), plus the parts a built system
    has once (the fabric manager's appliances, :func:`~designer.optimize.ownership.fixed_cost_usd`)
    on its build binary: the charge of a network sees them."""
    terms = []
    for system in problem.onprem:
        fixed = fixed_cost_usd(system, problem.economics)
        if fixed and system.key in b.sys:
            terms.append(fixed * b.sys[system.key]["y"])
        rate = usage_rate_usd_per_gpu_s(system, problem.economics)
        for (w, key, idx), var in b.x.items():
            if key == system.key:
                terms.append(rate * b.option_of[(w, key, idx)].gpu_seconds * var)
    return pulp.lpSum(terms)


def _usage_credit(b: Builder, problem: Problem) -> pulp.LpAffineExpression:
    """The soft preferences' credit on phase 1's charge, as :meth:`Builder.credit` counts it on the
    whole cost (designer.optimize.preferences): per option run on a matching system, ``usd / |W|``
    and ``share`` of what the option is charged (its GPU-seconds at the system's rate on-prem, its
    bill in the cloud)."""
    credits = problem.credits
    if not credits:
        return pulp.LpAffineExpression()
    rates = {s.key: usage_rate_usd_per_gpu_s(s, problem.economics) for s in problem.onprem if s.key in credits}
    per_workload = 1.0 / len(problem.workloads)
    terms = []
    for (w, key, idx), var in b.x.items():
        if key not in credits:
            continue
        usd, share = credits[key]
        charge = (rates[key] * b.option_of[(w, key, idx)].gpu_seconds if key in rates
                  else b.cloud_cost_of.get((w, key, idx), 0.0))
        coef = usd * per_workload + share * charge
        if coef:
            terms.append(coef * var)
    return pulp.lpSum(terms)


def _gap(b: Builder) -> float:
    try:
        solver_model = b.m.solverModel  # HiGHS keeps its model; CBC does not report a gap here
        info = solver_model.getInfo()
        return float(info.mip_gap) if math.isfinite(info.mip_gap) else 1.0
    except Exception:  # noqa: BLE001 - a missing gap is reported as unknown (1.0), never fatal
        return 1.0


def _extract(b: Builder, problem: Problem, status: str, gap: float, solver: str, max_time_days: float) -> Solution:
    capex, opex, cloud, power = b.totals()
    chosen = None
    for key, s in b.sys.items():
        if _value(s["y"]) > 0.5:
            chosen = key
    counts: dict[str, int] = {}
    nodes = 0
    net: dict[tuple[str, str], int] = {}
    if chosen is not None:
        for where, expr in sorted(b.network_counts.get(chosen, {}).items()):
            net[where] = int(round(_value(expr)))
        s = b.sys[chosen]
        nodes = int(round(_value(s["n"])))
        for name in ("leaf", "spine", "core", "leaf_spine_links", "spine_core_links", "racks"):
            counts[name] = int(round(_value(s[name])))
        counts["tiers"] = 1 if s["t1"] is not None and _value(s["t1"]) > 0.5 else (
            3 if s["t3"] is not None and _value(s["t3"]) > 0.5 else (2 if s["t2"] is not None else 1))
    assignment: dict[str, tuple[str, Option]] = {}
    for (w, key, idx), var in sorted(b.x.items()):
        if _value(var) > 0.5:
            assignment[w] = (key, b.option_of[(w, key, idx)])
    coefficients = b.m.objective
    # Only where the objective is the cost (designer.optimize.rigid repairs those schedules by it).
    option_usd = ({k: coefficients.get(var, 0.0) * SCALE_USD for k, var in b.x.items()}
                  if problem.objective == "min_total_cost" else {})
    return Solution(
        option_usd=MappingProxyType(option_usd),
        status=status, gap=gap, onprem_key=chosen, nodes=nodes, counts=MappingProxyType(counts),
        assignment=MappingProxyType(assignment), capex_usd=_value(capex), opex_usd=_value(opex),
        cloud_usd=_value(cloud), objective=_value(b.m.objective) * SCALE_USD,
        variables=b.m.numVariables(), constraints=b.m.numConstraints(), solver=solver, max_time_s=max_time_days * 86400.0,
        credit_usd=_value(b.credit()) if problem.credits else 0.0,
        extras=MappingProxyType({"power_w": _value(power), "racks": float(sum(_value(q) for q in b.racks.values()))}),
        network_counts=MappingProxyType(net),
    )
