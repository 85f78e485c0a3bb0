"""Host-bound steps (designer.perf.host): the GPU waits where its CPU issues kernels more slowly.

Closed forms: a segment between two device-host syncs takes max(H, G) for one block, so a stage is
host-bound exactly when its host time exceeds its GPU time; CUDA graphs replace a layer's captured
ops by one launch per pass. Property: the host never makes a step faster.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from designer.errors import PerfError
from designer.perf import Cluster, Job, ModelArch, MoE, Plan, estimate_step
from designer.perf import host as H
from designer.perf.compute import LayerTimes
from designer.perf.software import CUDA_GRAPHS, MOE_DISPATCHERS, resolve
from designer.spec.choices import CUDA_GRAPHS as SPEC_CUDA_GRAPHS, MOE_DISPATCHERS as SPEC_DISPATCHERS

from .factories import GPT_1B, H100, LLAMA3_8B, LLAMA3_70B, MIXTRAL, NDR

C = H.HOST_OP_S["x86"]
DENSE_PLAN = Plan(tp=1, pp=1, dp=8)
MOE_PLAN = Plan(tp=1, pp=1, dp=8, ep=8)


def _layer(g_fwd: float) -> LayerTimes:
    """A layer whose backward takes twice its forward, no recomputation."""
    return LayerTimes(g_fwd, 2.0 * g_fwd, 0.0, 0.5 * g_fwd, 0.1 * g_fwd)


def test_the_spec_and_the_model_know_the_same_graph_modes_and_dispatchers():
    assert SPEC_CUDA_GRAPHS == CUDA_GRAPHS == ("none", "partial", "full")
    assert SPEC_DISPATCHERS == MOE_DISPATCHERS == ("nccl", "deepep", "hybridep")


def test_one_block_takes_the_longer_of_host_and_gpu():
    assert H.segment_s([(2e-3, 5e-3)]) == 5e-3
    assert H.segment_s([(5e-3, 2e-3)]) == 5e-3
    # a host-heavy block first holds back the GPU-heavy block after it: 4 ms issued, then 3 ms run
    assert H.segment_s([(4e-3, 1e-3), (0.0, 3e-3)]) == pytest.approx(7e-3)
    # the other order hides the GPU's 3 ms behind the 4 ms the host spends issuing the second
    # block, whose 1 ms runs as its ops arrive (spread over the block): 4 ms
    assert H.segment_s([(0.0, 3e-3), (4e-3, 1e-3)]) == pytest.approx(4e-3)


def test_a_dense_stage_is_host_bound_iff_its_host_time_exceeds_its_gpu_time():
    """Llama 3 8B, BF16, no syncs: H = layers x 17 ops x (1 + 2) x c against G = layers x 3 g."""
    job = Job(LLAMA3_8B, 64, 1e9)
    assert H.layer_ops(job, DENSE_PLAN).total == 17
    host_layer = 17 * (1 + H.BWD_OPS_FACTOR) * C
    for g in (0.5 * host_layer / 3.0, host_layer / 3.0, 2.0 * host_layer / 3.0):
        stall = H.host_stall_mb_s(job, DENSE_PLAN, H100, _layer(g), 32)
        assert stall == pytest.approx(max(0.0, 32 * (host_layer - 3.0 * g)), abs=1e-12)
    assert H.host_stall_mb_s(job, DENSE_PLAN, H100, _layer(host_layer), 32) == 0.0


def test_cuda_graphs_replace_the_captured_launches_by_one_per_pass():
    """Mixtral (all MoE layers), FP8, on a GPU that takes no time: the stall is the host time.
    Eager every op; partial the routed experts plus one graph launch; full one launch a pass."""
    plan = MOE_PLAN
    stall = {}
    for graphs in CUDA_GRAPHS:
        job = Job(MIXTRAL, 64, 1e9, precision="fp8", software=resolve(cuda_graphs=graphs))
        stall[graphs] = H.host_stall_mb_s(job, plan, H100, _layer(0.0), 32)
    ops = H.layer_ops(Job(MIXTRAL, 64, 1e9, precision="fp8"), plan, True)
    # 8 experts over ep 8: one local expert, 2 FP8 linears of 10 ops and 12 fixed ops
    assert ops.experts == 2 * 10 + 12 and ops.router == 41 and ops.attention == 2 * 10 + 6
    passes = 1 + H.BWD_OPS_FACTOR
    assert stall["none"] == pytest.approx(32 * ops.total * passes * C)
    assert stall["partial"] == pytest.approx(32 * (1 + ops.experts) * passes * C)
    assert stall["full"] == pytest.approx(32 * 3 * C)
    assert stall["none"] - stall["partial"] == pytest.approx(32 * (ops.total - ops.experts - 1) * passes * C)


def test_deepep_and_hybridep_issue_the_fused_preprocess():
    """Router and preprocess: 31 fused router kernels plus the all-to-all preprocess, against the
    17 of DeepEP's fused preprocess (Megatron-LM DeepSeek-V3 GB200 guide, sec. 2.1.4, 2.2.1)."""
    for how, n in (("nccl", 41), ("deepep", 17), ("hybridep", 17)):
        job = Job(MIXTRAL, 64, 1e9, software=resolve(moe_dispatcher=how))
        assert H.layer_ops(job, MOE_PLAN, True).router == n


