"""A design's fabric drawing: the graph rebuilt from the design's system and the catalog, then laid out.

:func:`draw_design` rebuilds the fabric request (:func:`fabric_request_for`), builds its graph,
lays it out (:mod:`designer.pictures.layout`) and reports where the drawing and the design's bill
of materials disagree.
"""

from __future__ import annotations

__all__ = ["fabric_request_for", "draw_design"]

from dataclasses import replace

from designer import topology
from designer.catalog.types import Catalog
from designer.design import bom, sections
from designer.design.model import Design
from designer.errors import CatalogError
from designer.pictures.drawing import MAX_BOXES, Drawing, tier_counts
from designer.pictures.layout import drawing_from_graph
from designer.topology import schema
from designer.topology.request import DEFAULT_RACK_UNITS


def fabric_request_for(design: Design, catalog: Catalog, *,
                       rack_power_w: float | None = None) -> topology.FabricRequest:
    """The fabric request of a design's system, rebuilt from the catalog names it stores.

    On-prem (and the on-prem part of hybrid) designs get the request the optimizer priced
    (:func:`designer.optimize.pricing.fabric_request`: links at the fastest rate NIC and switch
    share, no reserved leaf ports, servers per rack from the rack power); cloud designs get
    :func:`designer.topology.request_for_cloud`.

    Args:
        design: A loaded design.
        catalog: A catalog holding the design's server (or instance), its NIC and its switch.
        rack_power_w: Rack power budget, W; the catalog's default facility when ``None`` (a design
            does not record the spec's facility; only rack names depend on it, not the fabric).

    Raises:
        CatalogError: The catalog lacks a name the design uses.
        TopologyError: The catalog's entries no longer make the design's fabric.
    """
    system = design.system
    if system.deployment == "cloud" or system.topology == schema.TopologyKind.CLOUD.value:
        instance = catalog.clouds.get(system.server)
        if instance is None:
            raise CatalogError(f"the design rents '{system.server}', which the catalog lacks; "
                               "pass the catalog it was made with (--catalog)")
        return topology.request_for_cloud(instance, system.nodes)
    server = catalog.servers.get(system.server)
    switch = catalog.switches.get(system.switch or "")
    if server is None or switch is None:
        missing = system.server if server is None else system.switch
        raise CatalogError(f"the design uses '{missing}', which the catalog lacks; "
                           "pass the catalog it was made with (--catalog)")
    nic = catalog.nics.get(server.nic)
    if nic is None:
        raise CatalogError(f"server '{server.name}' names NIC '{server.nic}', which the catalog lacks")
    # The links run at the fastest rate both ends support, as the optimizer's candidates do (a
    # 400G NIC on a 200G switch runs at 200G); the design file does not record it.
    rate = next((r for r in nic.rates() if switch.ports_at(r) > 0), nic.rate_Bps)
    if rate != nic.rate_Bps:
        nic = replace(nic, rate_Bps=rate)
    facility = catalog.facilities.get("default") or next(iter(catalog.facilities.values()), None)
    power = rack_power_w if rack_power_w is not None else (facility.rack_power_w if facility else None)
    units = facility.rack_units if facility else DEFAULT_RACK_UNITS
    return topology.request_for(server, nic, switch, system.topology, system.nodes, system.oversubscription,
                                rack_power_w=power, rack_units=units)


def _title(design: Design) -> str:
    s = design.system
    head = f"{design.spec_name}: {s.nodes} x {s.server} ({s.gpus} GPUs), {s.fabric}"
    if s.topology != schema.TopologyKind.CLOUD.value:
        head += f" {s.topology}, {s.tiers} tier{'s' if s.tiers != 1 else ''}"
        if s.oversubscription != 1:
            head += f", {s.oversubscription:g}:1"
    if s.deployment == "hybrid":
        rented = sorted({w.server for w in design.workloads if w.deployment == "cloud"})
        head += f"; also rents {', '.join(rented)}"
    return head


def _check_counts(design: Design, drawing: Drawing) -> list[str]:
    """Switch counts of the drawing that differ from the design's bill of materials (the compute
    fabric's: the storage and management networks are not drawn)."""
    listed: dict[str, int] = {}
    for line in design.bom:
        if line.category == "switch" and sections.section_of(line) == "switch":
            listed[line.role] = listed.get(line.role, 0) + int(round(line.quantity))
    drawn: dict[str, int] = {}
    for role, count in tier_counts(drawing).items():
        if role in schema.SWITCH_ROLES:
            # The BOM counts a single switch as a leaf (as FabricSummary does).
            key = schema.ROLE_LEAF if role == schema.ROLE_SWITCH else role
            drawn[key] = drawn.get(key, 0) + count
    return [f"the design's bill of materials lists {listed.get(r, 0)} {r} switches; the catalog now gives "
            f"{drawn.get(r, 0)}" for r in sorted(set(listed) | set(drawn)) if listed.get(r, 0) != drawn.get(r, 0)]


def draw_design(design: Design, catalog: Catalog, *, max_boxes: tuple[int, int, int, int] = MAX_BOXES) -> Drawing:
    """The drawing of a design's fabric (on-prem, the on-prem part of hybrid, or cloud).

    The graph is rebuilt from the design's system and the catalog (:func:`fabric_request_for`).
    Switch counts that differ from the design's bill of materials, and a catalog other than the
    one the design was made with, are reported in ``warnings``.

    Raises:
        CatalogError: The catalog lacks a name the design uses.
        TopologyError: The catalog's entries no longer make the design's fabric.
    """
    request = fabric_request_for(design, catalog)
    system = design.system
    drawing = drawing_from_graph(topology.build_graph(request), title=_title(design), server=system.server,
                                 switch=system.switch or "", max_boxes=max_boxes)
    warnings: list[str] = []
    if request.topology is schema.TopologyKind.CLOUD:
        inst = catalog.clouds[system.server]
        label = (f"{inst.provider} {inst.network.value} network\n"
                 f"{request.nics_per_node} x {request.nic_rate_Bps * 8 / 1e9:g} Gb/s per instance")
        boxes = tuple(replace(b, label=label) if b.role == schema.ROLE_CLOUD else b for b in drawing.boxes)
        drawing = replace(drawing, boxes=boxes)
    else:
        warnings.extend(_check_counts(design, drawing))
    if design.catalog_digest and catalog.digest and design.catalog_digest != catalog.digest:
        warnings.append("the catalog differs from the one the design was made with")
    return replace(drawing, warnings=tuple(warnings))
