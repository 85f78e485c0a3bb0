"""Variants of a spec and catalog for what-if studies: a target set, one price changed, or a scenario's factors.

Pure: each function returns a new spec (or catalog) and leaves its inputs as they were.
"""

from __future__ import annotations

__all__ = ["Factors", "grid", "with_target", "with_change", "apply_factors", "unused_variation"]

import math
from dataclasses import replace
from types import MappingProxyType
from typing import Any, Callable

from designer.catalog.types import Catalog, MediaKind
from designer.design.montecarlo import EFFICIENCY_VARIABLES, PRICE_VARIABLES
from designer.design.study import TARGETS, VARIABLES, Variation
from designer.errors import InputError
from designer.perf import ModelEfficiency
from designer.planner.compile import facility_for
from designer.spec import bounds
from designer.spec.models import Spec
from designer.study.distributions import MAX_CHANGE


def grid(variation: Variation, steps: int) -> tuple[float, ...]:
    """``steps`` evenly spaced changes from low to high, both included (one when low == high).

    Examples:
        >>> grid(Variation("gpu_price", -0.3, 0.3), 5)
        (-0.3, -0.15, 0.0, 0.15, 0.3)
    """
    if steps < 2 or variation.low == variation.high:
        return (variation.low,)
    span = variation.high - variation.low
    return tuple(round(variation.low + span * i / (steps - 1), 12) for i in range(steps))


def with_target(spec: Spec, target: str, value: float) -> Spec:
    """The spec with one target set: ``utilization`` (min_utilization), ``deadline_scale`` (every
    deadline times ``value``; workloads without one keep none) or ``budget`` (budget.total, USD).

    Raises:
        InputError: Unknown target or a value outside its domain.
    """
    if target == "utilization":
        if not 0.0 < value <= 1.0:
            raise InputError(f"--utilization: a target must lie in (0, 1], got {value:g}")
        return replace(spec, constraints=replace(spec.constraints, min_utilization=value))
    if target == "deadline_scale":
        if value <= 0:
            raise InputError(f"--deadline-scale: a scale must be positive, got {value:g}")
        workloads = tuple(w if w.deadline_s is None else replace(w, deadline_s=w.deadline_s * value)
                          for w in spec.workloads)
        for w in workloads:  # a scaled deadline keeps the range a spec's deadline has
            if w.deadline_s is not None:
                _in_range(f"--deadline-scale {value:g}", f"{w.name}'s deadline", "deadline", w.deadline_s)
        return replace(spec, workloads=workloads)
    if target == "budget":
        if value <= 0:
            raise InputError(f"--budget: a budget must be positive, got {value:g}")
        _in_range("--budget", "a budget", "budget", value)
        return replace(spec, budget=replace(spec.budget, total_usd=value))
    raise InputError(f"unknown target {target!r}; expected one of {', '.join(TARGETS)}")


def _in_range(option: str, what: str, key: str, value: float) -> None:
    try:
        bounds.SPEC[key].check(value)
    except ValueError as exc:
        raise InputError(f"{option}: {what} {exc}") from None


def _scaled(mapping, change: Callable[[Any], Any]) -> MappingProxyType:
    return MappingProxyType({name: change(entry) for name, entry in mapping.items()})


