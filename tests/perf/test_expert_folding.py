"""Experts folded over TP x DP: an expert tensor-parallel size ``etp`` below ``tp``.

Megatron-Core's ``--expert-tensor-parallel-size`` lays the experts of a stage over its
``tp x cp x dp`` ranks as ``etp x ep x edp`` (MoE parallel folding, Liu et al. 2025,
arXiv:2504.14960). NeMo's DeepSeek-V3 recipe on 1,024 H100 states TP2 PP16 EP64 ETP1 DP32
(dgxc-benchmarking): EP 64 is larger than DP 32, which only the folding allows.
"""

from __future__ import annotations

import pytest

from designer.perf import Job, MoE, ModelArch, Plan, Precision, memory, network as netm
from designer.perf.structure import structure_reason
from tests.perf.factories import H100

# Mixtral-like layers, 64 experts of width 2048, top-8 (8 routed experts per token).
MOE64 = ModelArch("moe64", 16, 4096, 32, 8, 14336, 32000, 4096, gated_mlp=True,
                  moe=MoE(experts=64, top_k=8, expert_ffn=2048))
JOB = Job(model=MOE64, global_batch=256, tokens=1e9, precision=Precision.BF16)


def test_ep_beyond_dp_needs_the_folding():
    plain = Plan(tp=2, pp=1, dp=32, ep=64)
    assert "does not divide dp=32" in structure_reason(JOB, plain, H100)
    folded = Plan(tp=2, pp=1, dp=32, ep=64, etp=1)
    assert structure_reason(JOB, folded, H100) is None
    assert folded.expert_dp == 1  # 2 x 32 ranks = 1 x 64 x 1
    # etp = tp is the plain rule; folding ranks must tile tp x cp x dp
    assert "does not divide dp=32" in structure_reason(JOB, Plan(tp=2, pp=1, dp=32, ep=64, etp=2), H100)
    assert "etp x ep = 128 does not divide tp x cp x dp = 64" in structure_reason(
        JOB, Plan(tp=4, pp=1, dp=16, ep=64, etp=2), H100)
    assert "etp=3 does not divide tp=2" in structure_reason(JOB, Plan(tp=2, pp=1, dp=32, ep=32, etp=3), H100)


def test_folded_experts_split_their_weights_over_etp_x_ep():
    routed = MOE64.layers * MOE64.moe.experts * MOE64.expert_params()  # every layer is an MoE layer
    folded = memory.stage_params(MOE64, Plan(tp=2, pp=1, dp=32, ep=64, etp=1))
    plain = memory.stage_params(MOE64, Plan(tp=2, pp=1, dp=32, ep=32))
    # 64 x 1 and 32 x 2 ranks share the experts alike: 1/64 of them per GPU
    assert folded.expert == pytest.approx(routed / 64)
    assert plain.expert == pytest.approx(routed / 64)
    assert folded.dense == pytest.approx(plain.dense)


def test_the_folded_expert_group_is_consecutive_ranks():
    # ETP fastest, then EP: 64 consecutive ranks, 8 per DGX node, against every other rank
    # (stride tp = 2) when the experts are split over TP too
    folded, plain = Plan(tp=2, pp=1, dp=32, ep=64, etp=1), Plan(tp=2, pp=1, dp=32, ep=32)
    assert folded.expert_stride == 1 and plain.expert_stride == 2
    assert netm.group_layout(folded.ep, folded.expert_stride, 8) == netm.Group(64, 8, 8)
    assert netm.group_layout(plain.ep, plain.expert_stride, 8) == netm.Group(32, 4, 8)
    assert Plan(tp=2, pp=1, dp=32, ep=64, etp=1).describe() == "tp2 pp1 dp32 ep64 etp1 mb1 zero1"


def test_the_search_tries_unsplit_experts_where_the_stack_folds_them():
    """On Megatron-Core the plan search also lays unsplit experts (etp 1) over a stage's
    tp x cp x dp ranks; the best plan is then at least as fast as the best with experts split
    like the dense layers, and a stack without the folding (FSDP2) never gets etp."""
    from designer.perf import Cluster, resolve_software, search_plans
    from designer.perf.plan import PlanConstraints
    from designer.perf.search import _expert_layouts
    from tests.perf.factories import NDR

    cluster = Cluster(H100, NDR)
    # tp 2 on 64 GPUs, dp 32: split experts allow ep | gcd(32, 64); folded, ep | gcd(64, 64)
    pairs = list(_expert_layouts(JOB, PlanConstraints(), 2, 1, 32, [1, 2, 4, 8, 16, 32]))
    assert pairs[:6] == [(None, e) for e in (1, 2, 4, 8, 16, 32)]
    assert pairs[6:] == [(1, e) for e in (1, 2, 4, 8, 16, 32, 64)]
    assert list(_expert_layouts(JOB, PlanConstraints(), 1, 1, 64, [1, 2])) == [(None, 1), (None, 2)]
    pinned = PlanConstraints(etp=2)
    assert list(_expert_layouts(JOB, pinned, 2, 1, 32, [4])) == [(2, 4)]
    fsdp = Job(model=MOE64, global_batch=256, tokens=1e9, precision=Precision.BF16,
               software=resolve_software("fsdp2"))
    assert list(_expert_layouts(fsdp, PlanConstraints(), 2, 1, 32, [4])) == [(None, 4)]

    best = search_plans(JOB, cluster, 64, PlanConstraints(tp=2))
    split = search_plans(JOB, cluster, 64, PlanConstraints(tp=2, etp=2))
    assert best.step_time_s <= split.step_time_s * (1 + 1e-12)
    assert split.plan.expert_tp == 2
    assert search_plans(fsdp, cluster, 64, PlanConstraints(tp=2)).plan.etp is None
    # EP 64 on 64 GPUs at TP 2 exists only folded: the search finds it without etp pinned
    wide = search_plans(JOB, cluster, 64, PlanConstraints(tp=2, ep=64))
    assert (wide.plan.dp, wide.plan.ep, wide.plan.etp, wide.plan.expert_dp) == (32, 64, 1, 1)
