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
from designer.topology.networks import ROLE_INBAND, ROLE_OOB, ROLE_STORAGE, NetworkParts, NetworkSize

Part = Switch | Cable | Transceiver


@dataclass(frozen=True, slots=True)
class NetworkItem:
    """One kind of part of a network and how many of it a :class:`NetworkSize` needs."""

    role: str
    category: str  # switch | transceiver | cable
    part: Part
    what: str  # what the item is for, in the BOM line's description
    fields: tuple[str, ...]  # the NetworkSize counts whose sum is its quantity

    def count(self, size: NetworkSize) -> int:
        """How many of the part ``size`` needs."""
        return sum(getattr(size, f) for f in self.fields)


def network_items(parts: NetworkParts) -> tuple[NetworkItem, ...]:
    """The items of every network ``parts`` builds: switches, then per link kind its optics and
    cable (storage: an optic at each end and a fiber per link, twin-port optics in switch cages;
    in-band: AOC per link, DAC per peer link; out-of-band: Cat6 per port, AOC per uplink)."""
    p = parts
    items: list[NetworkItem] = []

    def add(role: str, category: str, part: Part | None, what: str, *fields: str) -> None:
        if part is not None:
            items.append(NetworkItem(role, category, part, what, fields))

    if p.storage_switch is not None:
        add(ROLE_STORAGE, "switch", p.storage_switch, "storage fabric", "leaves", "spines")
        add(ROLE_STORAGE, "transceiver", p.storage_switch_optic, "storage switch cages", "switch_optics")
        add(ROLE_STORAGE, "transceiver", p.storage_node_optic, "storage server ports", "node_links")
        add(ROLE_STORAGE, "cable", p.storage_node_fiber, "storage server links", "node_links")
        add(ROLE_STORAGE, "transceiver", p.storage_appliance_optic, "file-system ports", "device_links")
        add(ROLE_STORAGE, "cable", p.storage_appliance_fiber, "file-system links", "device_links")
        add(ROLE_STORAGE, "cable", p.storage_uplink_fiber, "storage leaf-spine links", "uplinks")
    if p.inband_switch is not None:
        add(ROLE_INBAND, "switch", p.inband_switch, "in-band management", "leaves", "spines")
        add(ROLE_INBAND, "cable", p.inband_link, "in-band server links", "node_links")
        add(ROLE_INBAND, "cable", p.inband_link, "in-band leaf-spine links", "uplinks")
        add(ROLE_INBAND, "cable", p.inband_isl, "in-band leaf peer links", "isl")
    if p.oob_switch is not None:
        add(ROLE_OOB, "switch", p.oob_switch, "out-of-band management", "leaves", "spines")
        add(ROLE_OOB, "cable", p.oob_patch, "BMC and switch management ports",
            "node_links", "device_links")
        add(ROLE_OOB, "cable", p.oob_uplink, "out-of-band uplinks to in-band", "uplinks")
    return tuple(items)


def _switch_detail(size: NetworkSize) -> str:
    if size.spines:
        return f"{size.leaves} leaves, {size.spines} spines"
    return f"{size.leaves} switch" + ("es" if size.leaves != 1 else "")


def network_bom(parts: NetworkParts, sizes: tuple[NetworkSize, ...]) -> tuple[BomLine, ...]:
    """The BOM lines of the networks sized as ``sizes`` (:func:`~designer.topology.networks.size_networks`):
    one line per part and network, its description naming what it serves, in
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
