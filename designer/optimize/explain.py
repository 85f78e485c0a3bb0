"""Explanations found by solving: why a spec is infeasible and what to relax, which constraints
bind, and the best design of every fabric and deployment with the reason it lost.

Every suggestion comes from re-solving the integer program with one constraint changed, never
from a rule of thumb. Feasibility is monotone in each relaxed quantity (a bigger budget, a lower
utilization target, a later deadline only add designs), so the smallest change is the optimum of
a re-solve (budgets, power, racks) or is found by bisection (utilization, deadlines).
"""

from __future__ import annotations

__all__ = ["diagnose", "shortfalls", "alternatives", "constraint_status", "Measures", "program_measures", "line_deltas",
           "DOMAIN_GROUP"]

from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Callable, Mapping

from designer.design.model import Alternative, ConstraintStatus
from designer.errors import InfeasibleError, SolverTimeoutError
from designer.optimize import batches, evaluate
from designer.optimize.clock import OutOfTime
from designer.optimize.milp import Solution
from designer.optimize.problem import Limits
from designer.optimize.task import Thresholds
from designer.optimize.workspace import Workspace
from designer.spec.units import SECONDS_PER_DAY, format_money, format_money_short, format_power

_REL = 1e-6  # relative objective change that counts as "lower"
_UTIL_STEP = 0.005  # precision of the suggested utilization target
_DEADLINE_STEP = 0.005  # relative precision of a suggested deadline
_MAX_DEADLINE_FACTOR = 20.0
_BIND_STEP = 0.10  # loosening step of the binding test (budgets, power, racks, deadlines)
_UTIL_BIND_STEP = 0.05
# Alternatives by scale-up domain size (8-GPU servers against NVL72 racks): "domain=72".
DOMAIN_GROUP = "domain="


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
         cutoff: float | None = None) -> Solution | None:
    # An explanation from a search the command's deadline cut short could be wrong: none is given.
    if ws.deadline.expired():
        raise OutOfTime
    try:
        sol = batches.solve(ws, th, keys=keys, limits=limits, objective=objective, solver=solver,
                            time_limit_s=time_limit_s, cutoff=cutoff)
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
                reasons.append(f"{w.name}: utilization {util_at_deadline:.2f} < {th.min_utilization:.2f} at the sizes "
                               f"that meet its {days:g}-day deadline")
            elif best_time < float("inf"):
                reasons.append(f"{w.name}: misses its deadline ({best_time / SECONDS_PER_DAY:.1f} > {days:g} days "
                               f"at utilization >= {th.min_utilization:.2f})")
            else:
                reasons.append(f"{w.name}: utilization at most {best_util:.2f} < {th.min_utilization:.2f}")
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


def diagnose(ws: Workspace, th: Thresholds, *, solver: str, time_limit_s: float | None,
             measure: Callable[[Solution], Measures] = program_measures) -> InfeasibleError:
    """Explain an infeasible spec: what conflicts, and the smallest change to each limit that makes
    it feasible (each found by solving with only that limit changed). A suggested limit is the
    larger of the program's figure and the exact one (``measure``), so the design it buys fits it."""
    limits = ws.limits()
    run = dict(solver=solver, time_limit_s=time_limit_s)
    reasons = _best_achievable(ws, th)
    relax: list[str] = []
    if limits.total_usd is not None:
        sol = _try(ws, th, limits=replace(limits, total_usd=None), **run)
        if sol is not None:
            need = _larger(sol, measure).total_usd
            relax.append(f"raise budget.total from {format_money(limits.total_usd)} to {format_money(need + 0.01)}")
            reasons.append(f"the cheapest design costs {format_money(need)} in total, over the "
                           f"{format_money(limits.total_usd)} budget")
    if limits.capex_usd is not None:
        sol = _try(ws, th, limits=replace(limits, capex_usd=None), objective="min_capex", **run)
        if sol is not None:
            need = _larger(sol, measure).capex_usd
            relax.append(f"raise budget.capex from {format_money(limits.capex_usd)} to {format_money(need + 0.01)}")
    if limits.power_w is not None:
        sol = _try(ws, th, limits=replace(limits, power_w=None), objective="min_power", **run)
        if sol is not None:
            need = _larger(sol, measure).power_w
            relax.append(f"raise constraints.max_power from {format_power(limits.power_w)} to "
                         f"{format_power(need * (1 + 1e-6))}")
    if limits.racks is not None:
        sol = _try(ws, th, limits=replace(limits, racks=None), objective="min_racks", **run)
        if sol is not None:
            need = _larger(sol, measure).racks
            relax.append(f"raise constraints.max_racks from {limits.racks} to {int(round(need))}")
    if th.min_utilization > 0:
        found = _bisect_low(0.0, th.min_utilization,
                            lambda u: _try(ws, replace(th, min_utilization=u), **run) is not None, _UTIL_STEP)
        if found is not None and found < th.min_utilization:
            relax.append(f"lower constraints.min_utilization from {th.min_utilization:.2f} to {found:.3f}")
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
    message = "no design meets every constraint"
    if not relax:
        message += "; no single change to a budget, limit, utilization target or deadline is enough"
    return InfeasibleError(message, reasons=tuple(dict.fromkeys(reasons)), relaxations=tuple(relax))


