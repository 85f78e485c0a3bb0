"""Human quantities ("400 Gbps", "50 GB/s", "$2.5M", "90 days") parsed once into SI floats.

Inside the package every quantity is a plain float in base SI units: bytes, bytes/s, seconds,
FLOP, FLOP/s, watts, US dollars, US dollars per joule, US dollars per second. This module is the
only place that knows about unit spellings.

Rules:

* Bits are ``b``/``bit``, bytes are ``B``/``byte``; a bandwidth is written ``Gbps``, ``Gb/s``,
  ``GB/s`` or ``GBps``. A data size where a bandwidth belongs (``400 GB``) and a bandwidth where a
  size belongs are errors, never guesses.
* Decimal prefixes (k, M, G, T, P) are powers of 1000, binary ones (Ki, Mi, Gi, Ti) of 1024.
* A year is 365 days, a month 30 days.
* A dimensioned value must carry its unit: a bare number is refused with a hint.

Examples:
    >>> parse_bandwidth("400 Gbps")
    50000000000.0
    >>> parse_bandwidth("50 GB/s")
    50000000000.0
    >>> parse_count("70B")
    70000000000.0
    >>> parse_money("$2.5M")
    2500000.0
    >>> parse_duration("90 days")
    7776000.0
    >>> round(parse_energy_price("0.08 USD/kWh") * 3.6e6, 6)
    0.08
"""

from __future__ import annotations

import math
import re

__all__ = [
    "UnitError",
    "SECONDS_PER_HOUR",
    "SECONDS_PER_DAY",
    "SECONDS_PER_YEAR",
    "JOULES_PER_KWH",
    "MAX_TEXT",
    "DURATION_UNITS",
    "COUNT_SUFFIXES",
    "format_money_short",
    "parse_bandwidth",
    "parse_data_size",
    "parse_count",
    "parse_money",
    "parse_duration",
    "parse_power",
    "parse_energy_price",
    "parse_hourly_price",
    "parse_flops",
    "parse_fraction",
    "format_bandwidth",
    "format_data_size",
    "format_count",
    "format_money",
    "format_duration",
    "format_power",
]

SECONDS_PER_HOUR = 3600.0
SECONDS_PER_DAY = 86400.0
SECONDS_PER_YEAR = 365.0 * SECONDS_PER_DAY
JOULES_PER_KWH = 3.6e6

_DEC = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
_BIN = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50}
# Counts use the investor's suffixes: 70B parameters, 15T tokens.
_COUNT = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12, "P": 1e15}

_NUM = r"(?P<num>[-+]?(?:\d[\d,_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)"
_MAX_TEXT = 64
MAX_TEXT = _MAX_TEXT  # longest quantity text read, in characters


class UnitError(ValueError):
    """A quantity could not be parsed; the message says what was expected."""


def _number(text: str) -> float:
    value = float(text.replace(",", "").replace("_", ""))
    if not math.isfinite(value):
        raise UnitError(f"{text!r} is not a finite number")
    return value


def _finite(value: int | float, what: str) -> float:
    """A YAML number as a finite float; an int beyond float range or NaN/inf is refused, not a crash."""
    try:
        number = float(value)
    except OverflowError:
        raise UnitError(f"{what} is out of range: a number of {abs(int(value)).bit_length()} bits") from None
    if not math.isfinite(number):
        raise UnitError(f"{what} must be a finite number, got {value!r}")
    return number


def _prepare(value: object, what: str, example: str) -> str:
    if isinstance(value, bool):
        raise UnitError(f"expected {what} such as {example!r}, got a boolean")
    if isinstance(value, (int, float)):
        # Put the number where the example has its number: "$55.04/h" -> "$3/h", "40 kW" -> "3 kW".
        suggestion = re.sub(r"[0-9][0-9.,]*", _plain(_finite(value, what)), example, count=1)
        raise UnitError(f"{what} needs a unit: did you mean \"{suggestion}\"?")
    if not isinstance(value, str):
        shown = {type(None): "nothing (null)", list: "a list", dict: "a mapping"}.get(type(value), type(value).__name__)
        raise UnitError(f"expected {what} such as {example!r}, got {shown}")
    text = value.strip()
    if not text:
        raise UnitError(f"expected {what} such as {example!r}, got an empty string")
    if len(text) > _MAX_TEXT:
        raise UnitError(f"expected {what} such as {example!r}, got a {len(text)}-character string")
    return text


