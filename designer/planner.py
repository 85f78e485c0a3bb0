"""The pipeline: spec and catalog in, a :class:`~designer.design.Design` out.

``plan`` composes the stages of DESIGN.md: candidates -> topology and performance evaluation ->
integer program -> design (with its bill of materials, alternatives and binding constraints).
``estimate`` predicts performance on the system a spec pins, without optimising.
"""

from __future__ import annotations

__all__ = ["plan", "solve", "estimate", "price_solution", "Estimate", "WorkloadEstimate"]

import math
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType

from designer import __version__, perf
from designer.bom import sort_lines, total_power_w
from designer.catalog_types import Catalog
from designer.design import (
    Breakdown, CostBreakdown, Design, SolverInfo, SystemChoice, WorkloadResult,
)
from designer.errors import InfeasibleError, SpecError
from designer.inputs import facility_for, load_inputs
from designer.optimize import explain, pricing
from designer.optimize.build import Workspace, thresholds_of
from designer.optimize.candidates import Candidate, enumerate_candidates
from designer.optimize.evaluate import Evaluator, job_for
from designer.optimize.milp import Solution
from designer.optimize.problem import Limits
from designer.spec import Deployment, Spec
from designer.units import SECONDS_PER_DAY, SECONDS_PER_YEAR, format_money, format_power


def _workload_result(spec: Spec, name: str, cand: Candidate, est: perf.StepEstimate, cost_usd: float) -> WorkloadResult:
    w = next(w for w in spec.workloads if w.name == name)
    b = est.breakdown
    p = est.plan
    return WorkloadResult(
        name=name, deployment=cand.deployment.value, server=cand.server, gpus=est.gpus,
        tp=p.tp, pp=p.pp, dp=p.dp, ep=p.ep, cp=p.cp, microbatch=p.microbatch, zero=p.zero,
        step_time_s=est.step_time_s, utilization=est.utilization, mfu=est.mfu,
        tflops_per_gpu=est.tflops_per_gpu, tokens_per_s=est.tokens_per_s,
        time_to_train_days=est.time_to_train_s / SECONDS_PER_DAY,
        deadline_days=None if w.deadline_s is None else w.deadline_s / SECONDS_PER_DAY,
        memory_gb_per_gpu=est.memory_bytes_per_gpu / 1e9,
        breakdown=Breakdown(compute_s=b.compute_s, tp_comm_s=b.tp_comm_s, pp_comm_s=b.pp_comm_s,
                            dp_comm_s=b.dp_comm_s, ep_comm_s=b.ep_comm_s, bubble_s=b.bubble_s,
                            exposed_comm_s=b.exposed_comm_s, checkpoint_s=b.checkpoint_s),
        cost_usd=cost_usd,
    )


def price_solution(ws: Workspace, sol: Solution) -> tuple[list, CostBreakdown, object, dict[str, float]]:
    """The exact bill of materials and costs of a solution of the program.

    Returns:
        (BOM lines, cost breakdown, fabric summary of the on-prem system or None, cloud spend per
        workload). On-prem lines come from the topology's closed form at the chosen node count;
        cloud lines bill whole instance-hours.
    """
    spec, catalog, facility, e = ws.spec, ws.catalog, ws.facility, ws.economics
    lines = []
    summary = None
    onprem = ws.by_key.get(sol.onprem_key) if sol.onprem_key else None
    if onprem is not None:
        onprem_lines, summary = pricing.onprem_bom(onprem, catalog, facility, sol.nodes, e.installation_fraction)
        lines.extend(onprem_lines)
    cloud_costs: dict[str, float] = {}
    for w in spec.workloads:
        key, option = sol.assignment[w.name]
        cand = ws.by_key[key]
        if cand.deployment is Deployment.CLOUD:
            inst = catalog.clouds[cand.server]
            line = pricing.cloud_line(inst, spec.constraints.pricing, w.name, option.gpus / cand.gpus_per_node * option.time_s)
            lines.append(line)
            cloud_costs[w.name] = line.total_usd
    lines = list(sort_lines(lines))
    equipment = sum(l.total_usd for l in lines if l.category not in ("cloud", "service"))
    installation = sum(l.total_usd for l in lines if l.category == "service")
    cloud_usd = sum(l.total_usd for l in lines if l.category == "cloud")
    power_w = total_power_w(l for l in lines if l.category != "cloud")
    years = e.horizon_s / SECONDS_PER_YEAR
    power_usd = power_w * e.pue * e.electricity_usd_per_j * e.horizon_s
    maintenance = e.maintenance_fraction_per_year * years * equipment
    capex = equipment + installation
    by_cat: dict[str, float] = {}
    for l in lines:
        if l.category != "cloud":
            by_cat[l.category] = by_cat.get(l.category, 0.0) + l.total_usd
    cost = CostBreakdown(capex_usd=capex, opex_usd=power_usd + maintenance, cloud_usd=cloud_usd,
                         total_usd=capex + power_usd + maintenance + cloud_usd,
                         capex_by_category=MappingProxyType(by_cat), installation_usd=installation,
                         power_usd=power_usd, maintenance_usd=maintenance)
    return lines, cost, summary, cloud_costs


