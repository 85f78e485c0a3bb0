"""Memory one GPU needs: weights, gradients, optimizer state, activations, buffers.

Model states (Rajbhandari et al. 2020, "ZeRO"): 16-bit weights (2 bytes/param), FP32 main
gradients (4), Adam FP32 master weight and two moments (12); Megatron's 18 bytes/param is
confirmed by Korthikanti et al. 2022, Fig. 1. ZeRO stage 1 (distributed optimizer) shards the
optimizer state over the data-parallel group, stage 2 also the gradients, stage 3 also the
weights.

Activations (Korthikanti et al. 2022, sec. 4): per layer and micro-batch, in bytes,
``s b h (34 + 5 a s / h)`` for a GPT without parallelism, of which ``s b h (10 + 24/t + 5 a s /
(h t))`` remain per GPU with tensor parallelism and ``s b h / t (34 + 5 a s / h)`` with sequence
parallelism. Selective recomputation (or a fused attention kernel) drops the ``5 a s / h``
score term; full recomputation keeps only each layer's input, ``2 s b h`` (``/t`` with sequence
parallelism), plus one layer being recomputed. The terms are generalised here to
grouped-query attention, any MLP width, gated MLPs and experts. With 1F1B the first stage holds
``p`` micro-batches in flight, ``(1 + (p-1)/(p v))`` times more with ``v`` interleaved stages.
"""

from __future__ import annotations

__all__ = ["StageParams", "MemoryBreakdown", "stage_params", "layer_activation_bytes",
           "memory_per_gpu", "usable_hbm_bytes"]

import functools
import math
from dataclasses import dataclass

from designer.catalog.types import Gpu
from designer.perf import constants as K
from designer.perf.types import Job, ModelArch, Plan, Precision, Recompute


@dataclass(frozen=True, slots=True)
class StageParams:
    """Parameters one GPU of the heaviest pipeline stage holds (before ZeRO sharding)."""

    dense: float  # replicated over the data-parallel group (x cp)
    expert: float  # replicated over the expert-data-parallel group
    layer: float  # one layer's parameters on this GPU (ZeRO-3 gather buffer)

    @property
    def total(self) -> float:
        """All parameters on the GPU."""
        return self.dense + self.expert


@dataclass(frozen=True, slots=True)
class MemoryBreakdown:
    """Bytes per GPU by use."""

    weights: float
    grads: float
    optimizer: float
    activations: float
    buffers: float

    @property
    def total(self) -> float:
        """Bytes in all."""
        return self.weights + self.grads + self.optimizer + self.activations + self.buffers


@functools.lru_cache(maxsize=1 << 16)  # plan searches ask for the same (model, plan) many times
def stage_params(model: ModelArch, plan: Plan) -> StageParams:
    """Parameters per GPU on the heaviest stage: ``ceil(l/p)`` layers plus an embedding table.

    Non-expert weights are split over tp; expert weights over tp x ep. The first and last
    stages each hold a vocabulary table (both on a single stage, once if tied).
    """
    layers_stage = math.ceil(model.layers / plan.pp)
    moe_frac = model.moe_layer_count / model.layers
    per_layer = model.attention_params() + model.norm_params()
    dense = layers_stage * (per_layer + (1.0 - moe_frac) * model.dense_mlp_params())
    expert = 0.0
    if model.moe is not None:
        moe = model.moe
        routed = moe.experts * model.expert_params()
        shared = moe.shared_experts * model.expert_params() + model.hidden * moe.experts
        dense += layers_stage * moe_frac * shared
        expert = layers_stage * moe_frac * routed
    tables = 1 if (plan.pp > 1 or model.tied_embeddings) else 2
    dense += tables * model.vocab * model.hidden
    scale = 1.0
    if model.params is not None:
        derived = model.derived_params()[0]  # scale to the published total
        scale = model.params / derived
    layer = per_layer + model.dense_mlp_params()
    if model.moe is not None:
        layer = per_layer + (model.moe.experts * model.expert_params()) / plan.ep
    return StageParams(
        dense=scale * dense / plan.tp,
        expert=scale * expert / (plan.tp * plan.ep),
        layer=scale * layer / plan.tp,
    )


