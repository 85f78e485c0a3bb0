"""The tasks a what-if study sends to its workers, and the spec and catalog they share, as data.

A study sends its base inputs once per worker as a :class:`Base` (the spec and catalog
themselves, never their paths) and then small tasks: a target value, an input's change, an
interval to bisect, a Monte Carlo scenario (:mod:`designer.study.scenarios`). A Catalog holds MappingProxyType fields, which do not pickle; on the way to a worker
they travel as a marked dict (:func:`portable`) and become proxies again on arrival
(:func:`restored`), once per worker process. Every task is a dataclass whose ``shared`` field
is the study's :class:`Base`, so an executor may send it once per worker
(:func:`designer.study.executor.split_shared`); :mod:`designer.study.executor` runs the tasks.
"""

from __future__ import annotations

__all__ = ["Progress", "Base", "TargetSolve", "ChangeSolve", "Bisect", "Counter", "portable", "restored", "base_of",
           "inputs_of", "run_tasks"]

import hashlib
import pickle
from dataclasses import dataclass, fields, is_dataclass, replace
from types import MappingProxyType
from typing import Any, Callable, Sequence

from designer.catalog.types import Catalog
from designer.design.study import Crossover, Outcome
from designer.spec.models import Spec
from designer.study.executor import Executor, TaskFailure
from designer.study.outcome import bisect_change, solve_outcome
from designer.study.variants import apply_factors, with_target

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
    """``value`` with every MappingProxyType replaced by a marked dict, so that it pickles."""
    return _convert(value, _Proxy, MappingProxyType)


def restored(value: Any) -> Any:
    """The inverse of :func:`portable`."""
    return _convert(value, MappingProxyType, _Proxy)


@dataclass(frozen=True, slots=True)
class Base:
    """What every task of a study shares: the spec and catalog (portable) and the solver settings.

    ``token`` identifies the contents, so a worker restores them once however many tasks it runs.
    """

    token: str
    spec: Spec
    catalog: Catalog
    solver: str
    time_limit_s: float | None


def base_of(spec: Spec, catalog: Catalog, solver: str, time_limit_s: float | None) -> Base:
    """The shared part of a study's tasks (the spec without its YAML document, which nothing below
    the loader reads)."""
    spec_p, catalog_p = portable(replace(spec, doc=None)), portable(catalog)
    token = hashlib.sha256(pickle.dumps((spec_p, catalog_p, solver, time_limit_s), protocol=4)).hexdigest()[:16]
    return Base(token, spec_p, catalog_p, solver, time_limit_s)


_restored: dict[str, tuple[Spec, Catalog]] = {}  # per worker process: token -> restored inputs


def inputs_of(base: Base) -> tuple[Spec, Catalog]:
    """The spec and catalog of ``base`` as the planner takes them (restored once per process)."""
    got = _restored.get(base.token)
    if got is None:
        if len(_restored) >= 4:  # a long-lived (Dask) worker serves study after study
            _restored.clear()
        got = _restored[base.token] = (restored(base.spec), restored(base.catalog))
    return got


@dataclass(frozen=True, slots=True)
class TargetSolve:
    """One frontier point: the spec with one target set (:func:`with_target`), solved."""

    shared: Base
    target: str
    value: float

    def run(self) -> Outcome:
        spec, catalog = inputs_of(self.shared)
        return solve_outcome(with_target(spec, self.target, self.value), catalog, solver=self.shared.solver,
                             time_limit_s=self.shared.time_limit_s)


def _changed(base: Base, variable: str, change: float) -> Outcome:
    spec, catalog = inputs_of(base)
    spec, catalog, efficiency = apply_factors(spec, catalog, ((variable, 1.0 + change),) if variable else ())
    return solve_outcome(spec, catalog, solver=base.solver, time_limit_s=base.time_limit_s, efficiency=efficiency)


@dataclass(frozen=True, slots=True)
class ChangeSolve:
    """One sweep point: one input changed by a relative amount (:func:`apply_factors`; ``("", 0.0)``
    is the base), solved."""

    shared: Base
    variable: str
    change: float

    def run(self) -> Outcome:
        return _changed(self.shared, self.variable, self.change)


@dataclass(frozen=True, slots=True)
class Bisect:
    """The interval of a sweep where the outcome changes, narrowed to ``tolerance`` (:func:`bisect_change`)."""

    shared: Base
    variable: str
    low: float
    high: float
    before: Outcome
    after: Outcome
    tolerance: float

    def run(self) -> Crossover:
        def evaluate(change: float) -> Outcome:
            return _changed(self.shared, self.variable, change)
        return bisect_change(evaluate, self.variable, self.low, self.high, self.before, self.after, self.tolerance)


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


def run_tasks(executor: Executor, tasks: Sequence[Any], counter: Counter,
              failed: Callable[[Any, TaskFailure], Any]) -> list[Any]:
    """Every task on ``executor``, results in task order; a task that failed (it raised, or its
    worker died) is replaced by ``failed(task, failure)`` and the others stand."""
    counter.plan(len(tasks))
    results = executor.map(tasks, counter.tick, failures=True)
    return [failed(task, r) if isinstance(r, TaskFailure) else r for task, r in zip(tasks, results)]
