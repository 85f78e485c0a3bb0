"""The JSON Schema of the spec as written (draft 2020-12), generated from the spec's input models.

``designer schema`` prints it for editors (yaml-language-server) and CI (``check-jsonschema``).
It describes what a person writes, not what the loader makes of it: ``horizon: 3 years`` is a
string with a pattern, ``tokens: 15T`` a number or a string, ``min_utilization`` a number from 0
to 1 or a percentage. The generator walks the pydantic models of :mod:`designer.spec.schema`
field by field:

* a value type of :mod:`designer.spec.values` brings its schema as written (its
  :class:`~designer.spec.values.AsWritten` marker), description and examples;
* ``Literal`` becomes ``enum`` (or ``const``), a model a ``$ref`` into ``$defs`` with
  ``additionalProperties: false`` (unknown keys are errors), ``list`` an ``array``, ``X | None``
  an ``anyOf`` with ``null``;
* bounds (``Field(ge=1, le=16)``) become ``minimum``/``maximum`` (``exclusive...`` for ``gt``/``lt``)
  on the number branches; a bound on a unit string (a duration above zero) is said in the
  description, since JSON Schema cannot compare ``"2 h"`` with ``"1 day"``;
* every field's ``description`` is required (tests/spec/test_jsonschema.py fails on a field
  without one); examples come from ``Field(examples=...)``, the value type, or the choices.

Only JSON Schema keywords are emitted. A field's ``json_schema_extra`` mapping is merged last, for
the rare field whose default or examples cannot be derived (a default given in SI units); a
model's (in its ``model_config``) is merged into the model's schema, for a rule across its fields
(a preference names exactly one property).
"""

from __future__ import annotations

__all__ = ["DIALECT", "spec_json_schema"]

import copy
import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types as at
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from designer.spec.values import AsWritten

DIALECT = "https://json-schema.org/draft/2020-12/schema"
_NO_EXAMPLE = object()
_BOUNDS = ((at.Ge, "ge", "minimum"), (at.Gt, "gt", "exclusiveMinimum"), (at.Le, "le", "maximum"),
           (at.Lt, "lt", "exclusiveMaximum"))
_BOUND_WORDS = {"minimum": "at least", "exclusiveMinimum": "greater than", "maximum": "at most",
                "exclusiveMaximum": "less than"}


def _flatten(tp: Any, meta: list[Any]) -> tuple[Any, list[Any]]:
    """The bare type and every piece of metadata on it (``Annotated`` layers and ``Field()`` in them)."""
    meta = list(meta)
    while get_origin(tp) is Annotated:
        base, *more = get_args(tp)
        tp, meta = base, list(more) + meta
    out: list[Any] = []
    for m in meta:
        out.extend([m, *m.metadata] if isinstance(m, FieldInfo) else [m])
    return tp, out


def _written(meta: list[Any]) -> AsWritten | None:
    return next((m for m in meta if isinstance(m, AsWritten)), None)


def _field_written(info: FieldInfo) -> tuple[Any, list[Any], AsWritten | None]:
    """A field's bare type, metadata, and the value type's marker (also inside ``X | None``)."""
    tp, meta = _flatten(info.annotation, info.metadata)
    written = _written(meta)
    if written is None and get_origin(tp) in (Union, types.UnionType):
        written = next((w for w in (_written(_flatten(a, [])[1]) for a in get_args(tp)) if w is not None), None)
    return tp, meta, written


def _bounds(meta: list[Any]) -> dict[str, float]:
    found: dict[str, float] = {}
    for m in meta:
        for cls, attr, keyword in _BOUNDS:
            if isinstance(m, cls):
                found[keyword] = getattr(m, attr)
    return found


def _lengths(meta: list[Any]) -> tuple[int | None, int | None]:
    low = next((m.min_length for m in meta if isinstance(m, at.MinLen)), None)
    high = next((m.max_length for m in meta if isinstance(m, at.MaxLen)), None)
    return low, high


