"""Step-time model: invariants, closed forms, plan checks, search."""

from __future__ import annotations

from dataclasses import replace

import pytest

from designer.errors import PerfError
from designer.perf import (
    Cluster,
    Job,
    Plan,
    PlanConstraints,
    check_plan,
    estimate_step,
    feasible_gpu_counts,
    resolve_software,
    search_plans,
)
from designer.perf import constants as K
from designer.perf.compute import gemm_rate
from designer.perf.flops import model_flops_per_token
from designer.perf.search import candidate_plans

from .factories import A100, B200, EFA, GPT3, GPT_1B, H100, H200, HDR, LLAMA3_70B, LLAMA3_8B, MIXTRAL, NDR

DESIGN_KEYS = {"name", "gpus", "tp", "pp", "dp", "step_time_s", "utilization", "mfu",
               "tflops_per_gpu", "tokens_per_s", "time_to_train_days", "breakdown"}
BREAKDOWN_KEYS = {"compute_s", "tp_comm_s", "pp_comm_s", "dp_comm_s", "ep_comm_s", "bubble_s",
                  "exposed_comm_s"}


def _sum(est):
    b = est.breakdown
    return b.compute_s + b.bubble_s + b.exposed_comm_s + b.host_s + b.optimizer_s + b.checkpoint_s


@pytest.mark.parametrize("plan", [
    Plan(tp=8, pp=8, dp=4),
    Plan(tp=8, pp=8, dp=16, microbatch=2, virtual_stages=3),
    Plan(tp=8, pp=1, dp=32, zero=3, sequence_parallel=False),
])
def test_step_is_the_sum_of_its_parts(plan, h100_cluster):
    job = Job(GPT3, global_batch=1024, tokens=300e9, recompute="selective")
    est = estimate_step(job, plan, h100_cluster)
    assert est.step_time_s == pytest.approx(_sum(est), rel=1e-12)
    assert 0.0 < est.utilization <= 1.0
    assert est.utilization == pytest.approx(est.breakdown.compute_s / est.step_time_s)
    assert est.tokens_per_s == pytest.approx(1024 * 2048 / est.step_time_s)
    assert est.time_to_train_s == pytest.approx(300e9 / est.tokens_per_s)


def test_bubble_fraction_matches_1f1b_formula(h100_cluster):
    """Narayanan et al. SC21 sec. 2.2: bubble = (p-1)/(v m) of the pipeline's busy time in plain
    1F1B (its sends waited for in every micro-batch, 2 (p - 1) of them in the fill and drain).
    Interleaved, Megatron-Core overlaps the steady state's sends (each costs only the compute
    slowdown) but the fill and drain wait for all 2 (p v - 1) of them: (p-1)/v micro-batch times
    without their sends, plus those sends whole (an op-by-op replay, tests/perf/test_pipeline.py)."""
    job = Job(GPT3, global_batch=32, tokens=1e9, recompute="selective")
    for v in (1, 2, 3):
        est = estimate_step(job, Plan(tp=8, pp=8, dp=1, microbatch=1, virtual_stages=v), h100_cluster)
        b = est.breakdown
        busy = est.step_time_s - b.bubble_s - b.optimizer_s
        if v == 1:
            assert b.bubble_s / busy == pytest.approx(7 / 32, rel=1e-9)
            continue
        pp_mb = b.pp_comm_s / 32  # 2 v sends a micro-batch
        send = pp_mb / (2 * v)
        chain = busy / 32 - K.OVERLAP_SLOWDOWN * pp_mb
        assert b.bubble_s == pytest.approx(7 / v * chain + 2 * (8 * v - 1) * send, rel=1e-9)
        assert b.bubble_s / busy > 7 / (v * 32)


def test_mfu_counts_model_flops_only(h100_cluster):
    plan = Plan(tp=8, pp=8, dp=4)
    sel = estimate_step(Job(GPT3, 1024, 1e9, recompute="selective"), plan, h100_cluster)
    full = estimate_step(Job(GPT3, 1024, 1e9, recompute="full"), plan, h100_cluster)
    assert full.step_time_s > sel.step_time_s
    assert full.mfu < sel.mfu
    assert full.mfu * full.step_time_s == pytest.approx(sel.mfu * sel.step_time_s)
    assert full.memory_bytes_per_gpu < sel.memory_bytes_per_gpu


def test_tensor_parallel_across_nodes_is_visibly_worse():
    # vTrain measured 20.4 s for TP16 (two nodes) against 9.6 s for TP8 on the same 256 A100s,
    # with Megatron-LM of 2021 (no asynchronous tensor-parallel reductions in the backward).
    job = Job(GPT3, global_batch=1024, tokens=1e9, recompute="full", software=resolve_software("megatron-lm-2021"))
    cluster = Cluster(A100, HDR)
    inside = estimate_step(job, Plan(tp=8, pp=8, dp=8, zero=0, sequence_parallel=False), cluster)
    across = estimate_step(job, Plan(tp=16, pp=4, dp=8, zero=0, sequence_parallel=False), cluster)
    assert across.breakdown.tp_comm_s > 2 * inside.breakdown.tp_comm_s
    assert across.step_time_s > 1.2 * inside.step_time_s


