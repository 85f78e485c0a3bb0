"""Per-GPU compute times: the work of a micro-batch is conserved however the plan splits it."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from designer.perf import Job, Plan, Precision, resolve_software
from designer.perf.compute import gemm_rate, layer_times, logit_times, peak_rate
from designer.perf.flops import gemm_flops_per_token

from .factories import A100, H100, LLAMA3_8B
from .strategies import models, recomputes, softwares

REL = 1e-9


@st.composite
def splits(draw):
    """A model and two (tp, cp, micro-batch) splits of it."""
    tp = draw(st.sampled_from([1, 2, 4, 8]))
    cp = draw(st.sampled_from([1, 2, 4, 8]))
    model = draw(models(tp, cp))
    sw = draw(softwares())
    job = Job(model, global_batch=64, tokens=1e9,
              precision=draw(st.sampled_from([Precision.BF16, Precision.FP8])),
              recompute=draw(st.sampled_from(recomputes(sw))), software=sw)
    mb = draw(st.sampled_from([1, 2, 4]))
    ep = model.moe.experts if model.moe is not None else 1
    a = Plan(tp=tp, pp=1, dp=ep, ep=ep, cp=cp, microbatch=mb)
    b = replace(a, tp=draw(st.sampled_from([t for t in (1, 2, 4, 8) if tp % t == 0])),
                cp=draw(st.sampled_from([c for c in (1, 2, 4, 8) if cp % c == 0])),
                microbatch=draw(st.sampled_from([1, 2, 4])))
    return job, a, b


@settings(max_examples=200, deadline=None)
@given(splits(), st.booleans())
def test_split_work_adds_up_to_the_same_micro_batch(case, moe_layer):
    """GEMM math, the attention core and the logits of a micro-batch are split evenly over the
    tp x cp GPUs that share it: time x tp x cp per sequence is the same for any split (a degree
    that divides twice, or not at all, breaks the equality)."""
    job, a, b = case
    gpu = H100
    # the ring attention's merges grow with cp (tested on their own below)
    job = replace(job, software=replace(job.software, profile=replace(job.software.profile, ring_merge_fp32=False)))

    def per_sequence(plan, t):
        return t * plan.tp * plan.cp / plan.microbatch

    la, lb = layer_times(job, a, gpu, moe_layer), layer_times(job, b, gpu, moe_layer)
    assert per_sequence(a, la.gemm_fwd_s) == pytest.approx(per_sequence(b, lb.gemm_fwd_s), rel=REL)
    assert per_sequence(a, la.attn_fwd_s) == pytest.approx(per_sequence(b, lb.attn_fwd_s), rel=REL)
    fa, ba = logit_times(job, a, gpu)
    fb, bb = logit_times(job, b, gpu)
    assert per_sequence(a, fa + ba) == pytest.approx(per_sequence(b, fb + bb), rel=REL)
    # and the GEMM math is the layer's FLOPs at the achievable rate of the precision
    m = job.model
    flops = gemm_flops_per_token(m, moe_layer) * a.microbatch * m.seq_len / (a.tp * a.cp)
    assert la.gemm_fwd_s == pytest.approx(flops / gemm_rate(gpu, job.precision), rel=REL)


def test_peak_rate_is_the_datasheet_peak_of_the_precision():
    # H100 SXM5 datasheet: 989 TFLOP/s BF16/FP16 dense, 1,979 FP8 dense; the A100 has no FP8.
    assert peak_rate(H100, Precision.BF16) == peak_rate(H100, Precision.FP16) == 989e12
    assert peak_rate(H100, Precision.FP8) == 1979e12
    assert peak_rate(A100, Precision.BF16) == 312e12
    # achievable GEMM rate: 794.5 TFLOP/s MAMF x the 0.926 sustained clock fraction
    assert gemm_rate(H100, Precision.BF16) == pytest.approx(794.5e12 * 0.926, rel=1e-6)
    assert layer_times(Job(LLAMA3_8B, 8, 1e9), Plan(tp=1, pp=1, dp=1), H100).fwd_s > 0


def test_torchtitan_selective_checkpointing_recomputes_every_second_matmul():
    """torchtitan's per-op policy saves every compute op's output "except every second mm": in a
    GPT block (q, k, v, o, fc1, fc2) that is k, o and fc2, 6 h^2 of the 12 h^2 weights; in a Llama 3
    8B block wk, wo and w3, (4096 x 1024 + 4096^2 + 4096 x 14336) / 218.1M. The backward pays them
    again with the element-wise ops, on top of what Megatron-Core's selective recomputation (the
    attention core) costs."""
    from designer.perf.compute import op_sac_gemm_share

    from .factories import GPT_1B

    assert op_sac_gemm_share(GPT_1B) == pytest.approx(0.5, rel=1e-12)
    h, kv, f = 4096, 1024, 14336
    assert op_sac_gemm_share(LLAMA3_8B) == pytest.approx((h * kv + h * h + h * f) / (2 * h * h + 2 * h * kv + 3 * h * f))
    plan = Plan(tp=1, pp=1, dp=8, microbatch=2)
    fsdp = Job(LLAMA3_8B, 64, 1e9, recompute="selective", software=resolve_software("fsdp2"))
    lt = layer_times(fsdp, plan, H100)
    base = layer_times(replace(fsdp, recompute="none"), plan, H100)
    # at least the recomputed matmuls' share of the forward GEMM math, at most the whole forward
    assert op_sac_gemm_share(LLAMA3_8B) * lt.gemm_fwd_s < lt.recompute_s < base.fwd_s - base.attn_fwd_s


# Forward GEMM times of one Llama-2 70B layer (QKV, output, gated MLP up and down projections,
# 16-bit) at 4,096 tokens by TP degree, measured in isolation by microsoft/vidur on an A100 80GB DGX
# and an H100 DGX: data/profiling/compute/{a100,h100}/meta-llama/Llama-2-70b-hf/mlp.csv (commit
# e26eb8f, 2024-05-14), the sum of the four GEMMs' medians, mean of the file's two profiled rows, ms.
VIDUR_LLAMA2_70B_4096_MS = {
    ("a100", 1): 29.426, ("a100", 2): 14.689, ("a100", 4): 7.263, ("a100", 8): 3.677,
    ("h100", 1): 10.163, ("h100", 2): 4.928, ("h100", 4): 2.377, ("h100", 8): 1.175,
}


@pytest.mark.parametrize(("gpu", "tp"), sorted(VIDUR_LLAMA2_70B_4096_MS))
def test_forward_gemms_are_near_gemm_times_measured_by_shape(gpu, tp):
    """The roofline sum's GEMM terms (the math at the measured maximum matmul rate plus the operand
    streaming) against GEMMs timed by shape. The measurements run at micro-benchmark clocks, so
    the model is taken at micro-benchmark rates (its time times SUSTAINED_FRACTION). Within 12 %:
    the sum is 3-7 % fast on A100 and from 4 % fast (TP1) to 11 % slow (TP8) on H100: the activation
    reads it charges each GEMM do not shrink with TP, while vidur's H100 runs the TP8 shapes as fast
    per FLOP as the TP1 ones. The math alone (a roofline max) is 6-13 % fast."""
    from designer.perf import constants as K
    from designer.perf.compute import gemm_forward_s
    from designer.perf.types import ModelArch

    llama2_70b = ModelArch("llama2-70b", 80, 8192, 64, 8, 28672, 32000, 4096, gated_mlp=True)
    device = {"a100": A100, "h100": H100}[gpu]
    job = Job(llama2_70b, 64, 1e9)
    modelled = gemm_forward_s(job, Plan(tp=tp, pp=1, dp=1), device) * K.SUSTAINED_FRACTION
    measured = VIDUR_LLAMA2_70B_4096_MS[(gpu, tp)] * 1e-3
    assert modelled == pytest.approx(measured, rel=0.12)
    math_only = gemm_flops_per_token(llama2_70b) * 4096 / tp / gemm_rate(device, Precision.BF16)
    assert math_only * K.SUSTAINED_FRACTION < 0.96 * measured


# Llama 3.1 8B at 256K tokens over CP8 (torchtitan's benchmark table, FSDP 1 CP 8): 32K tokens a GPU,
# an output of 32,768 x 4,096 elements, keys and values of 32,768 x 2 x 1,024 (or x 2 x 4,096 repeated).
_O, _KV = 32768 * 4096, 32768 * 2 * 1024


def _long_job(software):
    from designer.perf.types import ModelArch

    llama31_8b = ModelArch("llama3.1-8b", 32, 4096, 32, 8, 14336, 128256, 262144, gated_mlp=True)
    return Job(llama31_8b, 1, 1e9, recompute="full", software=software)


def test_ring_attention_bookkeeping_is_its_ops_traffic():
    """PyTorch's load-balanced ring attention (torch.distributed.tensor.experimental._attention):
    forward O (38 (n - 1) + 12) + 4 n KV bytes on the rank with every step whole, backward the larger
    of O (10 n + 10) + KV (25 n + 7) and O (13 n + 7) + KV (22 n + 10); none without cp or on a stack
    whose context parallelism is not PyTorch's."""
    from designer.perf.compute import ring_attention_bytes

    fsdp = resolve_software("fsdp2")
    plan = Plan(tp=1, pp=1, dp=1, cp=8)
    fwd, bwd = ring_attention_bytes(_long_job(fsdp), plan)
    assert fwd == 278 * _O + 32 * _KV == 39_460_012_032
    assert bwd == max(90 * _O + 207 * _KV, 111 * _O + 186 * _KV) == 111 * _O + 186 * _KV
    # repeat_kv (torchtitan) sends and sums 32 heads of K and V instead of 8
    rep = replace(fsdp, profile=replace(fsdp.profile, kv_repeat=True))
    assert ring_attention_bytes(_long_job(rep), plan)[0] == 278 * _O + 32 * 4 * _KV
    # tp splits the heads
    assert ring_attention_bytes(_long_job(fsdp), replace(plan, tp=2)) == pytest.approx((fwd / 2, bwd / 2))
    assert ring_attention_bytes(_long_job(fsdp), replace(plan, cp=1)) == (0.0, 0.0)
    assert ring_attention_bytes(_long_job(resolve_software("megatron-core")), plan) == (0.0, 0.0)


