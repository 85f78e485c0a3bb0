"""Links matched end to end: the cable and optics that join two ports, picked from a catalog.

:func:`build_link` is the one matcher every network of a design uses (compute fabric, storage,
in-band and out-of-band management). Rules (docs/topology.md, "Links"):

* Both ends run the same protocol and the same lanes x lane rate per logical link
  (:meth:`~designer.topology.ports.Port.modes`): a 200GBASE-SR4 end (4 x 50G) never faces an
  NDR200 end (2 x 100G) over a cable. Where the electrical lanes differ, only optics join them:
  each at its own cage's lanes, with the same optical lanes and lane rate (a QSFP-DD 400G DR4 on
  8 x 50G and a QSFP112 / OSFP DR4 on 4 x 100G both emit 400GBASE-DR4, IEEE 802.3bs).
* A direct cable (DAC, ACC, AOC, Cat6) fits when its near end fills one cage and its far end(s)
  the other (:func:`~designer.topology.ports.fits`), it speaks the protocol, runs the lane rate
  and reaches. A breakout cable (``breakout`` far ends) joins a cage of several links to
  single-link cages, one far end each; a straight wide cable joins two cages of several links
  only where all their links run between those two cages (``bundle``).
* Otherwise an optic in each cage (its ``connector`` fits, protocol, lane rate, the cage's lanes)
  and a fiber cord between their optical connectors: same fiber kind, same optical lanes and lane
  rate per link, reach of the optics and the cord. An optical port carrying several links (a
  QSFP-DD SR8 broken out into 2 x 200G, a twin-port OSFP split into 4 x 200G) takes a splitter
  cord with that many legs; an optic may run half its lanes where it says ``split: 2``.
* Media by reach: ``copper`` runs take DAC/ACC/Cat6, then AOC, then optics; ``multimode`` runs
  multimode optics, then single-mode; ``single-mode`` runs single-mode optics. Among what fits,
  the cheapest per link wins, then the names (a stable choice).
* Nothing fits: :class:`~designer.errors.CatalogError` naming both ports and why.
"""

from __future__ import annotations

__all__ = ["LinkParts", "build_link", "link_problem"]

from dataclasses import dataclass
from itertools import product
from typing import Iterator

from designer.catalog.media import gbps_name
from designer.catalog.types import Cable, Catalog, Connector, MediaKind, Protocol, Transceiver
from designer.errors import CatalogError
from designer.topology.ports import Port, fits
from designer.topology.schema import MediaClass

_TOLERANCE_BPS = 1.0
_DIRECT = (MediaKind.DAC, MediaKind.ACC, MediaKind.CAT6)
# Media tried for a run of each reach class, in order; the first media group with a fitting
# part wins (copper in the rack, fiber between rows: layout.py decides the class).
_ORDER: dict[MediaClass | None, tuple[tuple[MediaKind, ...], ...]] = {
    MediaClass.COPPER: (_DIRECT, (MediaKind.AOC,), (MediaKind.MULTIMODE,), (MediaKind.SINGLEMODE,)),
    MediaClass.MULTIMODE: ((MediaKind.MULTIMODE,), (MediaKind.SINGLEMODE,), (MediaKind.AOC,)),
    MediaClass.SINGLE_MODE: ((MediaKind.SINGLEMODE,),),
    None: ((*_DIRECT, MediaKind.AOC, MediaKind.MULTIMODE, MediaKind.SINGLEMODE),),
}


def _same(a: float, b: float) -> bool:
    return abs(a - b) < _TOLERANCE_BPS