def test_fp8_is_faster_than_bf16_on_h100(h100_cluster):
    plan = Plan(tp=1, pp=1, dp=8)
    bf16 = estimate_step(Job(LLAMA3_8B, 128, 1e9, precision="bf16", recompute="full"), plan, h100_cluster)
    fp8 = estimate_step(Job(LLAMA3_8B, 128, 1e9, precision="fp8", recompute="full"), plan, h100_cluster)
    assert 1.2 < bf16.step_time_s / fp8.step_time_s < 2.0


def test_fp8_needs_fp8_hardware():
    job = Job(GPT_1B, 64, 1e9, precision="fp8")
    assert "FP8" in check_plan(job, Plan(tp=1, pp=1, dp=8), Cluster(A100, HDR))


@pytest.mark.parametrize("plan, fragment", [
    (Plan(tp=3, pp=1, dp=8), "attention heads"),
    (Plan(tp=1, pp=1, dp=7), "global batch"),
    (Plan(tp=1, pp=25, dp=1), "layers"),
    (Plan(tp=1, pp=1, dp=8, ep=2), "mixture-of-experts"),
    (Plan(tp=1, pp=1, dp=8, virtual_stages=2), "pipeline parallelism"),
    (Plan(tp=1, pp=1, dp=8, zero=4), "zero"),
])
def test_invalid_plans_say_why(plan, fragment, h100_cluster):
    job = Job(GPT_1B, 64, 1e9)
    reason = check_plan(job, plan, h100_cluster)
    assert reason is not None and fragment in reason
    with pytest.raises(PerfError, match=fragment):
        estimate_step(job, plan, h100_cluster)


def test_json_dict_has_the_design_keys(h100_cluster):
    est = estimate_step(Job(GPT_1B, 64, 1e10), Plan(tp=1, pp=1, dp=8), h100_cluster)
    out = est.to_json_dict("gpt")
    assert DESIGN_KEYS <= out.keys()
    assert BREAKDOWN_KEYS <= out["breakdown"].keys()
    assert out["time_to_train_days"] == pytest.approx(est.time_to_train_s / 86400)


def test_checkpoint_stall_is_amortised(h100_cluster):
    plan = Plan(tp=1, pp=1, dp=8)
    base = estimate_step(Job(GPT_1B, 64, 1e10), plan, h100_cluster)
    # 1.3B params x 14 bytes = 18 GB written at 1 GB/s by one node: 18 s every 600 s.
    job = Job(GPT_1B, 64, 1e10, checkpoint_interval_s=600.0, checkpoint_write_Bps_per_node=1e9)
    est = estimate_step(job, plan, h100_cluster)
    write_s = GPT_1B.params_total() * 14 / 1e9
    assert est.breakdown.checkpoint_s == pytest.approx(base.step_time_s * write_s / (600 - write_s))
    slow = replace(job, checkpoint_write_Bps_per_node=1e7)
    with pytest.raises(PerfError, match="checkpoint"):
        estimate_step(slow, plan, h100_cluster)


def test_in_network_reduction_cuts_data_parallel_time(h100_cluster):
    job = Job(GPT_1B, global_batch=1024, tokens=1e9,
              software=resolve_software(dp_overlap=False, in_network_reduction=True))
    plan = Plan(tp=1, pp=1, dp=1024, zero=0)
    plain = estimate_step(job, plan, h100_cluster)
    sharp = estimate_step(job, plan, Cluster(H100, replace(NDR, in_network_reduction=True)))
    assert sharp.breakdown.dp_comm_s < 0.8 * plain.breakdown.dp_comm_s
    assert sharp.step_time_s < plain.step_time_s


def test_in_network_reduction_needs_the_stack_to_enable_it(h100_cluster):
    """A SHARP fabric under NCCL's defaults (NCCL_COLLNET_ENABLE=0) reduces as a plain fabric does."""
    job = Job(GPT_1B, global_batch=1024, tokens=1e9, software=resolve_software(dp_overlap=False))
    plan = Plan(tp=1, pp=1, dp=1024, zero=0)
    plain = estimate_step(job, plan, h100_cluster)
    default = estimate_step(job, plan, Cluster(H100, replace(NDR, in_network_reduction=True)))
    assert default.breakdown.dp_comm_s == plain.breakdown.dp_comm_s
    assert default.step_time_s == plain.step_time_s


