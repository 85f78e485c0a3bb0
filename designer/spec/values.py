"""The value types a spec is written in: each parses a YAML value once, and says how it is written.

A type is an ``Annotated`` float, int or str with two parts: the validator that parses the YAML
value through :mod:`designer.spec.units` (``"3 years"`` -> seconds), and an :class:`AsWritten`
marker holding the JSON Schema of the value *as written* (a unit string with its pattern, a
number, or either) with a description and examples. :mod:`designer.spec.jsonschema` reads the
markers, so a field declared with one of these types appears in ``designer schema`` without more
work; the patterns are built from the unit tables of :mod:`designer.spec.units` and tested
against its parsers (tests/spec/test_jsonschema.py).

The patterns use only what ECMA-262 and Python's ``re`` read alike (editors use the first,
``check-jsonschema`` and ``jsonschema`` the second).
"""

from __future__ import annotations

__all__ = [
    "AsWritten", "Money", "Duration", "Period", "Power", "EnergyPrice", "HourlyPrice", "Bandwidth", "DataSize", "Flops",
    "Count", "Fraction", "PosInt", "NonNegInt", "Name", "Flag", "PATTERNS", "CapacityPrice", "BuildPrice", "Weight",
]

import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Annotated, Any, Mapping

from pydantic import AfterValidator, BeforeValidator, Field

from designer.spec import bounds, rates, units


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: Annotated metadata must hash
class AsWritten:
    """How a value is written in a spec: its JSON Schema (``type``, ``pattern``, ...), a
    description of the form, examples, and the SI unit the parsed value is in (for bounds)."""

    schema: Mapping[str, Any]
    description: str
    examples: tuple[Any, ...]
    si_unit: str = ""
    # Whether a default in SI units is also a value as written (a count, a fraction).
    plain_default: bool = False
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


def _alternatives(words) -> str:
    return "(?:" + "|".join(re.escape(w) for w in sorted(words, key=lambda w: (-len(w), w))) + ")"


# A number as a person writes it: digits with optional thousands separators, a fraction, an
# exponent; never negative (every quantity here is refused below zero).
_NUM = r"\+?(?:[0-9][0-9,_]*(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
_PLAIN_NUM = r"\+?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"  # no separators (prices per unit)
_SEP_NUM = r"\+?(?:[0-9][0-9,]*(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
_BINARY = "(?:Ki|Mi|Gi|Ti|Pi)"


def _whole(body: str) -> str:
    return rf"^\s*{body}\s*$"


PATTERNS: Mapping[str, str] = MappingProxyType({
    "money": _whole(rf"(?:(?:\$|USD|US\$)\s*{_NUM}\s*(?:[kKMB]|bn)?\s*(?:USD|\$)?|{_NUM}\s*(?:[kKMB]|bn)?\s*(?:USD|\$))"),
    "duration": _whole(rf"{_NUM}\s*{_alternatives(units.DURATION_UNITS)}"),
    "power": _whole(rf"{_NUM}\s*[kMG]?W"),
    "energy_price": _whole(rf"(?:\$|USD)?\s*{_PLAIN_NUM}\s*(?:USD|\$)?\s*(?:/| per )\s*[kMG]?Wh"),
    "hourly_price": _whole(rf"(?:\$|USD)?\s*{_SEP_NUM}\s*(?:USD|\$)?\s*(?:/| per )\s*(?:hour|hr|h)"),
    "bandwidth": _whole(rf"{_NUM}\s*(?:[kKMGTP]|{_BINARY})?(?:bits|bit|b|bytes|byte|B)(?:ps|/s)"),
    "data_size": _whole(rf"{_NUM}\s*(?:[kKMGTPE]|{_BINARY})?(?:bytes|byte|bits|bit|B|b)"),
    "flops": _whole(rf"{_NUM}\s*[kMGTPE]?(?:FLOPS|FLOP/s|flops|flop/s)"),
    "count": _whole(rf"{_NUM}\s*(?:{_alternatives(k for k in units.COUNT_SUFFIXES if k)}(?: +(?:tokens|params))?)?"),
    "percent": _whole(rf"{_NUM}\s*%"),
    # Prices per unit of capacity (designer.spec.rates): money, then / or per, then the unit.
    "capacity_price": _whole(rf"(?:\$|USD|US\$)?\s*{_NUM}\s*(?:[kKMB]|bn)?\s*(?:USD|\$)?\s*(?:/|\s+per\s+)\s*"
                             r"(?:W|kW|MW)\s*[-/ ]\s*(?:mo|month)"),
    "build_price": _whole(rf"(?:\$|USD|US\$)?\s*{_NUM}\s*(?:[kKMB]|bn)?\s*(?:USD|\$)?\s*(?:/|\s+per\s+)\s*"
                          r"(?:W|kW|MW)"),
})

