"""The design file: deterministic YAML out (STYLE.md 7.9), validated designs back in, and the JSON document.

:func:`dump_design` writes the design file, :func:`parse_design` / :func:`load_design` read one
back (:func:`load_committed_design`: as committed in git) and validate it against the dataclasses of
:mod:`designer.design.model`, and
:func:`design_to_json_dict` gives the ``solve --format json`` document.
"""

from __future__ import annotations

__all__ = [
    "as_written",
    "dump_design",
    "load_design",
    "load_committed_design",
    "parse_design",
    "design_to_json_dict",
]

import collections.abc
import difflib
import functools
import math
import numbers
import re
import types
from dataclasses import MISSING, fields, is_dataclass
from enum import Enum
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Iterator, Mapping, Union, get_args, get_origin, get_type_hints

import yaml

from designer.design import bom, bomjson, verify
from designer.design.bom import BomLine
from designer.design.model import SCHEMA_VERSION, ConstraintStatus, Design
from designer.errors import DesignFileError, InputError
from designer.spec import yamlio

# ================================================================ writing
#
# The design file is what reviewers diff, so its bytes must depend on the design alone:
# ``schema_version`` first, keys in dataclass order (``bom`` last, one line item per line), money as
# two-decimal strings, every other float rounded to ``bom.SIG_DIGITS`` significant digits, no
# timestamps. Rounding happens here, on the way out, so dump(load(dump(d))) == dump(d).

# Fields holding US dollars besides the ``*_usd`` ones: mappings whose values are dollars.
_MONEY_MAPPINGS = frozenset({"capex_by_category", "opex_by_category", "delta_by_line"})
# Key order of a BOM line item in the design file; fields not listed follow in dataclass order.
_BOM_KEYS = ("category", "role", "sku", "quantity", "unit_price_usd", "total_usd", "unit_power_w",
             "description", "source")
_FIT_KEYS = ("connector", "protocol", "lanes", "lane_gbps", "media", "plugs_into", "ends")
# Keys a design file may carry that are derived, not stored: checked on load, then dropped.
_DERIVED_KEYS: Mapping[type, tuple[str, ...]] = MappingProxyType({BomLine: ("total_usd",)})
# Fields rounded to other than bom.SIG_DIGITS significant digits.
_DIGITS: Mapping[str, int] = MappingProxyType({"quantity": bom.QUANTITY_SIG_DIGITS})
# At most 16 digits of dollars (verify.MAX_MONEY_USD is 10^15): a 400-digit string is refused, not infinity.
_MONEY_TEXT = re.compile(r"-?\d{1,16}(\.\d{1,6})?")


# A constraint in dollars (a budget) keeps its limit, value and slack to the cent like other money.
_MONEY_UNITS = frozenset({"usd", "$"})
_CONSTRAINT_AMOUNTS = ("limit", "value", "slack")


def _is_money(name: str) -> bool:
    return name.endswith("_usd") or name in _MONEY_MAPPINGS


def _money_names(cls: type, unit: Any) -> frozenset[str]:
    """Fields of ``cls`` that hold dollars beyond the ``*_usd`` ones, given the record's unit."""
    if cls is ConstraintStatus and isinstance(unit, str) and unit.strip().lower() in _MONEY_UNITS:
        return frozenset(_CONSTRAINT_AMOUNTS)
    return frozenset()


