"""Cloud instances as they are bought: on demand, committed for one or three years, or in capacity blocks.

Each pricing model bills differently (:class:`Offer`):

* ``on_demand``: instance-seconds at the hourly rate (the bill rounds to whole instance-hours).
* ``reserved_1y`` / ``reserved_3y``: a commitment to a number of instances for a whole term, paid
  for the whole term whatever the job uses: ``ceil(instances) x ceil(time / term) x term x rate``.
  A job shorter than the term pays the term (64 p5 for 40 days on a one-year commitment pay the year).
* ``capacity_block``: instances reserved for fixed dates and paid up front, in durations of 1 to
  14 days or multiples of 7 days up to the longest block (AWS EC2 User Guide, "Capacity Blocks for
  ML": 1-14 days, or 7-day multiples up to 182 days; up to 64 instances per block and 256 across
  blocks). A job longer than the longest block cannot run in one.

Commitments are per workload: two workloads on the same instance type each commit their own
instances (sharing one commitment between workloads run one after the other is not modelled).
"""

from __future__ import annotations

__all__ = ["Offer", "offer_for", "instance_cap", "hourly", "CLOUD_DEFAULT_MAX_INSTANCES", "RESERVED_TERMS_S",
           "capacity_block_s"]

import math
from dataclasses import dataclass

from designer.catalog.types import CloudInstance
from designer.errors import CatalogError
from designer.spec.units import SECONDS_PER_DAY, SECONDS_PER_HOUR, SECONDS_PER_YEAR

# Instances assumed available where the catalog gives no cap (the optimizer's old default).
CLOUD_DEFAULT_MAX_INSTANCES = 2048
RESERVED_TERMS_S = {"reserved_1y": SECONDS_PER_YEAR, "reserved_3y": 3 * SECONDS_PER_YEAR}
_BLOCK_DAILY_UNTIL_DAYS = 14  # capacity blocks: any number of days up to 14, then whole weeks
_DEFAULT_BLOCK_MAX_S = 182 * SECONDS_PER_DAY


def capacity_block_s(time_s: float, max_s: float | None = None) -> float:
    """Duration of the capacity block a job of ``time_s`` books: whole days up to 14, then whole
    weeks (AWS EC2 User Guide, "How Capacity Blocks work"); ``inf`` beyond the longest block.

    Examples:
        >>> capacity_block_s(3.2 * 86400) / 86400, capacity_block_s(15 * 86400) / 86400
        (4.0, 21.0)
    """
    days = math.ceil(time_s / SECONDS_PER_DAY - 1e-9)
    days = max(days, 1)
    if days > _BLOCK_DAILY_UNTIL_DAYS:
        days = 7 * math.ceil(days / 7)
    block = days * SECONDS_PER_DAY
    return math.inf if block > (max_s or _DEFAULT_BLOCK_MAX_S) + 1e-6 else block


@dataclass(frozen=True, slots=True)
class Offer:
    """One instance type under one pricing model: its rate and how the bill is counted."""

    pricing: str  # on_demand | reserved_1y | reserved_3y | capacity_block
    usd_per_s: float  # per instance-second
    max_instances: int
    block_max_s: float | None = None  # capacity blocks: the longest

    def billed_s(self, instances: float, time_s: float) -> float:
        """Instance-seconds billed for ``instances`` running ``time_s`` (see the module docstring)."""
        if self.pricing == "on_demand":
            return instances * time_s
        count = math.ceil(instances - 1e-9)
        if self.pricing in RESERVED_TERMS_S:
            term = RESERVED_TERMS_S[self.pricing]
            return count * math.ceil(time_s / term - 1e-9) * term
        return count * capacity_block_s(time_s, self.block_max_s)

    def cost_usd(self, instances: float, time_s: float) -> float:
        """What the run costs under this offer; ``inf`` when the offer cannot hold it."""
        if instances > self.max_instances + 1e-9:
            return math.inf
        billed = self.billed_s(instances, time_s)
        return math.inf if math.isinf(billed) else billed * self.usd_per_s

    def describe(self, instances: float, time_s: float) -> str:
        """How the bill is counted, for the BOM line: ``64 instances x 1 year committed``."""
        if self.pricing == "on_demand":
            return "on-demand"
        count = math.ceil(instances - 1e-9)
        if self.pricing in RESERVED_TERMS_S:
            term = RESERVED_TERMS_S[self.pricing]
            terms = math.ceil(time_s / term - 1e-9)
            years = terms * term / SECONDS_PER_YEAR
            return (f"reserved: {count} instances committed for {years:g} year{'s' if years != 1 else ''}, "
                    f"paid whether used or not")
        days = capacity_block_s(time_s, self.block_max_s) / SECONDS_PER_DAY
        return f"capacity block: {count} instances for {days:g} days, paid up front"


def instance_cap(inst: CloudInstance, pricing: str) -> int:
    """Instances one buyer can get under a pricing model (catalog data; a default where none)."""
    if pricing == "capacity_block":
        return inst.capacity_block_max_instances or inst.max_instances or CLOUD_DEFAULT_MAX_INSTANCES
    return inst.max_instances or CLOUD_DEFAULT_MAX_INSTANCES


def offer_for(inst: CloudInstance, pricing: str) -> Offer:
    """The offer of ``inst`` under ``pricing``.

    Raises:
        CatalogError: the catalog has no price for the instance under that model (no fallback to
            another model's price).
    """
    rate = inst.price_usd_per_s(pricing)
    if rate is None:
        have = ", ".join(inst.pricing_models()) or "none"
        raise CatalogError(f"cloud instance {inst.name} has no {pricing} price (it has: {have})")
    return Offer(pricing, rate, instance_cap(inst, pricing), inst.capacity_block_max_s)


def hourly(offer: Offer) -> float:
    """The offer's price per instance-hour."""
    return offer.usd_per_s * SECONDS_PER_HOUR
