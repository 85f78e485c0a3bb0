"""Monte Carlo studies: draw scenarios of prices, model efficiencies and workloads; find how often each design wins.

``designer study SPEC --vary gpu_price=normal:15% --samples 200`` answers what a point estimate
cannot: how often the cheapest design stays the cheapest, what each design costs at the 90th
percentile, and which one to buy when the inputs are uncertain.

Model:

1. Scenario ``i`` draws a factor for every uncertain input from its distribution, seeded by
   (seed, i, input) alone (:mod:`designer.study.distributions`); the base scenario has none.
2. The base and every scenario are solved in full (:func:`designer.planner.pipeline.plan`
   without explanations). Every design chosen anywhere is a *distinct design*
   (:class:`~designer.design.montecarlo.StudyDesign`: on-prem hardware with its node count, or
   cloud instance types).
3. Every distinct design is priced in every scenario with only its own systems allowed (its
   on-prem node count pinned): its total cost there, or why it misses the constraints. The cell
   of the design a scenario's full solve chose is that solve's own.
4. A scenario's *cheapest* design is the feasible one of lowest total (ties: the one its full
   solve chose, then by label). A design's ``share`` is the fraction of scenarios where it is
   the cheapest; its ``infeasible_share`` the fraction of scenarios where it misses the
   constraints; its cost percentiles are over the scenarios where it meets them.
5. The *robust choice* is the design of lowest 90th-percentile cost among those that meet the
   constraints in at least ``min_feasible_share`` of the scenarios.

Tasks run on an executor (:mod:`designer.study.executor`: this process, local cores or a Dask
cluster); every result is a pure function of its scenario, so the study's bytes do not depend on
where or in what order the tasks ran.
"""

from __future__ import annotations

__all__ = ["MAX_SAMPLES", "DEFAULT_MIN_FEASIBLE_SHARE", "monte_carlo", "summarize", "percentile", "unused_inputs"]

import math
from dataclasses import replace
from statistics import fmean
from typing import Sequence

from designer.catalog.types import Catalog
from designer.design.montecarlo import (
    EFFICIENCY_VARIABLES, PRICE_VARIABLES, Cell, DesignStats, MonteCarlo, Scenario, StudyDesign, Uncertainty,
)
from designer.errors import InputError
from designer.perf.cluster import EFFICIENCY_RANGE
from designer.spec.models import Spec
from designer.study.distributions import TRUNCATE_SIGMAS, draw_factors
from designer.study.executor import Executor, InlineExecutor, TaskFailure
from designer.study.scenarios import ScenarioItem, Solved
from designer.study.variants import Factors, unused_variation
from designer.study.workers import Counter, Progress, base_of, run_tasks

MAX_SAMPLES = 100_000
DEFAULT_MIN_FEASIBLE_SHARE = 0.9


def _support(u: Uncertainty) -> tuple[float, float]:
    """The smallest and largest factor a distribution can draw."""
    d = u.distribution
    if d.kind == "normal":
        return 1.0 - TRUNCATE_SIGMAS * d.sigma, 1.0 + TRUNCATE_SIGMAS * d.sigma
    if d.kind == "lognormal":
        return math.exp(-TRUNCATE_SIGMAS * d.sigma), math.exp(TRUNCATE_SIGMAS * d.sigma)
    return 1.0 + d.low, 1.0 + (d.mode if d.kind == "fixed" else d.high)


