"""Distributions of a study's inputs: the syntax, seeded draws, their statistics, and the default
spreads taken from the validation."""

from __future__ import annotations

import hashlib
import math
import re
import statistics
from pathlib import Path

import pytest

from designer.design.montecarlo import Distribution, Uncertainty
from designer.errors import InputError
from designer.study import distributions as dd

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("text, kind, canonical, low, mode, high, sigma", [
    ("normal:15%", "normal", "normal:15%", 0, 0, 0, 0.15),
    ("lognormal:40%", "lognormal", "lognormal:40%", 0, 0, 0, 0.40),
    ("uniform:-30%..+50%", "uniform", "uniform:-30%..+50%", -0.3, 0, 0.5, 0),
    ("-30%..50%", "uniform", "uniform:-30%..+50%", -0.3, 0, 0.5, 0),
    ("triangular:-10%..+5%..+40%", "triangular", "triangular:-10%..+5%..+40%", -0.1, 0.05, 0.4, 0),
    ("fixed:+10%", "fixed", "fixed:+10%", 0.1, 0.1, 0.1, 0),
    ("+10%", "fixed", "fixed:+10%", 0.1, 0.1, 0.1, 0),
    ("Normal: 2.5 %", "normal", "normal:2.5%", 0, 0, 0, 0.025),
])
def test_distributions_parse_to_their_parameters(text, kind, canonical, low, mode, high, sigma):
    d = dd.parse_distribution(text)
    assert (d.kind, d.text) == (kind, canonical)
    assert (d.low, d.mode, d.high, d.sigma) == pytest.approx((low, mode, high, sigma))
    assert dd.parse_distribution(d.text) == d  # the canonical spelling reads back


@pytest.mark.parametrize("text, message", [
    ("normal:40%", "use lognormal:40%"),
    ("normal:0%", "must be positive"),
    ("uniform:+50%..-30%", "from low to high"),
    ("uniform:-30%", "uniform:LOW..HIGH"),
    ("triangular:-10%..+50%..+40%", "LOW <= MODE <= HIGH"),
    ("triangular:0%..0%..0%", "LOW < HIGH"),
    ("uniform:-100%..+10%", "above -100%"),
    ("uniform:0%..+2000%", "beyond"),
    ("beta:1..2", "unknown distribution 'beta'"),
    ("normal:15", "in percent"),
])
def test_bad_distributions_say_what_is_wrong(text, message):
    with pytest.raises(InputError, match=re.escape(message)):
        dd.parse_distribution(text)


def test_model_efficiencies_default_to_the_validation_spread():
    u = dd.parse_uncertainty("compute_efficiency")
    assert u == Uncertainty("compute_efficiency", Distribution("lognormal", "lognormal:17.2%", sigma=0.172), default=True)
    assert dd.parse_uncertainty("network_efficiency=default").distribution.sigma == dd.DEFAULT_SPREADS["network_efficiency"]
    assert not dd.parse_uncertainty("gpu_price=normal:15%").default
    with pytest.raises(InputError, match="give a distribution"):
        dd.parse_uncertainty("gpu_price")
    with pytest.raises(InputError, match="unknown input 'gpu_cost'"):
        dd.parse_uncertainty("gpu_cost=normal:15%")


def _table(lines: list[str], header: str) -> list[list[str]]:
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows


def _pct(cell: str) -> float | None:
    m = re.fullmatch(r"([+-]?[\d,]+(?:\.\d+)?) %.*", cell)
    return None if m is None else float(m.group(1).replace(",", "")) / 100


def _validation_spreads() -> tuple[float, float, int, int]:
    """RMS of ln(predicted / published) over the scored training runs and over the large-message
    collectives of docs/validation.md (as benchmarks/validate.py writes it), and their counts."""
    text = (ROOT / "docs" / "validation.md").read_text()
    runs = [e for e in (_pct(r[7]) for r in _table(text.splitlines(), "| run | GPUs | stack |")) if e is not None]
    coll = _table(text.split("## Collective communication")[1].splitlines(), "| measurement |")
    big = [_pct(r[5]) for r in coll
           if _pct(r[5]) is not None and (r[2] == "?" or (r[2].endswith("MiB") and float(r[2][:-4].replace(",", "")) >= 256))]
    rms = lambda xs: math.sqrt(sum(math.log(1 + x) ** 2 for x in xs) / len(xs))  # noqa: E731
    return rms(runs), rms(big), len(runs), len(big)


