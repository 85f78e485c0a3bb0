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
3. Candidates are taken in order of that bound, cheapest first, in batches of a few. A design
   builds at most one on-prem system, so the optimum is the best of the programs over (every
   cloud instance + one batch); once one has an answer of cost C, every candidate whose bound is
   at least C is dropped: it cannot do better. The result is the optimum over all candidates,
   found after evaluating few (``tests/optimize/test_build.py`` compares it with the program
   over every candidate).
4. ``min_time`` is solved one on-prem system at a time (:mod:`designer.optimize.min_time`).

All evaluations are kept (not only the qualifying ones) so explanations can say what the best
utilization or time on a system was.
"""

from __future__ import annotations

__all__ = ["Thresholds", "Workspace", "thresholds_of", "CLOUD_MAX_INSTANCES"]

import math
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Iterable, Mapping

from designer import perf, topology
from designer.perf import flops as perf_flops
from designer.catalog_types import Catalog, Facility
from designer.errors import CatalogError, InfeasibleError, PerfError, TopologyError
from designer.optimize import pricing
from designer.optimize.candidates import Candidate
from designer.optimize.evaluate import (
    Evaluation, Evaluator, best_view, gpu_count_grid, ideal_view, job_for, plan_constraints,
)
from designer.optimize.milp import Solution, solve_problem
from designer.optimize.min_time import solve_min_time
from designer.optimize.problem import (
    CloudSystem, Economics, Limits, OnPremSystem, Option, Problem, pareto, usage_rate_usd_per_gpu_s,
)
from designer.spec import Deployment, Spec
from designer.units import SECONDS_PER_YEAR

# Largest cloud reservation considered per workload: 2,048 instances (16,384 GPUs). Providers sell
# clusters of this order through reserved capacity; override with constraints.max_nodes.
CLOUD_MAX_INSTANCES = 2048
# Stop scanning larger sizes once the deadline is met and utilization has fallen this far below
# the target on three sizes in a row: utilization falls as a job spreads.
_UTIL_STOP = 0.85
_MIN_TIME_OPTIONS = 6  # largest qualifying sizes kept per workload and system for min_time
_BATCH = 8  # on-prem candidates per program: small batches find an incumbent early, and it prunes
# Objectives whose optimum can be bounded by a lower bound on total cost.
_PRUNABLE = ("min_total_cost",)
_SAME_OBJECTIVE = 1e-9  # relative difference of two programs' objectives that counts as equal


@dataclass(frozen=True, slots=True)
class Thresholds:
    """What an option must reach: the spec's, or relaxed ones while explaining."""

    min_utilization: float
    deadlines_s: Mapping[str, float]

    def admits(self, workload: str, time_s: float, utilization: float) -> bool:
        """Whether a run of ``workload`` taking ``time_s`` at ``utilization`` qualifies. Float
        noise of 1e-12 is forgiven, so a size found exactly at a threshold counts everywhere
        alike (scans, bounds and the program's options)."""
        return (utilization >= self.min_utilization - 1e-12
                and time_s <= self.deadlines_s[workload] * (1 + 1e-12))


def thresholds_of(spec: Spec) -> Thresholds:
    """The spec's own thresholds (a workload without a deadline has the horizon)."""
    return Thresholds(spec.constraints.min_utilization,
                      MappingProxyType({w.name: w.deadline_s or spec.horizon_s for w in spec.workloads}))


