"""The design's cost of ownership, line by line: the exact bill of materials completed (owned
inventory, the file system, spares, installation; every line's price basis, date and estimate
flag) and the capex, opex and cloud lines of its cost breakdown.

The formulas are :mod:`designer.optimize.ownership`'s, applied to the exact BOM rather than the
program's linear unit costs, so the design's figures and the program's agree up to the program's
approximations (links priced at a reference size, racks pooled, file-system units fractional).
"""

from __future__ import annotations

__all__ = ["annotate", "split_owned", "storage_lines", "service_lines", "design_bom", "Usage", "cost_breakdown",
           "capex_category", "CAPEX_NAMES", "OPEX_NAMES"]

import math
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Iterable, Mapping

from designer.catalog.types import Catalog, Facility
from designer.design import bom, sections
from designer.design.bom import BomLine, sort_lines
from designer.design.model import CostBreakdown, CostLine
from designer import topology
from designer.topology import network_bom, networks as topo_networks
from designer.optimize import ownership, pricing
from designer.optimize.candidates import Candidate
from designer.optimize.pricing import support_fraction
from designer.optimize.problem import Economics, OnPremSystem, StorageUnit
from designer.spec import rates, units

# Names of the cost lines, in the order reports list them.
CAPEX_NAMES = ("server", "gpu", "nic", "switch", "appliance", "transceiver", "cable", "rack", "storage", "management",
               "installation", "spares", "facility")
OPEX_NAMES = ("power", "facility", "support", "licences")
# BOM category -> catalog kind its SKUs name.
_KIND_OF = {"server": "server", "gpu": "gpu", "nic": "nic", "switch": "switch", "transceiver": "transceiver",
            "cable": "cable", "storage": "storage", "appliance": "appliance"}
_NODE_PARTS = ("server", "gpu", "nic")  # a server's lines (the catalog quotes it complete)
_HARDWARE = ("server", "gpu", "nic", "switch", "appliance", "transceiver", "cable", "storage")  # resold at the horizon
_SUPPORTED = ("server", "gpu", "nic", "switch", "appliance", "storage")  # under a vendor contract
_PLURAL = {"switch": "switches", "storage": "storage"}


def _entry(catalog: Catalog, line: BomLine):
    kind = _KIND_OF.get(line.category)
    return None if kind is None else catalog.by_kind(kind).get(line.sku)


def annotate(lines: Iterable[BomLine], catalog: Catalog, facility: Facility) -> tuple[BomLine, ...]:
    """Every line with the price basis, date and estimate flag of the catalog entry it prices
    (racks and services: the facility's). Owned lines keep their ``owned`` basis; a line without a unit
    price reads ``unpriced``."""
    out = []
    for line in lines:
        if line.category == "cloud" or line.price_basis == "owned":
            out.append(line)
            continue
        if line.category == "service":  # a share of the equipment: the estimate is the facility's
            out.append(replace(line, as_of=facility.provenance.as_of, estimate=True))
            continue
        entry = _entry(catalog, line)
        prov = entry.provenance if entry is not None else facility.provenance
        # A line with no unit price has no price basis to inherit: it says it is unpriced.
        basis = "unpriced" if line.unit_price_usd is None else line.price_basis or prov.price_basis
        out.append(replace(line, price_basis=basis, as_of=line.as_of or prov.as_of,
                           estimate=line.estimate or prov.estimate))
    return tuple(out)


def _split(line: BomLine, owned: int) -> list[BomLine]:
    used = min(int(round(line.quantity)), owned)
    if used <= 0:
        return [line]
    bought = replace(line, quantity=line.quantity - used)
    mine = replace(line, quantity=float(used), unit_price_usd=0.0, price_basis="owned", estimate=False,
                   description=line.description + " (owned: sunk cost)")
    return ([bought] if bought.quantity > 0 else []) + [mine]


def split_owned(lines: Iterable[BomLine], owned: Mapping[str, int], server: str | None,
                gpus_per_node: int = 1, nics_per_node: int = 1) -> tuple[BomLine, ...]:
    """Lines with the units the buyer owns moved onto lines of their own at no cost (basis ``owned``).

    Owned servers take their GPUs and compute NICs along (the catalog quotes a server complete);
    owned switches fill the compute fabric's leaves first, then spines and cores (as the program
    counts them; the storage and management networks' switches are bought); owned storage its units.
    """
    lines = list(lines)
    nodes_owned = owned.get(server, 0) if server else 0
    left = {name: count for name, count in owned.items()}
    out: list[BomLine] = []
    tier = {"leaf": 0, "spine": 1, "core": 2}
    for line in sorted(lines, key=lambda l: tier.get(l.role, 3)):
        if line.category in _NODE_PARTS and line.role == "compute" and nodes_owned:
            per = {"server": 1, "gpu": gpus_per_node, "nic": nics_per_node}[line.category]
            out.extend(_split(line, nodes_owned * per))
        elif ((line.category == "switch" and line.role in tier) or line.category == "storage") and left.get(line.sku):
            parts = _split(line, left[line.sku])
            left[line.sku] -= int(sum(p.quantity for p in parts if p.price_basis == "owned"))
            out.extend(parts)
        else:
            out.append(line)
    return sort_lines(out)


