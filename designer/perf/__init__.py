"""Performance model: step time, utilization, MFU and memory of a training job on a cluster.

Inputs are plain dataclasses (:mod:`designer.perf.types`, :mod:`designer.perf.cluster`); the entry points are
:func:`estimate_step` for a given plan and :func:`search_plans` for the fastest plan that fits.
docs/model.md explains every formula and docs/validation.md compares the model with
published training runs.
"""

from __future__ import annotations

from designer.perf.cluster import Cluster, ModelEfficiency, NetworkView
from designer.perf.collectives import Collective
from designer.perf.estimate import Breakdown, StepEstimate
from designer.perf.memory import MemoryBreakdown
from designer.perf.search import feasible_gpu_counts, search_plans
from designer.perf.software import PRESET_NAMES, Attention, Profile, Software
from designer.perf.software import resolve as resolve_software
from designer.perf.step import check_plan, estimate_step
from designer.perf.structure import software_conflicts
from designer.perf.types import (
    MLA,
    Job,
    MoE,
    ModelArch,
    Plan,
    PlanConstraints,
    Precision,
    Recompute,
)

__all__ = [
    "Attention",
    "Breakdown",
    "Cluster",
    "Collective",
    "Job",
    "MemoryBreakdown",
    "MLA",
    "ModelEfficiency",
    "MoE",
    "ModelArch",
    "NetworkView",
    "PRESET_NAMES",
    "Plan",
    "PlanConstraints",
    "Precision",
    "Profile",
    "Recompute",
    "Software",
    "StepEstimate",
    "check_plan",
    "estimate_step",
    "feasible_gpu_counts",
    "resolve_software",
    "search_plans",
    "software_conflicts",
]
