"""Time one GPU spends computing one layer for one micro-batch: a roofline sum.

``t = GEMM FLOPs / (peak x matmul_efficiency) + attention time + memory-bound bytes / (HBM x eff)``

* GEMMs (projections, MLP, logits) run at ``Gpu.matmul_efficiency`` of the dense peak of the
  training precision (the measured maximum achievable matmul rate over the datasheet peak),
  times :data:`~designer.perf.constants.FP8_GEMM_RELATIVE` for FP8.
* The attention core runs either in a fused FlashAttention kernel (compute-bound, causal half,
  backward 2.5x forward; FlashAttention-2-class kernels run at a lower rate on Hopper and later
  than kernels written for them) or, unfused, as batched GEMMs plus a memory-bound softmax/dropout
  path over the score matrix.
* Context parallelism on a stack whose ring attention merges in FP32 op by op
  (``Profile.ring_merge_fp32``) adds the HBM traffic of those merges and gradient sums to the
  attention core (:func:`ring_attention_bytes`).
* Element-wise kernels (layer norms, bias-dropout-add, GeLU/SwiGLU) are memory-bound; their
  traffic is counted per token and width. Their share falls as the hidden size grows, which is
  the known "small hidden size, lower efficiency" effect.

Backward costs twice the forward GEMMs (input and weight gradients). Recomputation adds a
second forward (full) or a second attention core (selective). On a stack whose selective
recomputation is torchtitan's per-op policy (``Profile.selective_ops``) it adds the element-wise
ops between the saved matmul outputs and every second matmul of the block
(:func:`op_sac_gemm_share`).
"""

from __future__ import annotations

__all__ = ["LayerTimes", "peak_rate", "gemm_rate", "gemm_forward_s", "layer_times", "logit_times",
           "optimizer_step_s", "op_sac_gemm_share", "ring_attention_bytes"]

import math
from dataclasses import dataclass

from designer.catalog.types import Gpu
from designer.errors import PerfError
from designer.perf import constants as K
from designer.perf.flops import attention_flops_per_token, gemm_flops_per_token, logit_flops_per_token
from designer.perf.types import Job, Plan, Precision, Recompute


@dataclass(frozen=True, slots=True)
class LayerTimes:
    """Seconds for one layer, one micro-batch, on one GPU."""

    fwd_s: float
    bwd_s: float
    recompute_s: float  # extra forward work in the backward pass
    gemm_fwd_s: float  # GEMM part of the forward: the window tensor-parallel overlap can use
    attn_fwd_s: float  # attention core forward: the window context-parallel exchanges can use

    def scaled(self, speed: float) -> LayerTimes:
        """Every time divided by ``speed`` (:class:`designer.perf.ModelEfficiency` ``compute``)."""
        if speed == 1.0:
            return self
        return LayerTimes(self.fwd_s / speed, self.bwd_s / speed, self.recompute_s / speed,
                          self.gemm_fwd_s / speed, self.attn_fwd_s / speed)


def peak_rate(gpu: Gpu, precision: Precision) -> float:
    """Dense datasheet peak FLOP/s of the training precision: the denominator of MFU.

    FP8 jobs on a GPU with FP8 tensor cores use the FP8 peak; BF16 and FP16 (and FP8 asked of a
    GPU without FP8, which the plan checks reject) use the 16-bit peak, which is the same for
    BF16 and FP16 on every GPU in the catalogs (NVIDIA and AMD datasheets).
    """
    if precision is Precision.FP8 and gpu.fp8_flops:
        return gpu.fp8_flops
    return gpu.bf16_flops


