"""Network bill of materials of a fabric: switches, transceivers and cables, every link built end
to end from its two ports (:func:`designer.topology.links.build_link`).

Rules (``docs/topology.md``, "Bill of materials"):

* Switches: one line per role (``leaf``, ``spine``, ``core``); a single switch is a ``leaf``.
* Each tier's links are built from their two ports: the server's compute cage (or the NIC's own)
  and a leaf cage for ``node-leaf``, two switch cages above, with the media class and run length
  the floor layout gives the tier. Both cages are filled by parts that fit them, both ends run the
  same protocol and lanes x lane rate. A server cage and a leaf cage that carry the same links
  (single switch and fat tree) may share one wide cable.
* Optics: a transceiver in every switch cage in use on an optical tier (NVIDIA's SuperPOD count:
  every cage of every switch of the 4-SU pod) and in every server compute cage on an optical
  ``node-leaf`` tier; one cord per link, or per splitter where a cage's optical port carries
  several links. A copper-class tier that only optics can build gets them per link end.
* Reserved-port links (UFM): with the fabric manager given, its appliances get a line of their
  own (category ``appliance``, role ``fabric-manager``) and each of their fabric ports is linked
  from the appliance's adapter to a leaf cage at the manager's rate: its optic (role
  ``fabric-manager``) and cable (UFM at NDR200 on an NDR leaf: a 1:2 splitter cord per leaf port,
  RA-11333 Table 8's 2 NDR200 cables and 4 UFM transceivers). Without one, a reserved leaf port
  gets the cable of a single node link.
* A link no catalog part builds is refused with both ports and the reason named (the catalogs hold
  no placeholder parts).

``pick_transceiver`` and ``pick_cable`` choose by rate, ports and reach alone, for networks whose
ports are not modelled yet.
"""

from __future__ import annotations

__all__ = ["ROLE_MANAGER", "fabric_bom", "manager_rate", "manager_leaf_ports", "tier_links", "optic_fit", "cable_fit", "optic_end", "pick_transceiver", "pick_cable"]

import math
from dataclasses import replace
from typing import Iterable, TypeVar

from designer.catalog.media import GBPS
from designer.catalog.types import Appliance, Cable, Catalog, MediaKind, Switch, Transceiver
from designer.design.bom import BomLine, sort_lines
from designer.errors import CatalogError
from designer.topology.links import LinkParts, build_link
from designer.topology.ports import Port, fits, nic_port, switch_port
from designer.topology.schema import NODE_LEAF, MediaClass, TopologyKind
from designer.topology.summary import FabricSummary

_OPTICAL = (MediaClass.MULTIMODE, MediaClass.SINGLE_MODE)
_RATE_TOLERANCE_BPS = 1.0
T = TypeVar("T", Cable, Transceiver)


def _gbps(rate_Bps: float) -> str:
    return f"{rate_Bps * 8 / 1e9:g} Gb/s"


def _cheapest(parts: Iterable[T]) -> T | None:
    return min(parts, key=lambda part: (part.price_usd, part.name), default=None)


def _same_rate(a: float, b: float) -> bool:
    return abs(a - b) < _RATE_TOLERANCE_BPS


def pick_transceiver(catalog: Catalog, rate_Bps: float, ports_per_cage: int, reach_m: float) -> Transceiver:
    """Cheapest transceiver at ``rate_Bps`` per port with ``ports_per_cage`` logical ports and at
    least ``reach_m`` of reach.

    Raises:
        CatalogError: No transceiver fits.
    """
    found = _cheapest(t for t in catalog.transceivers.values()
                      if _same_rate(t.rate_Bps, rate_Bps) and t.logical_ports == ports_per_cage
                      and t.reach_m >= reach_m)
    if found is None:
        raise CatalogError(
            f"no transceiver in the catalog runs {ports_per_cage} x {_gbps(rate_Bps)} with a reach of "
            f"{reach_m:.0f} m or more; add one to a catalog file"
        )
    return found


