"""One training step of a parallelism plan: compute, exposed communication, bubble, stalls.

Model:

* Per micro-batch, the slowest pipeline stage (its layers, plus the logits on the last stage;
  :mod:`designer.perf.pipeline`) computes ``C = layers x (fwd + bwd + recompute) [+ logits]``
  (:mod:`designer.perf.compute`).
* Per micro-batch it also waits for the communication that is not hidden
  (:mod:`designer.perf.modelparallel`): tensor-parallel collectives (4 all-reduce equivalents
  per layer, 6 with full recompute; Narayanan et al. SC21 sec. 3.3 and Korthikanti et al. 2022
  sec. 4.2.2), context-parallel key/value exchanges, expert all-to-all (dispatch and combine,
  forward and backward), pipeline sends (one activation forward and one gradient backward per virtual stage) and, with
  ZeRO-3, the per-layer parameter gathers and gradient reduce-scatters.
* What is hidden and what overlap costs is :func:`designer.perf.overlap.exposed_s`: a share of
  each collective that cannot overlap, and the compute slowdown while the rest runs beside the
  compute. Which traffic overlaps, and how well, is the software stack's
  (:mod:`designer.perf.software`).
* 1F1B pipeline: ``(m + (p-1)/v) x T_mb`` for m micro-batches, p stages, v interleaved chunks
  (bubble fraction ``(p-1)/(v m)``, Narayanan et al. SC21 sec. 2.2), less the chunk times a light
  first or last chunk saves (:func:`designer.perf.pipeline.light_end_chunks`). The bubble's
  micro-batch times are taken without their exposed sends and without their exposed
  data-parallel traffic (asynchronous, finished in the idle time); the fill and drain wait
  instead for the ``2 (p v - 1)`` sends between consecutive chunks whole
  (:func:`designer.perf.pipeline.fill_drain_sends`), ``2 (p - 1)`` in plain 1F1B.
* Data parallelism (:mod:`designer.perf.dataparallel`): per the stack's schedule for the ZeRO
  stage, gradients reduced and parameters gathered once a step, overlapped with the backward of
  the last micro-batch and the forward of the first except one bucket, or layer by layer in every
  micro-batch (ZeRO 2-3), overlapped with that micro-batch's compute.
* Adam step (memory-bound) and the amortised checkpoint stall are added at the end.

* The host (:mod:`designer.perf.host`): where the CPU issues a micro-batch's kernels more slowly
  than the GPU runs them (segments between device-host syncs), the GPU waits; CUDA graphs
  replace the captured launches. Added per micro-batch, in the bubble's micro-batch times too.

``step = compute + bubble + exposed communication + host + optimizer + checkpoint`` exactly, and
utilization = compute / step.

Throughput figures all derive from the step time and the plan-independent model FLOPs of a
step, ``F = model_flops_per_token x global_batch x seq_len`` (:mod:`designer.perf.flops`):
``tflops_per_gpu = F / (step x gpus) / 1e12``, ``mfu = F / (step x gpus x peak)`` with
``peak`` the dense peak of the training precision (:func:`~designer.perf.compute.peak_rate`);
``mfu_causal`` the same with the causal attention count
(:func:`~designer.perf.flops.causal_model_flops_per_token`),
``tokens_per_s = global_batch x seq_len / step`` and ``time_to_train = tokens / tokens_per_s``.
"""

from __future__ import annotations

__all__ = ["Timing", "estimate_step", "check_plan", "evaluate", "step_timing", "estimate_from", "stage_compute",
           "StepMemo", "StageTerms", "stage_terms", "plan_mp_terms", "finish_timing", "layer_mix", "plan_layout",
           "bubble_chunks",
           "structure_reason_on"]

import math
from dataclasses import dataclass, replace