def gemm_rate(gpu: Gpu, precision: Precision) -> float:
    """Achievable dense GEMM FLOP/s: peak of the precision x ``Gpu.matmul_efficiency``.

    Raises:
        PerfError: FP8 asked of a GPU without FP8 tensor cores.
    """
    if precision is Precision.FP8:
        if not gpu.fp8_flops:
            raise PerfError(f"GPU {gpu.name} has no FP8 tensor cores; use bf16")
        return gpu.fp8_flops * gpu.matmul_efficiency * K.FP8_GEMM_RELATIVE * K.SUSTAINED_FRACTION
    return gpu.bf16_flops * gpu.matmul_efficiency * K.SUSTAINED_FRACTION


def _hbm_rate(gpu: Gpu) -> float:
    return gpu.hbm_Bps * K.HBM_EFFICIENCY * K.SUSTAINED_FRACTION


def _fused_attention_relative(job: Job, gpu: Gpu) -> float:
    """Fused attention rate over the GEMM rate: FlashAttention-2-class kernels fall to
    :data:`~designer.perf.constants.FA2_ON_HOPPER_RELATIVE` on Hopper and later GPUs, where the
    stack's kernel is not written for them (``Profile.hopper_attention``)."""
    if not job.software.profile.hopper_attention and gpu.scaleup_kind.lower() in K.HOPPER_SCALEUP_KINDS:
        return K.FA2_ON_HOPPER_RELATIVE
    return K.FUSED_ATTENTION_RELATIVE


def _gemm_operands(m, plan: Plan, moe_layer: bool) -> tuple[float, float, float, float]:
    """Per-GPU operand sizes of one layer's linear GEMMs.

    Returns (activation elements per token summed over the GEMMs' inputs and outputs,
    weight elements, forward FP8-cast elements per token, backward FP8-cast elements per token).
    """
    t = plan.tp
    e = t  # ranks each MLP's GEMMs are split over
    h, q, kv, v = m.hidden, m.q_dim, m.kv_dim, m.v_dim
    if moe_layer and m.moe is not None:
        routed = m.moe.top_k + m.moe.shared_experts
        f = m.expert_size
        local_experts = m.moe.experts / plan.ep + m.moe.shared_experts
        e = plan.expert_tp
    else:
        routed, f, local_experts = 1, m.ffn_size, 1
    f_in = (2 if m.gated_mlp else 1) * f
    attn_act = (h + (q + 2 * kv) / t) + (v / t + h)
    # With experts split over e < t ranks each GPU runs e/t of its TP group's tokens at width f/e.
    mlp_act = routed * e / t * ((h + f_in / e) + (f / e + h))
    attn_weights = m.attention_params() if m.mla is not None else h * (q + 2 * kv) + q * h
    weights = attn_weights / t + local_experts * (h * f_in + f * h) / e
    cast_fwd = h + v / t + routed * (h + f / t)
    cast_bwd = (q + 2 * kv) / t + h + routed * (f_in / t + h)
    return attn_act + mlp_act, weights, cast_fwd, cast_bwd


def _gemm_times(job: Job, plan: Plan, gpu: Gpu, moe_layer: bool) -> tuple[float, float, float]:
    """(math, forward operand streaming, backward operand streaming) seconds of one layer's
    linear GEMMs for one micro-batch: the GEMM terms of the roofline sum."""
    m = job.model
    tokens = plan.microbatch * m.seq_len / plan.cp
    hbm = _hbm_rate(gpu)
    math = gemm_flops_per_token(m, moe_layer) * tokens / plan.tp / gemm_rate(gpu, job.precision)
    act_elems, weight_elems, cast_fwd, cast_bwd = _gemm_operands(m, plan, moe_layer)
    # Operand streaming, additive to the math (roofline sum): forward reads X and W and writes
    # Y; backward reads dY, W, X and writes dX, and accumulates dW into the FP32 buffer.
    mem_f = (tokens * act_elems + weight_elems) * K.ACT_BYTES / hbm
    mem_b = (2.0 * tokens * act_elems * K.ACT_BYTES + weight_elems * K.WGRAD_BYTES) / hbm
    if job.precision is Precision.FP8:
        mem_f += tokens * cast_fwd * K.FP8_CAST_BYTES / hbm
        mem_b += tokens * cast_bwd * K.FP8_CAST_BYTES / hbm
    return math, mem_f, mem_b


