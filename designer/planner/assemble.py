"""From the program's answer to a design: the exact bill of materials, costs and per-workload results.

The program prices links at a reference size and counts racks by a pooled formula; the design is
priced exactly here, from the topology's closed form at the chosen node count
(:func:`~designer.optimize.pricing.onprem_bom`) and whole cloud instance-hours.
"""

from __future__ import annotations

__all__ = ["facility_assumptions", "price_book_used", "price_solution", "measures", "measures_of", "assemble_design",
           "preference_credits"]

import math
from dataclasses import replace
from pathlib import Path
from typing import Mapping
from types import MappingProxyType

from designer import __version__, perf
from designer.design.bom import sort_lines, total_power_w
from designer.catalog.media import GBPS
from designer.planner.candidates import link_speed
from designer.catalog.types import Catalog, Facility
from designer.design.model import (
    Breakdown, CostBreakdown, Design, FacilityAssumptions, PreferenceCredit, PriceBookUsed, SoftwareUsed, SolverInfo,
    SystemChoice, WorkloadResult,
)
from designer.optimize import costing, explain, preferences, pricing
from designer.optimize.candidates import Candidate
from designer.optimize.milp import Solution
from designer.optimize.preferences import Preference
from designer.optimize.task import Workload
from designer.optimize.workspace import Workspace
from designer.spec.choices import Deployment
from designer.spec.models import Spec
from designer.spec.units import JOULES_PER_KWH, SECONDS_PER_DAY, SECONDS_PER_YEAR


def _workload_result(w: Workload, cand: Candidate, est: perf.StepEstimate, cost_usd: float,
                     assumptions: tuple[str, ...] = ()) -> WorkloadResult:
    name = w.name
    b = est.breakdown
    p = est.plan
    return WorkloadResult(
        name=name, deployment=cand.deployment.value, server=cand.server, gpus=est.gpus,
        tp=p.tp, pp=p.pp, dp=p.dp, ep=p.ep, cp=p.cp, microbatch=p.microbatch, zero=p.zero,
        step_time_s=est.step_time_s, utilization=est.utilization, mfu=est.mfu,
        tflops_per_gpu=est.tflops_per_gpu, tokens_per_s=est.tokens_per_s,
        time_to_train_days=est.time_to_train_s / SECONDS_PER_DAY,
        deadline_days=None if w.deadline_s is None else w.deadline_s / SECONDS_PER_DAY,
        memory_gb_per_gpu=est.memory_bytes_per_gpu / 1e9,
        breakdown=Breakdown(compute_s=b.compute_s, tp_comm_s=b.tp_comm_s, pp_comm_s=b.pp_comm_s,
                            dp_comm_s=b.dp_comm_s, ep_comm_s=b.ep_comm_s, bubble_s=b.bubble_s,
                            exposed_comm_s=b.exposed_comm_s, checkpoint_s=b.checkpoint_s),
        cost_usd=cost_usd,
        software=SoftwareUsed(preset=est.software.preset, attention=est.software.attention.value,
                              sequence_parallel=p.sequence_parallel, tp_comm_overlap=est.software.tp_comm_overlap,
                              dp_overlap=est.software.overlaps_dp(p.zero),
                              p2p_overlap=est.software.overlaps_p2p(p.virtual_stages > 1 or p.schedule == "dualpipe"),
                              dropout=est.software.uses_dropout, compile=est.software.compile,
                              moe_dispatcher=est.software.moe_dispatcher,
                              in_network_reduction=est.software.in_network_reduction,
                              checkpoint_saves=est.software.selective_policy,
                              cuda_graphs=est.software.cuda_graphs),
        recompute=est.recompute.value,
        assumptions=assumptions,
        virtual_stages=p.virtual_stages, schedule=p.schedule, first_stage_layers=p.first_stage_layers,
        last_stage_layers=p.last_stage_layers, etp=p.etp if p.expert_tp != p.tp else None,
    )