def pick_cable(catalog: Catalog, media: MediaKind, rate_Bps: float, reach_m: float, *,
               at_least: bool = False, optic: Transceiver | None = None) -> Cable | None:
    """Cheapest cable of ``media`` at ``rate_Bps`` (or above, with ``at_least``) reaching ``reach_m``;
    None if none fits. With ``optic``: a straight cord of the optic's fiber and optical connector."""
    def rated(cable: Cable) -> bool:
        if at_least:
            return cable.rate_Bps >= rate_Bps - _RATE_TOLERANCE_BPS
        return _same_rate(cable.rate_Bps, rate_Bps)

    def fits(cable: Cable) -> bool:
        return optic is None or (cable.connector is optic.fiber and cable.far is optic.fiber
                                 and cable.breakout == 1)

    return _cheapest(c for c in catalog.cables.values()
                     if c.media is media and c.reach_m >= reach_m and rated(c) and fits(c))




def _line(category: str, part: Switch | Cable | Transceiver, role: str, qty: int, **fit) -> BomLine:
    return BomLine(category=category, sku=part.name, description=part.description, role=role,
                   quantity=float(qty), unit_price_usd=part.price_usd, unit_power_w=part.power_w,
                   source=part.provenance.source, **fit)


def optic_fit(optic: Transceiver, lp: LinkParts, port: Port) -> dict:
    """The what-fits-where fields of an optic's BOM line (:class:`~designer.design.bom.BomLine`):
    its cage form, the link's protocol, the lanes x lane rate it drives in ``port`` (the cage it
    fills, one end of ``lp``), its fiber kind, and ``plugs_into`` the device owning the cage."""
    return {"connector": optic.connector.value, "protocol": lp.protocol.value, "lanes": optic.lanes,
            "lane_gbps": optic.lane_Bps / GBPS, "media": optic.media.value, "plugs_into": port.device}


def optic_end(optic: str, device: str) -> str:
    """A fiber cord's end in a BOM line's ``ends``: the optic SKU and the device it plugs into.

    Examples:
        >>> optic_end("osfp-800g-2xsr4", "dgx-h100")
        'osfp-800g-2xsr4@dgx-h100'
    """
    return f"{optic}@{device}"


def cable_fit(lp: LinkParts, cable: Cable | None = None) -> dict:
    """The what-fits-where fields of the BOM line of ``lp``'s cable (or ``cable``, another cable
    joining the same ports): its near-end connector, protocol, lanes x lane rate, media, and
    ``ends``: the two devices a DAC/ACC/AOC/Cat6 plugs into, or the two optics a fiber cord joins,
    the one its near connector takes first."""
    cable = cable or lp.cable
    # In the cable's own order: ends[0] takes its near connector, ends[1] its far one(s). A cord's
    # end names the optic and the device whose cage holds it (``optic@device``), so two optics of
    # one SKU in different devices stay apart.
    if cable.media.is_fiber and lp.optic_a is not None and lp.optic_b is not None:
        ends = (optic_end(lp.optic_a.name, lp.a.device), optic_end(lp.optic_b.name, lp.b.device))
        flipped = not (cable.connector is lp.optic_a.fiber and cable.far is lp.optic_b.fiber)
    else:
        ends = (lp.a.device, lp.b.device)
        flipped = not (fits(cable.connector, lp.a.cage) and fits(cable.far, lp.b.cage))
    ends = ends[::-1] if flipped else ends
    return {"connector": cable.connector.value, "protocol": lp.protocol.value, "lanes": cable.lanes,
            "lane_gbps": cable.lane_Bps / GBPS, "media": cable.media.value, "ends": ends}


def _merge(lines: list[BomLine]) -> tuple[BomLine, ...]:
    merged: dict[tuple, BomLine] = {}
    for line in lines:
        key = (line.category, line.sku, line.role, line.plugs_into, line.ends)
        if key in merged:
            merged[key] = replace(merged[key], quantity=merged[key].quantity + line.quantity)
        else:
            merged[key] = line
    return sort_lines(merged.values())


def tier_links(summary: FabricSummary, switch: Switch, catalog: Catalog, node: Port) -> dict[str, LinkParts]:
    """The parts of one link of each tier of the fabric (``node-leaf`` from ``node`` to a leaf
    cage, the others between two switch cages), by tier name.

    Raises:
        CatalogError: a tier's link cannot be built from the catalog (the message names both ports).
    """
    req = summary.request
    sw = switch_port(switch, req.nic_rate_Bps)
    aligned = req.topology in (TopologyKind.SINGLE_SWITCH, TopologyKind.FAT_TREE) and node.links == sw.links
    out = {}
    for tier in summary.tier_links:
        a = node if tier.tier == NODE_LEAF else sw
        bundle = node.links if aligned and tier.tier == NODE_LEAF else 1
        out[tier.tier] = build_link(catalog, a, sw, tier.length_m, media=tier.media, bundle=bundle)
    return out