def gemm_forward_s(job: Job, plan: Plan, gpu: Gpu, moe_layer: bool = False) -> float:
    """Forward seconds of one layer's linear GEMMs (projections and MLP) for one micro-batch on
    one GPU: ``FLOPs / gemm_rate + operand bytes / (HBM x eff)``, the GEMM terms of the roofline
    sum (and, for FP8, the cast-transpose traffic).

    Checked against GEMM times measured by shape (tests/perf/test_compute.py: microsoft/vidur's
    A100 and H100 profiles of Llama-2 70B).
    """
    math, mem_f, _ = _gemm_times(job, plan, gpu, moe_layer)
    return math + mem_f


def op_sac_gemm_share(m, moe_layer: bool = False) -> float:
    """Share of a layer's forward GEMM FLOPs that torchtitan's per-op selective checkpointing
    recomputes in the backward: every second matmul of the block in forward order.

    torchtitan's policy "saves output of all compute ops, except every second mm"
    (torchtitan/distributed/activation_checkpoint.py, ``_custom_policy``: a per-block counter of
    ``aten.mm`` calls, ``PREFER_RECOMPUTE`` when it is even). Its Llama block calls ``wq, wk, wv,
    wo`` then ``w1, w3, w2`` (gated; ``w1, w2`` plain), so ``wk``, ``wo`` and ``w3`` (plain:
    ``w2``) are recomputed; with latent attention ``wq_a, wq_b, wkv_a, wkv_b, wo`` (``wq, wkv_a,
    wkv_b, wo`` without a query latent). An MoE layer counts its attention, router and shared
    experts; its routed experts run as grouped matmuls, which the counter does not see (kept; an
    estimate).

    Examples:
        >>> from designer.perf.types import ModelArch
        >>> llama8b = ModelArch("llama3-8b", 32, 4096, 32, 8, 14336, 128256, 8192, gated_mlp=True)
        >>> round(op_sac_gemm_share(llama8b), 4)  # (wk + wo + w3) / all seven
        0.3654
    """
    h = m.hidden
    if m.mla is not None:
        a = m.mla
        kv_a = h * (a.kv_lora_rank + a.qk_rope_head_dim)
        kv_b = a.kv_lora_rank * m.heads * (a.qk_nope_head_dim + a.v_head_dim)
        if a.q_lora_rank:
            attn = [h * a.q_lora_rank, a.q_lora_rank * m.q_dim, kv_a, kv_b, m.v_dim * h]
        else:
            attn = [h * m.q_dim, kv_a, kv_b, m.v_dim * h]
    else:
        attn = [h * m.q_dim, h * m.kv_dim, h * m.kv_dim, m.q_dim * h]
    if moe_layer and m.moe is not None:
        f = m.expert_size * m.moe.shared_experts  # the shared experts run after the router, as dense mms
        shared = ([h * f, h * f, f * h] if m.gated_mlp else [h * f, f * h]) if f else []
        mms = attn + [h * m.moe.experts] + shared
        experts = m.mlp_matrices * h * m.expert_size * m.moe.top_k
    else:
        f = m.ffn_size
        mms = attn + ([h * f, h * f, f * h] if m.gated_mlp else [h * f, f * h])
        experts = 0
    total = float(sum(mms) + experts)
    return sum(mms[1::2]) / total if total > 0 else 0.0