def test_default_spreads_follow_docs_validation():
    compute, network, runs, collectives = _validation_spreads()
    assert runs >= 100 and collectives >= 20, (runs, collectives)
    # Rounded to a tenth of a percent when copied into the package; a model change that moves
    # the validation's spread by more than half a point must update the defaults.
    assert dd.DEFAULT_SPREADS["compute_efficiency"] == pytest.approx(compute, abs=0.005)
    assert dd.DEFAULT_SPREADS["network_efficiency"] == pytest.approx(network, abs=0.005)


def test_draws_are_a_pure_function_of_seed_index_and_name():
    a = dd.uniform_draw(7, 3, "gpu_price")
    assert a == dd.uniform_draw(7, 3, "gpu_price") and 0.0 < a < 1.0
    assert len({dd.uniform_draw(7, i, "gpu_price") for i in range(100)}) == 100
    assert a != dd.uniform_draw(8, 3, "gpu_price") and a != dd.uniform_draw(7, 3, "tokens")
    # The stream is SHA-256 of the text "designer-study/SEED/INDEX/NAME", its first 53 bits centred
    # in their cell: the same on every machine and Python version (no library generator).
    digest = hashlib.sha256(b"designer-study/0/0/gpu_price").digest()
    assert dd.uniform_draw(0, 0, "gpu_price") == ((int.from_bytes(digest[:8], "big") >> 11) + 0.5) / 2**53


def test_adding_an_input_leaves_the_other_draws_alone():
    gpu = dd.parse_uncertainty("gpu_price=normal:15%")
    tokens = dd.parse_uncertainty("tokens=uniform:-10%..+10%")
    alone = dict(dd.draw_factors(3, 5, [gpu]))
    both = dict(dd.draw_factors(3, 5, [tokens, gpu]))
    assert alone["gpu_price"] == both["gpu_price"]
    assert list(both) == ["gpu_price", "tokens"]  # sorted by name whatever the order given


def test_inverse_cdfs_in_closed_form():
    tri = Distribution("triangular", "", low=-0.1, mode=0.05, high=0.4)
    # F(mode) = (c - a) / (b - a) = 0.3: the mode sits at u = 0.3.
    assert dd.draw_change(tri, 0.3) == pytest.approx(0.05)
    uni = Distribution("uniform", "", low=-0.3, high=0.5)
    assert dd.draw_change(uni, 0.25) == pytest.approx(-0.1)
    normal = Distribution("normal", "", sigma=0.15)
    assert dd.draw_change(normal, 0.5) == pytest.approx(0.0, abs=1e-12)
    # Truncated at 3 sigma: the extreme draws stay inside.
    assert dd.draw_change(normal, 1e-16) == pytest.approx(-0.45, rel=1e-6)
    assert dd.draw_change(normal, 1 - 1e-16) == pytest.approx(0.45, rel=1e-6)
    logn = Distribution("lognormal", "", sigma=0.4)
    assert dd.draw_change(logn, 0.5) == pytest.approx(0.0, abs=1e-12)  # median factor 1


def _sample(dist: Distribution, n: int = 4000) -> list[float]:
    return [dd.draw_change(dist, dd.uniform_draw(11, i, "x")) for i in range(n)]


def test_draws_have_the_moments_of_their_distributions():
    # Standard errors at n = 4000: ~0.016 sd for a mean, so 4-5 standard errors of slack.
    tri = Distribution("triangular", "", low=-0.1, mode=0.05, high=0.4)
    assert statistics.fmean(_sample(tri)) == pytest.approx((-0.1 + 0.05 + 0.4) / 3, abs=0.006)
    uni = Distribution("uniform", "", low=-0.3, high=0.5)
    xs = _sample(uni)
    assert statistics.fmean(xs) == pytest.approx(0.1, abs=0.012)
    assert statistics.pstdev(xs) == pytest.approx(0.8 / math.sqrt(12), rel=0.03)
    normal = Distribution("normal", "", sigma=0.1)
    ys = _sample(normal)
    # A normal truncated at +-3 sigma keeps sigma * sqrt(1 - 6 phi(3) / (2 Phi(3) - 1)) = 0.9866 sigma.
    phi3 = math.exp(-4.5) / math.sqrt(2 * math.pi)
    truncated = 0.1 * math.sqrt(1 - 6 * phi3 / (2 * statistics.NormalDist().cdf(3) - 1))
    assert statistics.fmean(ys) == pytest.approx(0.0, abs=0.006)
    assert statistics.pstdev(ys) == pytest.approx(truncated, rel=0.04)
    assert min(ys) >= -0.3 and max(ys) <= 0.3