def _plain(value: float) -> str:
    # 15 significant digits: 2000000 stays "2000000" (":g" would write "2e+06" in a hint).
    return f"{value:.15g}"


def _split(text: str, what: str, example: str) -> tuple[float, str]:
    m = re.fullmatch(_NUM + r"\s*(?P<unit>.*)", text)
    if not m:
        raise UnitError(f"cannot read {text!r} as {what}; write it like {example!r}")
    try:
        return _number(m.group("num")), m.group("unit").strip()
    except ValueError as exc:
        raise UnitError(f"cannot read {text!r} as {what}: {exc}") from None


def _prefix_value(prefix: str) -> float | None:
    if prefix in _BIN:
        return _BIN[prefix]
    return _DEC.get(prefix)


def _check_non_negative(value: float, text: str, what: str) -> float:
    if not math.isfinite(value):  # a finite number times its unit can overflow: 1e300T
        raise UnitError(f"{what} {text!r} is beyond any real quantity (it overflows a float)")
    if value < 0:
        raise UnitError(f"{what} cannot be negative: {text!r}")
    return value


_BW = re.compile(r"(?P<p>[kKMGTP]i?|)(?:(?P<bits>b|bit|bits)(?:ps|/s)|(?P<bytes>B|byte|bytes)(?:ps|/s))")
_SIZE = re.compile(r"(?P<p>[kKMGTPE]i?|)(?P<u>B|byte|bytes|b|bit|bits)")


def parse_bandwidth(value: object) -> float:
    """Parse a bandwidth into bytes per second.

    ``Gbps``/``Gb/s`` are gigabits per second (divided by 8), ``GB/s``/``GBps`` gigabytes.

    Examples:
        >>> parse_bandwidth("100 Mb/s")
        12500000.0
        >>> parse_bandwidth("1 GiB/s")
        1073741824.0
    """
    text = _prepare(value, "a bandwidth", "400 Gbps")
    num, unit = _split(text, "a bandwidth", "400 Gbps")
    m = _BW.fullmatch(unit)
    if not m:
        if _SIZE.fullmatch(unit):
            raise UnitError(
                f"{text!r} is a data size, not a bandwidth: did you mean "
                f"\"{_plain(num)} {unit}/s\" (bytes) or \"{_plain(num)} {unit[:-1] if unit.endswith('B') else unit}b/s\" (bits)?"
            )
        raise UnitError(f"unknown bandwidth unit {unit!r} in {text!r}; use e.g. Gbps, Gb/s, GB/s")
    factor = _prefix_value(m.group("p"))
    if factor is None:  # "ki", "Ei": no such binary prefix
        raise UnitError(f"unknown prefix {m.group('p')!r} in {text!r}; use k, M, G, T or Ki, Mi, Gi, Ti")
    per_second = num * factor
    if m.group("bits"):
        per_second /= 8.0
    return _check_non_negative(per_second, text, "a bandwidth")


def parse_data_size(value: object) -> float:
    """Parse a data size into bytes (``80 GB`` = 80e9, ``80 GiB`` = 80 * 2**30, ``8 Gb`` = 1e9).

    Examples:
        >>> parse_data_size("80 GiB")
        85899345920.0
    """
    text = _prepare(value, "a data size", "80 GB")
    num, unit = _split(text, "a data size", "80 GB")
    if _BW.fullmatch(unit):
        raise UnitError(f"{text!r} is a bandwidth, not a data size: drop the '/s'")
    m = _SIZE.fullmatch(unit)
    if not m:
        raise UnitError(f"unknown data-size unit {unit!r} in {text!r}; use e.g. GB, GiB, TB")
    factor = _prefix_value(m.group("p"))
    if factor is None:  # "ki", "Ei": no such binary prefix
        raise UnitError(f"unknown prefix {m.group('p')!r} in {text!r}; use k, M, G, T or Ki, Mi, Gi, Ti")
    size = num * factor
    if m.group("u") in ("b", "bit", "bits"):
        size /= 8.0
    return _check_non_negative(size, text, "a data size")


