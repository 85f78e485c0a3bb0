"""What if: re-solve a spec across targets (the cost frontier) or prices (the sensitivity sweep).

Both analyses are many independent solves of :func:`designer.planner.plan` on variants of one
spec and catalog, run in worker processes (:class:`concurrent.futures.ProcessPoolExecutor`) and
returned in input order, so the result does not depend on the number of workers. A solve that
finds no design is a point with status ``infeasible`` (or ``timeout``/``error``), not a failure.

* :func:`frontier` varies one target (GPU utilization, a deadline scale or the total budget) and
  records, at each value, the optimum and the best design of every fabric and deployment class
  (the design's ``alternatives``).
* :func:`sweep` varies one price at a time (the others at their catalog values), records the
  chosen system at each grid value and bisects every interval where it changes down to
  ``tolerance``.
"""

from __future__ import annotations

__all__ = [
    "TARGETS", "VARIABLES", "TOLERANCE",
    "Outcome", "FrontierPoint", "Switchover", "Frontier", "Variation", "SweepPoint", "Crossover", "Sweep",
    "grid", "with_target", "with_change", "unused_variation", "system_label", "outcome_of",
    "solve_outcome", "bisect_change", "frontier", "sweep",
]

from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, fields, is_dataclass, replace
from types import MappingProxyType
from typing import Any, Callable, Sequence

from designer import planner
from designer.catalog_types import Catalog, MediaKind
from designer.design import Design, SystemChoice
from designer.errors import DesignerError, InfeasibleError, InputError, SolverTimeoutError
from designer.inputs import facility_for
from designer.spec import Spec

# What a frontier can vary: the utilization target (a fraction), every workload's deadline
# (multiplied by the value) or the total budget (US dollars).
TARGETS = ("utilization", "deadline_scale", "budget")
# What a sweep can vary, each by a relative change (-0.3 is 30% cheaper).
VARIABLES = {
    "gpu_price": "every GPU's price, and the GPU share of every server's price",
    "server_price": "every server's price without its GPUs (chassis, CPUs, memory, NICs)",
    "switch_price": "every switch's price",
    "optics_price": "every transceiver's and optical cable's (AOC, fiber) price; copper DAC unchanged",
    "cloud_price": "every cloud instance's hourly prices (on demand and reserved)",
    "electricity": "the electricity price (the spec's, else the catalog facility's)",
}
TOLERANCE = 0.01  # width of a located design change, in relative change (1 percentage point)

Progress = Callable[[int, int], None]  # (solves done, solves planned so far)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one solve gave.

    Attributes:
        status: ``ok``, ``infeasible``, ``timeout`` or ``error``.
        system: The chosen system (:func:`system_label`); empty without a design.
        technology: Deployment, server, fabric and topology of the chosen system; empty without one.
        total_usd: Total cost of the design over the horizon; ``None`` without one.
        reason: Why there is no design (first line of the error); empty when there is one.
        classes: (alternative label, best total in that class or ``None``), sorted by label.
    """

    status: str
    system: str = ""
    technology: str = ""
    total_usd: float | None = None
    reason: str = ""
    classes: tuple[tuple[str, float | None], ...] = ()

    @property
    def key(self) -> str:
        """What a decision change compares: the system, or the status when there is none."""
        return self.system or self.status


@dataclass(frozen=True, slots=True)
class FrontierPoint:
    """One target value and the solve's outcome."""

    value: float
    outcome: Outcome


@dataclass(frozen=True, slots=True)
class Switchover:
    """The optimum's technology changes between two neighbouring feasible values."""

    low: float
    high: float
    before: str
    after: str


@dataclass(frozen=True, slots=True)
class Frontier:
    """Total cost against one target, overall and per fabric and deployment class."""

    target: str
    points: tuple[FrontierPoint, ...]
    classes: tuple[str, ...]
    switchovers: tuple[Switchover, ...]


@dataclass(frozen=True, slots=True)
class Variation:
    """One price varied from ``low`` to ``high`` (relative changes: -0.3 is 30% lower)."""

    name: str
    low: float
    high: float


@dataclass(frozen=True, slots=True)
class SweepPoint:
    """One grid value of one variable and the solve's outcome."""

    variable: str
    change: float
    outcome: Outcome


@dataclass(frozen=True, slots=True)
class Crossover:
    """The chosen design changes between ``low`` and ``high`` (at most ``tolerance`` apart)."""

    variable: str
    low: float
    high: float
    before: Outcome
    after: Outcome

    @property
    def at(self) -> float:
        """Midpoint of the located interval."""
        return (self.low + self.high) / 2