def _groups(ws: Workspace) -> list[tuple[str, set[str]]]:
    groups: dict[str, set[str]] = {}
    domains: dict[int, set[str]] = {}
    for c in ws.candidates:
        groups.setdefault(f"fabric={c.fabric}", set()).add(c.key)
        groups.setdefault(f"deployment={c.deployment.value}", set()).add(c.key)
        domains.setdefault(evaluate.scaleup_domain(c, ws.catalog).gpus, set()).add(c.key)
    # 8-GPU servers against rack-scale NVLink domains: a class of its own where both are allowed.
    if len(domains) > 1:
        for size, keys in sorted(domains.items()):
            groups[f"{DOMAIN_GROUP}{size}"] = keys
    order = sorted(groups, key=lambda g: (not g.startswith("deployment"), g.startswith(DOMAIN_GROUP), g))
    return [(g, groups[g]) for g in order]


def _workload_figures(sol: Solution) -> str:
    """GPUs and utilization of each workload of a solution, for a reason a reader can check."""
    parts = [f"{w} on {o.gpus} GPUs at {o.utilization:.1%} utilization" for w, (_, o) in sorted(sol.assignment.items())]
    return ", ".join(parts)


def _main_candidate(ws: Workspace, sol: Solution):
    if sol.onprem_key:
        return ws.by_key[sol.onprem_key]
    return ws.by_key[sorted(k for k, _ in sol.assignment.values())[0]]


