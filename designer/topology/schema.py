"""Closed sets and the graph attribute schema shared by every topology builder.

Graphs are plain ``networkx.Graph`` objects. Every builder writes the same attributes, under the
keys defined here, and tests and measurement code read them through these constants.

Node attributes:

* ``role`` (str): one of :data:`ROLES`: ``"nic"`` (one node per compute NIC port of a server),
  ``"leaf"``, ``"spine"``, ``"core"``, ``"switch"`` (the one switch of a single-switch fabric) or
  ``"cloud"`` (a provider's network, one node).
* ``tier`` (int): 0 for NICs, 1 for leaves / the single switch / the cloud node, 2 spines, 3 cores.
* ``rail`` (int): rail (NIC index inside the server) of a NIC, of a rail leaf, and of every switch
  of a rail-only rail fabric; -1 where it does not apply.
* ``su`` (int): scalable unit of a NIC or leaf (fat tree: the leaf group); -1 for upper tiers.
* ``pod`` (int): pod of a leaf or spine in a three-tier fabric (0 in smaller ones); -1 for cores.
* ``plane`` (int): spine index inside its pod, which is also the core plane it joins; -1 elsewhere.
* ``node`` (int): server index of a NIC; -1 for switches.
* ``cage`` (int): index of the server cage that holds a NIC port; -1 for switches.
* ``ports`` (int): logical switch ports at the link rate (switches only; 0 for NICs and cloud).
* ``cages`` (int): physical cages of a switch (``ports / ports_per_cage``).
* ``reserved_ports`` (int): leaf ports taken by management appliances (UFM); 0 elsewhere.
* ``rack`` (str): rack the device sits in: ``rack-0003`` for server racks (and top-of-rack
  leaves), ``net-row002-00`` for leaf racks of a row, ``net-core-000`` for spine/core racks.

Edge attributes:

* ``rate_Bps`` (float): rate of one link, bytes/s, one direction.
* ``links`` (int): parallel links the edge stands for (a leaf with 2 links to a spine is one edge).
* ``tier`` (str): one of :data:`LINK_TIERS`.
* ``media`` (str): a :class:`MediaClass` value.
* ``length_m`` (float): the cable run assumed for the tier (worst case of the floor layout).

Graph attributes: ``request`` (the :class:`~designer.topology.request.FabricRequest`) and
``topology`` (its :class:`TopologyKind` value).
"""

from __future__ import annotations

__all__ = [
    "TopologyKind",
    "MediaClass",
    "ROLE",
    "TIER",
    "RAIL",
    "SU",
    "POD",
    "PLANE",
    "NODE",
    "CAGE",
    "PORTS",
    "CAGES",
    "RESERVED",
    "RACK",
    "RATE",
    "LINKS",
    "MEDIA",
    "LENGTH",
    "ROLE_NIC",
    "ROLE_LEAF",
    "ROLE_SPINE",
    "ROLE_CORE",
    "ROLE_SWITCH",
    "ROLE_CLOUD",
    "ROLES",
    "SWITCH_ROLES",
    "NODE_LEAF",
    "LEAF_SPINE",
    "SPINE_CORE",
    "NODE_CLOUD",
    "LINK_TIERS",
    "NONE",
    "nic_name",
    "leaf_name",
    "spine_name",
    "core_name",
    "width",
]

from enum import Enum


class TopologyKind(str, Enum):
    """How the compute NICs are wired together."""

    SINGLE_SWITCH = "single_switch"  # every NIC on one switch
    FAT_TREE = "fat_tree"  # leaf-spine(-core) Clos, a server's NICs on one leaf (top of rack)
    RAIL_OPTIMIZED = "rail_optimized"  # NVIDIA DGX SuperPOD: NIC i of an SU on the leaf of rail i
    RAIL_ONLY = "rail_only"  # one Clos per rail, rails never joined (arXiv:2307.12169)
    CLOUD = "cloud"  # the provider's network, nothing to buy


