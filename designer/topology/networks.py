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
           "INBAND_UPLINKS_PER_LEAF", "ASSUMED_PORT_BPS"]

import math
from dataclasses import dataclass

from designer.catalog.media import GBPS, gbps_name
from designer.catalog.ports import default_cage
from designer.catalog.types import Catalog, Connector, Nic, Protocol, Server, Storage, Switch
from designer.errors import CatalogError
from designer.topology.links import LinkParts, build_link
from designer.topology.ports import Port, nic_port, switch_port

ROLE_STORAGE, ROLE_INBAND, ROLE_OOB = "storage", "inband", "oob"
NETWORK_ROLES = (ROLE_STORAGE, ROLE_INBAND, ROLE_OOB)

# RA-11333 Table 7: 8 out-of-band SN2201 for 127 DGX H100, one per 16 systems (the rest of its 48
# ports take the PDUs, switches and servers around them).
BMC_PER_OOB_SWITCH = 16
# RA-11333 Table 8: 16 x 100G uplinks for 8 out-of-band switches.
OOB_UPLINKS = 2
OOB_UPLINK_BPS = 100e9 / 8  # the SN2201's QSFP28 uplink ports
OOB_PORT_BPS = 1e9 / 8  # 1000BASE-T at every BMC and switch management port
# RA-11333 Table 8: 6 leaf peer links (3 pairs) and 24 leaf-core links (6 leaves).
INBAND_ISL_PER_PAIR = 2
INBAND_UPLINKS_PER_LEAF = 4
# RA-11333: "Node in-band connections are 100 Gbps and bonded".
_INBAND_BPS = 100e9 / 8
# A server whose catalog entry lists no storage adapter: one 100 GbE port for storage and one
# in-band (assumed; NVIDIA's enterprise RA gives each HGX node a converged 2 x 200 GbE pair).
_DEFAULT_PORT_BPS = ASSUMED_PORT_BPS = 100e9 / 8
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
    """The ports one server and one storage unit bring, and the links each network is built of.

    A network whose switch is None is not built. Rates are per port, bytes/s; ``*_k`` is the
    switch's logical ports at the rate its server links run. Every link is
    :func:`~designer.topology.links.build_link`'s: both ends' cages filled by parts that fit them.
    ``oob_uplink`` is None where the in-band switch takes no out-of-band uplink
    (``oob_uplink_problem`` says why).
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
    storage_node_link: LinkParts | None = None
    storage_appliance_link: LinkParts | None = None
    storage_uplink: LinkParts | None = None
    inband_switch: Switch | None = None
    inband_k: int = 0
    inband_node_link: LinkParts | None = None
    inband_uplink: LinkParts | None = None  # leaf-spine
    inband_isl: LinkParts | None = None  # leaf peer links
    oob_switch: Switch | None = None
    oob_k: int = 0
    oob_port_link: LinkParts | None = None  # BMCs and switch management ports
    oob_uplink: LinkParts | None = None
    oob_uplink_problem: str = ""


@dataclass(frozen=True, slots=True)
class NetworkSize:
    """Switch and link counts of one network.

    ``device_links``: storage, the file system's ports; in-band, the out-of-band uplinks it
    takes; oob, the switches' management ports. ``isl``: in-band peer links.
    """

    role: str
    leaves: int = 0
    spines: int = 0
    node_links: int = 0
    device_links: int = 0
    uplinks: int = 0
    isl: int = 0
    # Out-of-band only, for the BOM: device_links split by the switches they manage (compute
    # fabric, storage, in-band); 0 where not split (designer.topology.network_bom).
    managed_compute: int = 0
    managed_storage: int = 0
    managed_inband: int = 0

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


def storage_size(node_ports: int, appliance_ports: int, k: int) -> NetworkSize:
    """The storage fabric for ``node_ports`` server and ``appliance_ports`` file-system ports on
    ``k``-port switches.

    Model: one switch when all ports fit on it; else server leaves ``ceil(Pn / floor(4k/7))`` with
    ``ceil(3 Pn / 4)`` uplinks, storage leaves ``ceil(Pa / (k/2))`` with ``Pa`` uplinks (1:1) and
    spines ``ceil(uplinks / k)``.

    Examples:
        >>> s = storage_size(254, 96, 64)   # RA-11333 4 SU: 127 DGX H100, 12 appliances
        >>> (s.leaves, s.spines, s.switches)
        (11, 5, 16)
    """
    total = node_ports + appliance_ports
    if total == 0:
        return NetworkSize(ROLE_STORAGE)
    if total <= k:
        return NetworkSize(ROLE_STORAGE, 1, 0, node_ports, appliance_ports)
    node_up = math.ceil(3 * node_ports / 4)
    leaves = math.ceil(node_ports / storage_leaf_down(k)) + math.ceil(appliance_ports / (k // 2))
    uplinks = node_up + appliance_ports
    spines = math.ceil(uplinks / k)
    return NetworkSize(ROLE_STORAGE, leaves, spines, node_ports, appliance_ports, uplinks)


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
                               parts.storage_k)
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
                       parts.oob_k, parts.oob_uplink is not None)
        if nxt == oob:
            break
        oob = nxt
    if has_inband:
        out.append(inband)
    if parts.oob_switch is not None:
        out.append(oob)
    return tuple(out)


def _switches(catalog: Catalog, role: str, protocol: Protocol, rates: tuple[float, ...]) -> list[Switch]:
    """The switches of ``protocol`` that run one of ``rates``: the RA's for ``role`` first, then the
    cheapest per port (unpriced last), then by name."""
    fits = [s for s in catalog.switches.values() if s.protocol is protocol and any(s.ports_at(r) for r in rates)]
    ra = [catalog.switches[n] for n in _RA_SWITCHES[role] if n in catalog.switches and catalog.switches[n] in fits]
    rest = sorted((s for s in fits if s not in ra),
                  key=lambda s: ((s.price_usd if s.price_usd is not None else math.inf) / s.ports, s.name))
    return ra + rest


def _pick(catalog: Catalog, role: str, protocol: Protocol, rates: tuple[float, ...], build) -> tuple[Switch, tuple]:
    """The first of :func:`_switches` for which ``build(switch)`` builds its links, with them.

    Raises:
        CatalogError: none does; the first refusal and how to turn the network off.
    """
    problems = []
    for switch in _switches(catalog, role, protocol, rates):
        try:
            return switch, build(switch)
        except CatalogError as exc:
            problems.append(exc.message)
    why = problems[0] if problems else (f"no {protocol.value} switch in the catalog runs "
                                        f"{' or '.join(gbps_name(r) for r in rates)} ports")
    raise CatalogError(f"the {role} network cannot be built: {why}; add the part to a catalog file or turn the "
                       f"network off (networks.{role}: false)")


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


def _storage_port(storage: Storage, protocol: Protocol, rate_Bps: float) -> Port:
    """One file-system port: the entry's cage, else the common form of its rate (QSFP56 at 200G)."""
    cage, lanes, lane = storage.cage, storage.lanes, storage.lane_Bps
    if cage is None or not lanes or not lane:
        found = default_cage(storage.port_rate_Bps or rate_Bps)
        if found is None:
            raise CatalogError(f"storage {storage.name} gives no cage, lanes and lane_rate for its "
                               f"{gbps_name(storage.port_rate_Bps)} ports; add them to its entry")
        cage, lanes, lane = found
    return Port(storage.name, cage, protocol, lanes, lane, 1, rate_Bps)


