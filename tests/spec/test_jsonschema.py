"""`designer schema`: the spec as written, checked three ways: the schema itself (draft 2020-12,
keywords only, a description and valid examples on every field, every model field present), the
unit patterns against the parsers that read them, and `check-jsonschema` run on every example
and on specs with a wrong value."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import given, strategies as st
from pydantic import BaseModel
from typer.testing import CliRunner

from designer.cli import app
from designer.spec import units, values
from designer.spec.jsonschema import spec_json_schema
from designer.spec.schema import SpecInput
from tiny_spec import TINY

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))
SCHEMA = spec_json_schema()

# The keywords of JSON Schema draft 2020-12 (core, applicator, validation, meta-data vocabularies).
KEYWORDS = {
    "$schema", "$id", "$ref", "$defs", "$comment", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary",
    "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "prefixItems", "items", "contains",
    "properties", "patternProperties", "additionalProperties", "propertyNames", "unevaluatedItems",
    "unevaluatedProperties", "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
    "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxContains",
    "minContains", "maxProperties", "minProperties", "required", "dependentRequired", "title", "description",
    "default", "deprecated", "readOnly", "writeOnly", "examples", "format",
}
_VALUE_KEYWORDS = {"default", "examples", "const", "enum", "required"}  # hold data, not schemas


def _walk(schema: Any, path: str = "#"):
    """Every schema object in the document, with its JSON pointer."""
    if not isinstance(schema, dict):
        return
    yield path, schema
    for key, value in schema.items():
        if key in _VALUE_KEYWORDS:
            continue
        if key in ("properties", "$defs"):
            for name, sub in value.items():
                yield from _walk(sub, f"{path}/{key}/{name}")
        elif isinstance(value, dict):
            yield from _walk(value, f"{path}/{key}")
        elif isinstance(value, list):
            for i, sub in enumerate(value):
                yield from _walk(sub, f"{path}/{key}/{i}")


def _properties():
    """(pointer, property schema) of every field of every model."""
    for path, node in _walk(SCHEMA):
        for name, prop in node.get("properties", {}).items():
            yield f"{path}/properties/{name}", prop


def _validator(sub: dict[str, Any]) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({**sub, "$defs": SCHEMA["$defs"]})


# --- the schema itself -------------------------------------------------------------------------------

def test_is_a_valid_draft_2020_12_schema():
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_uses_only_json_schema_keywords():
    bad = [(path, key) for path, node in _walk(SCHEMA) for key in node if key not in KEYWORDS]
    assert not bad, bad


@pytest.mark.parametrize("pointer, prop", list(_properties()), ids=lambda x: x if isinstance(x, str) else "")
def test_every_field_has_a_description_and_valid_examples(pointer, prop):
    assert prop.get("description", "").strip(), f"{pointer}: no description"
    assert prop.get("examples"), f"{pointer}: no examples"
    check = _validator(prop)
    for example in prop["examples"]:
        assert not list(check.iter_errors(example)), f"{pointer}: example {example!r} is refused by its own schema"
    if "default" in prop:
        assert not list(check.iter_errors(prop["default"])), f"{pointer}: default {prop['default']!r} refused"


def _model_fields(model: type[BaseModel], seen: set[type]) -> list[tuple[str, str]]:
    out = []
    if model in seen:
        return out
    seen.add(model)
    for name, info in model.model_fields.items():
        out.append((model.__name__.lstrip("_"), name))
        for sub in _models_in(info.annotation):
            out += _model_fields(sub, seen)
    return out


def _models_in(tp: Any) -> list[type[BaseModel]]:
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return [tp]
    return [m for arg in getattr(tp, "__args__", ()) or () for m in _models_in(arg)]


def test_every_field_of_the_input_models_is_in_the_schema():
    for model, name in _model_fields(SpecInput, set()):
        node = SCHEMA if model == "Spec" else SCHEMA["$defs"][model]
        assert name in node["properties"], f"{model}.{name} is missing from the schema"
        assert node["additionalProperties"] is False


def test_the_command_prints_it():
    result = CliRunner().invoke(app, ["schema"])
    assert result.exit_code == 0 and json.loads(result.stdout) == json.loads(json.dumps(SCHEMA))


# --- the spec as written: examples pass, wrong values are refused, agreeing with validate ---------

@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_example_is_valid_as_written(path):
    errors = list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(yaml.safe_load(path.read_text())))
    assert not errors, [e.message for e in errors]


def test_a_preference_naming_one_property_passes_the_schema_and_validate(tmp_path):
    text = TINY + "prefer: [{fabric: infiniband, weight: 5%}, {vendor: nvidia, weight: $10k}]\n"
    assert not list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(yaml.safe_load(text)))
    path = tmp_path / "prefer.yaml"
    path.write_text(text)
    assert CliRunner().invoke(app, ["validate", str(path)]).exit_code == 0


def _edit(old: str, new: str) -> str:
    assert TINY.count(old) == 1, old
    return TINY.replace(old, new)


# Each spec has one wrong value; the schema and `designer validate` both refuse it.
BAD = {
    "unit-less duration": _edit("deadline: 30 days", "deadline: 30"),
    "unknown time unit": _edit("deadline: 30 days", "deadline: 30 fortnights"),
    "money without currency": _edit("budget: {total: $2M}", "budget: {total: 2000000}"),
    "duration where money belongs": _edit("budget: {total: $2M}", "budget: {total: 3 years}"),
    "negative tokens": _edit("tokens: 20B", "tokens: -20B"),
    "zero global batch": _edit("global_batch: 64", "global_batch: 0"),
    "utilization above 1": _edit("min_utilization: 0.5", "min_utilization: 1.5"),
    "unknown fabric": _edit("fabrics: [infiniband]", "fabrics: [ethernt]"),
    "empty fabrics": _edit("fabrics: [infiniband]", "fabrics: []"),
    "unknown key": TINY + "colour: red\n",
    "misspelt nested key": _edit("    deadline: 30 days", "    deadlin: 30 days"),
    "missing name": _edit("name: tiny\n", ""),
    "version 2": _edit("version: 1", "version: 2"),
    "zero stage 4": _edit("    deadline: 30 days", "    deadline: 30 days\n    parallelism: {zero: 4}"),
    "pue below 1": TINY + "facility: {pue: 0.9}\n",
    "energy where power belongs": TINY + "facility: {rack_power: 40 kWh}\n",
    "oversubscription of 0.5": _edit("  max_nodes: 4", "  max_nodes: 4\n  oversubscription: [0.5]"),
    "a list where a mapping belongs": _edit("budget: {total: $2M}", "budget: [$2M]"),
    "a preference naming two properties": TINY + "prefer: [{fabric: infiniband, topology: fat_tree, weight: 5%}]\n",
    "a preference naming none": TINY + "prefer: [{weight: $10k}]\n",
    "a preference naming null": TINY + "prefer: [{fabric: null, weight: 5%}]\n",
}


@pytest.mark.parametrize("text", BAD.values(), ids=BAD.keys())
def test_a_wrong_value_is_refused_by_the_schema_and_by_validate(tmp_path, text):
    assert list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(yaml.safe_load(text)))
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    assert CliRunner().invoke(app, ["validate", str(path)]).exit_code == 2


# --- check-jsonschema, as CI and editors' users run it -----------------------------------------------

def _check_jsonschema(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "check_jsonschema", *map(str, args)], capture_output=True,
                          text=True, timeout=120)


def test_check_jsonschema_on_the_schema_the_examples_and_bad_specs(tmp_path):
    schema = tmp_path / "designer.schema.json"
    schema.write_text(CliRunner().invoke(app, ["schema"]).stdout)
    meta = _check_jsonschema("--check-metaschema", schema)
    assert meta.returncode == 0, meta.stdout + meta.stderr
    good = _check_jsonschema("--schemafile", schema, *EXAMPLES)
    assert good.returncode == 0, good.stdout + good.stderr
    bad_files = []
    for i, text in enumerate(BAD.values()):
        bad_files.append(tmp_path / f"bad{i}.yaml")
        bad_files[-1].write_text(text)
    bad = _check_jsonschema("--schemafile", schema, "--output-format", "json", *bad_files)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    refused = {Path(e["filename"]).name for e in json.loads(bad.stdout)["errors"]}
    assert refused == {p.name for p in bad_files}


# --- the unit patterns agree with the parsers -----------------------------------------------------

_NUMBERS = st.one_of(
    st.integers(0, 10**7).map(str),
    st.integers(0, 10**7).map(lambda n: f"{n:,}"),
    st.floats(0, 1e6, allow_nan=False).map(lambda x: f"{x:.3f}"),
    st.floats(0, 1e6, allow_nan=False).map(lambda x: f"{x:.2e}"),
    st.sampled_from([".5", "1.", "+3", "-3", "1,5", "1e", "e3", "", "x", "1_000", "0x10", "1.2.3", "--1"]),
)
_SPACE = st.sampled_from(["", " ", "  ", "\t"])
_JUNK = st.sampled_from(["", "x", "s", "S", "%", "/", "$", "USD", "per", "k", "K", "Wh", "h", "ps", "i", "ki"])


def _agree(kind: str, parse, text: str, out_of_range: str | None = None) -> None:
    """The pattern matches exactly the texts the parser reads (a range it cannot express aside)."""
    try:
        parse(text)
        parsed, why = True, ""
    except units.UnitError as exc:
        parsed, why = False, str(exc)
    matched = re.search(values.PATTERNS[kind], text) is not None and len(text) <= units.MAX_TEXT
    if matched and not parsed and out_of_range and out_of_range in why:
        return
    assert matched == parsed, (kind, text, matched, parsed, why)


def _units_of(words):
    return st.one_of(st.sampled_from(sorted(words)), st.tuples(st.sampled_from(sorted(words)), _JUNK).map("".join),
                     _JUNK)


@given(_NUMBERS, _SPACE, _units_of(units.DURATION_UNITS), _SPACE)
def test_duration_pattern(num, s1, unit, s2):
    _agree("duration", units.parse_duration, f"{s2}{num}{s1}{unit}{s2}")


@given(st.sampled_from(["", "$", "USD", "US$", "$ ", "USD "]), _NUMBERS, _SPACE,
       st.sampled_from(["", "k", "K", "M", "B", "bn", "m", "T"]), _SPACE, st.sampled_from(["", "USD", "$", "usd"]))
def test_money_pattern(pre, num, s1, scale, s2, post):
    _agree("money", units.parse_money, f"{pre}{num}{s1}{scale}{s2}{post}")


@given(_NUMBERS, _SPACE, _units_of(["W", "kW", "MW", "GW", "kWh", "w"]))
def test_power_pattern(num, s1, unit):
    _agree("power", units.parse_power, f"{num}{s1}{unit}")


@given(st.sampled_from(["", "$", "USD"]), _NUMBERS, _SPACE, st.sampled_from(["", "USD", "$"]),
       st.sampled_from(["/", " / ", " per ", "per", "  per  "]), st.sampled_from(["kWh", "MWh", "Wh", "kW", "GWh"]))
def test_energy_price_pattern(pre, num, s1, post, sep, unit):
    _agree("energy_price", units.parse_energy_price, f"{pre}{num}{s1}{post}{sep}{unit}")


@given(_NUMBERS, _SPACE, st.sampled_from(["", "k", "K", "M", "B", "G", "T", "P", "x", "KB"]),
       st.sampled_from(["", " tokens", " params", "  tokens", "tokens", " apples"]))
def test_count_pattern(num, s1, suffix, word):
    _agree("count", units.parse_count, f"{num}{s1}{suffix}{word}")


@given(_NUMBERS, _SPACE, st.sampled_from(["", "k", "K", "M", "G", "T", "P", "Ki", "Mi", "Gi", "ki", "Ei", "i"]),
       st.sampled_from(["b", "B", "bit", "bits", "byte", "bytes", "x"]), st.sampled_from(["ps", "/s", "", "/h"]))
def test_bandwidth_and_data_size_patterns(num, s1, prefix, unit, rate):
    text = f"{num}{s1}{prefix}{unit}{rate}"
    _agree("bandwidth", units.parse_bandwidth, text)
    _agree("data_size", units.parse_data_size, text)


@given(_NUMBERS, _SPACE, st.sampled_from(["%", "", " %"]))
def test_percent_pattern(num, s1, sign):
    text = f"{num}{s1}{sign}"
    if sign.strip():  # a percentage; a bare number is a YAML number, not this pattern's business
        _agree("percent", units.parse_fraction, text, out_of_range="must lie between 0 and 1")