def fabric_bom(summary: FabricSummary, switch: Switch | None, catalog: Catalog,
               node: Port | None = None, *, manager: Appliance | None = None) -> tuple[BomLine, ...]:
    """Network lines of the bill of materials: switches, transceivers and cables.

    Server NICs are part of the server's price and are not listed; cloud fabrics have no lines.

    Args:
        summary: The fabric (from :func:`~designer.topology.summary.summarize`).
        switch: The fabric switch (None only for cloud fabrics).
        catalog: Where cables and transceivers are chosen from.
        node: A server's compute port in use (:func:`~designer.topology.ports.server_port`);
            required for a switched fabric.
        manager: The fabric manager whose appliances take the reserved leaf ports (UFM), or None.

    Returns:
        BOM lines in :func:`designer.design.bom.sort_lines` order: category ``switch`` (roles ``leaf``,
        ``spine``, ``core``), ``transceiver`` (``switch-side``, ``node-side``) and ``cable``
        (roles by tier: ``node-leaf``, ``leaf-spine``, ``spine-core``).

    Raises:
        CatalogError: No switch or node port was given for a switched fabric, or no catalog part
            builds a link (see :func:`~designer.topology.links.build_link`).
    """
    req = summary.request
    if summary.tiers == 0:
        return ()
    if switch is None:
        raise CatalogError(f"a {req.topology.value} fabric needs a switch")
    if node is None:
        raise CatalogError(f"a {req.topology.value} fabric needs the servers' compute port to build its links")
    lines = [_line("switch", switch, role, n)
             for role, n in (("leaf", summary.leaves), ("spine", summary.spines), ("core", summary.cores)) if n]
    built = tier_links(summary, switch, catalog, node)
    # Switch-side optics: every cage in use on an optical tier, counted per media class by the
    # summary; the optic is that of the longest tier of the class.
    longest: dict[MediaClass, str] = {}
    for tier in summary.tier_links:
        if tier.media in _OPTICAL and (tier.media not in longest or
                                       tier.length_m > next(t.length_m for t in summary.tier_links
                                                            if t.tier == longest[tier.media])):
            longest[tier.media] = tier.tier
    # A class whose tiers chose different optics (a multimode node tier, single-mode optics on
    # the longer leaf-spine runs of the same class) counts each tier's cages in use instead.
    mixed = {m for m in longest if len({built[t.tier].optic_b.name if built[t.tier].optic_b else ""
                                        for t in summary.tier_links if t.media is m}) > 1}
    for media, count in summary.switch_transceivers_by_media:
        lp = built[longest[media]]
        if lp.optic_b is not None and media not in mixed:
            lines.append(_line("transceiver", lp.optic_b, "switch-side", count, **optic_fit(lp.optic_b, lp, lp.b)))
    for tier in summary.tier_links:
        lp = built[tier.tier]
        links = tier.links
        if (tier.media not in _OPTICAL or tier.media in mixed) and lp.optic_b is not None:
            ends = 1 if tier.tier == NODE_LEAF else 2
            lines.append(_line("transceiver", lp.optic_b, "switch-side",
                               ends * math.ceil(links / lp.links_per_optic_b), **optic_fit(lp.optic_b, lp, lp.b)))
        if tier.tier == NODE_LEAF and lp.optic_a is not None:
            lines.append(_line("transceiver", lp.optic_a, "node-side", req.nodes * req.cages_per_node,
                               **optic_fit(lp.optic_a, lp, lp.a)))
        lines.append(_line("cable", lp.cable, tier.tier, math.ceil(links / lp.links_per_cable), **cable_fit(lp)))
        if tier.tier == NODE_LEAF and summary.reserved_links:
            lines.extend(_reserved_lines(summary, catalog, node, switch, lp, tier.length_m, tier.media, manager))
    if manager is not None:
        why = ""
        if summary.reserved_links:
            tier = next(t for t in summary.tier_links if t.tier == NODE_LEAF)
            problem = manager_problem(catalog, manager, node, switch, tier.length_m, tier.media)
            why = f" (fabric link not built from catalog parts: {problem})" if problem else ""
        lines.append(BomLine("appliance", manager.name, manager.description + why, ROLE_MANAGER,
                             float(manager.per_fabric),
                             manager.price_usd, manager.power_w, manager.provenance.source,
                             manager.provenance.price_basis, manager.provenance.as_of, manager.provenance.estimate))
    return _merge(lines)


