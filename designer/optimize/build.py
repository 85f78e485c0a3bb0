"""From spec and catalog to the integer program's data, evaluated lazily and pruned by bounds.

Evaluating a workload on a candidate (the performance model over a range of GPU counts) is the
expensive step, and most candidates cannot win. A :class:`Workspace` therefore evaluates on
demand and solves by bounds:

1. For every server type, the smallest GPU count at which each workload meets its deadline and
   utilization target on an *ideal* network (infinite bandwidth, zero latency) is a lower bound
   on the count any real fabric needs: the performance model never predicts a faster step on a
   worse network (a tested property).
2. Each candidate's cost is then bounded below by its servers, their NIC links and the leaves
   those links need at that count (:func:`lower_bound`), with no spines, cores or racks.
3. Candidates are added to the program in order of that bound, cheapest first; once the program
   has a feasible answer of cost C, every candidate whose bound is at least C is dropped: it
   cannot do better. The result is the optimum over all candidates, found after evaluating few.

All evaluations are kept (not only the qualifying ones) so explanations can say what the best
utilization or time on a system was.
"""

from __future__ import annotations

__all__ = ["Thresholds", "Workspace", "thresholds_of", "CLOUD_MAX_INSTANCES"]

import math
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Iterable, Mapping

from designer import perf
from designer.catalog_types import Catalog, Facility
from designer.errors import CatalogError, InfeasibleError, TopologyError
from designer.optimize import pricing
from designer.optimize.candidates import Candidate
from designer.optimize.evaluate import Evaluation, Evaluator, gpu_count_grid, job_for, plan_constraints
from designer.optimize.milp import Solution, solve_problem
from designer.optimize.problem import CloudSystem, Economics, Limits, OnPremSystem, Option, Problem
from designer.spec import Deployment, Spec
from designer.units import SECONDS_PER_YEAR

# Largest cloud reservation considered per workload: 2,048 instances (16,384 GPUs). Providers sell
# clusters of this order through reserved capacity; override with constraints.max_nodes.
CLOUD_MAX_INSTANCES = 2048
# Stop scanning larger sizes once the deadline is met and utilization has fallen this far below
# the target on three sizes in a row: utilization falls as a job spreads.
_UTIL_STOP = 0.85
_BATCH = 40  # on-prem candidates added to the program per round
# Objectives whose optimum can be bounded by a lower bound on total cost.
_PRUNABLE = ("min_total_cost",)


@dataclass(frozen=True, slots=True)
class Thresholds:
    """What an option must reach: the spec's, or relaxed ones while explaining."""

    min_utilization: float
    deadlines_s: Mapping[str, float]


def thresholds_of(spec: Spec) -> Thresholds:
    """The spec's own thresholds (a workload without a deadline has the horizon)."""
    return Thresholds(spec.constraints.min_utilization,
                      MappingProxyType({w.name: w.deadline_s or spec.horizon_s for w in spec.workloads}))


def _ideal_view(gpus_per_node: int, gpu) -> perf.NetworkView:
    # An upper bound on any fabric: 1 PB/s per GPU, no latency, no taper.
    return perf.NetworkView(gpus_per_node=gpus_per_node, inter_Bps_per_gpu=1e15, efficiency=1.0,
                            host_latency_s=0.0, switch_latency_s=0.0, hops=1, oversubscription=1.0,
                            bisection_Bps_per_gpu=1e15, in_network_reduction=True, scaleup_Bps=gpu.scaleup_Bps,
                            fabric="ideal")


