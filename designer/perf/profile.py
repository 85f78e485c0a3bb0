"""Types of a software stack's profile: attention kernels, gathers, data-parallel schedules.

The profiles themselves, with their sources, are :mod:`designer.perf.stacks`; a profile with the
user's knobs is :class:`designer.perf.software.Software`.
"""

from __future__ import annotations

__all__ = ["Attention", "Gather", "DpSchedule", "Profile"]

from dataclasses import dataclass
from enum import Enum

from designer.perf import constants as K


class Attention(str, Enum):
    """Attention kernel: fused (FlashAttention-style, scores never in HBM) or unfused (softmax
    materialised, Megatron-LM before December 2022)."""

    FLASH = "flash"
    UNFUSED = "unfused"


class Gather(str, Enum):
    """How a stack's ZeRO-3 / FSDP parameter all-gather uses the network.

    ``ring``: NCCL rings over the node's NICs, one channel per NIC, so a node's NICs share the
    group's traffic (PyTorch FSDP's per-unit all-gather; Megatron-FSDP). ``per_gpu``: every GPU's
    own NIC carries its whole share, as DeepSpeed's flat ``all_gather_coalesced`` over the full
    data-parallel group does (hierarchy only with hpZ or MiCS, which the preset does not use).
    """

    RING = "ring"
    PER_GPU = "per_gpu"


@dataclass(frozen=True, slots=True)
class DpSchedule:
    """When one ZeRO stage of a stack moves its data-parallel traffic.

    ``reduce_per_microbatch``: gradients are reduced (reduce-scattered) after every micro-batch's
    backward, layer by layer, because the stage keeps only a shard of them; otherwise they
    accumulate unsharded and are reduced once a step, after the last backward. ``gathers``:
    parameter all-gathers per micro-batch: 0 once a step (the updated shards, before the first
    forward; none at all for replicated ZeRO-0), 1 before each forward, 2 before each forward and
    again before each backward (parameters resharded after the forward).
    """

    reduce_per_microbatch: bool
    gathers: int