def _apply_bounds(schema: dict[str, Any], bounds: dict[str, float]) -> bool:
    """Put numeric bounds on every number branch; True when a string branch could not take them."""
    if "anyOf" in schema:
        missed = [_apply_bounds(branch, bounds) for branch in schema["anyOf"]]
        return any(missed)
    kind = schema.get("type")
    if kind in ("number", "integer"):
        for keyword, value in bounds.items():
            if keyword in ("minimum", "exclusiveMinimum"):
                schema[keyword] = max(value, schema.get(keyword, value))
            else:
                schema[keyword] = min(value, schema.get(keyword, value))
        # A strict bound makes the inclusive one at the same place redundant.
        for strict, loose, tighter in (("exclusiveMinimum", "minimum", max), ("exclusiveMaximum", "maximum", min)):
            if strict in schema and loose in schema and tighter(schema[strict], schema[loose]) == schema[strict]:
                del schema[loose]
        return False
    return kind == "string" and bool(bounds)


def _plain(value: Any) -> Any:
    """A default as JSON data, or ``_NO_EXAMPLE`` when it is not plain data."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        items = [_plain(v) for v in value]
        return _NO_EXAMPLE if any(i is _NO_EXAMPLE for i in items) else items
    return _NO_EXAMPLE


class _Generator:
    def __init__(self) -> None:
        self.defs: dict[str, dict[str, Any]] = {}

    # ------------------------------------------------------------------ types

    def type_schema(self, tp: Any, meta: list[Any]) -> dict[str, Any]:
        """The schema of a value of type ``tp`` carrying ``meta``."""
        tp, meta = _flatten(tp, meta)
        written = _written(meta)
        origin = get_origin(tp)
        if written is not None:
            schema = copy.deepcopy(dict(written.schema))
            _apply_bounds(schema, _bounds(meta))
            return schema
        if origin in (Union, types.UnionType):
            branches: list[dict[str, Any]] = []
            for arg in get_args(tp):
                branch = {"type": "null"} if arg is type(None) else self.type_schema(arg, [])
                branches.extend(branch["anyOf"] if list(branch) == ["anyOf"] else [branch])
            schema = {"anyOf": branches}
            _apply_bounds(schema, _bounds(meta))
            return schema
        if origin is Literal:
            values = list(get_args(tp))
            schema = {"const": values[0]} if len(values) == 1 else {"enum": values}
            if all(isinstance(v, str) for v in values):
                schema["type"] = "string"
            elif all(isinstance(v, int) and not isinstance(v, bool) for v in values):
                schema["type"] = "integer"
            return schema
        if origin is list:
            (item,) = get_args(tp)
            schema = {"type": "array", "items": self.type_schema(item, [])}
            low, high = _lengths(meta)
            if low:
                schema["minItems"] = low
            if high is not None:
                schema["maxItems"] = high
            return schema
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            name = tp.__name__.lstrip("_")
            if name not in self.defs:
                self.defs[name] = {}  # reserved first: a model may refer to itself
                self.defs[name] = self.model_schema(tp)
            return {"$ref": f"#/$defs/{name}"}
        simple = {bool: "boolean", int: "integer", float: "number", str: "string"}
        if tp in simple:
            schema = {"type": simple[tp]}
            if tp is str:
                low, high = _lengths(meta)
                if low:
                    schema["minLength"] = low
                if high is not None:
                    schema["maxLength"] = high
            elif tp is not bool:
                _apply_bounds(schema, _bounds(meta))
            return schema
        raise TypeError(f"no JSON Schema for the spec type {tp!r}; give it an AsWritten marker")

    def example(self, tp: Any, meta: list[Any]) -> Any:
        """An example value of the type, or ``_NO_EXAMPLE``."""
        tp, meta = _flatten(tp, meta)
        written = _written(meta)
        if written is not None:
            return written.examples[0] if written.examples else _NO_EXAMPLE
        origin = get_origin(tp)
        if origin in (Union, types.UnionType):
            for arg in get_args(tp):
                if arg is not type(None) and get_args(arg) != ("auto",):
                    found = self.example(arg, [])
                    if found is not _NO_EXAMPLE:
                        return found
            return "auto" if any(get_args(a) == ("auto",) for a in get_args(tp)) else _NO_EXAMPLE
        if origin is Literal:
            return get_args(tp)[0]
        if origin is list:
            item = self.example(get_args(tp)[0], [])
            return _NO_EXAMPLE if item is _NO_EXAMPLE else [item]
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            return self.model_example(tp)
        if tp is bool:
            return True
        return _NO_EXAMPLE

    # ------------------------------------------------------------------ models

    def field_examples(self, info: FieldInfo) -> list[Any]:
        if info.examples:
            return list(info.examples)
        tp, meta, written = _field_written(info)
        if written is not None and written.examples:
            return list(written.examples)
        default = self.default(info)
        found = self.example(tp, meta)
        if default is not _NO_EXAMPLE and default is not None and default != found:
            return [v for v in (found, default) if v is not _NO_EXAMPLE]
        return [] if found is _NO_EXAMPLE else [found]

    def default(self, info: FieldInfo) -> Any:
        """The field's default as written, or ``_NO_EXAMPLE`` (required, or a default in SI units)."""
        if info.default_factory is not None:
            value = info.default_factory()
        elif info.default is PydanticUndefined:
            return _NO_EXAMPLE
        else:
            value = info.default
        if isinstance(value, BaseModel):
            return _NO_EXAMPLE  # an empty section: its own fields say their defaults
        written = _field_written(info)[2]
        if written is not None and not written.plain_default and value is not None:
            return _NO_EXAMPLE
        return _plain(value)

    def field_schema(self, owner: type[BaseModel], name: str, info: FieldInfo) -> dict[str, Any]:
        if not info.description:
            raise ValueError(f"{owner.__name__}.{name} has no description: give it Field(description=...)")
        schema = self.type_schema(info.annotation, info.metadata)
        tp, meta, written = _field_written(info)
        description = info.description
        if written is not None:
            description += f" Written as {written.description}."
            bounds = _bounds(meta)
            string_only = _apply_bounds(copy.deepcopy(schema), bounds) if bounds else False
            for keyword, value in bounds.items():
                if string_only:
                    amount = "zero" if value == 0 else f"{value:g} {written.si_unit}".rstrip()
                    description += f" Must be {_BOUND_WORDS[keyword]} {amount}."
        out: dict[str, Any] = {"description": description, **schema}
        default = self.default(info)
        if default is not _NO_EXAMPLE and default is not None:
            out["default"] = default
        examples = self.field_examples(info)
        if examples:
            out["examples"] = examples
        if isinstance(info.json_schema_extra, dict):
            out.update(info.json_schema_extra)
        return out

    def model_schema(self, cls: type[BaseModel]) -> dict[str, Any]:
        properties = {name: self.field_schema(cls, name, info) for name, info in cls.model_fields.items()}
        required = [name for name, info in cls.model_fields.items() if info.is_required()]
        schema: dict[str, Any] = {"type": "object"}
        if cls.__doc__ and cls.__doc__.strip():
            schema["description"] = " ".join(cls.__doc__.split())
        schema["properties"] = properties
        if required:
            schema["required"] = required
        if cls.model_config.get("extra") == "forbid":
            schema["additionalProperties"] = False
        extra = cls.model_config.get("json_schema_extra")
        if isinstance(extra, dict):  # a rule across the model's fields (a preference names exactly one)
            schema.update(copy.deepcopy(extra))
        return schema

    def model_example(self, cls: type[BaseModel]) -> Any:
        """An example mapping: the required fields with their first example (or the first field
        that has one, for a section without required fields)."""
        out = {}
        for name, info in cls.model_fields.items():
            if info.is_required():
                examples = self.field_examples(info)
                if examples:
                    out[name] = examples[0]
        if out:
            return out
        for name, info in cls.model_fields.items():
            examples = self.field_examples(info)
            if examples and examples[0] is not None:
                return {name: examples[0]}
        return _NO_EXAMPLE


def spec_json_schema() -> dict[str, Any]:
    """The spec's JSON Schema as written (draft 2020-12): keys, types, unit patterns, bounds,
    descriptions and examples, generated from :class:`designer.spec.schema.SpecInput`."""
    from designer.spec.schema import SpecInput

    gen = _Generator()
    root = gen.model_schema(SpecInput)
    return {"$schema": DIALECT, "title": "designer spec", **root, "$defs": dict(sorted(gen.defs.items()))}
