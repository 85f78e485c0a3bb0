"""One solve of a study: its outcome (the chosen system, its cost, or why there is none), and bisection.

A solve that finds no design is an outcome with status ``infeasible``, ``timeout`` or ``error``,
not a failure, so a study over many variants always completes.
"""

from __future__ import annotations

__all__ = ["system_label", "outcome_of", "solve_outcome", "bisect_change"]

from typing import Callable, Sequence

from designer.catalog.types import Catalog
from designer.design.model import Design, SystemChoice
from designer.design.study import TOLERANCE, Crossover, Outcome
from designer.errors import DesignerError, InfeasibleError, SolverTimeoutError
from designer.perf import ModelEfficiency
from designer.planner.pipeline import plan
from designer.spec.models import Spec


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


def solve_outcome(spec: Spec, catalog: Catalog, *, solver: str = "highs", time_limit_s: float | None = None,
                  efficiency: ModelEfficiency | None = None) -> Outcome:
    """Solve once; no design is an outcome (``infeasible``, ``timeout``, ``error``), not an exception."""
    try:
        return outcome_of(plan(spec, catalog, solver=solver, time_limit_s=time_limit_s, efficiency=efficiency))
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
