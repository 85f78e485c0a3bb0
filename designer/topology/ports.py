"""Ports: one cage of a device in use, as the link matcher (:mod:`designer.topology.links`) sees it.

A :class:`Port` is a device's cage (server, NIC or switch, named by its catalog SKU) running the
fabric's protocol with ``links`` logical links of ``rate_Bps`` each: a QM9700 cage at NDR is OSFP,
8 lanes of 100G, 2 links of 400G; split to NDR200 the same cage carries 4 links of 2 lanes; a DGX
H100 compute cage is OSFP with two ConnectX-7 ports of 4 lanes each. The constructors read the
catalog's port fields (docs/catalogs.md, "Ports and links").
"""

from __future__ import annotations

__all__ = ["Port", "STANDARD_LANE_GBPS", "CAGE_ACCEPTS", "fits", "nic_port", "server_port", "switch_port"]

from dataclasses import dataclass

from designer.catalog.media import GBPS, gbps_name
from designer.catalog.types import Connector, Nic, Protocol, Server, Switch
from designer.errors import CatalogError

_TOLERANCE_BPS = 1.0

# Lane rates the SerDes of the IEEE 802.3 / InfiniBand generations signal at, Gb/s: 1000BASE-T,
# 10G, 25G NRZ (EDR / 25GbE), 50G PAM4 (HDR / 200GbE), 100G PAM4 (NDR / 400GbE), 200G PAM4 (XDR).
STANDARD_LANE_GBPS = (1.0, 10.0, 25.0, 50.0, 100.0, 200.0)

# The module and cable-end forms each cage takes: its own, and the narrower QSFP forms a wider
# QSFP cage accepts (QSFP-DD and QSFP112 are backward compatible with QSFP56 / QSFP28 modules per
# the QSFP-DD MSA and SFF-8665 family); OSFP takes only OSFP.
CAGE_ACCEPTS: dict[Connector, tuple[Connector, ...]] = {
    Connector.OSFP: (Connector.OSFP,),
    Connector.QSFP_DD: (Connector.QSFP_DD, Connector.QSFP112, Connector.QSFP56, Connector.QSFP28),
    Connector.QSFP112: (Connector.QSFP112, Connector.QSFP56, Connector.QSFP28),
    Connector.QSFP56: (Connector.QSFP56, Connector.QSFP28),
    Connector.QSFP28: (Connector.QSFP28,),
    Connector.SFP28: (Connector.SFP28,),
    Connector.RJ45: (Connector.RJ45,),
}


def fits(part: Connector, cage: Connector) -> bool:
    """Whether a module or cable end of form ``part`` goes into ``cage`` (:data:`CAGE_ACCEPTS`).

    Examples:
        >>> fits(Connector.QSFP56, Connector.QSFP112), fits(Connector.OSFP, Connector.QSFP112)
        (True, False)
    """
    return part in CAGE_ACCEPTS.get(cage, ())