def _plain(value: Any, name: str, money: Callable[[float], Any]) -> Any:
    """``value`` as plain data (dict, list, str, int, float, None), rounded for output."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, Enum):
        return _plain(value.value, name, money)
    if isinstance(value, str):
        return str.__str__(value)
    if is_dataclass(value) and not isinstance(value, type):
        extra = _money_names(type(value), getattr(value, "unit", None))
        return {f.name: _plain(getattr(value, f.name), f.name + ("_usd" if f.name in extra else ""), money)
                for f in fields(value)}
    if isinstance(value, numbers.Real) and _is_money(name):
        return money(float(value))
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        try:
            r = bom.round_sig(float(value), _DIGITS.get(name, bom.SIG_DIGITS))
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
        return int(r) if r.is_integer() and abs(r) < 1e15 else r
    if isinstance(value, collections.abc.Mapping):
        rank = {c: i for i, c in enumerate(bom.CATEGORIES)}  # category mappings list in BOM order
        keys = sorted(value, key=lambda k: (rank.get(k, len(rank)), str(k)))
        return {str(k): _plain(value[k], name, money) for k in keys}
    if isinstance(value, (tuple, list)):
        return [_plain(v, name, money) for v in value]
    raise TypeError(f"{name}: cannot write a {type(value).__name__} into a design file")


def as_written(value: Any, name: str = "") -> Any:
    """A value as the design file writes it: plain data, money as ``"12500.00"``, floats rounded.

    Comparing these rather than raw floats is how a diff ignores noise below the written precision.

    Args:
        value: a design, any of its parts, or a single field value.
        name: the field name, when ``value`` is a single field (``*_usd`` fields are money).
    """
    return _plain(value, name, bom.money_text)


class _FlowDumper(yaml.SafeDumper):
    """One-line flow mappings; strings with line breaks or control characters double-quoted."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _flow_str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    # A plain or single-quoted scalar may fold onto the next line; a double-quoted one escapes.
    style = '"' if any(not c.isprintable() for c in data) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_FlowDumper.add_representer(str, _flow_str)


def _bom_item(line: BomLine) -> dict[str, Any]:
    plain = as_written(line)
    # An unpriced line is written with no price and no total, never as "0.00".
    plain["total_usd"] = None if line.unit_price_usd is None else bom.money_text(bom.line_total_usd(line))
    # What fits where is written only where the line states it (transceivers and cables).
    order = list(_BOM_KEYS) + [k for k in plain if k not in _BOM_KEYS and (plain[k] or k not in _FIT_KEYS)]
    return {k: plain[k] for k in order}


def _flow(item: Mapping[str, Any]) -> str:
    text = yaml.dump(item, Dumper=_FlowDumper, default_flow_style=True, sort_keys=False,
                     allow_unicode=True, width=2**31 - 1).rstrip("\n")
    assert "\n" not in text, "a BOM line item must stay on one line"
    return text


def dump_design(design: Design) -> str:
    """The design file's text: deterministic YAML (STYLE.md 7.9).

    ``schema_version`` comes first, then every field in dataclass order, ``bom`` last with one flow
    mapping per line item in :func:`designer.design.bom.sort_lines` order. Money is a two-decimal string,
    other floats are rounded to :data:`designer.design.bom.SIG_DIGITS` significant digits and written as
    integers when whole. Each line item carries its ``total_usd`` (rounded quantity times rounded
    unit price) for the reviewer; it is checked, not stored, on load.

    Args:
        design: the design to write.

    Returns:
        YAML text that :func:`parse_design` reads back into a design that dumps to the same bytes.

    Raises:
        ValueError: a float in the design is NaN or infinite (a bug upstream).
    """
    head: dict[str, Any] = {"schema_version": design.schema_version}
    for f in fields(design):
        if f.name not in ("schema_version", "bom"):
            head[f.name] = as_written(getattr(design, f.name), f.name)
    # `bom` goes through the dumper as an empty list first: ending the document on a key rather than
    # on, say, a literal block with trailing newlines keeps PyYAML from closing it with "...".
    head["bom"] = []
    text = yamlio.dump_yaml(head)
    assert text.endswith("\nbom: []\n"), "bom must be the last key of the design file"
    lines = bom.sort_lines(design.bom)
    if lines:
        text = text[: -len("bom: []\n")] + "bom:\n" + "".join(f"- {_flow(_bom_item(line))}\n" for line in lines)
    return _with_digest(text)


def _with_digest(text: str) -> str:
    """The text with its content digest as the second line (after ``schema_version``)."""
    first, rest = text.split("\n", 1)
    return f"{first}\n{verify.DIGEST_KEY}: {verify.content_digest(text)}\n{rest}"


def _without_digest(text: str) -> str:
    first, rest = text.split("\n", 1)
    return f"{first}\n{rest.split(chr(10), 1)[1]}" if rest.startswith(verify.DIGEST_KEY + ":") else text


