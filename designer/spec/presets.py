"""Architecture presets of well-known models, each with the source of its figures.

A spec says ``model: {preset: llama3-70b}``; the loader expands it into the full architecture
(and lets the spec override single fields, e.g. ``seq_len``).
"""

from __future__ import annotations

__all__ = ["PRESETS", "preset_names"]

from types import MappingProxyType

# Field names follow the spec's `model:` mapping. `params` is the published total parameter count;
# the performance model derives its own count from the architecture and uses that for FLOPs.
_PRESETS: dict[str, dict] = {
    "gpt3-175b": {
        "params": 175e9, "layers": 96, "hidden": 12288, "heads": 96, "kv_heads": 96, "ffn": 49152,
        "seq_len": 2048, "vocab": 50257, "gated_mlp": False,
        "source": "Brown et al., Language Models are Few-Shot Learners (2020), Table 2.1 (GPT-3 175B: "
                  "n_layers 96, d_model 12288, n_heads 96, n_ctx 2048); vocabulary 50257 (GPT-2 BPE)",
    },
    "llama3-8b": {
        "params": 8.03e9, "layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn": 14336,
        "seq_len": 8192, "vocab": 128256, "gated_mlp": True,
        "source": "Meta, The Llama 3 Herd of Models (2024), Table 3 (8B: 32 layers, model dim 4096, "
                  "FFN 14336, 32 heads, 8 KV heads, vocab 128K); HF config vocab_size 128256",
    },
    "llama3-70b": {
        "params": 70.6e9, "layers": 80, "hidden": 8192, "heads": 64, "kv_heads": 8, "ffn": 28672,
        "seq_len": 8192, "vocab": 128256, "gated_mlp": True,
        "source": "Meta, The Llama 3 Herd of Models (2024), Table 3 (70B: 80 layers, model dim 8192, "
                  "FFN 28672, 64 heads, 8 KV heads)",
    },
    "llama3-405b": {
        "params": 405.9e9, "layers": 126, "hidden": 16384, "heads": 128, "kv_heads": 8, "ffn": 53248,
        "seq_len": 8192, "vocab": 128256, "gated_mlp": True,
        "source": "Meta, The Llama 3 Herd of Models (2024), Table 3 (405B: 126 layers, model dim 16384, "
                  "FFN 53248, 128 heads, 8 KV heads); pre-training sequence length 8192 (Section 3.4)",
    },
    "mixtral-8x7b": {
        "params": 46.7e9, "layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn": 14336,
        "seq_len": 4096, "vocab": 32000, "gated_mlp": True,
        "moe": {"experts": 8, "top_k": 2, "shared_experts": 0},
        "source": "Jiang et al., Mixtral of Experts (2024), Table 1 (dim 4096, n_layers 32, hidden_dim "
                  "14336, n_heads 32, n_kv_heads 8, vocab 32000, 8 experts, top-2; 46.7B total, 12.9B "
                  "active); training sequence length 4096 assumed (the paper gives a 32k context)",
    },
    "deepseek-v3": {
        "params": 671e9, "layers": 61, "hidden": 7168, "heads": 128, "kv_heads": 128, "ffn": 18432,
        "seq_len": 4096, "vocab": 129280, "gated_mlp": True,
        "moe": {"experts": 256, "top_k": 8, "shared_experts": 1, "expert_ffn": 2048, "dense_layers": 3,
                "groups": 8, "group_top_k": 4},
        "mla": {"q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
                "v_head_dim": 128},
        "source": "DeepSeek-AI, DeepSeek-V3 Technical Report (2024), Sections 2.1.1 and 4.2 (61 layers, hidden "
                  "7168, 128 heads of multi-head latent attention with KV rank 512, query rank 1536 and "
                  "128 + 64 query/key head dims, first 3 layers dense, 1 shared + 256 routed experts of "
                  "intermediate size 2048, 8 activated; 671B total, 37B active; sequence length 4K); dense "
                  "FFN 18432, vocab 129280 and v_head_dim 128 from the released config.json. The 14B "
                  "multi-token-prediction module is not counted (mtp_layers: 1 adds it, as DeepSeek trained); "
                  "node-limited routing (sec. 2.1.2: a token reaches at most 4 nodes) as config.json's "
                  "n_group 8, topk_group 4",
    },
}

PRESETS = MappingProxyType({k: MappingProxyType(v) for k, v in _PRESETS.items()})


def preset_names() -> tuple[str, ...]:
    """Names of the known presets, sorted."""
    return tuple(sorted(PRESETS))
