"""Memory per GPU against Korthikanti et al. 2022 (Fig. 1) and the ZeRO partitioning."""

from __future__ import annotations

from dataclasses import replace

import pytest

from designer.perf import Cluster, Job, ModelArch, Plan, check_plan, resolve_software
from designer.perf.memory import layer_activation_bytes, memory_per_gpu, usable_hbm_bytes

from .factories import A100, GPT3, HDR

GIB = 2**30
# Korthikanti et al. 2022, Fig. 1, 22B model, tensor parallel 8, micro-batch 4, sequence 2048:
# activations 59.25 GiB without recomputation, 9.5625 GiB with sequence parallelism and
# selective recomputation; parameters and optimizer state 45.5625 GiB. Tolerances: the
# activation formula is the paper's (exact), the parameter count also includes embeddings,
# biases and layer norms, which the figure leaves out (~1.5 %).
ACTIVATION_TOL = 1e-3
STATE_TOL = 0.02

M22B = ModelArch("22b", 48, 6144, 64, None, None, 51200, 2048, biases=True,
                 learned_positions=True, tied_embeddings=True)


def _job(recompute, **kw):
    # Korthikanti et al. ran Megatron-LM of 2022: sequence parallelism and selective
    # recomputation, the unfused softmax path and GPT dropout.
    # recomputation, the unfused softmax path, GPT dropout and FP32 main gradients (18 bytes per
    # parameter, as the figure counts).
    base = resolve_software("megatron-core", attention="unfused", dropout=True)
    software = replace(base, profile=replace(base.profile, grad_bytes=4.0))
    return Job(M22B, global_batch=4, tokens=1e9, precision="fp16", recompute=recompute,
               software=software, **kw)


def test_korthikanti_activations_without_recompute():
    plan = Plan(tp=8, pp=1, dp=1, microbatch=4, zero=0, sequence_parallel=False)
    act = 48 * layer_activation_bytes(_job("none"), plan)
    assert act / GIB == pytest.approx(59.25, rel=ACTIVATION_TOL)


def test_korthikanti_activations_sequence_parallel_selective():
    plan = Plan(tp=8, pp=1, dp=1, microbatch=4, zero=0, sequence_parallel=True)
    act = 48 * layer_activation_bytes(_job("selective"), plan)
    assert act / GIB == pytest.approx(9.5625, rel=ACTIVATION_TOL)


def test_gqa_swiglu_activations_without_dropout():
    """Llama 3 405B (8 KV heads, SwiGLU of width 53,248, RMSNorm, no dropout, fused attention) at TP8
    with sequence parallelism: per layer and micro-batch ``s b h / t`` times 4 (the two norm
    inputs) + 4 (the QKV and first-MLP inputs) + 2 (Q) + 4 kv/h (K, V at the KV width) + 2 (the
    attention output) + 4 f/h (the gate and up outputs) + 2 f/h (the second MLP input) = 31.75
    bytes, where Korthikanti's 34 counts two dropout masks, full-width K and V and a 4h GeLU:
    0.533 GB at sequence 8,192. On the 8,192-GPU layout of the Llama 3 paper (Table 4: PP16 with
    one layer fewer on the first and last stages, 32 micro-batches) interleaving at v = 8 keeps
    141 such layer-micro-batches on the second stage."""
    m = ModelArch("llama3-405b", 126, 16384, 128, 8, 53248, 128256, 8192, gated_mlp=True)
    job = Job(m, global_batch=2048, tokens=1e9, precision="bf16", recompute="none",
              software=resolve_software("fsdp2"))
    plan = Plan(tp=8, pp=16, dp=64, microbatch=1, virtual_stages=8, zero=2, sequence_parallel=True)
    per_layer = layer_activation_bytes(job, plan)
    assert per_layer == pytest.approx(8192 * 16384 / 8 * 31.75)
    assert per_layer / 1e9 == pytest.approx(0.5327, rel=1e-3)
    mem = memory_per_gpu(job, plan, 32)
    assert mem.activations == pytest.approx(141 * per_layer)


def test_korthikanti_parameter_and_optimizer_state():
    plan = Plan(tp=8, pp=1, dp=1, microbatch=4, zero=0, sequence_parallel=True)
    mem = memory_per_gpu(_job("selective"), plan, 1)
    assert (mem.weights + mem.grads + mem.optimizer) / GIB == pytest.approx(45.5625, rel=STATE_TOL)


def test_zero_stages_shard_states():
    job = Job(GPT3, global_batch=1536, tokens=1e9, recompute="full")
    sizes = [memory_per_gpu(job, Plan(tp=8, pp=8, dp=8, zero=z), 192) for z in (0, 1, 2, 3)]
    assert sizes[0].optimizer == pytest.approx(8 * sizes[1].optimizer)
    assert sizes[1].grads == pytest.approx(8 * sizes[2].grads)
    assert sizes[2].weights == pytest.approx(8 * sizes[3].weights)
    assert [s.total for s in sizes] == sorted((s.total for s in sizes), reverse=True)


def test_full_recompute_keeps_only_layer_inputs():
    plan = Plan(tp=8, pp=8, dp=1, microbatch=1, sequence_parallel=True)
    none = memory_per_gpu(Job(GPT3, 64, 1e9, recompute="none"), plan, 64).activations
    full = memory_per_gpu(Job(GPT3, 64, 1e9, recompute="full"), plan, 64).activations
    assert full < none / 5


def test_pipeline_first_stage_holds_p_microbatches():
    job = Job(GPT3, 64, 1e9, recompute="selective")
    plan = Plan(tp=8, pp=8, dp=1)
    one = 96 // 8 * layer_activation_bytes(job, plan)  # one micro-batch of the first stage's layers
    many = memory_per_gpu(job, plan, 64).activations
    assert many / one == pytest.approx(8, rel=0.05)
    interleaved = memory_per_gpu(job, Plan(tp=8, pp=8, dp=1, virtual_stages=3), 64).activations
    assert interleaved / many == pytest.approx(1 + 7 / 24, rel=0.05)


def test_plan_that_does_not_fit_is_rejected_with_sizes():
    job = Job(GPT3, global_batch=64, tokens=1e9)
    reason = check_plan(job, Plan(tp=8, pp=1, dp=8, zero=0), Cluster(A100, HDR))
    assert reason is not None and "GB per GPU" in reason


def test_usable_memory_keeps_a_reserve():
    assert 0.85 * A100.hbm_bytes < usable_hbm_bytes(A100) < A100.hbm_bytes


def test_loss_holds_the_stacks_logit_bytes_on_the_last_stage():
    """The loss holds 6 bytes per logit under Megatron (16-bit logits and the FP32 copy its
    vocab-parallel cross entropy works on in place) and 10 under torchtitan (also log_softmax's
    FP32 output): on one stage the activations grow by exactly that many bytes per logit."""
    plan = Plan(tp=8, pp=1, dp=1, microbatch=2, zero=1, sequence_parallel=True)
    logits = 2 * 2048 * GPT3.vocab / 8
    for preset, per_logit in (("megatron-core", 6.0), ("fsdp2", 10.0)):
        job = Job(GPT3, 64, 1e9, recompute="none", software=resolve_software(preset))
        layers = GPT3.layers * layer_activation_bytes(job, plan)
        assert memory_per_gpu(job, plan, 32).activations - layers == pytest.approx(per_logit * logits)