def _rj45(device: str) -> Port:
    """A 1000BASE-T management port (a BMC's, a switch's) as the link matcher sees it."""
    return Port(device, Connector.RJ45, Protocol.ETHERNET, 1, OOB_PORT_BPS, 1, OOB_PORT_BPS)


def _node_link(catalog: Catalog, nic: Nic | None, server: Server, switch: Switch, protocol: Protocol,
               rates: tuple[float, ...], reach_m: float) -> tuple[LinkParts, float]:
    """The link from a server port to ``switch`` at the fastest of ``rates`` both run and some
    catalog part builds, with that rate; ``nic`` None: a 100 GbE QSFP28 port (assumed, as
    :func:`_server_ports`). Raises the last refusal when none builds."""
    problem = f"{switch.name} runs none of {', '.join(gbps_name(r) for r in rates)}"
    for rate in sorted(set(rates), reverse=True):
        if not switch.ports_at(rate) or switch.ports_at(rate) % switch.cages:
            continue
        if nic is None:
            cage, lanes, lane = default_cage(rate) or (Connector.QSFP28, 4, 25 * GBPS)
            end = Port(server.name, cage, protocol, lanes, lane, 1, rate)
        else:
            end = nic_port(nic, protocol, rate)
        try:
            return build_link(catalog, end, switch_port(switch, rate), reach_m), rate
        except CatalogError as exc:
            problem = exc.message
    raise CatalogError(problem)


def _appliance_link(catalog: Catalog, storage: Storage, switch: Switch, protocol: Protocol,
                    node_rate: float) -> tuple[float, LinkParts]:
    """(rate, link) of a file-system port on ``switch``: at its own rate where the switch runs it,
    else at the server links' rate (a 200G port at 100G on a 100 GbE fabric)."""
    problem = ""
    for rate in dict.fromkeys(r for r in (storage.port_rate_Bps, node_rate) if r):
        if not switch.ports_at(rate) or switch.ports_at(rate) % switch.cages:
            problem = problem or f"{switch.name} runs no {gbps_name(rate)} port for {storage.name}"
            continue
        try:
            return rate, build_link(catalog, _storage_port(storage, protocol, rate), switch_port(switch, rate), _RUN_M)
        except CatalogError as exc:
            problem = exc.message
    raise CatalogError(problem)


