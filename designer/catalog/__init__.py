"""Catalogs: hardware, prices and their provenance, loaded once into a frozen Catalog.

Modules: :mod:`~designer.catalog.types` (the entries), :mod:`~designer.catalog.schema` (keys,
parsers and references per kind), :mod:`~designer.catalog.merge` (files applied in order),
:mod:`~designer.catalog.load` (built-ins plus user files) and :mod:`~designer.catalog.query`
(lookups, stale prices).
"""

from __future__ import annotations

from designer.catalog.load import BUILTIN_FILES, load_builtin, load_catalog
from designer.catalog.merge import SCHEMA_VERSION
from designer.catalog.query import StaleEntry, field_keys, find, has_price, normalize_kind, stale_entries
from designer.catalog.schema import price_date
from designer.catalog.types import KINDS, Catalog

__all__ = [
    "BUILTIN_FILES",
    "SCHEMA_VERSION",
    "KINDS",
    "Catalog",
    "StaleEntry",
    "load_builtin",
    "load_catalog",
    "find",
    "field_keys",
    "normalize_kind",
    "has_price",
    "price_date",
    "stale_entries",
]
