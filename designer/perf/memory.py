"""Memory one GPU needs: weights, gradients, optimizer state, activations, buffers.

Model states (Rajbhandari et al. 2020, "ZeRO"): bytes per parameter of weights, gradients and
optimizer state come from the software stack (:mod:`designer.perf.software`; Megatron's 18
bytes/param is confirmed by Korthikanti et al. 2022, Fig. 1). ZeRO stage 1 (distributed
optimizer) shards the optimizer state over the data-parallel group, stage 2 also the gradients,
stage 3 also the weights (plus two layers of gathered 16-bit weights).

Activations (Korthikanti et al. 2022, sec. 4): per layer and micro-batch, in bytes,
``s b h (34 + 5 a s / h)`` for a GPT without parallelism, of which ``s b h (10 + 24/t + 5 a s /
(h t))`` remain per GPU with tensor parallelism and ``s b h / t (34 + 5 a s / h)`` with sequence
parallelism. Selective recomputation (or a fused attention kernel) drops the ``5 a s / h``
score term (torchtitan's per-op policy keeps only what it saves, :func:`op_sac_layer_bytes`); full recomputation keeps only each layer's input, ``2 s b h`` (``/t`` with sequence
parallelism), plus one layer being recomputed. The terms are generalised here to
grouped-query and latent attention, any MLP width, gated MLPs and experts.

Per pipeline stage: the first stage holds the embedding table and the most micro-batches in
flight, a middle stage fewer, the last stage one (plus the output table and the logits its loss holds);
the stages may hold different layer counts (:mod:`designer.perf.pipeline`), a short first or last
stage in fewer chunks' worth (:func:`designer.perf.pipeline.held_layers`). The plan needs the
largest of them.
"""

from __future__ import annotations

__all__ = ["StageParams", "MemoryBreakdown", "stage_params", "layer_activation_bytes", "op_sac_layer_bytes",
           "memory_per_gpu", "usable_hbm_bytes"]

import functools
from dataclasses import dataclass, replace

from designer.catalog.types import Gpu
from designer.perf import constants as K
from designer.perf.pipeline import held_layers, inflight, stage_layout
from designer.perf.types import Job, ModelArch, Plan, Precision, Recompute


@dataclass(frozen=True, slots=True)
class StageParams:
    """Parameters one GPU of a pipeline stage holds (before ZeRO sharding)."""

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
        """All bytes."""
        return self.weights + self.grads + self.optimizer + self.activations + self.buffers


@functools.lru_cache(maxsize=256)
def _sizes(model: ModelArch) -> tuple[float, float, float, float, float, float]:
    """Per-layer parameter counts of a model (attention + norms, dense MLP, shared experts and
    router, routed experts), the MoE layers' share and the scale to a published total."""
    moe_frac = model.moe_layer_count / model.layers
    per_layer = model.attention_params() + model.norm_params()
    shared = routed = 0.0
    if model.moe is not None:
        routed = model.moe.experts * model.expert_params()
        shared = model.moe.shared_experts * model.expert_params() + model.hidden * model.moe.experts
    scale = 1.0
    if model.params is not None:
        scale = model.params / model.derived_params()[0]  # scale to the published total
    return per_layer, model.dense_mlp_params(), shared, routed, moe_frac, scale


def _params_on(model: ModelArch, tp: int, ep: int, layers: int, tables: int, etp: int | None = None) -> StageParams:
    per_layer, mlp, shared, routed, moe_frac, scale = _sizes(model)
    etp = tp if etp is None else etp
    dense = layers * (per_layer + (1.0 - moe_frac) * mlp + moe_frac * shared) + tables * model.vocab * model.hidden
    expert = layers * moe_frac * routed
    if model.moe is not None:
        layer = per_layer / tp + routed / (ep * etp)
    else:
        layer = (per_layer + mlp) / tp
    return StageParams(dense=scale * dense / tp, expert=scale * expert / (etp * ep), layer=scale * layer)


@functools.lru_cache(maxsize=1 << 14)
def _stages(model: ModelArch, tp: int, pp: int, ep: int, first: int | None,
            last: int | None, etp: int | None = None) -> tuple[tuple[int, int, StageParams], ...]:
    """(rank, layers, parameters) of the stages that bound memory: first, second, last."""
    if pp == 1:
        tables = 1 if model.tied_embeddings else 2
        layers = model.layers + model.mtp_layers
        return ((0, layers, _params_on(model, tp, ep, layers, tables, etp)),)
    layout = stage_layout(model.layers, pp, first, last)
    if isinstance(layout, str):  # callers check the structure first; fall back to an even split
        layout = stage_layout(model.layers, pp, None, None)
    assert not isinstance(layout, str)
    out = [(0, layout.first, _params_on(model, tp, ep, layout.first, 1, etp))]
    if pp > 2:
        out.append((1, layout.middle, _params_on(model, tp, ep, layout.middle, 0, etp)))
    # the multi-token-prediction layers sit on the last stage (counted as the model's average layer)
    mtp = model.mtp_layers
    out.append((pp - 1, layout.last + mtp, _params_on(model, tp, ep, layout.last + mtp, 1, etp)))
    return tuple(out)


