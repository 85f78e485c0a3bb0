"""Laying a fabric graph out as a drawing: one box per device when a tier is small, per group when not.

Built from the graph of :func:`designer.topology.build_graph`: a tier too large to draw device by
device is grouped by scalable unit, pod, rail, plane, or as a whole, so a 16k-GPU fabric stays
readable. NIC ports fold into their server; parallel links become one wire with a link count.
"""

from __future__ import annotations

__all__ = ["drawing_from_graph"]

import math
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

import networkx as nx

from designer.pictures.drawing import MAX_BOXES, ROLE_SERVER, Box, Drawing, Wire, tier_counts_of
from designer.spec import units
from designer.topology import schema

_TIER_NAMES = {0: "servers", 1: "leaf", 2: "spine", 3: "core"}


@dataclass(slots=True)
class _Device:
    """A server (its NIC ports folded together) or a switch, while grouping."""

    role: str
    tier: int
    index: int  # server number, or build order of a switch
    name: str
    attrs: dict[str, int]
    rails: set[int]


def _ladder(role: str, kind: schema.TopologyKind, domains: bool = False) -> tuple[tuple[str, ...], ...]:
    """Group-by attributes for one role, finest first; ``()`` is one box for the whole tier.

    Rail designs keep rails apart as long as they can (a rail's colour is the point of the
    picture); shared fabrics group by scalable unit, pod or plane. The trays of rack-scale
    systems (``domains``) group by their NVLink domain first: one box per NVL72 rack.
    """
    rails = kind in (schema.TopologyKind.RAIL_OPTIMIZED, schema.TopologyKind.RAIL_ONLY)
    rail_only = kind is schema.TopologyKind.RAIL_ONLY
    if role == ROLE_SERVER:
        if kind is schema.TopologyKind.CLOUD:
            return (("node",), ())
        return (("domain",), ("su",), ("pod",), ()) if domains else (("node",), ("su",), ("pod",), ())
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
    request = g.graph["request"]
    width = schema.width(request.nodes, 4)
    per_domain = getattr(request, "nodes_per_domain", 1)
    for position, (name, data) in enumerate(g.nodes(data=True)):
        role = data[schema.ROLE]
        if role == schema.ROLE_NIC:
            node = data[schema.NODE]
            dev_id = f"node-{node:0{width}d}"
            dev = devices.get(dev_id)
            if dev is None:
                dev = devices[dev_id] = _Device(ROLE_SERVER, 0, node, dev_id,
                                                {"node": node, "su": data[schema.SU], "pod": 0,
                                                 "domain": node // per_domain}, set())
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


_ATTR_WORDS = {"rail": "rail", "su": "SU", "pod": "pod", "plane": "plane", "domain": "NVLink domain"}


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
    for attr in ("domain", "rail", "su", "pod", "plane"):
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
           server_unit: str, domains: bool = False) -> tuple[list[Box], dict[str, str], bool]:
    """Boxes for the devices of one role, finest grouping with at most ``limit`` boxes."""
    role = devices[0].role
    chosen, key = _grouping(devices, limit, _ladder(role, kind, domains))
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
    domains = getattr(request, "nodes_per_domain", 1) > 1
    unit = "instances" if kind is schema.TopologyKind.CLOUD else ("trays" if domains else "servers")
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
        made, mapping, grouped = _group(devs, max(1, limit), kind, unit, domains)
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
    if domains:
        subtitle += (f"; {request.nodes // request.nodes_per_domain} NVLink domains of "
                     f"{request.nodes_per_domain * request.gpus_per_node} GPUs")
    per = "GPU" if kind is schema.TopologyKind.CLOUD else "link"
    subtitle += f"; {units.format_bandwidth(request.nic_rate_Bps)} per {per}"
    return Drawing(title, subtitle, tuple(boxes), _wires(g, boxes, box_of, owner),
                   _headings(boxes, kind, unit, server, switch), aggregated, request.nics_per_node)