@dataclass(frozen=True, slots=True)
class Sweep:
    """Sensitivity of the decision to each varied price."""

    base: Outcome
    variations: tuple[Variation, ...]
    points: tuple[SweepPoint, ...]
    crossovers: tuple[Crossover, ...]
    tolerance: float


# ---------------------------------------------------------------- variants


def grid(variation: Variation, steps: int) -> tuple[float, ...]:
    """``steps`` evenly spaced changes from low to high, both included (one when low == high).

    Examples:
        >>> grid(Variation("gpu_price", -0.3, 0.3), 5)
        (-0.3, -0.15, 0.0, 0.15, 0.3)
    """
    if steps < 2 or variation.low == variation.high:
        return (variation.low,)
    span = variation.high - variation.low
    return tuple(round(variation.low + span * i / (steps - 1), 12) for i in range(steps))


def with_target(spec: Spec, target: str, value: float) -> Spec:
    """The spec with one target set: ``utilization`` (min_utilization), ``deadline_scale`` (every
    deadline times ``value``; workloads without one keep none) or ``budget`` (budget.total, USD).

    Raises:
        InputError: Unknown target or a value outside its domain.
    """
    if target == "utilization":
        if not 0.0 < value <= 1.0:
            raise InputError(f"--utilization: a target must lie in (0, 1], got {value:g}")
        return replace(spec, constraints=replace(spec.constraints, min_utilization=value))
    if target == "deadline_scale":
        if value <= 0:
            raise InputError(f"--deadline-scale: a scale must be positive, got {value:g}")
        workloads = tuple(w if w.deadline_s is None else replace(w, deadline_s=w.deadline_s * value)
                          for w in spec.workloads)
        return replace(spec, workloads=workloads)
    if target == "budget":
        if value <= 0:
            raise InputError(f"--budget: a budget must be positive, got {value:g}")
        return replace(spec, budget=replace(spec.budget, total_usd=value))
    raise InputError(f"unknown target {target!r}; expected one of {', '.join(TARGETS)}")


def _scaled(mapping, change: Callable[[Any], Any]) -> MappingProxyType:
    return MappingProxyType({name: change(entry) for name, entry in mapping.items()})


def with_change(spec: Spec, catalog: Catalog, variable: str, change: float) -> tuple[Spec, Catalog]:
    """The spec and catalog with one price changed by the relative amount ``change``.

    ``gpu_price`` scales every GPU's price and moves each server's price by its GPUs' share (a
    server is quoted complete, GPUs included); a GPU without a price leaves its servers alone.
    ``server_price`` scales a server's price without its GPUs (the whole price when the GPUs'
    catalog prices reach it, as the bill of materials then does). See :data:`VARIABLES`.

    Raises:
        InputError: Unknown variable, or a change of -100% or less.
    """
    if change <= -1.0:
        raise InputError(f"{variable}: a price cannot fall by 100% or more")
    f = 1.0 + change
    gpu_usd = {name: g.price_usd or 0.0 for name, g in catalog.gpus.items()}
    if variable == "gpu_price":
        catalog = replace(
            catalog,
            gpus=_scaled(catalog.gpus, lambda g: g if g.price_usd is None else replace(g, price_usd=g.price_usd * f)),
            servers=_scaled(catalog.servers, lambda s: replace(
                s, price_usd=s.price_usd + s.gpus * gpu_usd.get(s.gpu, 0.0) * change)))
    elif variable == "server_price":
        def rest(s):
            base = s.price_usd - s.gpus * gpu_usd.get(s.gpu, 0.0)
            return replace(s, price_usd=s.price_usd + (base if base > 0 else s.price_usd) * change)
        catalog = replace(catalog, servers=_scaled(catalog.servers, rest))
    elif variable == "switch_price":
        catalog = replace(catalog, switches=_scaled(catalog.switches, lambda s: replace(s, price_usd=s.price_usd * f)))
    elif variable == "optics_price":
        catalog = replace(
            catalog,
            transceivers=_scaled(catalog.transceivers, lambda t: replace(t, price_usd=t.price_usd * f)),
            cables=_scaled(catalog.cables, lambda c: c if c.media is MediaKind.DAC
                           else replace(c, price_usd=c.price_usd * f)))
    elif variable == "cloud_price":
        def rent(i):
            return replace(i, price_on_demand_usd_per_s=i.price_on_demand_usd_per_s * f,
                           price_reserved_1y_usd_per_s=None if i.price_reserved_1y_usd_per_s is None
                           else i.price_reserved_1y_usd_per_s * f,
                           price_reserved_3y_usd_per_s=None if i.price_reserved_3y_usd_per_s is None
                           else i.price_reserved_3y_usd_per_s * f)
        catalog = replace(catalog, clouds=_scaled(catalog.clouds, rent))
    elif variable == "electricity":
        price = facility_for(spec, catalog).electricity_usd_per_j * f
        spec = replace(spec, facility=replace(spec.facility, electricity_usd_per_j=price))
    else:
        raise InputError(f"unknown variable {variable!r}; expected one of {', '.join(VARIABLES)}")
    return spec, catalog


