"""Consistency of a step estimate over random valid plans and models (Hypothesis).

Every figure of a :class:`StepEstimate` derives from the step time, the compute time and the
model FLOPs of a step; these tests pin the identities between them and the bounds the hardware
sets, over random tp, pp, dp, cp, ep, micro-batch, interleaving, ZeRO stage, numerics and model
shape, so that a plan-dependent miscount (work counted once per context-parallel rank, a
parallel degree dividing twice, micro-batches per replica off by a factor) shows up as a broken
identity or a rate above the hardware's.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from designer.errors import PerfError
from designer.perf import (
    Cluster,
    Job,
    ModelArch,
    MoE,
    Plan,
    PlanConstraints,
    Precision,
    Recompute,
    check_plan,
    estimate_step,
    search_plans,
)
from designer.perf import constants as K
from designer.perf.compute import gemm_rate, peak_rate
from designer.perf.flops import attention_flops_per_token, model_flops_per_token
from designer.perf.memory import memory_per_gpu
from designer.perf.network import links_for
from designer.perf.pipeline import stage_layout
from designer.perf.step import step_timing
from designer.perf.search import candidate_plans

from .factories import GPT3, H100, NDR
from .strategies import (
    BIG_H100, cases, divisors, fastest_valid, models, small_searches, valid_candidates,
)

REL = 1e-9  # float round-off allowed in identities


def _flops_step(job: Job) -> float:
    return model_flops_per_token(job.model) * job.global_batch * job.model.seq_len


def _causal_flops_step(job: Job) -> float:
    """Model FLOPs of a step with the attention core counted over the causal half only: the
    least work a causal kernel does (the MFU convention counts the full square; see
    designer.perf.flops)."""
    m = job.model
    skipped = 3.0 * m.layers * attention_flops_per_token(m) * (1.0 - K.CAUSAL_FRACTION)
    return (model_flops_per_token(m) - skipped) * job.global_batch * m.seq_len


PROPS = settings(max_examples=150, deadline=None)


# -- identities ------------------------------------------------------------------------------

@PROPS
@given(cases())
def test_mfu_is_model_tflops_over_the_peak_of_the_precision(case):
    est = estimate_step(case.job, case.plan, case.cluster)
    gpu = case.cluster.gpu
    peak = gpu.fp8_flops if case.job.precision is Precision.FP8 else gpu.bf16_flops
    assert est.peak_flops == peak == peak_rate(gpu, case.job.precision)
    assert est.mfu == pytest.approx(est.tflops_per_gpu * 1e12 / peak, rel=REL)
    assert 0.0 < est.mfu < 1.0


@PROPS
@given(cases())
def test_throughput_figures_follow_from_the_step_time(case):
    job = case.job
    est = estimate_step(job, case.plan, case.cluster)
    b = est.breakdown
    tokens_step = job.global_batch * job.model.seq_len
    assert est.gpus == case.plan.gpus == case.plan.tp * case.plan.cp * case.plan.pp * case.plan.dp
    assert est.microbatches == job.global_batch // (case.plan.dp * case.plan.microbatch)
    assert est.step_time_s == pytest.approx(
        b.compute_s + b.bubble_s + b.exposed_comm_s + b.host_s + b.optimizer_s + b.checkpoint_s, rel=REL)
    assert est.tokens_per_s == pytest.approx(tokens_step / est.step_time_s, rel=REL)
    assert est.utilization == pytest.approx(b.compute_s / est.step_time_s, rel=REL)
    assert 0.0 < est.utilization <= 1.0
    assert est.time_to_train_s == pytest.approx(job.tokens / est.tokens_per_s, rel=REL)
    assert est.tflops_per_gpu * 1e12 == pytest.approx(
        _flops_step(job) / est.step_time_s / est.gpus, rel=REL)


@PROPS
@given(cases(), st.data())
def test_model_flops_of_a_step_do_not_depend_on_the_plan(case, data):
    """Model FLOPs done in a step, tflops_per_gpu x gpus x step, are the job's (6N + attention
    per token, times the tokens of the global batch) under any plan: only the time changes."""
    job, plan = case.job, case.plan
    # Any smaller tp or cp still splits the model; any dp dividing the batch still fits it.
    per_mb = job.global_batch // plan.microbatch
    other = replace(
        plan,
        tp=data.draw(st.sampled_from(divisors(plan.tp))),
        cp=data.draw(st.sampled_from(divisors(plan.cp))),
        pp=data.draw(st.sampled_from([p for p in (1, 2, 4) if p <= job.model.layers])),
        virtual_stages=1,
        dp=data.draw(st.sampled_from([d for d in divisors(per_mb) if d % plan.ep == 0])),
        zero=data.draw(st.integers(min_value=0, max_value=3)),
    )
    assume(check_plan(job, other, case.cluster) is None)
    for p in (plan, other):
        est = estimate_step(job, p, case.cluster)
        done = est.tflops_per_gpu * 1e12 * est.gpus * est.step_time_s
        assert done == pytest.approx(_flops_step(job), rel=REL)


# -- bounds the hardware sets ----------------------------------------------------------------

@PROPS
@given(cases())
def test_model_flop_rate_stays_below_the_achievable_matmul_rate(case):
    """While it computes, no GPU runs faster than its best GEMM rate: peak x matmul efficiency
    x the sustained-clock fraction (x the FP8 GEMM factor for FP8).

    Counted with causal attention at the half a causal kernel computes: the MFU convention
    credits the full square, so with long sequences and no recomputation ``tflops_per_gpu``
    itself may pass this rate (by up to 1.2x on the attention share) while the GPU does not.
    """
    job = case.job
    est = estimate_step(job, case.plan, case.cluster)
    rate = _causal_flops_step(job) / est.gpus / est.breakdown.compute_s
    bound = gemm_rate(case.cluster.gpu, job.precision)
    assert rate <= bound * (1 + REL)
    assert est.tflops_per_gpu * 1e12 <= _flops_step(job) / _causal_flops_step(job) * bound * (1 + REL)


def test_full_square_attention_credit_can_pass_the_matmul_rate_at_long_context():
    # Why the bound above counts causal attention at half: at 128K tokens without
    # recomputation the attention core is most of the work, fused causal kernels skip half of
    # it, and the MFU convention (Megatron, Chowdhery et al. 2022) still credits all of it.
    model = ModelArch("long", 8, 4096, 32, 8, 14336, 128256, 131072, gated_mlp=True)
    job = Job(model, global_batch=8, tokens=1e9)
    est = estimate_step(job, Plan(tp=1, pp=1, dp=1, cp=8), Cluster(H100, NDR))
    bound = gemm_rate(H100, Precision.BF16)
    assert est.tflops_per_gpu * 1e12 > bound
    assert _causal_flops_step(job) / est.gpus / est.breakdown.compute_s < bound
    assert est.mfu < 1.0


@PROPS
@given(cases(), st.sampled_from(["tp", "cp", "pp", "dp"]))
def test_more_gpus_on_the_same_work_never_take_fewer_gpu_seconds(case, degree):
    """Doubling tp, cp or pp spreads the same micro-batches over twice the GPUs: the compute
    GPU-seconds of a step may grow (replicated work, weights streamed per GPU, a ceil of layers)
    but never shrink, so no degree can divide the work twice. Doubling dp (global batch fixed)
    halves each replica's micro-batches: the GPU-seconds stay exactly the same."""
    job, plan, cluster = case.job, case.plan, case.cluster
    wider = replace(plan, **{degree: 2 * getattr(plan, degree)})
    assume(check_plan(job, wider, cluster) is None)
    # uneven stage splits (layers not divisible by pp) place the remainder differently at each pp
    assume(degree != "pp" or job.model.layers % wider.pp == 0)
    base = estimate_step(job, plan, cluster)
    more = estimate_step(job, wider, cluster)
    gpu_s = base.breakdown.compute_s * base.gpus
    more_gpu_s = more.breakdown.compute_s * more.gpus
    assert more.gpus == 2 * base.gpus
    if degree == "dp":
        assert more_gpu_s == pytest.approx(gpu_s, rel=REL)
    else:
        assert more_gpu_s >= gpu_s * (1 - REL)