class Workspace:
    """Candidates of one spec, their prices and evaluations (computed on demand), and solving."""

    def __init__(self, spec: Spec, catalog: Catalog, facility: Facility, candidates: Iterable[Candidate]):
        self.spec = spec
        self.catalog = catalog
        self.facility = facility
        self.candidates = tuple(candidates)
        self.by_key = {c.key: c for c in self.candidates}
        self._ranks = MappingProxyType({k: i for i, k in enumerate(sorted(self.by_key))})
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
        self._cost_cache: dict[tuple[str, int], float] = {}
        self._ideal_est: dict[tuple, perf.StepEstimate | None] = {}  # estimates do not depend on thresholds
        self._floors: dict[tuple, float] = {}
        self._max_nodes: dict[str, int] = {}
        self._cloud_version = 0  # cloud evaluations stored so far, to know when cached floors are stale

    # ---------------------------------------------------------------- sizes and bounds

    def max_nodes(self, cand: Candidate) -> int:
        """Largest node count a candidate may have (its topology, the spec's limits, a pin)."""
        if cand.key not in self._max_nodes:
            self._max_nodes[cand.key] = self._node_limit(cand)
        return self._max_nodes[cand.key]

    def _node_limit(self, cand: Candidate) -> int:
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
        budgets = [b for b in (self.spec.budget.capex_usd, self.spec.budget.total_usd) if b is not None]
        if budgets and cand.deployment is Deployment.ON_PREM and self.spec.objective.value == "min_time":
            # No design can buy more servers than the budget pays for.
            limit = min(limit, int(min(budgets) // self.catalog.servers[cand.server].price_usd))
            total = self.spec.budget.total_usd
            if total is not None and limit >= 1:
                # Nor a system whose cost over the horizon alone (non-decreasing in its nodes)
                # exceeds the total budget: the largest affordable size, by bisection.
                if self.program_cost(cand.key, 1) > total:
                    return 0
                lo, hi = 1, limit
                while lo < hi:
                    mid = (lo + hi + 1) // 2
                    if self.program_cost(cand.key, mid) <= total:
                        lo = mid
                    else:
                        hi = mid - 1
                limit = lo
        return max(limit, 0)

    def _grid(self, w, cand: Candidate, max_nodes: int) -> tuple[int, ...]:
        if w.gpus is not None:
            return (w.gpus,) if w.gpus <= max_nodes * cand.gpus_per_node else ()
        return gpu_count_grid(cand.gpus_per_node, max_nodes)

    def ideal_gpus(self, w, cand: Candidate, th: Thresholds, *, best: bool = True) -> int | None:
        """Smallest grid GPU count meeting ``th`` for ``w`` on the best network of the candidate's
        kind (:func:`~designer.optimize.evaluate.best_view`), or with ``best=False`` on an ideal network (:func:`~designer.optimize.evaluate.ideal_view`,
        cheaper: shared by every candidate with this GPU); no real topology qualifies with fewer.
        None if none."""
        gpu = self.catalog.gpus[cand.gpu]
        view_key, view = (best_view if best else ideal_view)(self.catalog, cand)
        key = (w.name, view_key, cand.deployment.value, th.min_utilization, th.deadlines_s[w.name])
        if key not in self._ideal:
            cluster = perf.Cluster(gpu=gpu, network=view)
            found = None
            limit = CLOUD_MAX_INSTANCES if cand.deployment is Deployment.CLOUD else 100_000
            if self.spec.constraints.max_nodes is not None:
                limit = min(limit, self.spec.constraints.max_nodes)
            floor = self._flops_floor(w, gpu, th)
            for g in self._grid(w, cand, limit):
                if g < floor:
                    continue
                est_key = (w.name, view_key, g)
                if est_key not in self._ideal_est:
                    try:
                        self._ideal_est[est_key] = self.evaluator.search(w.name, self.jobs[w.name], cluster, g,
                                                                         plan_constraints(w.parallelism))
                    except PerfError:  # a size with no plan simply does not qualify
                        self._ideal_est[est_key] = None
                est = self._ideal_est[est_key]
                if est is None:
                    continue
                if th.admits(w.name, est.time_to_train_s, est.utilization):
                    found = g
                    break
            self._ideal[key] = found
        return self._ideal[key]

    def _flops_floor(self, w, gpu, th: Thresholds) -> float:
        """GPUs below which no network can meet the deadline: the model FLOPs at the GPU's peak
        (MFU <= 1) over the deadline. Saves evaluating sizes that cannot qualify."""
        job = self.jobs[w.name]
        flops = perf_flops.model_flops(job.model, job.tokens / job.model.seq_len)
        peak = max(gpu.bf16_flops, gpu.fp8_flops or 0.0)
        return flops / (peak * th.deadlines_s[w.name])

    def cloud_floor(self, w: str, th: Thresholds, keys: Iterable[str] | None = None) -> float:
        """The least a workload can cost in the cloud (prepared instances among ``keys``; inf if none)."""
        keys = None if keys is None else tuple(keys)
        memo = (w, th.min_utilization, th.deadlines_s[w], keys, self._cloud_version)
        if memo not in self._floors:
            # Bounds ask for the same floors once per candidate; they change only when a cloud
            # system is evaluated (counted in the memo key; pricing always comes first).
            self._floors[memo] = self._cloud_floor(w, th, keys)
        return self._floors[memo]

    def _cloud_floor(self, w: str, th: Thresholds, keys: tuple[str, ...] | None) -> float:
        best = math.inf
        allowed = None if keys is None else set(keys)
        for key, system in self.systems.items():
            if not isinstance(system, CloudSystem) or (allowed is not None and key not in allowed):
                continue
            gpn = system.candidate.gpus_per_node
            for e in self.evaluations.get((w, system.key), ()):
                if th.admits(w, e.time_s, e.utilization):
                    best = min(best, e.gpus / gpn * e.time_s * system.usd_per_node_s)
        return best

    def lower_bound(self, key: str, th: Thresholds, *, sizes: Mapping[str, int] | None = None,
                    keys: Iterable[str] | None = None, best: bool = True) -> float:
        """A lower bound on the total cost of any design that builds on-prem candidate ``key``.

        Some non-empty set S of workloads runs on it; each needs at least its ideal-network GPU
        count (or ``sizes``), so the system has at least the largest of those nodes, and pays for
        those servers (with installation, maintenance and power over the horizon) and the leaves
        their NIC ports need. Every workload outside S costs at least its cheapest cloud option.
        The best S for the bound takes, for some k, the k workloads needing the fewest nodes.
        """
        cand = self.by_key[key]
        if sizes is None:
            sizes = {w.name: self.ideal_gpus(w, cand, th, best=best) for w in self.spec.workloads}
        need = sorted((math.ceil(g / cand.gpus_per_node), w) for w, g in sizes.items() if g is not None)
        if not need:
            return math.inf
        floors = {w.name: self.cloud_floor(w.name, th, keys) for w in self.spec.workloads}
        inside = {w for _, w in need}
        # The first level (ideal network) prices only servers and leaves: cheap, no catalog optics.
        cost = self.program_cost if best else self._server_cost
        bound = math.inf
        for k, (nodes, _) in enumerate(need):
            rest = sum(floors[w] for w in floors if w not in inside) + sum(floors[w] for _, w in need[k + 1:])
            if self.fixed_nodes is not None:
                nodes = self.fixed_nodes
            bound = min(bound, cost(key, nodes) + rest)
        return bound

    def _server_cost(self, key: str, nodes: int) -> float:
        """Servers (kept over the horizon and powered) and the leaves their NIC ports need: a part
        of :meth:`program_cost` that needs no cabling."""
        cand = self.by_key[key]
        server = self.catalog.servers[cand.server]
        switch = self.catalog.switches[cand.switch]
        e = self.economics
        keep = 1.0 + e.installation_fraction + e.maintenance_fraction_per_year * e.horizon_s / SECONDS_PER_YEAR
        ports = switch.ports_at(cand.link_rate_Bps or self.catalog.nics[server.nic].rate_Bps) or 1
        leaves = math.ceil(server.nics * nodes / ports)
        return (nodes * (server.price_usd * keep + server.power_w * e.pue * e.electricity_usd_per_j * e.horizon_s)
                + leaves * switch.price_usd * keep)

    # ---------------------------------------------------------------- evaluation

    def prepare(self, key: str, th: Thresholds, *, down_to_gpus: int | None = None) -> bool:
        """Price candidate ``key`` and evaluate every workload on it; False if it is unusable."""
        if self.system(key) is None:
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
        if self.spec.objective.value == "min_time":
            # The fastest designs use the largest sizes: evaluate from the top down until a few
            # qualify, and the smallest qualifying size for packing several workloads.
            found = 0
            for g in reversed([g for g in grid if g >= start]):
                e = known.get(g) or self.evaluator.evaluate(w, self.jobs[w.name], cand, g)
                known[g] = e
                if th.admits(w.name, e.time_s, e.utilization):
                    found += 1
                    if found >= _MIN_TIME_OPTIONS:
                        break
            grid = [g for g in grid if g < (min(known) if known else start) or g == start]
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
            if th.admits(w.name, e.time_s, e.utilization):
                # A larger size costs more nodes; it can help only min_time (scanned above), or
                # several workloads sharing the cluster when it needs less GPU-time.
                first_ok = first_ok or g
                if len(self.spec.workloads) == 1 or g >= 1.5 * first_ok:
                    break
        self.evaluations[pair] = tuple(sorted(known.values(), key=lambda e: e.gpus))
        if cand.deployment is Deployment.CLOUD:
            self._cloud_version += 1
        self._scanned[pair] = min(start, done if done is not None else start)

    def _system(self, cand: Candidate) -> OnPremSystem | CloudSystem:
        """Price a candidate. Link prices are taken at the size the spec's workloads need on an
        ideal network (cable runs, hence media, grow with the floor), so they are fixed before
        any evaluation and the bounds and the program use the same prices."""
        if cand.deployment is Deployment.CLOUD:
            inst = self.catalog.clouds[cand.server]
            return CloudSystem(cand, pricing.instance_usd_per_s(inst, self.spec.constraints.pricing))
        shape = pricing.fabric_shape(cand, self.catalog, self.facility)
        th = thresholds_of(self.spec)
        sizes = [self.ideal_gpus(w, cand, th, best=False) for w in self.spec.workloads]
        ref = max([math.ceil(g / cand.gpus_per_node) for g in sizes if g is not None] or [1])
        costs = pricing.unit_costs(cand, self.catalog, self.facility, min(ref, shape.max_nodes))
        if self.fixed_nodes is not None:
            shape = replace(shape, max_nodes=min(shape.max_nodes, self.fixed_nodes))
        return OnPremSystem(cand, shape, costs)

    def system(self, key: str) -> OnPremSystem | CloudSystem | None:
        """The priced system of a candidate (None when the catalog cannot build it)."""
        if key in self.skipped:
            return None
        if key not in self.systems:
            try:
                self.systems[key] = self._system(self.by_key[key])
            except (CatalogError, TopologyError) as exc:
                # A fabric the catalog cannot cable (no fitting transceiver) is not a candidate.
                self.skipped[key] = str(exc)
                return None
        return self.systems[key]

    def program_cost(self, key: str, nodes: int) -> float:
        """Total cost over the horizon of ``nodes`` nodes of on-prem candidate ``key`` as the
        program prices them (its unit costs, the topology's switch and link counts, its racks).

        Non-decreasing in ``nodes`` (every count of the topology's rules is), so its value at a
        lower bound on the node count is a lower bound on the program's cost.
        """
        cache_key = (key, nodes)
        if cache_key in self._cost_cache:
            return self._cost_cache[cache_key]
        system = self.system(key)
        if system is None or not isinstance(system, OnPremSystem):
            return math.inf
        nodes = min(max(nodes, 1), system.shape.max_nodes)
        s = topology.summarize(pricing.fabric_request(system.candidate, self.catalog, nodes, self.facility))
        uc, rails, e = system.costs, system.shape.rails, self.economics
        switches = s.leaves + s.spines + s.cores
        racks = math.ceil(nodes / uc.servers_per_rack + switches * uc.switch_ru / uc.rack_units - 1e-9)
        sx = s.spine_core_links if s.tiers == 3 else 0
        equipment = (uc.node_usd * nodes + uc.node_link_usd * rails * nodes + uc.switch_usd * switches
                     + uc.leaf_spine_link_usd * s.leaf_spine_links + uc.spine_core_link_usd * sx + uc.rack_usd * racks)
        power = (uc.node_w * nodes + uc.node_link_w * rails * nodes + uc.switch_w * switches
                 + uc.leaf_spine_link_w * s.leaf_spine_links + uc.spine_core_link_w * sx)
        years = e.horizon_s / SECONDS_PER_YEAR
        total = (equipment * (1 + e.installation_fraction + e.maintenance_fraction_per_year * years)
                 + power * e.pue * e.electricity_usd_per_j * e.horizon_s)
        self._cost_cache[cache_key] = total
        return total

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
            found = False
            for w in self.spec.workloads:
                evals = self.evaluations.get((w.name, key), ())
                opts = [Option(e.gpus, e.time_s, e.utilization, i) for i, e in enumerate(evals)
                        if th.admits(w.name, e.time_s, e.utilization)]
                if opts:
                    options[(w.name, key)] = pareto(opts, keep_time)
                    found = True
            # A system no workload can use would only ever be built empty, which no objective
            # prefers: it stays out of the program.
            if found:
                (onprem if isinstance(system, OnPremSystem) else cloud).append(system)
        return Problem(
            workloads=tuple(w.name for w in self.spec.workloads), deadlines_s=th.deadlines_s,
            tokens=MappingProxyType({w.name: w.tokens for w in self.spec.workloads}),
            onprem=tuple(onprem), cloud=tuple(cloud), options=MappingProxyType(options), economics=self.economics,
            limits=limits if limits is not None else self.limits(), objective=objective,
            fixed_nodes=self.fixed_nodes, ranks=self._ranks,
        )

    def limits(self) -> Limits:
        c = self.spec.constraints
        return Limits(capex_usd=self.spec.budget.capex_usd, total_usd=self.spec.budget.total_usd,
                      power_w=c.max_power_w, racks=c.max_racks, nodes=c.max_nodes)

    def _refined_bound(self, key: str, th: Thresholds, keys: Iterable[str] | None = None) -> float:
        """:meth:`lower_bound` at the smallest GPU counts that qualify on the candidate's own network."""
        sizes = {}
        for w in self.spec.workloads:
            ok = [e.gpus for e in self.evaluations.get((w.name, key), ()) if th.admits(w.name, e.time_s, e.utilization)]
            sizes[w.name] = min(ok) if ok else None
        return self.lower_bound(key, th, sizes=sizes, keys=keys)

    def _usage_bound(self, key: str, th: Thresholds, keys: Iterable[str] | None = None) -> float:
        """A lower bound on the ``min_cost_per_token`` objective of any design that builds
        (evaluated) on-prem ``key``: each workload at the cheaper of its cheapest cloud bill and
        the system's charge for its fewest GPU-seconds there. Exact without limits, as the charge
        is per workload and does not depend on the system's size."""
        system = self.systems.get(key)
        if not isinstance(system, OnPremSystem):
            return math.inf
        rate = usage_rate_usd_per_gpu_s(system, self.economics)
        bound = 0.0
        for w in self.spec.workloads:
            seconds = min((e.gpus * e.time_s for e in self.evaluations.get((w.name, key), ())
                           if th.admits(w.name, e.time_s, e.utilization)), default=math.inf)
            bound += min(self.cloud_floor(w.name, th, keys), rate * seconds)
        return bound

    def solve(self, th: Thresholds, *, keys: Iterable[str] | None = None, limits: Limits | None = None,
              objective: str | None = None, solver: str = "highs", time_limit_s: float | None = None,
              cutoff: float | None = None) -> Solution:
        """Optimum over the candidates ``keys`` (all by default): on-prem candidates in order of
        their cost bound, a batch at a time (see the module docstring), stopping once the bound
        reaches the best cost found (``min_total_cost``; other objectives try every candidate).

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
        per_token = objective == "min_cost_per_token"
        cloud = [k for k in keys if self.by_key[k].deployment is Deployment.CLOUD]
        onprem = [k for k in keys if self.by_key[k].deployment is Deployment.ON_PREM]
        ready = [k for k in cloud if self.prepare(k, th)]
        if objective == "min_time":
            return solve_min_time(self, th, ready, onprem, limits, solver, time_limit_s)
        # Two levels of bound: an ideal network first (shared by all candidates with one GPU type),
        # then the best network of the candidate's own kind for those that survive the first.
        bounds = {k: self.lower_bound(k, th, keys=cloud, best=False) for k in onprem}
        pending = sorted((k for k in onprem if bounds[k] < math.inf), key=lambda k: (bounds[k], k))
        best: Solution | None = None
        best_total = cutoff if (prunable and cutoff is not None) else math.inf
        first = True
        while first or pending:
            first = False
            batch = []
            while pending and len(batch) < _BATCH:
                k = pending.pop(0)
                if prunable and bounds[k] >= best_total:
                    pending = []  # every later bound is no lower
                    break
                if prunable and self.lower_bound(k, th, keys=cloud) >= best_total:
                    continue
                if not self.prepare(k, th):
                    continue
                if prunable and self._refined_bound(k, th, cloud) >= best_total:
                    continue
                if per_token and best is not None and self._usage_bound(k, th, cloud) >= \
                        best.objective - _SAME_OBJECTIVE * max(1.0, abs(best.objective)):
                    continue
                batch.append(k)
            if not batch and (best is not None or pending):
                continue  # the cloud alone is in every program: solved alone only when nothing else is
            # A design builds at most one on-prem system, so the optimum is the best of the
            # programs over (cloud + each batch); each is small, and objectives of different
            # batches compare directly (ties are priced by each system's global rank).
            try:
                self.solves += 1
                sol = solve_problem(self.problem([*ready, *batch], th, limits=limits, objective=objective),
                                    solver=solver, time_limit_s=time_limit_s)
            except InfeasibleError:
                continue
            total = sol.capex_usd + sol.opex_usd + sol.cloud_usd
            if prunable and cutoff is not None and total >= cutoff * (1 - 1e-9):
                continue  # only a design cheaper than the cutoff is wanted
            if best is not None and sol.objective >= best.objective - _SAME_OBJECTIVE * max(1.0, abs(best.objective)):
                continue  # the first of equal designs is kept
            best, best_total = sol, (total if prunable else math.inf)
        if best is None:
            raise InfeasibleError("no design over the candidates meets the constraints"
                                  + (" and is cheaper than the cutoff" if cutoff is not None else ""))
        return best
