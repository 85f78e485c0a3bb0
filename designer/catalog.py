"""Catalogs: the built-in ``catalogs/*.yaml`` plus user files, validated once into a frozen Catalog.

Every catalog file has the same form::

    schema_version: 1
    kind: switch            # one of catalog_types.KINDS
    items:
      - name: nvidia-qm9700
        price: $36,000      # quantities carry units, parsed by designer.units
        source: ...         # every item says where its figures come from
        as_of: 2024-08      # YYYY, YYYY-MM or YYYY-MM-DD

Precedence (docs/catalogs.md): files load in order (built-ins first, then user files in the
order given). An item whose name already exists for that kind overrides only the fields it gives;
a new name adds an entry and must give every required field. References (server.gpu, server.nic,
server.storage_nic, cloud.gpu) are checked once everything is merged. Every error is
``FILE:LINE:COL: message`` with a did-you-mean where one is close.
"""

from __future__ import annotations

__all__ = [
    "BUILTIN_FILES",
    "SCHEMA_VERSION",
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

import hashlib
from dataclasses import dataclass, replace
from datetime import date
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, Sequence

from designer import yamlio
from designer.catalog_types import KINDS, Catalog, FabricKind, Provenance
from designer.catalog_schema import KINDS as _KINDS
from designer.catalog_schema import REFERENCES as _REFERENCES
from designer.catalog_schema import REQUIRED as _REQUIRED
from designer.catalog_schema import Parser, price_date
from designer.catalog_schema import as_of as _as_of
from designer.catalog_schema import hint as _hint
from designer.catalog_schema import flag as _flag
from designer.catalog_schema import name_ref as _name_ref
from designer.catalog_schema import text as _text
from designer.errors import CatalogError, InputError, Location

SCHEMA_VERSION = 1
# Load order of the built-in files: referenced kinds (GPUs, NICs) come before their users.
BUILTIN_FILES = ("gpus.yaml", "nics.yaml", "switches.yaml", "cables.yaml", "transceivers.yaml",
                 "servers.yaml", "clouds.yaml", "fabrics.yaml", "facility.yaml")
_BUILTIN_PACKAGE = "designer.catalogs"
_TOP_KEYS = ("schema_version", "kind", "items", "description")
_PROVENANCE_KEYS = ("source", "as_of", "estimate", "note")
_PLURALS = {"gpus": "gpu", "nics": "nic", "switches": "switch", "cables": "cable", "transceivers": "transceiver",
            "servers": "server", "clouds": "cloud", "fabrics": "fabric", "facilities": "facility"}


# --- merging ----------------------------------------------------------------------------------

class _Merge:
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
                raise CatalogError(f"unknown key '{key}'{_hint(key, _TOP_KEYS)}; a catalog file has "
                                   f"{', '.join(_TOP_KEYS)}", doc.locate((key,), key=True))
        for key in ("schema_version", "kind", "items"):
            if key not in data:
                raise CatalogError(f"missing '{key}'", doc.locate(()))
        if type(data["schema_version"]) is not int or data["schema_version"] != SCHEMA_VERSION:
            raise CatalogError(f"schema_version must be {SCHEMA_VERSION}, got {data['schema_version']!r}",
                               doc.locate(("schema_version",)))
        kind = data["kind"]
        if not isinstance(kind, str) or kind not in _KINDS:
            raise CatalogError(f"unknown kind {kind!r}{_hint(str(kind), KINDS)}; use one of {', '.join(KINDS)}",
                               doc.locate(("kind",)))
        if expected_kind is not None and kind != expected_kind:
            raise CatalogError(f"this file must have kind '{expected_kind}', not '{kind}'", doc.locate(("kind",)))
        items = data["items"]
        if not isinstance(items, list):
            raise CatalogError("'items' must be a list of entries", doc.locate(("items",)))
        seen: set[str] = set()
        newest: str | None = None
        for i, raw in enumerate(items):
            entry = self._item(doc, kind, i, raw, seen)
            as_of = entry.provenance.as_of
            if newest is None or (price_date(as_of), as_of) > (price_date(newest), newest):
                newest = as_of
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
                raise CatalogError(f"unknown key '{key}' for a {kind}{_hint(str(key), allowed)}",
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
                (("source", _text), ("as_of", _as_of), ("estimate", _flag), ("note", _text)) if key in raw}
        if prov.get("estimate") and "note" not in prov:
            raise CatalogError(f"{kind} '{name}' is marked estimate: add a 'note' saying how it was derived",
                               doc.locate(path + ("estimate",)))
        values = {f.attr: _parse(doc, path + (f.key,), f.parse, raw[f.key]) for f in spec.fields if f.key in raw}
        existing = self.entries[kind].get(name)
        if existing is not None:
            given = [f.key for f in spec.fields if f.key in raw]
            entry = replace(existing, **values, provenance=_merged_provenance(existing.provenance, prov, given))
        else:
            entry = self._new(doc, kind, name, path, values, prov)
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
                                              prov.get("note", "")))

    def check_references(self) -> None:
        """Every name one entry gives for another exists (server.gpu -> gpus, ...)."""
        for kind, attr, target in _REFERENCES:
            for name, entry in sorted(self.entries[kind].items()):
                ref = getattr(entry, attr)
                if ref is not None and ref not in self.entries[target]:
                    where = self.where.get((kind, name, attr), Location("<catalog>", path=f"{kind}.{name}.{attr}"))
                    raise CatalogError(f"{kind} '{name}' names unknown {target} '{ref}'"
                                       f"{_hint(ref, self.entries[target])}", where)

    def catalog(self, digest: str) -> Catalog:
        maps = {_KINDS[k].attr: MappingProxyType(dict(sorted(self.entries[k].items()))) for k in KINDS}
        return Catalog(**maps, digest=digest, dates=MappingProxyType(dict(sorted(self.dates.items()))))


