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


def test_mtp_layers_reach_the_performance_model(tmp_path):
    """``model.mtp_layers`` (Megatron-Core mtp_num_layers) is carried to the architecture; left out
    it is 0, and a negative depth is refused where it is written."""
    import pytest

    from designer import spec
    from designer.errors import SpecError
    from designer.planner.jobs import arch_for
    from tiny_spec import TINY

    path = tmp_path / "s.yaml"
    path.write_text(TINY)
    assert arch_for(spec.load_spec(path).workloads[0].model).mtp_layers == 0
    path.write_text(TINY.replace("{preset: llama3-8b}", "{preset: deepseek-v3, mtp_layers: 1}"))
    arch = arch_for(spec.load_spec(path).workloads[0].model)
    assert arch.mtp_layers == 1 and arch.mtp_layer_moe()
    path.write_text(TINY.replace("{preset: llama3-8b}", "{preset: llama3-8b, mtp_layers: -1}"))
    with pytest.raises(SpecError) as err:
        spec.load_spec(path)
    assert "mtp_layers" in str(err.value) and (err.value.location.line, err.value.location.col) == (7, 44)
