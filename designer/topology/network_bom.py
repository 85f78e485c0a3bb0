"""Bill-of-materials lines of the storage, in-band and out-of-band networks, and what each item
of them is per link or per switch (the same table prices them in the integer program).

Every line carries the network's role (``storage``, ``inband``, ``oob``); a network's switches are
one line whose description says how many are leaves and spines (docs/topology.md).
"""

from __future__ import annotations

__all__ = ["NetworkItem", "network_items", "network_bom"]

from dataclasses import dataclass

from designer.catalog.types import Cable, Switch, Transceiver
from designer.design.bom import BomLine, sort_lines
from designer.topology.links import LinkParts
from designer.topology.networks import ROLE_INBAND, ROLE_OOB, ROLE_STORAGE, NetworkParts, NetworkSize

Part = Switch | Cable | Transceiver


@dataclass(frozen=True, slots=True)
class NetworkItem:
    """One kind of part of a network and how many of it a :class:`NetworkSize` needs: one per
    ``per`` links of the link kinds ``fields`` count (a splitter cable serves 2 links, a twin-port
    optic its cage's), rounded up."""

    role: str
    category: str  # switch | transceiver | cable
    part: Part
    what: str  # what the item is for, in the BOM line's description
    fields: tuple[str, ...]  # the NetworkSize counts whose sum is the links (or switches) it serves
    per: int = 1  # links (or switches) one part serves

    def count(self, size: NetworkSize) -> int:
        """How many of the part ``size`` needs: ``ceil(sum of fields / per)``."""
        return -(-sum(getattr(size, f) for f in self.fields) // self.per)


def _link_items(role: str, link: LinkParts | None, what: str, *fields: str,
                sides: tuple[str, str] = ("", "")) -> list[NetworkItem]:
    """The cable and the optic at each end of ``link`` (:func:`~designer.topology.links.build_link`),
    each end named by ``sides`` or its device's SKU."""
    if link is None:
        return []
    out = [NetworkItem(role, "cable", link.cable, what, fields, link.links_per_cable)]
    for optic, per, port, side in ((link.optic_a, link.links_per_optic_a, link.a, sides[0]),
                                   (link.optic_b, link.links_per_optic_b, link.b, sides[1])):
        if optic is not None:
            out.append(NetworkItem(role, "transceiver", optic, f"{what}, {side or port.device} side", fields, per))
    return out


def network_items(parts: NetworkParts) -> tuple[NetworkItem, ...]:
    """The items of every network ``parts`` builds: switches, then per link kind its cable and the
    optics in both cages (storage: server, file-system and leaf-spine links; in-band: server,
    leaf-spine and peer links; out-of-band: BMC and switch management ports, uplinks)."""
    p = parts
    items: list[NetworkItem] = []
    if p.storage_switch is not None:
        items.append(NetworkItem(ROLE_STORAGE, "switch", p.storage_switch, "storage fabric", ("leaves", "spines")))
        items += _link_items(ROLE_STORAGE, p.storage_node_link, "storage server links", "node_links")
        items += _link_items(ROLE_STORAGE, p.storage_appliance_link, "file-system links", "device_links")
        items += _link_items(ROLE_STORAGE, p.storage_uplink, "storage leaf-spine links", "uplinks",
                            sides=("leaf", "spine"))
    if p.inband_switch is not None:
        items.append(NetworkItem(ROLE_INBAND, "switch", p.inband_switch, "in-band management", ("leaves", "spines")))
        items += _link_items(ROLE_INBAND, p.inband_node_link, "in-band server links", "node_links")
        items += _link_items(ROLE_INBAND, p.inband_uplink, "in-band leaf-spine links", "uplinks",
                            sides=("leaf", "spine"))
        items += _link_items(ROLE_INBAND, p.inband_isl, "in-band leaf peer links", "isl")
    if p.oob_switch is not None:
        items.append(NetworkItem(ROLE_OOB, "switch", p.oob_switch, "out-of-band management", ("leaves", "spines")))
        items += _link_items(ROLE_OOB, p.oob_port_link, "BMC and switch management ports", "node_links",
                             "device_links")
        items += _link_items(ROLE_OOB, p.oob_uplink, "out-of-band uplinks to in-band", "uplinks")
    return tuple(items)


def _switch_detail(size: NetworkSize) -> str:
    if size.spines:
        return f"{size.leaves} leaves, {size.spines} spines"
    return f"{size.leaves} switch" + ("es" if size.leaves != 1 else "")


def network_bom(parts: NetworkParts, sizes: tuple[NetworkSize, ...]) -> tuple[BomLine, ...]:
    """The BOM lines of the networks sized as ``sizes`` (:func:`~designer.topology.networks.size_networks`):
    one line per part and network, its description naming what it serves (and, on the out-of-band
    switches, why their uplinks are not built where they are not), in
    :func:`designer.design.bom.sort_lines` order. Parts of no known price stay unpriced."""
    by_role = {s.role: s for s in sizes}
    merged: dict[tuple[str, str, str], tuple[BomLine, list[str]]] = {}
    for item in network_items(parts):
        size = by_role.get(item.role)
        if size is None:
            continue
        qty = item.count(size)
        if qty <= 0:
            continue
        part = item.part
        what = _switch_detail(size) if item.category == "switch" else f"{qty} for {item.what}"
        if item.category == "switch" and item.role == ROLE_OOB and parts.oob_uplink_problem:
            what += f"; no uplinks to in-band: {parts.oob_uplink_problem}"
        key = (item.category, part.name, item.role)
        if key in merged:
            line, notes = merged[key]
            merged[key] = (BomLine(line.category, line.sku, line.description, line.role, line.quantity + qty,
                                   line.unit_price_usd, line.unit_power_w, line.source), notes + [what])
        else:
            merged[key] = (BomLine(item.category, part.name, part.description, item.role, float(qty),
                                   part.price_usd, part.power_w, part.provenance.source), [what])
    out = []
    for line, notes in merged.values():
        label = {ROLE_STORAGE: "storage fabric", ROLE_INBAND: "in-band", ROLE_OOB: "out-of-band"}[line.role]
        out.append(BomLine(line.category, line.sku, f"{line.description} ({label}: {'; '.join(notes)})", line.role,
                           line.quantity, line.unit_price_usd, line.unit_power_w, line.source))
    return sort_lines(out)