@dataclass(frozen=True, slots=True)
class LinkParts:
    """What builds one logical link between two ports.

    Attributes:
        a, b: The two ports, as given.
        protocol: What the link runs.
        lanes, lane_Bps: Electrical lanes of the link and their rate (the same at both ends, or
            ``a``'s where the optics convert: 8 x 50G to 4 x 100G).
        cable: The cable (DAC/ACC/AOC/Cat6, or the fiber cord between the optics).
        links_per_cable: Logical links one cable carries (a twin-port DAC between two aligned
            cages, or the legs of a breakout / splitter cable: 2; else 1).
        optic_a, optic_b: The optic in each cage (None with a direct cable).
        links_per_optic_a, links_per_optic_b: Logical links one optic serves (its cage's links).
        reach_m: The run the link was built for.
    """

    a: Port
    b: Port
    protocol: Protocol
    lanes: int
    lane_Bps: float
    cable: Cable
    links_per_cable: int
    optic_a: Transceiver | None
    links_per_optic_a: int
    optic_b: Transceiver | None
    links_per_optic_b: int
    reach_m: float

    @property
    def media(self) -> MediaKind:
        """The media of the link (the cable's)."""
        return self.cable.media

    @property
    def usd_per_link(self) -> float:
        """Price of one logical link: its share of the cable and of each optic."""
        usd = self.cable.price_usd / self.links_per_cable
        for optic, links in ((self.optic_a, self.links_per_optic_a), (self.optic_b, self.links_per_optic_b)):
            if optic is not None:
                usd += optic.price_usd / links
        return usd

    @property
    def w_per_link(self) -> float:
        """Power of one logical link, as :attr:`usd_per_link` shares it."""
        w = self.cable.power_w / self.links_per_cable
        for optic, links in ((self.optic_a, self.links_per_optic_a), (self.optic_b, self.links_per_optic_b)):
            if optic is not None:
                w += optic.power_w / links
        return w

    def _key(self) -> tuple:
        names = (self.cable.name, self.optic_a.name if self.optic_a else "", self.optic_b.name if self.optic_b else "")
        return (round(self.usd_per_link, 6), names)


@dataclass(frozen=True, slots=True)
class _OpticEnd:
    optic: Transceiver
    legs: int  # links on one optical port: 1, or the legs of the splitter cord it needs
    optical_lanes: int  # per link
    optical_lane_Bps: float


