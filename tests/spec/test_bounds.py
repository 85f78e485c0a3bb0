"""Numeric bounds at the edge: every quantity of a spec or catalog has a sane range that
``validate`` checks, so that no value that validates makes any command fail internally (exit 70),
and JSON output never holds NaN or Infinity."""

from __future__ import annotations

import json
import math
import typing
from dataclasses import fields
from pathlib import Path

import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from designer.catalog import schema as catalog_schema
from designer.catalog import types as catalog_types
from designer.cli import app
from designer.report import jsondoc
from designer.spec import bounds, schema, values
from tiny_spec import TINY

RUNNER = CliRunner()
# Bounded in designer.spec.load with their own message ("beyond any buildable cluster").
BOUNDED_IN_LOAD = {"nodes", "max_nodes", "gpus", "tp", "pp", "dp", "ep", "cp", "etp",
                   "weight"}  # a preference's weight: a share below 100% or dollars up to the largest budget
# A fraction's parser (units.parse_fraction) allows 0 to 1 only: its validators bound it.
FRACTION = {id(m) for m in values.Fraction.__metadata__}


def _numeric(annotation) -> bool:
    args = typing.get_args(annotation)
    if annotation in (int, float):
        return True
    return any(_numeric(a) for a in args if a is not type(None))


def _bounded(info) -> bool:
    metadata = list(info.metadata)
    stack = [info.annotation]
    while stack:
        ann = stack.pop()
        metadata += list(getattr(ann, "__metadata__", ()))
        stack.extend(typing.get_args(ann))
    metadata += [m for item in metadata for m in getattr(item, "metadata", ())]  # pydantic's FieldInfo
    if FRACTION & {id(m) for m in metadata}:
        return True
    for item in metadata:
        if getattr(item, "le", None) is not None or getattr(item, "lt", None) is not None:
            return True
        if hasattr(getattr(item, "func", None), "range"):
            return True
    return False


def _spec_fields(model: type[BaseModel], path: str = ""):
    for name, info in model.model_fields.items():
        stack, models = [info.annotation], []
        while stack:
            ann = stack.pop()
            if isinstance(ann, type) and issubclass(ann, BaseModel):
                models.append(ann)
            stack.extend(typing.get_args(ann))
        for sub in models:
            yield from _spec_fields(sub, f"{path}{name}.")
        if _numeric(info.annotation):
            yield f"{path}{name}", name, info


def test_every_number_of_the_spec_has_a_range():
    """A new numeric key needs a range (designer.spec.bounds.SPEC) before it can land."""
    missing = [full for full, name, info in _spec_fields(schema.SpecInput)
               if name not in BOUNDED_IN_LOAD and not _bounded(info)]
    assert missing == []


def test_every_number_of_every_catalog_kind_has_a_range():
    missing = []
    for kind, spec in catalog_schema.KINDS.items():
        hints = typing.get_type_hints(spec.cls)
        for f in spec.fields:
            hint = hints[f.attr]
            if hint is bool or typing.get_origin(hint) is typing.Union and bool in typing.get_args(hint):
                continue
            # A breakout's rates and counts are checked apart; spares and a price book's discounts
            # are fractions (0 to 1 by their parser).
            if (_numeric(hint) or "float" in str(hint)) and bounds.catalog_range(f.attr) is None \
                    and f.attr not in ("breakout", "spares", "discounts"):
                missing.append(f"{kind}.{f.key}")
    assert missing == []


def test_the_built_in_catalogs_lie_within_their_ranges():
    from designer.catalog import load_builtin

    cat = load_builtin()
    for kind in catalog_types.KINDS:
        for entry in cat.by_kind(kind).values():
            for f in fields(entry):
                value = getattr(entry, f.name)
                rng = bounds.catalog_range(f.name)
                if rng is not None and isinstance(value, (int, float)) and not isinstance(value, bool):
                    assert rng.lo <= value <= rng.hi, (kind, entry.name, f.name, value)


def _write(tmp_path: Path, text: str, catalog: str | None = None) -> Path:
    if catalog is not None:
        (tmp_path / "cat.yaml").write_text(catalog)
        text += "catalogs: [cat.yaml]\n"
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return path


def _edit(old: str, new: str) -> str:
    assert TINY.count(old) == 1, old
    return TINY.replace(old, new)


