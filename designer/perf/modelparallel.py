"""Model-parallel traffic of one micro-batch: tensor, context, expert and pipeline parallelism,
and what of it stays exposed beside the compute.

Model (the terms of :func:`designer.perf.step.step_timing`):

* tensor parallelism: 4 all-reduce equivalents per layer, 6 with full recompute (Narayanan et
  al. SC21 sec. 3.3 and Korthikanti et al. 2022 sec. 4.2.2); with sequence parallelism each is
  an all-gather and a reduce-scatter, and the backward gathers the layer-norm outputs again;
* context parallelism: the ring exchange of key/value chunks, ``(cp - 1)`` steps forward and
  ``2 (cp - 1)`` backward (3 with full recompute);
* expert parallelism: dispatch and combine, forward and backward, NCCL all-to-all or DeepEP
  (:func:`designer.perf.network.dispatch_all_to_all_s`);
* pipeline parallelism: one activation forward and one gradient backward per virtual stage.

What hides is :func:`designer.perf.overlap.exposed_s`; which traffic overlaps, and how well, is
the software stack's (:mod:`designer.perf.software`).

A plan search times hundreds of plans that share a few message sizes, groups and layer shapes;
``memo`` (a dict kept for one job model, stack, precision, network and job size,
:class:`StepMemo`) keeps each collective's time, and one layer's TP and CP
terms, under all their other inputs.
"""

from __future__ import annotations

__all__ = ["MpTerms", "StepMemo", "mp_terms", "memoised"]

from collections.abc import Callable
from dataclasses import dataclass

from designer.perf import constants as K
from designer.perf import network as netm
from designer.perf.compute import LayerTimes
from designer.perf.overlap import exposed_s, tp_overlap_exposed_s
from designer.perf.types import Job, ModelArch, Plan, Precision, Recompute

_S = K.OVERLAP_SLOWDOWN


@dataclass(frozen=True, slots=True)
class MpTerms:
    """Model-parallel seconds of one micro-batch on the slowest stage (see :func:`mp_terms`)."""

    tp_layer_s: float  # tensor-parallel collectives of one layer
    cp_layer_s: float  # context-parallel exchanges of one layer
    ep_mb_s: float  # expert all-to-all of the stage's MoE layers
    pp_mb_s: float  # pipeline sends
    sync_exposed_mb_s: float  # exposed: layers x (TP + CP) + expert all-to-all
    pp_exposed_mb_s: float  # exposed pipeline sends
    serial: bool  # the stack runs TP and CP traffic without overlap under this ZeRO stage


class StepMemo:
    """What the timings of one plan search share: collective and per-layer traffic times for
    one job's model, stack and precision on one network (:class:`~designer.perf.network.Links`)
    and job size, each kept under all its other inputs. Given for another job or network, it is
    not used (the answer never depends on it)."""

    __slots__ = ("model", "software", "precision", "links", "gpus", "table")

    def __init__(self, job: Job, links: netm.Links, gpus: int):
        self.model, self.software, self.precision = job.model, job.software, job.precision
        self.links, self.gpus = links, gpus
        self.table: dict = {}

    def table_for(self, job: Job, links: netm.Links, plan: Plan) -> dict | None:
        """The memo's table if it serves this job (any recomputation), network and plan size."""
        if (job.model is self.model and job.software is self.software and job.precision is self.precision
                and links is self.links and plan.gpus == self.gpus):
            return self.table
        return None


def memoised(memo: dict | None, fn: Callable[..., float], n: float, group: netm.Group, links: netm.Links) -> float:
    """``fn(n, group, links)``, kept in ``memo`` under ``(fn, n, group)``: a memo belongs to one
    network, so every other input is in the key. Computed afresh without a memo."""
    if memo is None:
        return fn(n, group, links)
    key = (fn, n, group)
    out = memo.get(key)
    if out is None:
        out = memo[key] = fn(n, group, links)
    return out


def _column_share(m: ModelArch) -> float:
    """Share of a dense layer's GEMM FLOPs in its column-parallel GEMMs (QKV and the first MLP
    projection, Megatron's ColumnParallelLinear), the window of the asynchronous backward
    reductions."""
    h = m.hidden
    col = h * (m.q_dim + 2 * m.kv_dim) + h * m.ffn_size * (2 if m.gated_mlp else 1)
    return col / (col + m.v_dim * h + m.ffn_size * h)


