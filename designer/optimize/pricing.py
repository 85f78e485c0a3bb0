"""Prices and bills of materials: linear unit costs for the program, exact BOMs for the answer.

The integer program needs linear coefficients: a price per node, per switch and per link of each
tier. They are read off the topology's own bill of materials at a reference size, so the program
and the final BOM price the same parts. The BOM of the chosen design is then built exactly from
the topology's closed form (:func:`designer.topology.summarize`) at the chosen node count.
"""

from __future__ import annotations

__all__ = [
    "fabric_manager",
    "manager_ports",
    "manager_note",
    "fabric_request",
    "fabric_shape",
    "node_port",
    "unit_costs",
    "support_fraction",
    "storage_unit",
    "server_lines",
    "onprem_bom",
    "cloud_line",
    "instance_usd_per_s",
]

import math
from dataclasses import replace

from typing import Mapping

from designer import topology
from designer.catalog.types import Appliance, Catalog, CloudInstance, Facility, Server
from designer.design.bom import BomLine, sort_lines
from designer.errors import CatalogError, TopologyError
from designer.topology import networks as topo_networks
from designer.optimize import cloud
from designer.optimize import networks as network_costs
from designer.optimize.candidates import Candidate, fabric_protocol
from designer.optimize.problem import FabricShape, StorageNeeds, StorageUnit, UnitCosts
from designer.spec.choices import Pricing
from designer.spec.units import SECONDS_PER_HOUR

# The support entry for parts whose vendor has none of its own (catalogs/support.yaml).
OTHER_VENDORS = "other-vendors"

def fabric_manager(candidate: Candidate, catalog: Catalog) -> Appliance | None:
    """The appliance that manages the candidate's compute fabric: on InfiniBand the catalog's
    fabric manager (the SuperPOD's UFM appliances, RA-11333 Table 7), first by name; None on
    Ethernet fabrics, which run no subnet manager (the Spectrum-X fabrics are managed over the
    out-of-band network and reserve no compute leaf port), and where the catalog has none."""
    protocol = fabric_protocol(candidate.fabric)
    found = [a for name, a in sorted(catalog.appliances.items()) if a.manages is protocol]
    return found[0] if found else None


def manager_ports(candidate: Candidate, catalog: Catalog) -> int:
    """Compute leaf ports the fabric manager takes, at the fabric's rate: its appliances' fabric
    ports (UFM: 4, RA-11333 Table 4's compute + UFM cables = 8 x nodes + 4), those below the
    fabric's rate sharing a split leaf port (UFM at NDR200 on an NDR fabric: two per port over a
    1:2 splitter, Table 8's 2 NDR200 cables: 2 leaf ports); 0 without one."""
    manager = fabric_manager(candidate, catalog)
    if manager is None:
        return 0
    server = catalog.servers[candidate.server]
    return topology.manager_leaf_ports(manager, candidate.link_rate_Bps or catalog.nics[server.nic].rate_Bps)


def fabric_request(candidate: Candidate, catalog: Catalog, nodes: int, facility: Facility,
                   *, reserved_leaf_ports: int | None = None) -> topology.FabricRequest:
    """The topology request for an on-prem candidate at ``nodes`` servers.

    Servers per rack follow from the facility's rack power and rack units; the fabric manager's
    appliances take network rack units (:func:`fabric_manager`). ``reserved_leaf_ports``
    None reserves the fabric manager's ports (:func:`manager_ports`) where the leaves have them
    free, as the SuperPOD removes a DGX per SU for its UFM (RA-11333 Table 4: 127 nodes); a fabric
    whose leaves are full (Table 3's 32 x SU nodes) reserves none (:func:`manager_note` says so).
    """
    server = catalog.servers[candidate.server]
    nic = catalog.nics[server.nic]
    if candidate.link_rate_Bps:
        nic = replace(nic, rate_Bps=candidate.link_rate_Bps)
    switch = catalog.switches[candidate.switch]

    manager = fabric_manager(candidate, catalog)
    units = manager.per_fabric * manager.rack_units if manager is not None else 0

    def request(reserved: int) -> topology.FabricRequest:
        return topology.request_for(server, nic, switch, candidate.topology, nodes, candidate.oversubscription,
                                    rack_power_w=facility.rack_power_w, rack_units=facility.rack_units,
                                    reserved_leaf_ports=reserved, appliance_units=units)

    if reserved_leaf_ports is not None:
        return request(reserved_leaf_ports)
    wanted = manager_ports(candidate, catalog)
    if wanted:
        try:
            return request(wanted)
        except TopologyError:
            pass  # no free leaf port: the fabric is built without them (manager_note)
    return request(0)


