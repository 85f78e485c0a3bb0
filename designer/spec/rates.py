"""Prices per unit of something: data-centre space per kW-month, construction per MW, licences per
GPU-year, support shares per year. Parsed once at the edge into SI rates (US dollars per watt-second,
per watt, per GPU-second; fractions per year).

Each parser reads ``AMOUNT/UNIT`` (or ``AMOUNT per UNIT``), the amount as :func:`designer.spec.units.parse_money`
reads money, so ``$195/kW-month``, ``195 USD/kW-month`` and ``$11.7M/MW`` all work.
"""

from __future__ import annotations

__all__ = ["parse_capacity_price", "parse_build_price", "parse_licence_price", "parse_yearly_fraction",
           "format_capacity_price", "format_build_price", "SECONDS_PER_MONTH"]

import re

from designer.spec import units
from designer.spec.units import SECONDS_PER_YEAR, UnitError

SECONDS_PER_MONTH = SECONDS_PER_YEAR / 12.0  # a colocation month: a twelfth of a 365-day year

_POWER_SCALE = {"W": 1.0, "kW": 1e3, "MW": 1e6}
_SPLIT = re.compile(r"\s*(?:/|\s+per\s+)\s*", re.IGNORECASE)


def _split(value: object, what: str, example: str) -> tuple[float, str, str]:
    if not isinstance(value, str):
        raise UnitError(f"{what} needs its unit, such as '{example}', got {value!r}")
    text = value.strip()
    parts = _SPLIT.split(text, maxsplit=1)
    if len(parts) != 2 or not parts[1]:
        raise UnitError(f"cannot read {text!r} as {what}; write it like '{example}'")
    try:
        amount = units.parse_money(parts[0])
    except UnitError as exc:
        raise UnitError(f"cannot read {text!r} as {what} ({exc}); write it like '{example}'") from None
    return amount, parts[1].strip(), text


def parse_capacity_price(value: object) -> float:
    """Parse a price of data-centre capacity into US dollars per watt per second: ``$195/kW-month``.

    Colocation is billed per kW of IT capacity per month (CBRE North America Data Center Trends
    quote asking rates this way); a month is a twelfth of a 365-day year.

    Examples:
        >>> round(parse_capacity_price("$195/kW-month") * 1e3 * SECONDS_PER_MONTH, 6)
        195.0
    """
    amount, unit, text = _split(value, "a price of capacity", "$195/kW-month")
    m = re.fullmatch(r"(W|kW|MW)\s*[-/ ]\s*(?:mo|month)", unit)
    if not m:
        raise UnitError(f"cannot read {text!r} as a price of capacity; write it like '$195/kW-month'")
    return amount / (_POWER_SCALE[m.group(1)] * SECONDS_PER_MONTH)


def parse_build_price(value: object) -> float:
    """Parse a construction cost per unit of IT capacity into US dollars per watt: ``$11.7M/MW``.

    Examples:
        >>> parse_build_price("$11.7M/MW")
        11.7
    """
    amount, unit, text = _split(value, "a cost per unit of capacity", "$11.7M/MW")
    if unit not in _POWER_SCALE:
        raise UnitError(f"cannot read {text!r} as a cost per unit of capacity; write it like '$11.7M/MW'")
    return amount / _POWER_SCALE[unit]


def parse_licence_price(value: object) -> float:
    """Parse a licence price into US dollars per GPU per second: ``$4,500/GPU-year``.

    Examples:
        >>> round(parse_licence_price("$4,500/GPU-year") * SECONDS_PER_YEAR, 6)
        4500.0
    """
    amount, unit, text = _split(value, "a licence price", "$4,500/GPU-year")
    m = re.fullmatch(r"GPU\s*[-/ ]\s*(?:y|yr|year)|GPU\s+per\s+year", unit, re.IGNORECASE)
    if not m:
        raise UnitError(f"cannot read {text!r} as a licence price; write it like '$4,500/GPU-year'")
    return amount / SECONDS_PER_YEAR


def parse_yearly_fraction(value: object) -> float:
    """Parse a share per year: ``8%/year``, ``0.08/yr``. A bare fraction (``8%``) is read as per year.

    Examples:
        >>> parse_yearly_fraction("8%/year")
        0.08
    """
    if isinstance(value, str):
        parts = _SPLIT.split(value.strip(), maxsplit=1)
        if len(parts) == 2:
            if not re.fullmatch(r"(?:y|yr|year|a)", parts[1].strip(), re.IGNORECASE):
                raise UnitError(f"cannot read {value!r} as a share per year; write it like '8%/year'")
            value = parts[0].strip()
            if not value.endswith("%"):
                try:
                    value = float(value)
                except ValueError:
                    raise UnitError(f"cannot read {value!r} as a share; write it like '8%/year'") from None
    return units.parse_fraction(value)


def format_capacity_price(usd_per_w_s: float) -> str:
    """``$195/kW-month`` from US dollars per watt-second."""
    return f"{units.format_money(usd_per_w_s * 1e3 * SECONDS_PER_MONTH)}/kW-month"


def format_build_price(usd_per_w: float) -> str:
    """``$11.7M/MW`` from US dollars per watt."""
    return f"{units.format_money_short(usd_per_w * 1e6)}/MW"