from designer.catalog.types import Gpu
from designer.errors import PerfError
from designer.perf import constants as K
from designer.perf import network as netm
from designer.perf.cluster import Cluster
from designer.perf.compute import LayerTimes, layer_times, logit_times, optimizer_step_s, peak_rate
from designer.perf.dataparallel import dp_terms
from designer.perf.estimate import Breakdown, StepEstimate
from designer.perf.flops import causal_model_flops_per_token, model_flops_per_token
from designer.perf.host import host_stall_mb_s
from designer.perf.memory import memory_per_gpu, stage_params, usable_hbm_bytes
from designer.perf.modelparallel import MpTerms, StepMemo, mp_terms
from designer.perf.offload import NO_OFFLOAD, offload_exposed_s, offload_for
from designer.perf.pipeline import StageLayout, bubble_microbatches, fill_drain_sends, light_end_chunks, stage_layout
from designer.perf.structure import structure_reason
from designer.perf.types import Job, ModelArch, Plan

_STORAGE_NODE_GPUS = 8  # GPUs per node of the facility's per-node storage bandwidth (DGX SuperPOD RA)


def structure_reason_on(job: Job, plan: Plan, gpu: Gpu) -> str | None:
    """Why a plan cannot run at all on ``gpu`` (ignoring memory), or None
    (:func:`designer.perf.structure.structure_reason`)."""
    return structure_reason(job, plan, gpu)


def check_plan(job: Job, plan: Plan, cluster: Cluster) -> str | None:
    """Why ``plan`` cannot train ``job`` on ``cluster`` (structure or memory), or None if it can."""
    reason = structure_reason(job, plan, cluster.gpu)
    if reason is not None:
        return reason
    micro = job.global_batch // (plan.dp * plan.microbatch)
    need = memory_per_gpu(job, plan, micro).total
    have = usable_hbm_bytes(cluster.gpu)
    if need > have and offload_for(job, plan, micro, cluster.gpu) is None:
        return (f"needs {need / 1e9:.1f} GB per GPU, {have / 1e9:.1f} GB usable on "
                f"{cluster.gpu.name} (after the allocator and NCCL reserve); add pipeline or tensor "
                "parallelism, recomputation or ZeRO")
    return None


def estimate_step(job: Job, plan: Plan, cluster: Cluster) -> StepEstimate:
    """Predict step time, utilization, MFU and time to train of ``job`` under ``plan``.

    Args:
        job: model and training job (one recomputation setting, not ``auto``).
        plan: parallelism plan (``plan.gpus`` GPUs are used).
        cluster: GPU and network.

    Returns:
        :class:`StepEstimate`.

    Raises:
        PerfError: the plan is invalid or does not fit in GPU memory (the message says why).
    """
    reason = check_plan(job, plan, cluster)
    if reason is not None:
        raise PerfError(f"plan {plan.describe()} cannot run: {reason}")
    return evaluate(job, plan, cluster, netm.links_for(cluster, job.software))


@dataclass(frozen=True, slots=True)
class Timing:
    """The step-time terms of one plan (see :func:`step_timing`); seconds."""

    step_s: float
    compute_mb_s: float  # one micro-batch's compute on the slowest stage
    micro: int  # micro-batches per step
    layers_stage: int  # layers of the slowest stage
    tp_layer_s: float
    cp_layer_s: float
    ep_mb_s: float
    pp_mb_s: float
    dp_comm_s: float
    exposed_mb_s: float
    dp_step_exposed_s: float
    bubble_s: float
    optimizer_s: float
    checkpoint_s: float
    offload_mb_s: float = 0.0  # exposed activation-offload copies per micro-batch (designer.perf.offload)
    host_mb_s: float = 0.0  # the GPU waiting for its host per micro-batch (designer.perf.host)


def evaluate(job: Job, plan: Plan, cluster: Cluster, links: netm.Links,
             dense: LayerTimes | None = None, moe: LayerTimes | None = None) -> StepEstimate:
    """The model behind :func:`estimate_step`, without validity checks (callers check first).

    ``dense`` and ``moe`` may carry precomputed layer times for (tp, cp, microbatch) to save
    work in plan searches.
    """
    return estimate_from(job, plan, cluster, step_timing(job, plan, cluster, links, dense, moe))