def manager_note(candidate: Candidate, catalog: Catalog, summary: topology.FabricSummary) -> str | None:
    """Why a fabric that has a fabric manager has no leaf ports for it (its leaves are full), or None."""
    manager = fabric_manager(candidate, catalog)
    wanted = manager_ports(candidate, catalog)
    if manager is None or summary.reserved_links >= wanted:
        return None
    return (f"no free compute leaf port for the {manager.per_fabric} {manager.name} (needs {wanted}): their "
            f"fabric links are not built; one server less per scalable unit frees them (RA-11333 Table 4)")


def node_port(candidate: Candidate, catalog: Catalog) -> topology.Port:
    """A server's compute cage on the candidate's fabric, at the rate its NICs run
    (:func:`designer.topology.ports.server_port`)."""
    server = catalog.servers[candidate.server]
    nic = catalog.nics[server.nic]
    return topology.server_port(server, nic, fabric_protocol(candidate.fabric), candidate.link_rate_Bps or None)


def fabric_shape(candidate: Candidate, catalog: Catalog, facility: Facility) -> FabricShape:
    """Sizing parameters of a candidate's fabric (see :class:`~designer.optimize.problem.FabricShape`)."""
    # The fabric manager's ports are reserved only where leaf ports are free: no limit moves.
    req = fabric_request(candidate, catalog, 1, facility, reserved_leaf_ports=0)
    cap = topology.capacity(req)
    # A rack-scale system is sized by its trays (req.nodes of them); limits are in whole systems.
    t = req.nodes
    su = cap.su_nodes if t == 1 else cap.su_nodes / t
    return FabricShape(
        topology=candidate.topology, rails=req.nics_per_node, radix=req.switch_ports,
        leaf_down=cap.leaf_downlinks, leaf_up=cap.leaf_uplinks, su_nodes=su,
        spine_choices=cap.spine_choices, max_nodes_1tier=cap.max_nodes_1tier // t,
        max_nodes_2tier=cap.max_nodes_2tier // t, max_nodes=cap.max_nodes // t, ports_per_cage=req.ports_per_cage,
        trays=t, oversubscription=req.oversubscription,
    )


def _per_link(summary: topology.FabricSummary, lines: tuple[BomLine, ...]) -> dict[str, tuple[float, float]]:
    """Price and power per logical link of each tier: its cable plus its share of transceivers.

    A transceiver serves ``ports_per_cage`` switch ports (or ``node_ports_per_cage`` NIC ports),
    so each optical link end costs a transceiver's price over that many ports.
    """
    optical = {t.tier: t.media in (topology.MediaClass.MULTIMODE, topology.MediaClass.SINGLE_MODE)
               for t in summary.tier_links}
    links = {t.tier: t.links for t in summary.tier_links}
    cable = {}
    for line in lines:
        if line.category == "cable":
            usd, w = cable.get(line.role, (0.0, 0.0))
            cable[line.role] = (usd + line.total_usd, w + line.power_w)
    switch_xcvr = [l for l in lines if l.category == "transceiver" and l.role == "switch-side"]
    node_xcvr = [l for l in lines if l.category == "transceiver" and l.role == "node-side"]
    # Price per optical switch port: the switch-side transceivers over the optical ports they serve.
    optical_ports = sum(links[t] * (1 if t == topology.NODE_LEAF else 2) for t in links if optical.get(t))
    sw_usd = sum(l.total_usd for l in switch_xcvr) / optical_ports if optical_ports else 0.0
    sw_w = sum(l.power_w for l in switch_xcvr) / optical_ports if optical_ports else 0.0
    out: dict[str, tuple[float, float]] = {}
    for tier, count in links.items():
        if count == 0:
            out[tier] = (0.0, 0.0)
            continue
        c_usd, c_w = cable.get(tier, (0.0, 0.0))
        usd, w = c_usd / count, c_w / count
        if optical.get(tier):
            ends = 1 if tier == topology.NODE_LEAF else 2
            usd += ends * sw_usd
            w += ends * sw_w
        if tier == topology.NODE_LEAF and node_xcvr:
            usd += sum(l.total_usd for l in node_xcvr) / count
            w += sum(l.power_w for l in node_xcvr) / count
        out[tier] = (usd, w)
    return out


