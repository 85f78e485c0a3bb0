"""Fabric drawings: a design's network as boxes per tier and the wires between them.

A :class:`Drawing` is renderer-independent data built from the fabric graph of
:func:`designer.topology.build_graph`: one box per server or switch when a tier is small, one box
per group (scalable unit, pod, rail, plane, or the whole tier) when it is not, so a 16k-GPU fabric
stays readable. Every tier keeps its device total (a box carries its ``count``), so the drawing
always says how many leaves, spines and cores the design buys. :mod:`designer.plot` renders it as
Graphviz DOT (no plotting library needed), PNG or SVG.
"""

from __future__ import annotations

__all__ = [
    "Box",
    "Wire",
    "Drawing",
    "RAIL_COLORS",
    "MULTI_RAIL_COLOR",
    "ROLE_FILLS",
    "MAX_BOXES",
    "ROLE_SERVER",
    "rail_color",
    "fabric_request_for",
    "drawing_from_graph",
    "draw_design",
    "tier_counts",
]

import math
from dataclasses import dataclass, replace
from typing import Callable, Iterable, Mapping

import networkx as nx

from designer import topology, units
from designer.catalog_types import Catalog
from designer.design import Design
from designer.errors import CatalogError
from designer.topology import schema
from designer.topology.request import DEFAULT_RACK_UNITS

ROLE_SERVER = "server"  # a drawing box of servers (or cloud instances); NIC ports fold into it

# Okabe & Ito, "Color Universal Design" (2008): eight colours told apart under the common forms of
# colour blindness. Rail i takes colour i mod 8; wires that carry several rails are grey.
RAIL_COLORS = ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000")
MULTI_RAIL_COLOR = "#999999"
# Fill per drawing role (light tints, so the rail colours of the wires stand out).
ROLE_FILLS = {ROLE_SERVER: "#E8E8E8", schema.ROLE_LEAF: "#DCEBF7", schema.ROLE_SWITCH: "#DCEBF7",
              schema.ROLE_CLOUD: "#DCEBF7", schema.ROLE_SPINE: "#DFF2E1", schema.ROLE_CORE: "#FCE8D5"}
# Most boxes a tier gets before its devices are grouped: per tier 0 (servers), 1 (leaves), 2
# (spines), 3 (cores). 32 keeps a SuperPOD scalable unit (32 servers, 8 rail leaves x 4 SUs)
# node by node; 16 upper boxes keep the full leaf-spine mesh legible (a readability choice).
MAX_BOXES = (32, 32, 16, 16)

_TIER_NAMES = {0: "servers", 1: "leaf", 2: "spine", 3: "core"}


def rail_color(rail: int) -> str:
    """Colour of rail ``rail`` (:data:`RAIL_COLORS`, cycling), grey for "several rails" (-1).

    Examples:
        >>> rail_color(0), rail_color(9), rail_color(-1)
        ('#E69F00', '#56B4E9', '#999999')
    """
    return MULTI_RAIL_COLOR if rail < 0 else RAIL_COLORS[rail % len(RAIL_COLORS)]


@dataclass(frozen=True, slots=True)
class Box:
    """One box of a drawing: a device, or a group of devices of one role.

    Attributes:
        id: Stable identifier (the switch's graph name, ``node-0012``, or ``leaf:rail=3``).
        tier: 0 servers, 1 leaves (or the single switch, or the provider network), 2 spines, 3 cores.
        role: ``server`` or a switch role of :mod:`designer.topology.schema`.
        count: Devices the box stands for.
        label: Text inside the box (may hold a line break).
        rails: Rails of the devices, sorted (empty where rails do not apply).
    """

    id: str
    tier: int
    role: str
    count: int
    label: str
    rails: tuple[int, ...]

    @property
    def color(self) -> str:
        """Outline colour: the rail's colour for a one-rail box, else dark grey."""
        return rail_color(self.rails[0]) if len(self.rails) == 1 and self.role != ROLE_SERVER else "#444444"


