"""The compiled problem: what the optimizer is asked, built once from a spec and catalog by the planner.

Nothing in :mod:`designer.optimize` reads a spec. :func:`designer.planner.compile.compile_task`
turns one into a :class:`Task`: the workloads with their performance-model jobs, pinned sizes and
plans; the thresholds an option must reach; the candidate systems; the catalog and facility they
are priced from; the economics of the horizon; the limits; and the cloud pricing model.
"""

from __future__ import annotations

__all__ = ["Thresholds", "Workload", "Task"]

from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Mapping

from designer import perf
from designer.catalog.types import Catalog, Facility
from designer.optimize.candidates import Candidate
from designer.optimize.preferences import Preference
from designer.optimize.problem import Economics, Limits, StorageNeeds
from designer.spec.choices import Pricing
from designer.topology import networks as topo_networks


@dataclass(frozen=True, slots=True)
class Thresholds:
    """What an option must reach: the spec's, or relaxed ones while explaining."""

    min_utilization: float
    deadlines_s: Mapping[str, float]

    def admits(self, workload: str, time_s: float, utilization: float) -> bool:
        """Whether a run of ``workload`` taking ``time_s`` at ``utilization`` qualifies. Float
        noise of 1e-12 is forgiven, so a size found exactly at a threshold counts everywhere
        alike (scans, bounds and the program's options)."""
        return (utilization >= self.min_utilization - 1e-12
                and time_s <= self.deadlines_s[workload] * (1 + 1e-12))


@dataclass(frozen=True, slots=True)
class Workload:
    """One workload as the optimizer sees it: its job for the performance model and what is pinned."""

    name: str
    job: perf.Job
    tokens: float
    plan: perf.PlanConstraints | None  # pinned parts of the parallelism plan; None: the whole plan is searched
    gpus: int | None  # pinned GPU count
    deadline_s: float | None  # None: no deadline (its threshold is the horizon)
    # What the performance model sees of the workload: its job with one step's tokens, and the
    # pinned plan. Workloads that differ only in tokens (or deadline) step alike, so they share
    # every plan search; only the time to train scales with the tokens. Derived, set once.
    shape: tuple = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        step_job = replace(self.job, tokens=float(self.job.tokens_per_step))
        object.__setattr__(self, "shape", (step_job, self.plan))

    @property
    def step_job(self) -> perf.Job:
        """The job with one step's tokens: its estimates' time to train is one step."""
        return self.shape[0]


@dataclass(frozen=True, slots=True)
class Task:
    """Everything the optimizer needs, and nothing of the spec it came from."""

    objective: str  # min_total_cost | min_time | min_cost_per_token
    workloads: tuple[Workload, ...]
    thresholds: Thresholds  # the spec's own: its utilization target and deadlines (the horizon where none)
    candidates: tuple[Candidate, ...]
    catalog: Catalog
    facility: Facility  # the catalog's default facility with the spec's overrides
    economics: Economics
    limits: Limits  # the spec's budgets, power, racks and nodes
    pricing: Pricing  # how cloud hours are paid for (the first of the spec's models; candidates carry their own)
    fixed_nodes: int | None = None  # system.nodes pinned: a built system has exactly this many
    # system.gpus_per_domain_used pinned: jobs use this many GPUs of each scale-up domain
    gpus_per_domain_used: int | None = None
    owned: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))  # catalog name -> units owned
    storage: StorageNeeds | None = None  # the on-prem file system's needs (None: no file system)
    licences: tuple[str, ...] = ()  # licence catalog entries charged per GPU-year
    # Multipliers on the performance model's rates (1: as modelled), for uncertainty studies.
    efficiency: perf.ModelEfficiency = field(default_factory=perf.ModelEfficiency)
    # Soft preferences: credits in the objective, never in a design's cost (designer.optimize.preferences).
    preferences: tuple[Preference, ...] = ()
    # The on-prem design's storage, in-band and out-of-band networks (all on unless the spec turns one off).
    networks: topo_networks.Networks = field(default_factory=topo_networks.Networks)
