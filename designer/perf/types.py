"""Inputs of the performance model: model architecture, training job, parallelism plan.

Plain frozen dataclasses in SI units, independent of the spec and catalog loaders, so that any
caller (planner, optimizer, tests, benchmark scripts) can build them directly. The hardware a job
runs on is :mod:`designer.perf.cluster`.
"""

from __future__ import annotations

__all__ = [
    "Precision",
    "Recompute",
    "MoE",
    "MLA",
    "ModelArch",
    "Job",
    "Plan",
    "PlanConstraints",
    "check_positive",
    "check_positive_int",
]

from dataclasses import dataclass, field
from enum import Enum

from designer.errors import PerfError
from designer.perf.plan import Plan, PlanConstraints
from designer.perf.software import Software


class Precision(str, Enum):
    """Numeric format of the training matmuls. FP8 means FP8 GEMMs with 16-bit master weights."""

    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"


class Recompute(str, Enum):
    """Activation recomputation (Korthikanti et al. 2022, "Reducing Activation Recomputation")."""

    NONE = "none"
    SELECTIVE = "selective"  # recompute the attention core only
    FULL = "full"  # keep each layer's input, recompute the whole layer forward in backward
    AUTO = "auto"  # the plan search tries each the stack has and keeps the fastest that fits


def _enum(kind: type[Enum], value: object, what: str) -> Enum:
    try:
        return kind(value)
    except ValueError:
        choices = ", ".join(m.value for m in kind)  # type: ignore[attr-defined]
        raise PerfError(f"{what} must be one of {choices}, not {value!r}") from None


def check_positive(value: object, what: str) -> None:
    """Raise :class:`~designer.errors.PerfError` unless ``value`` is a positive number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise PerfError(f"{what} must be a positive number, not {value!r}")


def check_positive_int(value: object, what: str) -> None:
    """Raise :class:`~designer.errors.PerfError` unless ``value`` is a positive integer."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise PerfError(f"{what} must be a positive integer, not {value!r}")


