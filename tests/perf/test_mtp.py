"""Multi-token prediction (DeepSeek-V3 Technical Report sec. 2.2; Megatron-Core mtp_num_layers):
its parameters, FLOPs and where it runs, against closed forms and the published sizes."""

from __future__ import annotations

from dataclasses import replace

import pytest

from designer.errors import PerfError
from designer.perf import MLA, Cluster, Job, ModelArch, MoE, Plan, estimate_step
from designer.perf.flops import (
    attention_flops_per_token,
    gemm_flops_per_token,
    logit_flops_per_token,
    model_flops_per_token,
    mtp_layer_flops_per_token,
    recompute_flops_per_token,
)
from designer.perf.memory import stage_params

from .factories import H100, LLAMA3_8B, NDR

# DeepSeek-V3 (report sec. 2.1 and 4.2, released config.json): 61 layers (3 dense), MLA, 256
# routed experts of 2048 + 1 shared, 8 active, vocabulary 129,280; MTP depth D = 1.
DSV3 = ModelArch("deepseek-v3", 61, 7168, 128, None, 18432, 129280, 4096, gated_mlp=True,
                 moe=MoE(experts=256, top_k=8, shared_experts=1, expert_ffn=2048, dense_layers=3),
                 mla=MLA(q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64,
                         v_head_dim=128))
DSV3_MTP = replace(DSV3, mtp_layers=1)


def test_deepseek_v3_mtp_module_is_its_published_size():
    """DeepSeek-V3's released checkpoint: 685B in all, 671B of them the main model, so 14B (both
    rounded to 1B: +-1B) of MTP weights, which carry their own copies of the embedding and
    output head (2 x 129,280 x 7,168 = 1.85B)."""
    total, active = DSV3_MTP.mtp_params()
    tables = 2 * 129280 * 7168
    assert (total + tables) / 1e9 == pytest.approx(685 - 671, abs=1.0)
    assert DSV3.mtp_params() == (0.0, 0.0)
    # one MoE layer (8 routed + 1 shared active) beside the 2h x h projection and two norms
    h = 7168
    layer_active = DSV3.attention_params() + DSV3.norm_params() + 9 * DSV3.expert_params() + h * 256
    assert active == pytest.approx(layer_active + 2 * h * h + 2 * h, rel=1e-12)


def test_mtp_flops_are_one_more_layer_and_one_more_head_per_depth():
    h = 7168
    layer = gemm_flops_per_token(DSV3, True) + attention_flops_per_token(DSV3)
    assert mtp_layer_flops_per_token(DSV3) == pytest.approx(layer + 4 * h * h, rel=1e-12)
    extra = model_flops_per_token(DSV3_MTP) - model_flops_per_token(DSV3)
    assert extra == pytest.approx(3 * (layer + 4 * h * h + logit_flops_per_token(DSV3)), rel=1e-12)
    # two depths cost twice one
    two = model_flops_per_token(replace(DSV3, mtp_layers=2)) - model_flops_per_token(DSV3)
    assert two == pytest.approx(2 * extra, rel=1e-12)
    # full recompute repeats the MTP layer's forward but not its logits
    full = recompute_flops_per_token(DSV3_MTP, "full") - recompute_flops_per_token(DSV3, "full")
    assert full == pytest.approx(layer + 4 * h * h, rel=1e-12)
    sel = recompute_flops_per_token(DSV3_MTP, "selective") - recompute_flops_per_token(DSV3, "selective")
    assert sel == pytest.approx(attention_flops_per_token(DSV3), rel=1e-12)


def test_a_dense_model_gets_a_dense_mtp_layer():
    mtp = replace(LLAMA3_8B, mtp_layers=1)
    assert not mtp.mtp_layer_moe()
    h = 4096
    assert mtp.mtp_params()[0] == pytest.approx(LLAMA3_8B.attention_params() + LLAMA3_8B.norm_params()
                                                + LLAMA3_8B.dense_mlp_params() + 2 * h * h + 2 * h)


def test_mtp_runs_on_the_last_stage():
    """The MTP layer and its logits join the last stage (Megatron-Core's post-process stage):
    with 8 layers a stage, the last stage's extra layer and logits set the pace."""
    cluster = Cluster(H100, NDR)
    plan = Plan(tp=1, pp=4, dp=2, microbatch=1, zero=1)
    base = estimate_step(Job(LLAMA3_8B, 256, 1e9, recompute="full"), plan, cluster)
    mtp = estimate_step(Job(replace(LLAMA3_8B, mtp_layers=1), 256, 1e9, recompute="full"), plan, cluster)
    assert mtp.breakdown.compute_s > base.breakdown.compute_s
    assert mtp.memory.weights > base.memory.weights
    # one more layer on the last stage: the stage that bounds memory holds it
    p0 = stage_params(LLAMA3_8B, plan)
    p1 = stage_params(replace(LLAMA3_8B, mtp_layers=1), plan)
    assert p1.total - p0.total == pytest.approx(LLAMA3_8B.attention_params() + LLAMA3_8B.norm_params()
                                                + LLAMA3_8B.dense_mlp_params(), rel=1e-9)


def test_dualpipe_pairs_the_first_stage_with_the_last():
    """DualPipe (DeepSeek-V3 sec. 3.2.1): rank 0 holds the first and the last stage and runs half
    the micro-batches through each, so the logits and the MTP layer are shared with the first
    stage's layers instead of pacing every rank."""
    cluster = Cluster(H100, NDR)
    job = Job(replace(LLAMA3_8B, mtp_layers=1), 256, 1e9, recompute="full")
    one = Plan(tp=1, pp=4, dp=2, microbatch=1, zero=1)
    dual = estimate_step(job, replace(one, schedule="dualpipe"), cluster)
    plain = estimate_step(job, one, cluster)
    assert dual.breakdown.compute_s < plain.breakdown.compute_s


def test_mtp_layers_must_be_a_count():
    with pytest.raises(PerfError, match="mtp_layers"):
        replace(DSV3, mtp_layers=-1)