# ---------------------------------------------------------------- one solve


def unused_variation(spec: Spec, variable: str) -> str:
    """Why varying ``variable`` cannot change this spec's decision, or ``""`` when it can.

    Cloud prices matter only when the spec allows cloud; every other price only when it allows
    on-prem (electricity, GPUs, servers, switches and optics are bought).
    """
    allowed = {d.value for d in spec.constraints.deployments}
    if spec.system.deployment is not None:
        allowed &= {spec.system.deployment.value}
    if variable == "cloud_price" and "cloud" not in allowed:
        return "the spec allows no cloud deployment"
    if variable != "cloud_price" and "on_prem" not in allowed:
        return "the spec allows no on-prem deployment"
    return ""


def system_label(system: SystemChoice, rented: Sequence[str] = ()) -> str:
    """``on_prem 32x dgx-h100 infiniband rail_optimized nvidia-qm9700 1:1`` or ``cloud 8x aws-p5.48xlarge efa``.

    ``rented`` lists cloud instances a hybrid design also rents.
    """
    head = f"{system.deployment} {system.nodes}x {system.server} {system.fabric}"
    if system.topology != "cloud":
        head += f" {system.topology} {system.switch} {system.oversubscription:g}:1"
    return head + (f" + {', '.join(rented)}" if rented else "")


def outcome_of(design: Design) -> Outcome:
    """The outcome of a solved design.

    Class totals come from ``design.alternatives`` (the optimizer's figure for the best design of
    each class); the class holding the chosen system gets the design's exact total.
    """
    s = design.system
    rented = sorted({w.server for w in design.workloads if w.deployment == "cloud"}) if s.deployment == "hybrid" else []
    classes = []
    for alt in sorted(design.alternatives, key=lambda a: a.label):
        total = alt.total_usd if alt.feasible else None
        if alt.feasible and (alt.deployment, alt.server, alt.fabric, alt.topology, alt.nodes) == (
                s.deployment, s.server, s.fabric, s.topology, s.nodes):
            total = design.cost.total_usd
        classes.append((alt.label, total))
    return Outcome("ok", system_label(s, rented), f"{s.deployment} {s.server} {s.fabric} {s.topology}",
                   design.cost.total_usd, "", tuple(classes))


def solve_outcome(spec: Spec, catalog: Catalog, *, solver: str = "highs",
                  time_limit_s: float | None = None) -> Outcome:
    """Solve once; no design is an outcome (``infeasible``, ``timeout``, ``error``), not an exception."""
    try:
        return outcome_of(planner.plan(spec, catalog, solver=solver, time_limit_s=time_limit_s))
    except InfeasibleError as exc:
        why = exc.message.splitlines()[0] + (f": {exc.reasons[0]}" if exc.reasons else "")
        return Outcome("infeasible", reason=why)
    except SolverTimeoutError as exc:
        return Outcome("timeout", reason=str(exc).splitlines()[0])
    except DesignerError as exc:
        return Outcome("error", reason=str(exc).splitlines()[0])


def bisect_change(evaluate: Callable[[float], Outcome], variable: str, low: float, high: float,
                  before: Outcome, after: Outcome, tolerance: float = TOLERANCE) -> Crossover:
    """Narrow ``[low, high]``, where the outcome goes from ``before`` to ``after``, to ``tolerance``.

    Bisection keeps the left end on ``before``'s system; a midpoint with any other outcome becomes
    the right end. Where the design changes more than once in the interval, the first change is
    found. Costs ceil(log2((high - low) / tolerance)) solves.
    """
    while high - low > tolerance * (1 + 1e-9):
        mid = (low + high) / 2
        got = evaluate(mid)
        if got.key == before.key:
            low, before = mid, got
        else:
            high, after = mid, got
    return Crossover(variable, low, high, before, after)


# ---------------------------------------------------------------- processes
#
# A Catalog holds MappingProxyType fields, which do not pickle; on the way to a worker they travel
# as a marked dict and become proxies again on arrival.


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


