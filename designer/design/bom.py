"""Bill-of-materials lines: the priced, counted parts of a design, their totals and rack layout.

This module also holds the output rounding rule shared by the design file, the BOM tables and the
diff: money is rounded to cents once, at output, and every other float to :data:`SIG_DIGITS`
significant digits, so that formatting can never drift between runs or renderers.
"""

from __future__ import annotations

__all__ = [
    "BomLine",
    "BomTotals",
    "CATEGORIES",
    "Rack",
    "RackItem",
    "SIG_DIGITS",
    "QUANTITY_SIG_DIGITS",
    "SWITCHES_PER_NETWORK_RACK",
    "RACK_LAYOUT_RULE",
    "bom_totals",
    "category_rank",
    "PriceCounts",
    "price_counts",
    "price_footer",
    "group_by_category",
    "line_total_usd",
    "money_text",
    "rack_layout",
    "round_money",
    "round_quantity",
    "round_sig",
    "sort_lines",
    "total_capex",
    "total_power_w",
]

import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Iterable, Mapping

# Category order used everywhere a BOM is listed (design file, tables, diffs).
CATEGORIES = ("server", "gpu", "nic", "switch", "appliance", "transceiver", "cable", "rack", "cooling", "storage", "cloud",
              "service")

# Six significant digits keep utilization to 0.0001 %, step times to microseconds on a 10 s step,
# and powers to the watt on a megawatt system: finer than any model behind them is accurate.
SIG_DIGITS = 6
# Quantities keep 12 (the precision of units.format_*): cloud lines count instance-hours, and 6 digits
# would move a 276,480.4 h line by $22 at $55/h.
QUANTITY_SIG_DIGITS = 12

# Space rule for network racks: a 42U rack holds 16 switches of 1-2U with room left for patch
# panels and cable management. An estimate (no datasheet gives it); it only shapes the rack listing.
SWITCHES_PER_NETWORK_RACK = 16

RACK_LAYOUT_RULE = (
    "servers are spread evenly over the compute racks (the quantity of the BOM's rack line with role "
    "'compute'; without one, system.racks less the network racks), the first racks taking one more "
    "when the count does not divide; switches are spread evenly, leaves then spines then cores, over "
    "the network racks (the BOM's rack line with role 'network'; without any rack line, one rack per "
    f"{SWITCHES_PER_NETWORK_RACK} switches), or over the compute racks (top of rack) when the BOM has "
    "compute racks but no network racks; management appliances (UFM) follow the switches in the "
    "network racks, or fill racks of their own (the rack line with role 'fabric-manager') beside "
    "top-of-rack switches; GPUs and NICs listed apart from their servers go in their "
    "servers' racks, pro rata; optics and cables are not placed and their power is not in the rack power"
)
# Parts a BOM may list apart from their server (a server bought without GPUs or NICs); they go in
# the servers' racks.
_SERVER_PARTS = ("gpu", "nic")
# Switch tiers in the order they are racked; other roles follow alphabetically.
_SWITCH_TIERS = ("leaf", "spine", "core")


@dataclass(frozen=True, slots=True)
class BomLine:
    """One line of a bill of materials.

    ``unit_price_usd`` times ``quantity`` is the line's cost. For cloud lines the quantity is
    instance-hours and the unit price is per instance-hour. ``unit_power_w`` is the maximum draw of
    one unit (0 for passive parts and cloud lines). A line whose part has no known price has
    ``unit_price_usd`` None: it is counted as unpriced, never as $0. ``price_basis``, ``as_of`` and
    ``estimate`` say what kind of price it is, how old, and whether it is an estimate
    (``price_basis`` ``owned``: hardware the buyer already has, at no cost).
    """

    category: str
    sku: str
    description: str
    role: str
    quantity: float
    unit_price_usd: float | None
    unit_power_w: float
    source: str
    price_basis: str = ""
    as_of: str = ""
    estimate: bool = False
    # What fits where (transceivers and cables; empty on other lines): the part's cage or cord
    # connector, the protocol and lanes x lane rate it runs on this link, its media; an optic's
    # ``plugs_into`` is the SKU of the device whose cage it fills, a cable's ``ends`` what each end
    # plugs into (the devices for a DAC/ACC/AOC, the two optics for a fiber cord).
    connector: str = ""
    protocol: str = ""
    lanes: int = 0
    lane_gbps: float = 0.0
    media: str = ""
    plugs_into: str = ""
    ends: tuple[str, ...] = ()

    @property
    def priced(self) -> bool:
        """Whether the line has a price (an owned line has one: zero)."""
        return self.unit_price_usd is not None

    @property
    def total_usd(self) -> float:
        """Extended price of the line (0 for an unpriced line, which totals count apart)."""
        return 0.0 if self.unit_price_usd is None else self.quantity * self.unit_price_usd

    @property
    def power_w(self) -> float:
        """Power of all units on the line."""
        return self.quantity * self.unit_power_w


