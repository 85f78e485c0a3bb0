"""Data-parallel traffic and its windows (designer.perf.dataparallel)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from designer.perf import Cluster, Job, Plan, estimate_step, resolve_software
from designer.perf import constants as K
from designer.perf import network as netm
from designer.perf.dataparallel import _chunked, dp_terms, interleaved_window, last_chunk_share
from designer.perf.memory import stage_params

from .factories import GPT3, H100, NDR


def test_interleaved_window_spans_the_other_chunks_rounds():
    """Without interleaving the window is the last (first) micro-batch's backward (forward); with v
    chunks in rounds of p micro-batches the first chunk's reduction runs beside the other v - 1
    chunks' rounds: p (v - 1) / v micro-batches, never more than the micro-batches there are."""
    assert interleaved_window(8, 1, 64) == 1.0
    assert interleaved_window(1, 4, 64) == 1.0
    assert interleaved_window(8, 12, 8) == pytest.approx(8 * 11 / 12)
    assert interleaved_window(8, 2, 64) == pytest.approx(4.0)
    assert interleaved_window(8, 4, 2) == pytest.approx(2 * 3 / 4)
    assert interleaved_window(2, 2, 64) == 1.0  # p (v - 1) / v = 1


def _mlperf_v31():
    # MLPerf Training v3.1, NVIDIA Eos (training_results_v3.1 config_DGXH100_1344x8x8x4x8_mbs1.sh):
    # GPT-3 175B, TP4 PP8 VP12, micro-batch 1, global batch 2,688, FP8, distributed optimizer.
    job = Job(GPT3, global_batch=2688, tokens=1e9, precision="fp8", recompute="none",
              software=resolve_software("megatron-core", tp_comm_overlap=True))
    return job, Plan(tp=4, pp=8, dp=336, microbatch=1, virtual_stages=12, zero=1), Cluster(H100, NDR)


def _bucketed(job: Job) -> Job:
    """The job on a stack that reduces bucket by bucket inside the last backward and prefetches
    every chunk's gather (no per-chunk sync)."""
    prof = replace(job.software.profile, chunk_grad_sync="never", unprefetched_chunks=1)
    return replace(job, software=replace(job.software, profile=prof))


def test_a_reduction_inside_its_window_costs_its_last_bucket_and_the_slowdown():
    """Once the window holds the whole reduction and gather, what stays exposed is the bucket that
    cannot overlap, (1 - e) C with e = 1 - bucket / parameters, and the compute slowdown s e C
    beside the rest (designer.perf.overlap): on the MLPerf v3.1 layout, 8 micro-batches in rounds of
    8 give each once-a-step collective 7.3 micro-batches of backward or forward to hide behind."""
    job, plan, cluster = _mlperf_v31()
    job = _bucketed(job)
    links = netm.links_for(cluster)
    params = stage_params(GPT3, plan)
    est = estimate_step(job, plan, cluster)
    micro = est.microbatches
    assert micro == 8
    layers = 12
    fwd = bwd = est.breakdown.compute_s / micro / layers  # any per-layer split works: the window is ample
    t = dp_terms(job, plan, links, params, layers, layers * fwd / 3, layers * bwd * 2 / 3, micro)
    bucket = max(40e6, 1e6 * plan.dp)
    e = 1.0 - bucket / params.total
    assert t.per_microbatch_exposed_s == 0.0
    assert t.step_exposed_s == pytest.approx((1.0 - e + K.OVERLAP_SLOWDOWN * e) * t.comm_s, rel=1e-9)
    # one micro-batch's window alone (plain 1F1B) would leave most of it exposed
    flat = dp_terms(job, Plan(tp=4, pp=8, dp=336, microbatch=1, virtual_stages=1, zero=1), links, params, layers,
                    layers * fwd / 3, layers * bwd * 2 / 3, micro)
    assert flat.step_exposed_s > 2.0 * t.step_exposed_s


def test_last_chunk_share_follows_the_stack_schedule():
    """Megatron-Core syncs per chunk only when interleaved; torch.distributed.pipelining after every
    stage's last backward; without pipeline stages nothing is late."""
    assert last_chunk_share("interleaved", 8, 12) == pytest.approx(1 / 12)
    assert last_chunk_share("interleaved", 8, 1) == 0.0
    assert last_chunk_share("always", 8, 1) == 1.0
    assert last_chunk_share("always", 8, 4) == 0.25
    assert last_chunk_share("never", 8, 12) == 0.0
    assert last_chunk_share("always", 1, 1) == 0.0


def test_megatron_core_interleaved_exposes_the_first_chunks_whole_reduction():
    """Megatron-Core's aligned grad sync launches chunk 0's reduction after the step's last backward
    (schedules.py, grad_sync_func), so on the MLPerf v3.1 layout (v = 12) its 1/12 of the stage's
    reduce-scatter is wholly exposed, the rest hides behind the other chunks' rounds at the cost
    of the slowdown; chunks 0 and 1 gather without prefetch, two buckets of the gather exposed."""
    job, plan, cluster = _mlperf_v31()
    links = netm.links_for(cluster)
    params = stage_params(GPT3, plan)
    est = estimate_step(job, plan, cluster)
    micro, layers = est.microbatches, 12
    fwd = bwd = est.breakdown.compute_s / micro / layers
    t = dp_terms(job, plan, links, params, layers, layers * fwd / 3, layers * bwd * 2 / 3, micro)
    bucket = max(40e6, 1e6 * plan.dp)
    group = netm.group_layout(plan.dp, plan.tp, links.gpus_per_node, plan.gpus)
    grad = _chunked(netm.reduce_scatter_s, params.dense * 2.0, bucket * 2.0, group, links, cross_leaf=True)
    gather = t.comm_s - grad
    s, v = K.OVERLAP_SLOWDOWN, plan.virtual_stages
    e2 = 1.0 - 2.0 * bucket / params.total
    want = grad / v + s * grad * (1 - 1 / v) + (1.0 - e2 + s * e2) * gather
    assert t.step_exposed_s == pytest.approx(want, rel=1e-9)
    # more than the bucketed schedule exposes
    old = dp_terms(_bucketed(job), plan, links, params, layers, layers * fwd / 3, layers * bwd * 2 / 3, micro)
    assert t.step_exposed_s > old.step_exposed_s