def estimate_from(job: Job, plan: Plan, cluster: Cluster, t: Timing) -> StepEstimate:
    """The full :class:`StepEstimate` of a plan from its :class:`Timing`: throughput, MFU,
    memory and the breakdown. Plan searches time many plans and assemble only the fastest."""
    m = job.model
    gpu = cluster.gpu
    step = t.step_s
    micro = t.micro
    gpus = plan.gpus
    compute = micro * t.compute_mb_s
    tokens_step = job.global_batch * m.seq_len
    flops_step = model_flops_per_token(m) * tokens_step
    peak = peak_rate(gpu, job.precision)
    tokens_per_s = tokens_step / step
    memory = memory_per_gpu(job, plan, micro)
    off = _offload(job, plan, micro, gpu)
    if off.bytes_per_gpu:
        memory = replace(memory, activations=memory.activations - off.bytes_per_gpu)
    breakdown = Breakdown(
        compute_s=compute,
        tp_comm_s=micro * t.layers_stage * t.tp_layer_s,
        pp_comm_s=micro * t.pp_mb_s,
        dp_comm_s=t.dp_comm_s,
        ep_comm_s=micro * t.ep_mb_s,
        cp_comm_s=micro * t.layers_stage * t.cp_layer_s,
        bubble_s=t.bubble_s,
        exposed_comm_s=micro * t.exposed_mb_s + t.dp_step_exposed_s,
        optimizer_s=t.optimizer_s,
        checkpoint_s=t.checkpoint_s,
        host_s=micro * t.host_mb_s,
    )
    return StepEstimate(
        plan=plan,
        gpus=gpus,
        microbatches=micro,
        step_time_s=step,
        utilization=compute / step,
        mfu=flops_step / (step * gpus * peak),
        mfu_causal=causal_model_flops_per_token(m) * tokens_step / (step * gpus * peak),
        tflops_per_gpu=flops_step / step / gpus / 1e12,
        tokens_per_s=tokens_per_s,
        time_to_train_s=job.tokens / tokens_per_s,
        memory_bytes_per_gpu=memory.total,
        memory=memory,
        breakdown=breakdown,
        peak_flops=peak,
        recompute=job.recompute,
        software=job.software,
        memory_usable_bytes=usable_hbm_bytes(gpu),
        stage_layers=_stage_layers(m, plan),
        offload_bytes_per_gpu=off.bytes_per_gpu,
    )


def _offload(job: Job, plan: Plan, micro: int, gpu: Gpu):
    """The plan's activation offload (none where it fits, or where the job cannot offload)."""
    if not (job.software.profile.activation_offload and gpu.host_Bps):
        return NO_OFFLOAD
    return offload_for(job, plan, micro, gpu) or NO_OFFLOAD


def _stage_layers(model: ModelArch, plan: Plan) -> tuple[int, ...]:
    layout = plan_layout(model, plan)
    if plan.pp == 1:
        return (model.layers,)
    if plan.pp == 2:
        return (layout.first, layout.last)
    return (layout.first, layout.middle, layout.last)


def plan_layout(model: ModelArch, plan: Plan) -> StageLayout:
    """The plan's layers per pipeline stage (:func:`designer.perf.pipeline.stage_layout`)."""
    layout = stage_layout(model.layers, plan.pp, plan.first_stage_layers, plan.last_stage_layers)
    if isinstance(layout, str):  # checked by the callers; an even split as a fallback
        layout = stage_layout(model.layers, plan.pp, None, None)
    assert not isinstance(layout, str)
    return layout


def layer_mix(model: ModelArch, dense: LayerTimes, moe: LayerTimes | None,
              logits_s: float) -> tuple[LayerTimes, float, float]:
    """The average layer of a stage (dense and MoE layer times weighted by the MoE layers' share
    of the model; the attention core, the context-parallel window, is the same in both), its
    ``fwd + bwd + recompute``, and what the last stage adds after its layers: the logits (with
    multi-token prediction, each depth's layer and logits too)."""
    frac = model.moe_layer_count / model.layers
    layer = dense
    if frac and moe is not None:
        d = 1.0 - frac
        layer = LayerTimes(d * dense.fwd_s + frac * moe.fwd_s, d * dense.bwd_s + frac * moe.bwd_s,
                           d * dense.recompute_s + frac * moe.recompute_s,
                           d * dense.gemm_fwd_s + frac * moe.gemm_fwd_s, dense.attn_fwd_s)
    per_layer = layer.fwd_s + layer.bwd_s + layer.recompute_s
    # Multi-token prediction runs on the last stage after the main head (Megatron-Core puts the
    # MTP block in the post-process stage): per depth one layer of the model's last kind and
    # one more pass through the output head and loss (its 2h x h projection is left out: under
    # 1 % of a layer's FLOPs).
    tail = logits_s
    if model.mtp_layers:
        kind = moe if model.mtp_layer_moe() and moe is not None else dense
        tail += model.mtp_layers * (kind.fwd_s + kind.bwd_s + kind.recompute_s + logits_s)
    return layer, per_layer, tail