@dataclass(frozen=True, slots=True)
class Port:
    """One cage of a device in use on a link.

    Attributes:
        device: Catalog SKU of the device whose cage this is (the server for a DGX's own OSFP
            cages, the NIC for an adapter's, the switch for a switch's).
        cage: The cage's form (:class:`~designer.catalog.types.Connector`).
        protocol: What the link runs (InfiniBand or Ethernet).
        lanes: Electrical lanes of the cage.
        lane_Bps: Fastest lane rate of the cage, bytes/s.
        links: Logical links the cage carries (2 on a twin-port OSFP, 4 split to 200G).
        rate_Bps: Rate of each logical link, bytes/s.
    """

    device: str
    cage: Connector
    protocol: Protocol
    lanes: int
    lane_Bps: float
    links: int
    rate_Bps: float

    def modes(self) -> tuple[tuple[int, float], ...]:
        """(lanes, lane rate) one logical link may run on, most lanes first.

        A cage gives each of its links ``lanes / links`` lanes, and a link may also run on half or
        a quarter of them (NDR200 on two of a ConnectX-7's four). The lane
        rate must be a standard one (:data:`STANDARD_LANE_GBPS`) no faster than the cage's.

        Examples:
            >>> p = Port("connectx7-ndr-400g", Connector.OSFP, Protocol.INFINIBAND, 4, 100 * GBPS, 1, 200 * GBPS)
            >>> [(lanes, rate / GBPS) for lanes, rate in p.modes()]
            [(4, 50.0), (2, 100.0)]
        """
        if self.lanes % self.links:
            return ()
        full = self.lanes // self.links
        widths = [w for w in (full, full // 2, full // 4) if w >= 1 and full % w == 0]
        out = []
        for width in dict.fromkeys(widths):
            lane = self.rate_Bps / width
            if lane <= self.lane_Bps + _TOLERANCE_BPS and any(abs(lane - g * GBPS) < _TOLERANCE_BPS
                                                               for g in STANDARD_LANE_GBPS):
                out.append((width, lane))
        return tuple(out)

    def describe(self) -> str:
        """``nvidia-qm9700 OSFP cage (8 x 100G infiniband, 2 links of 400G)``."""
        links = f"{self.links} links" if self.links > 1 else "1 link"
        return (f"{self.device} {self.cage.value.upper()} cage ({self.lanes} x {gbps_name(self.lane_Bps)} "
                f"{self.protocol.value}, {links} of {gbps_name(self.rate_Bps)})")


def _checked(device: str, cage: Connector | None, lanes: int, lane_Bps: float) -> tuple[Connector, int, float]:
    if cage is None or not lanes or not lane_Bps:
        raise CatalogError(f"{device} has no cage, lanes and lane_rate in the catalog; add them to its entry")
    return cage, lanes, lane_Bps


def nic_port(nic: Nic, protocol: Protocol, rate_Bps: float | None = None) -> Port:
    """The cage of one port of an adapter card, at ``rate_Bps`` (default: its native rate).

    Raises:
        CatalogError: the NIC does not speak ``protocol``, or its catalog entry has no cage.
    """
    if protocol not in nic.protocols:
        raise CatalogError(f"{nic.name} does not speak {protocol.value}")
    cage, lanes, lane = _checked(nic.name, nic.cage, nic.lanes, nic.lane_Bps)
    return Port(nic.name, cage, protocol, lanes, lane, 1, rate_Bps or nic.rate_Bps)


def server_port(server: Server, nic: Nic, protocol: Protocol, rate_Bps: float | None = None) -> Port:
    """A compute cage of a server: the NIC's own cage when each NIC has one (PCIe cards), else the
    server's twin-port cage holding ``nics / nic_cages`` NIC ports (DGX H100 / B200: four OSFP
    cages of two ConnectX-7 ports, 8 lanes of 100G), named by the server's SKU.

    Raises:
        CatalogError: as :func:`nic_port`.
    """
    port = nic_port(nic, protocol, rate_Bps)
    per_cage = server.nics // server.nic_cages if server.nic_cages else 1
    if per_cage <= 1:
        return port
    return Port(server.name, port.cage, protocol, port.lanes * per_cage, port.lane_Bps, per_cage, port.rate_Bps)


def switch_port(switch: Switch, rate_Bps: float | None = None) -> Port:
    """A switch cage with every port at ``rate_Bps`` (native, or broken out: ``ports_at(rate) /
    cages`` links per cage).

    Raises:
        CatalogError: the switch cannot run that rate, or its entry has no cage.
    """
    rate = rate_Bps or switch.port_rate_Bps
    ports = switch.ports_at(rate)
    if ports == 0 or ports % switch.cages:
        raise CatalogError(f"{switch.name} cannot run its cages at {gbps_name(rate)} ports")
    cage, lanes, lane = _checked(switch.name, switch.cage, switch.lanes, switch.lane_Bps)
    return Port(switch.name, cage, switch.protocol, lanes, lane, ports // switch.cages, rate)
