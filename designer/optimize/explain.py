"""Explanations found by solving: why a spec is infeasible and what to relax, and which constraints
bind (the best design of every class is :mod:`designer.optimize.alternatives`).

Every suggestion comes from re-solving the integer program with one constraint changed, never
from a rule of thumb. Feasibility is monotone in each relaxed quantity (a bigger budget, a lower
utilization target, a later deadline only add designs), so the smallest change is the optimum of
a re-solve (budgets, power, racks) or is found by bisection (utilization, deadlines).
"""

from __future__ import annotations

__all__ = ["diagnose", "shortfalls", "constraint_status", "Measures", "program_measures", "BUDGET", "PROGRAM_SEARCHES",
           "budget", "work_done"]

import math
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Callable, Mapping

from designer.design.model import ConstraintStatus
from designer.errors import InfeasibleError, SolverTimeoutError
from designer.optimize import batches
from designer.optimize.clock import OutOfTime
from designer.optimize.milp import Solution
from designer.optimize.problem import Limits
from designer.optimize.task import Thresholds
from designer.optimize.workspace import Workspace
from designer.spec.units import SECONDS_PER_DAY, format_money, format_power

_REL = 1e-6  # relative objective change that counts as "lower"
_UTIL_STEP = 0.005  # precision of the suggested utilization target
_DEADLINE_STEP = 0.005  # relative precision of a suggested deadline
_MAX_DEADLINE_FACTOR = 20.0
_BIND_STEP = 0.10  # loosening step of the binding test (budgets, power, racks, deadlines)
_UTIL_BIND_STEP = 0.05
# The work all the explanations of a design of many workloads (past batches.EXACT_UP_TO) may do
# together (alternatives, ranking, binding constraints, relaxations), in plan searches of the
# performance model, a program counting as PROGRAM_SEARCHES of them; within the command's
# --time-limit. Counted in work, not seconds, so the same spec gets the same explanations on any
# machine. Each explanation re-solves the search; measured on benchmarks/specs_large.py, 2,000
# units take about 8 s at 20 and 50 workloads (1,160-1,260 plan searches of about 5 ms and 10-20
# programs). Up to EXACT_UP_TO workloads they are complete, as the search is (the examples' take
# under 1 s, 5 generated workloads 5-9 s). One cut short is left out with a warning, never given
# from a search it did not finish (benchmarks/portfolio_scale.py).
BUDGET = 2_000
PROGRAM_SEARCHES = 50


def budget(workloads: int) -> int | None:
    """The work (plan searches, a program counting as :data:`PROGRAM_SEARCHES`) the explanations
    of a design of ``workloads`` workloads may do: None (only the command's --time-limit bounds
    them) up to :data:`designer.optimize.batches.EXACT_UP_TO`, else :data:`BUDGET`."""
    return None if workloads <= batches.EXACT_UP_TO else BUDGET


def work_done(ws: Workspace) -> int:
    """The work a workspace has done so far, in the units of :func:`budget`."""
    return ws.evaluator.calls + PROGRAM_SEARCHES * ws.solves


@dataclass(frozen=True, slots=True)
class Measures:
    """What a design costs and occupies, as its bill of materials and floor layout count it (the
    program counts racks by a pooled formula and prices links at a reference size, so its own
    figures can fall a little short)."""

    total_usd: float
    capex_usd: float
    power_w: float
    racks: float
    # The total by cost line (server, switch, ..., power, facility, support, residual as a
    # negative, cloud), when the design's exact pricing is known.
    by_line: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))


def program_measures(sol: Solution) -> Measures:
    """The program's own figures of a solution (when no exact pricing is given)."""
    return Measures(_total(sol), sol.capex_usd, sol.extras["power_w"], sol.extras["racks"])


def _larger(sol: Solution, measure: Callable[[Solution], Measures]) -> Measures:
    """Each figure of ``sol`` at the larger of the program's and ``measure``'s count: a limit
    raised to it admits the design however it is counted."""
    a, b = program_measures(sol), measure(sol)
    return Measures(max(a.total_usd, b.total_usd), max(a.capex_usd, b.capex_usd), max(a.power_w, b.power_w),
                    max(a.racks, b.racks))


