"""Software stacks: what each training framework can do and how it communicates, with sources.

A :class:`Profile` is a documented preset (``megatron-core``, ``megatron-lm-2021``,
``deepspeed``, ``fsdp2``): the parallelism features the stack has (the plan search uses no
other), how it shards and gathers data-parallel state, which communication it overlaps with
compute, and how much of it can hide. :class:`Software` is a profile with the user's knobs
(``attention``, ``sequence_parallel``, ``tp_comm_overlap``, ``dp_overlap``) resolved against it;
a knob the stack cannot honour is a :class:`~designer.errors.PerfError` naming the knob.

Sources, per feature, are in each profile's ``source`` and in docs/model.md ("Software
stacks"); the dates of Megatron-LM features are the first commits of their command-line flags
(NVIDIA/Megatron-LM git history).
"""

from __future__ import annotations

__all__ = [
    "Attention",
    "Gather",
    "Profile",
    "Software",
    "PROFILES",
    "PRESET_NAMES",
    "DEFAULT_PRESET",
    "resolve",
    "profile",
]

from dataclasses import dataclass
from enum import Enum

from designer.errors import PerfError


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
class Profile:
    """What one training stack can do and how it communicates (a documented preset).

    Capabilities (the plan search uses only these): ``flash_attention``, ``sequence_parallel``
    (Megatron-style, with tensor parallelism), ``selective_recompute``, ``context_parallel``,
    ``expert_parallel``, ``interleaving`` (interleaved 1F1B), ``uneven_pipeline`` (first and last
    stages with other layer counts), ``tp_comm_overlap`` (TP collectives pipelined with GEMMs),
    ``zero_stages`` and ``zero_with_pipeline`` (the highest ZeRO stage pipeline parallelism
    allows).

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
    exchanges overlapped with compute).

    Numerics and memory: ``dropout`` (the recipes of the stack's era keep hidden and attention
    dropout), ``weight_bytes``, ``grad_bytes``, ``optimizer_bytes`` per parameter (before
    sharding), ``grad_reduce_bytes`` and ``gather_bytes`` per parameter on the wire.
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
    zero_stages: tuple[int, ...]
    zero_with_pipeline: int
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
    fused_elementwise: bool
    selective_ops: bool
    dropout: bool
    weight_bytes: float
    grad_bytes: float
    optimizer_bytes: float
    grad_reduce_bytes: float
    gather_bytes: float
    source: str

    @property
    def default_attention(self) -> Attention:
        """The kernel the stack runs unless told otherwise."""
        return Attention.FLASH if self.flash_attention else Attention.UNFUSED


_MEGATRON_CORE = Profile(
    name="megatron-core",
    flash_attention=True,  # Transformer Engine fused attention (cuDNN / FlashAttention)
    sequence_parallel=True,  # --sequence-parallel (2022-04-28)
    selective_recompute=True,  # --recompute-granularity selective (2022-05-16)
    context_parallel=True,  # --context-parallel-size (2023-10-12)
    expert_parallel=True,
    interleaving=True,  # --num-layers-per-virtual-pipeline-stage
    uneven_pipeline=True,  # --decoder-first/last-pipeline-num-layers (2024-09-05)
    tp_comm_overlap=True,  # --tp-comm-overlap, userbuffers (2023-10-23); needs SP
    zero_stages=(0, 1, 2, 3),  # DDP; distributed optimizer; Megatron-FSDP optim_grads(_params)
    zero_with_pipeline=3,
    dp_overlap=True,  # NeMo/Megatron-Bridge recipes set --overlap-grad-reduce --overlap-param-gather
    overlap_zero12=True,
    # DistributedDataParallelConfig.bucket_size = max(40M, 1M x dp) parameters; "this overlap
    # method exposes only one DP communication chunk" (Megatron-Bridge communication-overlap docs).
    grad_bucket_params=40e6,
    bucket_params_per_rank=1e6,
    whole_buffer_reduce=False,
    gather=Gather.RING,  # Megatron-FSDP all-gathers per layer with NCCL rings
    prefetch_params=None,
    fsdp_overlap_efficiency=0.90,  # as FSDP: the first layer forward, the last backward (below)
    p2p_overlap=True,  # overlap_p2p_comm with the interleaved schedule (NeMo default)
    cp_overlap=True,  # TE ring attention overlaps the K/V exchange with the attention kernel
    fused_elementwise=True,  # Transformer Engine / Apex fused norms, RoPE, activations
    selective_ops=False,  # selective recomputation: the attention core (Korthikanti et al. 2022)
    dropout=False,  # current pre-training recipes (Llama, Nemotron) run without dropout
    # NeMo/Megatron-Bridge performance recipes set grad_reduce_in_fp32=False, and Megatron-Core's
    # DDP keeps the gradient buffer in the reduce dtype: 2 (bf16 weights) + 2 (bf16 gradients) +
    # 12 (FP32 master and Adam moments, sharded by the distributed optimizer).
    weight_bytes=2.0, grad_bytes=2.0, optimizer_bytes=12.0,
    grad_reduce_bytes=2.0, gather_bytes=2.0,
    source="NVIDIA/Megatron-LM megatron/training/arguments.py, megatron/core/distributed "
           "(DistributedDataParallelConfig), docs/user-guide/features/dist_optimizer.md; "
           "NVIDIA-NeMo/Megatron-Bridge docs/training/communication-overlap.md",
)

_MEGATRON_LM_2021 = Profile(
    name="megatron-lm-2021",
    # Tag v2.5 (2021-08-10, the SC21 code): torch.baddbmm materialises the [b*np, sq, sk] scores,
    # FusedScaleMaskSoftmax, dropout on the probabilities, torch.bmm with V (no FlashAttention
    # until --use-flash-attn, 2022-12-08).
    flash_attention=False,
    sequence_parallel=False,  # arrived 2022-04-28
    selective_recompute=False,  # only --checkpoint-activations (full layers)
    context_parallel=False,
    expert_parallel=False,
    interleaving=True,  # interleaved 1F1B with the scatter/gather optimisation (SC21 sec. 2.2, 4.1)
    uneven_pipeline=False,  # layers must divide evenly over the stages
    tp_comm_overlap=False,
    zero_stages=(0,),  # no distributed optimizer until 2022-02-10
    zero_with_pipeline=0,
    # --DDP-impl local (default): one all-reduce of the contiguous gradient buffer after
    # forward_backward_func returns (megatron/training.py), nothing overlapped.
    dp_overlap=False,
    overlap_zero12=True,
    grad_bucket_params=6.25e6,  # --DDP-impl torch: PyTorch DDP buckets of 25 MB (FP32 grads)
    bucket_params_per_rank=0.0,
    whole_buffer_reduce=True,
    gather=Gather.RING,
    prefetch_params=None,
    fsdp_overlap_efficiency=0.90,
    p2p_overlap=False,  # batched isend/irecv waited on before the next compute
    cp_overlap=False,
    fused_elementwise=True,  # bias-GeLU, bias-dropout-add, scale-mask-softmax and layer-norm kernels
    selective_ops=False,  # selective recomputation: the attention core (Korthikanti et al. 2022)
    dropout=True,  # GPT-3 recipes: hidden and attention dropout 0.1
    # FP16 weights, FP32 main gradients, FP32 master and Adam: 18 bytes per parameter
    # (Korthikanti et al. 2022, Fig. 1: 45.56 GiB for 22B on 8 GPUs).
    weight_bytes=2.0, grad_bytes=4.0, optimizer_bytes=12.0,
    grad_reduce_bytes=2.0, gather_bytes=2.0,
    source="NVIDIA/Megatron-LM tag v2.5 megatron/model/transformer.py, megatron/model/distributed.py, "
           "megatron/training.py, megatron/arguments.py; flag dates from the repository history",
)

_DEEPSPEED = Profile(
    name="deepspeed",
    flash_attention=True,  # Megatron-DeepSpeed --use-flash-attn; HF models via SDPA
    sequence_parallel=True,  # Megatron-DeepSpeed --sequence-parallel (Megatron-LM's), not Ulysses
    selective_recompute=True,  # Megatron-DeepSpeed --recompute-granularity selective
    context_parallel=False,  # DeepSpeed-Ulysses is all-to-all sequence parallelism: not modelled
    expert_parallel=True,  # DeepSpeed-MoE
    interleaving=False,  # the DeepSpeed pipeline engine runs non-interleaved 1F1B only
    uneven_pipeline=True,  # --pp-partition-method type:transformer|embedding (BLOOM)
    tp_comm_overlap=False,
    zero_stages=(0, 1, 2, 3),
    zero_with_pipeline=1,  # the pipeline engine supports ZeRO-1 only
    # zero/config.py: overlap_comm None resolves to True only for stage 3.
    dp_overlap=True,
    overlap_zero12=False,
    grad_bucket_params=5e8,  # reduce_bucket_size = allgather_bucket_size = 5e8 elements
    bucket_params_per_rank=0.0,
    whole_buffer_reduce=False,
    # partitioned_param_coordinator: all_gather_coalesced over the whole data-parallel group.
    gather=Gather.PER_GPU,
    prefetch_params=5e7,  # stage3_prefetch_bucket_size = 5e7 elements
    fsdp_overlap_efficiency=1.0,  # bounded by the prefetch bucket instead
    p2p_overlap=False,
    cp_overlap=False,
    fused_elementwise=True,  # Megatron-DeepSpeed keeps Megatron's fused kernels
    selective_ops=False,  # selective recomputation: the attention core (Korthikanti et al. 2022)
    dropout=False,
    # ZeRO (Rajbhandari et al. 2020, sec. 5): 16-bit weights and gradients, 12 bytes of FP32
    # master and Adam state: 2 + 2 + 12 / Nd at stage 1.
    weight_bytes=2.0, grad_bytes=2.0, optimizer_bytes=12.0,
    grad_reduce_bytes=2.0, gather_bytes=2.0,
    source="microsoft/DeepSpeed deepspeed/runtime/zero/config.py (stage3_prefetch_bucket_size, "
           "reduce_bucket_size, overlap_comm), partitioned_param_coordinator.py, runtime/pipe/engine.py; "
           "microsoft/Megatron-DeepSpeed megatron/arguments.py",
)

_FSDP2 = Profile(
    name="fsdp2",
    flash_attention=True,  # F.scaled_dot_product_attention (FlashAttention-2 / cuDNN backends)
    sequence_parallel=True,  # DTensor TP plans put norms in SequenceParallel (torchtitan)
    selective_recompute=True,  # torchtitan selective (op / layer) activation checkpointing
    context_parallel=True,  # torch.distributed.tensor.experimental.context_parallel (ring attention)
    expert_parallel=True,
    interleaving=True,  # torch.distributed.pipelining ScheduleInterleaved1F1B
    uneven_pipeline=True,  # stages are split by module names, any count per stage
    tp_comm_overlap=True,  # AsyncTP (torch._micro_pipeline_tp with torch.compile)
    zero_stages=(0, 2, 3),  # replicate; reshard_after_forward=False; FULL_SHARD
    zero_with_pipeline=3,
    dp_overlap=True,  # FSDP2 always prefetches the next all-gather (backward pre-hook), no knob
    overlap_zero12=True,
    grad_bucket_params=None,  # one reduce-scatter per FSDP unit (layer)
    bucket_params_per_rank=0.0,
    whole_buffer_reduce=False,
    gather=Gather.RING,
    prefetch_params=None,
    # "In practice, the overlap percentage possible is 90% since the first block during forward
    # pass and the last block during backward pass are not able to overlap" (PyTorch blog,
    # "Maximizing training throughput using PyTorch FSDP", IBM and Meta, 2024-03-13).
    fsdp_overlap_efficiency=0.90,
    p2p_overlap=False,
    cp_overlap=True,
    fused_elementwise=False,  # eager PyTorch modules unless torch.compile runs (the `compile` knob)
    # torchtitan's selective (op) checkpointing saves the matmul and attention outputs and recomputes
    # the element-wise ops between them: the norm outputs and the MLP activation are not kept
    selective_ops=True,
    dropout=False,
    # BF16 compute copy 2, FP32 gradients 4, FP32 master (the sharded parameter) and Adam
    # moments 12: the same 18 bytes as Megatron.
    weight_bytes=2.0, grad_bytes=4.0, optimizer_bytes=12.0,
    grad_reduce_bytes=4.0,  # torchtitan mixed_precision_reduce = float32
    gather_bytes=2.0,  # param_dtype bf16
    source="pytorch/torchtitan docs/fsdp.md, torchtitan/config (mixed_precision_param/reduce), "
           "torchtitan/distributed (parallelize, pipelining); Zhao et al., PyTorch FSDP, PVLDB 2023",
)

PROFILES: dict[str, Profile] = {p.name: p for p in (_MEGATRON_CORE, _MEGATRON_LM_2021, _DEEPSPEED, _FSDP2)}
PRESET_NAMES: tuple[str, ...] = tuple(PROFILES)
DEFAULT_PRESET = "megatron-core"


def profile(name: str) -> Profile:
    """The profile of a preset name.

    Raises:
        PerfError: unknown preset.
    """
    try:
        return PROFILES[name]
    except KeyError:
        raise PerfError(f"unknown software preset {name!r}; one of {', '.join(PRESET_NAMES)}") from None


@dataclass(frozen=True, slots=True)
class Software:
    """A profile with the user's knobs resolved.

    ``sequence_parallel``: ``None`` is auto (used with tensor parallelism where the stack has it),
    ``False`` never, ``True`` always with tensor parallelism. ``dp_overlap``: ``None`` keeps the
    profile's default (which for DeepSpeed depends on the ZeRO stage). ``dropout``: hidden and
    attention dropout (``None``: the profile's recipes). ``compile``: ``torch.compile`` fuses the
    element-wise ops of a stack that otherwise runs them eagerly (FSDP2).
    """

    profile: Profile = _MEGATRON_CORE
    attention: Attention = Attention.FLASH
    sequence_parallel: bool | None = None
    tp_comm_overlap: bool = False
    dp_overlap: bool | None = None
    dropout: bool | None = None
    compile: bool = False

    @property
    def eager(self) -> bool:
        """Element-wise work runs one PyTorch op per kernel (not fused, not compiled)."""
        return not self.profile.fused_elementwise and not self.compile

    @property
    def uses_dropout(self) -> bool:
        """Whether hidden and attention dropout run (masks kept, kernels launched)."""
        return self.profile.dropout if self.dropout is None else self.dropout

    @property
    def preset(self) -> str:
        """The preset's name."""
        return self.profile.name

    @property
    def flash(self) -> bool:
        """Whether attention runs in a fused kernel."""
        return self.attention is Attention.FLASH

    def overlaps_dp(self, zero: int) -> bool:
        """Whether data-parallel communication overlaps compute at this ZeRO stage."""
        if self.dp_overlap is not None:
            return self.dp_overlap
        return self.profile.dp_overlap and (zero >= 3 or self.profile.overlap_zero12)

    def sp_choices(self, tp: int) -> tuple[bool, ...]:
        """Sequence-parallel settings the plan search tries at tensor-parallel width ``tp``."""
        if tp == 1 or self.sequence_parallel is False or not self.profile.sequence_parallel:
            return (False,)
        return (True,)

    def describe(self) -> dict[str, object]:
        """The stack as recorded in ``estimate --json`` and the design file."""
        return {
            "preset": self.preset,
            "attention": self.attention.value,
            "sequence_parallel": "auto" if self.sequence_parallel is None else self.sequence_parallel,
            "tp_comm_overlap": self.tp_comm_overlap,
            "dp_overlap": self.dp_overlap if self.dp_overlap is not None else self.profile.dp_overlap,
            "dropout": self.uses_dropout,
            "compile": self.compile,
        }


def resolve(preset: str | None = None, *, attention: str | None = None, sequence_parallel: bool | None = None,
            tp_comm_overlap: bool | None = None, dp_overlap: bool | None = None,
            dropout: bool | None = None, compile: bool | None = None) -> Software:
    """A :class:`Software` from a preset name and the knobs given (``None``: the preset's default).

    Raises:
        PerfError: an unknown preset, or a knob the stack cannot honour; the message starts with
            the knob's name (``software.attention``, ...).
    """
    prof = profile(preset or DEFAULT_PRESET)
    if attention is None:
        att = prof.default_attention
    else:
        try:
            att = Attention(attention)
        except ValueError:
            raise PerfError(f"software.attention must be flash or unfused, not {attention!r}") from None
        if att is Attention.FLASH and not prof.flash_attention:
            raise PerfError(f"software.attention: {prof.name} has no fused attention kernel (FlashAttention "
                            "arrived in Megatron-LM in December 2022); use unfused")
    if sequence_parallel is True and not prof.sequence_parallel:
        raise PerfError(f"software.sequence_parallel: {prof.name} has no sequence parallelism "
                        "(Megatron-LM added it in April 2022); use false or auto")
    overlap_tp = bool(tp_comm_overlap)
    if overlap_tp and not prof.tp_comm_overlap:
        raise PerfError(f"software.tp_comm_overlap: {prof.name} cannot overlap tensor-parallel "
                        "communication with GEMMs; use false")
    if overlap_tp and sequence_parallel is False:
        raise PerfError("software.tp_comm_overlap needs sequence parallelism (Megatron-Core userbuffers and "
                        "AsyncTP overlap the sequence-parallel all-gather and reduce-scatter); "
                        "set sequence_parallel to auto or true")
    if compile and prof.fused_elementwise:
        raise PerfError(f"software.compile: {prof.name} already fuses its element-wise kernels; compile "
                        "applies to stacks that run PyTorch ops eagerly (fsdp2)")
    return Software(prof, att, sequence_parallel, overlap_tp, dp_overlap, dropout, bool(compile))