@PROPS
@given(cases())
def test_bubble_is_the_1f1b_fraction_of_the_micro_batches(case):
    """1F1B: the bubble is (p-1)/v micro-batch times (Narayanan et al. SC21 sec. 2.2) plus the
    2 (p v - 1) sends of the fill and drain whole, whatever tp, cp, dp and the ZeRO stage's
    data-parallel schedule are. Its micro-batch time is the compute and the synchronous traffic:
    at least the compute, at most the compute, the host's stall and all the exposed traffic of a micro-batch (the
    data-parallel time exposed once a step is outside the pipeline). Where every stage holds the
    same layers it reaches the lower end; a light first or last chunk only shortens it."""
    job, plan = case.job, case.plan
    est = estimate_step(job, plan, case.cluster)
    b = est.breakdown
    t = step_timing(job, plan, case.cluster, links_for(case.cluster))
    if plan.pp == 1:
        assert b.bubble_s == 0.0
        return
    v = plan.virtual_stages
    sends = 2 * (plan.pp * v - 1) * t.pp_mb_s / (2 * v)
    # the host's stall (designer.perf.host) is part of each micro-batch's time, in the bubble too
    upper = (plan.pp - 1) / v * (t.compute_mb_s + t.exposed_mb_s + t.host_mb_s) + sends
    lower = (plan.pp - 1) / v * t.compute_mb_s + sends
    layout = stage_layout(job.model.layers, plan.pp, plan.first_stage_layers, plan.last_stage_layers)
    assert b.bubble_s <= upper * (1 + 1e-7) + 1e-15
    if isinstance(layout, str) or layout.is_even:
        assert b.bubble_s >= lower * (1 - 1e-7) - 1e-15


