"""The planner: a spec and its catalogs in, a design out; the one place that reads a spec for the stages.

Modules: :mod:`~designer.planner.inputs` (a spec and the catalogs it names, cross-checked),
:mod:`~designer.planner.candidates` (candidate systems from the spec),
:mod:`~designer.planner.compile` (the compiled problem the optimizer solves),
:mod:`~designer.planner.assemble` (the design from the program's answer),
:mod:`~designer.planner.pipeline` (``plan`` and ``solve``) and :mod:`~designer.planner.predict`
(``estimate``: predictions on a pinned system).

The names below are re-exported lazily, so ``designer validate`` (which needs only the inputs)
does not load the optimizer or the solver.
"""

from __future__ import annotations

__all__ = ["plan", "solve", "estimate", "Estimate", "WorkloadEstimate", "load_inputs", "check_references"]


def __getattr__(name: str):
    if name in ("plan", "solve"):
        from designer.planner import pipeline as home
    elif name in ("estimate", "Estimate", "WorkloadEstimate"):
        from designer.planner import predict as home
    elif name in ("load_inputs", "check_references"):
        from designer.planner import inputs as home
    else:
        raise AttributeError(f"module 'designer.planner' has no attribute {name!r}")
    return getattr(home, name)