def facility_assumptions(spec: Spec, facility: Facility) -> FacilityAssumptions:
    """The facility a design is priced for, as its file records it (the spec's overrides named)."""
    f = spec.facility
    overridden = tuple(key for key, value in (("electricity", f.electricity_usd_per_j), ("pue", f.pue),
                                              ("rack_power", f.rack_power_w)) if value is not None)
    overridden += tuple(sorted(key for key, attr in _FACILITY_KEYS.items() if attr in f.overrides))
    return FacilityAssumptions(
        name=facility.name, electricity_usd_per_kwh=facility.electricity_usd_per_j * JOULES_PER_KWH,
        pue=facility.pue, rack_power_kw=facility.rack_power_w / 1e3, rack_units=facility.rack_units,
        installation_fraction=facility.installation_fraction,
        maintenance_fraction_per_year=facility.maintenance_fraction_per_year, from_spec=overridden,
        source=facility.provenance.source, as_of=facility.provenance.as_of, space=facility.space,
        colocation_usd_per_kw_month=facility.colocation_usd_per_w_s * 1e3 * SECONDS_PER_YEAR / 12,
        build_usd_per_mw=facility.build_usd_per_w * 1e6, build_life_years=facility.build_life_s / SECONDS_PER_YEAR,
        training_power_fraction=facility.training_power_fraction, idle_power_fraction=facility.idle_power_fraction,
        useful_life_years=facility.useful_life_s / SECONDS_PER_YEAR, spares=facility.spares)


# Facility keys a spec may override besides electricity, PUE and rack power -> the attribute they set.
_FACILITY_KEYS = {
    "rack_units": "rack_units", "rack_price": "rack_price_usd", "installation_fraction": "installation_fraction",
    "maintenance_fraction_per_year": "maintenance_fraction_per_year", "space": "space",
    "colocation_price": "colocation_usd_per_w_s", "build_cost": "build_usd_per_w", "build_life": "build_life_s",
    "training_power_fraction": "training_power_fraction", "idle_power_fraction": "idle_power_fraction",
    "useful_life": "useful_life_s", "spares": "spares", "storage_bytes_per_token": "storage_bytes_per_token",
    "storage_checkpoints_kept": "storage_checkpoints_kept", "storage_read_per_node": "storage_read_Bps_per_node",
    "storage_write_per_node": "storage_write_Bps_per_node",
}


def price_solution(ws: Workspace, sol: Solution) -> tuple[list, CostBreakdown, object, dict[str, float]]:
    """The exact bill of materials and cost lines of a solution of the program.

    Returns:
        (BOM lines, cost breakdown, fabric summary of the on-prem system or None, cloud spend per
        workload). On-prem lines come from the topology's closed form at the chosen node count,
        with the file system, owned inventory, installation and spares
        (:func:`~designer.optimize.costing.design_bom`); cloud lines bill as each pricing model does.
    """
    catalog, facility, e = ws.catalog, ws.facility, ws.economics
    lines: list = []
    summary = None
    onprem = ws.by_key.get(sol.onprem_key) if sol.onprem_key else None
    node_s: dict[str, float] = {}
    util: dict[str, float] = {}
    if onprem is not None:
        gpn = onprem.gpus_per_node
        for w in ws.workloads:
            key, option = sol.assignment[w.name]
            if key == onprem.key:
                node_s[w.name] = option.gpus / gpn * option.time_s
                util[w.name] = option.utilization
        jobs = {w: math.ceil(sol.assignment[w][1].gpus / gpn) for w in node_s}
        onprem_lines, summary = costing.design_bom(ws.systems[onprem.key], catalog, facility, sol.nodes, jobs,
                                                   ws.task.owned)
        lines.extend(onprem_lines)
    cloud_costs: dict[str, float] = {}
    for w in ws.workloads:
        key, option = sol.assignment[w.name]
        cand = ws.by_key[key]
        if cand.deployment is Deployment.CLOUD:
            inst = catalog.clouds[cand.server]
            line = pricing.cloud_line(inst, cand.pricing or "on_demand", w.name, option.gpus / cand.gpus_per_node,
                                      option.time_s)
            lines.append(line)
            cloud_costs[w.name] = line.total_usd
    lines = list(sort_lines(lines))
    cost = costing.cost_breakdown(lines, catalog, facility, e, costing.Usage(node_s, util),
                                  server=onprem.server if onprem is not None else None, licences=ws.task.licences)
    return lines, cost, summary, cloud_costs