@PROPS
@given(cases(), st.sampled_from(["dp", "cp"]))
def test_optimizer_state_is_sharded_over_data_and_context_ranks(case, degree):
    """ZeRO-1 and up shard the optimizer state over the dp x cp ranks that hold the same
    weights (experts over dp x cp / ep): twice the ranks, half the state and half the Adam step
    per GPU. ZeRO-0 keeps it whole."""
    job, plan, cluster = case.job, case.plan, case.cluster
    wider = replace(plan, **{degree: 2 * getattr(plan, degree)})
    if degree == "dp":
        job = replace(job, global_batch=2 * job.global_batch)  # the same micro-batches per replica
    assume(check_plan(job, wider, cluster) is None)
    a, b = estimate_step(job, plan, cluster), estimate_step(job, wider, cluster)
    half = 0.5 if plan.zero >= 1 else 1.0
    assert b.breakdown.optimizer_s == pytest.approx(half * a.breakdown.optimizer_s, rel=REL)
    if plan.pp == 1:  # with pipeline stages another stage may become the one that needs the most
        assert b.memory.optimizer == pytest.approx(half * a.memory.optimizer, rel=REL)


# -- plan rules ------------------------------------------------------------------------------

@PROPS
@given(cases(single_stage=True, context_parallel=True), st.sampled_from([2, 4, 8]))
def test_context_parallelism_splits_activations_evenly(case, factor):
    """cp ranks each keep the activations of seq_len / cp tokens: cp x the per-GPU activation
    memory is the same for every cp (Korthikanti et al. 2022's per-token terms, the score term
    and the logits all scale with the local tokens)."""
    job, plan = case.job, case.plan
    wider = replace(plan, cp=plan.cp * factor)
    # one stage: with pipeline stages the stage that needs the most memory may change with cp
    assume(check_plan(job, wider, case.cluster) is None)
    micro = job.global_batch // (plan.dp * plan.microbatch)
    a = memory_per_gpu(job, plan, micro).activations * plan.cp
    b = memory_per_gpu(job, wider, micro).activations * wider.cp
    assert b == pytest.approx(a, rel=REL)
    assert 0.0 < memory_per_gpu(job, wider, micro).activations < memory_per_gpu(job, plan, micro).activations


