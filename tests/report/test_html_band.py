"""The performance model's error band on the review page is the validation's, recomputed here.

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
    compared, excluded = module.run()
    counted = [err for rid, _, value, err, _ in compared if value is not None and rid not in module.INCONSISTENT]
    return counted, excluded


def test_the_shipped_band_is_the_validations(comparison):
    counted, excluded = comparison
    band = load_band()
    assert band.runs == len(counted), FIX
    assert band.left_out == len(excluded), FIX
    assert band.median_abs_error == pytest.approx(statistics.median(abs(e) for e in counted), abs=5e-5), FIX
    assert band.max_abs_error == pytest.approx(max(abs(e) for e in counted), abs=5e-5), FIX
    assert band.min_signed_error == pytest.approx(min(counted), abs=5e-5), FIX
    assert band.max_signed_error == pytest.approx(max(counted), abs=5e-5), FIX
    assert sum(s.runs for s in band.sources) == band.runs


def test_the_band_on_a_time_follows_the_sign_of_the_error():
    """Error = predicted speed / published speed - 1: a +22% optimistic model means the real run takes
    1.22 times the predicted time, a -12.8% pessimistic one 0.872 times."""
    band = parse_band({**json.loads(SHIPPED.read_text()), "min_signed_error": -0.128, "max_signed_error": 0.22})
    low, high = band.time_range(100.0)
    assert (low, high) == pytest.approx((87.2, 122.0))


def test_a_malformed_band_file_is_a_clear_error():
    with pytest.raises(ValueError, match="model_error.json"):
        parse_band({"runs": 3})
