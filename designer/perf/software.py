"""Software stacks: a profile with the user's knobs resolved against it.

A :class:`~designer.perf.profile.Profile` is a documented preset (:mod:`designer.perf.stacks`:
``megatron-core``, ``megatron-lm-2021``, ``deepspeed``, ``fsdp2``, ``torchtitan``): the parallelism features the
stack has (the plan search uses no other), how it shards and gathers data-parallel state, which
communication it overlaps with compute, and how much of it can hide. :class:`Software` is a
profile with the user's knobs (``attention``, ``sequence_parallel``, ``tp_comm_overlap``,
``dp_overlap``, ``p2p_overlap``, ``dropout``, ``compile``, ``moe_dispatcher``,
``in_network_reduction``, ``checkpoint_saves``, ``cuda_graphs``) resolved against it; a knob the stack cannot honour is a
:class:`~designer.errors.PerfError` naming the knob.
"""

from __future__ import annotations

__all__ = [
    "Attention",
    "Gather",
    "DpSchedule",
    "Profile",
    "Software",
    "PROFILES",
    "PRESET_NAMES",
    "CHECKPOINT_SAVES",
    "CUDA_GRAPHS",
    "MOE_DISPATCHERS",
    "DEFAULT_PRESET",
    "resolve",
    "profile",
]

from dataclasses import dataclass

from designer.errors import PerfError
from designer.perf.profile import Attention, DpSchedule, Gather, Profile
from designer.perf.stacks import DEFAULT_PRESET, PRESET_NAMES, PROFILES, profile

_MEGATRON_CORE = PROFILES[DEFAULT_PRESET]

# What a selective recomputation keeps for the backward (the ``checkpoint_saves`` knob):
# * ``all_but_attention_core``: everything but the attention core (QK^T, softmax, dropout, the product
#   with V), recomputed in the backward (Korthikanti et al. 2022, sec. 5; Megatron-Core
#   --recompute-granularity selective);
# * ``every_other_matmul``: the outputs of all compute ops except every second matmul, the element-wise
#   ops between them recomputed (torchtitan's per-op policy, "saves output of all compute ops, except
#   every second mm", torchtitan/distributed/activation_checkpoint.py);
# * ``linear_outputs``: the outputs of every linear layer, the element-wise ops between them recomputed
#   (LLaMA, Touvron et al. 2023, sec. 2.4: "we save the activations that are expensive to compute, such
#   as the outputs of linear layers", with a hand-written backward of the transformer layers).
CHECKPOINT_SAVES = ("all_but_attention_core", "every_other_matmul", "linear_outputs")

# How MoE tokens reach their experts (designer.perf.network.dispatch_all_to_all_s): NCCL all-to-all,
# DeepEP, or HybridEP (NVIDIA's DeepEP-like library for NVL72 and InfiniBand, deepseek-ai/DeepEP
# branch hybrid-ep; Megatron-Core --moe-token-dispatcher-type flex --moe-flex-dispatcher-backend).
MOE_DISPATCHERS = ("nccl", "deepep", "hybridep")

# CUDA graphs (designer.perf.host): none; partial, Transformer Engine's capture of the static parts of
# each layer (Megatron-Core --cuda-graph-impl transformer_engine --cuda-graph-scope attn moe_router
# moe_preprocess); full, every op of a layer (--cuda-graph-impl local). Every preset defaults to none:
# Megatron-Core's --cuda-graph-impl defaults to none (megatron/training/arguments.py), graphs being an
# opt-in that needs static shapes and its own memory pool (Megatron-LM docs/discussions/
# deepseek-v3-gb200-optimization, sec. 2.3); torchtitan, DeepSpeed and Megatron-LM 2021 capture none.
CUDA_GRAPHS = ("none", "partial", "full")
_GRAPH_STACKS = ("megatron-core",)  # the presets that can capture graphs (the others: none only)


