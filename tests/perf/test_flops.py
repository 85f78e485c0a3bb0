"""FLOP and parameter counts against published figures."""

from __future__ import annotations

import pytest

from designer.perf import ModelArch, Recompute
from designer.perf.flops import (
    hardware_flops,
    model_flops,
    model_flops_per_token,
    recompute_flops_per_token,
)

from .factories import GPT3, LLAMA3_8B, MIXTRAL

# Parameter counts published as exact integers (Hugging Face model cards) are matched to 1e-4.
EXACT = 1e-4
# Rounded published figures ("46.7B", "12.9B") to their rounding.
ROUNDED = 5e-3


def test_gpt3_params_match_megatron_eq2():
    # Narayanan et al. SC21 eq. 2: P = 12 l h^2 (1 + 13/(12h) + (V+s)/(12lh)); Table 1: 174.6B.
    l, h, V, s = 96, 12288, 51200, 2048
    eq2 = 12 * l * h**2 * (1 + 13 / (12 * h) + (V + s) / (12 * l * h))
    # eq. 2 leaves out the final layer norm (weight and bias, 2h).
    assert GPT3.params_total() == pytest.approx(eq2 + 2 * h, rel=1e-12)
    assert GPT3.params_total() / 1e9 == pytest.approx(174.6, abs=0.05)


def test_gpt3_flops_per_token_korthikanti_and_6n():
    # Korthikanti et al. 2022 appendix A: 72 B s l h^2 (1 + s/(6h) + V/(12 l h)) per iteration.
    l, h, V, s = 96, 12288, 51200, 2048
    per_token = 72 * l * h**2 * (1 + s / (6 * h) + V / (12 * l * h))
    assert model_flops_per_token(GPT3) == pytest.approx(per_token, rel=1e-12)
    # ... which is about 6 N plus the attention term 12 l h s (Chowdhery et al. 2022, app. B).
    six_n = 6 * 174.6e9 + 12 * l * h * s
    assert model_flops_per_token(GPT3) == pytest.approx(six_n, rel=0.01)


def test_sc21_eq3_counts_the_recompute_forward():
    # Narayanan et al. SC21 eq. 3: 96 B s l h^2 (1 + s/(6h) + V/(16 l h)).
    l, h, V, s, B = 96, 12288, 51200, 2048, 1536
    eq3 = 96 * B * s * l * h**2 * (1 + s / (6 * h) + V / (16 * l * h))
    assert hardware_flops(GPT3, B, Recompute.FULL) == pytest.approx(eq3, rel=1e-12)
    assert hardware_flops(GPT3, B, Recompute.NONE) == pytest.approx(model_flops(GPT3, B))


def test_selective_recompute_adds_only_attention_core():
    extra = recompute_flops_per_token(GPT3, Recompute.SELECTIVE)
    assert extra == pytest.approx(96 * 4 * 2048 * 12288)
    assert recompute_flops_per_token(GPT3, "none") == 0.0


def test_llama_params_with_gqa_and_swiglu():
    # meta-llama/Meta-Llama-3-8B: 8,030,261,248 parameters; Llama-2-70b-hf: 68,976,648,192.
    assert LLAMA3_8B.params_total() == pytest.approx(8_030_261_248, rel=EXACT)
    llama2_70b = ModelArch("llama2-70b", 80, 8192, 64, 8, 28672, 32000, 4096, gated_mlp=True)
    assert llama2_70b.params_total() == pytest.approx(68_976_648_192, rel=EXACT)


def test_mixtral_total_and_active_params():
    # Mistral AI, "Mixtral of experts" (2023): 46.7B total, 12.9B active per token.
    assert MIXTRAL.params_total() / 1e9 == pytest.approx(46.7, rel=ROUNDED)
    assert MIXTRAL.params_active() / 1e9 == pytest.approx(12.9, rel=ROUNDED)


def test_moe_flops_count_active_experts_only():
    dense_equivalent = ModelArch("m", 32, 4096, 32, 8, 14336, 32000, 4096, gated_mlp=True)
    moe_per_token = model_flops_per_token(MIXTRAL)
    # Two experts per token: the MLP term doubles, attention and logits stay.
    mlp = 3 * 2 * 3 * 4096 * 14336 * 32
    assert moe_per_token - model_flops_per_token(dense_equivalent) == pytest.approx(mlp + 3 * 2 * 4096 * 8 * 32)


def test_nemo_published_flops_per_token():
    # NVIDIA NeMo 24.07 performance summary, Llama 2 70B on 64 H100: 1,707 tokens/s/GPU and
    # 759 model TFLOP/s/GPU imply 444.6 GFLOP per token (GQA and SwiGLU included).
    llama2_70b = ModelArch("llama2-70b", 80, 8192, 64, 8, 28672, 32000, 4096, gated_mlp=True)
    assert model_flops_per_token(llama2_70b) == pytest.approx(759e12 / 1707, rel=2e-3)


def test_params_override_scales_active_share():
    given = ModelArch("m", 32, 4096, 32, 8, 14336, 32000, 4096, gated_mlp=True, params=50e9,
                      moe=MIXTRAL.moe)
    assert given.params_total() == 50e9
    assert given.params_active() == pytest.approx(50e9 * MIXTRAL.params_active() / MIXTRAL.params_total())
