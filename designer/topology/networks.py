"""The cluster's other networks: the storage fabric, in-band and out-of-band management, sized in
closed form from the node count (NVIDIA DGX SuperPOD reference architectures).

Three networks besides the compute fabric (RA-11333-001 "Network Fabrics"; docs/topology.md,
"Storage and management networks"):

* **storage** (BOM role ``storage``): the servers' storage ports and the file system's ports on a
  leaf/spine fabric of the protocol the server's RA gives (``Server.storage_protocol``). Server
  leaves run near 4:3 (``floor(4k/7)`` ports down, ``ceil(3/4)`` of the server ports up), storage
  leaves 1:1 (``k/2`` down, one uplink per storage port), spines take every uplink; one switch
  when every port fits on it.
* **inband** (``inband``): each server's in-band ports, bonded over a pair of leaves (MLAG), and
  the out-of-band switches' uplinks. Leaf pairs keep 2 ports for their peer links; once there is
  more than one pair, every leaf keeps 4 uplinks to a pair of spines (RA-11333 Table 8: 6 leaves,
  24 leaf-core links, 6 peer links, 2 cores).
* **oob** (``oob``): 1 GbE RJ45 for every BMC and every switch's management port, at the RA's
  density of one switch per 16 servers' BMCs (Table 7: 8 SN2201 for 127 DGX H100) or more when the
  ports need it; two 100G uplinks per switch into the in-band network (Table 8: 16).

At RA-11333's 4-SU pod (127 DGX H100, 12 storage appliances of 8 ports) the forms give the
RA's Table 7 counts: 16 storage switches (8 server leaves, 3 storage leaves, 5 spines), 8 in-band
(6 leaves, 2 spines) and 8 out-of-band switches.

Every count is a ceiling of a linear form in the node count, the storage units and the other
networks' switches, so the integer program states them exactly (:mod:`designer.optimize.networks`).
"""

from __future__ import annotations

__all__ = ["ROLE_STORAGE", "ROLE_INBAND", "ROLE_OOB", "NETWORK_ROLES", "Networks", "NetworkParts",
           "NetworkSize", "network_parts", "storage_size", "inband_size", "oob_size", "size_networks",
           "storage_leaf_down", "BMC_PER_OOB_SWITCH", "OOB_UPLINKS", "INBAND_ISL_PER_PAIR",
           "INBAND_UPLINKS_PER_LEAF"]

import math
from dataclasses import dataclass

from designer.catalog.types import Cable, Catalog, MediaKind, Protocol, Server, Storage, Switch, Transceiver
from designer.errors import CatalogError
from designer.topology.materials import pick_cable, pick_transceiver

ROLE_STORAGE, ROLE_INBAND, ROLE_OOB = "storage", "inband", "oob"
NETWORK_ROLES = (ROLE_STORAGE, ROLE_INBAND, ROLE_OOB)

# RA-11333 Table 7: 8 out-of-band SN2201 for 127 DGX H100, one per 16 systems (the rest of its 48
# ports take the PDUs, switches and servers around them).
BMC_PER_OOB_SWITCH = 16
# RA-11333 Table 8: 16 x 100G uplinks for 8 out-of-band switches.
OOB_UPLINKS = 2
OOB_UPLINK_BPS = 100e9 / 8  # the SN2201's QSFP28 uplink ports
# RA-11333 Table 8: 6 leaf peer links (3 pairs) and 24 leaf-core links (6 leaves).
INBAND_ISL_PER_PAIR = 2
INBAND_UPLINKS_PER_LEAF = 4
# RA-11333: "Node in-band connections are 100 Gbps and bonded".
_INBAND_BPS = 100e9 / 8
# A server whose catalog entry lists no storage adapter: one 100 GbE port for storage and one
# in-band (assumed; NVIDIA's enterprise RA gives each HGX node a converged 2 x 200 GbE pair).
_DEFAULT_PORT_BPS = 100e9 / 8
# Runs between a rack and the network racks: multimode optics and AOC reach 30 m or more.
_RUN_M = 30.0
_IN_RACK_M = 3.0
_TOL = 1.0
# The switches each network's RA names, tried first (then the cheapest per port that fits):
# RA-11333 (QM9700 storage, SN4600C in-band, SN2201 out-of-band); B200/GB200 RAs (SN5600 Ethernet).
_RA_SWITCHES = {ROLE_STORAGE: ("nvidia-qm9700", "nvidia-sn5600"), ROLE_INBAND: ("nvidia-sn4600c", "nvidia-sn5600"),
                ROLE_OOB: ("nvidia-sn2201",)}


