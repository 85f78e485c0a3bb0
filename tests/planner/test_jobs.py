"""The spec's parallelism reaches the plan search field by field."""

from __future__ import annotations

import dataclasses

from designer import perf
from designer.planner.jobs import plan_constraints
from designer.spec.models import ParallelismSpec


def test_the_spec_and_the_search_hold_the_same_plan_fields():
    spec_fields = {f.name for f in dataclasses.fields(ParallelismSpec)}
    assert {f.name for f in dataclasses.fields(perf.PlanConstraints)} == spec_fields


def test_every_pinned_field_is_carried_and_auto_is_none():
    pinned = ParallelismSpec(tp=8, pp=4, dp=16, ep=2, cp=2, microbatch=1, virtual_stages=5, zero=1,
                             sequence_parallel=True, first_stage_layers=9, last_stage_layers=7,
                             schedule="1f1b", etp=1)
    got = plan_constraints(pinned)
    assert dataclasses.asdict(got) == dataclasses.asdict(pinned)
    assert plan_constraints(ParallelismSpec()) is None