def manager_rate(manager: Appliance, fabric_rate_Bps: float) -> float:
    """The rate the manager's fabric ports run: its ``port_rate`` (UFM: NDR200, RA-11333 Table 8)
    where below the fabric's, else the fabric's."""
    rate = manager.port_rate_Bps
    return rate if 0 < rate < fabric_rate_Bps else fabric_rate_Bps


def manager_leaf_ports(manager: Appliance, fabric_rate_Bps: float) -> int:
    """Leaf ports at the fabric's rate the manager's ``per_fabric x fabric_ports`` ports take:
    ports below the fabric's rate share a split leaf port (fabric rate / port rate of them).

    Examples:
        >>> from designer.catalog import load_builtin
        >>> manager_leaf_ports(load_builtin().appliances["nvidia-ufm-appliance-3.1"], 400e9 / 8)
        2
    """
    per_leaf = max(1, int(fabric_rate_Bps // manager_rate(manager, fabric_rate_Bps)))
    return math.ceil(manager.per_fabric * manager.fabric_ports / per_leaf)


def _manager_ends(catalog: Catalog, manager: Appliance, node: Port, leaf: Switch) -> tuple[Port, Port]:
    """The manager's adapter port and a leaf cage, both at the manager's rate."""
    nic = catalog.nics.get(manager.nic)
    if nic is None:
        raise CatalogError(f"{manager.name} names unknown NIC '{manager.nic}'")
    rate = manager_rate(manager, node.rate_Bps)
    return replace(nic_port(nic, node.protocol, rate), device=manager.name), switch_port(leaf, rate)


def _build_manager_link(catalog: Catalog, manager: Appliance, node: Port, leaf: Switch, length_m: float,
                        media: MediaClass) -> LinkParts:
    a, b = _manager_ends(catalog, manager, node, leaf)
    return build_link(catalog, a, b, length_m, media=media)


def manager_problem(catalog: Catalog, manager: Appliance, node: Port, leaf: Switch, length_m: float,
                    media: MediaClass) -> str | None:
    """Why the manager's fabric link cannot be built from catalog parts (an HDR leaf and a
    ConnectX-7 adapter), or None. Its reserved ports then get a node link's cable and the
    appliance's line says the link is not built."""
    try:
        _build_manager_link(catalog, manager, node, leaf, length_m, media)
    except CatalogError as exc:
        return str(exc)
    return None


# BOM role of the fabric manager's appliances and of the optics in their adapters.
ROLE_MANAGER = "fabric-manager"


def _reserved_lines(summary: FabricSummary, catalog: Catalog, node: Port, leaf: Switch, lp: LinkParts,
                    length_m: float, media: MediaClass, manager: Appliance | None) -> list[BomLine]:
    """Cables (and the appliance-side optics) of the reserved-port links, role ``node-leaf``: from
    each of the manager's adapter ports to a leaf cage at the manager's rate where the parts build
    it (UFM at NDR200: a 1:2 splitter cord per NDR leaf port, RA-11333 Table 8), else as a single
    node link per reserved leaf port."""
    count = summary.reserved_links
    if manager is not None and manager_problem(catalog, manager, node, leaf, length_m, media) is None:
        link = _build_manager_link(catalog, manager, node, leaf, length_m, media)
        per_leaf = max(1, int(node.rate_Bps // manager_rate(manager, node.rate_Bps)))
        ports = min(manager.per_fabric * manager.fabric_ports, count * per_leaf)  # the appliances' links
        out = [_line("cable", link.cable, NODE_LEAF, math.ceil(ports / link.links_per_cable), **cable_fit(link))]
        if link.optic_a is not None:
            out.append(_line("transceiver", link.optic_a, ROLE_MANAGER, math.ceil(ports / link.links_per_optic_a),
                             **optic_fit(link.optic_a, link, link.a)))
        return out
    single = lp if lp.links_per_cable == 1 else build_link(
        catalog, Port(node.device, node.cage, node.protocol, node.lanes // node.links, node.lane_Bps, 1,
                      node.rate_Bps), lp.b, length_m, media=media)
    return [_line("cable", single.cable, NODE_LEAF, count, **cable_fit(single))]