@dataclass(frozen=True, slots=True)
class Wire:
    """All links between two boxes: ``a`` is the lower tier's box, ``b`` the upper one's.

    Attributes:
        a: Lower box id.
        b: Upper box id.
        links: Physical links the wire stands for.
        rails: Rails the links carry (empty above the leaves of a shared fabric).
        tier: Link tier (``node-leaf``, ``leaf-spine``, ``spine-core``, ``node-cloud``).
        rate_Bps: Rate of one link, bytes/s, one direction.
    """

    a: str
    b: str
    links: int
    rails: tuple[int, ...]
    tier: str
    rate_Bps: float

    @property
    def color(self) -> str:
        """The rail's colour when the wire carries one rail, grey otherwise."""
        return rail_color(self.rails[0]) if len(self.rails) == 1 else MULTI_RAIL_COLOR


@dataclass(frozen=True, slots=True)
class Drawing:
    """A fabric as boxes per tier and wires, ready to render.

    Attributes:
        title: First heading line.
        subtitle: Second line: device counts per tier.
        boxes: Boxes sorted by tier, then left to right.
        wires: Wires sorted by tier, then by their boxes' order.
        tier_labels: (tier, row heading) for every tier drawn, bottom up.
        aggregated: Whether some tier was drawn as groups rather than device by device.
        rails: Rails of the fabric (NIC ports per server).
        warnings: Differences between the drawing and the design it came from.
    """

    title: str
    subtitle: str
    boxes: tuple[Box, ...]
    wires: tuple[Wire, ...]
    tier_labels: tuple[tuple[int, str], ...]
    aggregated: bool
    rails: int
    warnings: tuple[str, ...] = ()


# ---------------------------------------------------------------- from a design to its fabric


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


# ---------------------------------------------------------------- grouping

@dataclass(slots=True)
class _Device:
    """A server (its NIC ports folded together) or a switch, while grouping."""

    role: str
    tier: int
    index: int  # server number, or build order of a switch
    name: str
    attrs: dict[str, int]
    rails: set[int]


def _ladder(role: str, kind: schema.TopologyKind) -> tuple[tuple[str, ...], ...]:
    """Group-by attributes for one role, finest first; ``()`` is one box for the whole tier.

    Rail designs keep rails apart as long as they can (a rail's colour is the point of the
    picture); shared fabrics group by scalable unit, pod or plane.
    """
    rails = kind in (schema.TopologyKind.RAIL_OPTIMIZED, schema.TopologyKind.RAIL_ONLY)
    rail_only = kind is schema.TopologyKind.RAIL_ONLY
    if role == ROLE_SERVER:
        return (("node",), ()) if kind is schema.TopologyKind.CLOUD else (("node",), ("su",), ("pod",), ())
    if role == schema.ROLE_LEAF:
        return (("name",), ("pod", "rail"), ("rail",), ()) if rails else (("name",), ("pod",), ())
    if role == schema.ROLE_SPINE:
        return (("name",), ("rail", "pod"), ("rail",), ()) if rail_only else (("name",), ("pod",), ())
    if role == schema.ROLE_CORE:
        return (("name",), ("rail",), ()) if rail_only else (("name",), ("plane",), ())
    return (("name",),)  # the single switch, the provider network


def _devices(g: nx.Graph) -> tuple[dict[str, _Device], dict[str, str]]:
    """Devices by id, and the device id of every graph node (a NIC maps to its server)."""
    devices: dict[str, _Device] = {}
    owner: dict[str, str] = {}
    width = schema.width(g.graph["request"].nodes, 4)
    for position, (name, data) in enumerate(g.nodes(data=True)):
        role = data[schema.ROLE]
        if role == schema.ROLE_NIC:
            node = data[schema.NODE]
            dev_id = f"node-{node:0{width}d}"
            dev = devices.get(dev_id)
            if dev is None:
                dev = devices[dev_id] = _Device(ROLE_SERVER, 0, node, dev_id,
                                                {"node": node, "su": data[schema.SU], "pod": 0}, set())
            dev.rails.add(data[schema.RAIL])
        else:
            attrs = {k: data[k] for k in (schema.RAIL, schema.SU, schema.POD, schema.PLANE)}
            attrs["name"] = position
            dev = devices[name] = _Device(role, data[schema.TIER], position, name, attrs,
                                          {data[schema.RAIL]} - {schema.NONE})
        owner[name] = dev.name
    # A server's pod is its leaves' pod (NICs carry none).
    for u, v in g.edges():
        a, b = (u, v) if g.nodes[u][schema.ROLE] == schema.ROLE_NIC else (v, u)
        if g.nodes[a][schema.ROLE] == schema.ROLE_NIC and g.nodes[b][schema.ROLE] == schema.ROLE_LEAF:
            devices[owner[a]].attrs["pod"] = max(0, g.nodes[b][schema.POD])
    return devices, owner


