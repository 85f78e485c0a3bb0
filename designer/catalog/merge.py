"""Merging catalog files: each file validated against the schema, its items added or overriding fields.

Precedence (docs/catalogs.md): files apply in order. An item whose name already exists for that
kind overrides only the fields it gives; a new name adds an entry and must give every required
field. References (server.gpu, server.nic, server.storage_nic, cloud.gpu) are checked once
everything is merged. Every error is ``FILE:LINE:COL: message`` with a did-you-mean where one is
close. :mod:`designer.catalog.load` reads the files and applies them here.
"""

from __future__ import annotations

__all__ = ["SCHEMA_VERSION", "Merge"]

from dataclasses import replace
from types import MappingProxyType
from typing import Any, Mapping

from designer.catalog.schema import KINDS as _KINDS
from designer.catalog.schema import REFERENCES as _REFERENCES
from designer.catalog.schema import REQUIRED as _REQUIRED
from designer.catalog.schema import Parser, price_date
from designer.catalog.schema import as_of as _as_of
from designer.catalog.schema import flag as _flag
from designer.catalog.schema import hint as _hint
from designer.catalog.schema import name_ref as _name_ref
from designer.catalog.schema import price_basis as _price_basis
from designer.catalog.schema import text as _text
from designer.catalog import domain, ports
from designer.catalog.types import KINDS, Catalog, FabricKind, Provenance
from designer.errors import CatalogError, Location
from designer.spec import bounds, yamlio

SCHEMA_VERSION = 1
_TOP_KEYS = ("schema_version", "kind", "items", "description")
_PROVENANCE_KEYS = ("source", "as_of", "estimate", "note", "price_basis")


