"""Monte Carlo study results as data: the uncertain inputs, every scenario, and each design's statistics.

:mod:`designer.study.montecarlo` computes a :class:`MonteCarlo` by drawing scenarios and solving
each; :mod:`designer.report.montecarlo` renders it as a table and JSON and
:mod:`designer.pictures.montecarlo` plots the cost distribution of every design.
"""

from __future__ import annotations

__all__ = [
    "UNCERTAIN", "PRICE_VARIABLES", "EFFICIENCY_VARIABLES", "WORKLOAD_VARIABLES",
    "Distribution", "Uncertainty", "StudyDesign", "Cell", "Scenario", "DesignStats", "MonteCarlo",
]

from dataclasses import dataclass

from designer.design.study import VARIABLES

PRICE_VARIABLES = tuple(VARIABLES)  # the sweep's prices, each scaled by (1 + change)
EFFICIENCY_VARIABLES = ("compute_efficiency", "network_efficiency")
WORKLOAD_VARIABLES = ("tokens", "deadline")
# What a study can vary: each scenario multiplies the input by a drawn factor (1 + change).
UNCERTAIN = {
    **VARIABLES,
    "compute_efficiency": "the performance model's compute rates (every compute time divided by the factor)",
    "network_efficiency": "the performance model's achieved bandwidths (every transfer's bandwidth term divided by the factor)",
    "tokens": "every workload's tokens to train",
    "deadline": "every workload's deadline (a workload without one keeps none)",
}


@dataclass(frozen=True, slots=True)
class Distribution:
    """How a relative change is drawn (-0.1 is 10% lower; the factor applied is 1 + change).

    ``kind`` is ``normal`` (``sigma``, truncated at 3 standard deviations), ``lognormal`` (the
    factor is exp(sigma z), z standard normal truncated at 3), ``uniform`` (``low``..``high``),
    ``triangular`` (``low``..``mode``..``high``) or ``fixed`` (always ``mode``). ``text`` is its
    canonical spelling on the command line (``normal:15%``).
    """

    kind: str
    text: str
    low: float = 0.0
    mode: float = 0.0
    high: float = 0.0
    sigma: float = 0.0


@dataclass(frozen=True, slots=True)
class Uncertainty:
    """One input of :data:`UNCERTAIN` and the distribution of its change; ``default`` when the
    distribution is the built-in one (model efficiencies: the validation's error spread)."""

    name: str
    distribution: Distribution
    default: bool = False


@dataclass(frozen=True, slots=True)
class StudyDesign:
    """A design as a buyer commits to it.

    On-prem (and the on-prem part of hybrid) it is the hardware: server, fabric, topology, switch,
    leaf ratio and node count, all fixed in every scenario. In the cloud it is the instance type:
    how many instances are rented follows each scenario's work. ``rented`` lists the cloud
    instance types a hybrid design rents too.
    """

    label: str
    deployment: str  # on_prem | cloud | hybrid
    server: str
    gpu: str
    nodes: int | None  # None for cloud: the count follows each scenario
    fabric: str
    topology: str
    switch: str | None
    oversubscription: float
    rented: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Cell:
    """One design in one scenario: its total cost over the horizon, or why it does not qualify.

    ``status``: ``ok`` (meets every constraint), ``infeasible`` (misses one; ``reason`` says
    which), ``timeout`` or ``error`` (not known; ``reason`` says why).
    """

    status: str
    total_usd: float | None = None
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Scenario:
    """One draw: the factor of every uncertain input, what the full solve chose, and every design's cell.

    ``status`` is the full solve's: ``ok``, ``infeasible`` (no design meets the constraints),
    ``timeout`` or ``error``. ``cheapest`` is the index in :attr:`MonteCarlo.designs` of the design
    of lowest total among the feasible cells, ``None`` when no cell is feasible.
    """

    index: int
    factors: tuple[tuple[str, float], ...]
    status: str
    chosen: int | None
    cheapest: int | None
    cells: tuple[Cell, ...]
    reason: str = ""


@dataclass(frozen=True, slots=True)
class DesignStats:
    """One distinct design over every scenario.

    ``share``: fraction of all scenarios where it is the cheapest feasible design. ``feasible``
    and ``infeasible`` count the scenarios where it meets (or misses) the constraints,
    ``unknown`` those where its evaluation timed out or failed; ``infeasible_share`` is
    infeasible / (feasible + infeasible). Costs are percentiles (linear interpolation between
    order statistics) of its totals over the scenarios where it is feasible; ``None`` when it
    never is.
    """

    design: StudyDesign
    cheapest: int
    share: float
    feasible: int
    infeasible: int
    unknown: int
    infeasible_share: float
    cost_p10_usd: float | None
    cost_p50_usd: float | None
    cost_p90_usd: float | None
    cost_mean_usd: float | None
    regret_mean_usd: float | None  # mean of its total minus the scenario's cheapest, where it is feasible
    base: bool  # the design chosen on the point estimates
    robust: bool


@dataclass(frozen=True, slots=True)
class MonteCarlo:
    """A Monte Carlo study of one spec.

    ``designs`` are sorted by share (highest first), then by median cost and label; scenario
    cells follow that order. ``robust`` is the index of the robust choice: the lowest
    ``cost_p90_usd`` among designs feasible in at least ``min_feasible_share`` of the scenarios
    they were evaluated in (``None`` when no design is). ``base`` is the index of the design
    chosen on the point estimates (``None`` when the spec is infeasible as given).
    ``no_design_share`` is the share of scenarios where no design qualifies and ``failed_share``
    that of scenarios whose solve failed or timed out, so shares, those two included, add up to 1.
    """

    spec_name: str
    seed: int
    samples: int
    uncertainties: tuple[Uncertainty, ...]
    min_feasible_share: float
    designs: tuple[DesignStats, ...]
    scenarios: tuple[Scenario, ...]
    base: int | None
    base_status: str
    base_reason: str
    base_total_usd: float | None
    robust: int | None
    no_design_share: float
    failed_share: float
