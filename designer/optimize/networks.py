"""The storage, in-band and out-of-band networks in the integer program: their closed forms
(:mod:`designer.topology.networks`) as exact integer constraints, and their cost terms.

Every count of those forms is a ceiling of a linear form in the nodes ``n``, the file-system units
``A``, the compute switches and the other networks' switches; the program holds an integer
variable at or above each form, with a binary for each choice between two regimes (one storage
switch or a leaf/spine fabric; one in-band leaf pair or pairs with spines). Every part has a
price, so at the optimum each variable sits at its ceiling and the program's networks are the
design's (tests/optimize/test_networks_program.py checks the cost of one against the other).

Numbering follows the formulation's (17) storage fabric, (18) in-band, (19) out-of-band, (20) whole parts:

(17) ``s1 + t = y``; ``Pn + Pa <= k + M t``; ``Ln >= Pn / floor(4k/7) - 2 (1 - t)``;
     ``Ls >= Pa / (k/2) - 2 (1 - t)``; ``U >= 3 Pn / 4 + Pa - 7k/4 (1 - t)``; ``S >= U / k``.
     ``Pn = ports x n``, ``Pa = block ports x A``.
(18) ``P = ports x n + 2 O``; ``P <= 2 (k - 2) + M b``; pairs ``>= y``, ``>= 2b``,
     ``>= P / (2 (k - 6)) - (k - 2) / (k - 6) (1 - b)``; spine pairs ``>= 4 pairs / k - 4/k (1 - b)``;
     uplinks ``>= 8 pairs - 8 (1 - b)``.
(19) ``O >= BMC n / 16``, ``O >= (BMC n + compute, storage and in-band switches) / k``.
(20) a part serving ``per`` links of a kind (a splitter cable, a twin-port optic): ``per v >= links``.
"""

from __future__ import annotations

__all__ = ["PricedItem", "NetworkPlan", "network_plan", "network_terms", "sized_counts", "add_network_counts",
           "closed_form_terms", "whole_units"]

import math
from dataclasses import dataclass
from typing import Any, Mapping

from designer.catalog.types import Catalog, Facility, Server, Storage
from designer.optimize import ownership
from designer.optimize.problem import Economics
from designer.topology import network_bom, networks as nw

Counts = Mapping[tuple[str, str], Any]  # (role, NetworkSize field) -> a number or a PuLP expression


@dataclass(frozen=True, slots=True)
class PricedItem:
    """One item of a network with what the design pays for it: the BOM category's spare share,
    and for switches the vendor's support rate (None: the economics' flat share)."""

    role: str
    category: str
    fields: tuple[str, ...]
    per: int  # links one part serves (its quantity is ceil(links / per))
    usd: float
    w: float
    spares: float
    support: float | None


@dataclass(frozen=True, slots=True)
class NetworkPlan:
    """The parts of an on-prem candidate's networks and their prices."""

    parts: nw.NetworkParts
    items: tuple[PricedItem, ...]


def network_plan(server: Server, catalog: Catalog, facility: Facility, storage: Storage | None,
                 networks: nw.Networks, support_of) -> NetworkPlan | None:
    """The networks ``networks`` switches on for ``server`` (None when all are off), priced.

    ``support_of(vendor)`` gives a vendor's support rate (:func:`designer.optimize.pricing.support_fraction`).

    Raises:
        CatalogError: no catalog part fits a network that is on.
    """
    if not networks.any:
        return None
    parts = nw.network_parts(server, catalog, storage, networks)
    items = tuple(
        PricedItem(i.role, i.category, i.fields, i.per, i.part.price_usd or 0.0, i.part.power_w,
                   facility.spares.get(i.category, 0.0),
                   support_of(getattr(i.part, "vendor", "")) if i.category == "switch" else None)
        for i in network_bom.network_items(parts))
    return NetworkPlan(parts, items)


def sized_counts(sizes: tuple[nw.NetworkSize, ...]) -> dict[tuple[str, str], int]:
    """The counts of sized networks, keyed as :func:`network_terms` reads them."""
    fields = ("leaves", "spines", "node_links", "device_links", "uplinks", "isl")
    return {(s.role, f): getattr(s, f) for s in sizes for f in fields}


def network_terms(plan: NetworkPlan, e: Economics, counts: Counts) -> tuple[Any, Any, Any, Any]:
    """(capex, support over the horizon, rated watts, hardware bought) of the networks at ``counts``,
    numbers or PuLP expressions alike: every item at its price x (1 + installation + its category's
    spares), switches supported at their vendor's rate (:mod:`designer.optimize.ownership`). An item
    serving ``per`` > 1 links takes ``ceil(links / per)`` parts: the count's ``("part", i)`` entry
    where the program holds one (:func:`add_network_counts`), else the ceiling of the numbers."""
    capex = support = rated = hardware = 0.0
    for i, item in enumerate(plan.items):
        qty = sum((counts.get((item.role, f), 0) for f in item.fields), 0)
        if ("part", i) in counts:
            qty = counts[("part", i)]
        elif item.per > 1 and isinstance(qty, (int, float)):
            qty = math.ceil(qty / item.per - 1e-9)
        if isinstance(qty, (int, float)) and qty == 0:
            continue
        capex = capex + qty * (item.usd * ownership.capex_per_usd(e, item.spares))
        hardware = hardware + qty * item.usd
        rated = rated + qty * item.w
        if item.category == "switch":
            support = support + qty * (item.usd * ownership.support_per_usd(e, item.support))
    return capex, support, rated, hardware