def _try(ws: Workspace, th: Thresholds, *, limits: Limits | None = None, keys=None,
         objective: str | None = None, solver: str, time_limit_s: float | None,
         cutoff: float | None = None, evaluations: int | None = None,
         below: float | None = None) -> Solution | None:
    """The optimum of a re-solve with one thing changed, or None when nothing qualifies (or,
    with ``evaluations``, nothing was found among that many newly evaluated candidates)."""
    # An explanation from a search the command's deadline cut short could be wrong: none is given.
    if ws.deadline.expired():
        raise OutOfTime
    try:
        sol = batches.solve(ws, th, keys=keys, limits=limits, objective=objective, solver=solver,
                            time_limit_s=time_limit_s, cutoff=cutoff, evaluations=evaluations, below=below)
    except (InfeasibleError, SolverTimeoutError):
        sol = None
    if ws.deadline.expired():
        raise OutOfTime
    return sol


def _total(sol: Solution) -> float:
    return sol.capex_usd + sol.opex_usd + sol.cloud_usd


def shortfalls(ws: Workspace, th: Thresholds) -> tuple[str, ...]:
    """Why no workload option qualifies, without re-solving: per workload, the best utilization and
    time any candidate reaches against the thresholds (every candidate is evaluated)."""
    return tuple(dict.fromkeys(_best_achievable(ws, th)))


def _best_achievable(ws: Workspace, th: Thresholds, keys=None) -> list[str]:
    """Why workloads have no qualifying option: the best utilization and time they reach."""
    keys = set(ws.by_key) if keys is None else set(keys)
    for key in sorted(keys):
        if not any((w.name, key) in ws.evaluations for w in ws.workloads):
            ws.prepare(key, th)
    reasons = []
    for w in ws.workloads:
        deadline = th.deadlines_s[w.name]
        best_util, best_time, util_at_deadline, fail, seen = 0.0, float("inf"), 0.0, None, False
        for (name, key), evals in ws.evaluations.items():
            if name != w.name or key not in keys:
                continue
            for e in evals:
                if e.estimate is None:
                    fail = fail or e.reason
                    continue
                seen = True
                best_util = max(best_util, e.utilization)
                if e.utilization >= th.min_utilization:
                    best_time = min(best_time, e.time_s)
                if e.time_s <= deadline:
                    util_at_deadline = max(util_at_deadline, e.utilization)
        days = deadline / SECONDS_PER_DAY
        if not seen:
            reasons.append(f"{w.name}: no parallelism plan fits on the allowed systems ({fail or 'no candidate'})")
        elif best_time > deadline:
            if util_at_deadline > 0:
                reasons.append(f"{w.name}: utilization {down3(util_at_deadline)} < {th.min_utilization:g} at the "
                               f"sizes that meet its {days:g}-day deadline")
            elif best_time < float("inf"):
                reasons.append(f"{w.name}: misses its deadline ({best_time / SECONDS_PER_DAY:.1f} > {days:g} days "
                               f"at utilization >= {th.min_utilization:g})")
            else:
                reasons.append(f"{w.name}: utilization at most {down3(best_util)} < {th.min_utilization:g}")
    return reasons


def _bisect_low(lo: float, hi: float, ok: Callable[[float], bool], step: float) -> float | None:
    """Largest x in [lo, hi] (to ``step``) with ok(x), given ok is monotone (true below some x)."""
    if not ok(lo):
        return None
    while hi - lo > step:
        mid = (lo + hi) / 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return lo


def _smallest(lo: float, hi: float, works: Callable[[float], bool], step: float) -> float | None:
    """Smallest x in [lo, hi] (to ``step``, or exactly for whole numbers with ``step`` 1) with
    works(x), given works is monotone (true above some x); checked, not assumed, at ``hi``.
    None when not even ``hi`` works."""
    if not works(hi):
        return None
    if lo >= hi or works(lo):
        return min(lo, hi)
    while hi - lo > step:  # works(hi), not works(lo)
        mid = (lo + hi) / 2 if step < 1 else (lo + hi) // 2
        if mid in (lo, hi):
            break
        if works(mid):
            hi = mid
        else:
            lo = mid
    return hi


