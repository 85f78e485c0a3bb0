"""One Monte Carlo scenario: its inputs applied to the spec and catalog, its full solve, and one design priced in it.

Workers run :class:`ScenarioItem` tasks (:func:`solve_scenario`), each carrying the study's
shared :class:`~designer.study.workers.Base`. A scenario's factors multiply prices, the performance
model's efficiencies and every workload's tokens and deadline
(:func:`~designer.study.variants.apply_factors`).
"""

from __future__ import annotations

__all__ = ["ScenarioItem", "Solved", "design_of", "keeps", "pinned_spec", "solve_scenario"]

from dataclasses import dataclass, replace
from typing import Callable

from designer.catalog.types import Catalog
from designer.design.model import Design
from designer.design.montecarlo import Cell, StudyDesign
from designer.errors import DesignerError, InfeasibleError, SolverTimeoutError
from designer.optimize.candidates import Candidate
from designer.optimize.evaluate import Evaluator, gpu_count_grid
from designer.perf import ModelEfficiency
from designer.planner.candidates import enumerate_candidates
from designer.planner.compile import compile_workload, facility_for
from designer.planner.pipeline import plan
from designer.spec.choices import Deployment
from designer.spec.models import Spec
from designer.spec.units import SECONDS_PER_DAY
from designer.study.variants import Factors, apply_factors
from designer.study.workers import Base, inputs_of

def design_of(design: Design) -> StudyDesign:
    """What a buyer commits to in a solved design (:class:`StudyDesign`)."""
    s = design.system
    clouds = tuple(sorted({w.server for w in design.workloads if w.deployment == "cloud"}))
    if s.deployment == "cloud":
        return StudyDesign(f"cloud {' + '.join(clouds)} ({s.fabric})", "cloud", s.server, s.gpu, None, s.fabric,
                           s.topology, None, 1.0, clouds)
    label = f"{s.deployment} {s.nodes}x {s.server} {s.fabric} {s.topology} {s.switch} {s.oversubscription:g}:1"
    rented = clouds if s.deployment == "hybrid" else ()
    if rented:
        label += " + " + " + ".join(rented)
    return StudyDesign(label, s.deployment, s.server, s.gpu, s.nodes, s.fabric, s.topology, s.switch,
                       s.oversubscription, rented)


def keeps(design: StudyDesign) -> Callable[[Candidate], bool]:
    """The candidate filter that leaves only ``design``'s systems: its on-prem system and the
    cloud instance types it rents."""
    onprem = (design.server, design.fabric, design.topology, design.switch, design.oversubscription)

    def keep(c: Candidate) -> bool:
        if c.deployment is Deployment.CLOUD:
            return c.server in design.rented
        return design.deployment != "cloud" and (c.server, c.fabric, c.topology, c.switch,
                                                  c.oversubscription) == onprem
    return keep


def pinned_spec(spec: Spec, design: StudyDesign) -> Spec:
    """The spec with ``design``'s on-prem node count pinned (``system.nodes``); cloud counts stay free."""
    if design.nodes is None:
        return spec
    return replace(spec, system=replace(spec.system, nodes=design.nodes))


@dataclass(frozen=True, slots=True)
class ScenarioItem:
    """A task: scenario ``index`` with its ``factors``, solved in full (``design`` None) or with
    only ``design``'s systems allowed (its cost in that scenario)."""

    shared: Base
    index: int
    factors: Factors
    design: StudyDesign | None = None

    def run(self) -> Solved | Cell:
        """:func:`solve_scenario` of this task (in a worker)."""
        return solve_scenario(self.shared, self)


@dataclass(frozen=True, slots=True)
class Solved:
    """A scenario's full solve: the cell of the design it chose, and that design (None without one)."""

    cell: Cell
    design: StudyDesign | None


def _first(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def solve_scenario(base: Base, item: ScenarioItem) -> Solved | Cell:
    """Run one task of a study (in a worker): the full solve of a scenario (a :class:`Solved`),
    or one design priced in it (a :class:`Cell`). No design is a result, not an error."""
    spec, catalog = inputs_of(base)
    try:
        spec, catalog, efficiency = apply_factors(spec, catalog, item.factors)
        if item.design is not None:
            spec = pinned_spec(spec, item.design)
        run = dict(solver=base.solver, time_limit_s=base.time_limit_s, efficiency=efficiency, explain_design=False)
        design = plan(spec, catalog, keep=None if item.design is None else keeps(item.design), **run)
    except InfeasibleError as exc:
        reason = "; ".join(exc.reasons) if exc.reasons else _first(exc.message)
        if item.design is not None and item.design.nodes is not None:
            reason = _why_not(spec, catalog, efficiency, item.design)
        cell = Cell("infeasible", reason=reason)
    except SolverTimeoutError as exc:
        cell = Cell("timeout", reason=_first(str(exc)))
    except DesignerError as exc:
        cell = Cell("error", reason=_first(str(exc)))
    else:
        cell = Cell("ok", round(design.cost.total_usd, 2))
        if item.design is None:
            return Solved(cell, design_of(design))
    return cell if item.design is not None else Solved(cell, None)


def _why_not(spec: Spec, catalog: Catalog, efficiency: ModelEfficiency, design: StudyDesign) -> str:
    """Why an on-prem design misses the constraints in a scenario, from the performance model on
    its own nodes: per workload, the best time over the sizes it may use against its deadline, and
    the best utilization among the sizes that meet it against the target ("" for a cloud design)."""
    if design.nodes is None:
        return ""
    keep = keeps(design)
    cands = [c for c in enumerate_candidates(spec, catalog)[0] if keep(c) and c.deployment is Deployment.ON_PREM]
    if not cands:
        return ""
    cand = cands[0]
    evaluator = Evaluator(catalog, facility_for(spec, catalog), efficiency,
                          gpus_per_domain_used=spec.system.gpus_per_domain_used)
    target = spec.constraints.min_utilization
    out: list[str] = []
    for w in spec.workloads:
        sizes = (w.gpus,) if w.gpus else gpu_count_grid(cand.gpus_per_node, design.nodes)
        runs = [e.estimate for e in (evaluator.evaluate(compile_workload(w), cand, g) for g in sizes) if e.estimate]
        if not runs:
            out.append(f"{w.name}: no parallelism plan fits on {design.nodes} nodes")
            continue
        deadline = w.deadline_s if w.deadline_s is not None else spec.horizon_s
        on_time = [r for r in runs if r.time_to_train_s <= deadline]
        if not on_time:
            fastest = min(runs, key=lambda r: r.time_to_train_s)
            out.append(f"{w.name}: {fastest.time_to_train_s / SECONDS_PER_DAY:.1f} days at best ({fastest.gpus} GPUs), "
                       f"over its {deadline / SECONDS_PER_DAY:g}-day deadline")
        elif max(r.utilization for r in on_time) < target:
            out.append(f"{w.name}: utilization {max(r.utilization for r in on_time):.2f} < {target:.2f} "
                       f"at the sizes that meet its deadline")
    if not out:
        return ("each workload alone meets its deadline and the utilization target; together, or within "
                "the budget, power and rack limits, they do not")
    return "; ".join(out)
