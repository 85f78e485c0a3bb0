"""The data of the integer program: systems, their linear cost and sizing rules, and workload options.

Everything non-linear (the performance model, the topology's closed forms) is evaluated before the
program is built; what reaches the program is linear coefficients (STYLE.md 7.3).
"""

from __future__ import annotations

__all__ = ["min_overlap_s", "FabricShape", "UnitCosts", "StorageUnit", "StorageNeeds", "OnPremSystem", "CloudSystem", "Option", "Economics",
           "Limits", "Problem", "pareto"]

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping

from designer.optimize.candidates import Candidate
from designer.optimize.cloud import Offer


@dataclass(frozen=True, slots=True)
class FabricShape:
    """How switch and link counts follow from the node count, for one on-prem candidate.

    Counts are per node, the unit the program buys: a server, or a rack-scale system, whose
    ``trays`` compute trays the fabric connects (``rails`` NICs each). The per-tray sizing limits
    are divided by ``trays``, so ``su_nodes`` may be a fraction.

    ``radix`` is the switch's logical ports at the NIC rate; a leaf has ``leaf_down`` ports to
    nodes and ``leaf_up`` to spines (``leaf_down : leaf_up`` is the oversubscription). In three
    tiers a spine has ``radix // 2`` ports down and up, a core all ``radix`` down (network.md 5.2).
    ``spine_choices`` are the admissible two-tier spine counts per group (the divisors of
    ``leaf_up``: every leaf spreads its uplinks evenly over the spines, network.md 5.3).
    """

    topology: str
    rails: int
    radix: int
    leaf_down: int
    leaf_up: int
    su_nodes: float  # nodes per scalable unit (a fraction of a rack-scale system: 32 trays = 1.78 NVL72s)
    spine_choices: tuple[int, ...]
    max_nodes_1tier: int  # single switch (or one switch per rail for rail-only)
    max_nodes_2tier: int
    max_nodes: int  # largest buildable (three tiers where the topology has them)
    ports_per_cage: int = 1  # logical ports per switch cage (twin-port OSFP: 2)
    trays: int = 1  # fabric nodes (compute trays) per node: 18 on an NVL72 rack, 1 on a server
    oversubscription: float = 1.0  # r of r:1 at the leaf (a partial SU's leaves take ceil(NICs / r) up)

    @property
    def node_ports(self) -> int:
        """Compute NIC ports per node (``rails`` per tray times its trays)."""
        return self.rails * self.trays


@dataclass(frozen=True, slots=True)
class UnitCosts:
    """Linear prices and powers of one on-prem candidate.

    A link's price includes its cable and the share of the transceivers at both ends (twin-port
    cages count half per port). Node prices include the server (GPUs and NICs) and its node-side
    optics.
    """

    node_usd: float
    node_w: float
    node_ru: int
    node_link_usd: float
    node_link_w: float
    leaf_spine_link_usd: float
    leaf_spine_link_w: float
    spine_core_link_usd: float
    spine_core_link_w: float
    switch_usd: float
    switch_w: float
    switch_ru: int
    servers_per_rack: int
    rack_units: int
    rack_usd: float
    # Ownership (designer.optimize.ownership): support shares per year (None: the economics' flat
    # share), spare fractions, the servers' draw while training and idle (None: fractions of
    # node_w), and the units the buyer already owns (sunk: no purchase, no residual value).
    node_support: float | None = None
    switch_support: float | None = None
    node_spares: float = 0.0
    link_spares: float = 0.0
    switch_spares: float = 0.0
    node_training_w: float | None = None
    node_idle_w: float | None = None
    owned_nodes: int = 0
    owned_switches: int = 0
    storage: "StorageUnit | None" = None
    # The storage, in-band and out-of-band networks (designer.optimize.networks.NetworkPlan); None: none.
    networks: Any = None
    # Parts a built system has once whatever its size: the fabric manager's appliances (price, W,
    # rack units in the network racks).
    fixed_usd: float = 0.0
    fixed_w: float = 0.0
    fixed_ru: int = 0