def down3(x: float) -> str:
    """``x`` rounded down to 3 decimals: an achieved utilization, and a lowered target that it
    meets, print alike and the printed target still admits it."""
    return f"{math.floor(x * 1000 + 1e-9) / 1000:.3f}"


def _exact_target(ws: Workspace, found: float, hi: float, ok: Callable[[float], bool]) -> float:
    """The largest utilization target that works, given ``ok(found)`` and not ``ok(hi)``.

    Feasibility changes only where the target passes some option's utilization, so the exact
    answer is the utilization of an option evaluated while ``found`` was tried: the largest of
    those in ``[found, hi)`` that ``ok`` accepts, found by bisection over them (``ok`` is true
    below a point)."""
    levels = sorted({e.utilization for evals in ws.evaluations.values() for e in evals
                     if e.estimate is not None and found < e.utilization < hi})
    lo, top = -1, len(levels)  # ok at found (index -1), not at hi (index len)
    while top - lo > 1:
        mid = (lo + top) // 2
        if ok(levels[mid]):
            lo = mid
        else:
            top = mid
    return found if lo < 0 else levels[lo]


_MONEY_STEP = 1e-4  # relative precision of a suggested budget or power limit


def diagnose(ws: Workspace, th: Thresholds, *, solver: str, time_limit_s: float | None,
             measure: Callable[[Solution], Measures] = program_measures,
             fits: Callable[[Limits], bool] | None = None) -> InfeasibleError:
    """Explain an infeasible spec: what conflicts, and the smallest change to each limit that makes
    it feasible (each found by solving with only that limit changed).

    A budget, power or rack limit is searched between the program's optimum of that figure (no
    design counts less, however laid out) and the larger of the program's and the exact figure
    (``measure``) of that design; ``fits(limits)`` (the planner's whole check: a design whose
    bill of materials and floor layout meet every limit) decides each probe, and the suggestion is
    one it accepted. Without ``fits``, the program's own figures decide. The reasons are gathered
    after the searches, from every evaluation they made, so none contradicts a suggestion."""
    limits = ws.limits()
    run = dict(solver=solver, time_limit_s=time_limit_s)
    relax: list[str] = []
    over: list[str] = []

    def check(changed: Limits) -> bool:
        if ws.deadline.expired():
            raise OutOfTime
        if fits is not None:
            return fits(changed)
        return _try(ws, th, limits=changed, **run) is not None

    def searched(field: str, program: float, exact: float, whole: bool = False) -> float | None:
        step = 1 if whole else max(_MONEY_STEP * exact, 0.01)
        return _smallest(program, exact, lambda x: check(replace(limits, **{field: int(x) if whole else x})), step)

    if limits.total_usd is not None:
        sol = _try(ws, th, limits=replace(limits, total_usd=None), **run)
        if sol is not None:
            need = searched("total_usd", _total(sol), _larger(sol, measure).total_usd + 0.01)
            if need is not None:
                relax.append(f"raise budget.total from {format_money(limits.total_usd)} to {format_money(need)}")
                over.append(f"the cheapest design costs {format_money(need)} in total, over the "
                            f"{format_money(limits.total_usd)} budget")
    if limits.capex_usd is not None:
        sol = _try(ws, th, limits=replace(limits, capex_usd=None), objective="min_capex", **run)
        if sol is not None:
            need = searched("capex_usd", sol.capex_usd, _larger(sol, measure).capex_usd + 0.01)
            if need is not None:
                relax.append(f"raise budget.capex from {format_money(limits.capex_usd)} to {format_money(need)}")
    if limits.power_w is not None:
        sol = _try(ws, th, limits=replace(limits, power_w=None), objective="min_power", **run)
        if sol is not None:
            need = searched("power_w", sol.extras["power_w"], _larger(sol, measure).power_w * (1 + 1e-6))
            if need is not None:
                relax.append(f"raise constraints.max_power from {format_power(limits.power_w)} to {format_power(need)}")
    if limits.racks is not None:
        sol = _try(ws, th, limits=replace(limits, racks=None), objective="min_racks", **run)
        if sol is not None:
            # The program's least rack count (rounded up) is a floor for every layout.
            floor = max(limits.racks + 1, math.ceil(sol.extras["racks"] - 1e-9))
            need = searched("racks", floor, max(floor, round(_larger(sol, measure).racks)), whole=True)
            if need is not None:
                relax.append(f"raise constraints.max_racks from {limits.racks} to {int(need)}")
    if th.min_utilization > 0:
        def util_ok(u: float) -> bool:
            return _try(ws, replace(th, min_utilization=u), **run) is not None

        found = _bisect_low(0.0, th.min_utilization, util_ok, _UTIL_STEP)
        if found is not None and found < th.min_utilization:
            found = _exact_target(ws, found, th.min_utilization, util_ok)
            relax.append(f"lower constraints.min_utilization from {th.min_utilization:g} to {down3(found)}")
    for w in ws.workloads:
        if w.deadline_s is None:
            continue

        def ok(factor: float, name: str = w.name) -> bool:
            deadlines = dict(th.deadlines_s)
            deadlines[name] = th.deadlines_s[name] * factor
            return _try(ws, replace(th, deadlines_s=MappingProxyType(deadlines)), **run) is not None

        # Smallest factor >= 1 that works: bisect on the reciprocal so "ok below" holds.
        found = _bisect_low(1.0 / _MAX_DEADLINE_FACTOR, 1.0, lambda r: ok(1.0 / r), _DEADLINE_STEP / _MAX_DEADLINE_FACTOR)
        if found is not None and found < 1.0:
            relax.append(f"extend the deadline of {w.name} from {w.deadline_s / SECONDS_PER_DAY:g} to "
                         f"{w.deadline_s / found / SECONDS_PER_DAY:.1f} days")
    timed = [w for w in ws.workloads if w.deadline_s is not None]
    if len(timed) > 1 and not any(r.startswith("extend the deadline of ") for r in relax):
        # No one deadline is enough: the runs together do not fit the GPUs by their deadlines.
        # One change may still be: every deadline extended by the same factor.
        def all_ok(factor: float) -> bool:
            deadlines = dict(th.deadlines_s)
            for w in timed:
                deadlines[w.name] = th.deadlines_s[w.name] * factor
            return _try(ws, replace(th, deadlines_s=MappingProxyType(deadlines)), **run) is not None

        found = _bisect_low(1.0 / _MAX_DEADLINE_FACTOR, 1.0, lambda r: all_ok(1.0 / r),
                            _DEADLINE_STEP / _MAX_DEADLINE_FACTOR)
        if found is not None and found < 1.0:
            relax.append(f"extend every deadline by {math.ceil((1.0 / found - 1.0) * 1000) / 10:g}% "
                         f"({', '.join(w.name for w in timed)})")
    # After the searches: what they evaluated is what the reasons report.
    reasons = [*_best_achievable(ws, th), *over]
    if not reasons and len(ws.workloads) > 1:
        reasons.append("each workload qualifies on its own, but together their runs do not fit the GPUs "
                       "the spec allows before their deadlines")
    message = "no design meets every constraint"
    if not relax:
        message += "; no single change to a budget, limit, utilization target or deadline is enough"
    return InfeasibleError(message, reasons=tuple(dict.fromkeys(reasons)), relaxations=tuple(relax))