@dataclass(frozen=True, slots=True)
class Profile:
    """What one training stack can do and how it communicates (a documented preset).

    Capabilities (the plan search uses only these): ``flash_attention``, ``sequence_parallel``
    (Megatron-style, with tensor parallelism), ``selective_recompute``, ``context_parallel``,
    ``expert_parallel``, ``interleaving`` (interleaved 1F1B), ``uneven_pipeline`` (first and last
    stages with other layer counts), ``tp_comm_overlap`` (TP collectives pipelined with GEMMs),
    ``tp_backward_overlap`` (without ``tp_comm_overlap``, the column-parallel layers' backward
    launches the input-gradient reduction, and with sequence parallelism the re-gather of their
    input, asynchronously beside the weight- and input-gradient GEMMs),
    ``zero_stages`` and ``zero_with_pipeline`` (the highest ZeRO stage pipeline parallelism
    allows).

    Data-parallel schedule: ``dp_schedules``, one :class:`DpSchedule` per ZeRO stage 0-3 (``None``
    where the stack lacks the stage): which traffic runs once a step and which every micro-batch.

    Communication: ``dp_overlap`` (default of the ``dp_overlap`` knob: gradient reduction and
    parameter gathers overlapped with compute), ``overlap_zero12`` (whether that default holds for
    ZeRO 0-2, or only for ZeRO-3, as DeepSpeed's ``overlap_comm``), ``grad_bucket_params``
    (gradients reduced in buckets of this many parameters; ``None``: per layer),
    ``whole_buffer_reduce`` (one all-reduce of the whole gradient buffer after the backward),
    ``selective_ops`` (selective recomputation keeps the matmul outputs and recomputes the
    element-wise ops between them, torchtitan's policy, instead of only the attention core),
    ``fused_elementwise`` (norms, rotary embeddings and activations run as fused kernels;
    ``False``: one kernel per PyTorch op unless compiled), ``gather`` (:class:`Gather`),
    ``prefetch_params`` (ZeRO-3 prefetch depth in parameters;
    ``None``: a whole layer ahead), ``fsdp_overlap_efficiency`` (the share of ZeRO-3 traffic
    that can overlap at all), ``p2p_overlap`` and ``cp_overlap`` (pipeline sends and ring-attention
    exchanges overlapped with compute), ``hopper_attention`` (the fused attention kernel is written
    for Hopper and later, with TMA and warpgroup MMA: FlashAttention-3 or cuDNN's fused attention
    in Transformer Engine; ``False``: FlashAttention-2-class kernels, which run far below their
    A100 efficiency on Hopper and Blackwell).
    ``chunk_grad_sync``: with pipeline parallelism the schedule launches a model chunk's
    once-a-step gradient reduction only after that chunk's last backward, so the first stage's
    first chunk, whose backward ends the step, reduces with nothing left to hide behind:
    ``"interleaved"`` where that holds with interleaving only (Megatron-Core's aligned grad sync;
    plain 1F1B reduces bucket by bucket during the first stage's last backward), ``"always"``
    where it holds for every pipeline (a post-backward hook run after the stage's last backward),
    ``"never"`` where the reduction runs bucket by bucket inside the backward.
    ``unprefetched_chunks``: with interleaving, how many of a stage's first model chunks gather
    their parameters only when their own first forward starts (each exposes its first bucket).
    ``min_interleaved_pp``: the fewest pipeline stages the stack's interleaved schedule runs on.
    ``tp_overlap_single_queue``: the stack's tensor- and context-parallel overlap relies on one
    CUDA hardware queue (``CUDA_DEVICE_MAX_CONNECTIONS=1``, so a collective launched before a GEMM
    runs beside it) on GPUs before Blackwell, and its ZeRO 2-3 implementation does not run with
    one queue: there such plans expose their TP and CP traffic whole.
    ``micro_pipelined_tp``: the stack's ``tp_comm_overlap`` is PyTorch's AsyncTP, a compiler pass
    that decomposes only the collectives adjacent to a single GEMM
    (:func:`designer.perf.overlap.async_tp_exposed_s`); ``False``: every TP collective is pipelined
    with its GEMM (Megatron-Core userbuffers). ``tp_overlap_needs_compile``: the stack runs that
    overlap only under ``torch.compile`` and refuses it otherwise (torchtitan).

    Numerics and memory: ``dropout`` (the recipes of the stack's era keep hidden and attention
    dropout), ``weight_bytes``, ``grad_bytes``, ``optimizer_bytes`` per parameter (before
    sharding), ``grad_reduce_bytes`` and ``gather_bytes`` per parameter on the wire,
    ``loss_bytes`` per vocabulary logit held at once while the loss is computed (the 16-bit
    logits, their FP32 copy and what the cross entropy keeps for backward, at the loss's peak).
    ``kv_repeat``: the attention repeats the grouped keys and values to every query head before
    the kernel, which saves the repeated copies for backward. ``tp_saves_gathered``: a
    column-parallel linear under sequence parallelism saves its all-gathered input for the weight
    gradient (instead of the sequence shard, gathered again in backward). ``tp_loss_bytes``: the
    loss's bytes per logit when tensor parallelism splits the vocabulary, if its vocab-parallel
    loss holds other temporaries (``None``: ``loss_bytes``).
    ``ring_merge_fp32``: the stack's ring attention merges each step's partial output and
    accumulates the query, key and value gradients in FP32, one PyTorch op at a time
    (:func:`designer.perf.compute.ring_attention_bytes`).
    ``activation_offload``: the stack can keep whole layers' activations in host memory
    (:mod:`designer.perf.offload`). ``expert_folding``: the stack can give the experts a
    tensor-parallel size of their own (``Plan.etp``), which the plan search then tries.
    """

    name: str
    flash_attention: bool
    sequence_parallel: bool
    selective_recompute: bool
    context_parallel: bool
    expert_parallel: bool
    interleaving: bool
    uneven_pipeline: bool
    tp_comm_overlap: bool
    tp_backward_overlap: bool
    zero_stages: tuple[int, ...]
    zero_with_pipeline: int
    dp_schedules: tuple[DpSchedule | None, ...]
    dp_overlap: bool
    overlap_zero12: bool
    grad_bucket_params: float | None
    bucket_params_per_rank: float
    whole_buffer_reduce: bool
    gather: Gather
    prefetch_params: float | None
    fsdp_overlap_efficiency: float
    p2p_overlap: bool
    cp_overlap: bool
    hopper_attention: bool
    fused_elementwise: bool
    selective_ops: bool
    dropout: bool
    weight_bytes: float
    grad_bytes: float
    optimizer_bytes: float
    grad_reduce_bytes: float
    gather_bytes: float
    loss_bytes: float
    source: str
    activation_offload: bool = False  # activations of whole layers copied to host memory (designer.perf.offload)
    expert_folding: bool = False  # an expert tensor-parallel size below tp (MoE parallel folding)
    chunk_grad_sync: str = "never"  # "never" | "interleaved" | "always" (see the class docstring)
    unprefetched_chunks: int = 1
    min_interleaved_pp: int = 2
    tp_overlap_single_queue: bool = False
    micro_pipelined_tp: bool = False
    kv_repeat: bool = False  # K and V saved repeated to every query head (memory)
    tp_saves_gathered: bool = False  # the all-gathered column-parallel inputs saved whole (memory)
    tp_loss_bytes: float | None = None  # loss bytes per logit with the vocabulary split over tp
    tp_overlap_needs_compile: bool = False  # tp_comm_overlap only with the compile knob (AsyncTP's pass)
    ring_merge_fp32: bool = False  # ring attention's FP32 merges and gradient sums, op by op (time)

    @property
    def default_attention(self) -> Attention:
        """The kernel the stack runs unless told otherwise."""
        return Attention.FLASH if self.flash_attention else Attention.UNFUSED

    def tp_overlap_lost(self, zero: int, tp: int, cp: int, scaleup_kind: str) -> bool:
        """Whether a plan's TP and CP traffic is exposed whole: ZeRO 2-3 with tp or cp above 1 on a
        GPU before Blackwell (``PRE_BLACKWELL_SCALEUP_KINDS``), where the stack's overlap needs one
        CUDA queue its ZeRO 2-3 cannot run with (``tp_overlap_single_queue``)."""
        return (self.tp_overlap_single_queue and zero >= 2 and (tp > 1 or cp > 1)
                and scaleup_kind.lower() in K.PRE_BLACKWELL_SCALEUP_KINDS)

    def dp_schedule(self, zero: int) -> DpSchedule:
        """The data-parallel schedule of ZeRO stage ``zero`` (the stack's first stage if it lacks it)."""
        sched = self.dp_schedules[zero] if 0 <= zero < len(self.dp_schedules) else None
        return sched if sched is not None else next(s for s in self.dp_schedules if s is not None)
