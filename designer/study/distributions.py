"""Distributions of a Monte Carlo study's inputs: parsing ``NAME=DIST``, default spreads, seeded draws.

Every draw is a pure function of (seed, scenario index, input name): a uniform number from
SHA-256 of the three, mapped through the distribution's inverse CDF. So a scenario's inputs do
not depend on how many scenarios there are, on which worker solves it, on the order of
``--vary`` options, or on which other inputs vary (adding one leaves the others' draws alone),
and they are the same on every platform and Python version (no library random generator).
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_SPREADS", "MAX_CHANGE", "TRUNCATE_SIGMAS", "parse_change", "parse_distribution", "parse_uncertainty",
    "uniform_draw", "draw_change", "draw_factors",
]

import hashlib
import math
import re
from statistics import NormalDist
from typing import Sequence

from designer.design.montecarlo import EFFICIENCY_VARIABLES, UNCERTAIN, Distribution, Uncertainty
from designer.errors import InputError

# Default spreads of the model efficiencies, from docs/validation.md (as benchmarks/validate.py
# generates it; tests/study/test_distributions.py recomputes them from that file). Both are
# lognormal: a factor exp(sigma z), sigma the root-mean-square of ln(predicted / published).
# * compute_efficiency: the predicted step time against the 166 published training runs scored
#   there, 17.2 % (median |error| 6.6 %; 7 runs beyond 25 %, where the source left an input or a
#   mechanism unmodelled, or an early stack ran far slower than modelled: NeMo 25.04's
#   DeepSeek-V3 recipes at 10-16 % MFU). It lumps every error source those runs show.
# * network_efficiency: the predicted NCCL all-reduce bus bandwidth against the 26 measurements
#   of 256 MiB or more, 4.6 % (median |error| 1.2 %, max 13.7 %): the messages that set a
#   training step's communication time.
DEFAULT_SPREADS = {"compute_efficiency": 0.172, "network_efficiency": 0.046}
TRUNCATE_SIGMAS = 3.0  # normal and lognormal draws stay within 3 standard deviations
MAX_CHANGE = 10.0  # +1,000 %: no input of a study is that uncertain
_NORMAL = NormalDist()
_EDGE = _NORMAL.cdf(-TRUNCATE_SIGMAS)

_PCT = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)\s*%"


def parse_change(text: str, what: str) -> float:
    """``-30%`` or ``+50%`` as a relative change; above -100% and at most :data:`MAX_CHANGE`."""
    if not re.fullmatch(_PCT, text.strip()):
        raise InputError(f"{what}: expected a change in percent such as -30% or +50%, got {text.strip()!r}")
    value = float(text.strip().rstrip("%").strip()) / 100.0
    if value <= -1.0:
        raise InputError(f"{what}: a change of {value:+.0%} leaves nothing; changes must stay above -100%")
    if value > MAX_CHANGE:
        raise InputError(f"{what}: a change of {value:+.0%} is beyond the +{MAX_CHANGE:.0%} a study allows")
    return value


def _pct(x: float) -> str:
    return f"{x * 100:+g}%" if x else "0%"


def parse_distribution(text: str, what: str = "--vary") -> Distribution:
    """``normal:15%``, ``lognormal:30%``, ``uniform:-30%..+50%``, ``triangular:-10%..+5%..+40%``,
    ``fixed:+10%``; a bare range ``-30%..+50%`` is uniform (as in ``sweep --vary``) and a bare
    change ``+10%`` is fixed.

    Raises:
        InputError: an unknown kind, a malformed or reversed range, a mode outside its range, a
            change of -100% or less, or a normal spread wide enough to reach -100% within its
            truncation (use lognormal).

    Examples:
        >>> parse_distribution("uniform:-30%..+50%")
        Distribution(kind='uniform', text='uniform:-30%..+50%', low=-0.3, mode=0.0, high=0.5, sigma=0.0)
        >>> parse_distribution("normal:15%").sigma
        0.15
    """
    kind, sep, body = text.strip().partition(":")
    if not sep:
        kind, body = ("uniform" if ".." in text else "fixed"), text
    kind = kind.strip().lower()
    parts = [p for p in body.split("..")]
    where = f"{what} {text.strip()!r}"
    if kind in ("normal", "lognormal"):
        if len(parts) != 1:
            raise InputError(f"{where}: {kind} takes one standard deviation, e.g. {kind}:15%")
        sigma = parse_change(parts[0], where)
        if sigma <= 0:
            raise InputError(f"{where}: the standard deviation must be positive")
        if kind == "normal" and TRUNCATE_SIGMAS * sigma >= 1.0:
            raise InputError(f"{where}: {TRUNCATE_SIGMAS:g} standard deviations of {sigma:.0%} reach -100%; "
                             f"use lognormal:{parts[0].strip()} for a spread that wide")
        return Distribution(kind, f"{kind}:{_pct(sigma).lstrip('+')}", sigma=sigma)
    if kind == "uniform":
        if len(parts) != 2:
            raise InputError(f"{where}: expected uniform:LOW..HIGH such as uniform:-30%..+50%")
        low, high = (parse_change(p, where) for p in parts)
        if high < low:
            raise InputError(f"{where}: the range runs from low to high")
        return Distribution("uniform", f"uniform:{_pct(low)}..{_pct(high)}", low=low, high=high)
    if kind == "triangular":
        if len(parts) != 3:
            raise InputError(f"{where}: expected triangular:LOW..MODE..HIGH such as triangular:-10%..+5%..+40%")
        low, mode, high = (parse_change(p, where) for p in parts)
        if not low <= mode <= high or low == high:
            raise InputError(f"{where}: need LOW <= MODE <= HIGH with LOW < HIGH")
        return Distribution("triangular", f"triangular:{_pct(low)}..{_pct(mode)}..{_pct(high)}",
                            low=low, mode=mode, high=high)
    if kind == "fixed":
        if len(parts) != 1:
            raise InputError(f"{where}: expected one change such as fixed:+10%")
        change = parse_change(parts[0], where)
        return Distribution("fixed", f"fixed:{_pct(change)}", low=change, mode=change, high=change)
    raise InputError(f"{where}: unknown distribution {kind!r}; expected normal, lognormal, uniform, "
                     f"triangular or fixed")


def parse_uncertainty(text: str) -> Uncertainty:
    """``NAME=DIST`` (:func:`parse_distribution`), or ``compute_efficiency`` / ``network_efficiency``
    alone (or ``=default``) for the model's error spread from docs/validation.md.

    Raises:
        InputError: an unknown name or a malformed distribution.

    Examples:
        >>> parse_uncertainty("gpu_price=normal:15%").distribution.text
        'normal:15%'
        >>> parse_uncertainty("compute_efficiency").distribution.text
        'lognormal:17.2%'
    """
    name, sep, dist = text.partition("=")
    name = name.strip()
    if name not in UNCERTAIN:
        raise InputError(f"--vary {text.strip()!r}: unknown input {name!r}; expected one of {', '.join(UNCERTAIN)}")
    if not sep or dist.strip().lower() == "default":
        if name not in EFFICIENCY_VARIABLES:
            raise InputError(f"--vary {name}: give a distribution, e.g. {name}=normal:15% "
                             f"(only the model efficiencies have a default)")
        sigma = DEFAULT_SPREADS[name]
        return Uncertainty(name, Distribution("lognormal", f"lognormal:{sigma * 100:g}%", sigma=sigma), default=True)
    return Uncertainty(name, parse_distribution(dist, f"--vary {name}"))


def uniform_draw(seed: int, index: int, name: str) -> float:
    """A number in (0, 1) from SHA-256 of ``seed``, ``index`` and ``name``: 53 bits, centred in its cell."""
    digest = hashlib.sha256(f"designer-study/{seed}/{index}/{name}".encode()).digest()
    return ((int.from_bytes(digest[:8], "big") >> 11) + 0.5) / 2.0**53


def draw_change(dist: Distribution, u: float) -> float:
    """The relative change at uniform ``u`` (inverse CDF of ``dist``).

    Examples:
        >>> round(draw_change(Distribution("uniform", "", low=-0.3, high=0.5), 0.5), 12)
        0.1
        >>> round(draw_change(Distribution("triangular", "", low=0.0, mode=0.0, high=1.0), 0.75), 6)
        0.5
    """
    if dist.kind in ("normal", "lognormal"):
        z = _NORMAL.inv_cdf(_EDGE + u * (1.0 - 2.0 * _EDGE))
        return dist.sigma * z if dist.kind == "normal" else math.exp(dist.sigma * z) - 1.0
    if dist.kind == "uniform":
        return dist.low + u * (dist.high - dist.low)
    if dist.kind == "triangular":
        a, c, b = dist.low, dist.mode, dist.high
        if u < (c - a) / (b - a):
            return a + math.sqrt(u * (b - a) * (c - a))
        return b - math.sqrt((1.0 - u) * (b - a) * (b - c))
    return dist.mode  # fixed


def draw_factors(seed: int, index: int, uncertainties: Sequence[Uncertainty]) -> tuple[tuple[str, float], ...]:
    """Scenario ``index``'s factor (1 + change) for every input, sorted by name."""
    return tuple((u.name, 1.0 + draw_change(u.distribution, uniform_draw(seed, index, u.name)))
                 for u in sorted(uncertainties, key=lambda u: u.name))
