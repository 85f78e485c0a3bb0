"""Performance model: step time, utilization, MFU and memory of a training job on a cluster.

Inputs are plain dataclasses (:mod:`designer.perf.types`, :mod:`designer.perf.cluster`); the entry points are
:func:`estimate_step` for a given plan and :func:`search_plans` for the fastest plan that fits.
docs/model.md explains every formula and docs/validation.md compares the model with
published training runs.
"""

from __future__ import annotations

from designer.perf.cluster import Cluster, NetworkView
from designer.perf.collectives import Collective
from designer.perf.estimate import Breakdown, StepEstimate
from designer.perf.memory import MemoryBreakdown
from designer.perf.search import feasible_gpu_counts, search_plans
from designer.perf.step import check_plan, estimate_step
from designer.perf.types import (
    Job,
    MoE,
    ModelArch,
    Overlap,
    Plan,
    PlanConstraints,
    Precision,
    Recompute,
)

__all__ = [
    "Breakdown",
    "Cluster",
    "Collective",
    "Job",
    "MemoryBreakdown",
    "MoE",
    "ModelArch",
    "NetworkView",
    "Overlap",
    "Plan",
    "PlanConstraints",
    "Precision",
    "Recompute",
    "StepEstimate",
    "check_plan",
    "estimate_step",
    "feasible_gpu_counts",
    "search_plans",
]
