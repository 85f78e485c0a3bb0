"""Device ports as data: the cage a NIC or switch port sits in, its lanes and lane rate, with the
default a user entry gets when it omits them and the rules that tie them to the entry's rate.

A cage carries ``lanes`` electrical lanes at up to ``lane_Bps`` each; a NIC's cage carries its one
port (``lanes x lane_Bps = rate``), a switch's cage ``ports / cages`` ports (``lanes x lane_Bps =
port_rate x ports / cages``: a QM9700 cage is OSFP, 8 x 100G, two 400G ports). Transceivers and
cables state the same of the end that fills a cage (docs/catalogs.md, "Ports and links").
"""

from __future__ import annotations

__all__ = ["DEFAULT_CAGES", "default_cage", "fill_ports", "port_problem"]

from dataclasses import replace
from typing import Any

from designer.catalog.media import GBPS, gbps_name
from designer.catalog.types import Cable, Connector, Nic, Switch, Transceiver

_TOLERANCE_BPS = 1.0

# The form factor a cage of a given total rate has where only one is in common use (IEEE 802.3 and
# the SFP / QSFP / OSFP MSAs): rate of the cage, Gb/s -> (cage, lanes, lane rate Gb/s). 400G is
# left out on purpose: OSFP, QSFP112 and QSFP-DD are all common, so a user entry must say.
DEFAULT_CAGES: dict[float, tuple[Connector, int, float]] = {
    1.0: (Connector.RJ45, 1, 1.0),  # 1000BASE-T
    10.0: (Connector.SFP28, 1, 10.0),  # SFP+ (an SFP28 cage takes it)
    25.0: (Connector.SFP28, 1, 25.0),  # 25GBASE-R
    100.0: (Connector.QSFP28, 4, 25.0),  # 100GBASE-SR4 / CR4
    200.0: (Connector.QSFP56, 4, 50.0),  # 200GBASE-SR4 / HDR
    800.0: (Connector.OSFP, 8, 100.0),  # 800G OSFP (8 x 100G-PAM4), also twin-port 2 x 400G
}


def default_cage(cage_rate_Bps: float) -> tuple[Connector, int, float] | None:
    """(cage, lanes, lane rate in bytes/s) of a cage carrying ``cage_rate_Bps`` in all, from
    :data:`DEFAULT_CAGES`; None where no single form factor is obvious (400G).

    Examples:
        >>> default_cage(100e9 / 8)
        (<Connector.QSFP28: 'qsfp28'>, 4, 3125000000.0)
        >>> default_cage(400e9 / 8) is None
        True
    """
    for gbps, (cage, lanes, lane) in DEFAULT_CAGES.items():
        if abs(gbps * GBPS - cage_rate_Bps) < _TOLERANCE_BPS:
            return cage, lanes, lane * GBPS
    return None


def _cage_rate(entry: Nic | Switch) -> float:
    if isinstance(entry, Switch):
        return entry.port_rate_Bps * entry.ports / entry.cages
    return entry.rate_Bps


def fill_ports(entry: Any) -> Any:
    """The entry with its cage, lanes and lane rate filled from :func:`default_cage` where it gives
    none (NICs and switches), or a transceiver's fiber side from its electrical side where it has no
    gearbox; other entries are returned unchanged."""
    if isinstance(entry, Transceiver) and not (entry.optical_lanes and entry.optical_lane_Bps):
        return replace(entry, optical_lanes=entry.optical_lanes or entry.lanes,
                       optical_lane_Bps=entry.optical_lane_Bps or entry.lane_Bps)
    if not isinstance(entry, (Nic, Switch)) or (entry.cage is not None and entry.lanes and entry.lane_Bps):
        return entry
    found = default_cage(_cage_rate(entry))
    if found is None:
        return entry
    cage, lanes, lane = found
    return replace(entry, cage=entry.cage or cage, lanes=entry.lanes or lanes, lane_Bps=entry.lane_Bps or lane)



def port_problem(entry: Any) -> tuple[str, str] | None:
    """(field, message) where an entry's port fields disagree with its rate, else None.

    Rules: a NIC or switch has a cage, lanes and lane rate (given or defaulted) and ``lanes x
    lane_rate`` is the cage's rate; a transceiver's ``lanes x lane_rate`` is ``rate x
    logical_ports`` and its lanes split evenly over its optical ports; a cable's lanes x lane rate
    is its rate and its lanes split evenly over its far ends.
    """
    if isinstance(entry, (Nic, Switch)):
        if entry.cage is None or not entry.lanes or not entry.lane_Bps:
            return ("cage", f"give cage, lanes and lane_rate: no single form factor carries "
                            f"{gbps_name(_cage_rate(entry))} per cage (OSFP, QSFP112 and QSFP-DD all do)")
        if abs(entry.lanes * entry.lane_Bps - _cage_rate(entry)) >= _TOLERANCE_BPS:
            what = "a port" if isinstance(entry, Nic) else "a cage (port_rate x ports / cages)"
            return ("lanes", f"{entry.lanes} lanes x {gbps_name(entry.lane_Bps)} is not the {gbps_name(_cage_rate(entry))} "
                             f"of {what}")
    elif isinstance(entry, Transceiver):
        if abs(entry.lanes * entry.lane_Bps - entry.rate_Bps * entry.logical_ports) >= _TOLERANCE_BPS:
            return ("lanes", f"{entry.lanes} lanes x {gbps_name(entry.lane_Bps)} is not rate x logical_ports "
                             f"({entry.logical_ports} x {gbps_name(entry.rate_Bps)})")
        if entry.lanes % entry.optical_ports:
            return ("optical_ports", f"{entry.lanes} lanes do not split evenly over {entry.optical_ports} optical ports")
    elif isinstance(entry, Cable):
        if abs(entry.lanes * entry.lane_Bps - entry.rate_Bps) >= _TOLERANCE_BPS:
            return ("lanes", f"{entry.lanes} lanes x {gbps_name(entry.lane_Bps)} is not the cable's rate "
                             f"({gbps_name(entry.rate_Bps)})")
        if entry.lanes % entry.breakout:
            return ("breakout", f"{entry.lanes} lanes do not split evenly over {entry.breakout} far ends")
        if entry.media.is_fiber == entry.connector.is_cage:
            return ("connector", "a fiber cord ends in optical connectors (mpo-12, mpo-16, lc); a DAC, ACC, AOC "
                                 "or Cat6 cable in a cage's form (osfp, qsfp112, ..., rj45)")
    return None
