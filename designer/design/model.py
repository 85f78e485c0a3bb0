"""The design: one canonical, versioned result of ``designer solve``, as frozen dataclasses.

Every output (design file, summary, BOM tables, diff, explanation) is a rendering of a
:class:`Design`; :mod:`designer.design.io` writes and reads its file.
"""

from __future__ import annotations

__all__ = [
    "SCHEMA_VERSION",
    "PreferenceCredit",
    "SoftwareUsed",
    "SystemChoice",
    "CostLine",
    "CostBreakdown",
    "Breakdown",
    "WorkloadResult",
    "Alternative",
    "ConstraintStatus",
    "SolverInfo",
    "FacilityAssumptions",
    "PriceBookUsed",
    "Design",
]

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

# The design file's reader resolves these annotations (typing.get_type_hints) in this module.
from designer.design.bom import BomLine

SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True)
class SystemChoice:
    """What was chosen. ``server`` is a server or cloud instance catalog name."""

    deployment: str  # on_prem | cloud | hybrid
    server: str
    gpu: str
    nodes: int
    gpus: int
    fabric: str  # ethernet | roce | infiniband | efa | gpudirect-tcpx | gpudirect-tcpxo
    topology: str  # single_switch | fat_tree | rail_optimized | rail_only | cloud
    oversubscription: float
    switch: str | None  # None for cloud
    tiers: int  # switch tiers (0 for cloud)
    racks: int
    power_kw: float  # IT power of the purchased system (before PUE)
    pricing: str | None = None  # cloud pricing model, when cloud is used
    # On-prem scale-out link speed per GPU, Gb/s, as the compute NICs run (their count x rate /
    # GPUs), and the NICs' own rate, Gb/s, when they run below it (0: native, or cloud).
    link_gbps_per_gpu: float = 0.0
    nic_native_gbps: float = 0.0


@dataclass(frozen=True, slots=True)
class CostLine:
    """One line of the cost of ownership: what it is, how it was worked out, and from which figures.

    ``kind`` is ``capex`` (paid once: equipment, installation, spares, an owned facility's share),
    ``opex`` (over the horizon: power, colocation, support, licences), ``residual`` (the value of
    the bought hardware recovered at the horizon, a credit) or ``cloud``. ``basis`` is the formula
    with its numbers.
    """

    name: str  # server, switch, ..., installation, spares, facility, power, support, software, residual, cloud
    kind: str  # capex | opex | residual | cloud
    amount_usd: float
    basis: str
    source: str = ""
    as_of: str = ""
    estimate: bool = False


@dataclass(frozen=True, slots=True)
class CostBreakdown:
    """Costs over the spec's horizon, in US dollars."""

    capex_usd: float  # purchased equipment, installation, spares (and an owned facility's share)
    opex_usd: float  # power at the expected draw and PUE, colocation, support, licences
    cloud_usd: float  # rented instances, as each pricing model bills them
    total_usd: float  # capex + opex + cloud - residual
    capex_by_category: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    installation_usd: float = 0.0
    power_usd: float = 0.0
    maintenance_usd: float = 0.0  # hardware support contracts over the horizon (opex_by_category "support")
    opex_by_category: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    residual_usd: float = 0.0  # value of the bought hardware recovered at the horizon (book value)
    lines: tuple[CostLine, ...] = ()


@dataclass(frozen=True, slots=True)
class Breakdown:
    """Step-time components in seconds (docs/contract.md `breakdown` keys)."""

    compute_s: float
    tp_comm_s: float
    pp_comm_s: float
    dp_comm_s: float
    ep_comm_s: float
    bubble_s: float
    exposed_comm_s: float
    checkpoint_s: float = 0.0


@dataclass(frozen=True, slots=True)
class SoftwareUsed:
    """The training stack a workload's prediction assumes: its preset and the knobs as run."""

    preset: str  # megatron-core | megatron-lm-2021 | deepspeed | fsdp2 | torchtitan
    attention: str  # flash | unfused
    sequence_parallel: bool  # as the plan runs it
    tp_comm_overlap: bool
    dp_overlap: bool
    # The rest of the stack as run (older design files: the defaults they were predicted with):
    p2p_overlap: bool = False  # pipeline sends overlapped with compute, as the schedule runs them
    dropout: bool = False  # dropout layers in the model (their masks are kept for backward)
    compile: bool = False  # torch.compile fuses element-wise work
    moe_dispatcher: str = "nccl"  # nccl | deepep | hybridep: how MoE tokens are dispatched
    in_network_reduction: bool = False  # NCCL CollNet / SHARP reductions in the switches
    # what a selective recomputation keeps (designer.perf.software.CHECKPOINT_SAVES); None in older files
    checkpoint_saves: str | None = None
    cuda_graphs: str = "none"  # none | partial | full (designer.perf.software.CUDA_GRAPHS); none in older files