def _parse(doc: yamlio.YamlDoc, path: tuple, parse: Parser, value: Any) -> Any:
    try:
        return parse(value)
    except (ValueError, TypeError) as exc:
        raise CatalogError(f"{path[-1]}: {exc}", doc.locate(path)) from None


def _merged_provenance(old: Provenance, given: dict, keys: list[str]) -> Provenance:
    """An override's source and date describe the fields it gives; the rest keep their source."""
    changed = ", ".join(keys) or "provenance only"
    return Provenance(source=f"{given['source']} [{changed}]; otherwise: {old.source}",
                      as_of=given["as_of"], estimate=given.get("estimate", old.estimate),
                      note=given.get("note", old.note))


def _check_entry(doc: yamlio.YamlDoc, kind: str, entry: Any, path: tuple) -> None:
    """Rules that span fields, checked on the merged entry."""
    problem = None
    if kind == "switch" and any(rate >= entry.port_rate_Bps for rate in entry.breakout):
        problem = ("breakout", "breakout rates must be below the native port rate")
    elif kind == "server" and (entry.storage_nic is None) != (entry.storage_nics == 0):
        problem = ("storage_nics", "give storage_nic and storage_nics together (or neither)")
    if problem:
        raise CatalogError(f"{kind} '{entry.name}': {problem[1]}", doc.locate(path + (problem[0],)))


def _load_doc(path: Path, raw: bytes | None = None) -> tuple[yamlio.YamlDoc, bytes]:
    """Parse a user file (or the bytes of a built-in one); YAML problems become CatalogErrors."""
    try:
        if raw is not None:
            return yamlio.load_yaml_text(raw.decode("utf-8"), str(path)), raw
        return yamlio.load_yaml(path), path.read_bytes()
    except InputError as exc:
        raise CatalogError(exc.message, exc.location) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogError(f"cannot read file: {exc}", Location(str(path))) from None