def _stages_of(model: ModelArch, plan: Plan) -> tuple[tuple[int, int, StageParams], ...]:
    etp = None if plan.expert_tp == plan.tp else plan.expert_tp
    return _stages(model, plan.tp, plan.pp, plan.ep, plan.first_stage_layers, plan.last_stage_layers, etp)


def stage_params(model: ModelArch, plan: Plan) -> StageParams:
    """Parameters per GPU on the stage that holds the most (layers plus its vocabulary table).

    Non-expert weights are split over tp; expert weights over etp x ep (etp = tp unless the
    experts are folded, :class:`~designer.perf.types.Plan`). The first and last
    stages each hold a vocabulary table (both on a single stage, once if tied).
    """
    return max((p for _, _, p in _stages_of(model, plan)), key=lambda p: p.total)


def op_sac_layer_bytes(job: Job, plan: Plan) -> float:
    """Bytes one dense layer keeps for backward under torchtitan's per-op selective checkpointing
    (``checkpoint_saves: every_other_matmul``), per micro-batch, per GPU.

    The policy saves the outputs of the ops on its save list (``aten.mm``, SDPA, the TP
    ``reduce_scatter_tensor``) except every second ``aten.mm`` of the block, and the checkpoint keeps
    the layer's input; everything else is recomputed in the backward (torchtitan 9dec370
    parallelize_llama.py, ``_save_list`` and ``_custom_policy``: the counter is incremented before the
    test, so the 2nd, 4th, ... matmul is recomputed). Per token, 16-bit: the input ``h`` (``/ t`` with
    sequence parallelism); the odd matmul outputs in forward order, ``wq, wk, wv, wo, w1, w3, w2``
    keeping ``wq, wv, w1, w2`` (plain MLP ``wq, wk, wv, wo, w1, w2``: ``wq, wv, w1``), a column-parallel
    output split over ``t``, a row-parallel one the full-width partial sum; SDPA's output ``q / t``
    and its FP32 log-sum-exp (``4 heads / t`` bytes); with sequence parallelism the two reduce-scatter
    outputs, ``h / t`` each. The Float8 amax ops on the list (``abs``, ``max``) are left out, an
    estimate: torchtitan's Float8 runs log no more memory than its BF16 ones.

    Examples:
        >>> from designer.perf import Job, Plan, resolve_software
        >>> from designer.perf.types import ModelArch
        >>> llama8b = ModelArch("llama3-8b", 32, 4096, 32, 8, 14336, 128256, 8192, gated_mlp=True)
        >>> job = Job(llama8b, 8, 1e9, recompute="selective", software=resolve_software("torchtitan"))
        >>> op_sac_layer_bytes(job, Plan(tp=1, pp=1, dp=8, microbatch=1, zero=3)) / 8192
        63616.0
    """
    m = job.model
    t = plan.tp
    sb = m.seq_len / plan.cp * plan.microbatch
    a = K.ACT_BYTES
    sp = plan.sequence_parallel or t == 1
    h, q, kv = m.hidden, m.q_dim, m.kv_dim
    # (output width, row-parallel) of each matmul of the block, in forward order
    mms = [(q, False), (kv, False), (kv, False), (h, True)]
    mms += [(m.ffn_size, False), (m.ffn_size, False), (h, True)] if m.gated_mlp else [(m.ffn_size, False), (h, True)]
    saved_mm = sum(a * w if row else a * w / t for w, row in mms[0::2])
    per_token = a * h / (t if sp else 1) + saved_mm + a * q / t + 4.0 * m.heads / t
    if plan.sequence_parallel and t > 1:
        per_token += 2 * a * h / t  # the reduce-scatter outputs of wo and w2
    return sb * per_token


