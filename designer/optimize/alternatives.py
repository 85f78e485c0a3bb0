"""The best design of every fabric and deployment class, and why it lost to the chosen one.

Each class is searched as the design itself is (:func:`designer.optimize.batches.solve` over the
class's candidates, in order of their cost bounds), but with a budget: at most
:func:`budget` on-prem candidates not yet evaluated per class (fewer, the more workloads). Evaluating a candidate (the
performance model over its sizes) is the costly step, and a class's best is usually among its
few lowest bounds; when the budget runs out first, the best design found is shown with its gap
to the lowest bound of the candidates left, so the figure is never presented as more than it is.
"""

from __future__ import annotations

__all__ = ["EVALUATIONS", "SCANS", "DOMAIN_GROUP", "NOT_EXPLORED", "budget", "alternatives", "line_deltas"]

from types import MappingProxyType
from typing import Callable, Mapping

from designer.design.model import Alternative
from designer.errors import InfeasibleError, SolverTimeoutError
from designer.optimize import batches, evaluate
from designer.optimize.clock import OutOfTime
from designer.optimize.explain import Measures, _best_achievable, _try, program_measures
from designer.optimize.milp import Solution
from designer.optimize.problem import Limits
from designer.optimize.task import Thresholds
from designer.optimize.workspace import Workspace
from designer.spec.units import format_money, format_money_short, format_power

# Workload evaluations (one workload over its sizes on one candidate) a class's search may newly
# make, and the fewest candidates it may evaluate however many workloads there are. Measured on
# benchmarks/specs_large.py (benchmarks/portfolio_scale.py): unbounded, the classes' searches took
# ~3/4 of a 5-workload command; a spec of a few workloads still gets an exhaustive search.
SCANS = 48
# Alternatives by scale-up domain size (8-GPU servers against NVL72 racks): "domain=72".
DOMAIN_GROUP = "domain="
EVALUATIONS = 3
# The reason of a class whose search the explanations' budget or the time limit cut short.
NOT_EXPLORED = "not explored"


def budget(workloads: int) -> int:
    """On-prem candidates a class's search may newly evaluate for ``workloads`` workloads."""
    return max(EVALUATIONS, SCANS // max(workloads, 1))


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
    the planner passes them). A class the deadline (the explanations' budget or the time limit)
    reaches before its search ends is listed as :data:`NOT_EXPLORED`, with what stopped it: a
    search cut short could name a worse design than the class's best."""
    out = []
    groups = _groups(ws)
    try:
        _explore(ws, th, sol, groups, out, measure, dict(solver=solver, time_limit_s=time_limit_s))
    except OutOfTime:
        for label, keys in groups[len(out):]:
            sample = ws.by_key[sorted(keys)[0]]
            out.append(Alternative(label, sample.deployment.value, sample.fabric, sample.topology, sample.server,
                                   0, None, None, False, f"{NOT_EXPLORED}: {ws.deadline.reason()}"))
    return out


def _explore(ws: Workspace, th: Thresholds, sol: Solution, groups, out: list, measure, run: dict) -> None:
    """Append each class's best design (or why none) to ``out``, in the order of ``groups``."""
    chosen = measure(sol)
    chosen_total = chosen.total_usd
    used = {key for key, _ in sol.assignment.values()}
    for label, keys in groups:
        if used <= keys:
            main = _main_candidate(ws, sol)
            out.append(Alternative(label, main.deployment.value, main.fabric, main.topology, main.server,
                                   _nodes(ws, sol), chosen_total, 0.0, True, "chosen"))
            continue
        alt, spent = _class_best(ws, th, keys, run)
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
            if alt.status != "optimal" and alt.gap > 0:
                # The budget stopped the class's search: say how far from proven this is.
                reason += f"; best found, within {alt.gap:.1%} of the class's lowest cost bound"
            budget = ws.limits().total_usd
            fits = budget is None or total <= budget
            if not fits:
                # It fits the budget as the program counts racks, not once laid out by row.
                reason = f"over budget once laid out: {format_money(total)} > {format_money(budget)}"
            out.append(Alternative(label, main.deployment.value, main.fabric, main.topology, main.server,
                                   _nodes(ws, alt), total, delta, fits, reason, MappingProxyType(moved)))
            continue
        if spent:
            # Explaining why none qualifies would evaluate every candidate of the class.
            out.append(_none_found(ws, label, keys, sum(not ws.evaluated(k) for k in keys)))
            continue
        reasons = _best_achievable(ws, th, keys)
        if ws.deadline.expired():
            raise OutOfTime  # its evaluations were cut short: the reasons could be wrong
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




def _class_best(ws: Workspace, th: Thresholds, keys: set[str], run: dict) -> tuple[Solution | None, bool]:
    """The best design of a class within the evaluation budget, and whether the budget ran out
    before any was found (then nothing is proven about the class)."""
    if ws.deadline.expired():
        raise OutOfTime
    try:
        sol, spent = batches.solve(ws, th, keys=keys, evaluations=budget(len(ws.workloads)), **run), False
    except SolverTimeoutError as exc:
        sol, spent = None, str(exc) == batches.NONE_IN_BUDGET
    except InfeasibleError:
        sol, spent = None, False
    if ws.deadline.expired():
        raise OutOfTime
    return sol, spent


def _none_found(ws: Workspace, label: str, keys: set[str], untried: int) -> Alternative:
    """A class whose search found no design within its evaluation budget."""
    sample = ws.by_key[sorted(keys)[0]]
    return Alternative(label, sample.deployment.value, sample.fabric, sample.topology, sample.server, 0, None,
                       None, False, f"no design found among the {budget(len(ws.workloads))} candidates of this class with the "
                       f"lowest cost bounds ({untried} of {len(keys)} not evaluated)")