def with_change(spec: Spec, catalog: Catalog, variable: str, change: float) -> tuple[Spec, Catalog]:
    """The spec and catalog with one price changed by the relative amount ``change``.

    ``gpu_price`` scales every GPU's price and moves each server's price by its GPUs' share (a
    server is quoted complete, GPUs included); a GPU without a price leaves its servers alone.
    ``server_price`` scales a server's price without its GPUs (the whole price when the GPUs'
    catalog prices reach it, as the bill of materials then does). See :data:`VARIABLES`.

    Raises:
        InputError: Unknown variable, or a change of -100% or less.
    """
    if change <= -1.0:
        raise InputError(f"{variable}: a price cannot fall by 100% or more")
    if change > MAX_CHANGE:
        raise InputError(f"{variable}: a price can rise by at most {MAX_CHANGE:.0%} here (x{1 + MAX_CHANGE:g}), "
                         f"got {change:+.0%}")
    f = 1.0 + change
    gpu_usd = {name: g.price_usd or 0.0 for name, g in catalog.gpus.items()}
    if variable == "gpu_price":
        catalog = replace(
            catalog,
            gpus=_scaled(catalog.gpus, lambda g: g if g.price_usd is None else replace(g, price_usd=g.price_usd * f)),
            servers=_scaled(catalog.servers, lambda s: s if s.price_usd is None else replace(
                s, price_usd=s.price_usd + s.gpus * gpu_usd.get(s.gpu, 0.0) * change)))
    elif variable == "server_price":
        def rest(s):
            if s.price_usd is None:  # unpriced stays unpriced
                return s
            base = s.price_usd - s.gpus * gpu_usd.get(s.gpu, 0.0)
            return replace(s, price_usd=s.price_usd + (base if base > 0 else s.price_usd) * change)
        catalog = replace(catalog, servers=_scaled(catalog.servers, rest))
    elif variable == "switch_price":
        catalog = replace(catalog, switches=_scaled(catalog.switches, lambda s: s if s.price_usd is None
                                                    else replace(s, price_usd=s.price_usd * f)))
    elif variable == "optics_price":
        catalog = replace(
            catalog,
            transceivers=_scaled(catalog.transceivers, lambda t: replace(t, price_usd=t.price_usd * f)),
            cables=_scaled(catalog.cables, lambda c: c if c.media is MediaKind.DAC
                           else replace(c, price_usd=c.price_usd * f)))
    elif variable == "cloud_price":
        def rent(i):
            prices = ("price_on_demand_usd_per_s", "price_reserved_1y_usd_per_s", "price_reserved_3y_usd_per_s",
                      "price_capacity_block_usd_per_s")
            return replace(i, **{p: None if getattr(i, p) is None else getattr(i, p) * f for p in prices})
        catalog = replace(catalog, clouds=_scaled(catalog.clouds, rent))
    elif variable == "electricity":
        price = facility_for(spec, catalog).electricity_usd_per_j * f
        spec = replace(spec, facility=replace(spec.facility, electricity_usd_per_j=price))
    else:
        raise InputError(f"unknown variable {variable!r}; expected one of {', '.join(VARIABLES)}")
    return spec, catalog


Factors = tuple[tuple[str, float], ...]  # (input name, factor) pairs: each input times its factor


def apply_factors(spec: Spec, catalog: Catalog, factors: Factors) -> tuple[Spec, Catalog, ModelEfficiency]:
    """The spec, catalog and model efficiency of a scenario: each input times its factor.

    Raises:
        InputError: an unknown input or a factor of zero or less.
    """
    efficiency = {"compute_efficiency": 1.0, "network_efficiency": 1.0}
    for name, factor in factors:
        if not factor > 0 or not math.isfinite(factor):
            raise InputError(f"{name}: the factor must be positive, got {factor!r}")
        if name in PRICE_VARIABLES:
            spec, catalog = with_change(spec, catalog, name, factor - 1.0)
        elif name in EFFICIENCY_VARIABLES:
            efficiency[name] = factor
        elif name == "tokens":
            spec = replace(spec, workloads=tuple(replace(w, tokens=w.tokens * factor) for w in spec.workloads))
        elif name == "deadline":
            spec = replace(spec, workloads=tuple(w if w.deadline_s is None else replace(w, deadline_s=w.deadline_s * factor)
                                                 for w in spec.workloads))
        else:
            raise InputError(f"unknown study input {name!r}")
    return spec, catalog, ModelEfficiency(efficiency["compute_efficiency"], efficiency["network_efficiency"])


def unused_variation(spec: Spec, variable: str) -> str:
    """Why varying ``variable`` cannot change this spec's decision, or ``""`` when it can.

    Cloud prices matter only when the spec allows cloud; every other price only when it allows
    on-prem (electricity, GPUs, servers, switches and optics are bought).
    """
    if variable not in PRICE_VARIABLES:
        return ""
    allowed = {d.value for d in spec.constraints.deployments}
    if spec.system.deployment is not None:
        allowed &= {spec.system.deployment.value}
    if variable == "cloud_price" and "cloud" not in allowed:
        return "the spec allows no cloud deployment"
    if variable != "cloud_price" and "on_prem" not in allowed:
        return "the spec allows no on-prem deployment"
    return ""
