"""The pipeline: spec and catalog in, a :class:`~designer.design.model.Design` out.

``plan`` composes the stages of docs/data-flow.md: candidates (:mod:`designer.planner.candidates`) ->
the compiled problem (:mod:`designer.planner.compile`) -> lazy evaluation and the integer program
(:mod:`designer.optimize`) -> limits checked on the design's own figures -> explanations -> the
design with its bill of materials (:mod:`designer.planner.assemble`).
"""

from __future__ import annotations

__all__ = ["plan", "solve"]

from dataclasses import replace
from pathlib import Path
from typing import Callable

from designer.catalog.load import load_catalog
from designer.catalog.pricebook import apply_price_book
from designer.catalog.types import Catalog
from designer.design.model import Design
from designer.errors import InfeasibleError, SolverTimeoutError
from designer.optimize import alternatives as class_alternatives, batches, explain, ranked
from designer.optimize.candidates import Candidate
from designer.optimize.clock import Deadline, OutOfTime, WorkBudget
from designer.optimize.milp import Solution
from designer.optimize.problem import Limits
from designer.optimize.task import Thresholds
from designer.optimize.workspace import Workspace
from designer.perf.cluster import ModelEfficiency
from designer.planner.assemble import assemble_design, measures
from designer.planner.candidates import enumerate_candidates, unbuildable_alternatives
from designer.planner import pinned
from designer.planner.compile import compile_task
from designer.planner.inputs import load_inputs, spec_warning_text
from designer.spec.models import Spec
from designer.spec.units import format_money, format_power


# Up to this many candidates, a plan without explanations still says why it is infeasible
# (every candidate is evaluated for it); beyond, that would cost more than the solve.
_SHORTFALLS_UP_TO = 8


