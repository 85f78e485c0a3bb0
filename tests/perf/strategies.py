"""Hypothesis strategies for the performance-model tests: random models, jobs and valid plans."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from hypothesis import strategies as st

from designer.perf import (
    PRESET_NAMES, Cluster, Job, MoE, ModelArch, Plan, PlanConstraints, Precision, Recompute, Software,
    check_plan, estimate_step, resolve_software,
)
from designer.perf.pipeline import interleave_depths, stage_layout
from designer.perf.search import candidate_plans

from .factories import A100, H100, HDR, NDR

__all__ = ["BIG_A100", "BIG_H100", "Case", "cases", "divisors", "fastest_valid", "jobs", "models",
           "small_searches", "softwares", "valid_candidates"]

# The throughput identities do not depend on memory: GPUs with unlimited HBM let every
# structurally valid plan run, so the strategies need not search for plans that fit.
_UNLIMITED = 1e18
BIG_H100 = replace(H100, hbm_bytes=_UNLIMITED)
BIG_A100 = replace(A100, hbm_bytes=_UNLIMITED)


@dataclass(frozen=True)
class Case:
    job: Job
    plan: Plan
    cluster: Cluster


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


@st.composite
def models(draw, tp: int, cp: int, moe_ok: bool = True) -> ModelArch:
    """A decoder whose shape tensor parallelism ``tp`` and context parallelism ``cp`` can split."""
    head_dim = draw(st.sampled_from([64, 128]))
    heads = tp * draw(st.sampled_from([1, 2, 4, 8]))
    kv_heads = draw(st.sampled_from([d for d in divisors(heads) if d % tp == 0 or tp % d == 0]))
    hidden = heads * head_dim
    ffn = tp * 64 * draw(st.integers(min_value=1, max_value=4 * hidden // 64))
    # seq_len / cp must stay a multiple of tp (sequence parallelism splits the local tokens).
    seq_len = cp * tp * draw(st.sampled_from([64, 128, 256, 512, 1024, 2048, 4096]))
    layers = draw(st.integers(min_value=1, max_value=64))
    moe = None
    if moe_ok and draw(st.booleans()):
        experts = draw(st.sampled_from([2, 4, 8, 16]))
        moe = MoE(experts=experts, top_k=draw(st.integers(min_value=1, max_value=min(2, experts))),
                  shared_experts=draw(st.integers(min_value=0, max_value=1)),
                  expert_ffn=draw(st.none() | st.just(tp * 64 * draw(st.integers(1, 16)))),
                  dense_layers=draw(st.integers(min_value=0, max_value=min(1, layers))))
    return ModelArch("random", layers, hidden, heads, kv_heads, ffn,
                     vocab=draw(st.integers(min_value=1000, max_value=160_000)), seq_len=seq_len,
                     moe=moe, gated_mlp=draw(st.booleans()))


@st.composite
def softwares(draw, preset: str | None = None) -> Software:
    """A software stack with knobs it can honour."""
    name = preset or draw(st.sampled_from(PRESET_NAMES))
    prof = resolve_software(name).profile
    attention = draw(st.sampled_from(["flash", "unfused"] if prof.flash_attention else ["unfused"]))
    sp = draw(st.sampled_from([None, False, True] if prof.sequence_parallel else [None, False]))
    tpo = prof.tp_comm_overlap and sp is not False and draw(st.booleans())
    # a stack whose TP overlap is a compiler pass runs it only compiled (torchtitan)
    compiled = tpo and prof.tp_overlap_needs_compile
    return resolve_software(name, attention=attention, sequence_parallel=sp, tp_comm_overlap=tpo,
                            dp_overlap=draw(st.sampled_from([None, False, True])),
                            dropout=draw(st.sampled_from([None, False, True])), compile=compiled)


def recomputes(software: Software) -> list[Recompute]:
    """Recomputation settings a single estimate can take on this stack."""
    return [r for r in Recompute if r is not Recompute.AUTO
            and (r is not Recompute.SELECTIVE or software.profile.selective_recompute)]


@st.composite
def jobs(draw, model: ModelArch, batch: int, fp8_ok: bool, software: Software | None = None) -> Job:
    precisions = [Precision.BF16, Precision.FP16] + ([Precision.FP8] if fp8_ok else [])
    ckpt = draw(st.booleans())
    sw = software if software is not None else draw(softwares())
    return Job(model, global_batch=batch, tokens=draw(st.floats(min_value=1e9, max_value=2e13)),
               precision=draw(st.sampled_from(precisions)),
               recompute=draw(st.sampled_from(recomputes(sw))),
               # 1 TB/s per node writes even a 1T-parameter checkpoint in 14 s: never refused
               checkpoint_interval_s=3600.0 if ckpt else None,
               checkpoint_write_Bps_per_node=1e12 if ckpt else None,
               software=sw)


@st.composite
def cases(draw, moe_ok: bool = True, single_stage: bool = False, context_parallel: bool = False) -> Case:
    """A job, a structurally valid plan for it and a cluster (GPUs with unlimited memory).

    ``single_stage`` draws pp = 1 only and ``context_parallel`` only software stacks that
    support it, so that tests about one stage or about cp need not filter most cases away."""
    names = [n for n in PRESET_NAMES if resolve_software(n).profile.context_parallel]
    sw = draw(softwares(draw(st.sampled_from(names))) if context_parallel else softwares())
    prof = sw.profile
    tp = draw(st.sampled_from([1, 2, 4, 8]))
    cp = draw(st.sampled_from([1, 2, 4, 8] if prof.context_parallel else [1]))
    model = draw(models(tp, cp, moe_ok and prof.expert_parallel))
    pps = [p for p in ((1,) if single_stage else (1, 2, 4, 8)) if p <= model.layers and (prof.uneven_pipeline or model.layers % p == 0)]
    pp = draw(st.sampled_from(pps))
    layout = stage_layout(model.layers, pp, None, None, prof.uneven_pipeline)
    depths = ([x for x in interleave_depths(layout) if x > 1]
              if prof.interleaving and pp >= max(2, prof.min_interleaved_pp) else [])
    v = draw(st.sampled_from([1] + depths[:3]))
    dp = draw(st.integers(min_value=1, max_value=64))
    mb = draw(st.sampled_from([1, 2, 4]))
    micro = draw(st.integers(min_value=1, max_value=8)) * (pp if v > 1 else 1)
    ep = 1
    if model.moe is not None:
        ep = draw(st.sampled_from(divisors(math.gcd(dp, model.moe.experts))))
    zeros = [z for z in prof.zero_stages if pp == 1 or z <= prof.zero_with_pipeline]
    if tp == 1 or sw.sequence_parallel is False or not prof.sequence_parallel:
        sp = False
    elif sw.sequence_parallel is True or sw.tp_comm_overlap:
        sp = True
    else:
        sp = draw(st.booleans())
    plan = Plan(tp=tp, pp=pp, dp=dp, ep=ep, cp=cp, microbatch=mb, virtual_stages=v,
                zero=draw(st.sampled_from(zeros)), sequence_parallel=sp)
    gpu, net = draw(st.sampled_from([(BIG_H100, NDR), (BIG_A100, HDR)]))
    net = replace(net, gpus_per_node=draw(st.sampled_from([4, 8])))
    job = draw(jobs(model, dp * mb * micro, fp8_ok=gpu.fp8_flops is not None, software=sw))
    cluster = Cluster(gpu, net)
    assert check_plan(job, plan, cluster) is None, check_plan(job, plan, cluster)
    return Case(job, plan, cluster)


@st.composite
def small_searches(draw):
    """A small dense or mixture-of-experts job on 8-32 GPUs, any stack, sometimes recompute auto:
    small enough to time every candidate plan of the search (``(job, cluster, gpus)``)."""
    model = draw(models(tp=1, cp=1))
    model = replace(model, layers=min(model.layers, 8))
    if model.moe is not None:
        model = replace(model, moe=replace(model.moe, dense_layers=0))
    gpus = draw(st.sampled_from([8, 16, 32]))
    batch = gpus * draw(st.sampled_from([1, 2, 4]))
    gpn = draw(st.sampled_from([4, 8]))
    gpu, net = draw(st.sampled_from([(H100, NDR), (A100, HDR)]))
    job = draw(jobs(model, batch, fp8_ok=gpu.fp8_flops is not None))
    if draw(st.booleans()):
        job = replace(job, recompute=Recompute.AUTO)
    return job, Cluster(gpu, replace(net, gpus_per_node=gpn)), gpus


def valid_candidates(job: Job, cluster: Cluster, gpus: int,
                     fixed: PlanConstraints | None = None) -> list[tuple[Job, Plan]]:
    """Every (job variant, plan) the search enumerates that passes :func:`check_plan`."""
    return [(v, p) for v, group in candidate_plans(job, cluster, gpus, fixed) for p in group
            if check_plan(v, p, cluster) is None]


def fastest_valid(valid: list[tuple[Job, Plan]], cluster: Cluster):
    """``(plan, recompute, step seconds)`` of the first strictly fastest candidate, each timed
    alone with :func:`estimate_step`: the exhaustive answer a search must return."""
    reference = None
    for v, p in valid:
        t = estimate_step(v, p, cluster).step_time_s
        if reference is None or t < reference[2]:
            reference = (p, v.recompute, t)
    return reference