# The values of the report that validated and then failed inside (exit 70), and more like them.
REFUSED = {
    "deadline 1e13 years": (_edit("deadline: 30 days", "deadline: 1e13 years"), "must lie between 1 h and 30 years"),
    "deadline 1 s": (_edit("deadline: 30 days", "deadline: 1 s"), "must lie between 1 h and 30 years"),
    "electricity 1e20 USD/kWh": (TINY + "facility: {electricity: 1e20 USD/kWh}\n",
                                 "must lie between 0 USD/kWh and 10 USD/kWh"),
    "budget $1e308B": (_edit("budget: {total: $2M}", "budget: {total: $1e308B}"), "overflows"),
    "budget $1e14": (_edit("budget: {total: $2M}", "budget: {total: $1e14}"), "must lie between $0 and $10T"),
    "rack_power 1e308 GW": (TINY + "facility: {rack_power: 1e308 GW}\n", "overflows"),
    "rack_power 1e308 MW": (TINY + "facility: {rack_power: 1e308 MW}\n", "overflows"),
    "rack_power 1e9 MW": (TINY + "facility: {rack_power: 1e9 MW}\n", "must lie between 100 W and 10 MW"),
    "global_batch 1e300T": (_edit("global_batch: 64", "global_batch: 1e300T"), "1e300T"),
    "global_batch 1e9": (_edit("global_batch: 64", "global_batch: 1000000000"), "must lie between 1 and 10,000,000"),
    "tokens 1e300T": (_edit("tokens: 20B", "tokens: 1e300T"), "overflows"),
    "horizon 1 s": (_edit("horizon: 1 years", "horizon: 1 s"), "must lie between 1 day and 30 years"),
    "version true": (_edit("version: 1", "version: true"), "expected the number 1, got true"),
    "max_power 1 TW": (TINY.replace("  max_nodes: 4", "  max_nodes: 4\n  max_power: 1000000 MW"),
                       "must lie between 1 kW and 100000 MW"),
    "checkpoint 1 s": (_edit("deadline: 30 days", "deadline: 30 days\n    checkpoint_interval: 1 s"),
                       "must lie between 1 min and 1 year"),
    "layers 1e6": (_edit("model: {preset: llama3-8b}", "model: {preset: llama3-8b, layers: 1000000}"),
                   "must lie between 1 and 10,000"),
}

_GPU = "schema_version: 1\nkind: gpu\nitems:\n  - name: h100-sxm\n    {field}\n    source: x\n    as_of: 2026\n"
_SWITCH = "schema_version: 1\nkind: switch\nitems:\n  - name: nvidia-qm9700\n    {field}\n    source: x\n    as_of: 2026\n"
REFUSED_IN_CATALOGS = {
    "bf16 1e-300 FLOPS": (_GPU.format(field="bf16: 1e-300 FLOPS"), "must lie between 1e+09 FLOPS and 1e+18 FLOPS"),
    "switch ports 10000": (_SWITCH.format(field="ports: 10000"), "must lie between 1 and 4,096, got 10,000"),
    "switch ports 1e9": (_SWITCH.format(field="ports: 1000000000"), "must lie between 1 and 4,096"),
    "price $1e12": (_SWITCH.format(field="price: $1e12"), "must lie between $0 and $1B"),
    "port rate 1 b/s": (_SWITCH.format(field="port_rate: 1 bps"), "must lie between 800 kb/s and 800 Tb/s"),
    "latency 1 year": (_SWITCH.format(field="latency: 1 years"), "must lie between 0.1 ns and 1 s"),
}


@pytest.mark.parametrize("text, words", REFUSED.values(), ids=REFUSED.keys())
def test_absurd_spec_values_are_refused_by_validate(tmp_path, text, words):
    result = RUNNER.invoke(app, ["validate", str(_write(tmp_path, text))])
    assert result.exit_code == 2, result.output
    assert words in result.stderr and "internal error" not in result.stderr


@pytest.mark.parametrize("catalog, words", REFUSED_IN_CATALOGS.values(), ids=REFUSED_IN_CATALOGS.keys())
def test_absurd_catalog_values_are_refused_by_validate(tmp_path, catalog, words):
    result = RUNNER.invoke(app, ["validate", str(_write(tmp_path, TINY, catalog))])
    assert result.exit_code == 2, result.output
    assert words in result.stderr and str(tmp_path / "cat.yaml") in result.stderr


def test_a_ten_thousand_switch_catalog_is_refused_at_once(tmp_path):
    item = ("  - {{name: sw-{i}, description: x, protocol: ethernet, ports: 64, port_rate: 400 Gbps, cages: 64, "
            "latency: 600 ns, price: '$20,000', power: 1 kW, rack_units: 2, source: x, as_of: 2026}}\n")
    catalog = "schema_version: 1\nkind: switch\nitems:\n" + "".join(item.format(i=i) for i in range(10_000))
    result = RUNNER.invoke(app, ["validate", str(_write(tmp_path, TINY, catalog))])
    assert result.exit_code == 2
    assert f"10,000 items; a catalog file holds at most {bounds.MAX_CATALOG_ENTRIES}" in result.stderr