@dataclass(frozen=True, slots=True)
class StorageUnit:
    """The file-system building block of an on-prem system and what its workloads need of it.

    The program holds ``units`` (continuous) at or above every need: the baseline bandwidth of every
    node, each checkpointing workload's write bandwidth (its nodes at the rate the performance
    model assumes) and the capacity of the workloads' data sets and checkpoints.
    """

    name: str
    usd: float
    w: float
    ru: int
    read_Bps: float
    write_Bps: float
    capacity_bytes: float
    support: float | None
    spares: float
    read_Bps_per_node: float  # baseline
    write_Bps_per_node: float  # baseline
    checkpoint_Bps_per_node: Mapping[str, float]  # workload -> write rate per node of its checkpoints
    capacity_bytes_of: Mapping[str, float]  # workload -> data set + kept checkpoints
    owned: int = 0
    fixed_units: float | None = None  # the spec fixes the size (capacity or bandwidth given)


@dataclass(frozen=True, slots=True)
class StorageNeeds:
    """What the workloads ask of an on-prem file system, and what the spec fixes about it."""

    read_Bps_per_node: float  # baseline, every node
    write_Bps_per_node: float
    checkpoint_Bps_per_node: Mapping[str, float]  # workload -> checkpoint write rate per node
    capacity_bytes_of: Mapping[str, float]  # workload -> data set + kept checkpoints
    system: str | None = None  # a storage catalog entry (None: the cheapest for the need)
    capacity_bytes: float | None = None  # fixed by the spec
    write_Bps: float | None = None
    read_Bps: float | None = None


@dataclass(frozen=True, slots=True)
class OnPremSystem:
    candidate: Candidate
    shape: FabricShape
    costs: UnitCosts

    @property
    def key(self) -> str:
        return self.candidate.key


@dataclass(frozen=True, slots=True)
class CloudSystem:
    candidate: Candidate
    usd_per_node_s: float  # instance price per second under the candidate's pricing model
    offer: Offer | None = None  # how that model bills (None: per instance-second, on demand)

    @property
    def key(self) -> str:
        return self.candidate.key

    def cost_usd(self, instances: float, time_s: float) -> float:
        """What running ``instances`` for ``time_s`` costs (:meth:`designer.optimize.cloud.Offer.cost_usd`)."""
        if self.offer is None:
            return instances * time_s * self.usd_per_node_s
        return self.offer.cost_usd(instances, time_s)


@dataclass(frozen=True, slots=True)
class Option:
    """One way to run a workload on a system: a GPU count with its predicted time and utilization."""

    gpus: int
    time_s: float
    utilization: float
    index: int  # position in the evaluator's estimate list for (workload, system)
    held: int = 0  # GPUs of the whole nodes the job occupies (64 used of each 72-GPU rack: 72); 0: gpus

    @property
    def held_gpus(self) -> int:
        """GPUs the job keeps from other jobs: its own, or all of the scale-up domains it uses part of."""
        return self.held or self.gpus

    @property
    def gpu_seconds(self) -> float:
        return self.held_gpus * self.time_s


@dataclass(frozen=True, slots=True)
class Economics:
    """The horizon's economics (designer.optimize.ownership uses them). The defaults after the first
    five keep a bare model: power at nameplate, no space charge, no residual value, no licences."""

    horizon_s: float
    pue: float
    electricity_usd_per_j: float
    installation_fraction: float
    maintenance_fraction_per_year: float  # support share per year where a unit has no rate of its own
    facility_usd_per_w_s: float = 0.0  # data-centre space per watt of rated IT power per second
    facility_capex: bool = False  # owned space: its amortised build is a capital cost
    training_power_fraction: float = 1.0  # server draw training at full utilization / rated
    idle_power_fraction: float = 1.0  # server draw idle / rated
    residual_fraction: float = 0.0  # value recovered at the horizon per dollar of hardware bought
    licence_usd_per_gpu_s: float = 0.0  # software licences per GPU of the on-prem system