def stage_compute(model: ModelArch, plan: Plan, dense: LayerTimes, moe: LayerTimes | None,
                  logits_s: float, *, mix: tuple[LayerTimes, float, float] | None = None,
                  layout: StageLayout | None = None) -> tuple[LayerTimes, float, int]:
    """The average layer, the slowest pipeline stage's compute for one micro-batch and its
    layer count: ``max`` over stages of ``layers x (fwd + bwd + recompute)``, plus the logits on
    the last stage (:func:`layer_mix`, which ``mix`` may give; ``layout`` the plan's
    :func:`plan_layout`).

    The step model and the plan search's lower bound both use this, so the bound never exceeds
    the step.
    """
    layer, per_layer, tail = mix if mix is not None else layer_mix(model, dense, moe, logits_s)
    if plan.pp == 1:
        return layer, model.layers * per_layer + tail, model.layers
    if layout is None:
        layout = plan_layout(model, plan)
    last = layout.last * per_layer + tail
    if plan.schedule == "dualpipe":
        # each rank holds stage i and stage p - 1 - i and runs half the micro-batches through each
        # (DeepSeek-V3 sec. 3.2.1): rank 0 pairs the first stage with the last and its logits
        pair = (layout.first * per_layer + last) / 2.0
        stages = [(pair, max(layout.first, layout.last)), (layout.middle * per_layer, layout.middle)]
    else:
        stages = [(last, layout.last), (layout.middle * per_layer, layout.middle),
                  (layout.first * per_layer, layout.first)]
    compute, layers = max(stages)
    return layer, compute, layers


def bubble_chunks(model: ModelArch, plan: Plan, layer_s: float, logits_s: float,
                  layout: StageLayout | None = None) -> float:
    """The 1F1B bubble in micro-batch times of the slowest stage, ``(p - 1) / v``
    (:func:`~designer.perf.pipeline.bubble_microbatches`), less the chunk times a light first or
    last chunk saves (:func:`~designer.perf.pipeline.light_end_chunks`; ``layer_s`` one layer's
    compute, ``logits_s`` the output layer's). The step model and the plan search's lower bound
    both use it."""
    base = bubble_microbatches(plan.pp, plan.virtual_stages, plan.schedule)
    if plan.pp <= 1 or plan.schedule == "dualpipe":
        return base
    saved = light_end_chunks(layout or plan_layout(model, plan), plan.virtual_stages, layer_s, logits_s)
    return max(0.0, base - saved / plan.virtual_stages)


@dataclass(frozen=True, slots=True)
class StageTerms:
    """A plan's compute terms, which no network changes (:func:`stage_terms`)."""

    micro: int  # micro-batches per step
    compute_mb_s: float  # one micro-batch's compute on the slowest stage
    layers_stage: int  # layers of that stage
    layer: LayerTimes  # the stage's average layer
    chunks: float  # the bubble in micro-batch times (bubble_chunks)

    @property
    def bound_s(self) -> float:
        """A lower bound on the step time: ``(micro + c) C``, the compute and bubble alone
        (exposed communication, optimizer and checkpoint are never negative); rounding: the
        step model sums the same terms in another order."""
        return (self.micro + self.chunks) * self.compute_mb_s * (1.0 - 1e-9)

    def floor_s(self, mp: MpTerms) -> float:
        """A lower bound on the step time with the plan's model-parallel traffic ``mp``:
        ``micro (C + S + P) + c (C + S)``, ``C`` the compute, ``S`` the exposed TP, CP and expert
        traffic and ``P`` the exposed sends of a micro-batch. :func:`finish_timing` adds only
        what is never negative (exposed data-parallel traffic and offload copies, the fill and
        drain sends, the optimizer step, the checkpoint stall)."""
        busy = self.compute_mb_s + mp.sync_exposed_mb_s
        return (self.micro * (busy + mp.pp_exposed_mb_s) + self.chunks * busy) * (1.0 - 1e-9)


