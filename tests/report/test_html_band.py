"""The performance model's error band on the review page is the validation's, recomputed here.

Errors are predicted / published step time - 1 over every scored run (benchmarks/validate.py).

``designer/report/html/model_error.json`` is package data written by ``benchmarks/validate.py
--write``; this test recomputes every figure from the comparison itself (independently of the
script's own summary), so the page can never state a band the model no longer has.
"""

from __future__ import annotations

import importlib.util
import json
import statistics
import sys
from pathlib import Path

import pytest

from designer.report.html.band import load_band, parse_band

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "designer" / "report" / "html" / "model_error.json"
FIX = "run `python benchmarks/validate.py --write` and commit designer/report/html/model_error.json"


@pytest.fixture(scope="module")
def comparison():
    spec = importlib.util.spec_from_file_location("validate_band", ROOT / "benchmarks" / "validate.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the file runs
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    scored, unscored, _ = module.run(interval=False)
    return [r.error for r in scored], unscored


def test_the_shipped_band_is_the_validations(comparison):
    counted, excluded = comparison
    band = load_band()
    assert band.runs == len(counted), FIX
    assert band.left_out == len(excluded), FIX
    assert band.median_abs_error == pytest.approx(statistics.median(abs(e) for e in counted), abs=5e-5), FIX
    assert band.max_abs_error == pytest.approx(max(abs(e) for e in counted), abs=5e-5), FIX
    assert band.min_signed_error == pytest.approx(min(counted), abs=5e-5), FIX
    assert band.max_signed_error == pytest.approx(max(counted), abs=5e-5), FIX
    ordered = sorted(counted)  # the 10th and 90th percentiles, inclusive (linear between order statistics)
    def pct(q):
        k = q * (len(ordered) - 1)
        lo = int(k)
        return ordered[lo] + (ordered[min(lo + 1, len(ordered) - 1)] - ordered[lo]) * (k - lo)
    assert band.p10_signed_error == pytest.approx(pct(0.1), abs=5e-5), FIX
    assert band.p90_signed_error == pytest.approx(pct(0.9), abs=5e-5), FIX
    # About 80 % of the runs lie inside (the two runs at the ends may fall out by the 4-decimal rounding).
    inside = sum(1 for e in counted if band.p10_signed_error <= e <= band.p90_signed_error)
    assert 0.8 * len(counted) - 2 <= inside <= 0.8 * len(counted) + 2
    assert sum(s.runs for s in band.sources) == band.runs


def test_the_band_on_a_time_follows_the_sign_of_the_error():
    """Error = predicted / published step time - 1: at -20% (optimistic) the real run takes
    1 / 0.8 = 1.25 times the predicted time; at +25% (pessimistic) 1 / 1.25 = 0.8 times."""
    band = parse_band({**json.loads(SHIPPED.read_text()), "p10_signed_error": -0.2, "p90_signed_error": 0.25})
    low, high = band.time_range(100.0)
    assert (low, high) == pytest.approx((80.0, 125.0))


def test_a_malformed_band_file_is_a_clear_error():
    with pytest.raises(ValueError, match="model_error.json"):
        parse_band({"runs": 3})
