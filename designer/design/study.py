"""What-if results as data: the cost frontier and the price sweep, and the names they vary.

:mod:`designer.study` computes them by re-solving variants of a spec; :mod:`designer.report.study`
renders them as tables and JSON, :mod:`designer.pictures.plot` plots the frontier.
"""

from __future__ import annotations

__all__ = [
    "TARGETS", "VARIABLES", "TOLERANCE",
    "Outcome", "FrontierPoint", "Switchover", "Frontier", "Variation", "SweepPoint", "Crossover", "Sweep",
]

from dataclasses import dataclass

# What a frontier can vary: the utilization target (a fraction), every workload's deadline
# (multiplied by the value) or the total budget (US dollars).
TARGETS = ("utilization", "deadline_scale", "budget")
# What a sweep can vary, each by a relative change (-0.3 is 30% cheaper).
VARIABLES = {
    "gpu_price": "every GPU's price, and the GPU share of every server's price",
    "server_price": "every server's price without its GPUs (chassis, CPUs, memory, NICs)",
    "switch_price": "every switch's price",
    "optics_price": "every transceiver's and optical cable's (AOC, fiber) price; copper DAC unchanged",
    "cloud_price": "every cloud instance's hourly prices (on demand and reserved)",
    "electricity": "the electricity price (the spec's, else the catalog facility's)",
}
TOLERANCE = 0.01  # width of a located design change, in relative change (1 percentage point)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one solve gave.

    Attributes:
        status: ``ok``, ``infeasible``, ``timeout`` or ``error``.
        system: The chosen system (:func:`system_label`); empty without a design.
        technology: Deployment, server, fabric and topology of the chosen system; empty without one.
        total_usd: Total cost of the design over the horizon; ``None`` without one.
        reason: Why there is no design (first line of the error); empty when there is one.
        classes: (alternative label, best total in that class or ``None``), sorted by label.
    """

    status: str
    system: str = ""
    technology: str = ""
    total_usd: float | None = None
    reason: str = ""
    classes: tuple[tuple[str, float | None], ...] = ()

    @property
    def key(self) -> str:
        """What a decision change compares: the system, or the status when there is none."""
        return self.system or self.status


@dataclass(frozen=True, slots=True)
class FrontierPoint:
    """One target value and the solve's outcome."""

    value: float
    outcome: Outcome


@dataclass(frozen=True, slots=True)
class Switchover:
    """The optimum's technology changes between two neighbouring feasible values."""

    low: float
    high: float
    before: str
    after: str


@dataclass(frozen=True, slots=True)
class Frontier:
    """Total cost against one target, overall and per fabric and deployment class."""

    target: str
    points: tuple[FrontierPoint, ...]
    classes: tuple[str, ...]
    switchovers: tuple[Switchover, ...]


@dataclass(frozen=True, slots=True)
class Variation:
    """One price varied from ``low`` to ``high`` (relative changes: -0.3 is 30% lower)."""

    name: str
    low: float
    high: float


@dataclass(frozen=True, slots=True)
class SweepPoint:
    """One grid value of one variable and the solve's outcome."""

    variable: str
    change: float
    outcome: Outcome


@dataclass(frozen=True, slots=True)
class Crossover:
    """The chosen design changes between ``low`` and ``high`` (at most ``tolerance`` apart)."""

    variable: str
    low: float
    high: float
    before: Outcome
    after: Outcome

    @property
    def at(self) -> float:
        """Midpoint of the located interval."""
        return (self.low + self.high) / 2


@dataclass(frozen=True, slots=True)
class Sweep:
    """Sensitivity of the decision to each varied price."""

    base: Outcome
    variations: tuple[Variation, ...]
    points: tuple[SweepPoint, ...]
    crossovers: tuple[Crossover, ...]
    tolerance: float
