"""The price sweep: re-solve a spec with one price varied at a time and locate where the decision changes.

Grid values of each variation (:func:`designer.study.variants.grid`), one solve each, then every
interval whose chosen systems differ bisected to the tolerance
(:func:`designer.study.outcome.bisect_change`), all run by :mod:`designer.study.workers`.
"""

from __future__ import annotations

__all__ = ["sweep"]

from typing import Sequence

from designer.catalog.types import Catalog
from designer.design.study import TOLERANCE, Sweep, SweepPoint, Variation
from designer.errors import InputError
from designer.spec.models import Spec
from designer.study.variants import grid, with_change
from designer.study.workers import Bisect, Counter, Progress, Solve, execute, portable


def sweep(spec: Spec, catalog: Catalog, variations: Sequence[Variation], *, steps: int = 5,
          tolerance: float = TOLERANCE, solver: str = "highs", time_limit_s: float | None = None,
          workers: int = 1, progress: Progress | None = None) -> Sweep:
    """One-at-a-time price sensitivity: the chosen system across each variation, and where it changes.

    Model: for each variation, :func:`grid` values (every other price at its catalog value), one
    solve each; every neighbouring pair whose chosen systems differ (a change of status counts) is
    bisected (:func:`bisect_change`) to ``tolerance``. The base (no change) is solved once.

    Args:
        spec: The spec.
        catalog: Its catalog.
        variations: The prices to vary, one at a time.
        steps: Grid values per variation (ends included; at least 2).
        tolerance: Width of a located change, in relative change.
        solver: MILP solver.
        time_limit_s: Time limit of each integer program.
        workers: Worker processes (1: solve in this process).
        progress: Called with (done, total) after every solve or bisection.

    Raises:
        InputError: Fewer than 2 steps, a non-positive tolerance or an unknown variable.
    """
    if steps < 2:
        raise InputError(f"--steps must be at least 2, got {steps}")
    names = [v.name for v in variations]
    if len(set(names)) != len(names):
        raise InputError("each price can be varied once per sweep")
    if not tolerance > 0:
        raise InputError(f"the tolerance must be positive, got {tolerance:g}")
    cat = portable(catalog)
    tasks: list[Solve] = [Solve(portable(spec), cat, solver, time_limit_s)]
    where: list[tuple[str, float]] = [("", 0.0)]
    for var in variations:
        for change in grid(var, steps):
            if change != 0.0:
                s, c = with_change(spec, catalog, var.name, change)
                tasks.append(Solve(portable(s), portable(c), solver, time_limit_s))
                where.append((var.name, change))
    counter = Counter(progress)
    counter.plan(len(tasks))
    outcomes = dict(zip(where, execute(tasks, workers, counter.tick)))
    base = outcomes[("", 0.0)]
    points = tuple(SweepPoint(var.name, change, base if change == 0.0 else outcomes[(var.name, change)])
                   for var in variations for change in grid(var, steps))
    bisections = []
    for var in variations:
        row = [p for p in points if p.variable == var.name]
        for a, b in zip(row, row[1:]):
            if a.outcome.key != b.outcome.key:
                bisections.append(Bisect(portable(spec), cat, solver, time_limit_s, var.name, a.change, b.change,
                                          a.outcome, b.outcome, tolerance))
    counter.plan(len(bisections))
    crossovers = tuple(execute(bisections, workers, counter.tick))
    return Sweep(base, tuple(variations), points, crossovers, tolerance)