@dataclass(frozen=True, slots=True)
class Networks:
    """Which of the three networks an on-prem design has (the spec's ``networks:``)."""

    storage: bool = True
    inband: bool = True
    oob: bool = True

    @property
    def any(self) -> bool:
        return self.storage or self.inband or self.oob


@dataclass(frozen=True, slots=True)
class NetworkParts:
    """The ports one server and one storage unit bring, and the parts each network is built of.

    A network whose switch is None is not built. Rates are per port, bytes/s. ``*_k`` is the
    switch's logical ports at the rate its links run, ``*_per_cage`` those ports per cage.
    """

    storage_ports: int = 0
    storage_rate_Bps: float = 0.0
    appliance_ports: int = 0
    appliance_rate_Bps: float = 0.0
    inband_ports: int = 0
    inband_rate_Bps: float = 0.0
    bmc_ports: int = 0
    storage_switch: Switch | None = None
    storage_k: int = 0
    storage_per_cage: int = 1
    storage_port_Bps: float = 0.0  # the rate its switch ports and uplinks run at
    storage_node_optic: Transceiver | None = None
    storage_node_fiber: Cable | None = None
    storage_appliance_optic: Transceiver | None = None
    storage_appliance_fiber: Cable | None = None
    storage_switch_optic: Transceiver | None = None
    storage_uplink_fiber: Cable | None = None
    inband_switch: Switch | None = None
    inband_k: int = 0
    inband_link: Cable | None = None  # server links and leaf-spine links
    inband_isl: Cable | None = None
    oob_switch: Switch | None = None
    oob_k: int = 0
    oob_patch: Cable | None = None
    oob_uplink: Cable | None = None


@dataclass(frozen=True, slots=True)
class NetworkSize:
    """Switch and link counts of one network.

    ``device_links``: storage, the file system's ports; oob, the switches' management ports.
    ``switch_optics``: storage, transceivers in the switches' cages. ``isl``: in-band peer links.
    """

    role: str
    leaves: int = 0
    spines: int = 0
    node_links: int = 0
    device_links: int = 0
    uplinks: int = 0
    isl: int = 0
    switch_optics: int = 0

    @property
    def switches(self) -> int:
        return self.leaves + self.spines


def storage_leaf_down(k: int) -> int:
    """Server ports per storage-fabric leaf: ``floor(4k/7)``, so its ``ceil(3/4)`` uplinks fit
    (RA-11333: DGX connections "slightly oversubscribed with a ratio near 4:3").

    Examples:
        >>> storage_leaf_down(64)
        36
    """
    return (4 * k) // 7