@dataclass(frozen=True, slots=True)
class Software:
    """A profile with the user's knobs resolved.

    ``sequence_parallel``: ``None`` is auto (used with tensor parallelism where the stack has it),
    ``False`` never, ``True`` always with tensor parallelism. ``dp_overlap``: ``None`` keeps the
    profile's default (which for DeepSpeed depends on the ZeRO stage). ``p2p_overlap``: pipeline
    sends and receives posted ahead of the compute that needs them (``None``: the profile's
    schedule; Megatron-Core's only in the interleaved schedule). ``dropout``: hidden and
    attention dropout (``None``: the profile's recipes). ``compile``: ``torch.compile`` fuses the
    element-wise ops of a stack that otherwise runs them eagerly (FSDP2). ``moe_dispatcher``: how
    MoE tokens reach their experts, ``nccl`` (NCCL all-to-all, every routed copy on the wire) or
    ``deepep`` (DeepEP, one copy per destination node over the network, then NVLink).
    ``in_network_reduction``: NCCL may reduce in the fabric's switches (InfiniBand SHARP through
    NCCL's CollNet algorithms) where the fabric can. NCCL does not by default: CollNet needs the
    NCCL-RDMA-SHARP plugin loaded and ``NCCL_COLLNET_ENABLE=1`` (NCCL docs, Environment Variables,
    ``NCCL_COLLNET_ENABLE``, default 0; NVIDIA HPC-X docs, "NCCL-RDMA-SHARP Plugins"), so it is off
    unless the stack says so. NVLink SHARP inside a node (NVLS) is on by default and not governed
    by this knob (``NCCL_NVLS_ENABLE``, default 1).
    ``checkpoint_saves``: what a selective recomputation keeps (:data:`CHECKPOINT_SAVES`; ``None``: the
    profile's policy, :attr:`selective_policy`). ``cuda_graphs``: which launches CUDA graphs replace
    (:data:`CUDA_GRAPHS`; :mod:`designer.perf.host`). ``moe_dispatcher`` may also be ``hybridep``
    (HybridEP: DeepEP's traffic, :data:`MOE_DISPATCHERS`).
    """

    profile: Profile = _MEGATRON_CORE
    attention: Attention = Attention.FLASH
    sequence_parallel: bool | None = None
    tp_comm_overlap: bool = False
    dp_overlap: bool | None = None
    dropout: bool | None = None
    compile: bool = False
    p2p_overlap: bool | None = None
    moe_dispatcher: str = "nccl"  # nccl | deepep | hybridep (designer.perf.network.dispatch_all_to_all_s)
    in_network_reduction: bool = False  # NCCL CollNet / SHARP enabled (designer.perf.network.links_for)
    checkpoint_saves: str | None = None  # one of CHECKPOINT_SAVES; None: the profile's policy
    cuda_graphs: str = "none"  # one of CUDA_GRAPHS (designer.perf.host)

    @property
    def eager(self) -> bool:
        """Element-wise work runs one PyTorch op per kernel (not fused, not compiled)."""
        return not self.profile.fused_elementwise and not self.compile

    @property
    def uses_dropout(self) -> bool:
        """Whether hidden and attention dropout run (masks kept, kernels launched)."""
        return self.profile.dropout if self.dropout is None else self.dropout

    @property
    def selective_policy(self) -> str:
        """What selective recomputation keeps: the knob, else the profile's policy (torchtitan's per-op
        policy where ``selective_ops``, Megatron's attention-core recomputation otherwise)."""
        if self.checkpoint_saves is not None:
            return self.checkpoint_saves
        return "every_other_matmul" if self.profile.selective_ops else "all_but_attention_core"

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

    def overlaps_p2p(self, interleaved: bool) -> bool:
        """Whether pipeline sends overlap compute: the knob, else the profile's schedule (Megatron-Core
        overlaps them only in the interleaved schedule)."""
        if self.p2p_overlap is not None:
            return self.p2p_overlap
        return self.profile.p2p_overlap and interleaved

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
            "p2p_overlap": self.p2p_overlap if self.p2p_overlap is not None else self.profile.p2p_overlap,
            "dropout": self.uses_dropout,
            "compile": self.compile,
            "moe_dispatcher": self.moe_dispatcher,
            "in_network_reduction": self.in_network_reduction,
            "checkpoint_saves": self.selective_policy,
            "cuda_graphs": self.cuda_graphs,
        }


def resolve(preset: str | None = None, *, attention: str | None = None, sequence_parallel: bool | None = None,
            tp_comm_overlap: bool | None = None, dp_overlap: bool | None = None,
            dropout: bool | None = None, compile: bool | None = None,
            p2p_overlap: bool | None = None, moe_dispatcher: str | None = None,
            in_network_reduction: bool | None = None, checkpoint_saves: str | None = None,
            cuda_graphs: str | None = None) -> Software:
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
                        "applies to stacks that run PyTorch ops eagerly (fsdp2, torchtitan)")
    if overlap_tp and prof.tp_overlap_needs_compile and not compile:
        # torchtitan/parallelisms/parallelize_llama.py (3faaa1a0d, 9dec370) raises "Async TP requires
        # --training.compile"; torchtitan/config/configs.py CompileConfig.__post_init__ does today
        raise PerfError(f"software.tp_comm_overlap: {prof.name}'s AsyncTP is a torch.compile pass and "
                        f"{prof.name} refuses it without compile (\"Async TP requires --training.compile\", "
                        "torchtitan/parallelisms/parallelize_llama.py); set software.compile: true")
    dispatcher = moe_dispatcher or "nccl"
    if dispatcher not in MOE_DISPATCHERS:
        raise PerfError(f"software.moe_dispatcher must be one of {', '.join(MOE_DISPATCHERS)}, "
                        f"not {moe_dispatcher!r}")
    if dispatcher != "nccl" and not prof.expert_parallel:
        raise PerfError(f"software.moe_dispatcher: {prof.name} has no expert parallelism; leave it out")
    if checkpoint_saves is not None:
        if checkpoint_saves not in CHECKPOINT_SAVES:
            raise PerfError(f"software.checkpoint_saves must be one of {', '.join(CHECKPOINT_SAVES)}, "
                            f"not {checkpoint_saves!r}")
        if not prof.selective_recompute:
            raise PerfError(f"software.checkpoint_saves: {prof.name} has no selective recomputation "
                            "(only full layers); leave it out")
        if checkpoint_saves == "every_other_matmul" and not prof.selective_ops:
            raise PerfError(f"software.checkpoint_saves: every_other_matmul is torchtitan's per-op policy; "
                            f"{prof.name} recomputes the attention core (all_but_attention_core)")
    graphs = cuda_graphs or "none"
    if graphs not in CUDA_GRAPHS:
        raise PerfError(f"software.cuda_graphs must be one of {', '.join(CUDA_GRAPHS)}, not {cuda_graphs!r}")
    if graphs != "none" and prof.name not in _GRAPH_STACKS:
        raise PerfError(f"software.cuda_graphs: {prof.name} captures no CUDA graphs (Megatron-Core's "
                        "--cuda-graph-impl does); use none")
    return Software(prof, att, sequence_parallel, overlap_tp, dp_overlap, dropout, bool(compile), p2p_overlap,
                    dispatcher, bool(in_network_reduction), checkpoint_saves, graphs)