def parse_count(value: object) -> float:
    """Parse a count such as ``70B`` parameters or ``15T`` tokens (B = 1e9, T = 1e12).

    Plain numbers are accepted as they are: a count has no unit.

    Examples:
        >>> parse_count("1.5M")
        1500000.0
        >>> parse_count(1024)
        1024.0
    """
    if isinstance(value, bool):
        raise UnitError("expected a count such as 70B or 1024, got a boolean")
    if isinstance(value, (int, float)):
        number = _finite(value, "a count")
        return _check_non_negative(number, f"{number:g}", "a count")
    text = _prepare(value, "a count", "70B")
    num, unit = _split(text, "a count", "70B")
    unit = unit.removesuffix(" tokens").removesuffix(" params").strip()
    if unit not in _COUNT:
        raise UnitError(f"unknown count suffix {unit!r} in {text!r}; use K, M, B (1e9) or T (1e12)")
    return _check_non_negative(num * _COUNT[unit], text, "a count")


_MONEY = re.compile(
    r"(?:(?P<pre>\$|USD|US\$)\s*)?(?P<num>[-+]?(?:\d[\d,_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)"
    r"\s*(?P<scale>[kKMB]|bn)?\s*(?P<post>USD|\$)?"
)
_MONEY_SCALE = {None: 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "bn": 1e9}


def parse_money(value: object) -> float:
    """Parse an amount of US dollars: ``$2.5M``, ``$12,500``, ``40k USD``.

    Examples:
        >>> parse_money("$12,500")
        12500.0
        >>> parse_money("1.2B USD")
        1200000000.0
    """
    text = _prepare(value, "an amount of money", "$12,500")
    m = _MONEY.fullmatch(text)
    if not m or not (m.group("pre") or m.group("post")):
        if m:
            raise UnitError(f"{text!r} needs a currency: write {'$' + text!r} (US dollars)")
        raise UnitError(f"cannot read {text!r} as money; write it like '$2.5M' or '12500 USD'")
    amount = _number(m.group("num")) * _MONEY_SCALE[m.group("scale")]
    return _check_non_negative(amount, text, "an amount of money")


_DURATION = {
    "ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3,
    "s": 1.0, "sec": 1.0, "second": 1.0, "seconds": 1.0,
    "min": 60.0, "minute": 60.0, "minutes": 60.0,
    "h": SECONDS_PER_HOUR, "hr": SECONDS_PER_HOUR, "hour": SECONDS_PER_HOUR, "hours": SECONDS_PER_HOUR,
    "d": SECONDS_PER_DAY, "day": SECONDS_PER_DAY, "days": SECONDS_PER_DAY,
    "week": 7 * SECONDS_PER_DAY, "weeks": 7 * SECONDS_PER_DAY,
    "month": 30 * SECONDS_PER_DAY, "months": 30 * SECONDS_PER_DAY,
    "y": SECONDS_PER_YEAR, "yr": SECONDS_PER_YEAR, "year": SECONDS_PER_YEAR, "years": SECONDS_PER_YEAR,
}


DURATION_UNITS = tuple(_DURATION)  # every unit a duration may be written in
COUNT_SUFFIXES = tuple(_COUNT)  # every suffix of a count ("" for none)


def parse_duration(value: object) -> float:
    """Parse a duration into seconds: ``90 days``, ``3 years`` (365 d each), ``2 us``, ``30 min``.

    Examples:
        >>> parse_duration("2 us")
        2e-06
        >>> parse_duration("1.5 h")
        5400.0
    """
    return _duration(value, "90 days")


def parse_period(value: object) -> float:
    """Parse a period that is counted in years (a horizon, a useful life) into seconds: the same
    units as :func:`parse_duration`; only the hint for a bare number differs ("3" suggests
    "3 years", not "3 days", since no plan or life is counted in days).

    Examples:
        >>> parse_period("3 years") == 3 * 365 * 86400
        True
    """
    return _duration(value, "3 years")


def _duration(value: object, example: str) -> float:
    text = _prepare(value, "a duration", example)
    num, unit = _split(text, "a duration", example)
    if unit not in _DURATION:
        raise UnitError(f"unknown time unit {unit!r} in {text!r}; use ns, us, ms, s, min, h, days, weeks, years")
    return _check_non_negative(num * _DURATION[unit], text, "a duration")


_POWER = re.compile(r"(?P<p>[kMG]?)W")


def parse_power(value: object) -> float:
    """Parse electrical power into watts: ``700 W``, ``40 kW``, ``5 MW``.

    Examples:
        >>> parse_power("5 MW")
        5000000.0
    """
    text = _prepare(value, "a power", "40 kW")
    num, unit = _split(text, "a power", "40 kW")
    m = _POWER.fullmatch(unit)
    if not m:
        if unit.endswith("Wh"):
            raise UnitError(f"{text!r} is an energy, not a power: drop the 'h'")
        raise UnitError(f"unknown power unit {unit!r} in {text!r}; use W, kW or MW")
    return _check_non_negative(num * _DEC[m.group("p")], text, "a power")


