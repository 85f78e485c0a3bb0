"""Compiling a spec and its catalog into the problem the optimizer solves, once.

The spec is read here and nowhere below: :func:`compile_task` gives the optimizer a
:class:`~designer.optimize.task.Task` with each workload's performance-model job, pinned size and
plan, the thresholds an option must reach, the candidate systems, the facility, the economics of
the horizon, the limits and the cloud pricing model.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_CHECKPOINT_WRITE_BPS",
    "arch_for",
    "software_for",
    "compile_task",
    "compile_workload",
    "job_for",
    "plan_constraints",
    "thresholds_of",
    "facility_for",
]

from dataclasses import replace
from types import MappingProxyType
from typing import Iterable

from designer import perf
from designer.catalog.types import Catalog, Facility
from designer.optimize.candidates import Candidate
from designer.optimize.problem import Economics, Limits
from designer.optimize.task import Task, Thresholds, Workload
from designer.planner.candidates import enumerate_candidates
from designer.spec.models import ModelSpec, ParallelismSpec, Spec, WorkloadSpec

# Storage write bandwidth per node for checkpoints when the catalog gives no storage NIC: the
# DGX SuperPOD RA's "Better" storage level, 4 GB/s write per node (network.md 1.1, Table 6).
DEFAULT_CHECKPOINT_WRITE_BPS = 4e9


def arch_for(m: ModelSpec) -> perf.ModelArch:
    """The performance model's architecture for a spec model."""
    moe = None
    if m.moe is not None:
        moe = perf.MoE(experts=m.moe.experts, top_k=m.moe.top_k, shared_experts=m.moe.shared_experts,
                       expert_ffn=m.moe.expert_ffn, dense_layers=m.moe.dense_layers)
    mla = None
    if m.mla is not None:
        mla = perf.MLA(q_lora_rank=m.mla.q_lora_rank, kv_lora_rank=m.mla.kv_lora_rank,
                       qk_nope_head_dim=m.mla.qk_nope_head_dim, qk_rope_head_dim=m.mla.qk_rope_head_dim,
                       v_head_dim=m.mla.v_head_dim)
    return perf.ModelArch(name=m.name, layers=m.layers, hidden=m.hidden, heads=m.heads, kv_heads=m.kv_heads,
                          ffn=m.ffn, vocab=m.vocab, seq_len=m.seq_len, moe=moe, params=m.params,
                          gated_mlp=m.gated_mlp, mla=mla)


def software_for(w: WorkloadSpec) -> perf.Software:
    """The performance model's software stack for a spec workload (raises PerfError naming the
    knob the stack cannot honour; :func:`designer.planner.inputs.check_software` locates it)."""
    s = w.software
    return perf.resolve_software(s.preset, attention=s.attention, sequence_parallel=s.sequence_parallel,
                                 tp_comm_overlap=s.tp_comm_overlap, dp_overlap=s.dp_overlap, dropout=s.dropout,
                                 compile=s.compile)


def job_for(w: WorkloadSpec, checkpoint_Bps_per_node: float | None = None) -> perf.Job:
    """The performance model's job for a spec workload."""
    ckpt_bw = None
    if w.checkpoint_interval_s is not None:
        ckpt_bw = checkpoint_Bps_per_node or DEFAULT_CHECKPOINT_WRITE_BPS
    return perf.Job(model=arch_for(w.model), global_batch=w.global_batch, tokens=w.tokens, precision=w.precision,
                    recompute=w.recompute, checkpoint_interval_s=w.checkpoint_interval_s,
                    checkpoint_write_Bps_per_node=ckpt_bw, software=software_for(w))


def plan_constraints(p: ParallelismSpec) -> perf.PlanConstraints | None:
    """Pinned parts of a plan (``None`` when the whole plan is searched)."""
    if p.is_auto:
        return None
    return perf.PlanConstraints(tp=p.tp, pp=p.pp, dp=p.dp, ep=p.ep, cp=p.cp, microbatch=p.microbatch,
                                virtual_stages=p.virtual_stages, zero=p.zero,
                                sequence_parallel=p.sequence_parallel, first_stage_layers=p.first_stage_layers,
                                last_stage_layers=p.last_stage_layers)


def compile_workload(w: WorkloadSpec) -> Workload:
    """A spec workload as the optimizer sees it (its job, pinned plan and size, deadline)."""
    return Workload(name=w.name, job=job_for(w), tokens=w.tokens, plan=plan_constraints(w.parallelism),
                    gpus=w.gpus, deadline_s=w.deadline_s)


def thresholds_of(spec: Spec) -> Thresholds:
    """The spec's own thresholds (a workload without a deadline has the horizon)."""
    return Thresholds(spec.constraints.min_utilization,
                      MappingProxyType({w.name: w.deadline_s or spec.horizon_s for w in spec.workloads}))


def facility_for(spec: Spec, catalog: Catalog) -> Facility:
    """The catalog's default facility with the spec's overrides applied."""
    base = catalog.facilities.get("default") or next(iter(catalog.facilities.values()))
    f = spec.facility
    return replace(
        base,
        electricity_usd_per_j=f.electricity_usd_per_j if f.electricity_usd_per_j is not None else base.electricity_usd_per_j,
        pue=f.pue if f.pue is not None else base.pue,
        rack_power_w=f.rack_power_w if f.rack_power_w is not None else base.rack_power_w,
    )


def _limits_of(spec: Spec) -> Limits:
    c = spec.constraints
    return Limits(capex_usd=spec.budget.capex_usd, total_usd=spec.budget.total_usd,
                  power_w=c.max_power_w, racks=c.max_racks, nodes=c.max_nodes)


def compile_task(spec: Spec, catalog: Catalog, candidates: Iterable[Candidate] | None = None) -> Task:
    """The optimizer's problem for ``spec`` over ``catalog``.

    Args:
        spec: a loaded spec.
        catalog: the merged catalog.
        candidates: the candidate systems, when already enumerated (else
            :func:`~designer.planner.candidates.enumerate_candidates`).

    Raises:
        PerfError: a workload's model is not one the performance model accepts.
    """
    if candidates is None:
        candidates, _ = enumerate_candidates(spec, catalog)
    facility = facility_for(spec, catalog)
    workloads = tuple(compile_workload(w) for w in spec.workloads)
    economics = Economics(
        horizon_s=spec.horizon_s, pue=facility.pue, electricity_usd_per_j=facility.electricity_usd_per_j,
        installation_fraction=facility.installation_fraction,
        maintenance_fraction_per_year=facility.maintenance_fraction_per_year,
    )
    return Task(objective=spec.objective.value, workloads=workloads, thresholds=thresholds_of(spec),
                candidates=tuple(candidates), catalog=catalog, facility=facility, economics=economics,
                limits=_limits_of(spec), pricing=spec.constraints.pricing, fixed_nodes=spec.system.nodes)
