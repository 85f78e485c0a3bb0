"""Prices and bills of materials: linear unit costs for the program, exact BOMs for the answer.

The integer program needs linear coefficients: a price per node, per switch and per link of each
tier. They are read off the topology's own bill of materials at a reference size, so the program
and the final BOM price the same parts. The BOM of the chosen design is then built exactly from
the topology's closed form (:func:`designer.topology.summarize`) at the chosen node count.
"""

from __future__ import annotations

__all__ = [
    "fabric_request",
    "fabric_shape",
    "unit_costs",
    "server_lines",
    "onprem_bom",
    "cloud_line",
    "instance_usd_per_s",
]

import math
from dataclasses import replace

from designer import topology
from designer.catalog.types import Catalog, CloudInstance, Facility
from designer.design.bom import BomLine, sort_lines
from designer.errors import CatalogError
from designer.optimize.candidates import Candidate
from designer.optimize.problem import FabricShape, UnitCosts
from designer.spec.choices import Pricing
from designer.spec.units import SECONDS_PER_HOUR

# The SuperPOD reserves 4 leaf ports for its UFM appliances (network.md 1.1); other designs use
# none. The optimizer sizes compute fabrics without management appliances.
_RESERVED_PORTS = 0


def fabric_request(candidate: Candidate, catalog: Catalog, nodes: int, facility: Facility,
                   *, reserved_leaf_ports: int = _RESERVED_PORTS) -> topology.FabricRequest:
    """The topology request for an on-prem candidate at ``nodes`` servers.

    Servers per rack follow from the facility's rack power and rack units.
    """
    server = catalog.servers[candidate.server]
    nic = catalog.nics[server.nic]
    if candidate.link_rate_Bps:
        nic = replace(nic, rate_Bps=candidate.link_rate_Bps)
    switch = catalog.switches[candidate.switch]
    return topology.request_for(server, nic, switch, candidate.topology, nodes, candidate.oversubscription,
                                rack_power_w=facility.rack_power_w, rack_units=facility.rack_units,
                                reserved_leaf_ports=reserved_leaf_ports)


