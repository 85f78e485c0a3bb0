"""Soft preferences: a credit in the objective for systems with a property the buyer values.

A preference names one property of a candidate system (its fabric, topology, deployment, server or
instance, switch, GPU, or vendor: the GPU's maker, or the cloud provider) and a weight:

* in dollars ``D``: a design is credited ``D / |W|`` for each of its ``|W|`` workloads that runs on
  a matching system, so ``D`` when all do;
* as a share ``f`` of cost: a matching system's cost (its capex and opex on-prem, a workload's bill
  in the cloud) is credited ``f`` of itself, so the objective counts it at ``(1 - f)``.

The program minimises ``cost - credit``; the credit is reported apart and never enters a design's
cost, budget or any other limit. A preference changes the choice only when it is worth more than
the cost difference between the preferred design and the cheapest one: with a ``$D`` weight the
optimizer pays up to ``D`` more for the preferred property, with ``f`` up to ``f`` of the preferred
design's cost.
"""

from __future__ import annotations

__all__ = ["Preference", "KEYS", "credits_of", "known_values", "matches", "max_credit", "objective_bound"]

from dataclasses import dataclass
from typing import Mapping

from designer.catalog.types import Catalog
from designer.optimize.candidates import Candidate

KEYS = ("fabric", "topology", "deployment", "server", "switch", "gpu", "vendor")


@dataclass(frozen=True, slots=True)
class Preference:
    """One soft preference: candidates whose ``key`` is ``value`` earn ``usd`` (per design, shared
    among its workloads) or ``share`` of their cost as a credit in the objective."""

    key: str  # one of KEYS
    value: str
    usd: float = 0.0
    share: float = 0.0


def _vendor(cand: Candidate, catalog: Catalog) -> set[str]:
    gpu = catalog.gpus.get(cand.gpu)
    out = {gpu.vendor.lower()} if gpu is not None else set()
    cloud = catalog.clouds.get(cand.server)
    if cloud is not None:
        out.add(cloud.provider.lower())
    return out


def matches(pref: Preference, cand: Candidate, catalog: Catalog) -> bool:
    """Whether ``cand`` has the preferred property (names compared as written; vendors without case)."""
    if pref.key == "deployment":
        return cand.deployment.value == pref.value
    if pref.key == "vendor":
        return pref.value.lower() in _vendor(cand, catalog)
    return getattr(cand, pref.key) == pref.value


def credits_of(prefs: tuple[Preference, ...], cand: Candidate, catalog: Catalog) -> tuple[float, float]:
    """``(usd, share)``: the dollar weights and the cost shares of every preference ``cand`` matches."""
    usd = share = 0.0
    for pref in prefs:
        if matches(pref, cand, catalog):
            usd += pref.usd
            share += pref.share
    return usd, share


def max_credit(credits: Mapping[str, tuple[float, float]]) -> tuple[float, float]:
    """The largest dollar credit and cost share any system earns: a design's objective is at least
    ``(1 - share) x cost - usd``, which turns a cost lower bound into an objective lower bound."""
    usd = max((u for u, _ in credits.values()), default=0.0)
    share = max((s for _, s in credits.values()), default=0.0)
    return usd, share


def objective_bound(cost_bound: float, credits: Mapping[str, tuple[float, float]]) -> float:
    """A lower bound on ``cost - credit`` of any design whose cost is at least ``cost_bound``:
    ``(1 - share) x cost_bound - usd`` with the largest credit of :func:`max_credit`."""
    if not credits or cost_bound == float("inf"):
        return cost_bound
    usd, share = max_credit(credits)
    return cost_bound * (1 - share) - usd


def known_values(key: str, catalog: Catalog) -> set[str]:
    """The names a preference on ``key`` may give for the catalog (server, switch, gpu, vendor)."""
    if key == "server":
        return {*catalog.servers, *catalog.clouds}
    if key == "switch":
        return set(catalog.switches)
    if key == "gpu":
        return set(catalog.gpus)
    if key == "vendor":
        return {g.vendor.lower() for g in catalog.gpus.values()} | {c.provider.lower() for c in catalog.clouds.values()}
    return set()