class Merge:
    """Entries by kind while files are applied in order, with where each field was last set."""

    def __init__(self, base: Catalog | None):
        self.entries: dict[str, dict[str, Any]] = {k: dict(base.by_kind(k)) if base else {} for k in KINDS}
        self.where: dict[tuple[str, str, str], Location] = {}
        self.dates: dict[str, str] = dict(base.dates) if base else {}

    def apply(self, doc: yamlio.YamlDoc, label: str, expected_kind: str | None = None) -> None:
        """Validate one parsed file and merge its items (overrides by name, additions otherwise)."""
        data = doc.data
        if not isinstance(data, dict):
            raise CatalogError("a catalog file is a mapping with schema_version, kind and items", doc.locate(()))
        for key in data:
            if key not in _TOP_KEYS:
                # Quoted only when it is a misspelling of a catalog key: a line of some other file
                # that happens to parse as a key is not repeated.
                hint = _hint(key, _TOP_KEYS)
                what = f"unknown key {yamlio.shown(key)}{hint}" if hint else "unknown key"
                raise CatalogError(f"{what}; a catalog file has {', '.join(_TOP_KEYS)}",
                                   doc.locate((key,), key=True))
        for key in ("schema_version", "kind", "items"):
            if key not in data:
                raise CatalogError(f"missing '{key}'", doc.locate(()))
        if type(data["schema_version"]) is not int or data["schema_version"] != SCHEMA_VERSION:
            raise CatalogError(f"schema_version must be {SCHEMA_VERSION}, got {yamlio.shown(data['schema_version'])}",
                               doc.locate(("schema_version",)))
        kind = data["kind"]
        if not isinstance(kind, str) or kind not in _KINDS:
            raise CatalogError(f"unknown kind {yamlio.shown(kind)}{_hint(str(kind), KINDS)}; use one of {', '.join(KINDS)}",
                               doc.locate(("kind",)))
        if expected_kind is not None and kind != expected_kind:
            raise CatalogError(f"this file must have kind '{expected_kind}', not '{kind}'", doc.locate(("kind",)))
        items = data["items"]
        if not isinstance(items, list):
            raise CatalogError("'items' must be a list of entries", doc.locate(("items",)))
        if len(items) > bounds.MAX_CATALOG_ENTRIES:
            raise CatalogError(f"{len(items):,} items; a catalog file holds at most {bounds.MAX_CATALOG_ENTRIES:,} "
                               "(every entry multiplies the designs the optimizer weighs)", doc.locate(("items",)))
        seen: set[str] = set()
        newest: str | None = None
        for i, raw in enumerate(items):
            entry = self._item(doc, kind, i, raw, seen)
            as_of = entry.provenance.as_of
            if newest is None or (price_date(as_of), as_of) > (price_date(newest), newest):
                newest = as_of
        if len(self.entries[kind]) > bounds.MAX_CATALOG_ENTRIES:
            raise CatalogError(f"{len(self.entries[kind]):,} entries of kind {kind} once merged; at most "
                               f"{bounds.MAX_CATALOG_ENTRIES:,} (every entry multiplies the designs the optimizer "
                               "weighs)", doc.locate(("items",)))
        if newest is not None:
            self.dates[label] = newest

    def _item(self, doc: yamlio.YamlDoc, kind: str, i: int, raw: Any, seen: set[str]) -> Any:
        spec = _KINDS[kind]
        path = ("items", i)
        if not isinstance(raw, dict):
            raise CatalogError(f"each item is a mapping of fields, got {type(raw).__name__}", doc.locate(path))
        allowed = ("name", *(f.key for f in spec.fields), *_PROVENANCE_KEYS)
        for key in raw:
            if key not in allowed:
                raise CatalogError(f"unknown key {yamlio.shown(key)} for a {kind}{_hint(str(key), allowed)}",
                                   doc.locate(path + (key,), key=True))
        if "name" not in raw:
            raise CatalogError(f"this {kind} has no 'name'", doc.locate(path))
        name = _parse(doc, path + ("name",), _name_ref, raw["name"])
        if name in seen:
            raise CatalogError(f"{kind} '{name}' appears twice in this file", doc.locate(path + ("name",)))
        seen.add(name)
        for key in ("source", "as_of"):
            if key not in raw:
                raise CatalogError(f"{kind} '{name}' has no '{key}': every item says where its figures come "
                                   "from and when", doc.locate(path))
        prov = {key: _parse(doc, path + (key,), parse, raw[key]) for key, parse in
                (("source", _text), ("as_of", _as_of), ("estimate", _flag), ("note", _text),
                 ("price_basis", _price_basis)) if key in raw}
        if prov.get("estimate") and "note" not in prov:
            raise CatalogError(f"{kind} '{name}' is marked estimate: add a 'note' saying how it was derived",
                               doc.locate(path + ("estimate",)))
        values = {f.attr: _parse(doc, path + (f.key,), f.parse, raw[f.key]) for f in spec.fields if f.key in raw}
        for f in spec.fields:
            if f.attr in values:
                _check_range(doc, path + (f.key,), f.attr, values[f.attr])
        existing = self.entries[kind].get(name)
        if existing is not None:
            given = [f.key for f in spec.fields if f.key in raw]
            entry = replace(existing, **values, provenance=_merged_provenance(existing.provenance, prov, given))
        else:
            entry = self._new(doc, kind, name, path, values, prov)
        entry = ports.fill_ports(entry)
        _check_entry(doc, kind, entry, path)
        self.entries[kind][name] = entry
        for f in spec.fields:
            if f.key in raw:
                self.where[(kind, name, f.attr)] = doc.locate(path + (f.key,))
        return entry

    def _new(self, doc: yamlio.YamlDoc, kind: str, name: str, path: tuple, values: dict, prov: dict) -> Any:
        spec = _KINDS[kind]
        missing = [f.key for f in spec.fields if f.default is _REQUIRED and f.attr not in values]
        if missing:
            hint = _hint(name, self.entries[kind])
            raise CatalogError(f"new {kind} '{name}' is missing {', '.join(missing)}: a new name needs every "
                               f"required field; an override needs the exact name of an existing {kind}{hint}",
                               doc.locate(path))
        extra: dict[str, Any] = {}
        if kind == "fabric":
            kinds = [k.value for k in FabricKind]
            if name not in kinds:
                raise CatalogError(f"fabric profiles are named after a fabric kind: '{name}'{_hint(name, kinds)} "
                                   f"is not one of {', '.join(kinds)}", doc.locate(path + ("name",)))
            extra["kind"] = FabricKind(name)
        defaults = {f.attr: f.default for f in spec.fields if f.default is not _REQUIRED}
        return spec.cls(name=name, **{**defaults, **values}, **extra,
                        provenance=Provenance(prov["source"], prov["as_of"], prov.get("estimate", False),
                                              prov.get("note", ""), prov.get("price_basis", "")))

    def check_references(self) -> None:
        """Every name one entry gives for another exists (server.gpu -> gpus, ...)."""
        for kind, attr, target in _REFERENCES:
            for name, entry in sorted(self.entries[kind].items()):
                ref = getattr(entry, attr)
                if ref is not None and ref not in self.entries[target]:
                    where = self.where.get((kind, name, attr), Location("<catalog>", path=f"{kind}.{name}.{attr}"))
                    raise CatalogError(f"{kind} '{name}' names unknown {target} '{ref}'"
                                       f"{_hint(ref, self.entries[target])}", where)
        # A discount for a vendor no entry has would silently change nothing (a misspelt vendor).
        vendors = {"other-vendors"} | {e.provider for e in self.entries["cloud"].values()}
        vendors |= {getattr(e, "vendor", "") for k in ("gpu", "nic", "switch", "server", "storage", "appliance")
                    for e in self.entries[k].values()}
        for name, book in sorted(self.entries["price_book"].items()):
            for vendor in book.discounts:
                if vendor not in vendors:
                    where = self.where.get(("price_book", name, "discounts"),
                                           Location("<catalog>", path=f"price_book.{name}.discounts"))
                    raise CatalogError(f"price_book '{name}' gives a discount for '{vendor}', a vendor no catalog "
                                       f"entry has{_hint(vendor, vendors - {''})}", where)

    def catalog(self, digest: str) -> Catalog:
        maps = {_KINDS[k].attr: MappingProxyType(dict(sorted(self.entries[k].items()))) for k in KINDS}
        return Catalog(**maps, digest=digest, dates=MappingProxyType(dict(sorted(self.dates.items()))))