@dataclass(frozen=True, slots=True)
class BomTotals:
    """Sums over BOM lines, from the rounded line totals (so tables and CSV add up to the cent)."""

    capex_usd: float  # purchased lines: every category but cloud
    cloud_usd: float  # rented instance-hours
    total_usd: float  # capex + cloud
    power_w: float  # IT power of the purchased parts, before PUE
    by_category: Mapping[str, float]  # category -> USD, in CATEGORIES order
    lines: int


# ---------------------------------------------------------------- output rounding


def round_sig(x: float, digits: int = SIG_DIGITS) -> float:
    """Round to ``digits`` significant digits (correctly rounded decimal, as ``format(x, '.6g')``).

    Rounding is idempotent: ``round_sig(round_sig(x)) == round_sig(x)``, which is what keeps a
    dumped design byte-identical after a load and a second dump. ``-0.0`` becomes ``0.0``.

    Raises:
        ValueError: ``x`` is not finite (a NaN in a design is a bug upstream).

    Examples:
        >>> round_sig(0.1 + 0.2)
        0.3
        >>> round_sig(1234567.0)
        1234570.0
    """
    if not math.isfinite(x):
        raise ValueError(f"cannot write a non-finite number ({x!r})")
    return float(f"{x:.{digits}g}") + 0.0


def round_quantity(quantity: float) -> float:
    """Round a BOM quantity to :data:`QUANTITY_SIG_DIGITS` significant digits (idempotent)."""
    return round_sig(quantity, QUANTITY_SIG_DIGITS)


def round_money(usd: float) -> float:
    """Round US dollars to cents (no ``-0.0``).

    Raises:
        ValueError: ``usd`` is not finite.
    """
    if not math.isfinite(usd):
        raise ValueError(f"cannot write a non-finite amount ({usd!r})")
    return round(usd, 2) + 0.0


def money_text(usd: float) -> str:
    """Money as a fixed two-decimal string, as the design file stores it (``"12500.00"``).

    Examples:
        >>> money_text(12500)
        '12500.00'
        >>> money_text(-0.001)
        '0.00'
    """
    return f"{round_money(usd):.2f}"


def line_total_usd(line: BomLine) -> float:
    """The line's extended price as written out: rounded quantity times rounded unit price, in cents.

    Using the rounded factors makes the written total reproducible from the written line. An
    unpriced line totals 0 here; :func:`price_counts` counts it.
    """
    if line.unit_price_usd is None:
        return 0.0
    return round_money(round_quantity(line.quantity) * round_money(line.unit_price_usd))


# ---------------------------------------------------------------- ordering, grouping, totals


def category_rank(category: str) -> tuple[int, str]:
    """Where a category sorts: its place in :data:`CATEGORIES` (unknown ones after), then its name."""
    return (CATEGORIES.index(category) if category in CATEGORIES else len(CATEGORIES), category)


def sort_lines(lines: Iterable[BomLine]) -> tuple[BomLine, ...]:
    """Stable order: category (as in :data:`CATEGORIES`), then role, then SKU."""
    # The trailing fields only break ties between lines sharing (category, role, sku).
    return tuple(sorted(lines, key=lambda l: (*category_rank(l.category), l.role, l.sku, l.description,
                                               l.quantity, -1.0 if l.unit_price_usd is None else l.unit_price_usd,
                                               l.unit_power_w, l.source)))


def group_by_category(lines: Iterable[BomLine]) -> tuple[tuple[str, tuple[BomLine, ...]], ...]:
    """Lines grouped by category, groups in :data:`CATEGORIES` order, lines in :func:`sort_lines` order."""
    groups: dict[str, list[BomLine]] = {}
    for line in sort_lines(lines):
        groups.setdefault(line.category, []).append(line)
    return tuple((category, tuple(group)) for category, group in groups.items())