def stage_terms(job: Job, plan: Plan, gpu: Gpu, speed: float = 1.0, dense: LayerTimes | None = None,
                moe: LayerTimes | None = None, logits_s: float | None = None,
                mix: tuple[LayerTimes, float, float] | None = None, *,
                stage: tuple[LayerTimes, float, int] | None = None, layout: StageLayout | None = None) -> StageTerms:
    """The compute of one micro-batch on the slowest stage (:func:`stage_compute`) and the
    bubble's micro-batch times (:func:`bubble_chunks`) of ``plan``.

    ``dense``, ``moe``, ``logits_s`` (the output layer's forward and backward) and ``mix``
    (:func:`layer_mix` of them) may be given precomputed, scaled by the compute multiplier
    ``speed``, for the plan's (tp, cp, microbatch, sequence parallelism, ep, etp, recomputation);
    ``stage`` (its :func:`stage_compute`) and ``layout`` (its :func:`plan_layout`) for its layer
    shape and pipeline, which the data-parallel size and the interleaving do not change.
    """
    m = job.model
    if mix is None:  # every compute time is divided by speed, the compute multiplier
        if dense is None:
            dense = layer_times(job, plan, gpu, False).scaled(speed)
        if m.moe_layer_count and moe is None:
            moe = layer_times(job, plan, gpu, True).scaled(speed)
        if logits_s is None:
            logit_f, logit_b = logit_times(job, plan, gpu)
            logits_s = (logit_f + logit_b) / speed
        mix = layer_mix(m, dense, moe, logits_s)
    assert logits_s is not None
    if layout is None and plan.pp > 1:
        layout = plan_layout(m, plan)
    if stage is None:
        stage = stage_compute(m, plan, mix[0], None, logits_s, mix=mix, layout=layout)
    layer, compute_mb, layers_stage = stage
    # A light first or last chunk shortens the bubble (designer.perf.pipeline.light_end_chunks).
    chunks = bubble_chunks(m, plan, mix[1], logits_s, layout)
    return StageTerms(job.global_batch // (plan.dp * plan.microbatch), compute_mb, layers_stage, layer, chunks)


def plan_mp_terms(job: Job, plan: Plan, cluster: Cluster, links: netm.Links, st: StageTerms,
                  memo: StepMemo | None = None) -> MpTerms:
    """The plan's model-parallel traffic per micro-batch (:func:`designer.perf.modelparallel.mp_terms`)."""
    table = memo.table_for(job, links, plan) if memo is not None else None
    return mp_terms(job, plan, links, st.layer, st.compute_mb_s, st.layers_stage, cluster.gpu.scaleup_kind, table)


def step_timing(job: Job, plan: Plan, cluster: Cluster, links: netm.Links,
                dense: LayerTimes | None = None, moe: LayerTimes | None = None, *,
                memo: StepMemo | None = None) -> Timing:
    """Step time of ``plan`` and its terms: the arithmetic of :func:`estimate_step` (module
    docstring), without validity checks, throughput or memory. ``memo`` keeps traffic times
    between the plans of a search (the answer is the same without it)."""
    st = stage_terms(job, plan, cluster.gpu, cluster.efficiency.compute, dense, moe)
    table = memo.table_for(job, links, plan) if memo is not None else None
    mp = mp_terms(job, plan, links, st.layer, st.compute_mb_s, st.layers_stage, cluster.gpu.scaleup_kind, table)
    return finish_timing(job, plan, cluster, links, st, mp, memo=memo)


def finish_timing(job: Job, plan: Plan, cluster: Cluster, links: netm.Links, st: StageTerms, mp: MpTerms, *,
                  memo: StepMemo | None = None) -> Timing:
    """:func:`step_timing` from the plan's :func:`stage_terms` and model-parallel traffic:
    data-parallel traffic, offload copies, the pipeline schedule, the optimizer step and the
    checkpoint stall."""
    m = job.model
    gpu = cluster.gpu
    speed = cluster.efficiency.compute
    gpn = min(links.gpus_per_node, plan.gpus)  # a job within one scale-up domain has all its ranks in it
    pp, v = plan.pp, plan.virtual_stages
    micro, compute_mb, layers_stage = st.micro, st.compute_mb_s, st.layers_stage
    win_fwd, win_bwd = layers_stage * st.layer.fwd_s, layers_stage * (st.layer.bwd_s + st.layer.recompute_s)
    params = stage_params(m, plan)

    # -- data parallelism (designer.perf.dataparallel) ---------------------------------------
    table = memo.table_for(job, links, plan) if memo is not None else None
    dpt = dp_terms(job, plan, links, params, layers_stage, win_fwd, win_bwd, micro, table)
    dp_comm, dp_mb_exposed, dp_step_exposed = dpt.comm_s, dpt.per_microbatch_exposed_s, dpt.step_exposed_s

    # -- activations offloaded to host memory, copied beside the forward and backward ---------
    off = _offload(job, plan, micro, gpu)
    offload_mb = offload_exposed_s(off, gpu, win_fwd, win_bwd) if off.layers else 0.0

    # -- the host issuing the kernels (designer.perf.host) -------------------------------------
    host_mb = host_stall_mb_s(job, plan, gpu, st.layer, layers_stage, mp.ep_mb_s)

    # -- pipeline schedule -------------------------------------------------------------------
    pp_exposed_mb = mp.pp_exposed_mb_s
    exposed_mb = mp.sync_exposed_mb_s + pp_exposed_mb + dp_mb_exposed + offload_mb
    t_mb = compute_mb + exposed_mb + host_mb
    chunks = st.chunks
    if pp > 1 and plan.schedule != "dualpipe":
        # The fill runs the first micro-batch's forward through all p v chunks and the drain the
        # last one's backward back: 2 (p v - 1) sends in a row that no compute hides, however the
        # steady state overlaps its own (pipeline.fill_drain_sends). The chunks on that path wait
        # for their compute and their synchronous traffic (TP, CP, expert all-to-all, offload
        # copies), not for the data-parallel collectives they launch: those are asynchronous
        # (Megatron-Core's overlap_grad_reduce is waited on in finish_grad_sync before the
        # optimizer; FSDP2 reduce-scatters on their own stream) and finish in the stage's idle
        # time of the fill and drain, so their per-micro-batch exposure is counted m times, not
        # again in the bubble.
        bubble = chunks * (t_mb - pp_exposed_mb - dp_mb_exposed) + fill_drain_sends(pp, v) * mp.pp_mb_s / (2.0 * v)
    else:
        bubble = chunks * t_mb

    if plan.zero >= 1:
        opt_params = params.dense / (plan.dp * plan.cp) + params.expert / plan.expert_dp
    else:
        opt_params = params.total
    optimizer = optimizer_step_s(opt_params, gpu) / speed
    step_wo_ckpt = micro * t_mb + bubble + dp_step_exposed + optimizer
    checkpoint = 0.0
    if job.checkpoint_interval_s is not None and job.checkpoint_write_Bps_per_node:
        # The storage figure per node is the SuperPOD RA's per 8-GPU DGX; a 72-GPU domain is
        # nine such nodes of storage bandwidth (one storage NIC per 4-GPU tray), not one.
        nodes = math.ceil(plan.gpus / min(gpn, _STORAGE_NODE_GPUS))
        write_s = (m.params_total() * K.CHECKPOINT_BYTES_PER_PARAM
                   / (nodes * job.checkpoint_write_Bps_per_node))
        if write_s >= job.checkpoint_interval_s:
            raise PerfError(
                f"writing a checkpoint takes {write_s:.0f} s, longer than the "
                f"{job.checkpoint_interval_s:.0f} s checkpoint interval; write faster or less often"
            )
        checkpoint = step_wo_ckpt * write_s / (job.checkpoint_interval_s - write_s)
    step = step_wo_ckpt + checkpoint
    return Timing(step, compute_mb, micro, layers_stage, mp.tp_layer_s, mp.cp_layer_s, mp.ep_mb_s, mp.pp_mb_s,
                  dp_comm, exposed_mb, dp_step_exposed, bubble, optimizer, checkpoint, offload_mb, host_mb)