def ring_attention_bytes(job: Job, plan: Plan) -> tuple[float, float]:
    """(forward, backward) HBM bytes of one layer's ring-attention bookkeeping for one micro-batch
    on one GPU: PyTorch's context parallelism as torch.distributed.tensor.experimental._attention
    (2024-12) runs it, load-balanced, with ``convert_to_f32``, one op per line. 0 without cp.

    With ``n = cp``, ``O`` the elements of the GPU's attention output (tokens x query width / tp)
    and ``KV`` those of its keys and values (repeated to every query head where the stack repeats
    them before the kernel, ``Profile.kv_repeat``), bytes read plus written:

    * forward, ``O (38 (n - 1) + 12) + 4 n KV``: each step's output cast to FP32 (read 2, write
      4) and merged with ``out - sigmoid(lse_i - lse) (out - out_i)`` (three FP32 ops, 32), the
      first cast and the final cast back (6 each); K and V copied contiguous and concatenated for
      the exchange at every step but the last (4 each). The rank whose every step uses its whole
      query (the last) is the slowest; a step on half the query (27) merges less.
    * backward, the larger of the ends ``r = n - 1`` and ``r = 0``:
      ``O (10 n + 10) + KV (25 n + 7)`` and ``O (13 n + 7) + KV (22 n + 10)``: FP32 zeroed
      accumulators (4), each step's BF16 block gradients added in FP32 (10), a half-size step's
      ``_partial_update`` adding into one chunk and concatenating the whole again (13), the FP32
      key and value gradients concatenated for their send at every step (8), K and V copied and
      concatenated as in the forward (4 each), the sums cast back to BF16 (6).

    At 256K tokens over cp = 8 (Llama 3.1 8B, 32K tokens a GPU) the forward moves 39.5 GB a layer,
    6 % of its attention core's time on an H100 with FlashAttention-2 (tests/perf/test_compute.py).
    """
    n = plan.cp
    if n <= 1 or not job.software.profile.ring_merge_fp32:
        return 0.0, 0.0
    m = job.model
    tokens = plan.microbatch * m.seq_len / n
    o = tokens * m.q_dim / plan.tp
    width = m.q_dim + m.v_dim if job.software.profile.kv_repeat and m.mla is None else 2 * m.kv_dim
    kv = tokens * width / plan.tp
    fwd = o * (38 * (n - 1) + 12) + 4 * n * kv
    bwd = max(o * (10 * n + 10) + kv * (25 * n + 7), o * (13 * n + 7) + kv * (22 * n + 10))
    return fwd, bwd