def _nodes(ws: Workspace, sol: Solution) -> int:
    if sol.onprem_key:
        return sol.nodes
    main = _main_candidate(ws, sol)
    return max(-(-o.gpus // main.gpus_per_node) for _, o in sol.assignment.values())


def alternatives(ws: Workspace, th: Thresholds, sol: Solution, *, solver: str, time_limit_s: float | None,
                 measure: Callable[[Solution], Measures] = program_measures) -> list[Alternative]:
    """The best design in every fabric and deployment class, and why it lost to ``sol``; each
    priced and checked against the limits as ``measure`` counts it (the design's own figures when
    the planner passes them)."""
    chosen = measure(sol)
    chosen_total = chosen.total_usd
    used = {key for key, _ in sol.assignment.values()}
    run = dict(solver=solver, time_limit_s=time_limit_s)
    out = []
    for label, keys in _groups(ws):
        if used <= keys:
            main = _main_candidate(ws, sol)
            out.append(Alternative(label, main.deployment.value, main.fabric, main.topology, main.server,
                                   _nodes(ws, sol), chosen_total, 0.0, True, "chosen"))
            continue
        alt = _try(ws, th, keys=keys, **run)
        if alt is not None:
            main = _main_candidate(ws, alt)
            shown = measure(alt)
            total = shown.total_usd
            delta = total - chosen_total
            moved = line_deltas(chosen.by_line, shown.by_line)
            reason = (f"costs {format_money(delta)} more" if delta >= 0
                      else f"costs {format_money(-delta)} less but loses on {ws.task.objective}")
            if moved and abs(delta) >= 0.005:
                reason += " (" + ", ".join(f"{k} {_signed(v)}" for k, v in _largest(moved)) + ")"
            if label.startswith(DOMAIN_GROUP):
                # Domains trade price against utilization: say both, for this design and the chosen one.
                reason += f" ({_workload_figures(alt)}; chosen: {_workload_figures(sol)})"
            budget = ws.limits().total_usd
            fits = budget is None or total <= budget
            if not fits:
                # It fits the budget as the program counts racks, not once laid out by row.
                reason = f"over budget once laid out: {format_money(total)} > {format_money(budget)}"
            out.append(Alternative(label, main.deployment.value, main.fabric, main.topology, main.server,
                                   _nodes(ws, alt), total, delta, fits, reason, MappingProxyType(moved)))
            continue
        reasons = _best_achievable(ws, th, keys)
        if not reasons:
            free = _try(ws, th, keys=keys, limits=Limits(nodes=ws.task.limits.nodes), **run)
            lim = ws.limits()
            m = measure(free) if free is not None else None
            if m is None:
                reasons = ["no design of this class holds every workload"]
            elif lim.total_usd is not None and m.total_usd > lim.total_usd:
                reasons = [f"over budget: {format_money(m.total_usd)} > {format_money(lim.total_usd)}"]
            elif lim.capex_usd is not None and m.capex_usd > lim.capex_usd:
                reasons = [f"over the capex budget: {format_money(m.capex_usd)} > {format_money(lim.capex_usd)}"]
            elif lim.power_w is not None and m.power_w > lim.power_w:
                reasons = [f"needs {format_power(m.power_w)} > max_power {format_power(lim.power_w)}"]
            else:
                reasons = ["exceeds the rack limit"]
        sample = ws.by_key[sorted(keys)[0]]
        out.append(Alternative(label, sample.deployment.value, sample.fabric, sample.topology, sample.server,
                               0, None, None, False, "; ".join(reasons)))
    return out


_SHOWN_LINES = 3  # cost lines a reason names


def line_deltas(chosen: Mapping[str, float], other: Mapping[str, float]) -> dict[str, float]:
    """Per cost line, what another design costs more (or less) than the chosen one; lines that do
    not move (to the cent) are left out. This says which line moved the choice."""
    out = {}
    for name in sorted(set(chosen) | set(other)):
        d = other.get(name, 0.0) - chosen.get(name, 0.0)
        if abs(d) >= 0.005:
            out[name] = d
    return out


def _largest(moved: Mapping[str, float]) -> list[tuple[str, float]]:
    return sorted(moved.items(), key=lambda kv: (-abs(kv[1]), kv[0]))[:_SHOWN_LINES]


def _signed(usd: float) -> str:
    return ("+" if usd >= 0 else "-") + format_money_short(abs(usd))


def constraint_status(ws: Workspace, th: Thresholds, sol: Solution, *, solver: str,
                      time_limit_s: float | None,
                      measure: Callable[[Solution], Measures] = program_measures) -> list[ConstraintStatus]:
    """Every constraint of the spec at the chosen design: value, limit, slack, and whether it binds.

    A constraint binds when loosening it, and only it, by a step lets the solver find a better
    design: budgets, power and racks by 10%, a deadline by 10%, the utilization target by 0.05.
    A finite step (a shadow price over a step, not at a point) is used because the program is
    discrete: a deadline with days to spare can still bind when the next smaller cluster would
    miss it by a day.

    Values and slack are reported as ``measure`` counts them: the bill of materials and floor
    layout when the planner passes them, the figures the design shows.
    """
    run = dict(solver=solver, time_limit_s=time_limit_s)
    limits = ws.limits()

    total = _total(sol)
    shown = measure(sol)
    shown_total, shown_capex = shown.total_usd, shown.capex_usd
    prunable = ws.task.objective == "min_total_cost"

    def binds(t: Thresholds = th, lim: Limits = limits) -> bool:
        # The chosen design stays feasible when a constraint loosens, so only cheaper designs matter.
        alt = _try(ws, t, limits=lim, cutoff=total * (1 - _REL) if prunable else None, **run)
        return alt is not None and alt.objective < sol.objective * (1 - _REL) - 1e-6

    out: list[ConstraintStatus] = []
    step = 1.0 + _BIND_STEP
    # Minimizing total cost, a looser budget only admits designs whose total (for the capex
    # budget, whose capex, hence total) exceeds the old limit: none beats a chosen design that
    # costs less than that limit, so no re-solve is needed to know the budget does not bind.
    if limits.total_usd is not None:
        slack = prunable and total < limits.total_usd
        out.append(ConstraintStatus("budget.total", limits.total_usd, shown_total,
                                    not slack and binds(lim=replace(limits, total_usd=limits.total_usd * step)),
                                    limits.total_usd - shown_total, "USD"))
    if limits.capex_usd is not None:
        slack = prunable and total < limits.capex_usd
        out.append(ConstraintStatus("budget.capex", limits.capex_usd, shown_capex,
                                    not slack and binds(lim=replace(limits, capex_usd=limits.capex_usd * step)),
                                    limits.capex_usd - shown_capex, "USD"))
    if limits.power_w is not None:
        p = shown.power_w
        out.append(ConstraintStatus("constraints.max_power", limits.power_w, p,
                                    binds(lim=replace(limits, power_w=limits.power_w * step)), limits.power_w - p, "W"))
    if limits.racks is not None:
        r = shown.racks
        out.append(ConstraintStatus("constraints.max_racks", float(limits.racks), r,
                                    binds(lim=replace(limits, racks=int(limits.racks * step) + 1)), limits.racks - r,
                                    "racks"))
    if th.min_utilization > 0:
        bind = binds(t=replace(th, min_utilization=max(0.0, th.min_utilization - _UTIL_BIND_STEP)))
        for w in ws.workloads:
            _, o = sol.assignment[w.name]
            out.append(ConstraintStatus(f"min_utilization[{w.name}]", th.min_utilization, o.utilization, bind,
                                        o.utilization - th.min_utilization, "fraction"))
    for w in ws.workloads:
        if w.deadline_s is None:
            continue
        _, o = sol.assignment[w.name]
        deadlines = dict(th.deadlines_s)
        deadlines[w.name] = th.deadlines_s[w.name] * step
        bind = binds(t=replace(th, deadlines_s=MappingProxyType(deadlines)))
        out.append(ConstraintStatus(f"deadline[{w.name}]", w.deadline_s / SECONDS_PER_DAY, o.time_s / SECONDS_PER_DAY,
                                    bind, (w.deadline_s - o.time_s) / SECONDS_PER_DAY, "days"))
    return out