def _span(values: Iterable[int]) -> str:
    """``0..7`` for a contiguous run, ``0..3, 6`` otherwise.

    Examples:
        >>> _span([3]), _span([0, 1, 2, 3]), _span([0, 1, 2, 5, 7, 8])
        ('3', '0..3', '0..2, 5, 7..8')
    """
    out: list[str] = []
    run: list[int] = []
    for v in sorted(set(values)):
        if run and v != run[-1] + 1:
            out.append(str(run[0]) if len(run) == 1 else f"{run[0]}..{run[-1]}")
            run = []
        run.append(v)
    if run:
        out.append(str(run[0]) if len(run) == 1 else f"{run[0]}..{run[-1]}")
    return ", ".join(out)


_ATTR_WORDS = {"rail": "rail", "su": "SU", "pod": "pod", "plane": "plane"}


def _short_name(dev: _Device) -> str:
    """A switch's name without its role prefix, on two lines when it has two parts.

    Examples:
        >>> _short_name(_Device("leaf", 1, 0, "leaf-su00-r3", {}, set()))
        'su00\\nr3'
        >>> _short_name(_Device("spine", 2, 0, "spine-07", {}, set()))
        '07'
    """
    head, _, tail = dev.name.partition("-")
    if not tail or head not in schema.ROLES:
        return dev.name
    first, sep, last = tail.rpartition("-")
    return f"{first}\n{last}" if sep else tail


def _plural(count: int, unit: str) -> str:
    """``1 server``, ``32 servers`` (``unit`` is the plural)."""
    return f"{count} {unit[:-1] if count == 1 else unit}"


def _group_label(role: str, members: list[_Device], key_attrs: tuple[str, ...], unit: str) -> str:
    """``leaf x 64\n(rail 3)`` or ``128 servers\npod 1``: the count, then the grouping key's values."""
    # Switch groups always show their rails (the colour key); servers only the grouping key.
    shown = set(key_attrs) if role == ROLE_SERVER else {"rail", *key_attrs}
    parts = []
    for attr in ("rail", "su", "pod", "plane"):
        values = {m.attrs[attr] for m in members if m.attrs.get(attr, schema.NONE) != schema.NONE}
        if values and attr in shown and unit != "instances":
            parts.append(f"{_ATTR_WORDS[attr]} {_span(values)}")
    if role == ROLE_SERVER:
        return _plural(len(members), unit) + (f"\n{', '.join(parts)}" if parts else "")
    return f"{role} x {len(members)}" + (f"\n({', '.join(parts)})" if parts else "")


