"""Choosing catalog entries by what they are: wire protocol, port rate, vendor, price, GPU and name.

The filters of ``designer catalog list``. Each filter asks one property of an entry; an entry whose
kind has no such property (a GPU has no port rate, a fabric profile no price) does not match a
filter on it, so ``--rate 400G`` lists NICs, switches, cables and optics, and nothing else.
"""

from __future__ import annotations

__all__ = ["EntryFilter", "select", "entry_protocols", "entry_rates", "entry_vendor", "entry_price_usd"]

from dataclasses import dataclass
from typing import Any, Iterator

from designer.catalog.types import KINDS, Catalog

# A fabric technology runs on one wire protocol: RoCE and kernel TCP on Ethernet NICs and switches.
_WIRE = {"roce": "ethernet", "ethernet": "ethernet", "infiniband": "infiniband"}
_RATE_TOLERANCE_BPS = 1.0  # rates are SI floats parsed from text: equal within a byte per second


@dataclass(frozen=True, slots=True)
class EntryFilter:
    """What ``catalog list`` keeps; ``None`` filters nothing. ``protocol`` is a wire protocol
    (``ethernet``, ``infiniband``) or a fabric technology (``roce``, ``efa``, ...); ``rate_Bps`` a
    port rate in bytes per second; ``vendor`` as the catalog names it (a cloud's provider);
    ``max_price_usd`` a purchase price; ``gpu`` a GPU name (servers and instances carrying it);
    ``name`` a part of the entry's name. Text comparisons ignore case."""

    protocol: str | None = None
    rate_Bps: float | None = None
    vendor: str | None = None
    max_price_usd: float | None = None
    gpu: str | None = None
    name: str | None = None

    def matches(self, kind: str, name: str, entry: Any) -> bool:
        """Whether the entry passes every filter that is set."""
        if self.name is not None and self.name.lower() not in name.lower():
            return False
        if self.protocol is not None:
            wanted = self.protocol.lower()
            have = entry_protocols(kind, entry)
            if wanted not in have and _WIRE.get(wanted) not in have:
                return False
        if self.rate_Bps is not None and not any(abs(r - self.rate_Bps) < _RATE_TOLERANCE_BPS
                                                 for r in entry_rates(kind, entry)):
            return False
        if self.vendor is not None and (entry_vendor(kind, entry) or "").lower() != self.vendor.lower():
            return False
        if self.max_price_usd is not None:
            price = entry_price_usd(kind, entry)
            if price is None or price > self.max_price_usd:
                return False
        if self.gpu is not None:
            gpu = entry.name if kind == "gpu" else getattr(entry, "gpu", None) if kind in ("server", "cloud") else None
            if gpu is None or gpu.lower() != self.gpu.lower():
                return False
        return True


def entry_protocols(kind: str, entry: Any) -> frozenset[str]:
    """The wire protocols or technologies an entry speaks: a NIC's protocols, a switch's protocol,
    a cloud instance's network, a fabric profile's technology; empty for other kinds."""
    if kind == "nic":
        return frozenset(p.value for p in entry.protocols)
    if kind == "switch":
        return frozenset({entry.protocol.value})
    if kind == "cloud":
        return frozenset({entry.network.value})
    if kind == "fabric":
        return frozenset({entry.kind.value})
    return frozenset()


def entry_rates(kind: str, entry: Any) -> tuple[float, ...]:
    """Port rates in bytes per second: every speed of a NIC, a switch's native rate and breakouts,
    a cable's or optic's rate; empty for other kinds."""
    if kind == "nic":
        return entry.rates()
    if kind == "switch":
        return (entry.port_rate_Bps, *entry.breakout)
    if kind in ("cable", "transceiver"):
        return (entry.rate_Bps,)
    return ()


def entry_vendor(kind: str, entry: Any) -> str | None:
    """Who makes or sells the entry: its ``vendor`` field, a cloud's provider, a support contract's
    vendor; None where the catalog does not say."""
    if kind == "cloud":
        return entry.provider
    if kind == "support":
        return entry.name
    return getattr(entry, "vendor", None) or None


def entry_price_usd(kind: str, entry: Any) -> float | None:
    """The purchase price of one, in dollars; None for an unpriced part and for kinds priced per
    hour, per year or not at all (clouds, licences, support, facilities, fabric profiles)."""
    if kind in ("gpu", "nic", "switch", "cable", "transceiver", "server", "storage", "appliance"):
        return entry.price_usd
    return None


def select(catalog: Catalog, kinds: tuple[str, ...] = KINDS,
           flt: EntryFilter | None = None) -> Iterator[tuple[str, str, Any]]:
    """``(kind, name, entry)`` of the entries of ``kinds`` that ``flt`` keeps, in catalog order."""
    for kind in kinds:
        for name, entry in catalog.by_kind(kind).items():
            if flt is None or flt.matches(kind, name, entry):
                yield kind, name, entry
