"""Candidate systems: one (deployment, server or instance, fabric, topology, switch, ratio) the optimizer may choose.

The planner enumerates them from the spec and catalog (:mod:`designer.planner.candidates`): a
finite, deterministic list sorted by key. The integer program chooses among these and sizes the
chosen one.
"""

from __future__ import annotations

__all__ = ["Candidate", "Rejection", "ETHERNET_FABRICS", "ON_PREM_FABRICS", "fabric_protocol"]

from dataclasses import dataclass, field

from designer.catalog.types import Protocol
from designer.spec.choices import Deployment

ETHERNET_FABRICS = ("ethernet", "roce")
ON_PREM_FABRICS = ("ethernet", "roce", "infiniband")


def fabric_protocol(fabric: str) -> Protocol:
    """The wire protocol a fabric technology runs on (RoCE and TCP both run on Ethernet)."""
    return Protocol.INFINIBAND if fabric == "infiniband" else Protocol.ETHERNET


@dataclass(frozen=True, slots=True)
class Candidate:
    """One system the optimizer may choose. Cloud candidates have no switch and topology ``cloud``."""

    deployment: Deployment
    server: str  # server or cloud-instance catalog name
    gpu: str
    gpus_per_node: int
    fabric: str
    topology: str
    switch: str | None
    oversubscription: float
    link_rate_Bps: float = 0.0  # rate the NICs run at when below their native rate (0: native)
    pricing: str = ""  # cloud: how the hours are bought (on_demand, reserved_1y, ...); "" on-prem
    # Stable, readable identifier (also used in MILP variable names); derived, set once.
    key: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        parts = [self.deployment.value, self.server, self.fabric, self.topology]
        if self.switch:
            parts.append(self.switch)
        parts.append(f"os{self.oversubscription:g}")
        if self.link_rate_Bps:
            parts.append(f"{self.link_rate_Bps * 8 / 1e9:g}g")
        if self.pricing and self.pricing != "on_demand":
            parts.append(self.pricing)
        # The key is read in every inner loop of the optimizer: computed once, not per access.
        object.__setattr__(self, "key", "__".join(parts))


@dataclass(frozen=True, slots=True)
class Rejection:
    """A combination that was not considered, and why."""

    what: str
    reason: str
