"""Data-parallel traffic of one step: gradient reduction and parameter gathers, and what of it hides.

Model. The stack's :class:`~designer.perf.profile.DpSchedule` for the plan's ZeRO stage says
when the traffic runs (:mod:`designer.perf.stacks` gives each stage's schedule and its source):

* once a step (ZeRO 0-1, and ZeRO-1-style no-sync accumulation): the gradients of the stage's
  parameters are all-reduced (ZeRO-0) or reduce-scattered (ZeRO-1) in the stack's buckets after
  the last micro-batch's backward, and the updated shards all-gathered before the first forward.
  Overlapped, only the last bucket's reduction and the first bucket's gather cannot hide
  ("This overlap method exposes only one DP communication chunk", Megatron-Bridge
  communication-overlap docs). The window is the last micro-batch's backward and the first one's
  forward; with interleaved stages (v chunks, m micro-batches in rounds of p), each chunk's
  reduction starts when its own last backward ends and each chunk's gather when the chunk before
  it starts its first forward (Megatron-Core ``grad_sync_func`` / ``param_sync_func`` per model
  chunk, megatron/core/pipeline_parallel/schedules.py), so the windows span the rounds of the other
  chunks: ``min(m, p) (v - 1) / v`` micro-batches' backward or forward (:func:`interleaved_window`).
  Where the stack launches a chunk's reduction only after that chunk's last backward
  (``Profile.chunk_grad_sync``: Megatron-Core's aligned grad sync with interleaving,
  torch.distributed.pipelining's post-backward for every pipeline), the first stage's first
  chunk, whose backward ends the step, exposes its whole reduction, ``1 / v`` of the stage's
  (:func:`last_chunk_share`), in place of the last bucket; Megatron-Core prefetches no gather for
  chunks 0 and 1, which expose their first bucket each (``Profile.unprefetched_chunks``);
* every micro-batch (a stack that keeps only a shard of the gradients, ZeRO 2-3): each layer's
  gradients are reduce-scattered as its backward finishes; ZeRO-3 also gathers each layer's
  parameters before its forward and again before its backward. Overlapped, a share ``1 - e`` of it
  cannot hide (the first layer's gather, the last layer's reduction; ``e`` is the stack's
  ``fsdp_overlap_efficiency``, 0.9 per the PyTorch/IBM FSDP measurements, or the part of a layer
  DeepSpeed's prefetch bucket reaches).

What hides, and what overlapping costs the compute, is :func:`designer.perf.overlap.exposed_s`.
Dense parameters are replicated over the ``dp x cp`` ranks, expert parameters over the expert
data-parallel group ``dp x cp / ep``.
"""

from __future__ import annotations

__all__ = ["DpTerms", "dp_terms", "interleaved_window", "last_chunk_share"]

from dataclasses import dataclass

from designer.perf import constants as K
from designer.perf import network as netm
from designer.perf.memory import StageParams
from designer.perf.overlap import exposed_s
from designer.perf.profile import Gather
from designer.perf.types import Job, Plan


@dataclass(frozen=True, slots=True)
class DpTerms:
    """Data-parallel seconds of one step: all of it (``comm_s``), the part exposed in every
    micro-batch (``per_microbatch_exposed_s``) and the part exposed once a step."""

    comm_s: float
    per_microbatch_exposed_s: float
    step_exposed_s: float