def _parse(doc: yamlio.YamlDoc, path: tuple, parse: Parser, value: Any) -> Any:
    try:
        return parse(value)
    except (ValueError, TypeError) as exc:
        raise CatalogError(f"{path[-1]}: {exc}", doc.locate(path)) from None


def _check_range(doc: yamlio.YamlDoc, path: tuple, attr: str, value: Any) -> None:
    """The sane range of a field (:mod:`designer.spec.bounds`): each number, each rate and port
    count of a breakout, each speed of a list."""
    try:
        if isinstance(value, bool) or value is None:
            return
        if isinstance(value, (int, float)):
            rng = bounds.catalog_range(attr)
            if rng is not None:
                rng.check(value)
        elif isinstance(value, tuple):
            for item in value:
                _check_range(doc, path, attr, item)
        elif isinstance(value, Mapping) and attr == "breakout":
            for rate, count in value.items():
                bounds.CATALOG_SUFFIXES["_Bps"].check(rate)
                bounds.CATALOG_COUNTS["breakout_ports"].check(count)
    except ValueError as exc:
        raise CatalogError(f"{path[-1]}: {exc}", doc.locate(path)) from None


def _merged_provenance(old: Provenance, given: dict, keys: list[str]) -> Provenance:
    """An override's source and date describe the fields it gives; the rest keep their source."""
    changed = ", ".join(keys) or "provenance only"
    # A price given without its basis is the buyer's own figure: a quote.
    basis = given.get("price_basis", "quote" if any(k.startswith("price") for k in keys) else old.price_basis)
    return Provenance(source=f"{given['source']} [{changed}]; otherwise: {old.source}",
                      as_of=given["as_of"], estimate=given.get("estimate", old.estimate),
                      note=given.get("note", old.note), price_basis=basis)


def _check_entry(doc: yamlio.YamlDoc, kind: str, entry: Any, path: tuple) -> None:
    """Rules that span fields, checked on the merged entry."""
    problem = None
    if kind == "switch" and any(rate >= entry.port_rate_Bps for rate in entry.breakout):
        problem = ("breakout", "breakout rates must be below the native port rate")
    elif kind == "server" and (entry.storage_nic is None) != (entry.storage_nics == 0):
        problem = ("storage_nics", "give storage_nic and storage_nics together (or neither)")
    elif kind == "server":
        problem = domain.packaging_problem(entry)
    elif kind == "cloud" and entry.domain_gpus and entry.domain_gpus % entry.gpus:
        problem = ("domain_gpus", f"a scale-up domain of {entry.domain_gpus} GPUs is not whole instances of "
                                  f"{entry.gpus} GPUs")
    if problem is None:
        problem = ports.port_problem(entry)
    if problem:
        raise CatalogError(f"{kind} '{entry.name}': {problem[1]}", doc.locate(path + (problem[0],)))