def _portable(value: Any) -> Any:
    return _convert(value, _Proxy, MappingProxyType)


def _restored(value: Any) -> Any:
    return _convert(value, MappingProxyType, _Proxy)


@dataclass(frozen=True, slots=True)
class _Solve:
    spec: Spec
    catalog: Catalog
    solver: str
    time_limit_s: float | None

    def run(self) -> Outcome:
        return solve_outcome(_restored(self.spec), _restored(self.catalog), solver=self.solver,
                             time_limit_s=self.time_limit_s)


@dataclass(frozen=True, slots=True)
class _Bisect:
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
        spec, catalog = _restored(self.spec), _restored(self.catalog)

        def evaluate(change: float) -> Outcome:
            s, c = with_change(spec, catalog, self.variable, change)
            return solve_outcome(s, c, solver=self.solver, time_limit_s=self.time_limit_s)
        return bisect_change(evaluate, self.variable, self.low, self.high, self.before, self.after, self.tolerance)


def _work(task: _Solve | _Bisect) -> Any:
    return task.run()


def _execute(tasks: Sequence[_Solve | _Bisect], workers: int, tick: Callable[[], None]) -> list[Any]:
    """Run tasks, in worker processes when ``workers`` > 1; results in task order."""
    if workers <= 1 or len(tasks) <= 1:
        out = []
        for task in tasks:
            out.append(_work(task))
            tick()
        return out
    results: list[Any] = [None] * len(tasks)
    with ProcessPoolExecutor(max_workers=min(workers, len(tasks))) as pool:
        futures = {pool.submit(_work, task): i for i, task in enumerate(tasks)}
        for future in as_completed(futures):
            results[futures[future]] = future.result()
            tick()
    return results


class _Counter:
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


# ---------------------------------------------------------------- the analyses


def frontier(spec: Spec, catalog: Catalog, target: str, values: Sequence[float], *, solver: str = "highs",
             time_limit_s: float | None = None, workers: int = 1, progress: Progress | None = None) -> Frontier:
    """Solve at every value of one target: the optimum and the best design of every class.

    Model: one full :func:`designer.planner.plan` per value; classes are the design's
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
        workers: Worker processes (1: solve in this process).
        progress: Called with (done, total) after every solve.

    Raises:
        InputError: Unknown target or a value outside its domain (before any solve).
    """
    ordered = sorted(set(values))
    variants = [_portable(with_target(spec, target, v)) for v in ordered]
    portable_catalog = _portable(catalog)
    counter = _Counter(progress)
    counter.plan(len(variants))
    outcomes = _execute([_Solve(s, portable_catalog, solver, time_limit_s) for s in variants], workers, counter.tick)
    points = tuple(FrontierPoint(v, o) for v, o in zip(ordered, outcomes))
    classes = tuple(sorted({label for p in points for label, _ in p.outcome.classes}))
    feasible = [p for p in points if p.outcome.status == "ok"]
    switchovers = tuple(Switchover(a.value, b.value, a.outcome.technology, b.outcome.technology)
                        for a, b in zip(feasible, feasible[1:]) if a.outcome.technology != b.outcome.technology)
    return Frontier(target, points, classes, switchovers)


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
    cat = _portable(catalog)
    tasks: list[_Solve] = [_Solve(_portable(spec), cat, solver, time_limit_s)]
    where: list[tuple[str, float]] = [("", 0.0)]
    for var in variations:
        for change in grid(var, steps):
            if change != 0.0:
                s, c = with_change(spec, catalog, var.name, change)
                tasks.append(_Solve(_portable(s), _portable(c), solver, time_limit_s))
                where.append((var.name, change))
    counter = _Counter(progress)
    counter.plan(len(tasks))
    outcomes = dict(zip(where, _execute(tasks, workers, counter.tick)))
    base = outcomes[("", 0.0)]
    points = tuple(SweepPoint(var.name, change, base if change == 0.0 else outcomes[(var.name, change)])
                   for var in variations for change in grid(var, steps))
    bisections = []
    for var in variations:
        row = [p for p in points if p.variable == var.name]
        for a, b in zip(row, row[1:]):
            if a.outcome.key != b.outcome.key:
                bisections.append(_Bisect(_portable(spec), cat, solver, time_limit_s, var.name, a.change, b.change,
                                          a.outcome, b.outcome, tolerance))
    counter.plan(len(bisections))
    crossovers = tuple(_execute(bisections, workers, counter.tick))
    return Sweep(base, tuple(variations), points, crossovers, tolerance)