def network_parts(server: Server, catalog: Catalog, storage: Storage | None, networks: Networks) -> NetworkParts:
    """The ports of ``server`` and of ``storage`` blocks and the links of each network switched on,
    every one built end to end by :func:`~designer.topology.links.build_link`.

    Storage: the RA's switch for the server's storage protocol (QM9700 InfiniBand, SN5600
    Ethernet), else the cheapest per port that runs the link; server links at the fastest rate the
    adapter and the switch share (RA-11333 Table 8: NDR 400G cables and QSFP112 optics at the DGX
    H100), the file system's at its port rate (Table 8: NDR 2x200G splitters), leaf-spine at the
    server links' rate; runs of 30 m. In-band: SN4600C (100 GbE) or SN5600; server and leaf-spine
    links over 30 m, peer links within the rack (Table 8: AOC and copper). Out-of-band: SN2201,
    RJ45 at every BMC and switch, its 100G uplinks into the in-band leaves where they take them.
    The storage fabric exists only with a file system to reach.

    Raises:
        CatalogError: no catalog part builds a link of a network that is on.
    """
    sp, s_rate, ip, i_rate = _server_ports(server, catalog)
    nic = catalog.nics.get(server.storage_nic) if server.storage_nic and server.storage_nics else None
    kw: dict = {"storage_ports": sp, "storage_rate_Bps": s_rate, "inband_ports": ip, "inband_rate_Bps": i_rate,
                "bmc_ports": server.compute_trays + server.switch_trays}
    if networks.storage and storage is not None:
        proto = server.storage_protocol
        rates = tuple(r for r in nic.rates() if r <= s_rate) if nic is not None else (s_rate,)

        def storage_links(sw: Switch) -> tuple:
            node, rate = _node_link(catalog, nic, server, sw, proto, rates, _RUN_M)
            a_rate, appliance = _appliance_link(catalog, storage, sw, proto, rate)
            return node, rate, a_rate, appliance, build_link(catalog, switch_port(sw, rate), switch_port(sw, rate),
                                                             _RUN_M)

        sw, (node, rate, a_rate, appliance, uplink) = _pick(catalog, ROLE_STORAGE, proto, rates, storage_links)
        kw.update(storage_switch=sw, storage_k=sw.ports_at(rate), storage_rate_Bps=rate,
                  appliance_ports=storage.ports, appliance_rate_Bps=a_rate,
                  storage_node_link=node, storage_appliance_link=appliance, storage_uplink=uplink)
    inband_sw = None
    if networks.inband:
        rates = tuple(r for r in nic.rates() if r <= i_rate) if nic is not None else (i_rate,)

        def inband_links(sw: Switch) -> tuple:
            node, rate = _node_link(catalog, nic, server, sw, Protocol.ETHERNET, rates, _RUN_M)
            port = switch_port(sw, rate)
            return node, rate, build_link(catalog, port, port, _RUN_M), build_link(catalog, port, port, _IN_RACK_M)

        inband_sw, (node, rate, uplink, isl) = _pick(catalog, ROLE_INBAND, Protocol.ETHERNET, rates, inband_links)
        kw.update(inband_switch=inband_sw, inband_k=inband_sw.ports_at(rate), inband_rate_Bps=rate,
                  inband_node_link=node, inband_uplink=uplink, inband_isl=isl)
    if networks.oob:
        sw, oob_link = _pick(catalog, ROLE_OOB, Protocol.ETHERNET, (OOB_PORT_BPS,), lambda sw: build_link(
            catalog, _rj45(server.name), switch_port(sw, OOB_PORT_BPS), _RUN_M))
        kw.update(oob_switch=sw, oob_k=sw.ports_at(OOB_PORT_BPS), oob_port_link=oob_link)
        if inband_sw is not None:
            # The out-of-band switch's uplink ports (SN2201: QSFP28, 4 x 25G); QSFP28 where unstated.
            up = Port(sw.name, sw.uplink_cage or Connector.QSFP28, Protocol.ETHERNET, sw.uplink_lanes or 4,
                      sw.uplink_lane_Bps or 25 * GBPS, 1, OOB_UPLINK_BPS)
            if not inband_sw.ports_at(OOB_UPLINK_BPS):
                kw["oob_uplink_problem"] = (f"{inband_sw.name} has no {gbps_name(OOB_UPLINK_BPS)} port for the "
                                            f"{sw.name} uplinks")
            else:
                try:
                    kw["oob_uplink"] = build_link(catalog, up, switch_port(inband_sw, OOB_UPLINK_BPS), _RUN_M)
                except CatalogError as exc:
                    kw["oob_uplink_problem"] = exc.message
    return NetworkParts(**kw)