class MediaClass(str, Enum):
    """Reach class of a link, decided by the floor layout (see ``layout``)."""

    COPPER = "copper"  # inside one rack: passive DAC (< 3 m)
    MULTIMODE = "multimode"  # across a row or a small hall: transceivers + multimode fiber (<= 50 m)
    SINGLE_MODE = "single-mode"  # longer runs: transceivers + single-mode fiber
    PROVIDER = "provider"  # a cloud provider's network: nothing to buy


# Node attribute keys.
ROLE = "role"
TIER = "tier"
RAIL = "rail"
SU = "su"
POD = "pod"
PLANE = "plane"
NODE = "node"
CAGE = "cage"
PORTS = "ports"
CAGES = "cages"
RESERVED = "reserved_ports"
RACK = "rack"
# Edge attribute keys (``tier`` is shared with nodes: an int there, a string on edges).
RATE = "rate_Bps"
LINKS = "links"
MEDIA = "media"
LENGTH = "length_m"

ROLE_NIC = "nic"
ROLE_LEAF = "leaf"
ROLE_SPINE = "spine"
ROLE_CORE = "core"
ROLE_SWITCH = "switch"
ROLE_CLOUD = "cloud"
ROLES = (ROLE_NIC, ROLE_LEAF, ROLE_SPINE, ROLE_CORE, ROLE_SWITCH, ROLE_CLOUD)
SWITCH_ROLES = (ROLE_LEAF, ROLE_SPINE, ROLE_CORE, ROLE_SWITCH)

NODE_LEAF = "node-leaf"
LEAF_SPINE = "leaf-spine"
SPINE_CORE = "spine-core"
NODE_CLOUD = "node-cloud"
LINK_TIERS = (NODE_LEAF, LEAF_SPINE, SPINE_CORE, NODE_CLOUD)

NONE = -1  # "does not apply" for integer attributes (keeps graphs exportable to GraphML)


def width(count: int, minimum: int) -> int:
    """Digits needed to zero-pad indices ``0..count-1`` (at least ``minimum``) so names sort."""
    return max(minimum, len(str(max(count - 1, 0))))


def nic_name(node: int, rail: int, nodes: int, rails: int) -> str:
    """``node-0012-nic3``: NIC port ``rail`` of server ``node``.

    Examples:
        >>> nic_name(12, 3, 128, 8)
        'node-0012-nic3'
    """
    return f"node-{node:0{width(nodes, 4)}d}-nic{rail:0{width(rails, 1)}d}"


def leaf_name(index: int, count: int, *, su: int = NONE, rail: int = NONE, sus: int = 1, rails: int = 1) -> str:
    """``leaf-su00-r3`` for rail leaves, ``leaf-005`` for fat-tree leaves.

    Examples:
        >>> leaf_name(27, 32, su=3, rail=3, sus=4, rails=8)
        'leaf-su03-r3'
        >>> leaf_name(5, 40)
        'leaf-005'
    """
    if rail != NONE:
        return f"leaf-su{su:0{width(sus, 2)}d}-r{rail:0{width(rails, 1)}d}"
    return f"leaf-{index:0{width(count, 3)}d}"


def spine_name(index: int, count: int, *, pod: int = NONE, pods: int = 1, rail: int = NONE,
               rails: int = 1) -> str:
    """``spine-07``, ``spine-p01-07`` (three tiers), ``spine-r3-07`` (rail-only).

    Examples:
        >>> spine_name(7, 16)
        'spine-07'
        >>> spine_name(7, 32, pod=1, pods=4)
        'spine-p01-07'
    """
    prefix = "spine" if rail == NONE else f"spine-r{rail:0{width(rails, 1)}d}"
    if pod != NONE:
        prefix += f"-p{pod:0{width(pods, 2)}d}"
    return f"{prefix}-{index:0{width(count, 2)}d}"


def core_name(index: int, count: int, *, rail: int = NONE, rails: int = 1) -> str:
    """``core-003`` (``core-r3-003`` in a rail-only fabric).

    Examples:
        >>> core_name(3, 64)
        'core-003'
    """
    prefix = "core" if rail == NONE else f"core-r{rail:0{width(rails, 1)}d}"
    return f"{prefix}-{index:0{width(count, 3)}d}"
