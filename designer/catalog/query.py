"""Looking catalog entries up: by name, the kinds' names and keys, and entries whose price is old.

Pure functions over a loaded :class:`~designer.catalog.types.Catalog`; lookups raise
:class:`~designer.errors.CatalogError` with the closest name.
"""

from __future__ import annotations

__all__ = ["StaleEntry", "find", "field_keys", "normalize_kind", "has_price", "stale_entries", "months_older"]

from dataclasses import dataclass
from datetime import date
from typing import Any

from designer.catalog.schema import KINDS as _KINDS
from designer.catalog.schema import PLURALS as _PLURALS
from designer.catalog.schema import hint as _hint
from designer.catalog.schema import price_date
from designer.catalog.types import KINDS, Catalog
from designer.errors import CatalogError


def field_keys(kind: str) -> tuple[tuple[str, str], ...]:
    """``(YAML key, entry attribute)`` pairs of a kind, in schema order (``("rate", "rate_Bps")``)."""
    return tuple((f.key, f.attr) for f in _KINDS[normalize_kind(kind)].fields)


def normalize_kind(kind: str) -> str:
    """The kind for ``kind`` given in singular or plural (``switches`` -> ``switch``).

    Raises:
        CatalogError: not a kind; the message lists the kinds and the closest one.
    """
    text = kind.strip().lower()
    text = _PLURALS.get(text, text)
    if text not in KINDS:
        raise CatalogError(f"unknown kind '{kind}'{_hint(text, (*KINDS, *_PLURALS))}; use one of {', '.join(KINDS)}")
    return text


def find(catalog: Catalog, name: str, kind: str | None = None) -> tuple[str, Any]:
    """Look an entry up by name, in one kind or in all of them (in :data:`KINDS` order).

    Returns:
        ``(kind, entry)``.

    Raises:
        CatalogError: no entry has that name; the message suggests the closest name.
    """
    kinds = (normalize_kind(kind),) if kind is not None else KINDS
    names: list[str] = []
    for k in kinds:
        entries = catalog.by_kind(k)
        if name in entries:
            return k, entries[name]
        names.extend(entries)
    what = f"{kinds[0]} name" if kind is not None else "catalog name"
    raise CatalogError(f"unknown {what} '{name}'{_hint(name, names)}; `designer catalog list` shows them all")


@dataclass(frozen=True, slots=True)
class StaleEntry:
    """A priced entry whose ``as_of`` is older than the staleness limit."""

    kind: str
    name: str
    as_of: str
    months: int  # whole months between the start of ``as_of`` and today


def has_price(kind: str, entry: Any) -> bool:
    """Whether an entry carries a price (fabric profiles never do; a GPU may not)."""
    if kind == "fabric":
        return False
    if kind == "cloud":
        return bool(entry.pricing_models())
    if kind in ("facility", "support", "licence", "price_book"):
        return True
    return entry.price_usd is not None


def stale_entries(catalog: Catalog, today: date, months: int = 18) -> tuple[StaleEntry, ...]:
    """Priced entries whose ``as_of`` starts more than ``months`` calendar months before ``today``.

    GPU prices move by tens of percent within a year (AWS cut P5 on-demand prices by up to 45% in
    June 2025, per usage.ai), so an 18-month-old price deserves a warning, not a failure.
    """
    out = []
    for kind in KINDS:
        for name, entry in catalog.by_kind(kind).items():
            age = months_older(entry.provenance.as_of, today, months)
            if has_price(kind, entry) and age is not None:
                out.append(StaleEntry(kind, name, entry.provenance.as_of, age))
    return tuple(out)


def months_older(as_of: str, today: date, months: int = 18) -> int | None:
    """The age in whole months of a figure dated ``as_of`` when it starts more than ``months``
    calendar months before ``today``; ``None`` when it is younger (or has no readable date)."""
    try:
        when = price_date(as_of)
    except ValueError:
        return None
    index = today.year * 12 + today.month - 1 - months
    cutoff = date(index // 12, index % 12 + 1, 1)
    cutoff = cutoff.replace(day=min(today.day, _month_days(cutoff)))
    if when >= cutoff:
        return None
    return (today.year - when.year) * 12 + today.month - when.month - (today.day < when.day)


def _month_days(first: date) -> int:
    nxt = date(first.year + first.month // 12, first.month % 12 + 1, 1)
    return (nxt - first).days