def _check(spec: Spec, uncertainties: Sequence[Uncertainty], samples: int, min_feasible_share: float) -> None:
    if not 1 <= samples <= MAX_SAMPLES:
        raise InputError(f"--samples must be between 1 and {MAX_SAMPLES:,}, got {samples}")
    if not 0.0 <= min_feasible_share <= 1.0:
        raise InputError(f"--min-feasible must lie in [0, 1], got {min_feasible_share:g}")
    names = [u.name for u in uncertainties]
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise InputError(f"--vary {dup[0]} is given twice; each input has one distribution")
    low, high = EFFICIENCY_RANGE
    for u in uncertainties:
        if u.name in EFFICIENCY_VARIABLES:
            a, b = _support(u)
            if a < low or b > high:
                raise InputError(f"--vary {u.name}={u.distribution.text}: factors from {a:.3g} to {b:.3g} leave "
                                 f"the model's range [{low:g}, {high:g}]")
        if u.name == "deadline" and all(w.deadline_s is None for w in spec.workloads):
            raise InputError("--vary deadline: no workload of the spec has a deadline")


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values`` by linear interpolation between order statistics
    (Hyndman and Fan's definition 7, numpy's default).

    Examples:
        >>> percentile([1.0, 2.0, 3.0, 4.0], 0.5)
        2.5
        >>> percentile([10.0, 20.0], 0.9)
        19.0
    """
    xs = sorted(values)
    h = (len(xs) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (h - lo) * (xs[hi] - xs[lo])


def _cheapest(cells: Sequence[Cell], chosen: int | None, labels: Sequence[str]) -> int | None:
    ok = [j for j, c in enumerate(cells) if c.status == "ok"]
    if not ok:
        return None
    low = min(cells[j].total_usd for j in ok)
    tied = [j for j in ok if cells[j].total_usd == low]
    return chosen if chosen in tied else min(tied, key=lambda j: labels[j])


def summarize(spec_name: str, seed: int, uncertainties: Sequence[Uncertainty], min_feasible_share: float,
              base: Solved, draws: Sequence[Factors], solved: Sequence[Solved], designs: Sequence[StudyDesign],
              cells: Sequence[Sequence[Cell]]) -> MonteCarlo:
    """The study's statistics (module docstring, steps 4 and 5) from every scenario's cells.

    ``cells[i][j]`` is design ``j`` in scenario ``i``; designs come out sorted by share (highest
    first), then median cost and label, and every index follows that order.
    """
    n = len(draws)
    labels = [d.label for d in designs]
    where = {d.label: j for j, d in enumerate(designs)}
    chosen = [where.get(s.design.label) if s.design else None for s in solved]
    cheapest = [_cheapest(cells[i], chosen[i], labels) for i in range(n)]
    stats = []
    for j, d in enumerate(designs):
        col = [cells[i][j] for i in range(n)]
        costs = [c.total_usd for c in col if c.status == "ok"]
        feasible, infeasible = len(costs), sum(c.status == "infeasible" for c in col)
        wins = sum(1 for k in cheapest if k == j)
        regrets = [cells[i][j].total_usd - cells[i][cheapest[i]].total_usd
                   for i in range(n) if cells[i][j].status == "ok" and cheapest[i] is not None]
        stats.append(DesignStats(
            design=d, cheapest=wins, share=wins / n, feasible=feasible, infeasible=infeasible,
            unknown=n - feasible - infeasible,
            infeasible_share=infeasible / (feasible + infeasible) if feasible + infeasible else None,
            cost_p10_usd=percentile(costs, 0.1) if costs else None,
            cost_p50_usd=percentile(costs, 0.5) if costs else None,
            cost_p90_usd=percentile(costs, 0.9) if costs else None,
            cost_mean_usd=fmean(costs) if costs else None,
            regret_mean_usd=fmean(regrets) if regrets else None,
            base=base.design is not None and base.design.label == d.label, robust=False))
    order = sorted(range(len(stats)), key=lambda j: (-stats[j].cheapest, math.inf if stats[j].cost_p50_usd is None
                                                     else stats[j].cost_p50_usd, labels[j]))
    rank = {j: r for r, j in enumerate(order)}
    eligible = [j for j in order if stats[j].feasible and stats[j].infeasible_share is not None
                and 1.0 - stats[j].infeasible_share >= min_feasible_share - 1e-12]
    robust = min(eligible, key=lambda j: (stats[j].cost_p90_usd, -stats[j].cheapest, labels[j])) if eligible else None
    ordered = tuple(stats[j] if j != robust else _robust(stats[j]) for j in order)
    scenarios = tuple(Scenario(
        index=i, factors=draws[i], status=solved[i].cell.status,
        chosen=None if chosen[i] is None else rank[chosen[i]],
        cheapest=None if cheapest[i] is None else rank[cheapest[i]],
        cells=tuple(cells[i][j] for j in order),
        reason=solved[i].cell.reason) for i in range(n))
    no_design = sum(1 for i in range(n) if cheapest[i] is None and solved[i].cell.status == "infeasible")
    failed = sum(1 for i in range(n) if cheapest[i] is None and solved[i].cell.status != "infeasible")
    base_index = rank[where[base.design.label]] if base.design is not None else None
    return MonteCarlo(spec_name=spec_name, seed=seed, samples=n, uncertainties=tuple(uncertainties),
                      min_feasible_share=min_feasible_share, designs=ordered, scenarios=scenarios, base=base_index,
                      base_status=base.cell.status, base_reason=base.cell.reason, base_total_usd=base.cell.total_usd,
                      robust=None if robust is None else rank[robust], no_design_share=no_design / n,
                      failed_share=failed / n)


def _robust(s: DesignStats) -> DesignStats:
    return replace(s, robust=True)


def _failed_solve(item: ScenarioItem, failure: TaskFailure) -> Solved:
    return Solved(Cell("error", reason=failure.error), None)


def _failed_cell(item: ScenarioItem, failure: TaskFailure) -> Cell:
    return Cell("error", reason=failure.error)


def monte_carlo(spec: Spec, catalog: Catalog, uncertainties: Sequence[Uncertainty], *, samples: int,
                seed: int = 0, min_feasible_share: float = DEFAULT_MIN_FEASIBLE_SHARE, solver: str = "highs",
                time_limit_s: float | None = None, executor: Executor | None = None,
                progress: Progress | None = None) -> MonteCarlo:
    """A Monte Carlo study of ``spec`` (the module docstring gives the model).

    Args:
        spec: The spec.
        catalog: Its catalog.
        uncertainties: The inputs to vary and their distributions (none: every scenario is the base).
        samples: Scenarios to draw.
        seed: Seed of the draws; the same seed gives the same study.
        min_feasible_share: Share of scenarios a design must meet the constraints in to be the
            robust choice.
        solver: MILP solver.
        time_limit_s: Time limit of each integer program.
        executor: Where the solves run (default: this process); the caller closes it.
        progress: Called with (done, total) after every solve.

    Raises:
        InputError: Bad sample count, share, repeated or inapplicable inputs (before any solve).
    """
    _check(spec, uncertainties, samples, min_feasible_share)
    draws = [draw_factors(seed, i, uncertainties) for i in range(samples)]
    base = base_of(spec, catalog, solver, time_limit_s)
    counter = Counter(progress)
    run_on = executor or InlineExecutor()
    items = [ScenarioItem(base, -1, ())] + [ScenarioItem(base, i, f) for i, f in enumerate(draws)]
    first, *solved = run_tasks(run_on, items, counter, _failed_solve)
    found = {s.design.label: s.design for s in (first, *solved) if s.design is not None}
    designs = [found[label] for label in sorted(found)]
    where = {d.label: j for j, d in enumerate(designs)}
    cells: list[list[Cell | None]] = [[None] * len(designs) for _ in draws]
    tasks = []
    for i, s in enumerate(solved):
        if s.design is not None:
            cells[i][where[s.design.label]] = s.cell
        for j, d in enumerate(designs):
            if cells[i][j] is not None:
                continue
            if s.cell.status == "error":  # the scenario itself cannot be built or solved
                cells[i][j] = Cell("error", reason=f"the scenario failed: {s.cell.reason}")
            else:
                tasks.append(ScenarioItem(base, i, draws[i], d))
    for item, cell in zip(tasks, run_tasks(run_on, tasks, counter, _failed_cell)):
        cells[item.index][where[item.design.label]] = cell
    return summarize(spec.name, seed, uncertainties, min_feasible_share, first, draws, solved, designs, cells)


def unused_inputs(spec: Spec, uncertainties: Sequence[Uncertainty]) -> list[str]:
    """Warnings for inputs that cannot move this spec's decision (cloud prices of an on-prem-only
    spec, purchase prices of a cloud-only one)."""
    out = []
    for u in uncertainties:
        why = unused_variation(spec, u.name) if u.name in PRICE_VARIABLES else ""
        if why:
            out.append(f"{u.name}: {why}, so its changes cannot move the decision")
    return out
