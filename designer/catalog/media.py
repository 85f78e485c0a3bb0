"""Link media and connectors: what a cable is made of and the forms of cages, module ends and
optical connectors (the port model of docs/catalogs.md, "Ports and links")."""

from __future__ import annotations

__all__ = ["MediaKind", "Connector", "CAGES", "FIBER_CONNECTORS", "GBPS", "gbps_name"]

from enum import Enum

GBPS = 1e9 / 8  # bytes/s in one Gb/s


def gbps_name(rate_Bps: float) -> str:
    """A port or lane rate as the port model names it in messages: Gb/s with a ``G`` suffix.

    Examples:
        >>> gbps_name(50e9)
        '400G'
        >>> gbps_name(3.125e9)
        '25G'
    """
    return f"{rate_Bps / GBPS:g}G"


class MediaKind(str, Enum):
    """Physical link media. DAC is passive copper, ACC active copper, AOC active optical (all three
    with their ends attached); multimode and single-mode fiber cords need a transceiver at each end;
    Cat6 is twisted pair between RJ45 jacks (1 GbE management). Transceivers carry the fiber kind
    they drive (``multimode`` or ``singlemode``)."""

    DAC = "dac"
    ACC = "acc"
    AOC = "aoc"
    MULTIMODE = "multimode"
    SINGLEMODE = "singlemode"
    CAT6 = "cat6"

    @property
    def is_fiber(self) -> bool:
        """A fiber cord: it needs a transceiver at each end."""
        return self in (MediaKind.MULTIMODE, MediaKind.SINGLEMODE)

    @property
    def is_copper(self) -> bool:
        """Copper with its ends attached (DAC, ACC) or twisted pair (Cat6)."""
        return self in (MediaKind.DAC, MediaKind.ACC, MediaKind.CAT6)


class Connector(str, Enum):
    """A connector: a device's cage and the module or cable end that fills it (OSFP ... RJ45), or
    the optical connector of a transceiver and the fiber cord it takes (MPO-12, MPO-16, duplex LC).

    Cages per the form-factor MSAs: OSFP (8 lanes), QSFP-DD (8), QSFP112 / QSFP56 / QSFP28 (4
    lanes of 100G / 50G / 25G), SFP28 (1 lane of 25G), RJ45 (BASE-T)."""

    OSFP = "osfp"
    QSFP_DD = "qsfp-dd"
    QSFP112 = "qsfp112"
    QSFP56 = "qsfp56"
    QSFP28 = "qsfp28"
    SFP28 = "sfp28"
    RJ45 = "rj45"
    MPO_12 = "mpo-12"
    MPO_16 = "mpo-16"
    LC = "lc"

    @property
    def is_cage(self) -> bool:
        """A device cage (as opposed to an optical connector)."""
        return self in CAGES


CAGES = (Connector.OSFP, Connector.QSFP_DD, Connector.QSFP112, Connector.QSFP56, Connector.QSFP28,
         Connector.SFP28, Connector.RJ45)
FIBER_CONNECTORS = (Connector.MPO_12, Connector.MPO_16, Connector.LC)