def storage_lines(unit: StorageUnit, count: int, catalog: Catalog) -> tuple[BomLine, ...]:
    """The file system: ``count`` building blocks of ``unit``."""
    entry = catalog.storage[unit.name]
    price = entry.price_usd
    return (BomLine("storage", entry.name, entry.description, "storage", float(count), price, entry.power_w,
                    entry.provenance.source),)


def design_bom(system: OnPremSystem, catalog: Catalog, facility: Facility, nodes: int,
               jobs: Mapping[str, float], owned: Mapping[str, int]) -> tuple[tuple[BomLine, ...], topology.FabricSummary]:
    """The complete bill of materials of an on-prem design of ``nodes`` servers whose workloads use
    ``jobs`` (name -> nodes): servers, fabric and racks, the file system in whole units, the
    storage, in-band and out-of-band networks (roles ``storage``, ``inband``, ``oob``;
    :mod:`designer.topology.networks`), owned inventory at no cost, installation and spares,
    every line annotated with its price basis."""
    cand: Candidate = system.candidate
    lines, summary = pricing.onprem_bom(cand, catalog, facility, nodes, 0.0)
    lines = list(lines)
    unit = system.costs.storage
    count = 0
    if unit is not None:
        count = math.ceil(ownership.storage_units_needed(system.costs, nodes, jobs) - 1e-9)
        lines.extend(storage_lines(unit, count, catalog))
    plan = system.costs.networks
    if plan is not None:
        sizes = topo_networks.size_networks(plan.parts, nodes, count,
                                                summary.leaves + summary.spines + summary.cores)
        lines.extend(network_bom.network_bom(plan.parts, sizes, cand.switch or ""))
    server = catalog.servers[cand.server]
    lines = list(split_owned(lines, owned, cand.server, server.gpus, server.nics))
    lines.extend(service_lines(lines, facility))
    return annotate(sort_lines(lines), catalog, facility), summary


def service_lines(lines: Iterable[BomLine], facility: Facility) -> tuple[BomLine, ...]:
    """Installation (a share of the bought equipment) and the spare parts pool (a share per
    category), as one-time service lines."""
    lines = list(lines)
    bought = [l for l in lines if l.category not in ("cloud", "service") and l.price_basis != "owned"]
    equipment = sum(l.total_usd for l in bought)
    out = []
    src = facility.provenance.source
    if facility.installation_fraction > 0 and equipment > 0:
        out.append(BomLine("service", "installation",
                           f"installation and cabling ({facility.installation_fraction:.0%} of equipment, assumed)",
                           "one-time", 1.0, equipment * facility.installation_fraction, 0.0, src))
    spares = 0.0
    kinds = []
    for category, fraction in facility.spares.items():
        part = sum(l.total_usd for l in bought if _spare_category(l) == category)
        if fraction > 0 and part > 0:
            spares += fraction * part
            kinds.append(f"{fraction:.0%} of {_PLURAL.get(category, category + 's')}")
    if spares > 0:
        out.append(BomLine("service", "spares", f"spare parts pool ({', '.join(kinds)})", "one-time", 1.0, spares,
                           0.0, src))
    return tuple(out)


def _spare_category(line: BomLine) -> str:
    # A server's GPUs and NICs are spared as part of the server (it is bought and replaced whole).
    return "server" if line.category in _NODE_PARTS and line.role == "compute" else line.category


def capex_category(line: BomLine) -> str:
    """The capex line a BOM line counts under (:func:`designer.design.sections.capex_category`)."""
    return sections.capex_category(line)


@dataclass(frozen=True, slots=True)
class Usage:
    """What the on-prem system runs: per workload, the node-seconds and utilization of its job."""

    node_seconds: Mapping[str, float]
    utilization: Mapping[str, float]


def _money(x: float) -> str:
    return units.format_money_short(x)