def add_network_counts(m: Any, tag: str, plan: NetworkPlan, *, y: Any, nodes: Any, storage_units: Any,
                       compute_switches: Any, max_nodes: int, max_units: int, max_compute_switches: int
                       ) -> dict[tuple[str, str], Any]:
    """Variables and constraints (17)-(20) of the module docstring for one system of a PuLP model
    ``m`` (``add_variable`` as the formulation's), returning its counts for :func:`network_terms`.

    The big-M terms are the ports at ``max_nodes``, ``max_units`` and ``max_compute_switches``
    (the closed forms are non-decreasing in each), so they stay as small as the size limits allow.
    """
    p = plan.parts
    counts: dict[tuple[str, str], Any] = {}
    top = {s.role: s for s in nw.size_networks(p, max_nodes, max_units, max_compute_switches)}

    def var(name: str, cat: str = "Integer") -> Any:
        return m.add_variable(f"{name}__{tag}", lowBound=0, cat=cat)

    storage_switches: Any = 0.0
    if p.storage_switch is not None:
        k = p.storage_k
        pn = p.storage_ports * nodes
        pa = p.appliance_ports * storage_units
        one, two = var("st_single", "Binary"), var("st_two_tier", "Binary")
        ln, ls, up, sp = var("st_server_leaves"), var("st_storage_leaves"), var("st_uplinks"), var("st_spines")
        big = max(top[nw.ROLE_STORAGE].node_links + top[nw.ROLE_STORAGE].device_links - k, 0)
        m += one + two == y, f"st_regime__{tag}"  # (17)
        m += pn + pa <= k + big * two, f"st_single_fits__{tag}"
        m += ln >= pn * (1.0 / nw.storage_leaf_down(k)) - (k / nw.storage_leaf_down(k)) * (1 - two), f"st_server_leaves__{tag}"
        m += ls >= pa * (1.0 / (k // 2)) - (k / (k // 2)) * (1 - two), f"st_storage_leaves__{tag}"
        m += up >= pn * 0.75 + pa - 1.75 * k * (1 - two), f"st_uplinks__{tag}"
        m += k * sp >= up, f"st_spines__{tag}"
        storage_switches = one + ln + ls + sp
        counts.update({("storage", "leaves"): one + ln + ls, ("storage", "spines"): sp,
                       ("storage", "node_links"): pn, ("storage", "device_links"): pa,
                       ("storage", "uplinks"): up})
    oob = var("oob_switches") if p.oob_switch is not None else None
    oob_up = nw.OOB_UPLINKS * oob if (oob is not None and p.oob_uplink is not None) else 0.0
    inband_switches: Any = 0.0
    if p.inband_switch is not None:
        k = p.inband_k
        ports = p.inband_ports * nodes + oob_up
        multi, pairs, spine_pairs, up = var("ib_multi", "Binary"), var("ib_pairs"), var("ib_spine_pairs"), \
            var("ib_uplinks")
        isl, upl = nw.INBAND_ISL_PER_PAIR, nw.INBAND_UPLINKS_PER_LEAF
        room = k - isl - upl
        big = max(top[nw.ROLE_INBAND].node_links + top[nw.ROLE_INBAND].device_links - 2 * (k - isl), 0)
        m += pairs >= y, f"ib_pairs_one__{tag}"  # (18)
        m += pairs >= 2 * multi, f"ib_pairs_two__{tag}"
        m += ports <= 2 * (k - isl) + big * multi, f"ib_one_pair_fits__{tag}"
        m += pairs >= ports * (1.0 / (2 * room)) - ((k - isl) / room) * (1 - multi), f"ib_pairs__{tag}"
        m += spine_pairs >= pairs * (upl / k) - (upl / k) * (1 - multi), f"ib_spines__{tag}"
        m += up >= 2 * upl * pairs - 2 * upl * (1 - multi), f"ib_uplinks__{tag}"
        inband_switches = 2 * pairs + 2 * spine_pairs
        counts.update({("inband", "leaves"): 2 * pairs, ("inband", "spines"): 2 * spine_pairs,
                       ("inband", "node_links"): p.inband_ports * nodes, ("inband", "device_links"): oob_up,
                       ("inband", "uplinks"): up, ("inband", "isl"): isl * pairs})
    if oob is not None:
        bmc = p.bmc_ports * nodes
        managed = compute_switches + storage_switches + inband_switches
        m += nw.BMC_PER_OOB_SWITCH * oob >= bmc, f"oob_density__{tag}"  # (19)
        m += p.oob_k * oob >= bmc + managed, f"oob_ports__{tag}"
        counts.update({("oob", "leaves"): oob, ("oob", "node_links"): bmc, ("oob", "device_links"): managed,
                       ("oob", "uplinks"): oob_up})
    # (20) parts serving several links (splitter cables, twin-port optics): whole parts
    for i, item in enumerate(plan.items):
        links = sum((counts.get((item.role, f), 0) for f in item.fields), 0)
        if item.per > 1 and not isinstance(links, (int, float)):
            whole = var(f"parts_{i}")
            m += item.per * whole >= links, f"whole_parts_{i}__{tag}"
            counts[("part", i)] = whole
    return counts


def closed_form_terms(plan: NetworkPlan, e: Economics, *, nodes: int, storage_units: int,
                      compute_switches: int) -> tuple[float, float, float, float]:
    """:func:`network_terms` of the closed forms at ``nodes`` (what the design builds; non-decreasing
    in every argument, so a lower bound where they are)."""
    sizes = nw.size_networks(plan.parts, nodes, storage_units, compute_switches)
    return network_terms(plan, e, sized_counts(sizes))


def whole_units(needed: float) -> int:
    """Whole file-system units for a fractional need, as the design buys them."""
    return max(0, math.ceil(needed - 1e-9))
