"""How old the prices of a design are: the one warning ``solve`` gives about them (pure: design and date in, text out)."""

from __future__ import annotations

__all__ = ["stale_prices", "render_stale_prices"]

from datetime import date

from designer.catalog.query import months_older
from designer.design.model import Design

STALE_MONTHS = 18


def stale_prices(design: Design, today: date, months: int = STALE_MONTHS) -> tuple[tuple[str, str, int], ...]:
    """The priced figures the design rests on that are older than ``months``: ``(what, as_of,
    age in months)`` per bought BOM line (owned lines have no price) and per cost line with a date,
    oldest first, each name once."""
    seen: dict[str, tuple[str, str, int]] = {}
    for line in design.bom:
        if line.price_basis == "owned" or line.unit_price_usd is None or not line.as_of:
            continue
        age = months_older(line.as_of, today, months)
        if age is not None and line.sku not in seen:
            seen[line.sku] = (line.sku, line.as_of, age)
    for c in design.cost.lines:
        if c.kind in ("capex", "cloud") or not c.as_of:
            continue  # capex and cloud lines are the BOM's, dated there
        age = months_older(c.as_of, today, months)
        if age is not None and c.name not in seen:
            seen[c.name] = (c.name, c.as_of, age)
    return tuple(sorted(seen.values(), key=lambda s: (-s[2], s[0])))


def render_stale_prices(stale: tuple[tuple[str, str, int], ...], months: int = STALE_MONTHS) -> str:
    """One warning line (without the ``warning:`` prefix) naming the old figures; ``""`` when none."""
    if not stale:
        return ""
    shown = ", ".join(f"{name} ({as_of})" for name, as_of, _ in stale[:6])
    more = f" and {len(stale) - 6} more" if len(stale) > 6 else ""
    what = "1 price this design rests on is" if len(stale) == 1 else f"{len(stale)} prices this design rests on are"
    return (f"{what} older than {months} months: {shown}{more}; put newer figures in a user catalog "
            "(`designer catalog list` shows every date)")