def support_fraction(catalog: Catalog, facility: Facility, vendor: str) -> float | None:
    """The yearly support share of a vendor's parts: ``None`` when the facility sets one flat share
    for everything (``maintenance_fraction_per_year``), else the vendor's contract, else
    ``other-vendors``, else 0 (a catalog without support entries)."""
    if facility.maintenance_fraction_per_year is not None:
        return None
    entry = catalog.supports.get(vendor) or catalog.supports.get(OTHER_VENDORS)
    return entry.fraction_per_year if entry is not None else 0.0


def storage_unit(catalog: Catalog, facility: Facility, needs: StorageNeeds, reference_nodes: int,
                 owned: Mapping[str, int]) -> StorageUnit | None:
    """The file-system building block for ``needs``: the one the spec names, else the cheapest to
    meet the baseline need of ``reference_nodes`` nodes and the workloads' capacity (priced
    entries only). ``None`` when the catalog has none.

    Raises:
        CatalogError: the named entry does not exist.
    """
    if needs.system is not None:
        if needs.system not in catalog.storage:
            raise CatalogError(f"unknown storage system '{needs.system}'")
        entries = [catalog.storage[needs.system]]
    else:
        entries = [s for s in catalog.storage.values() if s.price_usd is not None]
    if not entries:
        return None
    capacity = sum(needs.capacity_bytes_of.values())

    def units_for(s) -> float:
        fixed = [need / rate for need, rate in ((needs.capacity_bytes, s.capacity_bytes),
                                                (needs.write_Bps, s.write_Bps), (needs.read_Bps, s.read_Bps))
                 if need is not None]
        if fixed:
            return max(1.0, float(math.ceil(max(fixed) - 1e-9)))
        return max(1.0, needs.read_Bps_per_node * reference_nodes / s.read_Bps,
                   needs.write_Bps_per_node * reference_nodes / s.write_Bps, capacity / s.capacity_bytes)

    best = min(entries, key=lambda s: ((s.price_usd or 0.0) * units_for(s), s.name))
    fixed_units = (units_for(best) if any(x is not None for x in (needs.capacity_bytes, needs.write_Bps,
                                                                    needs.read_Bps)) else None)
    return StorageUnit(
        name=best.name, usd=best.price_usd or 0.0, w=best.power_w, ru=best.rack_units, read_Bps=best.read_Bps,
        write_Bps=best.write_Bps, capacity_bytes=best.capacity_bytes,
        support=support_fraction(catalog, facility, best.vendor), spares=facility.spares.get("storage", 0.0),
        read_Bps_per_node=needs.read_Bps_per_node, write_Bps_per_node=needs.write_Bps_per_node,
        checkpoint_Bps_per_node=needs.checkpoint_Bps_per_node, capacity_bytes_of=needs.capacity_bytes_of,
        owned=owned.get(best.name, 0), fixed_units=fixed_units)


