"""A fabric drawing as data: boxes per tier, the wires between them, and the rail colours.

A :class:`Drawing` is renderer-independent: :mod:`designer.pictures.layout` builds one from a
fabric graph, :mod:`designer.pictures.plot` renders it as Graphviz DOT, PNG or SVG. Every tier
keeps its device total (a box carries its ``count``), so a drawing always says how many leaves,
spines and cores the design buys.
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
    "tier_counts",
    "tier_counts_of",
]

from dataclasses import dataclass
from typing import Iterable

from designer.topology import schema

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


def tier_counts_of(boxes: Iterable[Box]) -> dict[str, int]:
    """Devices per role over ``boxes``."""
    out: dict[str, int] = {}
    for b in boxes:
        out[b.role] = out.get(b.role, 0) + b.count
    return out


def tier_counts(drawing: Drawing) -> dict[str, int]:
    """Devices per role in a drawing (``server``, ``leaf``, ``spine``, ``core``, ``switch``, ``cloud``).

    Examples:
        >>> from designer import topology
        >>> from designer.pictures.layout import drawing_from_graph
        >>> from designer.topology.request import FabricRequest
        >>> g = topology.build_graph(FabricRequest("rail_optimized", 4, 8, 8, 50e9, 64, 50e9, ports_per_cage=2))
        >>> tier_counts(drawing_from_graph(g))
        {'server': 4, 'leaf': 8, 'spine': 1}
    """
    return tier_counts_of(drawing.boxes)
