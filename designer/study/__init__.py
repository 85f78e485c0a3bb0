"""What if: re-solve a spec across targets (the cost frontier), inputs (the sensitivity sweep) or drawn scenarios (Monte Carlo).

Both studies are many independent solves of :func:`designer.planner.pipeline.plan` on variants of one
spec and catalog, run in worker processes and returned in input order, so the result does not
depend on the number of workers. A solve that finds no design is a point with status
``infeasible`` (or ``timeout``/``error``), not a failure.

* :func:`frontier` varies one target (GPU utilization, a deadline scale or the total budget) and
  records, at each value, the optimum and the best design of every fabric and deployment class
  (the design's ``alternatives``).
* :func:`sweep` varies one price at a time (the others at their catalog values), records the
  chosen system at each grid value and bisects every interval where it changes down to
  ``tolerance``.

* :func:`monte_carlo` draws scenarios of prices, model efficiencies and workloads, solves each,
  prices every design found in every scenario and reports how often each is the cheapest, its
  cost percentiles and the robust choice (:mod:`~designer.study.montecarlo`).

Where the solves run: :mod:`~designer.study.executor` (this process, local processes),
:mod:`~designer.study.dask_executor` (a Dask cluster), chosen by :mod:`~designer.study.backends`.

Modules: :mod:`~designer.study.variants`, :mod:`~designer.study.outcome`,
:mod:`~designer.study.workers`, :mod:`~designer.study.cost_frontier`, :mod:`~designer.study.price_sweep`; the
results are the data of :mod:`designer.design.study`.
"""

from __future__ import annotations

__all__ = [
    "TARGETS", "VARIABLES", "TOLERANCE",
    "Outcome", "FrontierPoint", "Switchover", "Frontier", "Variation", "SweepPoint", "Crossover", "Sweep",
    "grid", "with_target", "with_change", "unused_variation", "system_label", "outcome_of",
    "solve_outcome", "bisect_change", "frontier", "sweep", "monte_carlo",
]

# Lazy re-exports: the command line imports designer.study.executor when a signal ends a command
# (its workers die with it), which must not load the planner and the solver with it.
_HOMES = {
    **{n: "designer.design.study" for n in ("TARGETS", "TOLERANCE", "VARIABLES", "Crossover", "Frontier",
                                            "FrontierPoint", "Outcome", "Sweep", "SweepPoint", "Switchover",
                                            "Variation")},
    "frontier": "designer.study.cost_frontier", "sweep": "designer.study.price_sweep",
    "monte_carlo": "designer.study.montecarlo",
    **{n: "designer.study.outcome" for n in ("bisect_change", "outcome_of", "solve_outcome", "system_label")},
    **{n: "designer.study.variants" for n in ("grid", "unused_variation", "with_change", "with_target")},
}


def __getattr__(name: str):
    import importlib

    if name not in _HOMES:
        raise AttributeError(f"module 'designer.study' has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name]), name)