def unit_costs(candidate: Candidate, catalog: Catalog, facility: Facility, reference_nodes: int, *,
               owned: Mapping[str, int] | None = None, storage: StorageNeeds | None = None,
               networks: topo_networks.Networks | None = None) -> UnitCosts:
    """Linear prices and powers of an on-prem candidate, read off its BOM at ``reference_nodes``,
    with what owning them costs: support by vendor, spares, draw under load, owned inventory,
    the file system sized for ``storage`` and the ``networks`` switched on
    (:func:`designer.optimize.networks.network_plan`).

    Per-link prices depend on the media, which depends on cable runs, which grow with the floor
    area; so they are taken at the size the workloads suggest. The final BOM is exact regardless.
    An unpriced server or switch costs 0 here (the design counts it as unpriced).
    """
    owned = owned or {}
    server = catalog.servers[candidate.server]
    switch = catalog.switches[candidate.switch]
    shape = fabric_shape(candidate, catalog, facility)
    ref = max(1, min(reference_nodes, shape.max_nodes))
    tiers_seen: dict[str, tuple[float, float]] = {}
    # Sample a two- and a three-tier size as well, so tiers absent at the reference size get prices.
    for n in (ref, min(shape.max_nodes, max(ref, shape.max_nodes_2tier + 1)), shape.max_nodes_2tier):
        if n < 1:
            continue
        summary = topology.summarize(fabric_request(candidate, catalog, n, facility))
        lines = topology.fabric_bom(summary, switch, catalog, node_port(candidate, catalog))
        for tier, value in _per_link(summary, lines).items():
            if tier not in tiers_seen or (value[0] > 0 and tiers_seen[tier][0] == 0):
                tiers_seen[tier] = value
    req = fabric_request(candidate, catalog, ref, facility)
    nl = tiers_seen.get(topology.NODE_LEAF, (0.0, 0.0))
    ls = tiers_seen.get(topology.LEAF_SPINE, (0.0, 0.0))
    sx = tiers_seen.get(topology.SPINE_CORE, ls)
    spares = facility.spares
    link_spares = max(spares.get("transceiver", 0.0), spares.get("cable", 0.0))
    # A rack-scale system fills its own rack (its trays are the request's servers per rack).
    per_rack = max(1, req.servers_per_rack // server.compute_trays)
    unit = None if storage is None else storage_unit(catalog, facility, storage, ref, owned)
    plan = None
    if networks is not None:
        plan = network_costs.network_plan(
            server, catalog, facility, catalog.storage[unit.name] if unit is not None else None, networks,
            lambda vendor: support_fraction(catalog, facility, vendor))
    # The fabric manager's appliances: once per system (an unpriced one costs 0 here, as a switch).
    manager = fabric_manager(candidate, catalog)
    manager_usd = manager.per_fabric * (manager.price_usd or 0.0) if manager is not None else 0.0
    manager_w = manager.per_fabric * manager.power_w if manager is not None else 0.0
    manager_ru = manager.per_fabric * manager.rack_units if manager is not None else 0
    return UnitCosts(
        node_usd=(server.price_usd or 0.0) + cooling_usd(server, facility), node_w=server.power_w,
        node_ru=server.rack_units,
        node_link_usd=nl[0], node_link_w=nl[1], leaf_spine_link_usd=ls[0], leaf_spine_link_w=ls[1],
        spine_core_link_usd=sx[0], spine_core_link_w=sx[1],
        switch_usd=switch.price_usd or 0.0, switch_w=switch.power_w, switch_ru=switch.rack_units,
        servers_per_rack=per_rack, rack_units=facility.rack_units, rack_usd=facility.rack_price_usd,
        node_support=support_fraction(catalog, facility, server.vendor),
        switch_support=support_fraction(catalog, facility, switch.vendor),
        node_spares=spares.get("server", 0.0), link_spares=link_spares, switch_spares=spares.get("switch", 0.0),
        node_training_w=server.training_power_w, node_idle_w=server.idle_power_w,
        owned_nodes=owned.get(server.name, 0), owned_switches=owned.get(switch.name, 0),
        storage=unit, networks=plan, fixed_usd=manager_usd, fixed_w=manager_w, fixed_ru=manager_ru,
    )


def server_lines(catalog: Catalog, server_name: str, nodes: int) -> tuple[BomLine, ...]:
    """Server, GPU and NIC lines for ``nodes`` servers.

    The catalog quotes a server complete; the BOM lists its GPUs and compute NICs on lines of their
    own at their catalog prices and the server line carries the rest (chassis, CPUs, memory,
    storage, storage NICs), so the lines add up to the quoted price. Where a GPU has no price of its
    own (sold only inside the server) or the parts would cost more than the whole, the server line
    carries it and the GPU line shows $0 marked "in the server price", never a bare $0.
    """
    s = catalog.servers[server_name]
    gpu = catalog.gpus[s.gpu]
    nic = catalog.nics[s.nic]
    # A GPU without a price of its own is sold inside the server (a GB200 rack): its line says so.
    gpu_included = gpu.price_usd is None
    gpu_usd = gpu.price_usd or 0.0
    nic_usd = nic.price_usd
    base = s.price_usd - s.gpus * gpu_usd - s.nics * nic_usd
    included = base <= 0
    if included:
        gpu_usd = nic_usd = 0.0
        base = s.price_usd
    gpu_included = gpu_included or included
    note = (" (complete system price)" if included else
            " (GPUs in the server price; compute NICs listed separately)" if gpu_included else
            " (GPUs and compute NICs listed separately)")
    gpu_power = gpu.power_w
    nic_power = nic.power_w
    return (
        BomLine("server", s.name, s.description + note, "compute", float(nodes), base,
                s.power_w - s.gpus * gpu_power - s.nics * nic_power, s.provenance.source),
        BomLine("gpu", gpu.name, gpu.description + (" (in the server price)" if gpu_included else ""), "compute",
                float(nodes * s.gpus), gpu_usd, gpu_power, gpu.provenance.source),
        BomLine("nic", nic.name, nic.description + (" (in the server price)" if included else ""), "compute",
                float(nodes * s.nics), nic_usd, nic_power, nic.provenance.source),
    )


def cooling_usd(server: Server, facility: Facility) -> float:
    """Coolant distribution (CDU) capacity one liquid- or hybrid-cooled server needs: the facility's
    price per W of liquid-cooled IT load times the server's rated power (air-cooled: 0; in-rack
    cold plates and manifolds are in the server's own price)."""
    if server.cooling == "air":
        return 0.0
    return facility.liquid_cooling_usd_per_w * server.power_w


def cooling_line(server: Server, facility: Facility, nodes: int) -> BomLine | None:
    """The BOM line of the coolant distribution capacity of ``nodes`` liquid-cooled servers, or None."""
    if server.cooling == "air" or facility.liquid_cooling_usd_per_w <= 0.0:
        return None
    kw = nodes * server.power_w / 1e3
    prov = facility.provenance
    return BomLine("cooling", "liquid-cooling-cdu",
                   f"coolant distribution (CDU) capacity for {kw:g} kW of {server.cooling}-cooled {server.name} racks",
                   "compute", kw, facility.liquid_cooling_usd_per_w * 1e3, 0.0, prov.source,
                   prov.price_basis or "street", prov.as_of, prov.estimate)


def onprem_bom(candidate: Candidate, catalog: Catalog, facility: Facility, nodes: int,
               installation_fraction: float) -> tuple[tuple[BomLine, ...], topology.FabricSummary]:
    """The complete, exact bill of materials of an on-prem design and its fabric summary."""
    summary = topology.summarize(fabric_request(candidate, catalog, nodes, facility))
    switch = catalog.switches[candidate.switch]
    lines = list(server_lines(catalog, candidate.server, nodes))
    lines.extend(topology.fabric_bom(summary, switch, catalog, node_port(candidate, catalog),
                                     manager=fabric_manager(candidate, catalog)))
    server = catalog.servers[candidate.server]
    cooling = cooling_line(server, facility, nodes)
    if cooling is not None:
        lines.append(cooling)
    rack_sku = f"rack-{facility.rack_units}u"
    rack_desc = f"{facility.rack_units}U rack with PDUs ({facility.rack_power_w / 1e3:g} kW)"
    # A rack-scale system ships as its own rack (enclosure, power shelves, busbar): no rack to buy.
    compute_racks = 0 if server.compute_trays > 1 else summary.server_racks
    # Network racks hold the switches, and the fabric manager's appliances in their free units; a
    # rack of appliances alone (top-of-rack leaves) has a line of its own.
    for role, count in (("compute", compute_racks), ("network", summary.switch_racks - summary.appliance_racks),
                        (topology.ROLE_MANAGER, summary.appliance_racks)):
        if count:
            lines.append(BomLine("rack", rack_sku, rack_desc, role, float(count), facility.rack_price_usd, 0.0,
                                 facility.provenance.source))
    equipment = sum(l.total_usd for l in lines)
    if installation_fraction > 0:
        lines.append(BomLine("service", "installation", f"installation and cabling ({installation_fraction:.0%} of equipment)",
                             "one-time", 1.0, equipment * installation_fraction, 0.0, facility.provenance.source))
    return sort_lines(lines), summary


def instance_usd_per_s(instance: CloudInstance, pricing: Pricing | str) -> float:
    """Price per instance-second under a pricing model. No fallback: a model the catalog has no
    price for is an error naming the instance.

    Raises:
        CatalogError: the instance has no price under ``pricing``.
    """
    return cloud.offer_for(instance, pricing if isinstance(pricing, str) else pricing.value).usd_per_s


def cloud_line(instance: CloudInstance, pricing: Pricing | str, workload: str, instances: float,
               time_s: float) -> BomLine:
    """A cloud line: the instance-hours the pricing model bills (on demand: the hours used, rounded
    up to whole hours as providers bill; reserved: the whole committed term; capacity blocks: the
    whole block) at its hourly price.

    Raises:
        CatalogError: the instance has no price under ``pricing``.
    """
    model = pricing if isinstance(pricing, str) else pricing.value
    offer = cloud.offer_for(instance, model)
    billed_s = offer.billed_s(instances, time_s)
    hours = math.ceil(billed_s / SECONDS_PER_HOUR - 1e-9) if model == "on_demand" else billed_s / SECONDS_PER_HOUR
    prov = instance.provenance
    return BomLine("cloud", instance.name, f"{instance.description} ({offer.describe(instances, time_s)})",
                   workload, float(hours), cloud.hourly(offer), 0.0, prov.source, prov.price_basis or "list",
                   prov.as_of, prov.estimate)
