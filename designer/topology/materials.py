"""Network bill of materials of a fabric: switches, transceivers and cables, picked from a catalog.

Rules (``docs/topology.md``):

* Switches: one line per role (``leaf``, ``spine``, ``core``); a single switch is a ``leaf``.
* Optical tiers (multimode or single-mode): a transceiver in every cage in use at each end plus
  one fiber per logical link, NVIDIA's SuperPOD practice (twin-port OSFP on switches and DGX);
  the fiber is a straight cord of the switch optic's fiber kind and optical connector.
  A transceiver fits when it runs the link rate, has as many logical ports as the cage (2 for
  twin-port) and reaches the tier's longest run; a fiber when it is rated for the rate and reaches.
* Copper (in-rack) tiers: one DAC per logical link at the link rate, or, where a server's cage
  and the leaf's cage carry the same links (single switch and fat tree), one DAC per cage pair at
  ``ports_per_cage`` times the rate (2x400G OSFP DAC). AOC of the same shape when the catalog has
  no fitting DAC.
* Among fitting parts the cheapest wins (then the name, for a stable choice).
* Reserved-port links (UFM) get a cable of the NIC-link media; the appliance's own transceiver is
  part of the appliance and not listed.
"""

from __future__ import annotations

__all__ = ["fabric_bom", "pick_transceiver", "pick_cable"]

from typing import Iterable, TypeVar

from designer.catalog.types import Cable, Catalog, MediaKind, Switch, Transceiver
from designer.design.bom import BomLine, sort_lines
from designer.errors import CatalogError
from designer.topology.schema import NODE_LEAF, MediaClass, TopologyKind
from designer.topology.summary import FabricSummary

_RATE_TOLERANCE_BPS = 1.0
_OPTICAL = (MediaClass.MULTIMODE, MediaClass.SINGLE_MODE)
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


def _copper_cables(catalog: Catalog, rate: float, reach: float, links: int, bundle: int) -> tuple[Cable, int]:
    """(cable, quantity) for ``links`` in-rack links: DAC first, then AOC; per link or per cage pair."""
    for media in (MediaKind.DAC, MediaKind.AOC):
        options = []
        single = pick_cable(catalog, media, rate, reach)
        if single is not None:
            options.append((single.price_usd * links, single.name, single, links))
        if bundle > 1 and links % bundle == 0:
            wide = pick_cable(catalog, media, rate * bundle, reach)
            if wide is not None:
                options.append((wide.price_usd * (links // bundle), wide.name, wide, links // bundle))
        if options:
            _, _, cable, qty = min(options, key=lambda o: (o[0], o[1]))
            return cable, qty
    raise CatalogError(
        f"no DAC or AOC cable in the catalog runs {_gbps(rate)} over {reach:.1f} m; add one to a catalog file"
    )


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


def fabric_bom(summary: FabricSummary, switch: Switch | None, catalog: Catalog) -> tuple[BomLine, ...]:
    """Network lines of the bill of materials: switches, transceivers and cables.

    Server NICs are part of the server's price and are not listed; cloud fabrics have no lines.

    Args:
        summary: The fabric (from :func:`~designer.topology.summary.summarize`).
        switch: The fabric switch (None only for cloud fabrics).
        catalog: Where cables and transceivers are chosen from.

    Returns:
        BOM lines in :func:`designer.design.bom.sort_lines` order: category ``switch`` (roles ``leaf``,
        ``spine``, ``core``), ``transceiver`` (``switch-side``, ``node-side``) and ``cable``
        (roles by tier: ``node-leaf``, ``leaf-spine``, ``spine-core``).

    Raises:
        CatalogError: No switch was given for a switched fabric, or no catalog part fits a link.
    """
    req = summary.request
    if summary.tiers == 0:
        return ()
    if switch is None:
        raise CatalogError(f"a {req.topology.value} fabric needs a switch")
    rate = req.nic_rate_Bps
    lines = [_line("switch", switch, role, n)
             for role, n in (("leaf", summary.leaves), ("spine", summary.spines), ("core", summary.cores)) if n]
    reach = {}
    for tier in summary.tier_links:
        reach[tier.media] = max(reach.get(tier.media, 0.0), tier.length_m)
    optics: dict[MediaClass, Transceiver] = {}
    for media, count in summary.switch_transceivers_by_media:
        part = optics[media] = pick_transceiver(catalog, rate, req.ports_per_cage, reach[media])
        lines.append(_line("transceiver", part, "switch-side", count))
    node_tier = next(t for t in summary.tier_links if t.tier == NODE_LEAF)
    if summary.node_transceivers:
        part = pick_transceiver(catalog, rate, req.node_ports_per_cage, node_tier.length_m)
        lines.append(_line("transceiver", part, "node-side", summary.node_transceivers))
    aligned = req.topology in (TopologyKind.SINGLE_SWITCH, TopologyKind.FAT_TREE) \
        and req.node_ports_per_cage == req.ports_per_cage
    for tier in summary.tier_links:
        extra = summary.reserved_links if tier.tier == NODE_LEAF else 0
        if tier.media in _OPTICAL:
            optic = optics.get(tier.media)
            kind = optic.media if optic is not None else MediaKind.MULTIMODE
            fiber = pick_cable(catalog, kind, rate, tier.length_m, at_least=True, optic=optic)
            if fiber is None:
                raise CatalogError(
                    f"no fiber cable in the catalog carries {_gbps(rate)} over {tier.length_m:.0f} m "
                    f"({tier.tier} links); add one to a catalog file"
                )
            lines.append(_line("cable", fiber, tier.tier, tier.links + extra))
            continue
        bundle = req.ports_per_cage if aligned and tier.tier == NODE_LEAF else 1
        cable, qty = _copper_cables(catalog, rate, tier.length_m, tier.links, bundle)
        lines.append(_line("cable", cable, tier.tier, qty))
        if extra:
            cable, qty = _copper_cables(catalog, rate, tier.length_m, extra, 1)
            lines.append(_line("cable", cable, tier.tier, qty))
    return _merge(lines)