def _assemble(ws: Workspace, sol: Solution, alternatives, constraints, warnings: tuple[str, ...]) -> Design:
    """Turn the program's answer into a design with an exact bill of materials."""
    spec, catalog = ws.spec, ws.catalog
    lines, cost, summary, cloud_costs = price_solution(ws, sol)
    onprem = ws.by_key.get(sol.onprem_key) if sol.onprem_key else None
    results = []
    cloud_kinds = set()
    for w in spec.workloads:
        key, option = sol.assignment[w.name]
        cand = ws.by_key[key]
        est = next(e.estimate for e in ws.evaluations[(w.name, key)] if e.gpus == option.gpus)
        if cand.deployment is Deployment.CLOUD:
            cloud_kinds.add(cand)
        results.append(_workload_result(spec, w.name, cand, est, cloud_costs.get(w.name, 0.0)))
    shown = _measures_of(lines, cost, summary)
    if onprem is not None:
        deployment = "hybrid" if cloud_kinds else "on_prem"
        main = onprem
        gpu = catalog.servers[onprem.server].gpu
        nodes, gpus = sol.nodes, sol.nodes * onprem.gpus_per_node
        tiers = summary.tiers
        racks = int(shown.racks)
    else:
        deployment = "cloud"
        # The instance type that runs the most GPUs names the system (then key order).
        gpus_on = {c.key: 0 for c in cloud_kinds}
        for w in spec.workloads:
            key, option = sol.assignment[w.name]
            if key in gpus_on:
                gpus_on[key] = max(gpus_on[key], option.gpus)
        main = sorted(cloud_kinds, key=lambda c: (-gpus_on[c.key], c.key))[0]
        gpu = catalog.clouds[main.server].gpu
        peak = max(r.gpus for r in results)
        nodes, gpus = math.ceil(peak / main.gpus_per_node), peak
        tiers, racks = 0, 0
    system = SystemChoice(
        deployment=deployment, server=main.server, gpu=gpu, nodes=nodes, gpus=gpus, fabric=main.fabric,
        topology=main.topology, oversubscription=main.oversubscription, switch=main.switch, tiers=tiers,
        racks=racks, power_kw=shown.power_w / 1e3,
        pricing=spec.constraints.pricing.value if cloud_kinds else None,
    )
    return Design(
        tool_version=__version__, spec_name=spec.name, spec_digest=spec.digest, catalog_digest=catalog.digest,
        catalog_dates=catalog.dates, objective=spec.objective.value, horizon_days=spec.horizon_s / SECONDS_PER_DAY,
        system=system, cost=cost, workloads=tuple(results), bom=tuple(lines), alternatives=tuple(alternatives),
        constraints=tuple(constraints),
        solver=SolverInfo(name=sol.solver, status=sol.status, gap=sol.gap, candidates=len(ws.by_key),
                          variables=sol.variables, constraints=sol.constraints),
        warnings=warnings,
    )


def plan(spec: Spec, catalog: Catalog, *, solver: str = "highs", time_limit_s: float | None = None) -> Design:
    """Find the design of lowest cost (or time) that meets every constraint of ``spec``.

    Args:
        spec: a loaded spec.
        catalog: the merged catalog (built-ins plus the spec's catalog files).
        solver: ``highs`` or ``cbc``.
        time_limit_s: a time limit for each integer program; on time-out the best design found
            is returned with its optimality gap in ``design.solver`` and a warning.

    Raises:
        InfeasibleError: nothing meets the constraints; the error lists conflicts and, for each,
            the smallest change that makes the spec feasible (found by solving).
        SolverTimeoutError: no feasible design within the time limit.
    """
    candidates, rejected = enumerate_candidates(spec, catalog)
    if not candidates:
        reasons = tuple(f"{r.what}: {r.reason}" for r in rejected[:5])
        raise InfeasibleError("no candidate system matches the spec's deployments, fabrics, topologies, GPUs "
                              "and pinned system", reasons=reasons)
    ws = Workspace(spec, catalog, facility_for(spec, catalog), candidates)
    th = thresholds_of(spec)
    run = dict(solver=solver, time_limit_s=time_limit_s)

    def measure(x: Solution) -> explain.Measures:
        return measures(ws, x)

    try:
        sol = ws.solve(th, **run)
    except InfeasibleError:
        raise explain.diagnose(ws, th, measure=measure, **run) from None
    sol = _within_limits(ws, th, sol, measure, run)
    warnings = []
    if sol.status != "optimal":
        warnings.append(f"time limit reached: best design found, optimality gap {sol.gap:.2%}")
    alternatives = explain.alternatives(ws, th, sol, measure=measure, **run)
    constraints = explain.constraint_status(ws, th, sol, measure=measure, **run)
    return _assemble(ws, sol, alternatives, constraints, tuple(warnings))


