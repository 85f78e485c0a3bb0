"""The price sweep: re-solve a spec with one price varied at a time and locate where the decision changes.

Grid values of each variation (:func:`designer.study.variants.grid`), one solve each, then every
interval whose chosen systems differ bisected to the tolerance
(:func:`designer.study.outcome.bisect_change`), all run as :mod:`designer.study.workers` tasks on an
executor (:mod:`designer.study.executor`).
"""

from __future__ import annotations

__all__ = ["sweep"]

from contextlib import nullcontext
from typing import Sequence

from designer.catalog.types import Catalog
from designer.design.study import TOLERANCE, Crossover, Outcome, Sweep, SweepPoint, Variation
from designer.errors import InputError
from designer.spec.models import Spec
from designer.study.executor import Executor, TaskFailure, make_executor
from designer.study.variants import apply_factors, grid
from designer.study.workers import Bisect, ChangeSolve, Counter, Progress, base_of, run_tasks


def _failed_point(task: ChangeSolve, failure: TaskFailure) -> Outcome:
    return Outcome("error", reason=failure.error)


def _failed_bisection(task: Bisect, failure: TaskFailure) -> Crossover:
    # The change is still known to lie in the interval, only not narrowed.
    return Crossover(task.variable, task.low, task.high, task.before, task.after)


def sweep(spec: Spec, catalog: Catalog, variations: Sequence[Variation], *, steps: int = 5,
          tolerance: float = TOLERANCE, solver: str = "highs", time_limit_s: float | None = None,
          workers: int = 1, progress: Progress | None = None, executor: Executor | None = None) -> Sweep:
    """One-at-a-time sensitivity: the chosen system across each variation, and where it changes.

    Model: for each variation of a price, a model efficiency, the tokens or the deadlines
    (:func:`apply_factors`), :func:`grid` values (every other input as given), one
    solve each; every neighbouring pair whose chosen systems differ (a change of status counts) is
    bisected (:func:`bisect_change`) to ``tolerance``. The base (no change) is solved once.

    Args:
        spec: The spec.
        catalog: Its catalog.
        variations: The inputs to vary (:data:`designer.design.montecarlo.UNCERTAIN`), one at a time.
        steps: Grid values per variation (ends included; at least 2).
        tolerance: Width of a located change, in relative change.
        solver: MILP solver.
        time_limit_s: Time limit of each integer program.
        workers: Local worker processes when no ``executor`` is given (1: solve in this process).
        progress: Called with (done, total) after every solve or bisection.
        executor: Where the solves run (:mod:`designer.study.executor`); the caller closes it.

    Raises:
        InputError: Fewer than 2 steps, a non-positive tolerance or an unknown variable.
    """
    if steps < 2:
        raise InputError(f"--steps must be at least 2, got {steps}")
    names = [v.name for v in variations]
    if len(set(names)) != len(names):
        raise InputError("each input can be varied once per sweep")
    if not tolerance > 0:
        raise InputError(f"the tolerance must be positive, got {tolerance:g}")
    items: list[tuple[str, float]] = [("", 0.0)]
    for var in variations:
        for change in grid(var, steps):
            if change != 0.0:
                apply_factors(spec, catalog, ((var.name, 1.0 + change),))  # bad inputs fail before any solve
                items.append((var.name, change))
    base = base_of(spec, catalog, solver, time_limit_s)
    counter = Counter(progress)
    own = None if executor is not None else make_executor(workers if len(items) > 1 else 1)
    with own if own is not None else nullcontext():
        run_on = executor if executor is not None else own
        tasks = [ChangeSolve(base, variable, change) for variable, change in items]
        outcomes = dict(zip(items, run_tasks(run_on, tasks, counter, _failed_point)))
        first = outcomes[("", 0.0)]
        points = tuple(SweepPoint(var.name, change, first if change == 0.0 else outcomes[(var.name, change)])
                       for var in variations for change in grid(var, steps))
        bisections = []
        for var in variations:
            row = [p for p in points if p.variable == var.name]
            for a, b in zip(row, row[1:]):
                if a.outcome.key != b.outcome.key:
                    bisections.append(Bisect(base, var.name, a.change, b.change, a.outcome, b.outcome, tolerance))
        crossovers = tuple(run_tasks(run_on, bisections, counter, _failed_bisection))
    return Sweep(first, tuple(variations), points, crossovers, tolerance)