_MAX = units.MAX_TEXT  # the parsers refuse longer text


def _text(kind: str, description: str, examples: tuple[str, ...], si_unit: str) -> AsWritten:
    return AsWritten(MappingProxyType({"type": "string", "pattern": PATTERNS[kind], "maxLength": _MAX}),
                     description, examples, si_unit)


def _unit(parser, written: AsWritten):
    def convert(value: Any) -> float:
        try:
            return parser(value)
        except units.UnitError as exc:
            raise ValueError(str(exc)) from None
    return BeforeValidator(convert), written


def _int_count(value: Any) -> Any:
    if isinstance(value, str):
        try:
            number = units.parse_count(value)
        except units.UnitError:
            raise ValueError(f"cannot read {value.strip()[:60]!r} as a whole number; write it like 8 or 1K") from None
        if number != int(number):
            raise ValueError(f"{value!r} is not a whole number")
        return int(number)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _one_line(value: str) -> str:
    # Names end up in tables, design files and one-line error messages: no line breaks or controls.
    if any(ord(ch) < 32 or 127 <= ord(ch) < 160 for ch in value):
        raise ValueError("must be one line of text without control characters")
    return value


Money = Annotated[float, *_unit(units.parse_money, _text(
    "money", "US dollars with $ or USD and an optional k, M or B", ("$2.5M", "$12,500", "40k USD"), "USD"))]
Duration = Annotated[float, *_unit(units.parse_duration, _text(
    "duration", "a duration: ns, us, ms, s, min, h, days, weeks, months (30 days), years (365 days)",
    ("90 days", "3 years", "2 h"), "s"))]
Period = Annotated[float, *_unit(units.parse_period, _text(
    "duration", "a period counted in years (any duration unit is accepted): days, weeks, months (30 days), "
    "years (365 days)", ("3 years", "5 years", "18 months"), "s"))]
Power = Annotated[float, *_unit(units.parse_power, _text("power", "electrical power in W, kW or MW",
                                                          ("40 kW", "5 MW"), "W"))]
EnergyPrice = Annotated[float, *_unit(units.parse_energy_price, _text(
    "energy_price", "a price per kWh or MWh", ("0.08 USD/kWh", "$80/MWh"), "USD/J"))]
HourlyPrice = Annotated[float, *_unit(units.parse_hourly_price, _text(
    "hourly_price", "a price per hour", ("$55.04/h", "98.32 USD/hour"), "USD/s"))]
Bandwidth = Annotated[float, *_unit(units.parse_bandwidth, _text(
    "bandwidth", "a bandwidth: bits (Gbps, Gb/s) or bytes (GB/s, GBps) per second", ("400 Gbps", "50 GB/s"), "B/s"))]
DataSize = Annotated[float, *_unit(units.parse_data_size, _text(
    "data_size", "a size: B, kB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (of 1024)", ("80 GB", "80 GiB"),
    "B"))]
Flops = Annotated[float, *_unit(units.parse_flops, _text("flops", "a compute rate", ("989 TFLOPS",), "FLOP/s"))]

_COUNT_TEXT = MappingProxyType({"type": "string", "pattern": PATTERNS["count"], "maxLength": _MAX})
Count = Annotated[float, *_unit(units.parse_count, AsWritten(
    MappingProxyType({"anyOf": [{"type": "number", "minimum": 0}, dict(_COUNT_TEXT)]}),
    "a number, or with K (10^3), M (10^6), B (10^9) or T (10^12)", ("15T", "70B", 1024), "", plain_default=True))]