def test_expert_all_to_all_feels_the_fabric():
    job = Job(MIXTRAL, global_batch=256, tokens=1e9, recompute="full")
    plan = Plan(tp=1, pp=1, dp=64, ep=8, microbatch=1, zero=2)
    full = Cluster(H100, NDR)
    est = estimate_step(job, plan, Cluster(H100, replace(NDR, gpus_per_node=4)))
    assert est.breakdown.ep_comm_s > 0
    tapered = estimate_step(job, plan, Cluster(H100, replace(NDR, gpus_per_node=4, oversubscription=4.0)))
    rail_only = estimate_step(job, plan, Cluster(H100, replace(NDR, gpus_per_node=4, rail_only=True)))
    assert tapered.breakdown.ep_comm_s > est.breakdown.ep_comm_s
    assert rail_only.breakdown.ep_comm_s > est.breakdown.ep_comm_s
    inside = estimate_step(job, plan, full)  # ep=8 fits in one 8-GPU node: NVLink only
    assert inside.breakdown.ep_comm_s < est.breakdown.ep_comm_s


def test_overlap_hides_data_parallel_reduction(h100_cluster):
    plan = Plan(tp=2, pp=1, dp=64, zero=1)
    hidden = estimate_step(Job(LLAMA3_8B, 512, 1e9), plan, h100_cluster)
    exposed = estimate_step(Job(LLAMA3_8B, 512, 1e9, software=resolve_software(dp_overlap=False)), plan, h100_cluster)
    assert hidden.breakdown.dp_comm_s == pytest.approx(exposed.breakdown.dp_comm_s)
    assert hidden.breakdown.exposed_comm_s < exposed.breakdown.exposed_comm_s


@pytest.mark.parametrize("job, gpus", [
    (Job(GPT_1B, global_batch=64, tokens=1e10), 16),
    # Mixtral: plans differing only in ep time their expert layers differently (each GPU
    # streams experts / ep expert weights); the best here is expert-parallel.
    (Job(MIXTRAL, global_batch=256, tokens=1e10, recompute="full"), 128),
], ids=["gpt-1.3b", "mixtral"])
def test_search_finds_the_brute_force_optimum(job, gpus):
    cluster = Cluster(H100, NDR)
    best = search_plans(job, cluster, gpus)
    times = []
    for variant, group in candidate_plans(job, cluster, gpus):
        for plan in group:
            if check_plan(variant, plan, cluster) is None:
                times.append(estimate_step(variant, plan, cluster).step_time_s)
    assert best.step_time_s == pytest.approx(min(times), rel=1e-12)
    assert best.step_time_s == estimate_step(replace(job, recompute=best.recompute), best.plan, cluster).step_time_s
    assert best.gpus == gpus


def test_search_respects_pinned_parts(h100_cluster):
    job = Job(GPT3, global_batch=1024, tokens=1e9, recompute="selective")
    best = search_plans(job, h100_cluster, 512, PlanConstraints(tp=8, pp=8))
    assert (best.plan.tp, best.plan.pp, best.plan.dp) == (8, 8, 8)


def test_search_explains_when_nothing_fits(a100_cluster):
    job = Job(GPT3, global_batch=64, tokens=1e9)
    with pytest.raises(PerfError, match="GB"):
        search_plans(job, a100_cluster, 8)


def test_feasible_gpu_counts_screen_memory(a100_cluster):
    job = Job(GPT3, global_batch=1536, tokens=1e9, recompute="full")
    counts = feasible_gpu_counts(job, a100_cluster, [8, 16, 64, 256, 1024])
    assert 8 not in counts and 1024 in counts
    assert list(counts) == sorted(counts)


@pytest.mark.parametrize("gpu", [H200, B200], ids=lambda g: g.name)
def test_llama3_70b_on_8192_gpus_reads_against_its_own_peak(gpu):
    # 1,024 x 8-GPU EFA instances, global batch 2,048 sequences: on B200s the search reaches
    # about 930 model TFLOP/s per GPU, an MFU of about 0.41 of B200's 2,250 TFLOP/s, which would
    # read as 0.94 of an H200's 989 TFLOP/s peak: the MFU must go with its GPU.
    job = Job(LLAMA3_70B, global_batch=2048, tokens=15e12, recompute="selective")
    cluster = Cluster(gpu, replace(EFA, scaleup_Bps=gpu.scaleup_Bps))
    est = search_plans(job, cluster, 8192)
    assert est.gpus == est.plan.gpus == 8192
    assert est.peak_flops == gpu.bf16_flops
    assert est.mfu == pytest.approx(est.tflops_per_gpu * 1e12 / gpu.bf16_flops, rel=1e-12)
    assert est.tflops_per_gpu * 1e12 < gemm_rate(gpu, job.precision)
    model_flops = model_flops_per_token(LLAMA3_70B) * 2048 * 8192
    assert est.tflops_per_gpu * 1e12 * 8192 * est.step_time_s == pytest.approx(model_flops, rel=1e-12)
    if gpu is B200:
        assert est.tflops_per_gpu > 0.8 * H200.bf16_flops / 1e12
        assert 0.35 < est.mfu < 0.50
