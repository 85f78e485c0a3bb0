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
