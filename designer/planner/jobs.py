"""A spec's models, software stacks, jobs and pinned plans as the performance model takes them.

These translations need only the performance model's input types (:mod:`designer.perf.types`,
:mod:`designer.perf.software`), not the optimizer: ``validate`` checks a spec's software stack and
architecture with them and stays fast to start.
"""

from __future__ import annotations

__all__ = ["DEFAULT_CHECKPOINT_WRITE_BPS", "arch_for", "software_for", "job_for", "plan_constraints"]

import dataclasses

from designer import perf
from designer.spec.models import ModelSpec, ParallelismSpec, WorkloadSpec

# Storage write bandwidth per node for checkpoints when the catalog gives no storage NIC: the
# DGX SuperPOD RA's "Better" storage level, 4 GB/s write per node (network.md 1.1, Table 6).
DEFAULT_CHECKPOINT_WRITE_BPS = 4e9


def arch_for(m: ModelSpec) -> perf.ModelArch:
    """The performance model's architecture for a spec model."""
    moe = None
    if m.moe is not None:
        moe = perf.MoE(experts=m.moe.experts, top_k=m.moe.top_k, shared_experts=m.moe.shared_experts,
                       expert_ffn=m.moe.expert_ffn, dense_layers=m.moe.dense_layers, groups=m.moe.groups,
                       group_top_k=m.moe.group_top_k)
    mla = None
    if m.mla is not None:
        mla = perf.MLA(q_lora_rank=m.mla.q_lora_rank, kv_lora_rank=m.mla.kv_lora_rank,
                       qk_nope_head_dim=m.mla.qk_nope_head_dim, qk_rope_head_dim=m.mla.qk_rope_head_dim,
                       v_head_dim=m.mla.v_head_dim)
    return perf.ModelArch(name=m.name, layers=m.layers, hidden=m.hidden, heads=m.heads, kv_heads=m.kv_heads,
                          ffn=m.ffn, vocab=m.vocab, seq_len=m.seq_len, moe=moe, params=m.params,
                          gated_mlp=m.gated_mlp, mla=mla, mtp_layers=m.mtp_layers)


def software_for(w: WorkloadSpec) -> perf.Software:
    """The performance model's software stack for a spec workload (raises PerfError naming the
    knob the stack cannot honour; :func:`designer.planner.inputs.check_software` locates it)."""
    s = w.software
    return perf.resolve_software(s.preset, attention=s.attention, sequence_parallel=s.sequence_parallel,
                                 tp_comm_overlap=s.tp_comm_overlap, dp_overlap=s.dp_overlap,
                                 p2p_overlap=s.p2p_overlap, dropout=s.dropout,
                                 compile=s.compile, moe_dispatcher=s.moe_dispatcher,
                                 in_network_reduction=s.in_network_reduction,
                                 checkpoint_saves=s.checkpoint_saves, cuda_graphs=s.cuda_graphs)


def job_for(w: WorkloadSpec, checkpoint_Bps_per_node: float | None = None) -> perf.Job:
    """The performance model's job for a spec workload."""
    ckpt_bw = None
    if w.checkpoint_interval_s is not None:
        ckpt_bw = checkpoint_Bps_per_node or DEFAULT_CHECKPOINT_WRITE_BPS
    return perf.Job(model=arch_for(w.model), global_batch=w.global_batch, tokens=w.tokens, precision=w.precision,
                    recompute=w.recompute, checkpoint_interval_s=w.checkpoint_interval_s,
                    checkpoint_write_Bps_per_node=ckpt_bw, software=software_for(w))


def plan_constraints(p: ParallelismSpec) -> perf.PlanConstraints | None:
    """Pinned parts of a plan (``None`` when the whole plan is searched).

    The spec's ``parallelism`` and the search's constraints hold the same fields under the same
    names (tests/planner/test_jobs.py checks it), so every field is carried over by name: a
    degree added to both cannot be left out of the search.
    """
    if p.is_auto:
        return None
    return perf.PlanConstraints(**{f.name: getattr(p, f.name) for f in dataclasses.fields(perf.PlanConstraints)})