def total_capex(lines: Iterable[BomLine]) -> float:
    """Sum of purchased lines (everything but ``cloud``)."""
    return sum(l.total_usd for l in lines if l.category != "cloud")


def total_power_w(lines: Iterable[BomLine]) -> float:
    """IT power of all purchased lines, in watts (before PUE)."""
    return sum(l.power_w for l in lines)


def bom_totals(lines: Iterable[BomLine]) -> BomTotals:
    """Totals of a BOM from the rounded line totals (:func:`line_total_usd`).

    Summing the written line totals rather than the raw products means a CSV or table of the lines
    adds up exactly to the total printed under it.
    """
    ordered = sort_lines(lines)
    by_category: dict[str, float] = {}
    for line in ordered:
        by_category[line.category] = round_money(by_category.get(line.category, 0.0) + line_total_usd(line))
    cloud = by_category.get("cloud", 0.0)
    capex = round_money(sum(v for k, v in by_category.items() if k != "cloud"))
    return BomTotals(
        capex_usd=capex,
        cloud_usd=cloud,
        total_usd=round_money(capex + cloud),
        power_w=round_sig(sum(l.power_w for l in ordered)),
        by_category=MappingProxyType(by_category),
        lines=len(ordered),
    )


@dataclass(frozen=True, slots=True)
class PriceCounts:
    """How many lines of a BOM rest on estimated prices, have no price, or are owned (sunk)."""

    lines: int
    estimated: int
    unpriced: int
    owned: int
    bases: Mapping[str, int]  # price basis -> lines, for the priced, bought lines


def price_counts(lines: Iterable[BomLine]) -> PriceCounts:
    """Count the estimated, unpriced and owned lines of a BOM and the price bases of the rest."""
    ordered = sort_lines(lines)
    bases: dict[str, int] = {}
    for line in ordered:
        if line.priced and line.price_basis != "owned" and line.category != "service":
            key = line.price_basis or "unstated"
            bases[key] = bases.get(key, 0) + 1
    return PriceCounts(
        lines=len(ordered),
        estimated=sum(1 for l in ordered if l.estimate and l.priced),
        unpriced=sum(1 for l in ordered if not l.priced),
        owned=sum(1 for l in ordered if l.price_basis == "owned"),
        bases=MappingProxyType(dict(sorted(bases.items()))),
    )


def price_footer(counts: PriceCounts) -> str:
    """``"3 lines estimated, 1 unpriced"``: the footer under a BOM or a cost summary.

    Owned lines and mixed price bases are named too (``"2 owned (sunk)"``, ``"bases: 12 street,
    1 volume"``), since a total over prices of different kinds compares unlike with unlike.
    """
    parts = [f"{counts.estimated} line{'s' if counts.estimated != 1 else ''} estimated",
             f"{counts.unpriced} unpriced"]
    if counts.owned:
        parts.append(f"{counts.owned} owned (sunk)")
    if len(counts.bases) > 1:
        parts.append("bases: " + ", ".join(f"{n} {b}" for b, n in counts.bases.items()))
    return ", ".join(parts)


# ---------------------------------------------------------------- rack layout


@dataclass(frozen=True, slots=True)
class RackItem:
    """Units of one BOM line placed in one rack."""

    category: str
    role: str
    sku: str
    quantity: int
    unit_power_w: float

    @property
    def power_w(self) -> float:
        """Power of the units in this rack."""
        return self.quantity * self.unit_power_w


@dataclass(frozen=True, slots=True)
class Rack:
    """One rack: a stable name (``rack-01``, ``net-01``), its kind and what it holds."""

    name: str
    kind: str  # compute | network
    items: tuple[RackItem, ...]

    @property
    def power_w(self) -> float:
        """IT power of everything in the rack, before PUE."""
        return sum(item.power_w for item in self.items)