def _network_warnings(system) -> tuple[str, ...]:
    """What the chosen system's management networks leave out (designer.topology.networks): the
    out-of-band uplinks its in-band switches cannot take."""
    plan = getattr(getattr(system, "costs", None), "networks", None)
    if plan is None or not plan.parts.oob_uplink_problem:
        return ()
    return (f"out-of-band uplinks to the in-band network not built: {plan.parts.oob_uplink_problem}",)


def assemble_design(spec: Spec, ws: Workspace, sol: Solution, alternatives, constraints,
                    warnings: tuple[str, ...]) -> Design:
    """Turn the program's answer for ``spec`` into a design with an exact bill of materials."""
    catalog = ws.catalog
    lines, cost, summary, cloud_costs = price_solution(ws, sol)
    onprem = ws.by_key.get(sol.onprem_key) if sol.onprem_key else None
    results = []
    cloud_kinds = set()
    for w in ws.workloads:
        key, option = sol.assignment[w.name]
        cand = ws.by_key[key]
        est = next(e.estimate for e in ws.evaluations[(w.name, key)] if e.gpus == option.gpus)
        if cand.deployment is Deployment.CLOUD:
            cloud_kinds.add(cand)
        assumed = next((s.model.assumptions for s in spec.workloads if s.name == w.name), ())
        result = _workload_result(w, cand, est, cloud_costs.get(w.name, 0.0), assumed)
        slot = sol.schedule.get(w.name)
        if slot is not None:
            result = replace(result, start_day=slot.start_s / SECONDS_PER_DAY, end_day=slot.end_s / SECONDS_PER_DAY)
        results.append(result)
    shown = measures_of(lines, cost, summary)
    if onprem is not None:
        warnings = warnings + _network_warnings(ws.system(onprem.key))
        note = pricing.manager_note(onprem, catalog, summary)
        if note:
            warnings = warnings + (note,)
        deployment = "hybrid" if cloud_kinds else "on_prem"
        main = onprem
        gpu = catalog.servers[onprem.server].gpu
        nodes, gpus = sol.nodes, sol.nodes * onprem.gpus_per_node
        tiers = summary.tiers
        racks = int(shown.racks)
    else:
        deployment = "cloud"
        # The instance type that runs the most GPUs names the system (then key order).
        gpus_on = {c.key: 0 for c in cloud_kinds}
        for w in ws.workloads:
            key, option = sol.assignment[w.name]
            if key in gpus_on:
                gpus_on[key] = max(gpus_on[key], option.gpus)
        main = sorted(cloud_kinds, key=lambda c: (-gpus_on[c.key], c.key))[0]
        gpu = catalog.clouds[main.server].gpu
        peak = max(r.gpus for r in results)
        nodes, gpus = math.ceil(peak / main.gpus_per_node), peak
        tiers, racks = 0, 0
    link_gbps, native_gbps = link_speed(catalog, onprem)
    if native_gbps:
        server = catalog.servers[onprem.server]
        warnings = (*warnings, f"the {server.nics} {server.nic} NICs of each {server.name} run at "
                               f"{onprem.link_rate_Bps / GBPS:g} Gb/s, below their {native_gbps:g} Gb/s, on "
                               f"{onprem.switch} ({link_gbps:g} Gb/s per GPU); pin a switch of their rate to run "
                               "them at it")
    system = SystemChoice(
        deployment=deployment, server=main.server, gpu=gpu, nodes=nodes, gpus=gpus, fabric=main.fabric,
        topology=main.topology, oversubscription=main.oversubscription, switch=main.switch, tiers=tiers,
        racks=racks, power_kw=shown.power_w / 1e3,
        pricing=", ".join(sorted({c.pricing or "on_demand" for c in cloud_kinds})) if cloud_kinds else None,
        link_gbps_per_gpu=link_gbps, nic_native_gbps=native_gbps,
    )
    return Design(
        tool_version=__version__, spec_name=spec.name, spec_digest=spec.digest, catalog_digest=catalog.digest,
        catalog_dates=_as_written(spec, catalog.dates), objective=spec.objective.value, horizon_days=spec.horizon_s / SECONDS_PER_DAY,
        system=system, cost=cost, workloads=tuple(results), bom=tuple(lines), alternatives=tuple(alternatives),
        constraints=tuple(constraints),
        solver=SolverInfo(name=sol.solver, status=sol.status, gap=sol.gap, candidates=len(ws.by_key),
                          variables=sol.variables, constraints=sol.constraints),
        warnings=warnings, facility=facility_assumptions(spec, ws.facility),
        catalog_files=_as_written(spec, catalog.files), price_book=price_book_used(spec, catalog),
        preferences=preference_credits(spec, ws, sol, cost, cloud_costs),
    )