def _grouping(devices: list[_Device], limit: int, ladder: tuple[tuple[str, ...], ...]
              ) -> tuple[tuple[str, ...], Callable[[_Device], tuple[int, ...]]]:
    """The finest rung of ``ladder`` with at most ``limit`` groups, and its key function.

    When that rung leaves a single group but the finer one had too many (64 SUs of one pod), the
    finer keys are cut into runs instead, at most ``limit // 2`` of them, so the tier still shows
    its structure.
    """
    finer: tuple[str, ...] | None = None
    for attrs in ladder:
        def key(d: _Device, attrs: tuple[str, ...] = attrs) -> tuple[int, ...]:
            return tuple(d.attrs.get(a, 0) for a in attrs)
        distinct = sorted({key(d) for d in devices})
        if len(distinct) <= limit:
            if len(distinct) > 1 or finer is None or len(devices) == 1:
                return attrs, key
            break
        finer = attrs
    assert finer is not None, "the last rung of a ladder is one group"
    fine_keys = sorted({tuple(d.attrs.get(a, 0) for a in finer) for d in devices})
    size = math.ceil(len(fine_keys) / max(1, limit // 2))
    run = {k: i // size for i, k in enumerate(fine_keys)}
    return finer, lambda d: (run[tuple(d.attrs.get(a, 0) for a in finer)],)


def _group(devices: list[_Device], limit: int, kind: schema.TopologyKind,
           server_unit: str) -> tuple[list[Box], dict[str, str], bool]:
    """Boxes for the devices of one role, finest grouping with at most ``limit`` boxes."""
    role = devices[0].role
    chosen, key = _grouping(devices, limit, _ladder(role, kind))
    groups: dict[tuple[int, ...], list[_Device]] = {}
    for dev in sorted(devices, key=lambda d: d.index):
        groups.setdefault(key(dev), []).append(dev)
    boxes, box_of = [], {}
    detailed = chosen in (("name",), ("node",)) and len(groups) == len(devices)
    for gkey in sorted(groups):
        members = groups[gkey]
        rails = tuple(sorted(set().union(*(m.rails for m in members)) - {schema.NONE}))
        if detailed:
            dev = members[0]
            box_id = dev.name
            label = f"n{dev.index}" if role == ROLE_SERVER else _short_name(dev)
        else:
            box_id = f"{role}:" + ("all" if not chosen else ",".join(
                f"{a}={_span(m.attrs.get(a, 0) for m in members)}" for a in chosen))
            label = _group_label(role, members, chosen, server_unit)
        boxes.append(Box(box_id, members[0].tier, role, len(members), label, rails))
        for m in members:
            box_of[m.name] = box_id
    return boxes, box_of, not detailed


def _wires(g: nx.Graph, boxes: list[Box], box_of: Mapping[str, str], owner: Mapping[str, str]) -> tuple[Wire, ...]:
    """One wire per pair of boxes, lower tier first, with the links and rails between them."""
    order = {b.id: (b.tier, i) for i, b in enumerate(boxes)}
    acc: dict[tuple[str, str], list] = {}
    for u, v, data in g.edges(data=True):
        bu, bv = box_of[owner[u]], box_of[owner[v]]
        if order[bu] > order[bv]:
            u, v, bu, bv = v, u, bv, bu
        entry = acc.setdefault((bu, bv), [0, set(), data["tier"], data[schema.RATE]])
        entry[0] += data[schema.LINKS]
        # A NIC link carries its NIC's rail; a switch link only when both ends serve one rail
        # (rail-only). Rail-optimized spines mix rails, so their links are grey.
        rail_u, rail_v = g.nodes[u][schema.RAIL], g.nodes[v][schema.RAIL]
        if rail_u != schema.NONE and (g.nodes[u][schema.ROLE] == schema.ROLE_NIC or rail_u == rail_v):
            entry[1].add(rail_u)
    ranked = sorted(acc.items(), key=lambda kv: (order[kv[0][0]], order[kv[0][1]]))
    return tuple(Wire(a, b, e[0], tuple(sorted(e[1])), e[2], e[3]) for (a, b), e in ranked)


def _headings(boxes: list[Box], kind: schema.TopologyKind, unit: str, server: str,
              switch: str) -> tuple[tuple[int, str], ...]:
    out = []
    for tier in sorted({b.tier for b in boxes}):
        total = sum(b.count for b in boxes if b.tier == tier)
        if tier == 0:
            out.append((0, f"{unit}: {total} x {server}"))
        elif kind is schema.TopologyKind.CLOUD:
            out.append((tier, "provider network"))
        else:
            role = schema.ROLE_SWITCH if kind is schema.TopologyKind.SINGLE_SWITCH else _TIER_NAMES[tier]
            out.append((tier, f"{role}: {total}" + (f" x {switch}" if switch else "")))
    return tuple(out)


def drawing_from_graph(g: nx.Graph, *, title: str = "", server: str = "server", switch: str = "",
                       max_boxes: tuple[int, int, int, int] = MAX_BOXES) -> Drawing:
    """Group a fabric graph into a :class:`Drawing`.

    Each role picks the finest grouping of its ladder (device, then scalable unit / pod / rail /
    plane, then the whole tier) whose box count stays within ``max_boxes[tier]``; NIC ports fold
    into their server, and parallel links between two boxes become one wire with a link count.

    Args:
        g: A graph from :func:`designer.topology.build_graph` (``g.graph["request"]`` is read).
        title: Heading of the drawing.
        server: Catalog name of the servers (or instances), for the row headings.
        switch: Catalog name of the switches, for the row headings.
        max_boxes: Most boxes per tier (servers, leaves, spines, cores) before grouping.

    Returns:
        The drawing; the sum of box counts per tier equals the fabric's device counts.
    """
    request = g.graph["request"]
    kind = request.topology
    unit = "instances" if kind is schema.TopologyKind.CLOUD else "servers"
    devices, owner = _devices(g)
    by_role: dict[str, list[_Device]] = {}
    for dev in devices.values():
        by_role.setdefault(dev.role, []).append(dev)
    boxes: list[Box] = []
    box_of: dict[str, str] = {}
    aggregated = False
    for role in sorted(by_role, key=lambda r: (by_role[r][0].tier, r)):
        devs = by_role[role]
        limit = max_boxes[min(devs[0].tier, len(max_boxes) - 1)]
        made, mapping, grouped = _group(devs, max(1, limit), kind, unit)
        boxes.extend(made)
        box_of.update(mapping)
        aggregated = aggregated or grouped
    counts = tier_counts_of(boxes)
    words = {ROLE_SERVER: unit, schema.ROLE_SWITCH: "switch", schema.ROLE_LEAF: "leaf",
             schema.ROLE_SPINE: "spine", schema.ROLE_CORE: "core"}
    subtitle = ", ".join(_plural(counts[r], w) if r == ROLE_SERVER else f"{counts[r]} {w}"
                         for r, w in words.items() if counts.get(r))
    if request.nics_per_node > 1 and kind is not schema.TopologyKind.CLOUD:
        shared = {schema.TopologyKind.FAT_TREE: "per server, on one leaf",
                  schema.TopologyKind.SINGLE_SWITCH: "per server, on the switch"}.get(kind, "(coloured)")
        subtitle += f"; {request.nics_per_node} rails {shared}"
    per = "GPU" if kind is schema.TopologyKind.CLOUD else "link"
    subtitle += f"; {units.format_bandwidth(request.nic_rate_Bps)} per {per}"
    return Drawing(title, subtitle, tuple(boxes), _wires(g, boxes, box_of, owner),
                   _headings(boxes, kind, unit, server, switch), aggregated, request.nics_per_node)


def tier_counts_of(boxes: Iterable[Box]) -> dict[str, int]:
    """Devices per role over ``boxes``."""
    out: dict[str, int] = {}
    for b in boxes:
        out[b.role] = out.get(b.role, 0) + b.count
    return out


def tier_counts(drawing: Drawing) -> dict[str, int]:
    """Devices per role in a drawing (``server``, ``leaf``, ``spine``, ``core``, ``switch``, ``cloud``).

    Examples:
        >>> from designer.topology.request import FabricRequest
        >>> g = topology.build_graph(FabricRequest("rail_optimized", 4, 8, 8, 50e9, 64, 50e9, ports_per_cage=2))
        >>> tier_counts(drawing_from_graph(g))
        {'server': 4, 'leaf': 8, 'spine': 4}
    """
    return tier_counts_of(drawing.boxes)


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
    """Switch counts of the drawing that differ from the design's bill of materials."""
    listed: dict[str, int] = {}
    for line in design.bom:
        if line.category == "switch":
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
