"""The data of the integer program: systems, their linear cost and sizing rules, and workload options.

Everything non-linear (the performance model, the topology's closed forms) is evaluated before the
program is built; what reaches the program is linear coefficients (STYLE.md 7.3).
"""

from __future__ import annotations

__all__ = ["FabricShape", "UnitCosts", "OnPremSystem", "CloudSystem", "Option", "Economics", "Limits", "Problem",
           "usage_rate_usd_per_gpu_s", "pareto"]

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from designer.optimize.candidates import Candidate
from designer.spec.units import SECONDS_PER_YEAR


@dataclass(frozen=True, slots=True)
class FabricShape:
    """How switch and link counts follow from the node count, for one on-prem candidate.

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
    su_nodes: int
    spine_choices: tuple[int, ...]
    max_nodes_1tier: int  # single switch (or one switch per rail for rail-only)
    max_nodes_2tier: int
    max_nodes: int  # largest buildable (three tiers where the topology has them)
    ports_per_cage: int = 1  # logical ports per switch cage (twin-port OSFP: 2)


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
    usd_per_node_s: float  # instance price per second under the spec's pricing model

    @property
    def key(self) -> str:
        return self.candidate.key


@dataclass(frozen=True, slots=True)
class Option:
    """One way to run a workload on a system: a GPU count with its predicted time and utilization."""

    gpus: int
    time_s: float
    utilization: float
    index: int  # position in the evaluator's estimate list for (workload, system)

    @property
    def gpu_seconds(self) -> float:
        return self.gpus * self.time_s


@dataclass(frozen=True, slots=True)
class Economics:
    horizon_s: float
    pue: float
    electricity_usd_per_j: float
    installation_fraction: float
    maintenance_fraction_per_year: float


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


def usage_rate_usd_per_gpu_s(system: OnPremSystem, e: Economics) -> float:
    """What ``min_cost_per_token`` charges an on-prem system per GPU-second used: its full-horizon
    cost per node (server, its links, its share of a leaf and that leaf's uplinks, installation,
    maintenance and power at PUE) over the GPU-seconds a node offers in the horizon."""
    uc, sh = system.costs, system.shape
    years = e.horizon_s / SECONDS_PER_YEAR
    per_node_equipment = (uc.node_usd + uc.node_link_usd * sh.rails
                          + (uc.switch_usd + uc.leaf_spine_link_usd * sh.leaf_up) * sh.rails / max(sh.leaf_down, 1))
    per_node_power = uc.node_w + uc.node_link_w * sh.rails
    per_node_total = (per_node_equipment * (1 + e.installation_fraction + e.maintenance_fraction_per_year * years)
                      + per_node_power * e.pue * e.electricity_usd_per_j * e.horizon_s)
    return per_node_total / (system.candidate.gpus_per_node * e.horizon_s)


def pareto(options: list[Option], keep_time: bool) -> tuple[Option, ...]:
    """Drop options no objective can prefer: another uses no more GPUs and no more GPU-time
    (and, for ``min_time``, is no slower)."""
    kept = []
    for o in options:
        dominated = False
        for q in options:
            if q is o:
                continue
            no_worse = q.gpus <= o.gpus and q.gpu_seconds <= o.gpu_seconds and (not keep_time or q.time_s <= o.time_s)
            strictly = q.gpus < o.gpus or q.gpu_seconds < o.gpu_seconds or (keep_time and q.time_s < o.time_s)
            if no_worse and (strictly or q.index < o.index):
                dominated = True
                break
        if not dominated:
            kept.append(o)
    return tuple(kept)
