"""The least GPU time per token (designer.optimize.compute_floor) is below every plan's and above the MFU = 1 floor."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from designer.optimize.compute_floor import seconds_per_token
from designer.perf import Cluster, Job, ModelEfficiency, Precision, estimate_step, search_plans
from designer.perf.compute import gemm_rate, peak_rate
from designer.perf.flops import model_flops_per_token
from tests.perf.factories import H100, LLAMA3_8B, LLAMA3_70B, MIXTRAL, NDR
from tests.perf.strategies import cases


@settings(max_examples=150, deadline=None)
@given(cases(), st.sampled_from([0.5, 1.0, 1.5]))
def test_no_plan_spends_less_gpu_time_per_token(case, speed):
    # GPU-seconds of the whole run (the plan's GPUs x its time to train) against the floor.
    cluster = replace(case.cluster, efficiency=ModelEfficiency(compute=speed))
    est = estimate_step(case.job, case.plan, cluster)
    floor = case.job.tokens * seconds_per_token(case.job, cluster.gpu, speed)
    assert case.plan.gpus * est.time_to_train_s >= floor * (1 - 1e-12)


@pytest.mark.parametrize("model, gpus", [(LLAMA3_8B, 64), (LLAMA3_70B, 512), (MIXTRAL, 128)])
def test_the_fastest_plan_is_within_half_again_of_the_floor(model, gpus):
    job = Job(model, global_batch=1024, tokens=1e12)
    est = search_plans(job, Cluster(H100, NDR), gpus)
    spent = gpus * est.time_to_train_s
    floor = job.tokens * seconds_per_token(job, H100)
    # Below the fastest plan, and far above the model FLOPs at the datasheet peak.
    assert floor <= spent < 1.5 * floor
    assert floor > 1.2 * job.tokens * model_flops_per_token(model) / peak_rate(H100, Precision.BF16)


def test_closed_form_of_llama3_8b_in_bf16():
    # 32 layers: QKV + output 2h(q + 2kv) + 2qh, SwiGLU 6hf; causal fused attention 1.75 x 2s(q+v);
    # logits 2hV; forward + 2x backward at the achievable GEMM rate.
    h, q, kv, f, s, vocab, layers = 4096, 4096, 1024, 14336, 8192, 128256, 32
    gemm = 2 * h * (q + 2 * kv) + 2 * q * h + 6 * h * f
    attention = 2 * s * (q + q)
    rate = gemm_rate(H100, Precision.BF16)
    expected = (3 * layers * gemm + 1.75 * layers * attention + 3 * 2 * h * vocab) / rate
    job = Job(LLAMA3_8B, global_batch=1024, tokens=1e12)
    assert seconds_per_token(job, H100) == pytest.approx(expected, rel=1e-12)
    assert seconds_per_token(job, H100, 2.0) == pytest.approx(expected / 2, rel=1e-12)


def test_fp8_on_a_gpu_without_it_has_no_floor():
    from tests.perf.factories import A100
    job = Job(LLAMA3_8B, global_batch=1024, tokens=1e12, precision=Precision.FP8)
    assert seconds_per_token(job, A100) == 0.0