def _spread(units: list[tuple[BomLine, int]], racks: int) -> list[list[RackItem]]:
    """Deal ``units`` (line, count) in order over ``racks`` racks as evenly as possible."""
    total = sum(count for _, count in units)
    racks = max(1, min(racks, total))
    sizes = [total // racks + (1 if i < total % racks else 0) for i in range(racks)]
    out: list[list[RackItem]] = [[] for _ in range(racks)]
    queue = [[line, count] for line, count in units if count > 0]
    for rack, size in zip(out, sizes, strict=True):
        while size > 0:
            line, left = queue[0]
            take = min(size, left)
            rack.append(RackItem(line.category, line.role, line.sku, take, line.unit_power_w))
            size -= take
            queue[0][1] -= take
            if queue[0][1] == 0:
                queue.pop(0)
    return out


def _add_server_parts(racks: list[list[RackItem]], parts: list[tuple[BomLine, int]], servers: int) -> None:
    """Put GPU and NIC lines bought apart from their servers into the servers' racks, pro rata.

    A rack holding servers ``s0 .. s1`` (cumulative) gets ``floor(s1 q / n) - floor(s0 q / n)`` of a
    line of ``q`` units over ``n`` servers: exact when each server takes a whole number of units,
    and the rack shares always add up to ``q``.
    """
    done = 0
    for rack in racks:
        in_rack = sum(i.quantity for i in rack if i.category == "server")
        for line, count in parts:
            share = (done + in_rack) * count // servers - done * count // servers
            if share:
                rack.append(RackItem(line.category, line.role, line.sku, share, line.unit_power_w))
        done += in_rack


def _rack_count(lines: tuple[BomLine, ...], role: str) -> int | None:
    """Racks of one role on the BOM's rack lines; ``None`` when no rack line has that role."""
    counts = [round(l.quantity) for l in lines if l.category == "rack" and l.role == role]
    return sum(counts) if counts else None


def rack_layout(lines: Iterable[BomLine], racks: int) -> tuple[Rack, ...]:
    """A deterministic rack layout of the purchased servers and switches (:data:`RACK_LAYOUT_RULE`).

    Args:
        lines: the BOM lines. ``server``, ``switch`` and ``appliance`` lines are placed
            (quantities rounded to whole units); ``rack`` lines with role ``compute`` /
            ``network`` / ``fabric-manager`` give the rack counts.
        racks: all racks of the design (``system.racks``), used only when the BOM has no rack
            lines. At least one compute rack is used when there are servers, never more racks
            than units to put in them.

    Returns:
        Compute racks ``rack-01..`` then network racks ``net-01..``; empty when nothing is placed
        (a cloud design).
    """
    ordered = sort_lines(lines)
    servers = [(l, round(l.quantity)) for l in ordered if l.category == "server" and round(l.quantity) > 0]
    tier = {t: i for i, t in enumerate(_SWITCH_TIERS)}
    switches = sorted(((l, round(l.quantity)) for l in ordered if l.category == "switch" and round(l.quantity) > 0),
                      key=lambda pair: (tier.get(pair[0].role, len(tier)), pair[0].role))
    appliances = [(l, round(l.quantity)) for l in ordered if l.category == "appliance" and round(l.quantity) > 0]
    n_switches = sum(n for _, n in switches)
    compute_racks, network_racks = _rack_count(ordered, "compute"), _rack_count(ordered, "network")
    own_racks = _rack_count(ordered, "fabric-manager") or 0  # racks of appliances alone
    if compute_racks is None and network_racks is None:
        network_racks = math.ceil(n_switches / SWITCHES_PER_NETWORK_RACK)
        compute_racks = racks - network_racks
    elif compute_racks is None:
        compute_racks = racks - (network_racks or 0)
    elif network_racks is None:
        network_racks = 0
    top_of_rack = bool(servers) and network_racks == 0
    out: list[Rack] = []
    if servers:
        placed = _spread(servers, compute_racks)
        _add_server_parts(placed, [(l, round(l.quantity)) for l in ordered if l.category in _SERVER_PARTS],
                          sum(n for _, n in servers))
        tor = switches + (appliances if not own_racks else [])
        if top_of_rack and tor:
            for rack, extra in zip(placed, _spread(tor, len(placed)) + [[]] * len(placed), strict=False):
                rack.extend(extra)
        for i, items in enumerate(placed):
            out.append(Rack(f"rack-{i + 1:02d}", "compute", tuple(items)))
    shared = switches + (appliances if not own_racks else [])
    groups = [] if top_of_rack or not shared else [_spread(shared, max(1, network_racks or 0))]
    if appliances and own_racks:
        groups.append(_spread(appliances, own_racks))
    for items in (rack for group in groups for rack in group):
        out.append(Rack(f"net-{sum(r.kind == 'network' for r in out) + 1:02d}", "network", tuple(items)))
    return tuple(out)
