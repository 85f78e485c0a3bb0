"""Cloud instances as they are bought: on demand, committed for a term, in capacity blocks; no fallback.

Published rules checked here: a reserved (committed) instance is paid for the whole term whatever
the job uses; AWS capacity blocks last 1-14 days or multiples of 7 days up to 182 days, at most
64 instances per block and 256 across blocks (AWS EC2 User Guide, "Capacity Blocks for ML").
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from designer import planner
from designer.catalog import load_builtin
from designer.errors import SpecError
from designer.optimize import cloud
from designer.optimize.problem import CloudSystem, Option, pareto
from designer.planner.candidates import enumerate_candidates
from designer.planner.inputs import load_inputs

CATALOG = load_builtin()
P5 = CATALOG.clouds["aws-p5.48xlarge"]
DAY, YEAR = 86400.0, 365 * 86400.0

# 64 x p5 (512 H100) train Llama 3 70B on 2T tokens in about 40 days.
SPEC = """\
version: 1
name: p5-{pricing}
horizon: 1 year
workloads:
  - name: llama3-70b
    model: {{preset: llama3-70b}}
    tokens: 2T
    global_batch: 1024
    gpus: 512
    deadline: 45 days
constraints:
  deployments: [cloud]
  pricing: {pricing}
system: {{server: {server}}}
"""


def _design(tmp_path: Path, pricing: str, server: str = "aws-p5.48xlarge"):
    path = tmp_path / f"{pricing}.yaml"
    path.write_text(SPEC.format(pricing=pricing, server=server))
    spec, catalog = load_inputs(path)
    return planner.plan(spec, catalog)


def test_a_one_year_commitment_is_paid_for_the_whole_year(tmp_path):
    d = _design(tmp_path, "reserved_1y")
    (w,) = d.workloads
    assert 30 < w.time_to_train_days < 45 and w.gpus == 512
    (line,) = d.bom
    assert line.quantity == 64 * 8760  # 64 instances x 8,760 hours, whatever the job used
    assert d.cost.cloud_usd == pytest.approx(64 * 8760 * 32.26, abs=0.01)
    assert "64 instances committed for 1 year" in line.description
    assert d.system.pricing == "reserved_1y"


def test_on_demand_bills_the_hours_used(tmp_path):
    d = _design(tmp_path, "on_demand")
    (w,) = d.workloads
    hours = math.ceil(64 * w.time_to_train_days * 24 - 1e-6)
    assert d.bom[0].quantity == pytest.approx(hours, abs=1)
    assert d.cost.cloud_usd == pytest.approx(hours * 55.04, abs=56)
    # Forty days on demand cost less than a year's commitment at the discounted rate.
    assert d.cost.cloud_usd < 64 * 8760 * 32.26


def test_a_capacity_block_bills_whole_weeks_past_two_weeks(tmp_path):
    d = _design(tmp_path, "capacity_block")
    (w,) = d.workloads
    weeks = math.ceil(math.ceil(w.time_to_train_days) / 7)
    assert d.bom[0].quantity == 64 * weeks * 7 * 24
    assert d.cost.cloud_usd == pytest.approx(64 * weeks * 7 * 24 * 39.33, abs=0.01)


def test_capacity_block_durations():
    assert cloud.capacity_block_s(0.2 * DAY) == DAY
    assert cloud.capacity_block_s(14 * DAY) == 14 * DAY
    assert cloud.capacity_block_s(14.5 * DAY) == 21 * DAY
    assert cloud.capacity_block_s(182 * DAY) == 182 * DAY
    assert math.isinf(cloud.capacity_block_s(183 * DAY))


def test_offers_bill_by_their_rules():
    reserved = cloud.offer_for(P5, "reserved_3y")
    assert reserved.billed_s(3.2, 40 * DAY) == 4 * 3 * YEAR  # whole instances, the whole term
    assert reserved.billed_s(4, 3.5 * YEAR) == 4 * 6 * YEAR  # two terms
    on_demand = cloud.offer_for(P5, "on_demand")
    assert on_demand.billed_s(4, 3600.0) == 4 * 3600.0
    block = cloud.offer_for(P5, "capacity_block")
    assert math.isinf(block.cost_usd(257, DAY))  # 256 instances across blocks
    assert math.isinf(block.cost_usd(8, 200 * DAY))  # 182 days at most


def test_no_fallback_to_another_models_price(tmp_path):
    p5e = CATALOG.clouds["aws-p5e.48xlarge"]
    assert p5e.price_on_demand_usd_per_s is None and p5e.pricing_models() == ("capacity_block",)
    with pytest.raises(Exception, match="aws-p5e.48xlarge has no on_demand price"):
        cloud.offer_for(p5e, "on_demand")
    # Pinned: a located error naming the instance.
    with pytest.raises(SpecError) as err:
        _design(tmp_path, "on_demand", server="aws-p5e.48xlarge")
    assert "aws-p5e.48xlarge" in err.value.message and "capacity_block" in err.value.message
    assert err.value.location.line == 13 and err.value.location.path == "constraints.pricing"


def test_instances_without_the_price_are_not_candidates(tmp_path):
    path = tmp_path / "any.yaml"
    path.write_text(SPEC.format(pricing="reserved_1y", server="x").replace("system: {server: x}\n", ""))
    spec, catalog = load_inputs(path)
    candidates, rejected = enumerate_candidates(spec, catalog)
    names = {c.server for c in candidates}
    assert "aws-p5.48xlarge" in names and "aws-p5e.48xlarge" not in names
    assert all(c.pricing == "reserved_1y" for c in candidates)
    assert any(r.what == "aws-p5e.48xlarge reserved_1y" for r in rejected)
    priced = {n for n, i in catalog.clouds.items() if i.price_reserved_1y_usd_per_s is not None}
    assert names == priced


def test_several_pricing_models_compete(tmp_path):
    path = tmp_path / "mix.yaml"
    path.write_text(SPEC.format(pricing="[on_demand, reserved_1y]", server="aws-p5.48xlarge"))
    spec, catalog = load_inputs(path)
    d = planner.plan(spec, catalog)
    assert d.system.pricing == "on_demand"  # 40 days on demand beat a year's commitment
    keys = {a.label for a in d.alternatives}
    assert "deployment=cloud" in keys


# Llama 3 8B on 21T tokens within 420 days on p5 committed for a year: 8 instances (64 H100)
# take just over a year, so they pay two terms; 12 (96 H100) finish inside one and bill less,
# with more GPU-time.
LONG = SPEC.replace("llama3-70b", "llama3-8b").replace("2T", "21T").replace("gpus: 512\n    ", "") \
    .replace("45 days", "420 days").replace("1 year", "2 years")


def _long(tmp_path: Path, gpus: int | None = None):
    text = LONG.format(pricing="reserved_1y", server="aws-p5.48xlarge")
    if gpus is not None:
        text = text.replace("    deadline:", f"    gpus: {gpus}\n    deadline:")
    path = tmp_path / f"long-{gpus}.yaml"
    path.write_text(text)
    spec, catalog = load_inputs(path)
    return planner.plan(spec, catalog)


def test_options_dominate_by_their_bill_not_their_gpu_time():
    reserved = cloud.offer_for(P5, "reserved_1y")
    system = CloudSystem(None, reserved.usd_per_s, reserved)  # candidate unused by cost_usd
    fewer = Option(64, 370 * DAY, 0.5, 0)  # 23,680 GPU-days, two terms of 8 instances
    more = Option(96, 296 * DAY, 0.45, 1)  # 28,416 GPU-days, one term of 12 instances
    assert fewer.gpu_seconds < more.gpu_seconds
    assert system.cost_usd(12, more.time_s) < system.cost_usd(8, fewer.time_s)
    assert pareto([fewer, more], keep_time=False) == (fewer,)  # by GPU-time: what is bought on-prem
    kept = pareto([fewer, more], keep_time=False, bill=lambda o: system.cost_usd(o.gpus / 8, o.time_s))
    assert kept == (fewer, more)  # neither is cheaper on both counts


def test_a_commitment_keeps_the_larger_count_that_pays_one_term(tmp_path):
    small = _long(tmp_path, 64)
    assert small.workloads[0].time_to_train_days > 365  # the instance: 64 H100 need two terms
    d = _long(tmp_path)
    (w,) = d.workloads
    assert w.time_to_train_days < 365 and w.gpus > 64
    assert "committed for 1 year" in d.bom[0].description
    assert d.cost.cloud_usd == pytest.approx(w.gpus / 8 * 8760 * 32.26, abs=0.01)
    assert d.cost.cloud_usd < small.cost.cloud_usd  # $3.39M against $4.52M for 8 instances x 2 years
