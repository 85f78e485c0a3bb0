"""Bill-of-materials lines of the storage, in-band and out-of-band networks, and what each item
of them is per link or per switch (the same table prices them in the integer program).

Every line carries the network's role (``storage``, ``inband``, ``oob``); a network's switches are
one line whose description says how many are leaves and spines (docs/topology.md).
"""

from __future__ import annotations

__all__ = ["NetworkItem", "network_items", "network_bom"]

from dataclasses import dataclass, replace

from designer.catalog.types import Cable, Switch, Transceiver
from designer.design.bom import BomLine, sort_lines
from designer.topology.links import LinkParts
from designer.topology.materials import cable_fit, optic_fit
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
    # What fits where on its BOM line (:func:`~designer.topology.materials.optic_fit`, ``cable_fit``).
    fit: tuple[tuple[str, object], ...] = ()

    def count(self, size: NetworkSize) -> int:
        """How many of the part ``size`` needs: ``ceil(sum of fields / per)``."""
        return -(-sum(getattr(size, f) for f in self.fields) // self.per)


def _link_items(role: str, link: LinkParts | None, what: str, *fields: str,
                sides: tuple[str, str] = ("", "")) -> list[NetworkItem]:
    """The cable and the optic at each end of ``link`` (:func:`~designer.topology.links.build_link`),
    each end named by ``sides`` or its device's SKU."""
    if link is None:
        return []
    out = [NetworkItem(role, "cable", link.cable, what, fields, link.links_per_cable,
                       tuple(cable_fit(link).items()))]
    for optic, per, port, side in ((link.optic_a, link.links_per_optic_a, link.a, sides[0]),
                                   (link.optic_b, link.links_per_optic_b, link.b, sides[1])):
        if optic is not None:
            out.append(NetworkItem(role, "transceiver", optic, f"{what}, {side or port.device} side", fields, per,
                                   tuple(optic_fit(optic, link, port).items())))
    return out


def _management_items(parts: NetworkParts, managed: tuple[tuple[str, str], ...]) -> list[NetworkItem]:
    """The out-of-band network's Cat6 cables: one per BMC (from the server) and one per managed
    switch's management port, a line per kind of switch (``managed``: (SKU, NetworkSize field of
    the out-of-band size counting them)), each naming its two ends."""
    link = parts.oob_port_link
    if link is None:
        return []
    out = _link_items(ROLE_OOB, link, "BMC ports", "node_links")
    for sku, field in managed:
        fit = dict(cable_fit(link))
        fit["ends"] = (sku, link.b.device)
        out.append(NetworkItem(ROLE_OOB, "cable", link.cable, f"{sku} management ports", (field,),
                               link.links_per_cable, tuple(fit.items())))
    return out


def network_items(parts: NetworkParts, managed: tuple[tuple[str, str], ...] = ()) -> tuple[NetworkItem, ...]:
    """The items of every network ``parts`` builds: switches, then per link kind its cable and the
    optics in both cages (storage: server, file-system and leaf-spine links; in-band: server,
    leaf-spine and peer links; out-of-band: BMC and switch management ports, uplinks).

    ``managed`` splits the switch management cables by switch (:func:`network_bom`); empty, they
    are one item over ``device_links`` (what the integer program counts)."""
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
        if managed:
            items += _management_items(p, managed)
        else:
            items += _link_items(ROLE_OOB, p.oob_port_link, "BMC and switch management ports", "node_links",
                                 "device_links")
        items += _link_items(ROLE_OOB, p.oob_uplink, "out-of-band uplinks to in-band", "uplinks")
    return tuple(items)


def _switch_detail(size: NetworkSize) -> str:
    if size.spines:
        return f"{size.leaves} leaves, {size.spines} spines"
    return f"{size.leaves} switch" + ("es" if size.leaves != 1 else "")


def network_bom(parts: NetworkParts, sizes: tuple[NetworkSize, ...], compute_switch: str = "") -> tuple[BomLine, ...]:
    """The BOM lines of the networks sized as ``sizes`` (:func:`~designer.topology.networks.size_networks`):
    one line per part, network and fit (a cable line per pair of ``ends``, an optic line per
    device it plugs into), its description naming what it serves (and, on the out-of-band
    switches, why their uplinks are not built where they are not), in
    :func:`designer.design.bom.sort_lines` order. Parts of no known price stay unpriced.

    Every transceiver and cable line carries what fits where (``connector``, ``protocol``,
    ``lanes``, ``lane_gbps``, ``media``, ``plugs_into`` / ``ends``), so ``bom --check`` checks
    it. The out-of-band management cables are split by the switch they manage: the compute
    fabric's (``compute_switch``), the storage and in-band networks'.
    """
    by_role = {s.role: s for s in sizes}
    managed, extra = _managed(parts, by_role, compute_switch)
    for role, size in list(by_role.items()):
        if role == ROLE_OOB:
            by_role[role] = replace(size, **extra)
    merged: dict[tuple, tuple[BomLine, list[str]]] = {}
    for item in network_items(parts, managed):
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
        fit = dict(item.fit)
        key = (item.category, part.name, item.role, fit.get("plugs_into", ""), fit.get("ends", ()))
        if key in merged:
            line, notes = merged[key]
            merged[key] = (replace(line, quantity=line.quantity + qty), notes + [what])
        else:
            merged[key] = (BomLine(item.category, part.name, part.description, item.role, float(qty),
                                   part.price_usd, part.power_w, part.provenance.source, **fit), [what])
    out = []
    for line, notes in merged.values():
        label = {ROLE_STORAGE: "storage fabric", ROLE_INBAND: "in-band", ROLE_OOB: "out-of-band"}[line.role]
        out.append(replace(line, description=f"{line.description} ({label}: {'; '.join(notes)})"))
    return sort_lines(out)


# NetworkSize fields the out-of-band size is given per kind of managed switch (their sum is its
# device_links, which the forms and the integer program count as one).
_MANAGED_FIELDS = ("managed_compute", "managed_storage", "managed_inband")


def _managed(parts: NetworkParts, by_role: dict[str, NetworkSize], compute_switch: str
             ) -> tuple[tuple[tuple[str, str], ...], dict[str, int]]:
    """(switch SKU, count field) of each kind of switch the out-of-band network manages, and the
    counts: the storage and in-band networks' switches, the compute fabric's the rest."""
    oob = by_role.get(ROLE_OOB)
    if oob is None or not compute_switch:
        return (), {}
    counts = {"managed_storage": by_role[ROLE_STORAGE].switches if ROLE_STORAGE in by_role else 0,
              "managed_inband": by_role[ROLE_INBAND].switches if ROLE_INBAND in by_role else 0}
    counts["managed_compute"] = oob.device_links - counts["managed_storage"] - counts["managed_inband"]
    skus = {"managed_compute": compute_switch,
            "managed_storage": parts.storage_switch.name if parts.storage_switch else "",
            "managed_inband": parts.inband_switch.name if parts.inband_switch else ""}
    return tuple((skus[f], f) for f in _MANAGED_FIELDS if counts[f] > 0 and skus[f]), counts
