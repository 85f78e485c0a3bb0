"""What owning an on-prem system costs over the horizon: one set of formulas for the integer program,
its bounds and the design's cost lines.

Per dollar of a unit bought: capex ``1 + installation + spares`` once; opex ``support share x years``
(also for units already owned) less the residual value recovered at the horizon (bought hardware
only; owned hardware is a sunk cost either way). Per watt: the data-centre space on the rated
(nameplate) IT power, as colocation is billed per kW of capacity (CBRE asking rates), or an owned
build amortised over its life; and energy at the expected draw: a server draws
``idle + (training - idle) x utilization`` while it runs a job and ``idle`` otherwise (the linear
server power model of Fan, Weber and Barroso, ISCA 2007), network and storage at their rating
around the clock, all at PUE.

The functions take numbers or PuLP expressions alike (only ``+`` and scaling by numbers), so the
program's cost terms and the exact figures come from the same arithmetic; :func:`add_onprem_costs`
adds the program's variables for owned inventory and the file system through the model's own
``add_variable``.
"""

from __future__ import annotations

__all__ = ["Terms", "years", "capex_per_usd", "support_per_usd", "energy_usd", "space_usd", "node_draw_w",
           "busy_energy_j", "residual_fraction", "onprem_terms", "storage_units_needed", "onprem_cost_usd",
           "add_onprem_costs", "usage_rate_usd_per_gpu_s", "fixed_cost_usd"]

from dataclasses import dataclass, field
from typing import Any, Mapping

from designer.optimize.problem import Economics, OnPremSystem, Option, UnitCosts
from designer.spec.units import SECONDS_PER_YEAR


def years(e: Economics) -> float:
    """The horizon in years (365 days)."""
    return e.horizon_s / SECONDS_PER_YEAR


def capex_per_usd(e: Economics, spares: float) -> float:
    """Paid once per dollar of a unit bought: the unit, its installation and its spares."""
    return 1.0 + e.installation_fraction + spares


def support_per_usd(e: Economics, rate: float | None) -> float:
    """Support paid over the horizon per dollar of a unit's price (the unit's vendor rate, else the flat share)."""
    return (e.maintenance_fraction_per_year if rate is None else rate) * years(e)


def energy_usd(e: Economics, joules: Any) -> Any:
    """The electricity bill of ``joules`` of IT energy, at PUE."""
    return joules * (e.pue * e.electricity_usd_per_j)


def space_usd(e: Economics, rated_w: Any) -> Any:
    """Data-centre space for ``rated_w`` of IT capacity over the horizon (colocation or an owned build's share)."""
    return rated_w * (e.facility_usd_per_w_s * e.horizon_s)


def residual_fraction(useful_life_s: float, horizon_s: float) -> float:
    """Book value left at the horizon per dollar of hardware: straight-line depreciation to zero
    over the useful life (0 when no life is given)."""
    if useful_life_s <= 0:
        return 0.0
    return max(0.0, 1.0 - horizon_s / useful_life_s)


def node_draw_w(rated_w: float, training_w: float | None, idle_w: float | None, e: Economics) -> tuple[float, float]:
    """(training at full utilization, idle) draw of one server in watts: measured where the
    catalog has it, else the facility's fractions of the rating."""
    train = training_w if training_w is not None else rated_w * e.training_power_fraction
    idle = idle_w if idle_w is not None else rated_w * e.idle_power_fraction
    return train, min(idle, train)


def _draw(uc: UnitCosts, e: Economics) -> tuple[float, float]:
    return node_draw_w(uc.node_w, uc.node_training_w, uc.node_idle_w, e)


def busy_energy_j(draw: tuple[float, float], node_seconds: float, utilization: float) -> float:
    """Energy a job adds over idle: ``(training - idle) x utilization`` per node-second it runs,
    for a server drawing ``draw`` = (training, idle) watts."""
    train, idle = draw
    return (train - idle) * min(max(utilization, 0.0), 1.0) * node_seconds


@dataclass(frozen=True, slots=True)
class Terms:
    """An on-prem system's cost over the horizon by line, and its rated IT power."""

    capex: Mapping[str, Any] = field(default_factory=dict)
    opex: Mapping[str, Any] = field(default_factory=dict)
    rated_w: Any = 0.0

    @property
    def capex_total(self) -> Any:
        return sum(self.capex.values(), 0.0)

    @property
    def opex_total(self) -> Any:
        return sum(self.opex.values(), 0.0)