def layer_activation_bytes(job: Job, plan: Plan, moe_layer: bool = False) -> float:
    """Activation bytes one layer keeps for backward, per micro-batch, per GPU (no recompute).

    Korthikanti et al. 2022, eq. 1-2, generalised (see the module docstring).
    """
    m = job.model
    t = plan.tp
    s = m.seq_len / plan.cp
    sb = s * plan.microbatch
    h, q, kv, v = m.hidden, m.q_dim, m.kv_dim, m.v_dim
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
    prof = job.software.profile
    masks = 2 * h if job.dropout else 0
    replicated = sb * (4 * h + masks + g * h + g * h)
    # the element-wise ops recomputed: torchtitan's per-op policy and LLaMA's (software.checkpoint_saves)
    selective_ops = job.recompute is Recompute.SELECTIVE and job.software.selective_policy != "all_but_attention_core"
    if (selective_ops and job.software.selective_policy == "every_other_matmul" and m.mla is None
            and not (moe_layer and m.moe is not None)):
        # what torchtitan's policy saves (latent attention and routed experts: the count below, an estimate)
        return op_sac_layer_bytes(job, plan)
    # K and V saved for the attention's backward; a stack that repeats grouped K and V to every
    # query head before the kernel saves the repeated copies (heads x head size each). Selective
    # recomputation of the element-wise ops recomputes the repeat too.
    kv_saved = 2 * q + 2 * v if prof.kv_repeat and m.mla is None and not selective_ops else 4 * kv
    split = sb * (2 * q + kv_saved + g * v) + sb * (2 * f_in + g * f)
    gathered = 0.0
    if selective_ops:
        # the norm outputs (the QKV and first-MLP inputs) and the activation are recomputed
        replicated -= sb * 2 * g * h
        split -= sb * g * f
    elif prof.tp_saves_gathered and plan.sequence_parallel and t > 1:
        # the QKV and first-MLP inputs kept as all-gathered for the weight gradients, not as shards
        gathered = sb * 2 * g * h
    if m.mla is not None:
        # the latent inputs of the up-projections
        split += sb * g * (m.mla.q_lora_rank + m.mla.kv_lora_rank) * t
    if not job.fused_attention and job.recompute is Recompute.NONE:
        # softmax output (2 bytes), with dropout also its mask (1) and output (2)
        split += (5.0 if job.dropout else 2.0) * plan.microbatch * m.heads * s * m.seq_len
    if plan.sequence_parallel or t == 1:
        return (replicated - gathered) / t + gathered + split / t
    return replicated + split / t


@functools.lru_cache(maxsize=1 << 16)
def memory_per_gpu(job: Job, plan: Plan, microbatches: int) -> MemoryBreakdown:
    """Bytes per GPU on the pipeline stage that needs the most, for ``microbatches`` per step."""
    m = job.model
    prof = job.software.profile
    shard_dense = plan.dp * plan.cp
    shard_expert = plan.expert_dp
    z = plan.zero
    moe_frac = m.moe_layer_count / m.layers
    per_layer = (1.0 - moe_frac) * layer_activation_bytes(job, plan, False)
    if moe_frac:
        per_layer += moe_frac * layer_activation_bytes(job, plan, True)
    split = plan.tp if plan.sequence_parallel else 1
    kept = K.ACT_BYTES * plan.microbatch * m.seq_len / plan.cp * m.hidden / split
    # The loss's logits (Korthikanti et al. sec. 4.3 count only their FP32 copy): every byte the
    # stack's loss holds at once, at the end of the last stage's forward, where all its
    # activations are still held
    loss_bytes = prof.tp_loss_bytes if plan.tp > 1 and prof.tp_loss_bytes is not None else prof.loss_bytes
    logits = loss_bytes * plan.microbatch * m.seq_len / plan.cp * m.vocab / plan.tp * (1 + m.mtp_layers)
    wb, gb, ob = prof.weight_bytes, prof.grad_bytes, prof.optimizer_bytes
    full = job.recompute is Recompute.FULL
    # torchtitan's per-op policy rebuilds, in one layer's backward, what that layer did not save
    recomputing = 0.0
    if job.recompute is Recompute.SELECTIVE and job.software.selective_policy == "every_other_matmul":
        whole = replace(job, recompute=Recompute.NONE)
        recomputing = max(0.0, (1.0 - moe_frac) * layer_activation_bytes(whole, plan, False)
                          + moe_frac * layer_activation_bytes(whole, plan, True) - per_layer)
    best = None
    best_total = -1.0
    stages = _stages_of(m, plan)
    middle = max(layers for _, layers, _ in stages)
    for rank, layers, params in stages:
        whole = params.total
        shard = params.dense / shard_dense + params.expert / shard_expert
        if plan.schedule == "dualpipe":  # each rank holds stage i and stage p - 1 - i
            whole, shard = 2.0 * whole, 2.0 * shard
        weights = (shard if z >= 3 else whole) * wb
        grads = (shard if z >= 2 else whole) * gb
        optimizer = (shard if z >= 1 else whole) * ob
        held = held_layers(plan.pp, plan.virtual_stages, microbatches, rank, layers, middle, plan.schedule)
        activations = kept * held + per_layer if full else per_layer * held + recomputing
        if rank == plan.pp - 1:
            activations += logits
        buffers = 2.0 * params.layer * K.WEIGHT_BYTES if z >= 3 else 0.0
        total = weights + grads + optimizer + activations + buffers
        if total > best_total:
            best_total = total
            best = (weights, grads, optimizer, activations, buffers)
    assert best is not None
    return MemoryBreakdown(*best)


def usable_hbm_bytes(gpu: Gpu) -> float:
    """HBM available to training: capacity less the fragmentation and fixed reserves
    (:data:`~designer.perf.constants.MEMORY_RESERVE_FRACTION`, ``MEMORY_RESERVE_BYTES``)."""
    return gpu.hbm_bytes * (1.0 - K.MEMORY_RESERVE_FRACTION) - K.MEMORY_RESERVE_BYTES