# Values at the ends of their ranges validate, and every command then ends with a result or a
# located error, never an internal one: the ranges hold what the model can compute.
EXTREMES = {
    "deadline 30 years": _edit("deadline: 30 days", "deadline: 30 years"),
    "deadline 1 h": _edit("deadline: 30 days", "deadline: 1 h"),
    "horizon 30 years": _edit("horizon: 1 years", "horizon: 30 years"),
    "horizon 1 day": _edit("horizon: 1 years", "horizon: 1 day"),
    "electricity 10 USD/kWh": TINY + "facility: {electricity: 10 USD/kWh, rack_power: 10 MW}\n",
    "electricity 0": TINY + "facility: {electricity: 0 USD/kWh, rack_power: 100 W}\n",
    "budget $10T": _edit("budget: {total: $2M}", "budget: {total: $10000B, capex: $10000B}"),
    "budget $0": _edit("budget: {total: $2M}", "budget: {total: $0}"),
    "tokens 1e15": _edit("tokens: 20B", "tokens: 1000T"),
    "global_batch 1e7": _edit("global_batch: 64", "global_batch: 10000000").replace("tokens: 20B", "tokens: 1000T"),
    "max_power 100 GW": TINY.replace("  max_nodes: 4", "  max_nodes: 4\n  max_power: 100000 MW"),
    "max_power 1 kW": TINY.replace("  max_nodes: 4", "  max_nodes: 4\n  max_power: 1 kW"),
    "checkpoints every minute": _edit("deadline: 30 days", "deadline: 30 days\n    checkpoint_interval: 1 min"),
}


@pytest.mark.parametrize("text", EXTREMES.values(), ids=EXTREMES.keys())
def test_values_at_the_ends_of_their_ranges_never_fail_inside(tmp_path, text):
    path = _write(tmp_path, text)
    assert RUNNER.invoke(app, ["validate", str(path)]).exit_code == 0
    result = RUNNER.invoke(app, ["solve", str(path), "--format", "json"])
    assert result.exit_code in (0, 3), result.output
    assert "internal error" not in result.stderr and "Traceback" not in result.output
    if result.exit_code == 0:
        json.loads(result.stdout, parse_constant=lambda name: pytest.fail(f"{name} in JSON"))


CATALOG_EXTREMES = {
    "bf16 1 EFLOPS": _GPU.format(field="bf16: 1000000 TFLOPS"),
    "bf16 1 GFLOPS": _GPU.format(field="bf16: 1 GFLOPS"),
    "switch price $1B": _SWITCH.format(field="price: $1B"),
    "switch latency 1 s": _SWITCH.format(field="latency: 1 s"),
}


@pytest.mark.parametrize("catalog", CATALOG_EXTREMES.values(), ids=CATALOG_EXTREMES.keys())
def test_catalog_values_at_the_ends_of_their_ranges_never_fail_inside(tmp_path, catalog):
    path = _write(tmp_path, TINY, catalog)
    result = RUNNER.invoke(app, ["solve", str(path)])
    assert result.exit_code in (0, 3), result.output
    assert "internal error" not in result.stderr


def test_json_documents_never_hold_nan_or_infinity():
    text = jsondoc.dumps({"a": math.inf, "b": [math.nan, 1.5, {"c": -math.inf}], "d": "inf"})
    assert json.loads(text, parse_constant=lambda name: pytest.fail(name)) == {
        "format_version": jsondoc.FORMAT_VERSION, "a": None, "b": [None, 1.5, {"c": None}], "d": "inf"}


def test_estimate_refuses_more_gpus_than_the_pinned_system_has(tmp_path):
    text = (_edit("deadline: 30 days", "deadline: 30 days\n    gpus: 1024")
            + "system: {server: dgx-h100, nodes: 1, fabric: infiniband, topology: single_switch}\n")
    result = RUNNER.invoke(app, ["estimate", str(_write(tmp_path, text)), "--json"])
    assert result.exit_code == 2
    assert "gpus=1,024 is more than the pinned system has: system.nodes 1 x 8 GPUs per dgx-h100 = 8" in result.stderr


def test_the_ranges_are_documented_as_checked():
    doc = (Path(__file__).resolve().parents[2] / "docs" / "reliability.md").read_text()
    assert bounds.ranges_markdown() in doc, (
        "docs/reliability.md: replace the ranges table with the output of "
        "python -c 'from designer.spec import bounds; print(bounds.ranges_markdown())'")


def test_a_price_dated_in_the_future_is_refused(tmp_path):
    """``as_of: 9999-12-31`` once silenced the stale-price warning for ever."""
    catalog = _SWITCH.format(field="price: $30,000").replace("as_of: 2026", "as_of: 9999-12-31")
    result = RUNNER.invoke(app, ["validate", str(_write(tmp_path, TINY, catalog))])
    assert result.exit_code == 2 and "as_of: 9999-12-31 is in the future" in result.stderr