def design_to_json_dict(design: Design) -> dict[str, Any]:
    """The design as JSON-ready data: docs/contract.md's ``solve --format json`` contract.

    Keys ``system, cost, workloads, bom, alternatives`` (as in the contract; ``workloads`` items hold
    the ``estimate --json`` keys with their ``breakdown``, ``bom`` items the ``bom --format json``
    keys), then every other design field (``constraints, solver, tool_version, spec_digest, ...``).
    Money is in dollars rounded to cents, other floats rounded as in the design file.
    """
    out: dict[str, Any] = {"schema_version": design.schema_version}
    for name in ("system", "cost", "workloads"):
        out[name] = _plain(getattr(design, name), name, bom.round_money)
    out["bom"] = [bomjson.line_to_json(line) for line in bom.sort_lines(design.bom)]
    out["alternatives"] = _plain(design.alternatives, "alternatives", bom.round_money)
    for f in fields(design):
        if f.name not in out:
            out[f.name] = _plain(getattr(design, f.name), f.name, bom.round_money)
    return out


# ================================================================ reading


def _dotted(path: tuple[Any, ...]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _kind(raw: Any) -> str:
    if raw is None:
        return "null"
    return {dict: "a mapping", list: "a list", str: "text", bool: "a boolean", int: "a number",
            float: "a number"}.get(type(raw), type(raw).__name__)


@functools.lru_cache(maxsize=None)
def _shape(cls: type) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """A design dataclass's fields and resolved type hints, worked out once per class (resolving
    the hints is most of the cost of reading a design file otherwise)."""
    return fields(cls), get_type_hints(cls)


class _Reader:
    """Validates plain data against the design dataclasses, driven by their type hints."""

    def __init__(self, doc: yamlio.YamlDoc):
        self.doc = doc

    def fail(self, path: tuple[Any, ...], message: str, *, key: bool = False) -> DesignFileError:
        where = _dotted(path)
        return DesignFileError(f"{where}: {message}" if where else message, self.doc.locate(path, key=key))

    def build(self, cls: type, raw: Any, path: tuple[Any, ...]) -> Any:
        cls_fields, hints = _shape(cls)
        names = [f.name for f in cls_fields]
        if not isinstance(raw, dict):
            raise self.fail(path, f"expected a mapping with keys {', '.join(names)}; got {_kind(raw)}")
        allowed = names + list(_DERIVED_KEYS.get(cls, ()))
        for key in raw:
            if key not in allowed:
                close = difflib.get_close_matches(str(key), allowed, n=1)
                hint = f"did you mean {close[0]!r}?" if close else f"expected one of: {', '.join(allowed)}"
                raise self.fail(path + (key,), f"unknown key {yamlio.shown(key)}; {hint}", key=True)
        extra = _money_names(cls, raw.get("unit"))
        kwargs: dict[str, Any] = {}
        for f in cls_fields:
            if f.name in raw:
                name = f.name + ("_usd" if f.name in extra else "")
                kwargs[f.name] = self.value(hints[f.name], raw[f.name], path + (f.name,), name)
            elif f.default is MISSING and f.default_factory is MISSING:
                raise self.fail(path, f"missing required key {f.name!r}")
        return cls(**kwargs)

    def value(self, tp: Any, raw: Any, path: tuple[Any, ...], name: str) -> Any:
        origin = get_origin(tp)
        if origin in (Union, types.UnionType):
            args = [a for a in get_args(tp) if a is not type(None)]
            if raw is None and len(args) < len(get_args(tp)):
                return None
            return self.value(args[0], raw, path, name)
        if is_dataclass(tp):
            return self.build(tp, raw, path)
        if origin is tuple:
            if not isinstance(raw, list):
                raise self.fail(path, f"expected a list; got {_kind(raw)}")
            item = get_args(tp)[0]
            return tuple(self.value(item, x, path + (i,), name) for i, x in enumerate(raw))
        if origin is collections.abc.Mapping:
            if not isinstance(raw, dict):
                raise self.fail(path, f"expected a mapping; got {_kind(raw)}")
            item = get_args(tp)[1]
            return MappingProxyType({str(k): self.value(item, v, path + (k,), name) for k, v in raw.items()})
        if tp is int:
            if isinstance(raw, bool) or not isinstance(raw, int):
                raise self.fail(path, f"expected a whole number; got {_kind(raw)} {yamlio.shown(raw)}")
            if raw < 0:
                raise self.fail(path, f"must not be negative; got {raw}")
            if raw > verify.MAX_MAGNITUDE:
                raise self.fail(path, f"{raw:.3g} is beyond any figure a design holds")
            return raw
        if tp is float:
            if _is_money(name) and isinstance(raw, str):
                if not _MONEY_TEXT.fullmatch(raw.strip()):
                    raise self.fail(path, f"expected dollars as a decimal string such as '12500.00'; got "
                                          f"{yamlio.shown(raw)}")
                number = float(raw)
            elif isinstance(raw, bool) or not isinstance(raw, (int, float)):
                raise self.fail(path, f"expected a number; got {_kind(raw)} {yamlio.shown(raw)}")
            else:
                number = float(raw) if abs(raw) <= verify.MAX_MAGNITUDE else math.inf
            limit = verify.MAX_MONEY_USD if _is_money(name) else verify.MAX_MAGNITUDE
            if not (math.isfinite(number) and abs(number) <= limit):
                raise self.fail(path, f"{yamlio.shown(raw)} is beyond any figure a design holds (at most {limit:.0e})")
            if number < 0 and path[-1] not in verify.SIGNED and name not in verify.SIGNED and not (
                    len(path) > 1 and path[-2] in verify.SIGNED):
                raise self.fail(path, f"must not be negative; got {number:g}")
            return number
        if tp is str:
            if not isinstance(raw, str):
                raise self.fail(path, f"expected text; got {_kind(raw)} {yamlio.shown(raw)} (quote it)")
            return raw
        if tp is bool:
            if not isinstance(raw, bool):
                raise self.fail(path, f"expected true or false; got {_kind(raw)} {yamlio.shown(raw)}")
            return raw
        raise TypeError(f"design field {_dotted(path)} has a type the reader does not know: {tp!r}")


Warn = Callable[[DesignFileError], None]


def _line_totals(design: Design, reader: _Reader, raw: dict[str, Any]) -> Iterator[DesignFileError]:
    """Each BOM line's written total against quantity x unit price (mismatches)."""
    for i, (line, item) in enumerate(zip(design.bom, raw.get("bom") or [], strict=True)):
        if "total_usd" not in item:
            continue
        written = reader.value(float | None, item["total_usd"], ("bom", i, "total_usd"), "total_usd")
        if (written is None) != (line.unit_price_usd is None):
            raise reader.fail(("bom", i, "total_usd"), "an unpriced line (unit_price_usd null) has total_usd "
                                                       "null, and only an unpriced line has")
        if written is not None and abs(written - bom.line_total_usd(line)) > 0.005:
            yield reader.fail(("bom", i, "total_usd"),
                              f"{bom.money_text(written)} is not quantity x unit_price_usd = "
                              f"{bom.money_text(bom.line_total_usd(line))}; the file was changed after it was written")


def _digest_problem(design: Design, reader: _Reader, written: Any, text: str | None) -> DesignFileError | None:
    """The design's content digest against the one written: first of the file's own text (a file
    as designer wrote it matches at the cost of one sha256), and only when that differs (a file
    reformatted, or edited) of the canonical text of the design as read, which takes a full dump."""
    where = (verify.DIGEST_KEY,)
    if written is None:
        return reader.fail((), f"no {verify.DIGEST_KEY}: written by an older designer or edited, so edits to it "
                               "cannot be told; its values and totals were checked")
    if not isinstance(written, str) or not verify.DIGEST_TEXT.fullmatch(written):
        return reader.fail(where, f"expected 64 hexadecimal digits; got {yamlio.shown(written)}")
    if text is not None and written == verify.content_digest(_without_digest(text)):
        return None
    if written != verify.content_digest(_without_digest(dump_design(design))):
        return reader.fail(where, "does not match the file's content: the design was changed after designer "
                                  "wrote it (solve again, or pass --trust to read it as it is)")
    return None


def _from_doc(doc: yamlio.YamlDoc, text: str | None, trust: bool, warn: Warn | None) -> Design:
    data = doc.data
    reader = _Reader(doc)
    if not isinstance(data, dict):
        raise reader.fail((), f"expected a design file (a mapping starting with 'schema_version: "
                              f"{SCHEMA_VERSION}'); got {_kind(data)}")
    if "schema_version" not in data:
        looks_like_spec = "workloads" in data and "version" in data
        hint = ("; this looks like a spec: `designer solve SPEC -o DESIGN` writes a design file"
                if looks_like_spec else "")
        raise reader.fail((), "not a design file: no 'schema_version' key" + hint)
    version = data["schema_version"]
    if isinstance(version, bool) or version != SCHEMA_VERSION:
        raise reader.fail(("schema_version",), f"unsupported schema_version {yamlio.shown(version)}; this designer "
                                               f"reads schema_version {SCHEMA_VERSION}")
    fields_only = {k: v for k, v in data.items() if k != verify.DIGEST_KEY}
    design = reader.build(Design, fields_only, ())
    verify.check_values(design, reader.fail)
    problems = [*_line_totals(design, reader, data), *verify.check_consistency(design, reader.fail)]
    digest = _digest_problem(design, reader, data.get(verify.DIGEST_KEY), text)
    if digest is not None and data.get(verify.DIGEST_KEY) is None:
        if warn is not None:  # a file from before digests: read, with a warning
            warn(digest)
    elif digest is not None:
        problems.append(digest)
    if problems and not trust:
        raise problems[0]
    for problem in problems:
        if warn is not None:
            warn(problem)
    return design


def parse_design(text: str, file: str = "<string>", *, trust: bool = False, warn: Warn | None = None) -> Design:
    """Read a design file's text and verify it (:mod:`designer.design.verify`).

    Args:
        text: the YAML text of a design file.
        file: the name used in error locations.
        trust: report an inconsistency (a total that does not add up, a content digest that does
            not match) through ``warn`` instead of raising it. Values out of range never pass.
        warn: called with each problem passed over, and for a file without a content digest.

    Returns:
        The design, with exactly the values the text holds.

    Raises:
        DesignFileError: malformed YAML, wrong ``schema_version``, a missing or unknown key, a
            value of the wrong type or out of its range, or (without ``trust``) inconsistent
            totals or content digest; located ``FILE:LINE:COL``.
    """
    try:
        doc = yamlio.load_yaml_text(text, file)
    except InputError as exc:
        raise DesignFileError(exc.message, exc.location) from None
    return _from_doc(doc, text, trust, warn)


def load_design(path: str | Path, *, trust: bool = False, warn: Warn | None = None) -> Design:
    """Read and validate a design file (see :func:`parse_design`).

    Raises:
        DesignFileError: the file is missing, unreadable, not UTF-8, malformed or invalid; located.
    """
    try:
        text = yamlio.read_text(path)
        doc = yamlio.load_yaml_text(text, str(path))
    except InputError as exc:
        raise DesignFileError(exc.message, exc.location) from None
    return _from_doc(doc, text, trust, warn)


def load_committed_design(ref: str, path: str | Path, *, trust: bool = False, warn: Warn | None = None) -> Design:
    """Read and validate the design file at ``path`` as committed in git at ``ref`` (a branch, tag
    or commit; :func:`designer.spec.files.read_committed_text`), named ``REF:FILE`` in messages.

    Raises:
        DesignFileError: an unknown revision, or the file not committed in it (located at ``path``),
            or as :func:`parse_design`.
        InputError: git is not installed or cannot run.
    """
    from designer.spec import files

    try:
        text = files.read_committed_text(ref, path)
    except InputError as exc:
        raise exc if exc.location is None else DesignFileError(exc.problem, exc.location, hint=exc.hint) from None
    return parse_design(text, f"{ref}:{Path(path).name}", trust=trust, warn=warn)
