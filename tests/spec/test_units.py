"""Units: every example of docs/units.md, bits vs bytes, SI vs IEC, refusals with hints, and round trips."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings, strategies as st

from designer.spec import units
from designer.spec.units import UnitError

# 12 significant digits in format_* (units._fmt): a round trip is exact to a few parts in 1e12.
ROUND_TRIP_REL = 1e-11


# --- docs/units.md: each example and its SI value ---------------------------------------------

@pytest.mark.parametrize("parse, text, si", [
    (units.parse_bandwidth, "400 Gbps", 400e9 / 8),  # bits: 400e9 b/s = 50e9 B/s
    (units.parse_bandwidth, "50 GB/s", 50e9),  # bytes
    (units.parse_count, "70B", 70e9),  # parameters: B = 1e9 (a count, not bytes)
    (units.parse_count, "15T", 15e12),  # tokens
    (units.parse_money, "$2.5M", 2.5e6),
    (units.parse_duration, "90 days", 90 * 86400.0),
    (units.parse_duration, "3 years", 3 * 365 * 86400.0),  # a year is 365 days (units.py)
    (units.parse_power, "5 MW", 5e6),
    (units.parse_energy_price, "0.08 USD/kWh", 0.08 / 3.6e6),  # 1 kWh = 3.6e6 J
])
def test_design_md_examples(parse, text, si):
    assert parse(text) == pytest.approx(si, rel=1e-15)


@pytest.mark.parametrize("parse, text, si", [
    (units.parse_bandwidth, "400Gb/s", 50e9),
    (units.parse_bandwidth, "100 Mb/s", 12.5e6),
    (units.parse_bandwidth, "50 GBps", 50e9),
    (units.parse_data_size, "80 GB", 80e9),
    (units.parse_data_size, "8 Gb", 1e9),
    (units.parse_money, "$12,500", 12_500.0),
    (units.parse_money, "40k USD", 40_000.0),
    (units.parse_money, "1.2B USD", 1.2e9),
    (units.parse_duration, "2 us", 2e-6),
    (units.parse_duration, "30 min", 1800.0),
    (units.parse_duration, "1 week", 7 * 86400.0),
    (units.parse_duration, "1 month", 30 * 86400.0),  # a month is 30 days (units.py)
    (units.parse_power, "700 W", 700.0),
    (units.parse_power, "40 kW", 40e3),
    (units.parse_energy_price, "$80/MWh", 0.08 / 3.6e6),
    (units.parse_hourly_price, "$36/h", 0.01),
    (units.parse_hourly_price, "98.32 USD/hour", 98.32 / 3600),
    (units.parse_flops, "989 TFLOPS", 989e12),  # H100 SXM dense BF16 peak (NVIDIA datasheet)
    (units.parse_flops, "2.25 PFLOP/s", 2.25e15),
    (units.parse_fraction, "80%", 0.8),
    (units.parse_fraction, 0.8, 0.8),
    (units.parse_count, 1024, 1024.0),
    (units.parse_count, "1.5M", 1.5e6),
])
def test_other_spellings(parse, text, si):
    assert parse(text) == pytest.approx(si, rel=1e-12)


# --- bits vs bytes, SI vs IEC ---------------------------------------------------------------------

def test_bits_and_bytes_differ_by_eight():
    assert units.parse_bandwidth("400 Gbps") * 8 == units.parse_bandwidth("400 GB/s")
    assert units.parse_bandwidth("400 Gb/s") == units.parse_bandwidth("50 GB/s")
    assert units.parse_data_size("8 Gb") == units.parse_data_size("1 GB")


@pytest.mark.parametrize("prefix, power", [("Ki", 1), ("Mi", 2), ("Gi", 3), ("Ti", 4), ("Pi", 5)])
def test_binary_prefixes_are_powers_of_1024_and_decimal_ones_of_1000(prefix, power):
    decimal = prefix[0].replace("K", "k")
    assert units.parse_data_size(f"1 {prefix}B") == 1024.0 ** power
    assert units.parse_data_size(f"1 {decimal}B") == 1000.0 ** power
    assert units.parse_bandwidth(f"1 {prefix}B/s") == 1024.0 ** power
    assert units.parse_bandwidth(f"1 {prefix}b/s") == 1024.0 ** power / 8


def test_hbm_sizes_are_not_confused():
    # An "80 GB" H100 has 80 GiB of HBM3 (NVIDIA H100 datasheet): the two spellings differ by 7.4%.
    assert units.parse_data_size("80 GiB") / units.parse_data_size("80 GB") == pytest.approx(2**30 / 1e9)


@given(st.floats(min_value=0, max_value=1e6, allow_nan=False), st.sampled_from(["k", "M", "G", "T"]))
@settings(max_examples=60, deadline=None)
def test_bits_bytes_consistency_property(x, prefix):
    bits = units.parse_bandwidth(f"{x!r} {prefix}bps")
    octets = units.parse_bandwidth(f"{x!r} {prefix}B/s")
    assert bits * 8 == pytest.approx(octets, rel=1e-15)


@given(st.integers(min_value=0, max_value=10**6))
@settings(max_examples=60, deadline=None)
def test_si_iec_consistency_property(n):
    assert units.parse_data_size(f"{n} KiB") == n * 1024
    assert units.parse_data_size(f"{n} kB") == n * 1000
    assert units.parse_data_size(f"{n} GiB") == n * 2**30


# --- refusals: a mix-up or a missing unit is an error with a hint, never a guess ------------------

def test_a_data_size_where_a_bandwidth_belongs_suggests_both_readings():
    with pytest.raises(UnitError, match=r"data size, not a bandwidth.*400 GB/s.*bytes.*400 Gb/s.*bits"):
        units.parse_bandwidth("400 GB")


def test_a_bandwidth_where_a_size_belongs_is_refused():
    with pytest.raises(UnitError, match="bandwidth, not a data size"):
        units.parse_data_size("50 GB/s")


def test_an_energy_where_a_power_belongs_is_refused():
    with pytest.raises(UnitError, match="energy, not a power"):
        units.parse_power("5 MWh")


@pytest.mark.parametrize("parse, value, hint", [
    (units.parse_bandwidth, 400, '"400 Gbps"'),
    (units.parse_data_size, 80, '"80 GB"'),
    (units.parse_duration, 90, '"90 days"'),
    (units.parse_power, 5, '"5 kW"'),
    (units.parse_money, 12500, '"$12500"'),
    (units.parse_hourly_price, 3, '"$3/h"'),
    (units.parse_flops, 989, '"989 TFLOPS"'),
    (units.parse_energy_price, 0.08, '"0.08 USD/kWh"'),
])
def test_bare_numbers_are_refused_with_a_hint(parse, value, hint):
    with pytest.raises(UnitError, match="needs a unit: did you mean") as info:
        parse(value)
    assert hint in str(info.value)


def test_money_without_a_currency_is_refused_with_the_fix():
    with pytest.raises(UnitError, match=r"needs a currency: write '\$12500'"):
        units.parse_money("12500")


@pytest.mark.parametrize("parse, text", [
    (units.parse_bandwidth, "400 Gbit"),
    (units.parse_bandwidth, "400 furlongs/s"),
    (units.parse_data_size, "80 GX"),
    (units.parse_duration, "3 fortnights"),
    (units.parse_power, "5 hp"),
    (units.parse_count, "70Q"),
    (units.parse_flops, "989 TOPS"),
    (units.parse_money, "€100"),
    (units.parse_hourly_price, "$3/day"),
    (units.parse_energy_price, "0.08 USD/kW"),
])
def test_unknown_units_are_refused(parse, text):
    with pytest.raises(UnitError):
        parse(text)


@pytest.mark.parametrize("parse", [
    units.parse_bandwidth, units.parse_data_size, units.parse_count, units.parse_money, units.parse_duration,
    units.parse_power, units.parse_energy_price, units.parse_hourly_price, units.parse_flops,
    units.parse_fraction,
])
@pytest.mark.parametrize("value", [
    True, None, [], {}, "", "   ", "x" * 65, float("nan"), float("inf"), -float("inf"),
    10**400, -(10**400),  # beyond float range: once an OverflowError, now a UnitError
    "nan Gbps", "1e400 GB", "-5 W", "-$3", "-1 day", "-3",
])
def test_bad_values_raise_unit_error_and_nothing_else(parse, value):
    with pytest.raises(UnitError):
        parse(value)


@pytest.mark.parametrize("parse, text", [
    (units.parse_bandwidth, "-400 Gbps"), (units.parse_data_size, "-1 GB"), (units.parse_money, "$-5"),
    (units.parse_duration, "-3 days"), (units.parse_power, "-5 W"), (units.parse_flops, "-1 TFLOPS"),
    (units.parse_count, "-2B"), (units.parse_count, -2), (units.parse_hourly_price, "$-3/h"),
])
def test_negative_quantities_are_refused(parse, text):
    with pytest.raises(UnitError, match="negative"):
        parse(text)


@pytest.mark.parametrize("value", [1.5, -0.1, "150%", "-5%", 2])
def test_fractions_outside_zero_one_are_refused(value):
    with pytest.raises(UnitError, match="between 0 and 1"):
        units.parse_fraction(value)


def test_messages_quoting_the_input_stay_short():
    with pytest.raises(UnitError) as info:
        units.parse_fraction("x" * 10_000)
    assert len(str(info.value)) < 200
    with pytest.raises(UnitError) as info:
        units.parse_bandwidth("9" * 10_000 + " Gbps")
    assert len(str(info.value)) < 200


@given(st.text(max_size=80))
@settings(max_examples=300, deadline=None)
def test_any_text_parses_or_raises_unit_error(text):
    for parse in (units.parse_bandwidth, units.parse_data_size, units.parse_count, units.parse_money,
                  units.parse_duration, units.parse_power, units.parse_energy_price, units.parse_hourly_price,
                  units.parse_flops, units.parse_fraction):
        try:
            value = parse(text)
        except UnitError as exc:
            assert "\n" not in str(exc).replace("\\n", "")
        else:
            assert math.isfinite(value) and value >= 0


# --- round trips: parse(format(x)) == x -------------------------------------------------------------

magnitudes = st.one_of(
    st.just(0.0),
    st.floats(min_value=1e-9, max_value=1e18, allow_nan=False, allow_infinity=False),
)


@given(magnitudes, st.booleans())
@settings(max_examples=200, deadline=None)
def test_bandwidth_round_trip(x, bits):
    assert units.parse_bandwidth(units.format_bandwidth(x, bits=bits)) == pytest.approx(x, rel=ROUND_TRIP_REL)


@given(magnitudes)
@settings(max_examples=200, deadline=None)
def test_data_size_round_trip(x):
    assert units.parse_data_size(units.format_data_size(x)) == pytest.approx(x, rel=ROUND_TRIP_REL)


@given(magnitudes)
@settings(max_examples=200, deadline=None)
def test_count_round_trip(x):
    assert units.parse_count(units.format_count(x)) == pytest.approx(x, rel=ROUND_TRIP_REL)


@given(magnitudes)
@settings(max_examples=200, deadline=None)
def test_duration_round_trip(x):
    assert units.parse_duration(units.format_duration(x)) == pytest.approx(x, rel=ROUND_TRIP_REL)


@given(magnitudes)
@settings(max_examples=200, deadline=None)
def test_power_round_trip(x):
    assert units.parse_power(units.format_power(x)) == pytest.approx(x, rel=ROUND_TRIP_REL)


@given(st.floats(min_value=0, max_value=1e13, allow_nan=False))
@settings(max_examples=200, deadline=None)
def test_money_round_trip_to_the_cent(x):
    # format_money rounds to cents, so the round trip is exact to half a cent (plus float noise).
    assert units.parse_money(units.format_money(x)) == pytest.approx(x, abs=0.005 + 1e-15 * x)


def test_formats_read_as_people_write_them():
    assert units.format_bandwidth(50e9) == "400 Gb/s"
    assert units.format_bandwidth(50e9, bits=False) == "50 GB/s"
    assert units.format_count(70e9) == "70B"
    assert units.format_money(2.5e6) == "$2,500,000.00"
    assert units.format_duration(90 * 86400.0) == "90 days"
    assert units.format_power(5e6) == "5 MW"
    assert units.format_data_size(80e9) == "80 GB"
    # HBM is quoted in binary units: an H100's 80 GiB, a B200's 180 GiB; flash in decimal ones.
    assert units.format_data_size(80 * 2**30) == "80 GiB"
    assert units.format_data_size(180 * 2**30) == "180 GiB"
    assert units.format_data_size(1.5 * 2**40) == "1.5 TiB"
    assert units.format_data_size(3.84e12) == "3.84 TB"
    assert units.format_data_size(141e9) == "141 GB"
    assert [units.format_money_short(x) for x in (1370633.4, 964.0, -2.5e9, None, float("inf"))] == \
        ["$1.37M", "$964", "-$2.5B", "-", "-"]
