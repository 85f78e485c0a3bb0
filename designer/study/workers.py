"""Running a study's solves, in worker processes when asked, with results in input order.

Solves run through :mod:`designer.study.executor` (in this process, or in worker processes that die
with the command) and come back in task order, so a study's result does not depend on the number
of workers. A Catalog holds MappingProxyType fields,
which do not pickle; on the way to a worker they travel as a marked dict (:func:`portable`) and
become proxies again on arrival (:func:`restored`).
"""

from __future__ import annotations

__all__ = ["Progress", "Solve", "Bisect", "Counter", "portable", "restored", "execute"]

from dataclasses import dataclass, fields, is_dataclass, replace
from types import MappingProxyType
from typing import Any, Callable, Sequence

from designer.catalog.types import Catalog
from designer.design.study import Crossover, Outcome
from designer.spec.models import Spec
from designer.study.executor import make_executor
from designer.study.outcome import bisect_change, solve_outcome
from designer.study.variants import with_change

Progress = Callable[[int, int], None]  # (solves done, solves planned so far)


class _Proxy(dict):
    """The contents of a MappingProxyType in transit to a worker process."""


def _convert(value: Any, mapping: Callable[[Any], Any], is_mapping: type) -> Any:
    if isinstance(value, is_mapping):
        return mapping({k: _convert(v, mapping, is_mapping) for k, v in value.items()})
    if is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: _convert(getattr(value, f.name), mapping, is_mapping) for f in fields(value) if f.init}
        if all(changes[k] is getattr(value, k) for k in changes):
            return value
        return replace(value, **changes)
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        items = tuple(_convert(v, mapping, is_mapping) for v in value)
        return value if all(a is b for a, b in zip(items, value)) else items
    return value


def portable(value: Any) -> Any:
    return _convert(value, _Proxy, MappingProxyType)


def restored(value: Any) -> Any:
    return _convert(value, MappingProxyType, _Proxy)


@dataclass(frozen=True, slots=True)
class Solve:
    """One solve of a (portable) spec and catalog, run where it lands."""

    spec: Spec
    catalog: Catalog
    solver: str
    time_limit_s: float | None

    def run(self) -> Outcome:
        return solve_outcome(restored(self.spec), restored(self.catalog), solver=self.solver,
                             time_limit_s=self.time_limit_s)


@dataclass(frozen=True, slots=True)
class Bisect:
    """The bisection of one interval where a sweep's outcome changes (:func:`bisect_change`)."""

    spec: Spec
    catalog: Catalog
    solver: str
    time_limit_s: float | None
    variable: str
    low: float
    high: float
    before: Outcome
    after: Outcome
    tolerance: float

    def run(self) -> Crossover:
        spec, catalog = restored(self.spec), restored(self.catalog)

        def evaluate(change: float) -> Outcome:
            s, c = with_change(spec, catalog, self.variable, change)
            return solve_outcome(s, c, solver=self.solver, time_limit_s=self.time_limit_s)
        return bisect_change(evaluate, self.variable, self.low, self.high, self.before, self.after, self.tolerance)


def execute(tasks: Sequence[Solve | Bisect], workers: int, tick: Callable[[], None]) -> list[Any]:
    """Run tasks, in worker processes when ``workers`` > 1 (:mod:`designer.study.executor`: they
    die with the command); results in task order."""
    with make_executor(workers if len(tasks) > 1 else 1) as pool:
        return pool.map(tasks, tick)


class Counter:
    """Counts finished solves for a progress callback; the plan may grow (bisections)."""

    def __init__(self, progress: Progress | None):
        self.progress, self.done, self.total = progress, 0, 0

    def plan(self, more: int) -> None:
        self.total += more
        if self.progress is not None:
            self.progress(self.done, self.total)

    def tick(self) -> None:
        self.done += 1
        if self.progress is not None:
            self.progress(self.done, self.total)