def plan(spec: Spec, catalog: Catalog, *, solver: str = "highs", time_limit_s: float | None = None,
         efficiency: ModelEfficiency | None = None, explain_design: bool = True,
         keep: Callable[[Candidate], bool] | None = None,
         progress: Callable[[int, int, float | None], None] | None = None, top: int = 1) -> Design:
    """Find the design of lowest cost (or time) that meets every constraint of ``spec``.

    Args:
        spec: a loaded spec.
        catalog: the merged catalog (built-ins plus the spec's catalog files).
        solver: ``highs`` or ``cbc``.
        time_limit_s: a time limit for the whole plan (evaluation, programs, explanations): when
            it passes, the best design found is returned with status ``feasible``, its
            optimality gap in ``design.solver`` and a warning; explanations not reached are
            left out, with a warning.
        progress: called after each program with (candidates evaluated, programs solved, best
            total cost so far or None).
        efficiency: multipliers on the performance model's compute and communication rates
            (:class:`designer.perf.ModelEfficiency`; default: as modelled).
        explain_design: find the best alternative per class, the constraint table and, when
            infeasible, what to relax (each by re-solving). Without it the design has no
            alternatives or constraint table, and an infeasible spec's error gives only the
            shortfalls of up to a few candidates (studies that solve many variants).
        keep: consider only the candidate systems it accepts (a study pricing one design).
        top: with more than 1, the design's alternatives also hold the ``top`` best distinct
            designs, labelled ``rank=1`` (the chosen one) to ``rank=N``
            (:func:`designer.optimize.ranked.ranked`).

    Raises:
        InfeasibleError: nothing meets the constraints; the error lists conflicts and, for each,
            the smallest change that makes the spec feasible (found by solving).
        SolverTimeoutError: no feasible design within the time limit.
    """
    # The search stops a little before the limit: laying out and writing the design takes a moment.
    deadline = Deadline(None if time_limit_s is None else time_limit_s - min(1.0, 0.1 * time_limit_s))
    catalog = apply_price_book(catalog, spec.price_book)  # the buyer's discounts, before anything is priced
    candidates, rejected = enumerate_candidates(spec, catalog)
    if keep is not None:
        candidates = tuple(c for c in candidates if keep(c))
    if not candidates:
        reasons = tuple(f"{r.what}: {r.reason}" for r in rejected[:5])
        raise InfeasibleError("no candidate system matches the spec's deployments, fabrics, topologies, GPUs "
                              "and pinned system", reasons=reasons)
    task = compile_task(spec, catalog, candidates, efficiency=efficiency)
    ws = Workspace(task)
    ws.deadline = deadline
    ws.progress = progress
    th = ws.task.thresholds
    run = dict(solver=solver, time_limit_s=None)
    sized, pinned_notes = _pinned_sizes(ws, th, run)
    if sized is not None:
        ws = sized

    def measure(x: Solution) -> explain.Measures:
        return measures(ws, x)

    try:
        sol = batches.solve(ws, th, evaluations=batches.search_budget(len(ws.workloads)),
                            until_found=True, tighten=True, **run)
    except InfeasibleError as exc:
        if explain_design:
            ws.deadline = _explaining(deadline, ws)
            try:
                found = explain.diagnose(ws, th, measure=measure, fits=lambda lim: _fits(ws, th, lim, measure, run),
                                         **run)
                raise InfeasibleError(found.message, reasons=_no_plan_reasons(spec, ws, found.reasons),
                                      relaxations=found.relaxations) from None
            except OutOfTime:
                raise InfeasibleError(str(exc.args[0]) if exc.args else "no design meets every constraint",
                                      reasons=(f"{_cut_short(ws)} before the smallest relaxation was found",)) from None
        reasons = explain.shortfalls(ws, th) if len(candidates) <= _SHORTFALLS_UP_TO else exc.reasons
        raise InfeasibleError("no design meets every constraint", reasons=_no_plan_reasons(spec, ws, reasons)) from None
    sol = _within_limits(ws, th, sol, measure, run)
    warnings = [spec_warning_text(w) for w in spec.warnings] + list(pinned_notes) + _pinned_unused(ws, sol)
    if sol.status != "optimal":
        why = sol.note or "time limit reached"
        warnings.append(f"{why}: best design found, optimality gap {sol.gap:.2%}")
    if not explain_design:
        return assemble_design(spec, ws, sol, (), (), tuple(warnings))
    # The explanations re-solve many times: past a few workloads they share a budget of their own.
    ws.deadline = _explaining(deadline, ws)
    alternatives = tuple(class_alternatives.alternatives(ws, th, sol, measure=measure, **run))
    unexplored = sum(a.reason.startswith(class_alternatives.NOT_EXPLORED) for a in alternatives)
    if unexplored:
        warnings.append(f"{_cut_short(ws)}: {unexplored} of {len(alternatives)} classes of alternatives not explored")
    if top > 1:
        try:
            alternatives = (*alternatives, *ranked.ranked(ws, th, sol, top, measure=measure, **run))
        except OutOfTime:
            warnings.append(f"{_cut_short(ws)}: the ranking of the best designs is not complete")
    # The server and switch pairs no catalog part can link, with the missing link named.
    alternatives = (*alternatives, *unbuildable_alternatives(rejected))
    try:
        constraints = explain.constraint_status(ws, th, sol, measure=measure, **run)
    except OutOfTime:
        constraints = ()
        warnings.append(f"{_cut_short(ws)}: which constraints bind was not checked")
    return assemble_design(spec, ws, sol, alternatives, constraints, tuple(warnings))


def _explaining(deadline: Deadline, ws: Workspace) -> Deadline:
    """The deadline of the explanations: the command's, or sooner when they have a budget of
    work of their own (:func:`designer.optimize.explain.budget`), less what bounding the
    candidates the search left untried took of it (the design's gap comes first), counted
    twice: those plan searches are of sizes and networks nothing searched before, about twice
    the time of an explanation's (benchmarks/portfolio_scale.py, 50 and 100 workloads)."""
    budget = explain.budget(len(ws.workloads))
    if budget is None:
        return deadline
    left = max(0, budget - 2 * ws.bound_work)
    return WorkBudget(deadline, left, lambda: explain.work_done(ws), "explanation budget")