def test_a_device_host_sync_per_moe_layer_stops_the_host_running_ahead():
    """Host and GPU time equal per layer: without syncs nothing stalls; with dropless MoE's sync per
    layer the host issues the 64 local experts' ops (its heavy block) while the GPU has only
    their GEMMs, and cannot issue the next attention (the GPU's heavy block at 32K tokens) early."""
    model = ModelArch("moe-32k", 8, 4096, 32, 8, 14336, 32000, 32768, gated_mlp=True, moe=MoE(experts=64, top_k=2))
    plan = Plan(tp=1, pp=1, dp=8)
    job = Job(model, 64, 1e9, precision="fp8")
    ops = H.layer_ops(job, plan, True)
    assert ops.experts == 2 * 64 * 10 + 12
    host_fwd = ops.total * C
    layer = _layer(host_fwd)  # G = H forward and backward
    synced = H.host_stall_mb_s(job, plan, H100, layer, 8)
    share = H._attention_share(model, True)
    # per layer: max(G, h_experts + g_attention, H) - G, the middle term the largest
    expected = 8 * (ops.experts * C + share * host_fwd - host_fwd)
    assert synced == pytest.approx(expected) and synced > 0.0
    full = H.host_stall_mb_s(Job(model, 64, 1e9, precision="fp8", software=resolve(cuda_graphs="full")),
                             plan, H100, _layer(3 * C / 3.0), 8)
    assert full == 0.0  # full graphs: three launches a layer against as much GPU time, no sync


def test_the_host_never_makes_a_step_faster(monkeypatch):
    jobs = [Job(m, 256, 1e9, precision=p, recompute=r, software=resolve(cuda_graphs=g))
            for m, p, r, g in itertools.product((GPT_1B, MIXTRAL), ("bf16", "fp8"), ("none", "full"), CUDA_GRAPHS)]
    plans = (Plan(tp=1, pp=1, dp=32, ep=8), Plan(tp=2, pp=2, dp=8, ep=8, virtual_stages=2))
    cluster = Cluster(H100, NDR)
    steps = {}
    for job, plan in itertools.product(jobs, plans):
        if job.model.moe is None and plan.ep > 1:
            plan = Plan(tp=plan.tp, pp=plan.pp, dp=plan.dp, virtual_stages=plan.virtual_stages)
        est = estimate_step(job, plan, cluster)
        assert est.breakdown.host_s >= 0.0
        steps[(job, plan)] = est.step_time_s
    monkeypatch.setitem(H.HOST_OP_S, "x86", 0.0)
    for (job, plan), step in steps.items():
        without = estimate_step(job, plan, cluster)
        assert without.breakdown.host_s == 0.0
        assert step >= without.step_time_s * (1 - 1e-12)


def test_graphs_never_slow_the_host():
    plan = MOE_PLAN
    for g in (0.0, 1e-4, 1e-3, 1e-2):
        stall = [H.host_stall_mb_s(Job(MIXTRAL, 64, 1e9, precision="fp8", software=resolve(cuda_graphs=m)),
                                   plan, H100, _layer(g), 32) for m in CUDA_GRAPHS]
        assert stall[0] >= stall[1] >= stall[2]


def test_large_dense_gemms_hide_the_host():
    """Llama 3 70B on 1,024 H100 (TP8 PP4): every layer's GPU time exceeds its host time."""
    est = estimate_step(Job(LLAMA3_70B, 1024, 1e9, recompute="selective"),
                        Plan(tp=8, pp=4, dp=32, virtual_stages=5, sequence_parallel=True), Cluster(H100, NDR))
    assert est.breakdown.host_s == 0.0


def test_grace_superchips_issue_from_grace():
    """A GPU with its own NVLink-C2C link to host memory sits on a Grace CPU (GB200, GB300)."""
    assert H.host_cpu(H100) == "x86"
    assert H.host_cpu(replace(H100, host_Bps=225e9)) == "grace"


def test_graph_modes_are_a_megatron_core_knob():
    assert resolve(cuda_graphs="partial").describe()["cuda_graphs"] == "partial"
    assert resolve().cuda_graphs == "none"
    with pytest.raises(PerfError, match="software.cuda_graphs"):
        resolve("fsdp2", cuda_graphs="partial")
    with pytest.raises(PerfError, match="software.cuda_graphs must be"):
        resolve(cuda_graphs="some")
    assert resolve(moe_dispatcher="hybridep").moe_dispatcher == "hybridep"