def fabric_shape(candidate: Candidate, catalog: Catalog, facility: Facility) -> FabricShape:
    """Sizing parameters of a candidate's fabric (see :class:`~designer.optimize.problem.FabricShape`)."""
    req = fabric_request(candidate, catalog, 1, facility)
    cap = topology.capacity(req)
    return FabricShape(
        topology=candidate.topology, rails=req.nics_per_node, radix=req.switch_ports,
        leaf_down=cap.leaf_downlinks, leaf_up=cap.leaf_uplinks, su_nodes=cap.su_nodes,
        spine_choices=cap.spine_choices, max_nodes_1tier=cap.max_nodes_1tier,
        max_nodes_2tier=cap.max_nodes_2tier, max_nodes=cap.max_nodes, ports_per_cage=req.ports_per_cage,
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


def unit_costs(candidate: Candidate, catalog: Catalog, facility: Facility, reference_nodes: int) -> UnitCosts:
    """Linear prices and powers of an on-prem candidate, read off its BOM at ``reference_nodes``.

    Per-link prices depend on the media, which depends on cable runs, which grow with the floor
    area; so they are taken at the size the workloads suggest. The final BOM is exact regardless.
    """
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
        lines = topology.fabric_bom(summary, switch, catalog)
        for tier, value in _per_link(summary, lines).items():
            if tier not in tiers_seen or (value[0] > 0 and tiers_seen[tier][0] == 0):
                tiers_seen[tier] = value
    req = fabric_request(candidate, catalog, ref, facility)
    nl = tiers_seen.get(topology.NODE_LEAF, (0.0, 0.0))
    ls = tiers_seen.get(topology.LEAF_SPINE, (0.0, 0.0))
    sx = tiers_seen.get(topology.SPINE_CORE, ls)
    return UnitCosts(
        node_usd=server.price_usd, node_w=server.power_w, node_ru=server.rack_units,
        node_link_usd=nl[0], node_link_w=nl[1], leaf_spine_link_usd=ls[0], leaf_spine_link_w=ls[1],
        spine_core_link_usd=sx[0], spine_core_link_w=sx[1],
        switch_usd=switch.price_usd, switch_w=switch.power_w, switch_ru=switch.rack_units,
        servers_per_rack=req.servers_per_rack, rack_units=facility.rack_units, rack_usd=facility.rack_price_usd,
    )


def server_lines(catalog: Catalog, server_name: str, nodes: int) -> tuple[BomLine, ...]:
    """Server, GPU and NIC lines for ``nodes`` servers.

    The catalog quotes a server complete; the BOM lists its GPUs and compute NICs on lines of their
    own at their catalog prices and the server line carries the rest (chassis, CPUs, memory,
    storage, storage NICs), so the lines add up to the quoted price. Where a GPU has no price the
    server line carries everything and the GPU line shows $0 ("included").
    """
    s = catalog.servers[server_name]
    gpu = catalog.gpus[s.gpu]
    nic = catalog.nics[s.nic]
    gpu_usd = gpu.price_usd or 0.0
    nic_usd = nic.price_usd
    base = s.price_usd - s.gpus * gpu_usd - s.nics * nic_usd
    included = base <= 0
    if included:
        gpu_usd = nic_usd = 0.0
        base = s.price_usd
    note = " (GPUs and compute NICs listed separately)" if not included else " (complete system price)"
    gpu_power = gpu.power_w
    nic_power = nic.power_w
    return (
        BomLine("server", s.name, s.description + note, "compute", float(nodes), base,
                s.power_w - s.gpus * gpu_power - s.nics * nic_power, s.provenance.source),
        BomLine("gpu", gpu.name, gpu.description + (" (in the server price)" if included else ""), "compute",
                float(nodes * s.gpus), gpu_usd, gpu_power, gpu.provenance.source),
        BomLine("nic", nic.name, nic.description + (" (in the server price)" if included else ""), "compute",
                float(nodes * s.nics), nic_usd, nic_power, nic.provenance.source),
    )


def onprem_bom(candidate: Candidate, catalog: Catalog, facility: Facility, nodes: int,
               installation_fraction: float) -> tuple[tuple[BomLine, ...], topology.FabricSummary]:
    """The complete, exact bill of materials of an on-prem design and its fabric summary."""
    summary = topology.summarize(fabric_request(candidate, catalog, nodes, facility))
    switch = catalog.switches[candidate.switch]
    lines = list(server_lines(catalog, candidate.server, nodes))
    lines.extend(topology.fabric_bom(summary, switch, catalog))
    rack_sku = f"rack-{facility.rack_units}u"
    rack_desc = f"{facility.rack_units}U rack with PDUs ({facility.rack_power_w / 1e3:g} kW)"
    for role, count in (("compute", summary.server_racks), ("network", summary.switch_racks)):
        if count:
            lines.append(BomLine("rack", rack_sku, rack_desc, role, float(count), facility.rack_price_usd, 0.0,
                                 facility.provenance.source))
    equipment = sum(l.total_usd for l in lines)
    if installation_fraction > 0:
        lines.append(BomLine("service", "installation", f"installation and cabling ({installation_fraction:.0%} of equipment)",
                             "one-time", 1.0, equipment * installation_fraction, 0.0, facility.provenance.source))
    return sort_lines(lines), summary


def instance_usd_per_s(instance: CloudInstance, pricing: Pricing) -> float:
    """Price per instance-second under a pricing model; reserved prices fall back to on-demand.

    Raises:
        CatalogError: never for on-demand (always present).
    """
    if pricing is Pricing.RESERVED_1Y and instance.price_reserved_1y_usd_per_s is not None:
        return instance.price_reserved_1y_usd_per_s
    if pricing is Pricing.RESERVED_3Y and instance.price_reserved_3y_usd_per_s is not None:
        return instance.price_reserved_3y_usd_per_s
    if instance.price_on_demand_usd_per_s <= 0:
        raise CatalogError(f"cloud instance {instance.name} has no price")
    return instance.price_on_demand_usd_per_s


def cloud_line(instance: CloudInstance, pricing: Pricing, workload: str, instance_seconds: float) -> BomLine:
    """A cloud line: instance-hours (rounded up to whole hours, as providers bill) at the hourly price."""
    hours = math.ceil(instance_seconds / SECONDS_PER_HOUR - 1e-9)
    per_hour = instance_usd_per_s(instance, pricing) * SECONDS_PER_HOUR
    return BomLine("cloud", instance.name, f"{instance.description} ({pricing.value.replace('_', '-')})",
                   workload, float(hours), per_hour, 0.0, instance.provenance.source)
