"""Catalogs: hardware, prices and their provenance, loaded once into a frozen Catalog.

Modules: :mod:`~designer.catalog.types` (the entries), :mod:`~designer.catalog.schema` (keys,
parsers and references per kind), :mod:`~designer.catalog.merge` (files applied in order),
:mod:`~designer.catalog.load` (built-ins plus user files) and :mod:`~designer.catalog.query`
(lookups, stale prices).
"""

from __future__ import annotations

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

# Lazy re-exports: importing one module of the package (designer.catalog.types, as the command
# line does for its help) does not load the others, nor YAML.
_HOMES = {
    "BUILTIN_FILES": "load", "load_builtin": "load", "load_catalog": "load", "SCHEMA_VERSION": "merge",
    "StaleEntry": "query", "field_keys": "query", "find": "query", "has_price": "query",
    "normalize_kind": "query", "stale_entries": "query", "price_date": "schema", "KINDS": "types",
    "Catalog": "types",
}


def __getattr__(name: str):
    import importlib

    if name not in _HOMES:
        raise AttributeError(f"module 'designer.catalog' has no attribute {name!r}")
    return getattr(importlib.import_module(f"designer.catalog.{_HOMES[name]}"), name)