def _optic_ends(catalog: Catalog, port: Port, lanes: int, lane: float, media: MediaKind,
                reach: float) -> Iterator[_OpticEnd]:
    for t in catalog.transceivers.values():
        if (t.media is not media or not fits(t.connector, port.cage) or port.protocol not in t.protocols
                or not _same(t.lane_Bps, lane) or t.reach_m < reach):
            continue
        # Lanes the optic drives per link: all of its lanes shared by the cage's links, or (one
        # link in the cage) a half or quarter of them where the optic runs split.
        if t.lanes == lanes * port.links:
            used = 1
        elif port.links == 1 and t.lanes % lanes == 0 and t.lanes // lanes <= t.split:
            used = t.lanes // lanes
        else:
            continue
        if port.links % t.optical_ports and port.links > 1:
            continue
        legs = max(1, port.links // t.optical_ports)
        if legs > 1 and legs > t.split:
            continue
        optical = (t.optical_lanes or t.lanes) // t.optical_ports // (legs * used)
        if optical < 1:
            continue
        total = (t.optical_lanes or t.lanes) * (t.optical_lane_Bps or t.lane_Bps)
        yield _OpticEnd(t, legs, optical, total / ((t.optical_lanes or t.lanes)))


def _cords(catalog: Catalog, a: _OpticEnd, b: _OpticEnd, reach: float) -> Iterator[tuple[Cable, int, bool]]:
    """(cord, links per cord, reversed) joining two optic ends."""
    if a.legs > 1 and b.legs > 1:
        return
    legs = max(a.legs, b.legs)
    trunk, leg = (a, b) if a.legs >= b.legs else (b, a)
    for c in catalog.cables.values():
        if (c.media is not a.optic.media or c.reach_m < reach or c.breakout != legs
                or c.lane_Bps < a.optical_lane_Bps - _TOLERANCE_BPS):
            continue
        for near, far, flipped in ((trunk, leg, False), (leg, trunk, True)):
            if legs > 1 and flipped:
                continue
            # A duplex LC cord carries all the wavelengths of a CWDM optic; an MPO cord one lane
            # per fiber pair, so its lanes must match.
            if c.connector is near.optic.fiber and c.far is far.optic.fiber \
                    and (c.connector is Connector.LC or c.lanes == near.optical_lanes * legs):
                yield c, legs, flipped
                break


def _direct(catalog: Catalog, a: Port, b: Port, lanes: int, lane: float, media: tuple[MediaKind, ...],
            reach: float, bundle: int) -> Iterator[tuple[Cable, int]]:
    """(cable, links per cable) of the direct cables joining ``a`` and ``b``."""
    for c in catalog.cables.values():
        if (c.media not in media or c.media.is_fiber or a.protocol not in c.protocols or c.reach_m < reach
                or not _same(c.lane_Bps, lane)):
            continue
        for near, far in ((a, b), (b, a)):
            if not (fits(c.connector, near.cage) and fits(c.far, far.cage)):
                continue
            if c.breakout == 1 and near.links == far.links == bundle and c.lanes == lanes * bundle:
                yield c, bundle
                break
            if c.breakout > 1 and far.links == 1 and near.links == c.breakout and c.lanes == lanes * c.breakout:
                yield c, c.breakout
                break


def _options(catalog: Catalog, a: Port, b: Port, lanes: int, lane: float, media: tuple[MediaKind, ...],
             reach: float, bundle: int) -> Iterator[LinkParts]:
    for cable, per in _direct(catalog, a, b, lanes, lane, media, reach, bundle):
        yield LinkParts(a, b, a.protocol, lanes, lane, cable, per, None, 1, None, 1, reach)
    for fiber in (m for m in media if m.is_fiber):
        yield from _fibered(catalog, a, (lanes, lane), b, (lanes, lane), fiber, reach)


def _fibered(catalog: Catalog, a: Port, mode_a: tuple[int, float], b: Port, mode_b: tuple[int, float],
             fiber: MediaKind, reach: float) -> Iterator[LinkParts]:
    """Fiber links: an optic in ``a``'s cage at electrical mode ``mode_a`` (lanes, lane rate), one in
    ``b``'s at ``mode_b``, their optical sides alike (same optical lane count and rate), and a cord
    between them. The link's ``lanes`` / ``lane_Bps`` are ``a``'s mode."""
    ends_a = list(_optic_ends(catalog, a, mode_a[0], mode_a[1], fiber, reach))
    ends_b = list(_optic_ends(catalog, b, mode_b[0], mode_b[1], fiber, reach))
    for ea, eb in product(ends_a, ends_b):
        if ea.optical_lanes != eb.optical_lanes or not _same(ea.optical_lane_Bps, eb.optical_lane_Bps):
            continue
        for cord, per, _ in _cords(catalog, ea, eb, reach):
            yield LinkParts(a, b, a.protocol, mode_a[0], mode_a[1], cord, per, ea.optic, a.links, eb.optic,
                            b.links, reach)


def _converted(catalog: Catalog, a: Port, b: Port, media: tuple[MediaKind, ...], reach: float
               ) -> Iterator[LinkParts]:
    """Links between two ports of different electrical lanes: an optic in each cage at that
    cage's own lanes x lane rate, their optical sides alike (IEEE 802.3bs: a 400GBASE-DR4 PMD is
    4 x 100G-PAM4 on four fiber pairs whatever the host side, 400GAUI-8 or 400GAUI-4), and a
    fiber cord between them. The link's ``lanes`` / ``lane_Bps`` are ``a``'s."""
    for fiber in (m for m in media if m.is_fiber):
        for mode_a, mode_b in product(a.modes(), b.modes()):
            yield from _fibered(catalog, a, mode_a, b, mode_b, fiber, reach)


def build_link(catalog: Catalog, end_a: Port, end_b: Port, reach_m: float, *,
               media: MediaClass | None = None, bundle: int = 1) -> LinkParts:
    """The cheapest catalog parts that build one logical link from ``end_a`` to ``end_b``.

    Stable API (used by every network of the design). Rules in the module docstring.

    Args:
        catalog: Where cables and transceivers are chosen from.
        end_a, end_b: The two ports (:mod:`designer.topology.ports`: ``server_port``,
            ``nic_port``, ``switch_port``), each in the mode it runs (links per cage, rate).
        reach_m: The longest run the link must cover, metres.
        media: The run's reach class from the floor layout (``copper`` inside a rack,
            ``multimode`` / ``single-mode`` between rows); None takes the cheapest that reaches.
        bundle: Logical links running together between the same two cages (2 where a
            twin-port server cage's two ports go to the same twin-port switch cage, as in a
            single switch or a fat tree); a straight wide cable then carries them all.

    Returns:
        The parts of one link with how many links each part serves.

    Raises:
        CatalogError: the ports disagree (protocol, link rate, lane rates) or no catalog part
            builds the link; the message names both ports and the reason.
    """
    problem = _mismatch(end_a, end_b)
    if problem:
        raise CatalogError(_refusal(end_a, end_b, reach_m, problem))
    modes = [m for m in end_a.modes() if any(m[0] == n[0] and _same(m[1], n[1]) for n in end_b.modes())]
    if not modes:
        # Electrical lanes differ (8 x 50G QSFP-DD vs 4 x 100G QSFP112): only optics whose
        # optical sides are the same PMD join them (400GBASE-DR4, 4 x 100G-PAM4 on both).
        for group in _ORDER[media]:
            found = list(_converted(catalog, end_a, end_b, group, reach_m))
            if found:
                return min(found, key=LinkParts._key)
        raise CatalogError(_refusal(end_a, end_b, reach_m, f"no common lanes x lane rate ({_modes(end_a)} vs "
                                                           f"{_modes(end_b)}) and no pair of optics with the same "
                                                           f"optical lanes between those cages"))
    for group in _ORDER[media]:
        found = [o for lanes, lane in modes for o in _options(catalog, end_a, end_b, lanes, lane, group, reach_m,
                                                              bundle)]
        if found:
            return min(found, key=LinkParts._key)
    lanes, lane = modes[0]
    kinds = ", ".join(m.value for g in _ORDER[media] for m in g)
    raise CatalogError(_refusal(end_a, end_b, reach_m, f"no catalog cable or transceiver pair ({kinds}) carries "
                                                       f"{lanes} x {gbps_name(lane)} {end_a.protocol.value} between "
                                                       f"those cages; add the part to a catalog file"))


def link_problem(catalog: Catalog, end_a: Port, end_b: Port, reach_m: float, *,
                 media: MediaClass | None = None, bundle: int = 1) -> str | None:
    """Why :func:`build_link` cannot build the link (its message), or None when it can."""
    try:
        build_link(catalog, end_a, end_b, reach_m, media=media, bundle=bundle)
    except CatalogError as exc:
        return exc.message
    return None


def _mismatch(a: Port, b: Port) -> str | None:
    if a.protocol is not b.protocol:
        return f"one end runs {a.protocol.value}, the other {b.protocol.value}"
    if not _same(a.rate_Bps, b.rate_Bps):
        return f"one end runs {gbps_name(a.rate_Bps)} links, the other {gbps_name(b.rate_Bps)}"
    return None


def _modes(port: Port) -> str:
    return " or ".join(f"{n} x {gbps_name(r)}" for n, r in port.modes()) or "none"


def _refusal(a: Port, b: Port, reach: float, why: str) -> str:
    return f"no link from {a.describe()} to {b.describe()} over {reach:.1f} m: {why}"