def mp_terms(job: Job, plan: Plan, links: netm.Links, layer: LayerTimes, compute_mb: float,
             layers_stage: int, scaleup_kind: str, memo: dict | None = None) -> MpTerms:
    """Tensor, context, expert and pipeline traffic of one micro-batch and its exposed parts
    (module docstring).

    Args:
        job: the job (model, recomputation, precision, the stack's overlap).
        plan: the plan (group sizes, micro-batch, sequence parallelism, schedule).
        links: the cluster's network.
        layer: the stage's average layer (its GEMM and attention windows).
        compute_mb: the slowest stage's compute for one micro-batch.
        layers_stage: the layers of that stage.
        scaleup_kind: the GPU's scale-up kind (whether the stack's TP overlap survives FSDP).
        memo: traffic times shared between the plans of a search, for one job model, stack
            and precision, one ``links`` and one job size (:class:`StepMemo`).
    """
    m = job.model
    sw = job.software
    prof = sw.profile
    gpn = min(links.gpus_per_node, plan.gpus)  # a job within one scale-up domain has all its ranks in it
    tp, cp, pp, v = plan.tp, plan.cp, plan.pp, plan.virtual_stages
    full = job.recompute is Recompute.FULL
    gemm_win, attn_win = layer.gemm_fwd_s, layer.attn_fwd_s
    tokens_local = plan.microbatch * m.seq_len / cp
    act_msg = tokens_local * m.hidden * K.ACT_BYTES

    serial = prof.tp_overlap_lost(plan.zero, tp, cp, scaleup_kind)  # Megatron-FSDP before Blackwell
    # the same for every plan of a search with this layer shape (pp, dp, interleaving apart)
    key = ("tp-cp", tp, cp, plan.microbatch, plan.sequence_parallel, full, serial, gemm_win, attn_win)
    tp_cp = memo.get(key) if memo is not None else None
    if tp_cp is None:
        tp_cp = _tp_cp_layer(job, plan, links, gemm_win, attn_win, serial, memo)
        if memo is not None:
            memo[key] = tp_cp
    tp_layer, tp_exposed_layer, cp_layer, cp_exposed_layer = tp_cp

    # -- expert parallelism: dispatch and combine, forward and backward ----------------------
    ep_mb = 0.0
    if plan.ep > 1 and m.moe is not None:
        group = netm.group_layout(plan.ep, plan.expert_stride, gpn, plan.gpus)
        tokens_gpu = tokens_local / (tp if plan.sequence_parallel else 1)
        payload = tokens_gpu * m.moe.top_k * m.hidden
        dispatch = payload * (1.0 if job.precision is Precision.FP8 else K.ACT_BYTES)
        combine = payload * K.ACT_BYTES
        # forward dispatch (FP8 in FP8 recipes, DeepSeek-V3 sec. 3.3) and combine; backward
        # the two gradients in 16-bit; NCCL all-to-all or DeepEP (the stack's dispatcher)
        k, how = m.moe.top_k, sw.moe_dispatcher
        a2a = _dispatch_s if memo is None else _memo_dispatch
        a2a_dispatch = a2a(memo, dispatch, group, links, k, how, m)
        a2a_combine = a2a(memo, combine, group, links, k, how, m, True)
        per_layer = a2a_dispatch + 3.0 * a2a_combine
        if full:
            per_layer += a2a_dispatch + a2a_combine
        ep_mb = layers_stage * (m.moe_layer_count / m.layers) * per_layer
    if plan.schedule == "dualpipe":  # the paired chunk's compute hides the all-to-all
        ep_exposed_mb = exposed_s(ep_mb, compute_mb, 1.0, _S)
    else:
        ep_exposed_mb = ep_mb

    # -- pipeline: one activation and one gradient per virtual stage --------------------------
    pp_mb = 0.0
    if pp > 1:
        group = netm.group_layout(pp, tp * cp * plan.dp, gpn, plan.gpus)
        # Each TP rank sends 1/tp of the activation (Megatron's scatter/gather optimisation,
        # Narayanan et al. SC21 sec. 4.1); the receiver all-gathers it over NVLink.
        msg = act_msg / tp
        pp_mb = 2.0 * v * netm.p2p_group_s(msg, group.nodes > 1, links)
    # Megatron-Core overlaps sends with compute only in the interleaved schedule: the plain 1F1B
    # schedule "does not support overlapping p2p communication" (pipeline_parallel/schedules.py,
    # forward_backward_pipelining_without_interleaving), so its sends are waited for. DualPipe
    # hides them behind the paired chunk (DeepSeek-V3 report, sec. 3.2.1).
    # The software knob p2p_overlap states a stack's own schedule (Llama 3's "asynchronous
    # point-to-point communication in PP", sec. 3.3.2).
    p2p_overlapped = sw.overlaps_p2p(v > 1 or plan.schedule == "dualpipe")
    pp_exposed_mb = exposed_s(pp_mb, compute_mb, 1.0, _S) if p2p_overlapped else pp_mb

    sync = layers_stage * (tp_exposed_layer + cp_exposed_layer) + ep_exposed_mb
    return MpTerms(tp_layer, cp_layer, ep_mb, pp_mb, sync, pp_exposed_mb, serial)