def _cut_short(ws: Workspace) -> str:
    """What ended an explanation: the explanations' own budget or the command's time limit."""
    return ws.deadline.reason()


def _no_plan_reasons(spec: Spec, ws: Workspace, reasons: tuple[str, ...]) -> tuple[str, ...]:
    """The reasons with each bare "no candidate plan" of a workload with pinned ``gpus`` made
    specific and located (:func:`designer.planner.pinned.no_plan_reasons`)."""
    return pinned.no_plan_reasons(tuple(reasons), ws.workloads, ws.candidates, ws.evaluator,
                                  lambda i: spec.locate(("workloads", i, "gpus")))


def _pinned_sizes(ws: Workspace, th: Thresholds, run: dict) -> tuple[Workspace | None, tuple[str, ...]]:
    """On a pinned system, the workspace whose workloads run on the most GPUs their best plans can
    use (:func:`designer.planner.pinned.largest_sizes`) and why some use fewer, when a design meets
    every constraint so; else None, and why not (the program then sizes them)."""
    task, notes = pinned.largest_sizes(ws.task, th, ws.evaluator)
    if task is ws.task:
        return None, ()
    sized = Workspace(task)
    sized.evaluator, sized.deadline, sized.progress = ws.evaluator, ws.deadline, ws.progress
    try:
        batches.solve(sized, th, **run)
    except (InfeasibleError, SolverTimeoutError) as exc:
        if isinstance(exc, InfeasibleError):
            # Each meets its thresholds there alone: what fails is running them all so, by their
            # deadlines, within the limits.
            counts = ", ".join(f"{w.name} on {w.gpus:,}" for w in task.workloads if w.gpus is not None)
            why = f"with {counts} GPUs no design meets every deadline and limit"
        else:
            why = str(exc.args[0]) if exc.args else "no design"
        return None, (f"the workloads cannot all run on the most GPUs of the pinned system their plans can "
                      f"use ({why}); they are sized to meet every constraint",)
    return sized, notes


_OBJECTIVE_WORDS = {"min_total_cost": "total cost", "min_capex": "capital cost", "min_power": "power",
                    "min_racks": "racks", "min_cost_per_token": "cost per token", "min_time": "time"}


def _pinned_unused(ws: Workspace, sol: Solution) -> list[str]:
    """Why a workload of a spec that pins the system (``system.nodes``) runs on fewer GPUs than it
    has: the objective's design uses the smallest size that meets the workload's thresholds
    (more GPUs for less time costs more energy and runs at lower utilization), unless the spec
    pins the workload's GPUs."""
    if ws.fixed_nodes is None or sol.onprem_key is None:
        return []
    cand = ws.by_key[sol.onprem_key]
    cluster = sol.nodes * cand.gpus_per_node
    out = []
    for w in ws.workloads:
        key, o = sol.assignment[w.name]
        if key != sol.onprem_key or w.gpus is not None or o.held_gpus >= cluster:
            continue
        least = _OBJECTIVE_WORDS.get(ws.task.objective, ws.task.objective)
        out.append(f"workload '{w.name}' runs on {o.gpus:,} of the {cluster:,} GPUs of the pinned system: the "
                   f"design of least {least} meets its thresholds at that size "
                   "(more GPUs cost more energy at lower utilization); set its gpus to run on more")
    return out


_LIMIT_ROUNDS = 5  # re-solves allowed to bring a design's exact figures under the spec's limits
# The limits checked on a design's own figures: the spec's name, the field (the same in Limits
# and Measures), how to print it, and the margin a lowered limit keeps below the excess.
_CHECKED = (
    ("budget.total", "total_usd", format_money, 0.01),
    ("budget.capex", "capex_usd", format_money, 0.01),
    ("constraints.max_power", "power_w", format_power, 1e-3),
    ("constraints.max_racks", "racks", lambda x: f"{x:.0f}", 0.0),
)


