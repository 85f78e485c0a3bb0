"""The plan search's shortcuts change no answer: its bounds are lower bounds, its memo of
traffic times is keyed by every input that matters, and the pruned, memoised search returns
what timing every candidate afresh returns (Hypothesis, small random jobs)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from designer.perf import (
    Cluster, Job, Plan, PlanConstraints, Precision, Recompute, check_plan, search_plans,
)
from designer.perf import memory, pipeline, search
from designer.perf.network import links_for
from designer.perf.step import StepMemo, plan_mp_terms, stage_terms, step_timing

from .factories import HDR, MIXTRAL, NDR
from .strategies import BIG_H100, cases, fastest_valid, small_searches, valid_candidates


def _clear_caches() -> None:
    for cache in (search._ranked_groups, memory.memory_per_gpu, memory._stages, pipeline.stage_layout,
                  pipeline.interleave_depths):
        cache.cache_clear()


@settings(max_examples=40, deadline=None)
@given(small_searches())
def test_pruned_memoised_search_is_the_exhaustive_answer(case):
    """Cold (every cache cleared) and warm, the search returns the first strictly fastest valid
    plan of the enumeration, each timed alone with :func:`estimate_step`."""
    job, cluster, gpus = case
    valid = valid_candidates(job, cluster, gpus)
    if not valid:
        return
    reference = fastest_valid(valid, cluster)
    _clear_caches()
    cold = search_plans(job, cluster, gpus)
    warm = search_plans(job, cluster, gpus)
    assert (cold.plan, cold.recompute, cold.step_time_s) == reference
    assert (warm.plan, warm.recompute, warm.step_time_s) == reference


@settings(max_examples=40, deadline=None)
@given(small_searches())
def test_bounds_never_exceed_the_step(case):
    """Every candidate's network-free bound and its floor with model-parallel traffic are below
    its step time, and the floor is at least the bound (it only adds exposed traffic)."""
    job, cluster, gpus = case
    links = links_for(cluster, job.software)
    for v, p in valid_candidates(job, cluster, gpus):
        st_ = stage_terms(v, p, cluster.gpu, cluster.efficiency.compute)
        floor = st_.floor_s(plan_mp_terms(v, p, cluster, links, st_))
        step = step_timing(v, p, cluster, links).step_s
        assert st_.bound_s < step and floor < step
        assert st_.bound_s <= floor * (1.0 + 1e-12)


@settings(max_examples=30, deadline=None)
@given(small_searches(), st.randoms(use_true_random=False))
def test_a_shared_memo_changes_no_timing(case, rnd):
    """Candidates timed in any order with one memo are timed exactly as each alone."""
    job, cluster, gpus = case
    links = links_for(cluster, job.software)
    valid = valid_candidates(job, cluster, gpus)
    rnd.shuffle(valid)
    memo = StepMemo(job, links, gpus)
    for v, p in valid[:60]:
        assert step_timing(v, p, cluster, links, memo=memo) == step_timing(v, p, cluster, links)


# -- the memo's keys: plans one field apart ----------------------------------------------------

_MOE_JOB = Job(MIXTRAL, global_batch=256, tokens=1e12, recompute="selective")
_BASE = Plan(tp=2, pp=2, dp=16, ep=4, microbatch=1, virtual_stages=2, zero=1)
_CLUSTER = Cluster(BIG_H100, NDR)


@pytest.mark.parametrize("change", [
    {"microbatch": 2}, {"sequence_parallel": False}, {"zero": 0}, {"ep": 8}, {"ep": 1},
    {"virtual_stages": 4}, {"virtual_stages": 1}, {"cp": 2, "dp": 8}, {"tp": 4, "dp": 8}, {"pp": 4, "dp": 8},
    {"etp": 1, "ep": 8}, {"first_stage_layers": 14}, {"dp": 8, "tp": 4, "ep": 8},
])
def test_memo_keys_tell_plans_one_field_apart(change):
    """A plan timed after a neighbour that differs in one field, with the neighbour's memo, is
    timed as it is alone, and not as the neighbour (the memo's keys hold that field)."""
    links = links_for(_CLUSTER, _MOE_JOB.software)
    other = replace(_BASE, **change)
    assert check_plan(_MOE_JOB, _BASE, _CLUSTER) is None and check_plan(_MOE_JOB, other, _CLUSTER) is None
    memo = StepMemo(_MOE_JOB, links, _BASE.gpus)
    base = step_timing(_MOE_JOB, _BASE, _CLUSTER, links, memo=memo)
    alone = step_timing(_MOE_JOB, other, _CLUSTER, links)
    assert step_timing(_MOE_JOB, other, _CLUSTER, links, memo=memo) == alone
    assert alone.step_s != base.step_s


@pytest.mark.parametrize("recompute", [Recompute.NONE, Recompute.FULL])
def test_memo_serves_every_recomputation_of_a_job(recompute):
    """Recomputation variants of one job share a memo (the search's ``auto``) and keep their times."""
    links = links_for(_CLUSTER, _MOE_JOB.software)
    memo = StepMemo(_MOE_JOB, links, _BASE.gpus)
    base = step_timing(_MOE_JOB, _BASE, _CLUSTER, links, memo=memo)
    variant = replace(_MOE_JOB, recompute=recompute)
    assert memo.table_for(variant, links, _BASE) is memo.table
    alone = step_timing(variant, _BASE, _CLUSTER, links)
    assert step_timing(variant, _BASE, _CLUSTER, links, memo=memo) == alone
    assert alone.step_s != base.step_s


def test_memo_is_not_used_for_another_job_network_or_size():
    """A memo belongs to one model, stack, precision, network and job size: given anything else it
    is set aside, and the timing is the one without it."""
    links = links_for(_CLUSTER, _MOE_JOB.software)
    memo = StepMemo(_MOE_JOB, links, _BASE.gpus)
    step_timing(_MOE_JOB, _BASE, _CLUSTER, links, memo=memo)
    fp16 = replace(_MOE_JOB, precision=Precision.FP16)
    hdr = Cluster(BIG_H100, HDR)
    hdr_links = links_for(hdr, _MOE_JOB.software)
    bigger = replace(_BASE, dp=32)
    assert memo.table_for(fp16, links, _BASE) is None
    assert memo.table_for(_MOE_JOB, hdr_links, _BASE) is None
    assert memo.table_for(_MOE_JOB, links, bigger) is None
    assert memo.table_for(_MOE_JOB, links_for(_CLUSTER, _MOE_JOB.software), _BASE) is None  # equal, not the same
    assert (step_timing(_MOE_JOB, _BASE, hdr, hdr_links, memo=memo)
            == step_timing(_MOE_JOB, _BASE, hdr, hdr_links))
    assert (step_timing(_MOE_JOB, _BASE, hdr, hdr_links).step_s
            > step_timing(_MOE_JOB, _BASE, _CLUSTER, links).step_s)  # half the NIC rate: slower


@settings(max_examples=60, deadline=None)
@given(cases())
def test_bounds_and_memo_hold_on_any_valid_plan(case):
    """On any valid plan (context, expert and pipeline parallelism, interleaving, every stack and
    ZeRO stage), the bound and the floor stay below the step, and a memo that timed the plan's
    ZeRO and micro-batch neighbours first changes nothing."""
    job, plan, cluster = case.job, case.plan, case.cluster
    links = links_for(cluster, job.software)
    st_ = stage_terms(job, plan, cluster.gpu, cluster.efficiency.compute)
    alone = step_timing(job, plan, cluster, links)
    assert st_.bound_s < alone.step_s and st_.floor_s(plan_mp_terms(job, plan, cluster, links, st_)) < alone.step_s
    memo = StepMemo(job, links, plan.gpus)
    for z in job.software.profile.zero_stages:
        step_timing(job, replace(plan, zero=z), cluster, links, memo=memo)
    step_timing(job, replace(plan, microbatch=plan.microbatch * 2), cluster, links, memo=memo)
    assert step_timing(job, plan, cluster, links, memo=memo) == alone


@settings(max_examples=25, deadline=None)
@given(small_searches(), st.data())
def test_pinned_searches_are_the_exhaustive_answer(case, data):
    """With parts of the plan pinned (DualPipe, a ZeRO stage, tp, the micro-batch), the pruned
    search still returns the first strictly fastest valid candidate."""
    job, cluster, gpus = case
    fixed = data.draw(st.sampled_from([
        PlanConstraints(schedule="dualpipe"), PlanConstraints(zero=job.software.profile.zero_stages[-1]),
        PlanConstraints(tp=2), PlanConstraints(microbatch=1), PlanConstraints(pp=2, virtual_stages=1),
    ]))
    valid = valid_candidates(job, cluster, gpus, fixed)
    if not valid:
        return
    reference = fastest_valid(valid, cluster)
    best = search_plans(job, cluster, gpus, fixed)
    assert (best.plan, best.recompute, best.step_time_s) == reference


def test_dense_layers_are_timed_once_per_shape_whatever_the_expert_layout(monkeypatch):
    """A dense layer's times do not depend on ep or etp (only an MoE layer's expert GEMMs do): an
    MoE search times each (recomputation, tp, cp, micro-batch, sequence parallelism) once, not once
    per expert layout, and every MoE layer layout once."""
    calls = []
    real = search.layer_times

    def counted(job, plan, gpu, moe_layer=False):
        calls.append((moe_layer, job.recompute, plan.tp, plan.cp, plan.microbatch, plan.sequence_parallel,
                      plan.ep, plan.etp))
        return real(job, plan, gpu, moe_layer)

    monkeypatch.setattr(search, "layer_times", counted)
    _clear_caches()
    search_plans(Job(MIXTRAL, global_batch=256, tokens=1e12, recompute="auto"), _CLUSTER, 64)
    dense = [c[1:6] for c in calls if not c[0]]
    moe = [c[1:] for c in calls if c[0]]
    assert len(dense) == len(set(dense)) and len(moe) == len(set(moe))
    assert len(moe) > len(dense)  # several expert layouts share each dense shape
