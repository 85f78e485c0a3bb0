"""Pydantic errors as one located line: the key path rebuilt from the input, the text from the
error type (the spec-level behaviour is in tests/spec/test_spec.py)."""

from __future__ import annotations

from typing import Literal, Union

import pydantic
import pytest
from pydantic import BaseModel, ConfigDict

from designer.spec.messages import best_error, message


class _Inner(BaseModel):
    model_config = ConfigDict(extra="forbid")
    deadline: int
    kind: Literal["dense", "moe"] = "dense"


class _Root(BaseModel):
    model_config = ConfigDict(extra="forbid")
    workloads: list[_Inner]
    plan: Union[Literal["auto"], _Inner] = "auto"


def _first(data) -> str:
    with pytest.raises(pydantic.ValidationError) as info:
        _Root.model_validate(data)
    err, loc = best_error(info.value.errors(include_url=False), data)
    return message(err, loc, _Root)


def test_a_misspelt_key_is_reported_before_the_missing_one_with_the_closest_name():
    assert _first({"workloads": [{"deadlin": 3}]}) == "unknown key 'deadlin' in workloads[0]; did you mean 'deadline'?"


def test_an_unknown_key_far_from_any_lists_the_known_ones():
    assert _first({"workloads": [], "zzz": 1}) == "unknown key 'zzz' in the spec; known keys: workloads, plan"


def test_a_missing_key_names_its_path():
    assert _first({"workloads": [{}]}) == "workloads[0].deadline: required key is missing"


def test_a_value_outside_the_choices_gets_the_closest_choice():
    assert _first({"workloads": [{"deadline": 1, "kind": "mo"}]}) == \
        "workloads[0].kind: 'mo' is not allowed: expected 'dense' or 'moe'; did you mean 'moe'?"


def test_union_branch_labels_never_appear_in_the_path():
    text = _first({"workloads": [], "plan": {"deadline": "x"}})
    assert text.startswith("plan") and "_Inner" not in text and "literal" not in text


def test_a_list_where_a_mapping_belongs():
    assert _first({"workloads": [[1]]}) == "workloads[0]: expected a mapping (key: value pairs), got a list"