def preference_credits(spec: Spec, ws: Workspace, sol: Solution, cost, cloud_costs: Mapping[str, float]
                       ) -> tuple[PreferenceCredit, ...]:
    """Each soft preference and the credit the design earns from it, from the design's own figures
    (designer.optimize.preferences): ``$D`` gives ``D / |W|`` per workload run on a matching system;
    a share ``f`` gives ``f`` of the matching on-prem system's capex and opex less residual, and of
    each matching cloud workload's bill."""
    out = []
    n = len(ws.workloads)
    onprem_cost = cost.total_usd - cost.cloud_usd
    for p in spec.prefer:
        pref = Preference(p.key, p.value, p.usd, p.share)
        on, credit, onprem_counted = 0, 0.0, False
        for w in ws.workloads:
            cand = ws.by_key[sol.assignment[w.name][0]]
            if not preferences.matches(pref, cand, ws.catalog):
                continue
            on += 1
            credit += p.usd / n
            if cand.deployment is Deployment.CLOUD:
                credit += p.share * cloud_costs.get(w.name, 0.0)
            elif not onprem_counted:
                credit += p.share * onprem_cost
                onprem_counted = True
        out.append(PreferenceCredit(p.key, p.value, p.weight_text, on, credit))
    return tuple(out)


def price_book_used(spec: Spec, catalog: Catalog) -> PriceBookUsed | None:
    """The spec's price book as the design file records it (None when the spec names none)."""
    if spec.price_book is None:
        return None
    b = catalog.price_books[spec.price_book]
    return PriceBookUsed(name=b.name, currency=b.currency, exchange_rate=b.exchange_rate, discounts=b.discounts,
                         source=b.provenance.source, as_of=b.provenance.as_of)


def _as_written(spec: Spec, by_file: Mapping[str, str]) -> Mapping[str, str]:
    """``by_file`` keyed by each catalog's name as the spec writes it (relative to the spec), not by
    the path it was read from: a design file must not depend on the folder the spec is in."""
    written = spec.doc.data.get("catalogs", []) if spec.doc is not None and isinstance(spec.doc.data, dict) else []
    names = {str(path): Path(str(written[i])).as_posix() for i, path in enumerate(spec.catalogs)
             if i < len(written)}
    return MappingProxyType(dict(sorted((names.get(k, k), v) for k, v in by_file.items())))


def measures(ws: Workspace, sol: Solution) -> explain.Measures:
    """A solution's cost, power and racks as its design shows them (:func:`price_solution`)."""
    lines, cost, summary, _ = price_solution(ws, sol)
    return measures_of(lines, cost, summary)


def measures_of(lines, cost: CostBreakdown, summary) -> explain.Measures:
    """Cost, IT power (every non-cloud line) and racks (the floor layout's) of a priced design."""
    power_w = total_power_w(l for l in lines if l.category != "cloud")
    racks = summary.server_racks + summary.switch_racks if summary is not None else 0
    by_line = {**cost.capex_by_category}
    for name, usd in cost.opex_by_category.items():
        by_line[name] = by_line.get(name, 0.0) + usd
    if cost.residual_usd:
        by_line["residual"] = -cost.residual_usd
    if cost.cloud_usd:
        by_line["cloud"] = cost.cloud_usd
    return explain.Measures(cost.total_usd, cost.capex_usd, power_w, float(racks), MappingProxyType(by_line))