_ENERGY_PRICE = re.compile(r"(?:\$|USD)?\s*(?P<num>[0-9.eE+-]+)\s*(?:USD|\$)?\s*/\s*(?P<p>[kMG]?)Wh")


def parse_energy_price(value: object) -> float:
    """Parse an electricity price into US dollars per joule: ``0.08 USD/kWh``, ``$0.08/kWh``.

    Examples:
        >>> round(parse_energy_price("$80/MWh") * 3.6e6, 6)
        0.08
    """
    text = _prepare(value, "an electricity price", "0.08 USD/kWh")
    m = _ENERGY_PRICE.fullmatch(text.replace(" per ", "/"))
    if not m:
        raise UnitError(f"cannot read {text!r} as an electricity price; write it like '0.08 USD/kWh'")
    try:
        num = _number(m.group("num"))
    except ValueError:
        raise UnitError(f"cannot read {text!r} as an electricity price") from None
    joules = 3600.0 * _DEC[m.group("p")]
    return _check_non_negative(num / joules, text, "an electricity price")


_HOURLY = re.compile(r"(?:\$|USD)?\s*(?P<num>[0-9.,eE+-]+)\s*(?:USD|\$)?\s*/\s*(?P<u>h|hr|hour)")


def parse_hourly_price(value: object) -> float:
    """Parse a rental price into US dollars per second: ``$55.04/h``, ``98.32 USD/hour``.

    Examples:
        >>> parse_hourly_price("$36/h")
        0.01
    """
    text = _prepare(value, "an hourly price", "$55.04/h")
    m = _HOURLY.fullmatch(text.replace(" per ", "/"))
    if not m:
        raise UnitError(f"cannot read {text!r} as an hourly price; write it like '$55.04/h'")
    try:
        num = _number(m.group("num"))
    except ValueError:
        raise UnitError(f"cannot read {text!r} as an hourly price") from None
    return _check_non_negative(num / SECONDS_PER_HOUR, text, "an hourly price")


_FLOPS = re.compile(r"(?P<p>[kMGTPE]?)(?:FLOPS|FLOP/s|flops|flop/s)")


def parse_flops(value: object) -> float:
    """Parse a compute rate into FLOP/s: ``989 TFLOPS``, ``2.25 PFLOP/s``.

    Examples:
        >>> parse_flops("989 TFLOPS")
        989000000000000.0
    """
    text = _prepare(value, "a compute rate", "989 TFLOPS")
    num, unit = _split(text, "a compute rate", "989 TFLOPS")
    m = _FLOPS.fullmatch(unit)
    if not m:
        raise UnitError(f"unknown compute-rate unit {unit!r} in {text!r}; use e.g. TFLOPS")
    return _check_non_negative(num * _DEC[m.group("p")], text, "a compute rate")


def parse_fraction(value: object) -> float:
    """Parse a fraction in [0, 1]: ``0.8`` or ``"80%"``.

    Examples:
        >>> parse_fraction("80%")
        0.8
    """
    if isinstance(value, bool):
        raise UnitError("expected a fraction such as 0.8 or '80%', got a boolean")
    if isinstance(value, (int, float)):
        frac = _finite(value, "a fraction")
    elif isinstance(value, str) and value.strip().endswith("%"):
        text = _prepare(value, "a fraction", "80%")
        num, rest = _split(text[:-1].strip(), "a percentage", "80%")
        if rest:  # "80 apples %" is not a percentage
            raise UnitError(f"cannot read {text!r} as a percentage; write it like '80%'")
        frac = num / 100.0
    else:
        shown = repr(value)
        shown = shown if len(shown) <= _MAX_TEXT else shown[:_MAX_TEXT] + "..."
        raise UnitError(f"expected a fraction such as 0.8 or '80%', got {shown}")
    if not math.isfinite(frac) or not 0.0 <= frac <= 1.0:
        shown = repr(value) if isinstance(value, str) else f"{frac:g}"
        raise UnitError(f"a fraction must lie between 0 and 1 (0% and 100%), got {shown}")
    return frac


# Formatting for people lives beside (designer.spec.humanize); the names stay reachable from here.
from designer.spec.humanize import (  # noqa: E402
    format_bandwidth, format_count, format_data_size, format_duration, format_money, format_money_short,
    format_power,
)