def cost_breakdown(lines: Iterable[BomLine], catalog: Catalog, facility: Facility, e: Economics,
                   usage: Usage, *, server: str | None, licences: Iterable[str] = ()) -> CostBreakdown:
    """The capex, opex and cloud lines of a design from its bill of materials.

    Capex: every bought BOM line by :func:`capex_category` (owned lines cost nothing), and an owned
    build's share of the space. Opex over the horizon: energy at the expected draw and PUE, the
    space (colocation), support by vendor (owned hardware included) and licences. The value of the
    bought hardware recovered at the horizon is a credit of its own (``residual_usd``). Cloud: the
    rented lines.
    """
    lines = sort_lines(lines)
    capex: dict[str, float] = {}
    for l in lines:
        if l.category != "cloud" and l.price_basis != "owned":
            key = capex_category(l)
            capex[key] = capex.get(key, 0.0) + l.total_usd
    out: list[CostLine] = []
    fac = facility.provenance
    for name in sorted(capex, key=lambda k: (CAPEX_NAMES.index(k) if k in CAPEX_NAMES else len(CAPEX_NAMES), k)):
        # A line without a price adds nothing to its category: the category's line says so.
        unpriced = sum(1 for l in lines if l.category != "cloud" and l.price_basis != "owned"
                       and l.unit_price_usd is None and capex_category(l) == name)
        basis = "from the bill of materials" + (f"; {unpriced} unpriced line{'s' if unpriced > 1 else ''} not counted"
                                                if unpriced else "")
        if name in ("installation", "spares"):
            basis = next(l.description for l in lines if l.category == "service" and l.sku == name)
        est = any(l.estimate for l in lines if l.category != "cloud" and capex_category(l) == name)
        out.append(CostLine(name, "capex", capex[name], basis, fac.source if name in ("installation", "spares") else "",
                            fac.as_of if name in ("installation", "spares") else "", est))
    opex: dict[str, float] = {}
    purchased = [l for l in lines if l.category not in ("cloud", "service")]
    if purchased:
        _opex_lines(purchased, catalog, facility, e, usage, server, licences, opex, out, capex)
    cloud = sum(l.total_usd for l in lines if l.category == "cloud")
    for l in lines:
        if l.category == "cloud":
            out.append(CostLine("cloud", "cloud", l.total_usd, f"{l.sku} for {l.role}: {l.description}",
                                l.source, l.as_of, l.estimate))
    residual = -opex.pop("residual", 0.0)
    capex_usd = sum(capex.values())
    opex_usd = sum(opex.values())
    return CostBreakdown(
        capex_usd=capex_usd, opex_usd=opex_usd, cloud_usd=cloud, total_usd=capex_usd + opex_usd + cloud - residual,
        residual_usd=residual,
        capex_by_category=MappingProxyType(capex), installation_usd=capex.get("installation", 0.0),
        power_usd=opex.get("power", 0.0), maintenance_usd=opex.get("support", 0.0),
        opex_by_category=MappingProxyType(opex), lines=tuple(out))