def test_ring_attention_bookkeeping_adds_6_percent_to_the_attention_core_at_256k_over_cp8():
    """The merges run at the HBM rate after each step's kernel: at 256K over CP8 on an H100 they add
    39.5 GB / (3.35 TB/s x 0.9 x 0.926) = 14.1 ms to a forward core of 7.0e13 causal FLOPs at the
    FlashAttention-2 rate on Hopper (794.5 x 0.43 x 0.926 TFLOP/s), 0.223 s: 6.3 %."""
    from designer.perf import constants as K

    fsdp = resolve_software("fsdp2")
    plan = Plan(tp=1, pp=1, dp=1, cp=8)
    job = _long_job(fsdp)
    with_merges = layer_times(job, plan, H100)
    without = layer_times(replace(job, software=replace(fsdp, profile=replace(fsdp.profile, ring_merge_fp32=False))),
                          plan, H100)
    hbm = H100.hbm_Bps * K.HBM_EFFICIENCY * K.SUSTAINED_FRACTION
    assert with_merges.attn_fwd_s - without.attn_fwd_s == pytest.approx(39_460_012_032 / hbm, rel=1e-12)
    assert with_merges.bwd_s - without.bwd_s == pytest.approx((111 * _O + 186 * _KV) / hbm, rel=1e-12)
    core = 0.5 * 4 * 32768 * 262144 * 4096 / (794.5e12 * K.FA2_ON_HOPPER_RELATIVE * K.SUSTAINED_FRACTION)
    assert without.attn_fwd_s == pytest.approx(core, rel=1e-12)
    assert (with_merges.attn_fwd_s - without.attn_fwd_s) / core == pytest.approx(0.0633, abs=5e-4)
