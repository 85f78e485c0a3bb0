"""A buyer's price book applied to a catalog: per-vendor discounts off every price, and the currency reports use.

The model stays in US dollars: the book's ``exchange_rate`` only converts amounts for people. A
discount applies to the entries of its vendor (a server, GPU, NIC, switch or storage system's
``vendor``; a cloud instance's ``provider``); ``other-vendors`` covers parts of every vendor the
book does not name (cables and optics have none), never a cloud provider. A server is priced
complete by its own vendor, so the GPU and NIC lines a bill of materials splits out of it take
their own vendors' discounts and the server line the rest (:func:`designer.optimize.pricing.server_lines`).
"""

from __future__ import annotations

__all__ = ["apply_price_book", "discount_for"]

from dataclasses import replace
from types import MappingProxyType
from typing import Any

from designer.catalog.types import Catalog, CloudInstance, PriceBook, Provenance

_HARDWARE = ("gpus", "nics", "switches", "cables", "transceivers", "servers", "storage", "appliances")
_CLOUD_PRICES = ("price_on_demand_usd_per_s", "price_reserved_1y_usd_per_s", "price_reserved_3y_usd_per_s",
                 "price_capacity_block_usd_per_s")


def discount_for(book: PriceBook, vendor: str, *, cloud: bool = False) -> float:
    """The share off a vendor's prices: its own discount, else (hardware only) ``other-vendors``'s, else 0."""
    if vendor in book.discounts:
        return book.discounts[vendor]
    return 0.0 if cloud else book.discounts.get("other-vendors", 0.0)


def _provenance(p: Provenance, book: PriceBook, share: float) -> Provenance:
    note = f"{share:.1%} off per price book {book.name} ({book.provenance.source}, {book.provenance.as_of})"
    return replace(p, note=f"{p.note} {note}".strip(), price_basis=book.provenance.price_basis or p.price_basis)


def _discounted(entry: Any, book: PriceBook) -> Any:
    if isinstance(entry, CloudInstance):
        share = discount_for(book, entry.provider, cloud=True)
        if share == 0.0:
            return entry
        prices = {a: None if getattr(entry, a) is None else getattr(entry, a) * (1.0 - share) for a in _CLOUD_PRICES}
        return replace(entry, **prices, provenance=_provenance(entry.provenance, book, share))
    share = discount_for(book, getattr(entry, "vendor", "") or "other-vendors")
    if share == 0.0 or entry.price_usd is None:  # an unpriced entry stays unpriced, never $0
        return entry
    return replace(entry, price_usd=entry.price_usd * (1.0 - share),
                   provenance=_provenance(entry.provenance, book, share))


def apply_price_book(catalog: Catalog, name: str | None) -> Catalog:
    """The catalog with the named book's discounts applied to every price they cover (``name`` None:
    the catalog unchanged).

    Model:
        price' = price x (1 - discount(vendor)); cloud instances: every pricing model's hourly rate.
        Support contracts, priced as a share of the purchase price, follow the discounted price.

    Raises:
        KeyError: no price book of that name (the spec's reference check reports it first, located).
    """
    if name is None:
        return catalog
    book = catalog.price_books[name]
    changes = {attr: MappingProxyType({n: _discounted(e, book) for n, e in getattr(catalog, attr).items()})
               for attr in (*_HARDWARE, "clouds")}
    return replace(catalog, **changes)