def layer_activation_bytes(job: Job, plan: Plan, moe_layer: bool = False) -> float:
    """Activation bytes one layer keeps for backward, per micro-batch, per GPU (no recompute).

    Korthikanti et al. 2022, eq. 1-2, generalised (see the module docstring).
    """
    m = job.model
    t = plan.tp
    s = m.seq_len / plan.cp
    sb = s * plan.microbatch
    h, q, kv = m.hidden, m.q_dim, m.kv_dim
    if moe_layer and m.moe is not None:
        f = m.expert_size * (m.moe.top_k + m.moe.shared_experts)
    else:
        f = m.ffn_size
    f_in = 2 * f if m.gated_mlp else f
    # GEMM inputs kept for the weight gradients; FP8 recipes keep them cast to 1 byte
    # (Transformer Engine saves the FP8 copy it fed to the GEMM).
    g = 1.0 if job.precision is Precision.FP8 else K.ACT_BYTES
    # Replicated across tensor-parallel ranks unless sequence parallel: the two layer-norm
    # inputs, the two dropout masks (if any), the QKV and first-MLP inputs (10 s b h for a GPT).
    masks = 2 * h if job.dropout else 0
    replicated = sb * (4 * h + masks + g * h + g * h)
    split = sb * (2 * q + 4 * kv + g * q) + sb * (2 * f_in + g * f)
    if not job.fused_attention and job.recompute is Recompute.NONE:
        # softmax output (2 bytes), with dropout also its mask (1) and output (2)
        split += (5.0 if job.dropout else 2.0) * plan.microbatch * m.heads * s * m.seq_len
    if plan.sequence_parallel or t == 1:
        return (replicated + split) / t
    return replicated + split / t


def _inflight(plan: Plan, microbatches: int) -> float:
    if plan.pp == 1:
        return 1.0
    n = min(microbatches, plan.pp)
    if plan.virtual_stages > 1:
        return n * (1.0 + (plan.pp - 1) / (plan.pp * plan.virtual_stages))
    return float(n)


@functools.lru_cache(maxsize=1 << 16)
def memory_per_gpu(job: Job, plan: Plan, microbatches: int) -> MemoryBreakdown:
    """Bytes per GPU on the heaviest stage for ``microbatches`` micro-batches per step."""
    m = job.model
    params = stage_params(m, plan)
    shard_dense = plan.dp * plan.cp
    shard_expert = max(1, shard_dense // plan.ep)
    z = plan.zero

    def sharded(bytes_per_param: float, on: bool) -> float:
        if not on:
            return params.total * bytes_per_param
        return (params.dense / shard_dense + params.expert / shard_expert) * bytes_per_param

    weights = sharded(K.WEIGHT_BYTES, z >= 3)
    grads = sharded(K.GRAD_BYTES if job.fp32_grads else K.WEIGHT_BYTES, z >= 2)
    optimizer = sharded(K.OPTIMIZER_BYTES, z >= 1)

    layers_stage = math.ceil(m.layers / plan.pp)
    moe_frac = m.moe_layer_count / m.layers
    per_layer = (1.0 - moe_frac) * layer_activation_bytes(job, plan, False)
    if moe_frac:
        per_layer += moe_frac * layer_activation_bytes(job, plan, True)
    if job.recompute is Recompute.FULL:
        split = plan.tp if plan.sequence_parallel else 1
        kept = K.ACT_BYTES * plan.microbatch * m.seq_len / plan.cp * m.hidden / split
        first = layers_stage * kept * _inflight(plan, microbatches) + per_layer
        last = layers_stage * kept + per_layer
    else:
        first = layers_stage * per_layer * _inflight(plan, microbatches)
        last = layers_stage * per_layer
    # FP32 logits for the loss on the last stage (Korthikanti et al., sec. 4.3).
    logits = 4.0 * plan.microbatch * m.seq_len / plan.cp * m.vocab / plan.tp
    activations = first if plan.pp > 1 else first + logits
    if plan.pp > 1:
        activations = max(first, last + logits)
    buffers = 2.0 * params.layer * K.WEIGHT_BYTES if z >= 3 else 0.0
    return MemoryBreakdown(weights, grads, optimizer, activations, buffers)


def usable_hbm_bytes(gpu: Gpu) -> float:
    """HBM available to training: capacity less a fractional and a fixed reserve."""
    return gpu.hbm_bytes * (1.0 - K.MEMORY_RESERVE_FRACTION) - K.MEMORY_RESERVE_BYTES