Fraction = Annotated[float, *_unit(units.parse_fraction, AsWritten(
    MappingProxyType({"anyOf": [{"type": "number", "minimum": 0, "maximum": 1},
                                {"type": "string", "pattern": PATTERNS["percent"], "maxLength": _MAX}]}),
    "a fraction from 0 to 1, or a percentage", (0.8, "80%"), "", plain_default=True))]


def _whole_number(minimum: int) -> AsWritten:
    return AsWritten(MappingProxyType({"anyOf": [{"type": "integer", "minimum": minimum}, dict(_COUNT_TEXT)]}),
                     "a whole number, or with K, M, B or T", (8,), "", plain_default=True)


PosInt = Annotated[int, BeforeValidator(_int_count), Field(ge=1, strict=True), _whole_number(1)]
NonNegInt = Annotated[int, BeforeValidator(_int_count), Field(ge=0, strict=True), _whole_number(0)]

Name = Annotated[str, Field(min_length=1, max_length=200, strict=True), AfterValidator(_one_line), AsWritten(
    MappingProxyType({"type": "string", "minLength": 1, "maxLength": 200,
                      "pattern": "^[^\\u0000-\\u001f\\u007f-\\u009f]+$"}),
    "one line of text", ("llama3-70b",), "", plain_default=True)]

# A boolean key takes YAML's true or false only: pydantic's lax mode would take 1, 0 and the texts
# 'yes', 'no', 'on', 'off', so that a quoted 'no' or a stray 1 silently switched a feature on or off.
Flag = Annotated[bool, Field(strict=True)]

CapacityPrice = Annotated[float, *_unit(rates.parse_capacity_price, _text(
    "capacity_price", "a price of data-centre capacity per kW (or W, MW) per month",
    ("$194.95/kW-month", "195 USD/kW-month"), "USD/(W s)"))]
BuildPrice = Annotated[float, *_unit(rates.parse_build_price, _text(
    "build_price", "a construction cost per MW (or kW, W) of IT capacity", ("$11.7M/MW", "$11,700/kW"), "USD/W"))]


def _weight(value: Any) -> Any:
    """A preference's weight as written: ``$250k`` (dollars) or ``5%`` (of the cost) -> (kind, amount)."""
    if isinstance(value, str) and value.strip().endswith("%"):
        try:
            share = units.parse_fraction(value)
        except units.UnitError as exc:
            raise ValueError(str(exc)) from None
        if not 0 < share < 1:
            raise ValueError(f"{value.strip()[:40]!r}: a weight in percent lies above 0% and below 100%")
        return ("share", share)
    if isinstance(value, str):
        try:
            usd = units.parse_money(value)
        except units.UnitError:
            raise ValueError(f"cannot read {value.strip()[:60]!r} as a weight; write it like $250k or 5%") from None
        if usd <= 0:
            raise ValueError(f"{value.strip()[:40]!r}: a weight in dollars is above $0")
        if usd > bounds.SPEC["budget"].hi:  # the largest budget a spec may give: no weight is worth more
            raise ValueError(f"{value.strip()[:40]!r}: a weight in dollars must lie between $0 and "
                             f"{bounds.SPEC['budget'].show(bounds.SPEC['budget'].hi)}")
        return ("usd", usd)
    raise ValueError("a weight is written with its unit, like $250k or 5%")


# A soft preference's weight: dollars a design is worth more to the buyer when it has the preferred
# property, or a share of the matching systems' cost. Parsed to ("usd", dollars) or ("share", 0..1).
Weight = Annotated[tuple[str, float], BeforeValidator(_weight), AsWritten(
    MappingProxyType({"anyOf": [{"type": "string", "pattern": PATTERNS["money"], "maxLength": _MAX},
                                {"type": "string", "pattern": PATTERNS["percent"], "maxLength": _MAX}]}),
    "US dollars ($250k) or a percentage of the matching systems' cost (5%)", ("$250k", "5%"), "")]