@dataclass(frozen=True, slots=True)
class WorkloadResult:
    """Plan and predictions for one workload on the chosen system."""

    name: str
    deployment: str  # where this workload runs: on_prem | cloud
    server: str  # server or instance it runs on
    gpus: int
    tp: int
    pp: int
    dp: int
    ep: int
    cp: int
    microbatch: int
    zero: int
    step_time_s: float
    utilization: float
    mfu: float
    tflops_per_gpu: float
    tokens_per_s: float
    time_to_train_days: float
    deadline_days: float | None
    memory_gb_per_gpu: float
    breakdown: Breakdown
    cost_usd: float = 0.0  # cloud spend attributed to this workload (0 on-prem)
    software: SoftwareUsed | None = None  # None in design files written before stacks were recorded
    recompute: str = ""  # none | selective | full, as the plan runs it ("" in older design files)
    assumptions: tuple[str, ...] = ()  # model figures filled in by default
    # The rest of the plan as it runs (older design files: the defaults, which is what they ran):
    virtual_stages: int = 1  # interleaved pipeline chunks per GPU (1: plain 1F1B)
    schedule: str = "1f1b"  # pipeline schedule: 1f1b | dualpipe
    first_stage_layers: int | None = None  # layers of the first pipeline stage when not an even split
    last_stage_layers: int | None = None  # layers of the last pipeline stage when not an even split
    etp: int | None = None  # expert tensor-parallel size when the experts are folded (None: tp)
    # The schedule: the workload holds ``gpus`` GPUs from ``start_day`` to ``end_day`` (days from
    # the start of the horizon). On-prem workloads never use more GPUs than the cluster at once.
    # None in design files written before schedules were recorded.
    start_day: float | None = None
    end_day: float | None = None


@dataclass(frozen=True, slots=True)
class Alternative:
    """The best design found in one class (a fabric or a deployment) and why it lost."""

    label: str  # e.g. "fabric=roce", "deployment=cloud"
    deployment: str
    fabric: str
    topology: str
    server: str
    nodes: int
    total_usd: float | None  # None when no design of this class exists
    delta_usd: float | None  # total_usd minus the chosen design's total
    feasible: bool
    reason: str  # "chosen", "costs $1.2M more", "utilization 0.62 < 0.80", ...
    # Cost difference from the chosen design per cost line (server, power, facility, ...): which
    # lines moved the choice. Empty when no design of the class exists.
    delta_by_line: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True)
class ConstraintStatus:
    """One constraint of the spec at the chosen design."""

    name: str  # e.g. "budget.total", "min_utilization[llama3-70b]", "deadline[llama3-70b]"
    limit: float
    value: float
    binding: bool
    slack: float  # limit - value in the constraint's direction (>= 0 when satisfied)
    unit: str = ""


@dataclass(frozen=True, slots=True)
class SolverInfo:
    """How the answer was found. No timings: the design file must be deterministic."""

    name: str  # highs | cbc
    status: str  # optimal | feasible (time limit) | ...
    gap: float  # relative optimality gap (0 when proven optimal)
    candidates: int  # candidate systems evaluated
    variables: int
    constraints: int


@dataclass(frozen=True, slots=True)
class FacilityAssumptions:
    """The facility the design was priced for: the catalog's default with the spec's overrides.

    A design file records it so that a reviewer sees what power and space cost was assumed
    without the spec at hand.
    """

    name: str  # catalog facility entry the figures start from
    electricity_usd_per_kwh: float
    pue: float
    rack_power_kw: float  # power budget of one rack
    rack_units: int  # usable units of one rack
    installation_fraction: float  # of equipment capex, once
    maintenance_fraction_per_year: float | None  # flat support share per year; None: support by vendor
    from_spec: tuple[str, ...]  # spec `facility:` keys that replaced the catalog's figures
    source: str  # the catalog entry's source
    as_of: str
    space: str = "colocation"  # colocation | owned
    colocation_usd_per_kw_month: float = 0.0
    build_usd_per_mw: float = 0.0  # owned space: construction per MW of IT load
    build_life_years: float = 0.0
    training_power_fraction: float = 1.0  # server draw training at full utilization / rated
    idle_power_fraction: float = 1.0
    useful_life_years: float = 0.0  # hardware book life (residual value)
    spares: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True)
class PriceBookUsed:
    """The buyer's price book a design was priced with: the discounts applied to catalog prices
    and the currency its amounts are shown in (the design's own figures stay in US dollars)."""

    name: str
    currency: str
    exchange_rate: float  # units of currency per US dollar
    discounts: Mapping[str, float]  # vendor -> share off
    source: str
    as_of: str


@dataclass(frozen=True, slots=True)
class PreferenceCredit:
    """A soft preference of the spec and the credit the design earned from it in the objective:
    never part of its cost (designer.optimize.preferences)."""

    key: str  # fabric | topology | deployment | server | switch | gpu | vendor
    value: str
    weight: str  # as a person writes it: $250,000 or 5%
    workloads: int  # workloads run on a system with the property
    credit_usd: float  # the weight's dollars per such workload over all, or its share of their systems' cost


@dataclass(frozen=True, slots=True)
class Design:
    """A complete, reviewable design."""

    tool_version: str
    spec_name: str
    spec_digest: str
    catalog_digest: str
    catalog_dates: Mapping[str, str]
    objective: str
    horizon_days: float
    system: SystemChoice
    cost: CostBreakdown
    workloads: tuple[WorkloadResult, ...]
    bom: tuple[BomLine, ...]
    alternatives: tuple[Alternative, ...]
    constraints: tuple[ConstraintStatus, ...]
    solver: SolverInfo
    warnings: tuple[str, ...] = ()
    facility: FacilityAssumptions | None = None  # None in design files written before it was recorded
    # Each catalog file read, by its name as the spec writes it (built-ins as builtin:FILE), with
    # the sha256 of its bytes: the same spec and catalogs give the same record in any folder.
    catalog_files: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    price_book: PriceBookUsed | None = None  # None: catalog prices as they are, amounts in US dollars
    preferences: tuple[PreferenceCredit, ...] = ()  # the spec's soft preferences and what each credited
    schema_version: int = SCHEMA_VERSION