def _excess(limits: Limits, m: explain.Measures) -> dict[str, float]:
    """By how much each limit of :data:`_CHECKED` is exceeded by ``m`` (only those exceeded)."""
    out = {}
    for _, field, _, _ in _CHECKED:
        limit = getattr(limits, field)
        if limit is not None and getattr(m, field) > limit:
            out[field] = getattr(m, field) - limit
    return out


def _fits(ws: Workspace, th: Thresholds, limits: Limits, measure, run: dict) -> bool:
    """Whether some design meets ``limits`` as laid out (:func:`_within_limits`): what a
    suggested relaxation is checked with."""
    try:
        sol = batches.solve(ws, th, limits=limits, **run)
        _within_limits(ws, th, sol, measure, run, limits)
    except (InfeasibleError, SolverTimeoutError):
        return False
    return True


def _within_limits(ws: Workspace, th: Thresholds, sol: Solution, measure, run: dict,
                   spec_limits: Limits | None = None) -> Solution:
    """A solution whose exact figures (bill of materials, floor layout) meet the spec's budgets,
    power and rack limits.

    The program counts racks by a pooled formula and prices links at a reference size, so a
    design it finds just under a limit can exceed it by a few racks' worth once laid out. When
    that happens the limit the program sees is lowered by the excess and the program solved
    again, until the design fits. ``spec_limits``: the limits to meet (the spec's by default).

    Raises:
        InfeasibleError: no design fits once the limits are lowered by the excesses found; it
            names the first design's exact figures as the limits that admit it.
    """
    spec_limits = ws.limits() if spec_limits is None else spec_limits
    limits = spec_limits
    first = measure(sol)
    m = first
    for _ in range(_LIMIT_ROUNDS):
        over = _excess(spec_limits, m)
        if not over:
            return sol
        margins = {field: margin for _, field, _, margin in _CHECKED}
        lowered = {f: getattr(limits, f) - excess - margins[f] for f, excess in over.items()}
        if "racks" in lowered:
            lowered["racks"] = int(lowered["racks"])
        limits = replace(limits, **lowered)
        try:
            sol = batches.solve(ws, th, limits=limits, evaluations=batches.search_budget(len(ws.workloads)),
                                until_found=True, tighten=True, **run)
        except (InfeasibleError, SolverTimeoutError):
            break
        m = measure(sol)
    raise _laid_out_excess(spec_limits, first)


def _laid_out_excess(limits: Limits, m: explain.Measures) -> InfeasibleError:
    """The designs that fit the limits as the program counts them exceed them once laid out: say
    by how much, and the limits at which the cheapest of them fits."""
    reasons, relax = [], []
    over = _excess(limits, m)
    for name, field, fmt, _ in _CHECKED:
        if field not in over:
            continue
        value, limit = getattr(m, field), getattr(limits, field)
        reasons.append(f"the cheapest design needs {fmt(value)} for {name} once its bill of materials and "
                       f"racks are laid out, over the limit of {fmt(limit)}")
        bump = {"total_usd": value + 0.01, "capex_usd": value + 0.01, "power_w": value * (1 + 1e-6)}.get(field, value)
        relax.append(f"raise {name} from {fmt(limit)} to {fmt(bump)}")
    return InfeasibleError("no design meets every limit once laid out", reasons=tuple(reasons),
                           relaxations=tuple(relax))


def solve(spec: Spec | str | Path, catalog: Catalog | None = None, **kwargs) -> Design:
    """Library entry point: ``solve("spec.yaml")`` or ``solve(spec, catalog)``."""
    if not isinstance(spec, Spec):
        spec, loaded = load_inputs(spec)
        catalog = catalog or loaded
    if catalog is None:
        catalog = load_catalog(spec.catalogs)
    return plan(spec, catalog, **kwargs)