def onprem_terms(uc: UnitCosts, e: Economics, rails: int, gpus_per_node: int, *, nodes: Any, switches: Any,
                 ls_links: Any, sx_links: Any, racks: Any, bought_nodes: Any = None, bought_switches: Any = None,
                 storage_units: Any = 0.0, bought_storage: Any = None, networks: Any = None,
                 built: Any = 1.0) -> Terms:
    """The cost lines of ``nodes`` servers with their fabric, racks and file system (no busy energy:
    add :func:`busy_energy_j` per job).

    ``bought_*`` default to all units (nothing owned). Units owned are supported and powered but
    not bought, so they carry no capex and recover no residual value. ``networks`` is the storage
    and management networks' (capex, support, rated watts, hardware) from
    :func:`designer.optimize.networks.network_terms`: bought, powered at their rating around the
    clock, supported and resold like the fabric. ``built`` (1, or the program's build binary)
    carries the parts a system has once whatever its size (``uc.fixed_usd`` / ``fixed_w``: the
    fabric manager's appliances), bought, powered, supported and resold like the switches.
    """
    bought_nodes = nodes if bought_nodes is None else bought_nodes
    bought_switches = switches if bought_switches is None else bought_switches
    bought_storage = storage_units if bought_storage is None else bought_storage
    link_usd = uc.node_link_usd * rails * nodes + uc.leaf_spine_link_usd * ls_links + uc.spine_core_link_usd * sx_links
    link_w = uc.node_link_w * rails * nodes + uc.leaf_spine_link_w * ls_links + uc.spine_core_link_w * sx_links
    fixed_usd, fixed_w = uc.fixed_usd * built, uc.fixed_w * built
    st = uc.storage
    st_usd = st.usd if st is not None else 0.0
    st_w = st.w if st is not None else 0.0
    capex: dict[str, Any] = {
        "server": uc.node_usd * bought_nodes * capex_per_usd(e, uc.node_spares),
        "network": (link_usd * capex_per_usd(e, uc.link_spares)
                    + (uc.switch_usd * bought_switches + fixed_usd) * capex_per_usd(e, uc.switch_spares)),
        "rack": uc.rack_usd * racks * capex_per_usd(e, 0.0),
    }
    if st is not None:
        capex["storage"] = st_usd * bought_storage * capex_per_usd(e, st.spares)
    net_capex, net_support, net_w, net_hardware = networks if networks is not None else (0.0, 0.0, 0.0, 0.0)
    if networks is not None:
        capex["networks"] = net_capex
    rated_w = uc.node_w * nodes + link_w + uc.switch_w * switches + st_w * storage_units + net_w + fixed_w
    _, idle = _draw(uc, e)
    always_on_w = idle * nodes + link_w + uc.switch_w * switches + st_w * storage_units + net_w + fixed_w
    hardware = (uc.node_usd * bought_nodes + link_usd + uc.switch_usd * bought_switches + st_usd * bought_storage
                + net_hardware + fixed_usd)
    support = (uc.node_usd * nodes * support_per_usd(e, uc.node_support)
               + (uc.switch_usd * switches + fixed_usd) * support_per_usd(e, uc.switch_support) + net_support)
    if st is not None:
        support = support + st_usd * storage_units * support_per_usd(e, st.support)
    opex: dict[str, Any] = {
        "power": energy_usd(e, always_on_w * e.horizon_s),
        "support": support,
        "residual": hardware * (-e.residual_fraction),
    }
    space = space_usd(e, rated_w)
    (capex if e.facility_capex else opex)["facility"] = space
    if e.licence_usd_per_gpu_s:
        opex["licences"] = nodes * (gpus_per_node * e.licence_usd_per_gpu_s * e.horizon_s)
    return Terms(capex, opex, rated_w)


def storage_units_needed(uc: UnitCosts, nodes: float, workloads: Mapping[str, float]) -> float:
    """File-system units (fractional) for ``nodes`` servers running ``workloads`` (name -> nodes used):
    the largest of the baseline bandwidth need, each checkpoint's write need and the capacity."""
    st = uc.storage
    if st is None:
        return 0.0
    if st.fixed_units is not None:
        return st.fixed_units
    need = max(st.read_Bps_per_node * nodes / st.read_Bps, st.write_Bps_per_node * nodes / st.write_Bps)
    for w, used in workloads.items():
        need = max(need, st.checkpoint_Bps_per_node.get(w, 0.0) * used / st.write_Bps)
    need = max(need, sum(st.capacity_bytes_of.get(w, 0.0) for w in workloads) / st.capacity_bytes)
    return max(need, 1.0)


def onprem_cost_usd(system: OnPremSystem, e: Economics, *, nodes: int, switches: int, ls_links: int,
                    sx_links: int, racks: int, networks: Any = None) -> float:
    """Total cost over the horizon of ``nodes`` servers of ``system`` and the given fabric: a lower
    bound on the program's figure (no busy energy, the file system at its baseline need), and
    non-decreasing in every count. ``networks`` as for :func:`onprem_terms` (the caller's closed
    forms at these counts and the baseline file system)."""
    uc = system.costs
    units = storage_units_needed(uc, nodes, {}) if uc.storage is not None else 0.0
    terms = onprem_terms(
        uc, e, system.shape.node_ports, system.candidate.gpus_per_node, nodes=nodes, switches=switches,
        ls_links=ls_links, sx_links=sx_links, racks=racks, bought_nodes=max(0, nodes - uc.owned_nodes),
        bought_switches=max(0, switches - uc.owned_switches), storage_units=units,
        bought_storage=max(0.0, units - (uc.storage.owned if uc.storage else 0)), networks=networks)
    return float(terms.capex_total + terms.opex_total)


