"""Quantities for people: SI floats back into text with units (``400 Gb/s``, ``80 GiB``, ``$1.37M``).

The inverse of :mod:`designer.spec.units`, which re-exports these functions; renderers call them
there. Pure functions, no parsing.
"""

from __future__ import annotations

__all__ = [
    "format_bandwidth", "format_data_size", "format_count", "format_money", "format_money_short",
    "format_duration", "format_power",
]

import math

_HOUR = 3600.0
_DAY = 86400.0


def _fmt(num: float) -> str:
    # 12 significant digits: enough for a round trip of any value a person writes.
    return f"{num:.12g}"


def _scaled(value: float, steps: list[tuple[float, str]]) -> str:
    for factor, name in steps:
        if abs(value) >= factor:
            return f"{_fmt(value / factor)} {name}"
    return f"{_fmt(value / steps[-1][0])} {steps[-1][1]}"


def format_bandwidth(bytes_per_s: float, *, bits: bool = True) -> str:
    """Format bytes/s for people: in bits (``400 Gb/s``) by default, else bytes (``50 GB/s``)."""
    if bits:
        return _scaled(bytes_per_s * 8.0, [(1e12, "Tb/s"), (1e9, "Gb/s"), (1e6, "Mb/s"), (1e3, "kb/s"), (1.0, "b/s")])
    return _scaled(bytes_per_s, [(1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s"), (1.0, "B/s")])


_BINARY = [(2.0**50, "PiB"), (2.0**40, "TiB"), (2.0**30, "GiB"), (2.0**20, "MiB"), (2.0**10, "KiB")]


def format_data_size(n_bytes: float) -> str:
    """Format bytes as they are quoted: a size that is a round number of binary units (HBM, DRAM:
    80 GiB is 85,899,345,920 bytes) with a binary prefix (``80 GiB``, ``1.5 TiB``), any other size
    with a decimal one (``80 GB``, ``3.84 TB`` of flash). "Round" is at most two decimals, exactly."""
    for factor, name in _BINARY:
        if abs(n_bytes) >= factor:
            hundredths = n_bytes / factor * 100.0
            if hundredths == round(hundredths) and n_bytes % (factor / 1024.0) == 0.0:
                return f"{_fmt(n_bytes / factor)} {name}"
            break
    return _scaled(n_bytes, [(1e15, "PB"), (1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"), (1.0, "B")])


def format_count(n: float) -> str:
    """Format a count with K/M/B/T suffixes (``70B``)."""
    for factor, name in [(1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")]:
        if abs(n) >= factor:
            return f"{_fmt(n / factor)}{name}"
    return _fmt(n)


def format_money(usd: float) -> str:
    """Format US dollars with thousands separators and cents (``$1,234,567.89``)."""
    return f"-${-usd:,.2f}" if usd < 0 else f"${usd:,.2f}"


def format_money_short(usd: float | None) -> str:
    """Dollars in 3 significant digits with k/M/B: ``$1.37M``; ``-`` for ``None`` or a non-finite value.

    Examples:
        >>> format_money_short(1370633.4), format_money_short(964.0), format_money_short(None)
        ('$1.37M', '$964', '-')
    """
    if usd is None or not math.isfinite(usd):
        return "-"
    sign, usd = ("-", -usd) if usd < 0 else ("", usd)
    for factor, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if usd >= factor:
            return f"{sign}${usd / factor:.3g}{suffix}"
    return f"{sign}${usd:.3g}"


def format_duration(seconds: float) -> str:
    """Format seconds in the largest unit that keeps the number at least 1 (``90 days``)."""
    return _scaled(seconds, [(_DAY, "days"), (_HOUR, "h"), (60.0, "min"), (1.0, "s"),
                             (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns")])


def format_power(watts: float) -> str:
    """Format watts with k/M prefixes (``40 kW``)."""
    return _scaled(watts, [(1e6, "MW"), (1e3, "kW"), (1.0, "W")])
