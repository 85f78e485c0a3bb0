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
* Reserved-port links (UFM) get the cable of a single node link; the appliance's own transceiver is
  part of the appliance and not listed.
* A link no catalog part builds is refused with both ports and the reason named (the catalogs hold
  no placeholder parts).

``pick_transceiver`` and ``pick_cable`` choose by rate, ports and reach alone, for networks whose
ports are not modelled yet.
"""

from __future__ import annotations

__all__ = ["fabric_bom", "tier_links", "pick_transceiver", "pick_cable"]

import math

from typing import Iterable, TypeVar

from designer.catalog.types import Cable, Catalog, MediaKind, Switch, Transceiver
from designer.design.bom import BomLine, sort_lines
from designer.errors import CatalogError
from designer.topology.links import LinkParts, build_link
from designer.topology.ports import Port, switch_port
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




def _line(category: str, part: Switch | Cable | Transceiver, role: str, qty: int) -> BomLine:
    return BomLine(category=category, sku=part.name, description=part.description, role=role,
                   quantity=float(qty), unit_price_usd=part.price_usd, unit_power_w=part.power_w,
                   source=part.provenance.source)


def _merge(lines: list[BomLine]) -> tuple[BomLine, ...]:
    merged: dict[tuple[str, str, str], BomLine] = {}
    for line in lines:
        key = (line.category, line.sku, line.role)
        if key in merged:
            old = merged[key]
            merged[key] = BomLine(old.category, old.sku, old.description, old.role,
                                  old.quantity + line.quantity, old.unit_price_usd, old.unit_power_w, old.source)
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
               node: Port | None = None) -> tuple[BomLine, ...]:
    """Network lines of the bill of materials: switches, transceivers and cables.

    Server NICs are part of the server's price and are not listed; cloud fabrics have no lines.

    Args:
        summary: The fabric (from :func:`~designer.topology.summary.summarize`).
        switch: The fabric switch (None only for cloud fabrics).
        catalog: Where cables and transceivers are chosen from.
        node: A server's compute port in use (:func:`~designer.topology.ports.server_port`);
            required for a switched fabric.

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
    for media, count in summary.switch_transceivers_by_media:
        optic = built[longest[media]].optic_b
        if optic is not None:
            lines.append(_line("transceiver", optic, "switch-side", count))
    for tier in summary.tier_links:
        lp = built[tier.tier]
        links = tier.links
        if tier.media not in _OPTICAL and lp.optic_b is not None:
            ends = 1 if tier.tier == NODE_LEAF else 2
            lines.append(_line("transceiver", lp.optic_b, "switch-side",
                               ends * math.ceil(links / lp.links_per_optic_b)))
        if tier.tier == NODE_LEAF and lp.optic_a is not None:
            lines.append(_line("transceiver", lp.optic_a, "node-side", req.nodes * req.cages_per_node))
        lines.append(_line("cable", lp.cable, tier.tier, math.ceil(links / lp.links_per_cable)))
        if tier.tier == NODE_LEAF and summary.reserved_links:
            single = lp if lp.links_per_cable == 1 else build_link(
                catalog, Port(node.device, node.cage, node.protocol, node.lanes // node.links, node.lane_Bps, 1,
                              node.rate_Bps), lp.b, tier.length_m, media=tier.media)
            lines.append(_line("cable", single.cable, tier.tier, summary.reserved_links))
    return _merge(lines)