@dataclass(frozen=True, slots=True)
class MoE:
    """Mixture-of-experts feed-forward layers.

    ``expert_ffn`` is the hidden size of one expert (``None``: the model's ``ffn``). The first
    ``dense_layers`` layers keep a dense MLP (DeepSeek-V3: 3); of the rest, every
    ``layer_freq``-th layer is an MoE layer (1: all of them). ``groups`` and ``group_top_k``:
    group-limited routing, the experts in ``groups`` equal groups of which each token picks
    ``group_top_k`` before its ``top_k`` experts (DeepSeek-V3: 8 and 4, node-limited routing;
    ``None``: every group, no limit).
    """

    experts: int
    top_k: int
    shared_experts: int = 0
    expert_ffn: int | None = None
    dense_layers: int = 0
    layer_freq: int = 1
    groups: int = 1
    group_top_k: int | None = None

    def __post_init__(self) -> None:
        check_positive_int(self.experts, "moe.experts")
        check_positive_int(self.groups, "moe.groups")
        if self.experts % self.groups:
            raise PerfError(f"moe.groups ({self.groups}) must divide moe.experts ({self.experts})")
        if self.group_top_k is not None:
            check_positive_int(self.group_top_k, "moe.group_top_k")
            if self.group_top_k > self.groups:
                raise PerfError(f"moe.group_top_k ({self.group_top_k}) exceeds moe.groups ({self.groups})")
            if self.top_k > self.group_top_k * (self.experts // self.groups):
                raise PerfError(f"moe.top_k ({self.top_k}) exceeds the experts of moe.group_top_k "
                                f"({self.group_top_k}) groups")
        check_positive_int(self.top_k, "moe.top_k")
        check_positive_int(self.layer_freq, "moe.layer_freq")
        if self.top_k > self.experts:
            raise PerfError(f"moe.top_k ({self.top_k}) exceeds moe.experts ({self.experts})")
        if self.shared_experts < 0 or self.dense_layers < 0:
            raise PerfError("moe.shared_experts and moe.dense_layers must not be negative")
        if self.expert_ffn is not None:
            check_positive_int(self.expert_ffn, "moe.expert_ffn")

    def moe_layers(self, layers: int) -> int:
        """Number of MoE layers among ``layers`` transformer layers."""
        rest = max(0, layers - self.dense_layers)
        return -(-rest // self.layer_freq)


@dataclass(frozen=True, slots=True)
class MLA:
    """Multi-head latent attention (DeepSeek-V2/V3): queries and keys/values pass through
    low-rank latents; each head has a ``qk_nope_head_dim + qk_rope_head_dim`` query/key and a
    ``v_head_dim`` value (DeepSeek-V3 Technical Report, sec. 2.1.1; its config.json:
    ``q_lora_rank`` 1536, ``kv_lora_rank`` 512, 128 + 64 and 128). ``q_lora_rank`` 0 projects
    queries directly (DeepSeek-V2-Lite).
    """

    q_lora_rank: int
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int

    def __post_init__(self) -> None:
        if isinstance(self.q_lora_rank, bool) or not isinstance(self.q_lora_rank, int) or self.q_lora_rank < 0:
            raise PerfError(f"mla.q_lora_rank must be a non-negative integer, not {self.q_lora_rank!r}")
        for name in ("kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"):
            check_positive_int(getattr(self, name), f"mla.{name}")


@dataclass(frozen=True, slots=True)
class ModelArch:
    """A decoder-only transformer.

    ``kv_heads`` (grouped-query attention; ``None``: as many as ``heads``) and ``ffn`` (``None``:
    4 x hidden) may be left out. ``params`` and ``active_params`` override the counts derived
    from the architecture when the source publishes them (the FLOP model always uses the
    architecture). ``gated_mlp`` is SwiGLU-style (three weight matrices), ``biases`` adds
    linear and layer-norm biases (GPT-2/3, Megatron GPT), ``learned_positions`` a learned
    position table, ``tied_embeddings`` shares the input and output embedding.
    ``mtp_layers`` is the multi-token-prediction depth D (DeepSeek-V3 Technical Report sec. 2.2;
    Megatron-Core ``mtp_num_layers``): each depth is one more transformer layer of the model's
    last kind, a ``2h -> h`` projection with two RMSNorms, and one more pass through the shared
    output head and loss; ``params`` (as published) excludes it (:meth:`mtp_params`).
    """

    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int | None
    ffn: int | None
    vocab: int
    seq_len: int
    moe: MoE | None = None
    params: float | None = None
    gated_mlp: bool = False
    head_dim: int | None = None
    active_params: float | None = None
    tied_embeddings: bool = False
    biases: bool = False
    learned_positions: bool = False
    mla: MLA | None = None
    mtp_layers: int = 0

    def __post_init__(self) -> None:
        for name in ("layers", "hidden", "heads", "vocab", "seq_len"):
            check_positive_int(getattr(self, name), f"model.{name}")
        if not isinstance(self.mtp_layers, int) or isinstance(self.mtp_layers, bool) or self.mtp_layers < 0:
            raise PerfError(f"model.mtp_layers must be a non-negative integer, not {self.mtp_layers!r}")
        for name in ("kv_heads", "ffn", "head_dim"):
            if getattr(self, name) is not None:
                check_positive_int(getattr(self, name), f"model.{name}")
        if self.head_dim is None and self.mla is None and self.hidden % self.heads:
            raise PerfError(
                f"model.hidden ({self.hidden}) is not a multiple of model.heads ({self.heads}); "
                "give head_dim"
            )
        if self.heads % self.kv_count:
            raise PerfError(f"model.heads ({self.heads}) is not a multiple of kv_heads ({self.kv_count})")
        for name in ("params", "active_params"):
            if getattr(self, name) is not None:
                check_positive(getattr(self, name), f"model.{name}")
        if self.moe is not None and self.moe.dense_layers > self.layers:
            raise PerfError("moe.dense_layers exceeds model.layers")

    # -- derived sizes -------------------------------------------------------------------------
    @property
    def kv_count(self) -> int:
        """Number of key/value heads (MLA: every head has its own keys and values)."""
        if self.mla is not None:
            return self.heads
        return self.kv_heads if self.kv_heads is not None else self.heads

    @property
    def head_size(self) -> int:
        """Width of one attention head."""
        return self.head_dim if self.head_dim is not None else self.hidden // self.heads

    @property
    def q_dim(self) -> int:
        """Width of the queries (and keys) the attention core multiplies: heads x query head size."""
        if self.mla is not None:
            return self.heads * (self.mla.qk_nope_head_dim + self.mla.qk_rope_head_dim)
        return self.heads * self.head_size

    @property
    def v_dim(self) -> int:
        """Width of the values (and of the attention output): heads x value head size."""
        if self.mla is not None:
            return self.heads * self.mla.v_head_dim
        return self.heads * self.head_size

    @property
    def kv_dim(self) -> int:
        """Width of one of the key and value projections (MLA: their mean, as materialised per head)."""
        if self.mla is not None:
            return (self.q_dim + self.v_dim) // 2
        return self.kv_count * self.head_size

    @property
    def ffn_size(self) -> int:
        """Hidden size of the dense MLP."""
        return self.ffn if self.ffn is not None else 4 * self.hidden

    @property
    def expert_size(self) -> int:
        """Hidden size of one expert (dense ``ffn_size`` when there is no MoE)."""
        if self.moe is not None and self.moe.expert_ffn is not None:
            return self.moe.expert_ffn
        return self.ffn_size

    @property
    def mlp_matrices(self) -> int:
        """Weight matrices per MLP: 3 for gated (SwiGLU), 2 otherwise."""
        return 3 if self.gated_mlp else 2

    @property
    def moe_layer_count(self) -> int:
        """Number of MoE layers (0 for a dense model)."""
        return 0 if self.moe is None else self.moe.moe_layers(self.layers)

    # -- parameter counts ----------------------------------------------------------------------
    def attention_params(self) -> float:
        """Parameters of one attention block (Q, K, V and output projections, GQA-aware).

        MLA (DeepSeek-V3 sec. 2.1.1): query down- and up-projection (or one projection when
        ``q_lora_rank`` is 0), the joint key/value down-projection with the shared RoPE key, the
        key/value up-projection, the output projection and the two latent norms.
        """
        h = self.hidden
        if self.mla is not None:
            a = self.mla
            rope, nope = a.qk_rope_head_dim, a.qk_nope_head_dim
            if a.q_lora_rank:
                q = h * a.q_lora_rank + a.q_lora_rank * self.q_dim + a.q_lora_rank
            else:
                q = h * self.q_dim
            kv = h * (a.kv_lora_rank + rope) + a.kv_lora_rank * self.heads * (nope + a.v_head_dim) + a.kv_lora_rank
            return float(q + kv + self.v_dim * h)
        n = h * (self.q_dim + 2 * self.kv_dim) + self.q_dim * h
        if self.biases:
            n += self.q_dim + 2 * self.kv_dim + h
        return float(n)

    def dense_mlp_params(self) -> float:
        """Parameters of one dense MLP."""
        h, f = self.hidden, self.ffn_size
        n = self.mlp_matrices * h * f
        if self.biases:
            n += (self.mlp_matrices - 1) * f + h
        return float(n)

    def expert_params(self) -> float:
        """Parameters of one expert MLP."""
        h, f = self.hidden, self.expert_size
        n = self.mlp_matrices * h * f
        if self.biases:
            n += (self.mlp_matrices - 1) * f + h
        return float(n)

    def norm_params(self) -> float:
        """Parameters of the two norms of a layer (LayerNorm with bias, or RMSNorm)."""
        return float(2 * self.hidden * (2 if self.biases else 1))

    def embedding_params(self) -> float:
        """Token embedding, output layer (unless tied), position table, final norm."""
        n = self.vocab * self.hidden * (1 if self.tied_embeddings else 2)
        if self.learned_positions:
            n += self.seq_len * self.hidden
        return float(n + self.hidden * (2 if self.biases else 1))

    def derived_params(self) -> tuple[float, float]:
        """(total, active) parameters derived from the architecture."""
        dense_layers = self.layers - self.moe_layer_count
        per_layer = self.attention_params() + self.norm_params()
        total = self.layers * per_layer + dense_layers * self.dense_mlp_params() + self.embedding_params()
        active = total
        if self.moe is not None:
            moe = self.moe
            experts = self.expert_params()
            router = self.hidden * moe.experts
            total += self.moe_layer_count * ((moe.experts + moe.shared_experts) * experts + router)
            active += self.moe_layer_count * ((moe.top_k + moe.shared_experts) * experts + router)
        return total, active

    def mtp_layer_moe(self) -> bool:
        """An MTP module's transformer layer is of the model's last kind: MoE when the model's
        last layer is (Megatron-Core builds it from the decoder's layer spec)."""
        return self.moe is not None and self.moe_layer_count > 0

    def mtp_params(self) -> tuple[float, float]:
        """(total, active) parameters of the multi-token-prediction modules, embedding and output
        head shared with the main model (DeepSeek-V3 sec. 2.2): per depth one transformer layer,
        the projection ``M`` (``h x 2h``) and two RMSNorms (DeepSeek-V3, D = 1: 11.6B; the 14B of
        its released MTP weights include copies of the embedding and output head)."""
        if not self.mtp_layers:
            return 0.0, 0.0
        h = self.hidden
        base = self.attention_params() + self.norm_params() + 2 * h * h + 2 * h
        if self.mtp_layer_moe():
            moe = self.moe
            assert moe is not None
            router = h * moe.experts
            total = base + (moe.experts + moe.shared_experts) * self.expert_params() + router
            active = base + (moe.top_k + moe.shared_experts) * self.expert_params() + router
        else:
            total = active = base + self.dense_mlp_params()
        return self.mtp_layers * total, self.mtp_layers * active

    def params_total(self) -> float:
        """Total parameters: ``params`` if given, else derived from the architecture.

        The derivation is Megatron's count (Narayanan et al. SC21, eq. 2,
        ``12 l h^2 (1 + 13/(12h) + (V+s)/(12lh))`` for a GPT with biases and learned positions),
        generalised to grouped-query attention, gated MLPs and experts.
        """
        return self.params if self.params is not None else self.derived_params()[0]

    def params_active(self) -> float:
        """Parameters used per token (MoE: routed ``top_k`` plus shared experts).

        ``active_params`` if given; with only ``params`` given, the derived active share is
        scaled to it.
        """
        if self.active_params is not None:
            return self.active_params
        total, active = self.derived_params()
        if self.params is not None:
            return self.params * active / total
        return active


@dataclass(frozen=True, slots=True)
class Job:
    """A training job: the model, batch (sequences), tokens to train, numerics, software stack.

    ``software`` is the training stack (:mod:`designer.perf.software`): its attention kernel,
    which parallelism features the plan search may use, how data-parallel state is sharded and
    gathered and which communication overlaps compute. ``recompute`` ``auto`` lets the plan
    search pick the recomputation per plan (:func:`designer.perf.search_plans`); a single
    estimate needs one. A checkpoint of weights and optimizer state is written every
    ``checkpoint_interval_s`` seconds at ``checkpoint_write_Bps_per_node`` per node.
    """

    model: ModelArch
    global_batch: int
    tokens: float
    precision: Precision = Precision.BF16
    recompute: Recompute = Recompute.NONE
    checkpoint_interval_s: float | None = None
    checkpoint_write_Bps_per_node: float | None = None
    software: Software = field(default_factory=Software)
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __hash__(self) -> int:
        # Jobs key the plan search's caches: hash the (deep) fields once.
        return self._hash

    def __post_init__(self) -> None:
        object.__setattr__(self, "precision", _enum(Precision, self.precision, "precision"))
        object.__setattr__(self, "recompute", _enum(Recompute, self.recompute, "recompute"))
        check_positive_int(self.global_batch, "global_batch")
        check_positive(self.tokens, "tokens")
        if not isinstance(self.software, Software):
            raise PerfError(f"software must be a designer.perf.Software, not {type(self.software).__name__}")
        if self.recompute is Recompute.SELECTIVE and not self.software.profile.selective_recompute:
            raise PerfError(f"recompute: {self.software.preset} has no selective recomputation "
                            "(only full layers); use none, full or auto")
        if self.checkpoint_interval_s is not None:
            check_positive(self.checkpoint_interval_s, "checkpoint_interval_s")
            if self.checkpoint_write_Bps_per_node is None:
                raise PerfError("checkpoint_interval_s needs checkpoint_write_Bps_per_node")
            check_positive(self.checkpoint_write_Bps_per_node, "checkpoint_write_Bps_per_node")
        object.__setattr__(self, "_hash", hash((self.model, self.global_batch, self.tokens, self.precision,
                                                self.recompute, self.checkpoint_interval_s,
                                                self.checkpoint_write_Bps_per_node, self.software)))

    @property
    def tokens_per_step(self) -> int:
        """Tokens in one global batch."""
        return self.global_batch * self.model.seq_len

    @property
    def fused_attention(self) -> bool:
        """Attention runs in a fused (FlashAttention-style) kernel that never writes the scores."""
        return self.software.flash

    @property
    def dropout(self) -> bool:
        """Hidden and attention dropout are on (the stack's recipes, or the ``dropout`` knob)."""
        return self.software.uses_dropout

    def recompute_choices(self) -> tuple[Recompute, ...]:
        """The recomputation settings a plan search tries: the job's, or with ``auto`` each the
        stack has (none first: it is fastest whenever it fits)."""
        if self.recompute is not Recompute.AUTO:
            return (self.recompute,)
        if self.software.profile.selective_recompute:
            return (Recompute.NONE, Recompute.SELECTIVE, Recompute.FULL)
        return (Recompute.NONE, Recompute.FULL)