def measures(ws: Workspace, sol: Solution) -> explain.Measures:
    """A solution's cost, power and racks as its design shows them (:func:`price_solution`)."""
    lines, cost, summary, _ = price_solution(ws, sol)
    return _measures_of(lines, cost, summary)


def _measures_of(lines, cost: CostBreakdown, summary) -> explain.Measures:
    """Cost, IT power (every non-cloud line) and racks (the floor layout's) of a priced design."""
    power_w = total_power_w(l for l in lines if l.category != "cloud")
    racks = summary.server_racks + summary.switch_racks if summary is not None else 0
    return explain.Measures(cost.total_usd, cost.capex_usd, power_w, float(racks))


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


def _within_limits(ws: Workspace, th, sol: Solution, measure, run: dict) -> Solution:
    """A solution whose exact figures (bill of materials, floor layout) meet the spec's budgets,
    power and rack limits.

    The program counts racks by a pooled formula and prices links at a reference size, so a
    design it finds just under a limit can exceed it by a few racks' worth once laid out. When
    that happens the limit the program sees is lowered by the excess and the program solved
    again, until the design fits.

    Raises:
        InfeasibleError: no design fits once the limits are lowered by the excesses found; it
            names the first design's exact figures as the limits that admit it.
    """
    spec_limits = ws.limits()
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
            sol = ws.solve(th, limits=limits, **run)
        except InfeasibleError:
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
        from designer.catalog import load_catalog
        catalog = load_catalog(spec.catalogs)
    return plan(spec, catalog, **kwargs)


@dataclass(frozen=True, slots=True)
class WorkloadEstimate:
    """One workload's prediction on the pinned system."""

    name: str
    estimate: perf.StepEstimate


@dataclass(frozen=True, slots=True)
class Estimate:
    """Predictions for every workload of a spec on its pinned system."""

    spec_name: str
    server: str
    nodes: int
    fabric: str
    topology: str
    workloads: tuple[WorkloadEstimate, ...]


def estimate(spec: Spec, catalog: Catalog) -> Estimate:
    """Predict each workload on the system pinned under ``system`` (no optimisation).

    Each workload uses ``gpus`` if it gives it, else every GPU of the pinned nodes, with its
    pinned parallelism or the fastest plan that fits.

    Raises:
        SpecError: the spec does not pin enough of the system (server and nodes at least).
        PerfError: no plan fits (the message says why).
    """
    pin = spec.system
    missing = [k for k in ("server", "nodes") if getattr(pin, k) is None]
    if missing:
        raise SpecError(f"`designer estimate` needs a pinned system: set system.{' and system.'.join(missing)}",
                        spec.locate(("system",)))
    candidates, _ = enumerate_candidates(spec, catalog)
    if not candidates:
        raise SpecError("the pinned system is not a valid combination (check its fabric, switch and topology "
                        "against the server's NIC)", spec.locate(("system",)))
    # The pinned fields narrow the candidates; where some are left open the first in key order
    # is taken, and defaults favour the non-blocking ratio.
    cand = sorted(candidates, key=lambda c: (c.oversubscription, c.key))[0]
    facility = facility_for(spec, catalog)
    evaluator = Evaluator(catalog, facility)
    out = []
    for w in spec.workloads:
        gpus = w.gpus or pin.nodes * cand.gpus_per_node
        result = evaluator.evaluate(w, job_for(w), cand, gpus)
        if result.estimate is None:
            from designer.errors import PerfError
            raise PerfError(f"workload '{w.name}' on {gpus} GPUs of {cand.server}: {result.reason}")
        out.append(WorkloadEstimate(w.name, result.estimate))
    return Estimate(spec.name, cand.server, pin.nodes, cand.fabric, cand.topology, tuple(out))
