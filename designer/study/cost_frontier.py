"""The cost frontier: re-solve a spec across one target and record the optimum and every class's best.

Many independent solves of :func:`designer.planner.pipeline.plan` on variants of one spec and
catalog (:func:`designer.study.variants.with_target`), run as :mod:`designer.study.workers` tasks on an
executor (:mod:`designer.study.executor`).
"""

from __future__ import annotations

__all__ = ["frontier"]

from typing import Sequence

from designer.catalog.types import Catalog
from designer.design.study import Frontier, FrontierPoint, Outcome, Switchover
from designer.spec.models import Spec
from designer.study.executor import Executor, TaskFailure, make_executor
from designer.study.variants import with_target
from designer.study.workers import Counter, Progress, TargetSolve, base_of, run_tasks


def _failed(task: TargetSolve, failure: TaskFailure) -> Outcome:
    return Outcome("error", reason=failure.error)


def frontier(spec: Spec, catalog: Catalog, target: str, values: Sequence[float], *, solver: str = "highs",
             time_limit_s: float | None = None, workers: int = 1, progress: Progress | None = None,
             executor: Executor | None = None) -> Frontier:
    """Solve at every value of one target: the optimum and the best design of every class.

    Model: one full :func:`designer.planner.pipeline.plan` per value; classes are the design's
    ``alternatives`` (best design per fabric and per deployment). The optimum's technology
    (deployment, server, fabric, topology) is compared between neighbouring feasible values; each
    change is a :class:`Switchover`.

    Args:
        spec: The spec to vary.
        catalog: Its catalog.
        target: One of :data:`TARGETS`.
        values: Target values (solved in any order, reported sorted).
        solver: MILP solver.
        time_limit_s: Time limit of each integer program.
        workers: Local worker processes when no ``executor`` is given (1: solve in this process).
        progress: Called with (done, total) after every solve.
        executor: Where the solves run (:mod:`designer.study.executor`); the caller closes it.

    Raises:
        InputError: Unknown target or a value outside its domain (before any solve).
    """
    ordered = sorted(set(values))
    for v in ordered:  # bad values fail before any solve
        with_target(spec, target, v)
    base = base_of(spec, catalog, solver, time_limit_s)
    counter = Counter(progress)
    tasks = [TargetSolve(base, target, v) for v in ordered]
    if executor is None:
        with make_executor(workers if len(tasks) > 1 else 1) as own:
            outcomes = run_tasks(own, tasks, counter, _failed)
    else:
        outcomes = run_tasks(executor, tasks, counter, _failed)
    points = tuple(FrontierPoint(v, o) for v, o in zip(ordered, outcomes))
    classes = tuple(sorted({label for p in points for label, _ in p.outcome.classes}))
    feasible = [p for p in points if p.outcome.status == "ok"]
    switchovers = tuple(Switchover(a.value, b.value, a.outcome.technology, b.outcome.technology)
                        for a, b in zip(feasible, feasible[1:]) if a.outcome.technology != b.outcome.technology)
    return Frontier(target, points, classes, switchovers)