def _tp_cp_layer(job: Job, plan: Plan, links: netm.Links, gemm_win: float, attn_win: float, serial: bool,
                 memo: dict | None) -> tuple[float, float, float, float]:
    """One layer's tensor- and context-parallel traffic and their exposed parts (module
    docstring): ``(tp, tp exposed, cp, cp exposed)`` seconds."""
    m = job.model
    sw = job.software
    prof = sw.profile
    gpn = min(links.gpus_per_node, plan.gpus)
    tp, cp = plan.tp, plan.cp
    full = job.recompute is Recompute.FULL
    tokens_local = plan.microbatch * m.seq_len / cp
    act_msg = tokens_local * m.hidden * K.ACT_BYTES

    # -- tensor parallelism: 4 all-reduce equivalents per layer, 6 with full recompute -------
    tp_layer = tp_bwd_async = ag = rs = 0.0
    if tp > 1:
        group = netm.group_layout(tp, 1, gpn, plan.gpus)
        count = 6 if full else 4
        if plan.sequence_parallel:
            ag = memoised(memo, netm.all_gather_s, act_msg, group, links)
            rs = memoised(memo, netm.reduce_scatter_s, act_msg, group, links)
            # Without full recomputation the backward pass gathers the layer-norm outputs
            # again for the weight gradients of the two column-parallel GEMMs (Korthikanti et
            # al. 2022, sec. 4.2.2); a full recompute has them from its own forward.
            tp_layer = count * (ag + rs) + (0 if full else 2) * ag
            # the column-parallel layers' dgrad reduce-scatters and input re-gathers
            tp_bwd_async = 2.0 * rs + (0.0 if full else 2.0) * ag
        else:
            ar = memoised(memo, netm.all_reduce_s, act_msg, group, links)
            tp_layer = count * ar
            tp_bwd_async = 2.0 * ar  # the column-parallel layers' input-gradient all-reduces
    if serial:
        tp_exposed_layer = tp_layer
    elif sw.tp_comm_overlap and plan.sequence_parallel:
        # Megatron-Core userbuffers pipeline every collective; PyTorch AsyncTP only some (overlap.py)
        tp_exposed_layer = tp_overlap_exposed_s(prof.micro_pipelined_tp, ag, rs, full, gemm_win, _column_share(m))
    elif prof.tp_backward_overlap and tp_bwd_async > 0.0:
        # launched before the column-parallel layers' dgrad and wgrad GEMMs and waited on after
        # them: their window is those two GEMMs, each about the layers' forward GEMM time
        window = 2.0 * _column_share(m) * gemm_win
        tp_exposed_layer = tp_layer - tp_bwd_async + exposed_s(tp_bwd_async, window, 1.0, _S)
    else:
        tp_exposed_layer = tp_layer

    # -- context parallelism: ring exchange of key/value chunks ------------------------------
    cp_layer = 0.0
    if cp > 1:
        group = netm.group_layout(cp, tp, gpn, plan.gpus)
        chunk = tokens_local * 2 * m.kv_dim * K.ACT_BYTES / tp
        steps = (cp - 1) * (4 if full else 3)  # forward K,V; backward K,V and their gradients
        cp_layer = steps * netm.p2p_group_s(chunk, group.nodes > 1, links)
    if prof.cp_overlap and not serial:
        cp_exposed_layer = exposed_s(cp_layer, attn_win * (3.0 + (1.0 if full else 0.0)), 1.0, _S)
    else:
        cp_exposed_layer = cp_layer

    return tp_layer, tp_exposed_layer, cp_layer, cp_exposed_layer


def _dispatch_s(memo: dict | None, n: float, group: netm.Group, links: netm.Links, k: int, how: str,
                m: ModelArch, combine: bool = False) -> float:
    # node-limited routing (the model's groups) is part of the model, not of the key
    assert m.moe is not None
    return netm.dispatch_all_to_all_s(n, group, links, k, how, groups=m.moe.groups, group_top_k=m.moe.group_top_k,
                                      combine=combine)


def _memo_dispatch(memo: dict, n: float, group: netm.Group, links: netm.Links, k: int, how: str,
                   m: ModelArch, combine: bool = False) -> float:
    assert m.moe is not None
    key = (netm.dispatch_all_to_all_s, n, group, k, how, m.moe.groups, m.moe.group_top_k, combine)
    out = memo.get(key)
    if out is None:
        out = memo[key] = _dispatch_s(None, n, group, links, k, how, m, combine)
    return out