def _builtin_root() -> Any:
    """The installed ``designer.catalogs`` package, or ``catalogs/`` beside the package in a checkout."""
    try:
        return resources.files(_BUILTIN_PACKAGE)
    except ModuleNotFoundError:
        # pyproject maps catalogs/ to designer.catalogs only when installed; a source checkout
        # (tests run from the repository) finds it next to the designer/ folder instead.
        return Path(__file__).resolve().parent.parent / "catalogs"


def _apply_builtins(merge: _Merge, digest: Any) -> None:
    root = _builtin_root()
    for file_name in BUILTIN_FILES:
        resource = root.joinpath(file_name)
        doc, raw = _load_doc(Path(str(resource)), resource.read_bytes())
        digest.update(raw)
        stem = file_name.removesuffix(".yaml")
        merge.apply(doc, f"builtin:{file_name}", expected_kind=_PLURALS.get(stem, stem))


def load_builtin() -> Catalog:
    """Load and validate the catalogs shipped with the package (``designer.catalogs``).

    Returns:
        The built-in Catalog; ``digest`` is the sha256 of the built-in files' bytes in load order.

    Raises:
        CatalogError: a built-in file is invalid (a packaging bug, located at FILE:LINE:COL).
    """
    return load_catalog(())


def load_catalog(user_files: Sequence[Path | str] = (), *, base: Catalog | None = None) -> Catalog:
    """Load the built-in catalogs (or ``base``) and merge user catalog files over them, in order.

    Model:
        Later files override earlier ones, user files override built-ins. An item naming an
        existing entry of its kind replaces only the fields it gives (its ``source``/``as_of``
        describe those fields); a new name adds an entry and must give every required field.

    Args:
        user_files: user catalog YAML files, applied in the order given.
        base: an already loaded catalog to merge onto instead of the built-ins.

    Returns:
        The merged Catalog. ``digest`` is sha256 over the bytes of every file in load order
        (built-ins first); with ``base`` it is sha256(base.digest + the user files' bytes).

    Raises:
        CatalogError: malformed YAML, unknown key, bad unit, missing field, unknown reference;
            located at FILE:LINE:COL with a did-you-mean where one is close.
    """
    if isinstance(user_files, (str, Path)):  # one file given bare, not in a list
        user_files = (user_files,)
    merge = _Merge(base)
    digest = hashlib.sha256()
    if base is None:
        _apply_builtins(merge, digest)
    else:
        digest.update(base.digest.encode("ascii"))
    for user_file in user_files:
        path = Path(user_file)
        doc, raw = _load_doc(path)
        digest.update(raw)
        merge.apply(doc, str(user_file))
    merge.check_references()
    return merge.catalog(digest.hexdigest())


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
    return not (kind == "gpu" and entry.price_usd is None)


def stale_entries(catalog: Catalog, today: date, months: int = 18) -> tuple[StaleEntry, ...]:
    """Priced entries whose ``as_of`` starts more than ``months`` calendar months before ``today``.

    GPU prices move by tens of percent within a year (AWS cut P5 on-demand prices by up to 45% in
    June 2025, per usage.ai), so an 18-month-old price deserves a warning, not a failure.
    """
    index = today.year * 12 + today.month - 1 - months
    cutoff = date(index // 12, index % 12 + 1, 1)
    cutoff = cutoff.replace(day=min(today.day, _month_days(cutoff)))
    out = []
    for kind in KINDS:
        for name, entry in catalog.by_kind(kind).items():
            when = price_date(entry.provenance.as_of)
            if has_price(kind, entry) and when < cutoff:
                age = (today.year - when.year) * 12 + today.month - when.month - (today.day < when.day)
                out.append(StaleEntry(kind, name, entry.provenance.as_of, age))
    return tuple(out)


def _month_days(first: date) -> int:
    nxt = date(first.year + first.month // 12, first.month % 12 + 1, 1)
    return (nxt - first).days