def _chunked(collective, total: float, chunk: float, *args, **kwargs) -> float:
    """Time of ``total`` bytes moved as collectives of ``chunk`` bytes (each pays its latency)."""
    if total <= 0.0:
        return 0.0
    if chunk <= 0.0 or chunk >= total:
        return collective(total, *args, **kwargs)
    whole = int(total // chunk)
    rest = total - whole * chunk
    out = whole * collective(chunk, *args, **kwargs)
    return out + (collective(rest, *args, **kwargs) if rest > 0.0 else 0.0)


def _per_gpu_gather_s(n: float, group: netm.Group, links: netm.Links, cross_leaf: bool) -> float:
    """All-gather (or reduce-scatter) whose ranks each push their whole share through their own
    NIC, as DeepSpeed's flat coalesced gathers do: ``(p - 1)/p n / NIC rate`` plus the ring's
    latency; the node's NICs do not pool the group's traffic."""
    if group.nodes == 1:
        return netm.all_gather_s(n, group, links)
    net = links.net_Bps / (links.oversubscription if cross_leaf else 1.0)
    p = group.size
    return (p - 1) / p * n / net + netm.ring_latency_s(p, group.nodes, links, 1)


def _bucket_params(job: Job, plan: Plan, stage_total: float, layers: int, overlapped: bool) -> float:
    """Parameters per once-a-step collective: the stack's bucket (Megatron-Core: at least 1M per
    rank), a layer where it reduces per layer, or the whole buffer where it reduces once."""
    prof = job.software.profile
    if not overlapped and prof.whole_buffer_reduce:
        return stage_total
    if prof.grad_bucket_params is None:
        return stage_total / max(layers, 1)
    return max(prof.grad_bucket_params, prof.bucket_params_per_rank * plan.dp * plan.cp)


def interleaved_window(pp: int, v: int, micro: int) -> float:
    """Micro-batches of stage compute a once-a-step reduction (or gather) can hide behind:
    one without interleaving, ``min(m, p) (v - 1) / v`` with ``v`` chunks (module docstring), as
    the last chunks' rounds of ``min(m, p)`` micro-batches run after the first chunk's reduction
    is launched.

    Examples:
        >>> interleaved_window(8, 1, 32), interleaved_window(8, 12, 8), interleaved_window(4, 2, 16)
        (1.0, 7.333333333333333, 2.0)
    """
    if pp <= 1 or v <= 1:
        return 1.0
    return max(1.0, min(micro, pp) * (v - 1) / v)


def last_chunk_share(chunk_grad_sync: str, pp: int, v: int) -> float:
    """Share of a stage's once-a-step gradient reduction launched only after the step's last
    backward (module docstring): the first stage's first model chunk, ``1 / v`` of its
    parameters, where the stack syncs per chunk (``chunk_grad_sync``, :class:`Profile`); 0 where
    the reduction runs bucket by bucket inside that backward.

    Examples:
        >>> last_chunk_share("interleaved", 4, 5), last_chunk_share("interleaved", 4, 1), last_chunk_share("always", 4, 1)
        (0.2, 0.0, 1.0)
        >>> last_chunk_share("never", 8, 12), last_chunk_share("always", 1, 1)
        (0.0, 0.0)
    """
    if pp <= 1 or chunk_grad_sync == "never" or (chunk_grad_sync == "interleaved" and v <= 1):
        return 0.0
    return 1.0 / v


def dp_terms(job: Job, plan: Plan, links: netm.Links, params: StageParams, layers_stage: int,
             win_fwd_s: float, win_bwd_s: float, micro: int, memo: dict | None = None) -> DpTerms:
    """Data-parallel traffic of a step and its exposed parts (module docstring).

    Args:
        job: the job (its stack's schedule, bytes on the wire and overlap).
        plan: the plan (ZeRO stage, group sizes).
        links: the cluster's network.
        params: parameters per GPU on the stage that holds the most.
        layers_stage: layers of that stage (per-layer collectives).
        win_fwd_s, win_bwd_s: one micro-batch's forward and backward compute on the stage.
        micro: micro-batches per step.
        memo: traffic times for this ``links``, shared between the plans of a search (keyed by
            every other input: plans that differ only in micro-batch, interleaving or
            recomputation move the same bytes over the same groups).
    """
    prof = job.software.profile
    sched = prof.dp_schedule(plan.zero)
    gpn = min(links.gpus_per_node, plan.gpus)  # a job within one scale-up domain has all its ranks in it
    dp_group = netm.group_layout(plan.dp * plan.cp, plan.tp, gpn, plan.gpus)
    edp_group = netm.group_layout(plan.expert_dp, plan.expert_tp * plan.ep, gpn, plan.gpus)
    grad_b, gather_b = prof.grad_reduce_bytes, prof.gather_bytes
    overlap = job.software.overlaps_dp(plan.zero)
    layers = max(layers_stage, 1)

    def moved(collective, per_param: float, chunk_params: float | None) -> float:
        dense, expert = params.dense * per_param, params.expert * per_param
        return (_chunked(collective, dense, dense / layers if chunk_params is None else chunk_params * per_param,
                         dp_group, links, cross_leaf=True)
                + _chunked(collective, expert, expert / layers if chunk_params is None else chunk_params * per_param,
                           edp_group, links, cross_leaf=True))

    if memo is not None:
        fresh = moved

        def moved(collective, per_param: float, chunk_params: float | None) -> float:  # noqa: F811
            key = ("dp", collective, per_param, chunk_params, params.dense, params.expert, layers, dp_group, edp_group)
            out = memo.get(key)
            if out is None:
                out = memo[key] = fresh(collective, per_param, chunk_params)
            return out

    per_gpu = prof.gather is Gather.PER_GPU
    step_comm = mb_exposed = step_exposed = 0.0
    mb_comm = 0.0
    # -- every micro-batch: per-layer reduce-scatters and gathers ---------------------------
    rs = ag = 0.0
    if sched.reduce_per_microbatch:
        rs = moved(_per_gpu_gather_s if per_gpu else netm.reduce_scatter_s, grad_b, None)
    if sched.gathers:
        ag = moved(_per_gpu_gather_s if per_gpu else netm.all_gather_s, gather_b, None)
    mb_comm = sched.gathers * ag + rs
    if mb_comm > 0.0:
        if overlap:
            e = prof.fsdp_overlap_efficiency
            if prof.prefetch_params is not None:
                # prefetch reaches only this many parameters ahead of the layer in use
                e = min(e, prof.prefetch_params / max(params.layer, 1.0))
            # The share 1 - e that cannot overlap is the step's first gather (before any compute)
            # and its last reduction (after the last backward): once a step. In between, each
            # micro-batch's traffic runs beside compute: gathers beside the forward (and, resharded,
            # beside the backward), reductions beside the rest of the step's compute (the next
            # micro-batch's forward follows the backward that produced them).
            fwd = ag if sched.gathers else 0.0
            bwd = ag if sched.gathers >= 2 else 0.0
            window_rs = win_bwd_s if sched.gathers >= 2 else win_fwd_s + win_bwd_s
            if sched.gathers >= 2:
                mb_exposed = (exposed_s(e * fwd, win_fwd_s, 1.0, K.OVERLAP_SLOWDOWN)
                              + exposed_s(e * (bwd + rs), win_bwd_s, 1.0, K.OVERLAP_SLOWDOWN))
            else:
                mb_exposed = (exposed_s(e * fwd, win_fwd_s, 1.0, K.OVERLAP_SLOWDOWN)
                              + exposed_s(e * rs, window_rs, 1.0, K.OVERLAP_SLOWDOWN))
            step_exposed += (1.0 - e) * mb_comm
        else:
            mb_exposed = mb_comm
    # -- once a step: bucketed reduction after the last backward, gather before the first forward
    grad = gather = 0.0
    if not sched.reduce_per_microbatch or not sched.gathers:
        chunk = _bucket_params(job, plan, params.total, layers_stage, overlap)
        if not sched.reduce_per_microbatch:
            grad = moved(netm.all_reduce_s if plan.zero == 0 else netm.reduce_scatter_s, grad_b, chunk)
        if not sched.gathers and plan.zero >= 1:
            gather = moved(netm.all_gather_s, gather_b, chunk)
        step_comm = grad + gather
        if overlap:
            e = 1.0 - min(1.0, chunk / max(params.total, 1.0))
            v = plan.virtual_stages
            rounds = interleaved_window(plan.pp, v, micro)
            late = grad * last_chunk_share(prof.chunk_grad_sync, plan.pp, v)
            # first chunks that gather in their own forward each expose their first bucket
            first = min(prof.unprefetched_chunks, v) if plan.pp > 1 else 1
            e_gather = 1.0 - min(1.0, first * chunk / max(params.total, 1.0))
            step_exposed += (late + exposed_s(grad - late, rounds * win_bwd_s, e if not late else 1.0,
                                              K.OVERLAP_SLOWDOWN)
                             + exposed_s(gather, rounds * win_fwd_s, e_gather, K.OVERLAP_SLOWDOWN))
        else:
            step_exposed += step_comm
    return DpTerms(micro * mb_comm + step_comm, mb_exposed, step_exposed)