def layer_times(job: Job, plan: Plan, gpu: Gpu, moe_layer: bool = False) -> LayerTimes:
    """Forward, backward and recompute seconds of one layer for one micro-batch on one GPU.

    Args:
        job: model, precision, recomputation, attention kernel.
        plan: tp splits GEMMs, attention heads and (with sequence parallelism) element-wise
            work; cp splits the sequence; microbatch sets the tokens.
        gpu: peak rates, matmul efficiency, HBM bandwidth.
        moe_layer: time an MoE layer (routed and shared experts) instead of a dense one.

    Returns:
        :class:`LayerTimes`.
    """
    m = job.model
    t = plan.tp
    seq_local = m.seq_len / plan.cp
    tokens = plan.microbatch * seq_local
    rate16 = gemm_rate(gpu, Precision.BF16)
    hbm = _hbm_rate(gpu)

    gemm_f, gemm_mem_f, gemm_mem_b = _gemm_times(job, plan, gpu, moe_layer)

    attn_flops = attention_flops_per_token(m, m.seq_len) * tokens / t
    if job.fused_attention:
        fa_rate = rate16 * _fused_attention_relative(job, gpu)
        attn_f = K.CAUSAL_FRACTION * attn_flops / fa_rate
        attn_b = K.CAUSAL_FRACTION * K.FUSED_ATTENTION_BWD_FACTOR * attn_flops / fa_rate
    else:
        scores = plan.microbatch * (m.heads / t) * seq_local * m.seq_len
        fwd_b = K.SCORE_BYTES_FWD if job.dropout else K.SCORE_BYTES_FWD_NO_DROPOUT
        bwd_b = K.SCORE_BYTES_BWD if job.dropout else K.SCORE_BYTES_BWD_NO_DROPOUT
        attn_f = attn_flops / rate16 + scores * fwd_b / hbm
        attn_b = 2.0 * attn_flops / rate16 + scores * bwd_b / hbm
    merge_f, merge_b = ring_attention_bytes(job, plan)
    attn_f += merge_f / hbm
    attn_b += merge_b / hbm

    if moe_layer and m.moe is not None:
        f_width = m.expert_size * (m.moe.top_k + m.moe.shared_experts)
    else:
        f_width = m.ffn_size
    f_elems = (K.ELEMWISE_F_FWD_GATED if m.gated_mlp else K.ELEMWISE_F_FWD) * f_width / t
    h_split = t if (plan.sequence_parallel or t == 1) else 1
    h_elems = (K.ELEMWISE_H_FWD if job.dropout else K.ELEMWISE_H_FWD_NO_DROPOUT) * m.hidden / h_split
    if job.software.eager:
        # PyTorch eager modules: FP32 RMSNorm, complex RoPE, SwiGLU as silu and mul, each op its own
        # kernel through HBM (our count of torchtitan's Llama; torch.compile fuses them)
        h_elems += K.ELEMWISE_EAGER_H * m.hidden / h_split
        f_elems += K.ELEMWISE_EAGER_F * f_width / t
        h_elems += K.ELEMWISE_EAGER_QK * (m.q_dim + m.kv_dim) / t
    elem_f = tokens * K.ACT_BYTES * (h_elems + f_elems) / hbm
    elem_b = K.ELEMWISE_BWD_FACTOR * elem_f

    kernels = K.KERNELS_PER_LAYER_FWD_EAGER if job.software.eager else K.KERNELS_PER_LAYER_FWD
    launch = kernels * K.KERNEL_LAUNCH_S
    fwd = gemm_f + gemm_mem_f + attn_f + elem_f + launch
    bwd = 2.0 * gemm_f + gemm_mem_b + attn_b + elem_b + 2.0 * launch
    if job.recompute is Recompute.FULL:
        recompute = fwd
    elif job.recompute is Recompute.SELECTIVE and job.software.selective_policy == "every_other_matmul":
        # the element-wise ops between the saved matmul outputs and every second matmul
        recompute = elem_f + op_sac_gemm_share(m, moe_layer) * (gemm_f + gemm_mem_f)
    elif job.recompute is Recompute.SELECTIVE and job.software.selective_policy == "linear_outputs":
        recompute = elem_f  # every linear output kept: only the element-wise ops between them
    elif job.recompute is Recompute.SELECTIVE:
        recompute = attn_f
    else:
        recompute = 0.0
    return LayerTimes(fwd, bwd, recompute, gemm_f, attn_f)


def logit_times(job: Job, plan: Plan, gpu: Gpu) -> tuple[float, float]:
    """(forward, backward) seconds of the output layer and loss for one micro-batch.

    The vocabulary projection stays in 16-bit in FP8 recipes (Transformer Engine keeps the
    first and last layers in higher precision).
    """
    m = job.model
    tokens = plan.microbatch * m.seq_len / plan.cp
    flops = logit_flops_per_token(m) * tokens / plan.tp
    rate16 = gemm_rate(gpu, Precision.BF16)
    traffic = K.LOGIT_BYTES * tokens * m.vocab / plan.tp / _hbm_rate(gpu)
    return flops / rate16 + 0.5 * traffic, 2.0 * flops / rate16 + 0.5 * traffic


def optimizer_step_s(params_per_gpu: float, gpu: Gpu) -> float:
    """Adam update of ``params_per_gpu`` (already sharded) parameters: memory-bound.

    ``params * ADAM_TRAFFIC_BYTES / (HBM x efficiency)``.
    """
    if params_per_gpu <= 0 or math.isnan(params_per_gpu):
        return 0.0
    return params_per_gpu * K.ADAM_TRAFFIC_BYTES / _hbm_rate(gpu)