@PROPS
@given(cases(moe_ok=False), st.integers(min_value=2, max_value=64))
def test_context_parallelism_must_divide_the_sequence(case, cp):
    job, plan = case.job, case.plan
    bad = replace(plan, cp=cp)
    reason = check_plan(job, bad, case.cluster)
    if job.model.seq_len % cp:
        assert reason is not None and "sequence length" in reason
    elif not job.software.profile.context_parallel:
        assert reason is not None and "no context parallelism" in reason
    elif plan.tp == 1:
        assert reason is None


@PROPS
@given(st.sampled_from([2, 4, 8, 16]), st.integers(min_value=1, max_value=64), st.data())
def test_expert_parallelism_must_divide_data_parallelism(experts, dp, data):
    ep = data.draw(st.sampled_from([e for e in divisors(experts) if e > 1]))
    model = ModelArch("moe", 4, 512, 8, 8, 1024, 1000, 256, moe=MoE(experts=experts, top_k=1))
    job = Job(model, global_batch=dp * 4, tokens=1e9)
    reason = check_plan(job, Plan(tp=1, pp=1, dp=dp, ep=ep), Cluster(BIG_H100, NDR))
    if dp % ep:
        assert reason is not None and f"does not divide dp={dp}" in reason
    else:
        assert reason is None


# -- plan search -----------------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(small_searches())
def test_search_returns_the_fastest_valid_plan_as_estimated_alone(case):
    """The search's answer is estimated exactly as :func:`estimate_step` estimates its plan,
    uses every GPU, keeps tensor parallelism inside a node, fits, and no candidate it tried is
    faster (its caches and bounds change nothing)."""
    job, cluster, gpus = case
    try:
        best = search_plans(job, cluster, gpus)
    except PerfError as exc:  # nothing fits: every candidate must agree
        assert all(check_plan(v, p, cluster) is not None
                   for v, group in candidate_plans(job, cluster, gpus) for p in group), exc
        return
    plan = best.plan
    chosen = replace(job, recompute=best.recompute)
    assert plan.gpus == best.gpus == gpus
    assert plan.tp <= cluster.network.gpus_per_node
    assert plan.dp % plan.ep == 0 and job.model.seq_len % plan.cp == 0
    assert check_plan(chosen, plan, cluster) is None
    assert estimate_step(chosen, plan, cluster).step_time_s == best.step_time_s
    if job.recompute is not Recompute.AUTO:
        assert best.recompute is job.recompute
    for v, group in candidate_plans(job, cluster, gpus):
        for p in group:
            if check_plan(v, p, cluster) is None:
                assert estimate_step(v, p, cluster).step_time_s >= best.step_time_s * (1 - REL)


@settings(max_examples=40, deadline=None)
@given(small_searches(), st.data())
def test_search_answer_is_the_first_fastest_plan_and_a_hint_changes_nothing(case, data):
    """Branch and bound returns exactly what timing every valid plan in enumeration order and
    keeping the first strictly fastest returns; starting from any hint plan (or a plan of
    another size, which is not a candidate) gives the same plan."""
    job, cluster, gpus = case
    valid = valid_candidates(job, cluster, gpus)
    if not valid:
        return
    brute = fastest_valid(valid, cluster)
    best = search_plans(job, cluster, gpus)
    assert (best.plan, best.recompute, best.step_time_s) == brute
    hint = data.draw(st.sampled_from([p for _, p in valid] + [Plan(tp=1, pp=1, dp=gpus * 2)]))
    hinted = search_plans(job, cluster, gpus, hint=hint)
    assert (hinted.plan, hinted.recompute, hinted.step_time_s) == (best.plan, best.recompute, best.step_time_s)


def test_pinned_tensor_parallelism_may_span_nodes():
    """Tensor parallelism wider than a node is never chosen, only taken when pinned."""
    job = Job(GPT3, global_batch=512, tokens=1e9, recompute="full")
    cluster = Cluster(H100, NDR)
    assert search_plans(job, cluster, 256).plan.tp <= 8
    assert search_plans(job, cluster, 256, PlanConstraints(tp=16)).plan.tp == 16