def add_onprem_costs(m: Any, tag: str, system: OnPremSystem, e: Economics, *, y: Any, nodes: Any, switches: Any,
                     ls_links: Any, sx_links: Any, racks: Any,
                     usage: Mapping[str, list[tuple[Option, Any]]], networks: Any = None) -> tuple[Terms, Any]:
    """The program's cost terms of on-prem ``system`` (a PuLP model ``m``, its build binary ``y``
    and count variables), with variables for owned inventory and the file system (whole units,
    as the design buys them). ``networks(units)`` adds the storage and management networks for
    the file-system units ``units`` and returns their terms (:func:`onprem_terms`).

    Returns:
        (cost terms, busy energy cost of the jobs as an expression over their option binaries).
    """
    uc, gpn = system.costs, system.candidate.gpus_per_node
    bought_nodes = bought_switches = None
    if uc.owned_nodes:
        bought_nodes = m.add_variable(f"bought_nodes__{tag}", lowBound=0)
        m += bought_nodes >= nodes - uc.owned_nodes * y, f"bought_nodes__{tag}"
    if uc.owned_switches:
        bought_switches = m.add_variable(f"bought_switches__{tag}", lowBound=0)
        m += bought_switches >= switches - uc.owned_switches * y, f"bought_switches__{tag}"
    units, bought_storage = 0.0, None
    st = uc.storage
    if st is not None:
        units = m.add_variable(f"storage_units__{tag}", lowBound=0, cat="Integer")
        if st.fixed_units is not None:
            m += units == st.fixed_units * y, f"storage_fixed__{tag}"
        else:
            m += units >= y, f"storage_one__{tag}"
            m += st.read_Bps * units >= st.read_Bps_per_node * nodes, f"storage_read__{tag}"
            m += st.write_Bps * units >= st.write_Bps_per_node * nodes, f"storage_write__{tag}"
            capacity = []
            for w, xs in usage.items():
                ckpt = st.checkpoint_Bps_per_node.get(w, 0.0)
                if ckpt:
                    m += (st.write_Bps * units >= sum((ckpt * o.gpus / gpn) * var for o, var in xs),
                          f"storage_ckpt__{tag}__{len(capacity)}")
                capacity.append(st.capacity_bytes_of.get(w, 0.0) * sum(var for _, var in xs))
            if capacity:
                m += st.capacity_bytes * units >= sum(capacity), f"storage_capacity__{tag}"
        if st.owned:
            bought_storage = m.add_variable(f"bought_storage__{tag}", lowBound=0)
            m += bought_storage >= units - st.owned * y, f"bought_storage__{tag}"
    net = networks(units) if networks is not None else None
    terms = onprem_terms(uc, e, system.shape.node_ports, gpn, nodes=nodes, switches=switches, ls_links=ls_links,
                         sx_links=sx_links, racks=racks, bought_nodes=bought_nodes, bought_switches=bought_switches,
                         storage_units=units, bought_storage=bought_storage, networks=net, built=y)
    draw = _draw(uc, e)
    busy = sum((energy_usd(e, busy_energy_j(draw, o.gpus / gpn * o.time_s, o.utilization)) * var
                for xs in usage.values() for o, var in xs), 0.0)
    return terms, busy



def fixed_cost_usd(system: OnPremSystem, e: Economics) -> float:
    """What the parts a built system has once whatever its size (``uc.fixed_usd`` / ``fixed_w``:
    the fabric manager's appliances) cost over the horizon, every line of :func:`onprem_terms`
    (bought, powered around the clock, its space, supported, resold) with no node or switch."""
    uc = system.costs
    if not (uc.fixed_usd or uc.fixed_w):
        return 0.0
    terms = onprem_terms(uc, e, system.shape.node_ports, system.candidate.gpus_per_node, nodes=0.0, switches=0.0,
                         ls_links=0.0, sx_links=0.0, racks=0.0, storage_units=0.0, built=1.0)
    return terms.capex_total + terms.opex_total


def usage_rate_usd_per_gpu_s(system: OnPremSystem, e: Economics) -> float:
    """What ``min_cost_per_token`` charges an on-prem system per GPU-second used: the full-horizon
    cost of one node kept busy (the server, its links, its share of a leaf and that leaf's uplinks,
    and every ownership line of :func:`onprem_terms`, owned units not credited) over the GPU-seconds
    a node offers in the horizon."""
    uc, sh = system.costs, system.shape
    share = sh.node_ports / max(sh.leaf_down, 1)
    gpn = system.candidate.gpus_per_node
    terms = onprem_terms(uc, e, sh.node_ports, gpn, nodes=1.0, switches=share, ls_links=share * sh.leaf_up,
                         sx_links=0.0, racks=0.0, storage_units=0.0, built=0.0)
    busy = energy_usd(e, busy_energy_j(_draw(uc, e), e.horizon_s, 1.0))
    return (terms.capex_total + terms.opex_total + busy) / (gpn * e.horizon_s)