def storage_size(node_ports: int, appliance_ports: int, k: int, per_cage: int) -> NetworkSize:
    """The storage fabric for ``node_ports`` server and ``appliance_ports`` file-system ports on
    ``k``-port switches.

    Model: one switch when all ports fit on it; else server leaves ``ceil(Pn / floor(4k/7))`` with
    ``ceil(3 Pn / 4)`` uplinks, storage leaves ``ceil(Pa / (k/2))`` with ``Pa`` uplinks (1:1) and
    spines ``ceil(uplinks / k)``. Switch optics fill ``ceil(switch port ends / per_cage)`` cages.

    Examples:
        >>> s = storage_size(254, 96, 64, 2)   # RA-11333 4 SU: 127 DGX H100, 12 appliances
        >>> (s.leaves, s.spines, s.switches)
        (11, 5, 16)
    """
    total = node_ports + appliance_ports
    if total == 0:
        return NetworkSize(ROLE_STORAGE)
    if total <= k:
        return NetworkSize(ROLE_STORAGE, 1, 0, node_ports, appliance_ports, 0, 0, math.ceil(total / per_cage))
    node_up = math.ceil(3 * node_ports / 4)
    leaves = math.ceil(node_ports / storage_leaf_down(k)) + math.ceil(appliance_ports / (k // 2))
    uplinks = node_up + appliance_ports
    spines = math.ceil(uplinks / k)
    return NetworkSize(ROLE_STORAGE, leaves, spines, node_ports, appliance_ports, uplinks, 0,
                       math.ceil((total + 2 * uplinks) / per_cage))


def inband_size(node_ports: int, other_ports: int, k: int) -> NetworkSize:
    """The in-band network for ``node_ports`` server ports and ``other_ports`` more (the
    out-of-band uplinks) on ``k``-port switches.

    Model: leaves in pairs (servers bond over both), 2 peer links per pair. One pair holds
    ``2 (k - 2)`` ports; beyond that each leaf keeps 4 uplinks, pairs ``ceil(P / (2 (k - 6)))``,
    spines ``2 ceil(4 pairs / k)``.

    Examples:
        >>> s = inband_size(254, 16, 64)   # RA-11333 4 SU: 6 leaves and 2 cores
        >>> (s.leaves, s.spines, s.uplinks, s.isl)
        (6, 2, 24, 6)
    """
    ports = node_ports + other_ports
    if ports == 0:
        return NetworkSize(ROLE_INBAND)
    if ports <= 2 * (k - INBAND_ISL_PER_PAIR):
        return NetworkSize(ROLE_INBAND, 2, 0, node_ports, other_ports, 0, INBAND_ISL_PER_PAIR)
    pairs = math.ceil(ports / (2 * (k - INBAND_ISL_PER_PAIR - INBAND_UPLINKS_PER_LEAF)))
    spines = 2 * math.ceil(2 * INBAND_UPLINKS_PER_LEAF * pairs / (2 * k))
    return NetworkSize(ROLE_INBAND, 2 * pairs, spines, node_ports, other_ports,
                       2 * pairs * INBAND_UPLINKS_PER_LEAF, INBAND_ISL_PER_PAIR * pairs)


def oob_size(bmc_ports: int, managed: int, k: int, uplinks: bool) -> NetworkSize:
    """The out-of-band network for ``bmc_ports`` server BMCs and ``managed`` switch management
    ports on ``k``-port switches: ``max(ceil(BMC / 16), ceil((BMC + managed) / k))`` switches,
    with 2 uplinks each into the in-band network when there is one.

    Examples:
        >>> oob_size(127, 72, 48, True).leaves   # RA-11333 4 SU: 8 SN2201
        8
    """
    ports = bmc_ports + managed
    if bmc_ports == 0:
        return NetworkSize(ROLE_OOB)
    switches = max(math.ceil(bmc_ports / BMC_PER_OOB_SWITCH), math.ceil(ports / k))
    return NetworkSize(ROLE_OOB, switches, 0, bmc_ports, managed, OOB_UPLINKS * switches if uplinks else 0)


def size_networks(parts: NetworkParts, nodes: int, storage_units: int, compute_switches: int
                  ) -> tuple[NetworkSize, ...]:
    """Every built network of ``nodes`` servers with ``storage_units`` file-system blocks and a
    compute fabric of ``compute_switches`` switches, in :data:`NETWORK_ROLES` order.

    The out-of-band network manages the in-band switches, which take its uplinks: the counts are
    the least fixed point of the two forms (found from zero uplinks; both only grow).
    """
    out = []
    storage = NetworkSize(ROLE_STORAGE)
    if parts.storage_switch is not None:
        storage = storage_size(parts.storage_ports * nodes, parts.appliance_ports * storage_units,
                               parts.storage_k, parts.storage_per_cage)
        out.append(storage)
    inband = NetworkSize(ROLE_INBAND)
    oob = NetworkSize(ROLE_OOB)
    has_inband = parts.inband_switch is not None
    for _ in range(64):
        if has_inband:
            inband = inband_size(parts.inband_ports * nodes, oob.uplinks, parts.inband_k)
        if parts.oob_switch is None:
            break
        nxt = oob_size(parts.bmc_ports * nodes, compute_switches + storage.switches + inband.switches,
                       parts.oob_k, has_inband)
        if nxt == oob:
            break
        oob = nxt
    if has_inband:
        out.append(inband)
    if parts.oob_switch is not None:
        out.append(oob)
    return tuple(out)


def _pick_switch(catalog: Catalog, role: str, protocol: Protocol, rate_Bps: float) -> Switch:
    fits = {s.name: s for s in catalog.switches.values()
            if s.protocol is protocol and (s.ports_at(rate_Bps) or s.port_rate_Bps >= rate_Bps - _TOL)}
    for name in _RA_SWITCHES[role]:
        if name in fits:
            return fits[name]
    if not fits:
        raise CatalogError(f"no {protocol.value} switch in the catalog has ports for the {role} network "
                           f"({rate_Bps * 8 / 1e9:g} Gb/s); add one to a catalog file or turn the network off "
                           f"(networks.{role}: false)")
    return min(fits.values(), key=lambda s: ((s.price_usd if s.price_usd is not None else math.inf) / s.ports, s.name))


def _ports_at(switch: Switch, rate_Bps: float) -> tuple[int, float]:
    """(logical ports, their rate): at ``rate_Bps`` where the switch runs it natively or broken
    out, else its native ports (a link at a lower rate on a faster port)."""
    n = switch.ports_at(rate_Bps)
    return (n, rate_Bps) if n else (switch.ports, switch.port_rate_Bps)


def _cable(catalog: Catalog, media: tuple[MediaKind, ...], rate_Bps: float, reach_m: float, what: str) -> Cable:
    for kind in media:
        found = pick_cable(catalog, kind, rate_Bps, reach_m)
        if found is not None:
            return found
    raise CatalogError(f"no {' or '.join(m.value.upper() for m in media)} cable in the catalog runs "
                       f"{rate_Bps * 8 / 1e9:g} Gb/s over {reach_m:g} m ({what}); add one to a catalog file")


def _fiber(catalog: Catalog, rate_Bps: float, what: str) -> Cable:
    found = pick_cable(catalog, MediaKind.MULTIMODE, rate_Bps, _RUN_M, at_least=True)
    if found is None:
        raise CatalogError(f"no fiber cable in the catalog carries {rate_Bps * 8 / 1e9:g} Gb/s over {_RUN_M:g} m "
                           f"({what}); add one to a catalog file")
    return found


def _server_ports(server: Server, catalog: Catalog) -> tuple[int, float, int, float]:
    """(storage ports, rate, in-band ports, rate) per server: half the storage adapters' ports
    each (RA-11333 Figure 4: "each pair of in-band management and storage ports"), in-band at
    100 GbE where the adapter runs it; one 100 GbE port each where the entry lists none (assumed)."""
    nic = catalog.nics.get(server.storage_nic) if server.storage_nic else None
    if nic is None or server.storage_nics == 0:
        return 1, _DEFAULT_PORT_BPS, 1, _DEFAULT_PORT_BPS
    total = server.storage_nics * nic.ports
    storage = max(1, total // 2)
    inband_rate = _INBAND_BPS if any(abs(r - _INBAND_BPS) < _TOL for r in nic.rates()) else min(nic.rates())
    return storage, nic.rate_Bps, max(1, total - storage), inband_rate


def network_parts(server: Server, catalog: Catalog, storage: Storage | None, networks: Networks) -> NetworkParts:
    """The ports of ``server`` and of ``storage`` blocks and the parts of each network switched on.

    Storage: the RA's switch for the server's storage protocol (QM9700 InfiniBand, SN5600
    Ethernet), else the cheapest per port that runs the link; InfiniBand links take one switch
    port each at its native rate (RA-11333 Table 8: one NDR cable per DGX storage port), Ethernet
    ports run broken out at the link rate. Optics at both ends and multimode fiber (Table 8);
    twin-port optics in the switch cages. In-band: SN4600C (100 GbE) or SN5600; AOC for server and
    leaf-spine links, DAC for peer links (Table 8). Out-of-band: SN2201, Cat6, 100G uplinks. The
    storage fabric exists only with a file system to reach.

    Raises:
        CatalogError: no catalog part fits a network that is on.
    """
    sp, s_rate, ip, i_rate = _server_ports(server, catalog)
    kw: dict = {"storage_ports": sp, "storage_rate_Bps": s_rate, "inband_ports": ip, "inband_rate_Bps": i_rate,
                "bmc_ports": server.compute_trays + server.switch_trays}
    if networks.storage and storage is not None:
        proto = server.storage_protocol
        sw = _pick_switch(catalog, ROLE_STORAGE, proto, s_rate)
        if proto is Protocol.INFINIBAND:
            k, port_rate = sw.ports, sw.port_rate_Bps
        else:
            k, port_rate = _ports_at(sw, s_rate)
        per_cage = max(1, k // sw.cages)
        node_rate = min(s_rate, port_rate)
        a_rate = min(storage.port_rate_Bps or node_rate, port_rate)
        kw.update(storage_switch=sw, storage_k=k, storage_per_cage=per_cage, storage_port_Bps=port_rate,
                  appliance_ports=storage.ports, appliance_rate_Bps=a_rate,
                  storage_node_optic=pick_transceiver(catalog, node_rate, 1, _RUN_M),
                  storage_node_fiber=_fiber(catalog, node_rate, "storage server links"),
                  storage_appliance_optic=pick_transceiver(catalog, a_rate, 1, _RUN_M),
                  storage_appliance_fiber=_fiber(catalog, a_rate, "storage appliance links"),
                  storage_switch_optic=pick_transceiver(catalog, port_rate, per_cage, _RUN_M),
                  storage_uplink_fiber=_fiber(catalog, port_rate, "storage leaf-spine links"))
    if networks.inband:
        sw = _pick_switch(catalog, ROLE_INBAND, Protocol.ETHERNET, i_rate)
        k, port_rate = _ports_at(sw, i_rate)
        kw.update(inband_switch=sw, inband_k=k,
                  inband_link=_cable(catalog, (MediaKind.AOC, MediaKind.DAC), port_rate, _RUN_M, "in-band links"),
                  inband_isl=_cable(catalog, (MediaKind.DAC, MediaKind.AOC), port_rate, _IN_RACK_M,
                                    "in-band peer links"))
    if networks.oob:
        sw = _pick_switch(catalog, ROLE_OOB, Protocol.ETHERNET, 1e9 / 8)
        k, port_rate = _ports_at(sw, 1e9 / 8)
        kw.update(oob_switch=sw, oob_k=k,
                  oob_patch=_cable(catalog, (MediaKind.CAT6, MediaKind.DAC), port_rate, _RUN_M, "out-of-band ports"))
        if networks.inband:
            kw["oob_uplink"] = _cable(catalog, (MediaKind.AOC, MediaKind.DAC), OOB_UPLINK_BPS, _RUN_M,
                                      "out-of-band uplinks")
    return NetworkParts(**kw)
