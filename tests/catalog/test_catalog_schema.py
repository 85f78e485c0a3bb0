"""Catalog value parsers and the schema table (file-level behaviour is in tests/catalog/test_catalog.py)."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given, strategies as st

from designer.catalog import schema as cs
from designer.catalog.types import KINDS


def test_one_schema_per_kind_in_the_documented_order():
    assert tuple(cs.KINDS) == KINDS
    for kind, schema in cs.KINDS.items():
        keys = [f.key for f in schema.fields]
        assert len(keys) == len(set(keys)), kind


@pytest.mark.parametrize("value, expected", [("2024", date(2024, 1, 1)), ("2024-08", date(2024, 8, 1)),
                                             ("2024-08-15", date(2024, 8, 15))])
def test_an_as_of_names_the_first_day_of_its_period(value, expected):
    assert cs.as_of(value) == value
    assert cs.price_date(value) == expected


def test_a_bare_year_read_by_yaml_as_a_number_is_a_year():
    assert cs.as_of(2024) == "2024"


@pytest.mark.parametrize("value", ["2024-13", "2024-02-30", "Aug 2024", "24"])
def test_a_date_that_is_not_one_is_refused(value):
    with pytest.raises(ValueError):
        cs.as_of(value)


def test_names_are_lower_case_catalog_names():
    assert cs.name_ref(" h100-sxm ") == "h100-sxm"
    with pytest.raises(ValueError, match="is not a catalog name"):
        cs.name_ref("H100 SXM")
    with pytest.raises(ValueError, match="non-empty text"):
        cs.text("   ")


def test_did_you_mean_prefers_a_name_the_word_begins():
    assert cs.hint("h100", ["h100-sxm", "h200", "a100"]) == " (did you mean 'h100-sxm'?)"
    assert cs.hint("zzzz", ["h100-sxm"]) == ""


@given(st.one_of(st.integers(), st.booleans(), st.floats(allow_nan=False), st.text(max_size=5)))
def test_flag_takes_booleans_only(value):
    if isinstance(value, bool):
        assert cs.flag(value) is value
    else:
        with pytest.raises(ValueError):
            cs.flag(value)
