"""FLOP counts of a decoder-only transformer: Megatron's formula, generalised.

Narayanan et al. (SC21), eq. (3) count ``96 B s l h^2 (1 + s/(6h) + V/(16 l h))`` FLOPs per
iteration for a GPT with full activation recomputation; Korthikanti et al. (2022), appendix A,
count the model FLOPs (no recomputation) as ``72 B s l h^2 (1 + s/(6h) + V/(12 l h))``. Both
follow from counting 2 FLOPs per multiply-add of every matmul in the forward pass and 2x that
in the backward pass. Here the per-layer forward count is derived for any width, grouped-query
attention, gated MLPs and experts, and reduces to those formulas for a GPT.

Examples:
    >>> from designer.perf.types import ModelArch
    >>> gpt = ModelArch("gpt", layers=2, hidden=64, heads=4, kv_heads=None, ffn=None,
    ...                 vocab=100, seq_len=32)
    >>> per_token = model_flops_per_token(gpt)
    >>> l, h, s, V = 2, 64, 32, 100
    >>> per_token == 72 * l * h**2 * (1 + s / (6 * h) + V / (12 * l * h))
    True
"""

from __future__ import annotations

__all__ = [
    "gemm_flops_per_token",
    "attention_flops_per_token",
    "logit_flops_per_token",
    "mtp_layer_flops_per_token",
    "forward_flops_per_token",
    "model_flops_per_token",
    "causal_model_flops_per_token",
    "model_flops",
    "recompute_flops_per_token",
    "hardware_flops",
]

from designer.perf.types import ModelArch, Recompute


def gemm_flops_per_token(model: ModelArch, moe_layer: bool = False) -> float:
    """Forward FLOPs per token of one layer's linear layers (projections and MLP).

    Attention: ``2 h (q + 2 kv)`` for Q, K, V and ``2 q h`` for the output projection, where
    q and kv are the query and key widths (GQA). Dense MLP: ``2 m h f`` with m = 2 matrices
    (GeLU) or 3 (SwiGLU). An MoE layer runs ``top_k`` routed plus the shared experts per token
    and a router of ``2 h E``.
    """
    h = model.hidden
    if model.mla is not None:
        # every projection of latent attention is a matmul: 2 FLOPs per weight (norms excluded)
        attn = 2 * (model.attention_params() - model.mla.q_lora_rank - model.mla.kv_lora_rank)
    else:
        attn = 2 * h * (model.q_dim + 2 * model.kv_dim) + 2 * model.q_dim * h
    if moe_layer and model.moe is not None:
        moe = model.moe
        mlp = 2 * model.mlp_matrices * h * model.expert_size * (moe.top_k + moe.shared_experts)
        mlp += 2 * h * moe.experts
    else:
        mlp = 2 * model.mlp_matrices * h * model.ffn_size
    return float(attn + mlp)


def attention_flops_per_token(model: ModelArch, context: int | None = None) -> float:
    """Forward FLOPs per token of the attention core: ``Q K^T`` and ``P V``, ``2 s (q + v)``
    (``4 s q`` when queries and values are as wide, as in multi-head and grouped-query attention).

    ``context`` is the number of keys each query attends to (default: the sequence length).
    Counted over the full square, as Megatron's formula and the MFU convention of Chowdhery
    et al. (2022) do, even though causal kernels skip half of it.
    """
    s = model.seq_len if context is None else context
    return float(2 * s * (model.q_dim + model.v_dim))


def logit_flops_per_token(model: ModelArch) -> float:
    """Forward FLOPs per token of the output (vocabulary) projection, ``2 h V``."""
    return float(2 * model.hidden * model.vocab)


def mtp_layer_flops_per_token(model: ModelArch) -> float:
    """Forward FLOPs per token of one multi-token-prediction module without its pass through the
    shared output head: its transformer layer (of the model's last kind) and the projection
    ``M`` of ``[norm(h); norm(emb)]`` (``2 x 2h x h``; DeepSeek-V3 Technical Report sec. 2.2)."""
    layer = gemm_flops_per_token(model, model.mtp_layer_moe()) + attention_flops_per_token(model)
    return layer + 4.0 * model.hidden * model.hidden


def forward_flops_per_token(model: ModelArch) -> float:
    """Forward FLOPs per token of the whole model: all layers and the logits, and with
    multi-token prediction each depth's module and its own logits (Megatron-Core counts them
    alike: ``num_floating_point_operations`` with ``mtp_num_layers``)."""
    moe_layers = model.moe_layer_count
    dense_layers = model.layers - moe_layers
    layers = dense_layers * gemm_flops_per_token(model, False)
    layers += moe_layers * gemm_flops_per_token(model, True)
    layers += model.layers * attention_flops_per_token(model)
    mtp = model.mtp_layers * mtp_layer_flops_per_token(model) if model.mtp_layers else 0.0
    return layers + mtp + (1 + model.mtp_layers) * logit_flops_per_token(model)


def model_flops_per_token(model: ModelArch) -> float:
    """Model FLOPs per token: forward plus backward (2x forward), no recomputation.

    This is what MFU counts (Korthikanti et al. 2022, appendix A; Chowdhery et al. 2022): about
    ``6 N + 12 l h s`` for a dense model with N parameters.
    """
    return 3.0 * forward_flops_per_token(model)


def causal_model_flops_per_token(model: ModelArch) -> float:
    """Model FLOPs per token with causal attention counted: the attention core's score and value
    matmuls over the lower triangle only, half of :func:`model_flops_per_token`'s full square.

    ``3 (forward - (l + mtp) a / 2)`` with ``a`` :func:`attention_flops_per_token`. This is the
    count of Meta's Llama 3 paper and torchtitan (``6 N + 6 l h s``, half of the ``12 l h s``
    attention term), and of Megatron-Bridge/NeMo from 25.09; NeMo up to 25.04 and Megatron's
    papers count the full square (:func:`model_flops_per_token`).

    Examples:
        >>> from designer.perf.types import ModelArch
        >>> gpt = ModelArch("gpt", layers=2, hidden=64, heads=4, kv_heads=None, ffn=None,
        ...                 vocab=100, seq_len=32)
        >>> l, h, s = 2, 64, 32
        >>> model_flops_per_token(gpt) - causal_model_flops_per_token(gpt) == 6 * l * h * s
        True
    """
    attention = (model.layers + model.mtp_layers) * attention_flops_per_token(model)
    return 3.0 * (forward_flops_per_token(model) - 0.5 * attention)


def recompute_flops_per_token(model: ModelArch, recompute: Recompute) -> float:
    """Extra forward FLOPs per token spent recomputing activations.

    Full: one more forward pass of every layer (not of the logits; Narayanan et al. eq. 3).
    Selective: the attention core only (Korthikanti et al. 2022, sec. 5).
    """
    recompute = Recompute(recompute)
    if recompute is Recompute.NONE:
        return 0.0
    attention = (model.layers + model.mtp_layers) * attention_flops_per_token(model)
    if recompute is Recompute.SELECTIVE:
        return attention
    return forward_flops_per_token(model) - (1 + model.mtp_layers) * logit_flops_per_token(model)


def model_flops(model: ModelArch, sequences: float) -> float:
    """Model FLOPs to train on ``sequences`` full-length sequences."""
    return model_flops_per_token(model) * sequences * model.seq_len


def hardware_flops(model: ModelArch, sequences: float, recompute: Recompute) -> float:
    """FLOPs the GPUs execute, recomputation included (Megatron SC21 eq. 3 with ``FULL``)."""
    per_token = model_flops_per_token(model) + recompute_flops_per_token(model, recompute)
    return per_token * sequences * model.seq_len