@dataclass(frozen=True, slots=True)
class Limits:
    capex_usd: float | None = None
    total_usd: float | None = None
    power_w: float | None = None
    racks: int | None = None
    nodes: int | None = None


@dataclass(frozen=True, slots=True)
class Problem:
    """Everything the integer program needs. ``options[(workload, system key)]`` lists the ways to run."""

    workloads: tuple[str, ...]
    deadlines_s: Mapping[str, float]  # workload -> deadline (horizon when none)
    tokens: Mapping[str, float]
    onprem: tuple[OnPremSystem, ...]
    cloud: tuple[CloudSystem, ...]
    options: Mapping[tuple[str, str], tuple[Option, ...]]
    economics: Economics
    limits: Limits = Limits()
    objective: str = "min_total_cost"
    fixed_nodes: int | None = None  # system.nodes pinned: a built system has exactly this many
    meta: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    # Tie-break rank of each on-prem system (its place in the sorted list of every candidate),
    # so that programs over different subsets of systems price ties alike; None: list order.
    ranks: Mapping[str, int] | None = None
    # Added while fitting a schedule of fixed sizes (designer.optimize.rigid): the least node count
    # a built system must have, and on-prem assignments ((workload, system key, option index), ...)
    # with the node count they need to pack (0: none allowed packs them, never all chosen together).
    min_nodes: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    exclude: tuple[tuple[tuple[tuple[str, str, int], ...], int], ...] = ()
    # Intervals (t1, t2) in seconds whose energetic constraint (16) the program holds: the GPU-time
    # every on-prem job must spend inside the interval fits in the cluster's over it.
    energy: tuple[tuple[float, float], ...] = ()
    # Soft preferences (designer.optimize.preferences): system key -> (dollars per design, shared
    # among the workloads run on it; share of its cost) credited in the objective. Absent: none.
    credits: Mapping[str, tuple[float, float]] = field(default_factory=lambda: MappingProxyType({}))
    # The design must build one of the on-prem systems (the best design other than the cloud alone).
    onprem_required: bool = False


def min_overlap_s(time_s: float, deadline_s: float, t1: float, t2: float) -> float:
    """The least time a job of ``time_s`` that starts at or after 0 and ends by ``deadline_s``
    must run inside [t1, t2]: the smaller of its overlaps when started first and when started
    last (energetic reasoning, Erschler & Lopez 1990; Baptiste, Le Pape & Nuijten 2001, ch. 3)."""
    first = min(t2, time_s) - max(t1, 0.0)
    last = min(t2, deadline_s) - max(t1, deadline_s - time_s)
    return max(0.0, min(first, last, t2 - t1))


def pareto(options: list[Option], keep_time: bool,
           bill: Callable[[Option], float] | None = None) -> tuple[Option, ...]:
    """Drop options no objective can prefer: another uses no more GPUs and costs no more (and,
    for ``min_time``, is no slower).

    What an option costs is what it is billed: its GPU-time on a system that is bought (the
    program prices owned GPU-seconds linearly), ``bill(option)`` on a cloud system
    (:meth:`CloudSystem.cost_usd`). A commitment or a capacity block is not linear in GPU-time:
    8 instances for 370 days pay two one-year terms, 12 for 296 days one, so the option with
    less GPU-time can be the dearer one.
    """
    cost = bill or (lambda o: o.gpu_seconds)
    costs = [cost(o) for o in options]
    kept = []
    for i, o in enumerate(options):
        dominated = False
        for j, q in enumerate(options):
            if q is o:
                continue
            no_worse = q.gpus <= o.gpus and costs[j] <= costs[i] and (not keep_time or q.time_s <= o.time_s)
            strictly = q.gpus < o.gpus or costs[j] < costs[i] or (keep_time and q.time_s < o.time_s)
            if no_worse and (strictly or q.index < o.index):
                dominated = True
                break
        if not dominated:
            kept.append(o)
    return tuple(kept)
