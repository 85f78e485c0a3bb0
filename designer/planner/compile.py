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
    "economics_for",
    "storage_needs",
]

from dataclasses import replace
from types import MappingProxyType
from typing import Iterable

from designer import perf
from designer.perf import constants as perf_constants
from designer.catalog.types import Catalog, Facility
from designer.optimize import ownership
from designer.optimize.candidates import Candidate
from designer.optimize.preferences import Preference
from designer.optimize.problem import Economics, Limits, StorageNeeds
from designer.optimize.task import Task, Thresholds, Workload
from designer.planner.candidates import enumerate_candidates
# The spec -> performance-model translations live in planner.jobs (validate needs them without the
# optimizer); they stay importable from here.
from designer.planner.jobs import DEFAULT_CHECKPOINT_WRITE_BPS, arch_for, job_for, plan_constraints, software_for
from designer.spec.models import Spec, WorkloadSpec
from designer.topology.networks import Networks

def compile_workload(w: WorkloadSpec) -> Workload:
    """A spec workload as the optimizer sees it (its job, pinned plan and size, deadline)."""
    return Workload(name=w.name, job=job_for(w), tokens=w.tokens, plan=plan_constraints(w.parallelism),
                    gpus=w.gpus, deadline_s=w.deadline_s)


def thresholds_of(spec: Spec) -> Thresholds:
    """The spec's own thresholds (a workload without a deadline has the horizon)."""
    return Thresholds(spec.constraints.min_utilization,
                      MappingProxyType({w.name: w.deadline_s or spec.horizon_s for w in spec.workloads}))


def facility_for(spec: Spec, catalog: Catalog) -> Facility:
    """The catalog's default facility with the spec's overrides applied (every key the spec gives)."""
    base = catalog.facilities.get("default") or next(iter(catalog.facilities.values()))
    f = spec.facility
    overrides = dict(f.overrides)
    if "spares" in overrides:  # categories the spec does not name keep the catalog's share
        overrides["spares"] = MappingProxyType(dict(sorted({**base.spares, **overrides["spares"]}.items())))
    return replace(
        base,
        electricity_usd_per_j=f.electricity_usd_per_j if f.electricity_usd_per_j is not None else base.electricity_usd_per_j,
        pue=f.pue if f.pue is not None else base.pue,
        rack_power_w=f.rack_power_w if f.rack_power_w is not None else base.rack_power_w,
        **overrides,
    )


def economics_for(spec: Spec, catalog: Catalog, facility: Facility) -> Economics:
    """The horizon's economics: energy, space (colocation per rated kW, or an owned build over its
    life), draw under load, residual value after the useful life, licences and the support share
    of parts whose vendor has no contract of its own."""
    flat = facility.maintenance_fraction_per_year
    other = catalog.supports.get("other-vendors")
    space = (facility.build_usd_per_w / facility.build_life_s if facility.space == "owned"
             else facility.colocation_usd_per_w_s)
    return Economics(
        horizon_s=spec.horizon_s, pue=facility.pue, electricity_usd_per_j=facility.electricity_usd_per_j,
        installation_fraction=facility.installation_fraction,
        maintenance_fraction_per_year=flat if flat is not None else (other.fraction_per_year if other else 0.0),
        facility_usd_per_w_s=space, facility_capex=facility.space == "owned",
        training_power_fraction=facility.training_power_fraction, idle_power_fraction=facility.idle_power_fraction,
        residual_fraction=ownership.residual_fraction(facility.useful_life_s, spec.horizon_s),
        licence_usd_per_gpu_s=sum(catalog.licences[n].usd_per_gpu_s for n in spec.licences),
    )


def storage_needs(spec: Spec, facility: Facility, workloads: tuple[Workload, ...]) -> StorageNeeds | None:
    """What the workloads need of the on-prem file system: the facility's baseline bandwidth per
    node, each checkpointing job's write rate per node (the rate the performance model assumes
    when it prices the checkpoint stall), and capacity for each data set (tokens x bytes per
    token) and its kept checkpoints (weights and optimizer state, 14 bytes per parameter)."""
    st = spec.storage
    if not st.enabled:
        return None
    ckpt, capacity = {}, {}
    for w in workloads:
        job = w.job
        if job.checkpoint_interval_s is not None and job.checkpoint_write_Bps_per_node:
            ckpt[w.name] = job.checkpoint_write_Bps_per_node
        capacity[w.name] = (w.tokens * facility.storage_bytes_per_token + facility.storage_checkpoints_kept
                            * job.model.params_total() * perf_constants.CHECKPOINT_BYTES_PER_PARAM)
    return StorageNeeds(
        read_Bps_per_node=facility.storage_read_Bps_per_node, write_Bps_per_node=facility.storage_write_Bps_per_node,
        checkpoint_Bps_per_node=MappingProxyType(ckpt), capacity_bytes_of=MappingProxyType(capacity),
        system=st.system, capacity_bytes=st.capacity_bytes, write_Bps=st.write_Bps, read_Bps=st.read_Bps)


def _limits_of(spec: Spec) -> Limits:
    c = spec.constraints
    return Limits(capex_usd=spec.budget.capex_usd, total_usd=spec.budget.total_usd,
                  power_w=c.max_power_w, racks=c.max_racks, nodes=c.max_nodes)


def compile_task(spec: Spec, catalog: Catalog, candidates: Iterable[Candidate] | None = None, *,
                 efficiency: perf.ModelEfficiency | None = None) -> Task:
    """The optimizer's problem for ``spec`` over ``catalog``.

    Args:
        spec: a loaded spec.
        catalog: the merged catalog.
        candidates: the candidate systems, when already enumerated (else
            :func:`~designer.planner.candidates.enumerate_candidates`).
        efficiency: multipliers on the performance model's rates (default: as modelled).

    Raises:
        PerfError: a workload's model is not one the performance model accepts.
    """
    if candidates is None:
        candidates, _ = enumerate_candidates(spec, catalog)
    facility = facility_for(spec, catalog)
    workloads = tuple(compile_workload(w) for w in spec.workloads)
    return Task(objective=spec.objective.value, workloads=workloads, thresholds=thresholds_of(spec),
                candidates=tuple(candidates), catalog=catalog, facility=facility,
                economics=economics_for(spec, catalog, facility), limits=_limits_of(spec),
                pricing=spec.constraints.pricing[0], fixed_nodes=spec.system.nodes,
                gpus_per_domain_used=spec.system.gpus_per_domain_used,
                owned=MappingProxyType({o.name: o.count for o in spec.inventory}),
                storage=storage_needs(spec, facility, workloads), licences=spec.licences,
                efficiency=efficiency or perf.ModelEfficiency(),
                preferences=tuple(Preference(p.key, p.value, p.usd, p.share) for p in spec.prefer),
                networks=Networks(storage=spec.networks.storage, inband=spec.networks.inband, oob=spec.networks.oob))
