"""Prices per unit of something, parsed once into SI rates (designer.spec.rates)."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from designer.spec import rates
from designer.spec.units import SECONDS_PER_YEAR, UnitError

MONTH = SECONDS_PER_YEAR / 12


@pytest.mark.parametrize("text, usd_per_kw_month", [
    ("$194.95/kW-month", 194.95), ("195 USD/kW-month", 195.0), ("$0.195/W-month", 195.0),
    ("$195,000/MW-month", 195.0), ("$195 per kW-month", 195.0), ("$195/kW/month", 195.0)])
def test_capacity_prices(text, usd_per_kw_month):
    assert rates.parse_capacity_price(text) * 1e3 * MONTH == pytest.approx(usd_per_kw_month)


@pytest.mark.parametrize("text, usd_per_w", [("$11.7M/MW", 11.7), ("$11,700/kW", 11.7), ("$9.3/W", 9.3)])
def test_build_prices(text, usd_per_w):
    assert rates.parse_build_price(text) == pytest.approx(usd_per_w)


def test_licence_and_yearly_shares():
    assert rates.parse_licence_price("$4,500/GPU-year") * SECONDS_PER_YEAR == pytest.approx(4500)
    assert rates.parse_yearly_fraction("8%/year") == pytest.approx(0.08)
    assert rates.parse_yearly_fraction("0.1/yr") == pytest.approx(0.1)
    assert rates.parse_yearly_fraction("8%") == pytest.approx(0.08)


@pytest.mark.parametrize("parse, text", [
    (rates.parse_capacity_price, "195"), (rates.parse_capacity_price, "$195/kWh"),
    (rates.parse_capacity_price, "195/kW-month"), (rates.parse_build_price, "$11.7M/MWh"),
    (rates.parse_licence_price, "$4,500/year"), (rates.parse_yearly_fraction, "8%/month"),
    (rates.parse_yearly_fraction, "180%/year"), (rates.parse_capacity_price, 195)])
def test_bad_rates_are_refused(parse, text):
    with pytest.raises(UnitError):
        parse(text)


@given(st.floats(1, 1e4))
def test_capacity_price_round_trips_through_its_format(usd):
    text = rates.format_capacity_price(rates.parse_capacity_price(f"${usd:.2f}/kW-month"))
    assert rates.parse_capacity_price(text.replace(",", "")) * 1e3 * MONTH == pytest.approx(round(usd, 2))
