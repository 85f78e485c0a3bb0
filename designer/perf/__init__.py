"""Performance model: step time, utilization, MFU and memory of a training job on a cluster.

Inputs are plain dataclasses (:mod:`designer.perf.types`, :mod:`designer.perf.cluster`); the entry points are
:func:`estimate_step` for a given plan and :func:`search_plans` for the fastest plan that fits.
docs/model.md explains every formula and docs/validation.md compares the model with
published training runs.
"""

from __future__ import annotations

# Each public name and the module it lives in. The names load on first use (PEP 562), so a caller
# that needs one submodule (``validate`` needs the software stacks and the plan checks, not the step
# model) does not pay for the whole performance model at start-up.
_HOMES = {
    "Cluster": "cluster", "ModelEfficiency": "cluster", "NetworkView": "cluster",
    "Collective": "collectives",
    "Breakdown": "estimate", "StepEstimate": "estimate",
    "MemoryBreakdown": "memory",
    "feasible_gpu_counts": "search", "search_plans": "search",
    "PRESET_NAMES": "software", "Attention": "software", "Profile": "software", "Software": "software",
    "resolve_software": "software",
    "check_plan": "step", "estimate_step": "step",
    "software_conflicts": "structure",
    "MLA": "types", "Job": "types", "MoE": "types", "ModelArch": "types", "Plan": "plan",
    "PlanConstraints": "plan", "Precision": "types", "Recompute": "types",
}
_RENAMED = {"resolve_software": "resolve"}


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'designer.perf' has no attribute '{name}'")
    import importlib

    value = getattr(importlib.import_module(f"designer.perf.{home}"), _RENAMED.get(name, name))
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})


__all__ = sorted(_HOMES)  # the public names are exactly those that load on first use