class Workspace:
    """Candidates of one spec, their prices and evaluations (computed on demand), and solving."""

    def __init__(self, spec: Spec, catalog: Catalog, facility: Facility, candidates: Iterable[Candidate]):
        self.spec = spec
        self.catalog = catalog
        self.facility = facility
        self.candidates = tuple(candidates)
        self.by_key = {c.key: c for c in self.candidates}
        self.evaluator = Evaluator(catalog, facility)
        self.jobs = {w.name: job_for(w) for w in spec.workloads}
        self.systems: dict[str, OnPremSystem | CloudSystem] = {}
        self.skipped: dict[str, str] = {}
        self.evaluations: dict[tuple[str, str], tuple[Evaluation, ...]] = {}
        self._scanned: dict[tuple[str, str], int] = {}  # (workload, key) -> smallest GPU count scanned
        self._ideal: dict[tuple[str, str, float, float], int | None] = {}
        self.fixed_nodes = spec.system.nodes
        self.economics = Economics(
            horizon_s=spec.horizon_s, pue=facility.pue, electricity_usd_per_j=facility.electricity_usd_per_j,
            installation_fraction=facility.installation_fraction,
            maintenance_fraction_per_year=facility.maintenance_fraction_per_year,
        )
        self.solves = 0

    # ---------------------------------------------------------------- sizes and bounds

    def max_nodes(self, cand: Candidate) -> int:
        """Largest node count a candidate may have (its topology, the spec's limits, a pin)."""
        if cand.deployment is Deployment.CLOUD:
            limit = CLOUD_MAX_INSTANCES
        else:
            try:
                limit = pricing.fabric_shape(cand, self.catalog, self.facility).max_nodes
            except (CatalogError, TopologyError):
                return 0
        if self.spec.constraints.max_nodes is not None:
            limit = min(limit, self.spec.constraints.max_nodes)
        if self.fixed_nodes is not None:
            limit = min(limit, self.fixed_nodes)
        return max(limit, 0)

    def _grid(self, w, cand: Candidate, max_nodes: int) -> tuple[int, ...]:
        if w.gpus is not None:
            return (w.gpus,) if w.gpus <= max_nodes * cand.gpus_per_node else ()
        return gpu_count_grid(cand.gpus_per_node, max_nodes)

    def ideal_gpus(self, w, cand: Candidate, th: Thresholds) -> int | None:
        """Smallest grid GPU count meeting ``th`` for ``w`` on an ideal network with this GPU; None if none."""
        gpu = self.catalog.gpus[cand.gpu]
        key = (w.name, f"{cand.gpu}/{cand.gpus_per_node}", th.min_utilization, th.deadlines_s[w.name])
        if key not in self._ideal:
            view = _ideal_view(cand.gpus_per_node, gpu)
            cluster = perf.Cluster(gpu=gpu, network=view)
            found = None
            limit = CLOUD_MAX_INSTANCES if cand.deployment is Deployment.CLOUD else 100_000
            if self.spec.constraints.max_nodes is not None:
                limit = min(limit, self.spec.constraints.max_nodes)
            for g in self._grid(w, cand, limit):
                try:
                    est = perf.search_plans(self.jobs[w.name], cluster, g, plan_constraints(w.parallelism))
                except Exception:  # noqa: BLE001 - a size with no plan simply does not qualify
                    continue
                if est.time_to_train_s <= th.deadlines_s[w.name] and est.utilization >= th.min_utilization:
                    found = g
                    break
            self._ideal[key] = found
        return self._ideal[key]

    def lower_bound(self, key: str, th: Thresholds, *, gpus: int | None = None) -> float:
        """A lower bound on the total cost of any design that builds on-prem candidate ``key``.

        At least one workload runs on it, on at least its ideal-network GPU count; the design
        pays at least for those servers (with installation, maintenance and power over the
        horizon), their NIC links and the leaves those links need.
        """
        cand = self.by_key[key]
        if gpus is None:
            sizes = [self.ideal_gpus(w, cand, th) for w in self.spec.workloads]
            sizes = [s for s in sizes if s is not None]
            if not sizes:
                return math.inf
            gpus = min(sizes)
        nodes = math.ceil(gpus / cand.gpus_per_node)
        if self.fixed_nodes is not None:
            nodes = self.fixed_nodes
        server = self.catalog.servers[cand.server]
        switch = self.catalog.switches[cand.switch]
        e = self.economics
        years = e.horizon_s / SECONDS_PER_YEAR
        keep = 1.0 + e.installation_fraction + e.maintenance_fraction_per_year * years
        energy = e.pue * e.electricity_usd_per_j * e.horizon_s
        ports = switch.ports_at(self.catalog.nics[server.nic].rate_Bps) or 1
        leaves = math.ceil(server.nics * nodes / ports)
        return nodes * (server.price_usd * keep + server.power_w * energy) + leaves * switch.price_usd * keep

    # ---------------------------------------------------------------- evaluation

    def prepare(self, key: str, th: Thresholds, *, down_to_gpus: int | None = None) -> bool:
        """Price candidate ``key`` and evaluate every workload on it; False if it is unusable."""
        if key in self.skipped:
            return False
        cand = self.by_key[key]
        max_nodes = self.max_nodes(cand)
        if max_nodes < 1:
            self.skipped[key] = "no size fits the limits"
            return False
        for w in self.spec.workloads:
            start = self.ideal_gpus(w, cand, th)
            if down_to_gpus is not None:
                start = min(start or down_to_gpus, down_to_gpus)
            self._scan(w, cand, max_nodes, th, start)
        if key not in self.systems:
            try:
                self.systems[key] = self._system(cand, th)
            except (CatalogError, TopologyError) as exc:
                # A fabric the catalog cannot cable (no fitting transceiver) is not a candidate.
                self.skipped[key] = str(exc)
                return False
        return True

    def _scan(self, w, cand: Candidate, max_nodes: int, th: Thresholds, start: int | None) -> None:
        pair = (w.name, cand.key)
        grid = self._grid(w, cand, max_nodes)
        if start is None:
            # Not even an ideal network qualifies: keep a few sizes to explain what is reached.
            start = grid[-1] if grid else 1
            grid = grid[-3:]
        done = self._scanned.get(pair)
        if done is not None and done <= start:
            return
        known = {e.gpus: e for e in self.evaluations.get(pair, ())}
        deadline = th.deadlines_s[w.name]
        below = 0
        first_ok = 0
        for g in grid:
            if g < start:
                continue
            e = known.get(g) or self.evaluator.evaluate(w, self.jobs[w.name], cand, g)
            known[g] = e
            if e.estimate is None:
                continue
            if e.time_s <= deadline and e.utilization < _UTIL_STOP * th.min_utilization:
                below += 1
                if below >= 3:
                    break
            else:
                below = 0
            if self.spec.objective.value != "min_time" and e.time_s <= deadline and e.utilization >= th.min_utilization:
                # A larger size costs more nodes; it can help only min_time, or several workloads
                # sharing the cluster when it needs less GPU-time: then scan a little further.
                first_ok = first_ok or g
                if len(self.spec.workloads) == 1 or g >= 1.5 * first_ok:
                    break
        self.evaluations[pair] = tuple(sorted(known.values(), key=lambda e: e.gpus))
        self._scanned[pair] = min(start, done if done is not None else start)

    def _system(self, cand: Candidate, th: Thresholds) -> OnPremSystem | CloudSystem:
        if cand.deployment is Deployment.CLOUD:
            inst = self.catalog.clouds[cand.server]
            return CloudSystem(cand, pricing.instance_usd_per_s(inst, self.spec.constraints.pricing))
        shape = pricing.fabric_shape(cand, self.catalog, self.facility)
        ref = 1
        for w in self.spec.workloads:
            ok = [e.gpus for e in self.evaluations.get((w.name, cand.key), ())
                  if e.estimate and e.time_s <= th.deadlines_s[w.name]]
            if ok:
                ref = max(ref, math.ceil(min(ok) / cand.gpus_per_node))
        costs = pricing.unit_costs(cand, self.catalog, self.facility, ref)
        if self.fixed_nodes is not None:
            shape = replace(shape, max_nodes=min(shape.max_nodes, self.fixed_nodes))
        return OnPremSystem(cand, shape, costs)

    # ---------------------------------------------------------------- the program

    def problem(self, keys: Iterable[str], th: Thresholds, *, limits: Limits | None = None,
                objective: str | None = None) -> Problem:
        """The program's data over the (prepared) candidates ``keys``."""
        objective = objective or self.spec.objective.value
        keep_time = objective == "min_time"
        onprem, cloud = [], []
        options: dict[tuple[str, str], tuple[Option, ...]] = {}
        for key in sorted(set(keys)):
            system = self.systems.get(key)
            if system is None:
                continue
            (onprem if isinstance(system, OnPremSystem) else cloud).append(system)
            for w in self.spec.workloads:
                evals = self.evaluations.get((w.name, key), ())
                opts = [Option(e.gpus, e.time_s, e.utilization, i) for i, e in enumerate(evals)
                        if e.estimate is not None and e.utilization >= th.min_utilization - 1e-12
                        and e.time_s <= th.deadlines_s[w.name] * (1 + 1e-12)]
                if opts:
                    options[(w.name, key)] = _pareto(opts, keep_time)
        return Problem(
            workloads=tuple(w.name for w in self.spec.workloads), deadlines_s=th.deadlines_s,
            tokens=MappingProxyType({w.name: w.tokens for w in self.spec.workloads}),
            onprem=tuple(onprem), cloud=tuple(cloud), options=MappingProxyType(options), economics=self.economics,
            limits=limits if limits is not None else self.limits(), objective=objective,
            fixed_nodes=self.fixed_nodes,
        )

    def limits(self) -> Limits:
        c = self.spec.constraints
        return Limits(capex_usd=self.spec.budget.capex_usd, total_usd=self.spec.budget.total_usd,
                      power_w=c.max_power_w, racks=c.max_racks, nodes=c.max_nodes)

    def _refined_bound(self, key: str, th: Thresholds) -> float:
        """:meth:`lower_bound` at the smallest GPU count that qualifies on the candidate's own network."""
        cand = self.by_key[key]
        sizes = []
        for w in self.spec.workloads:
            ok = [e.gpus for e in self.evaluations.get((w.name, key), ())
                  if e.estimate is not None and e.utilization >= th.min_utilization and e.time_s <= th.deadlines_s[w.name]]
            if ok:
                sizes.append(min(ok))
        if not sizes:
            return math.inf
        return self.lower_bound(key, th, gpus=min(sizes))

    def solve(self, th: Thresholds, *, keys: Iterable[str] | None = None, limits: Limits | None = None,
              objective: str | None = None, solver: str = "highs", time_limit_s: float | None = None,
              cutoff: float | None = None) -> Solution:
        """Optimum over the candidates ``keys`` (all by default), adding on-prem candidates in order
        of their cost bound and stopping once the bound reaches the best cost found.

        Args:
            cutoff: only a design cheaper than this is wanted (a known design's total cost);
                candidates whose bound reaches it are never evaluated.

        Raises:
            InfeasibleError: no design over those candidates meets ``th`` and the limits (and,
                with ``cutoff``, none is cheaper than it).
        """
        keys = sorted(self.by_key if keys is None else set(keys))
        objective = objective or self.spec.objective.value
        prunable = objective in _PRUNABLE
        cloud = [k for k in keys if self.by_key[k].deployment is Deployment.CLOUD]
        onprem = [k for k in keys if self.by_key[k].deployment is Deployment.ON_PREM]
        active = [k for k in cloud if self.prepare(k, th)]
        bounds = {k: self.lower_bound(k, th) for k in onprem}
        pending = sorted((k for k in onprem if bounds[k] < math.inf), key=lambda k: (bounds[k], k))
        best: Solution | None = None
        best_total = cutoff if (prunable and cutoff is not None) else math.inf
        while True:
            batch = []
            while pending and (len(batch) < _BATCH or not prunable):
                k = pending[0]
                if prunable and bounds[k] >= best_total:
                    pending = []
                    break
                pending.pop(0)
                if self.prepare(k, th) and (not prunable or self._refined_bound(k, th) < best_total):
                    batch.append(k)
            if batch or (best is None and not pending):
                active.extend(batch)
                try:
                    self.solves += 1
                    sol = solve_problem(self.problem(active, th, limits=limits, objective=objective),
                                        solver=solver, time_limit_s=time_limit_s)
                except InfeasibleError:
                    if not pending:
                        raise
                    continue
                total = sol.capex_usd + sol.opex_usd + sol.cloud_usd
                if prunable and cutoff is not None and total >= cutoff * (1 - 1e-9):
                    if not pending:
                        raise InfeasibleError("no design cheaper than the cutoff")
                    continue
                best, best_total = sol, total
            if not pending:
                if best is None:
                    raise InfeasibleError("no design over the candidates meets the constraints")
                return best


def _pareto(options: list[Option], keep_time: bool) -> tuple[Option, ...]:
    """Drop options no objective can prefer: another uses no more GPUs and no more GPU-time
    (and, for ``min_time``, is no slower)."""
    kept = []
    for o in options:
        dominated = False
        for q in options:
            if q is o:
                continue
            no_worse = q.gpus <= o.gpus and q.gpu_seconds <= o.gpu_seconds and (not keep_time or q.time_s <= o.time_s)
            strictly = q.gpus < o.gpus or q.gpu_seconds < o.gpu_seconds or (keep_time and q.time_s < o.time_s)
            if no_worse and (strictly or q.index < o.index):
                dominated = True
                break
        if not dominated:
            kept.append(o)
    return tuple(kept)