def constraint_status(ws: Workspace, th: Thresholds, sol: Solution, *, solver: str,
                      time_limit_s: float | None,
                      measure: Callable[[Solution], Measures] = program_measures) -> list[ConstraintStatus]:
    """Every constraint of the spec at the chosen design: value, limit, slack, and whether it binds.

    A constraint binds when relaxing it, and only it, changes the design: the re-solve finds a
    better one (for a design reported within a gap of the optimum, one below that bound: a
    better design the search missed is no sign of a binding constraint). Budgets, power and racks are relaxed by removing the limit (a limit that rules
    out a cheaper design binds however far that design is); a deadline is extended by 10% and
    the utilization target lowered by 0.05, finite steps because the program is discrete (a
    deadline with days to spare can still bind when the next smaller cluster would miss it by a
    day). Deadlines are tested in groups: relaxing a group admits every design any of its
    members would, so a group that changes nothing clears all its members in one re-solve, and
    only groups that do are split (about 2 b log2 W re-solves for b binding deadlines of W).

    Values and slack are reported as ``measure`` counts them: the bill of materials and floor
    layout when the planner passes them, the figures the design shows.
    """
    run = dict(solver=solver, time_limit_s=time_limit_s)
    limits = ws.limits()

    total = _total(sol)
    shown = measure(sol)
    shown_total, shown_capex = shown.total_usd, shown.capex_usd
    prunable = ws.task.objective == "min_total_cost"

    # A design found within a gap of the optimum (status feasible) is only known to be no more
    # than that gap above the best: a relaxation binds when it finds a design below that bound,
    # as a cheaper design between the two might exist without it.
    rel = _REL if sol.status == "optimal" else max(_REL, sol.gap)

    def binds(t: Thresholds = th, lim: Limits = limits) -> bool:
        # The chosen design stays feasible when a constraint loosens, so only cheaper designs matter.
        better = sol.objective * (1 - rel) - 1e-6
        alt = _try(ws, t, limits=lim, cutoff=total * (1 - rel) if prunable else None, below=better, **run)
        return alt is not None and alt.objective < better

    out: list[ConstraintStatus] = []
    step = 1.0 + _BIND_STEP
    # Minimizing total cost, a looser budget only admits designs whose total (for the capex
    # budget, whose capex, hence total) exceeds the old limit: none beats a chosen design that
    # costs less than that limit, so no re-solve is needed to know the budget does not bind.
    if limits.total_usd is not None:
        slack = prunable and total < limits.total_usd
        out.append(ConstraintStatus("budget.total", limits.total_usd, shown_total,
                                    not slack and binds(lim=replace(limits, total_usd=None)),
                                    limits.total_usd - shown_total, "USD"))
    if limits.capex_usd is not None:
        slack = prunable and total < limits.capex_usd
        out.append(ConstraintStatus("budget.capex", limits.capex_usd, shown_capex,
                                    not slack and binds(lim=replace(limits, capex_usd=None)),
                                    limits.capex_usd - shown_capex, "USD"))
    if limits.power_w is not None:
        p = shown.power_w
        out.append(ConstraintStatus("constraints.max_power", limits.power_w, p,
                                    binds(lim=replace(limits, power_w=None)), limits.power_w - p, "W"))
    if limits.racks is not None:
        r = shown.racks
        out.append(ConstraintStatus("constraints.max_racks", float(limits.racks), r,
                                    binds(lim=replace(limits, racks=None)), limits.racks - r,
                                    "racks"))
    if th.min_utilization > 0:
        bind = binds(t=replace(th, min_utilization=max(0.0, th.min_utilization - _UTIL_BIND_STEP)))
        for w in ws.workloads:
            _, o = sol.assignment[w.name]
            out.append(ConstraintStatus(f"min_utilization[{w.name}]", th.min_utilization, o.utilization, bind,
                                        o.utilization - th.min_utilization, "fraction"))
    def deadlines_bind(names: list[str]) -> bool:
        deadlines = dict(th.deadlines_s)
        for name in names:
            deadlines[name] = th.deadlines_s[name] * step
        return binds(t=replace(th, deadlines_s=MappingProxyType(deadlines)))

    binding = _binding_members([w.name for w in ws.workloads if w.deadline_s is not None], deadlines_bind)
    for w in ws.workloads:
        if w.deadline_s is None:
            continue
        _, o = sol.assignment[w.name]
        bind = w.name in binding
        out.append(ConstraintStatus(f"deadline[{w.name}]", w.deadline_s / SECONDS_PER_DAY, o.time_s / SECONDS_PER_DAY,
                                    bind, (w.deadline_s - o.time_s) / SECONDS_PER_DAY, "days"))
    return out


def _binding_members(names: list[str], binds: Callable[[list[str]], bool]) -> set[str]:
    """The members of ``names`` that bind on their own, by group testing: ``binds(group)``
    relaxes a whole group (monotone: a group binds if any member does, and relaxing more admits
    more designs), so a group that does not bind clears all its members; one that does is split
    in halves until single members are tested."""
    if not names or not binds(names):
        return set()
    if len(names) == 1:
        return set(names)
    found: set[str] = set()
    stack = [names[: len(names) // 2], names[len(names) // 2:]]
    while stack:
        group = stack.pop(0)
        if not binds(group):
            continue
        if len(group) == 1:
            found.update(group)
        else:
            stack += [group[: len(group) // 2], group[len(group) // 2:]]
    return found