def _opex_lines(purchased: list[BomLine], catalog: Catalog, facility: Facility, e: Economics, usage: Usage,
                server: str | None, licences: Iterable[str], opex: dict[str, float], out: list[CostLine],
                capex: dict[str, float]) -> None:
    fac = facility.provenance
    yrs = ownership.years(e)
    srv = catalog.servers.get(server) if server else None
    nodes = sum(l.quantity for l in purchased if l.category == "server" and l.role == "compute")
    rated_w = sum(l.power_w for l in purchased)
    # Energy: servers idle all the horizon plus what each job adds; everything else at its rating.
    node_w = node_parts_w = 0.0
    joules = 0.0
    detail = []
    if srv is not None and nodes:
        node_parts_w = sum(l.power_w for l in purchased if l.category in _NODE_PARTS and l.role == "compute")
        node_w = node_parts_w / nodes
        draw = ownership.node_draw_w(node_w, srv.training_power_w, srv.idle_power_w, e)
        joules += draw[1] * nodes * e.horizon_s
        busy = sum(ownership.busy_energy_j(draw, s, usage.utilization.get(w, 1.0))
                   for w, s in usage.node_seconds.items())
        joules += busy
        detail.append(f"{nodes:g} servers idle at {units.format_power(draw[1])} over the horizon, "
                      f"jobs adding {busy / 3.6e12:.3g} GWh (up to {units.format_power(draw[0])} each while training)")
    other_w = rated_w - node_parts_w
    joules += other_w * e.horizon_s
    if other_w:
        detail.append(f"network and storage at their {units.format_power(other_w)} rating")
    power = ownership.energy_usd(e, joules)
    opex["power"] = power
    out.append(CostLine("power", "opex", power,
                        f"{joules / 3.6e12:.4g} GWh at {e.electricity_usd_per_j * 3.6e6:.4g} USD/kWh x PUE "
                        f"{e.pue:g}: " + "; ".join(detail), fac.source, fac.as_of, fac.estimate))
    # Space: colocation per rated kW-month, or an owned build's share over its life.
    space = ownership.space_usd(e, rated_w)
    if space:
        if facility.space == "owned":
            basis = (f"{units.format_power(rated_w)} rated x {rates.format_build_price(facility.build_usd_per_w)} "
                     f"x {e.horizon_s / facility.build_life_s:.3g} of a {facility.build_life_s / units.SECONDS_PER_YEAR:g}"
                     f"-year life (owned build)")
        else:
            basis = (f"{units.format_power(rated_w)} rated x "
                     f"{rates.format_capacity_price(facility.colocation_usd_per_w_s)} x "
                     f"{e.horizon_s / rates.SECONDS_PER_MONTH:.4g} months (colocation)")
        if e.facility_capex:
            capex["facility"] = capex.get("facility", 0.0) + space
            # The build cost is a published average; its life is assumed.
            out.append(CostLine("facility", "capex", space, basis, fac.source, fac.as_of, True))
        else:
            opex["facility"] = space
            # A published asking rate (CBRE) or the spec's own figure.
            out.append(CostLine("facility", "opex", space, basis, fac.source, fac.as_of, False))
    # Support: each vendor's share of its parts' price (owned parts at their catalog price).
    by_vendor: dict[str, list[float]] = {}
    # An owned unit is supported at the price it would have on the BOM (a server's parts split as bought).
    split = ({l.category: l.unit_price_usd or 0.0 for l in pricing.server_lines(catalog, server, 1)}
             if srv is not None else {})
    for l in purchased:
        if l.category not in _SUPPORTED:
            continue
        entry = _entry(catalog, l)
        price = l.unit_price_usd
        if l.price_basis == "owned":
            price = (split.get(l.category, 0.0) if l.category in _NODE_PARTS and l.role == "compute"
                     else (getattr(entry, "price_usd", None) or 0.0))
        vendor = (srv.vendor if (l.category in ("gpu", "nic") and l.role == "compute" and srv is not None)
                  else getattr(entry, "vendor", ""))
        rate = support_fraction(catalog, facility, vendor)
        rate = e.maintenance_fraction_per_year if rate is None else rate
        name = vendor if vendor in catalog.supports else "other-vendors"
        if facility.maintenance_fraction_per_year is not None:
            name = "flat"
        acc = by_vendor.setdefault(name, [rate, 0.0])
        acc[1] += (price or 0.0) * l.quantity
    support = sum(rate * base * yrs for rate, base in by_vendor.values())
    if support:
        opex["support"] = support
        basis = ", ".join(f"{v} {r:.0%}/yr of {_money(b)}" for v, (r, b) in sorted(by_vendor.items()) if b)
        srcs = [catalog.supports[v].provenance for v in sorted(by_vendor) if v in catalog.supports]
        out.append(CostLine("support", "opex", support, f"{basis}, over {yrs:g} years",
                            "; ".join(p.source for p in srcs) or fac.source,
                            max((p.as_of for p in srcs), default=fac.as_of), any(p.estimate for p in srcs) or not srcs))
    # Licences per GPU of the on-prem system.
    gpus = sum(l.quantity for l in purchased if l.category == "gpu" and l.role == "compute")
    for name in licences:
        lic = catalog.licences[name]
        amount = lic.usd_per_gpu_s * gpus * e.horizon_s
        opex["licences"] = opex.get("licences", 0.0) + amount
        out.append(CostLine("licences", "opex", amount,
                            f"{name} {units.format_money(lic.usd_per_gpu_s * units.SECONDS_PER_YEAR)}/GPU-year x "
                            f"{gpus:g} GPUs x {yrs:g} years", lic.provenance.source, lic.provenance.as_of,
                            lic.provenance.estimate))
    # Residual value of the bought hardware at the horizon (book value).
    hardware = sum(l.total_usd for l in purchased if l.category in _HARDWARE and l.price_basis != "owned")
    residual = -e.residual_fraction * hardware
    if residual:
        opex["residual"] = residual
        life = facility.useful_life_s / units.SECONDS_PER_YEAR
        out.append(CostLine("residual", "residual", -residual,
                            f"{e.residual_fraction:.0%} of {_money(hardware)} of bought hardware recovered at the "
                            f"horizon (book value after {yrs:g} of {life:g} years)", fac.source, fac.as_of, True))
