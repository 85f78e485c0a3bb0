"""The candidates of one task, priced and evaluated lazily, and the integer program's data over them.

Evaluating a workload on a candidate (the performance model over a range of GPU counts) is the
expensive step, and most candidates cannot win. A :class:`Workspace` therefore prices and
evaluates a candidate only when asked (:meth:`Workspace.prepare`), starting each scan at the
smallest GPU count that meets the thresholds on an *ideal* network (:meth:`Workspace.ideal_gpus`):
the performance model never predicts a faster step on a worse network (a tested property), so no
real fabric needs fewer. :mod:`designer.optimize.bounds` bounds costs from what is known here, and
:mod:`designer.optimize.batches` decides what to prepare and solve.

All evaluations are kept (not only the qualifying ones) so explanations can say what the best
utilization or time on a system was.
"""

from __future__ import annotations

__all__ = ["Workspace", "CLOUD_MAX_INSTANCES"]

import math
from dataclasses import replace
from types import MappingProxyType
from typing import Callable, Iterable, Mapping, Sequence

from designer import perf, topology
from designer.catalog import domain
from designer.errors import CatalogError, TopologyError
from designer.optimize import cloud, compute_floor, evaluate, ownership, preferences, pricing
from designer.optimize import networks as network_costs
from designer.optimize.candidates import Candidate
from designer.optimize.clock import NO_DEADLINE, Deadline
from designer.optimize.evaluate import Evaluation, Evaluator, best_view, gpu_count_grid, ideal_view
from designer.optimize.problem import CloudSystem, Limits, OnPremSystem, Option, Problem, pareto
from designer.optimize.task import Task, Thresholds, Workload
from designer.spec.choices import Deployment

# Largest cloud reservation considered per workload where the catalog gives no cap: 2,048 instances
# (16,384 GPUs); each offer's own cap is catalog data (designer.optimize.cloud.instance_cap).
CLOUD_MAX_INSTANCES = cloud.CLOUD_DEFAULT_MAX_INSTANCES
# Stop scanning larger sizes once the deadline is met and utilization has fallen this far below
# the target on three sizes in a row: utilization falls as a job spreads.
_UTIL_STOP = 0.85
_MIN_TIME_OPTIONS = 6  # largest qualifying sizes kept per workload and system for min_time


class Workspace:
    """Candidates of one task, their prices and evaluations (computed on demand), and program data."""

    def __init__(self, task: Task):
        self.task = task
        self.catalog = task.catalog
        self.facility = task.facility
        self.candidates = task.candidates
        self.by_key = {c.key: c for c in self.candidates}
        self._ranks = MappingProxyType({k: i for i, k in enumerate(sorted(self.by_key))})
        self.evaluator = Evaluator(task.catalog, task.facility, task.efficiency,
                                   gpus_per_domain_used=task.gpus_per_domain_used)
        self.workloads = task.workloads
        self.systems: dict[str, OnPremSystem | CloudSystem] = {}
        self.skipped: dict[str, str] = {}
        self.evaluations: dict[tuple[str, str], tuple[Evaluation, ...]] = {}
        # (workload, key, utilization target, deadline) -> smallest GPU count scanned: a scan under
        # other thresholds stops at other sizes (a far deadline qualifies small ones and stops
        # there), so it says nothing of the sizes these thresholds need
        self._scanned: dict[tuple[str, str, float, float], int] = {}
        self._ideal: dict[tuple[str, str, float, float], int | None] = {}
        self._per_token: dict[tuple[str, str], float] = {}  # (workload, GPU) -> compute_floor
        self._bound_views: dict[tuple[bool, str], tuple[tuple, perf.NetworkView]] = {}
        self.fixed_nodes = task.fixed_nodes
        self.economics = task.economics
        # Each candidate's soft-preference credit (dollars, cost share); only those that earn one.
        self.credits = MappingProxyType({c.key: cr for c in self.candidates
                                         if any(cr := preferences.credits_of(task.preferences, c, task.catalog))})
        self.solves = 0  # programs solved (the drivers count them)
        # Work spent raising the bounds of candidates a budgeted search left untried
        # (designer.optimize.kind_bounds), in the units of designer.optimize.explain.budget.
        self.bound_work = 0
        # Energetic intervals (constraint 16) the schedules of earlier programs found overfull:
        # valid for every design that packs, so every later program starts with them.
        self.energy: set[tuple[float, float]] = set()
        self._cost_cache: dict[tuple[str, int], float] = {}
        # Memo of designer.optimize.bounds (cloud floors, first bounds) and dominance (undominated sets).
        self.floors: dict[tuple, object] = {}
        self._max_nodes: dict[str, int] = {}
        self.cloud_version = 0  # cloud evaluations stored so far, to know when cached floors are stale
        self.deadline: Deadline = NO_DEADLINE  # the command's (the planner sets it)
        # Called after each program with (candidates evaluated, programs solved, best total cost or
        # None): the command line shows it as progress. None: nobody is watching.
        self.progress: Callable[[int, int, float | None], None] | None = None

    def report_progress(self, best) -> None:
        """Tell the watcher, if any, how far the search is (``best``: the best solution so far)."""
        if self.progress is not None:
            total = None if best is None else best.capex_usd + best.opex_usd + best.cloud_usd
            self.progress(len(self.systems), self.solves, total)

    def limits(self) -> Limits:
        """The task's own limits (budgets, power, racks, nodes)."""
        return self.task.limits

    # ---------------------------------------------------------------- sizes

    def max_nodes(self, cand: Candidate) -> int:
        """Largest node count a candidate may have (its topology, the spec's limits, a pin)."""
        if cand.key not in self._max_nodes:
            self._max_nodes[cand.key] = self._node_limit(cand)
        return self._max_nodes[cand.key]

    def _node_limit(self, cand: Candidate) -> int:
        if cand.deployment is Deployment.CLOUD:
            limit = cloud.instance_cap(self.catalog.clouds[cand.server], cand.pricing or "on_demand")
        else:
            try:
                limit = pricing.fabric_shape(cand, self.catalog, self.facility).max_nodes
            except (CatalogError, TopologyError):
                return 0
        limits = self.task.limits
        if limits.nodes is not None:
            limit = min(limit, limits.nodes)
        if self.fixed_nodes is not None:
            limit = min(limit, self.fixed_nodes)
        budgets = [b for b in (limits.capex_usd, limits.total_usd) if b is not None]
        if budgets and cand.deployment is Deployment.ON_PREM and self.task.objective == "min_time":
            # No design can buy more servers than the budget pays for.
            limit = min(limit, int(min(budgets) // self.catalog.servers[cand.server].price_usd))
            total = limits.total_usd
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

    def held(self, cand: Candidate, gpus: int) -> int:
        """GPUs of the whole nodes a job on ``gpus`` GPUs occupies (a part of each NVL72: all 72)."""
        size = evaluate.scaleup_domain(cand, self.catalog).gpus
        if (cand.deployment is Deployment.CLOUD or len(domain.placements(size)) == 1) \
                and self.task.gpus_per_domain_used is None:
            return gpus  # jobs may share a server's domain, as before
        nodes, _ = self.evaluator.placement(cand, gpus)
        return max(gpus, nodes * cand.gpus_per_node)

    def grid(self, w: Workload, cand: Candidate, max_nodes: int) -> tuple[int, ...]:
        """The GPU counts ``w`` is evaluated at on ``cand`` up to ``max_nodes`` nodes (its pinned
        count, else whole nodes on a grid about 12% apart, parts of a domain below one node)."""
        if w.gpus is not None:
            return (w.gpus,) if w.gpus <= max_nodes * cand.gpus_per_node else ()
        size = evaluate.scaleup_domain(cand, self.catalog).gpus
        parts = domain.placements(size)[1:] if size == cand.gpus_per_node else ()
        used = self.task.gpus_per_domain_used
        if used is not None and size == cand.gpus_per_node:
            return gpu_count_grid(used, max_nodes)  # only the pinned share of each domain
        return gpu_count_grid(cand.gpus_per_node, max_nodes, parts)

    def ideal_gpus(self, w: Workload, cand: Candidate, th: Thresholds, *, best: bool = True) -> int | None:
        """Smallest grid GPU count meeting ``th`` for ``w`` on the best network of the candidate's
        kind (:func:`~designer.optimize.evaluate.best_view`), or with ``best=False`` on an ideal network (:func:`~designer.optimize.evaluate.ideal_view`,
        cheaper: shared by every candidate with this GPU); no real topology qualifies with fewer.
        None if none."""
        gpu = self.catalog.gpus[cand.gpu]
        # Bounds ask for every workload on every candidate many times: the view is built once.
        which = (best, cand.key)
        if which not in self._bound_views:
            self._bound_views[which] = (best_view if best else ideal_view)(self.catalog, cand)
        view_key, view = self._bound_views[which]
        key = (w.name, view_key, cand.deployment.value, th.min_utilization, th.deadlines_s[w.name])
        if key not in self._ideal:
            cluster = perf.Cluster(gpu=gpu, network=view, efficiency=self.task.efficiency)
            found = None
            limit = (cloud.instance_cap(self.catalog.clouds[cand.server], cand.pricing or "on_demand")
                     if cand.deployment is Deployment.CLOUD else 100_000)
            if self.task.limits.nodes is not None:
                limit = min(limit, self.task.limits.nodes)
            floor = self._flops_floor(w, gpu, th)
            # The ideal network is at least as good as the best of any kind (same GPU, same grid):
            # no size below its answer qualifies here, and none at all if it has none.
            ideal = self.ideal_gpus(w, cand, th, best=False) if best else floor
            grid = () if ideal is None else self.grid(w, cand, limit)
            for g in grid:
                if g < floor or g < ideal:
                    continue
                step = self.evaluator.step(w, cluster, g)
                if isinstance(step, str):  # a size with no plan simply does not qualify
                    continue
                if th.admits(w.name, w.tokens / step.tokens_per_s, step.utilization):
                    found = g
                    break
            self._ideal[key] = found
        return self._ideal[key]

    def _flops_floor(self, w: Workload, gpu, th: Thresholds) -> float:
        """GPUs below which no network can meet the deadline: the least GPU time per token of any
        plan (:func:`designer.optimize.compute_floor.seconds_per_token`, its compute at the GPU's
        best rates) over the deadline. Saves evaluating sizes that cannot qualify."""
        key = (w.name, gpu.name)
        if key not in self._per_token:
            self._per_token[key] = compute_floor.seconds_per_token(w.job, gpu, self.task.efficiency.compute)
        return w.tokens * self._per_token[key] / th.deadlines_s[w.name]

    # ---------------------------------------------------------------- evaluation

    def evaluated(self, key: str) -> bool:
        """Whether any workload has been evaluated on candidate ``key`` (its costly step is done)."""
        return any((w.name, key) in self.evaluations for w in self.workloads)

    def prepare(self, key: str, th: Thresholds, *, down_to_gpus: int | None = None,
                order: Sequence[Workload] | None = None,
                pruned: Callable[[Sequence[str]], bool] | None = None) -> bool:
        """Price candidate ``key`` and evaluate every workload on it; False if it is unusable.

        ``order``: the workloads in the order to evaluate them (the task's by default). After
        each, ``pruned`` (if given) is asked with the names evaluated so far whether the
        candidate can still matter; when it says no, the rest are left unevaluated and False is
        returned (a later call evaluates them: what was scanned is kept)."""
        if self.system(key) is None:
            return False
        cand = self.by_key[key]
        max_nodes = self.max_nodes(cand)
        if max_nodes < 1:
            self.skipped[key] = "no size fits the limits"
            return False
        done: list[str] = []
        for w in (self.workloads if order is None else order):
            if self.deadline.expired():
                return False  # what was scanned is kept; the rest waits for a later call
            start = self.ideal_gpus(w, cand, th)
            if down_to_gpus is not None:
                start = min(start or down_to_gpus, down_to_gpus)
            self._scan(w, cand, max_nodes, th, start)
            done.append(w.name)
            if pruned is not None and len(done) < len(self.workloads) and pruned(done):
                return False
        return True

    def _scan(self, w: Workload, cand: Candidate, max_nodes: int, th: Thresholds, start: int | None) -> None:
        pair = (w.name, cand.key)
        grid = self.grid(w, cand, max_nodes)
        if start is None:
            # Not even an ideal network qualifies: keep a few sizes to explain what is reached.
            start = grid[-1] if grid else 1
            grid = grid[-3:]
        deadline = th.deadlines_s[w.name]
        scanned = (*pair, th.min_utilization, deadline)
        done = self._scanned.get(scanned)
        if done is not None and done <= start:
            return
        known = {e.gpus: e for e in self.evaluations.get(pair, ())}
        if self.task.objective == "min_time":
            # The fastest designs use the largest sizes: evaluate from the top down until a few
            # qualify, and the smallest qualifying size for packing several workloads.
            found = 0
            for g in reversed([g for g in grid if g >= start]):
                e = known.get(g) or self.evaluator.evaluate(w, cand, g)
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
            e = known.get(g) or self.evaluator.evaluate(w, cand, g)
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
                # when it needs less GPU-time (several workloads sharing the cluster, a cloud
                # bill, the per-token charge), or fits a schedule by finishing sooner: up to half
                # as large again. A lone workload on a system bought for it needs only the smallest.
                first_ok = first_ok or g
                lone = (len(self.workloads) == 1 and cand.deployment is Deployment.ON_PREM
                        and self.task.objective == "min_total_cost")
                if lone or g >= 1.5 * first_ok:
                    break
        self.evaluations[pair] = tuple(sorted(known.values(), key=lambda e: e.gpus))
        if cand.deployment is Deployment.CLOUD:
            self.cloud_version += 1
        self._scanned[scanned] = min(start, done if done is not None else start)

    # ---------------------------------------------------------------- prices

    def _system(self, cand: Candidate) -> OnPremSystem | CloudSystem:
        """Price a candidate. Link prices are taken at the size the task's workloads need on an
        ideal network (cable runs, hence media, grow with the floor), so they are fixed before
        any evaluation and the bounds and the program use the same prices."""
        if cand.deployment is Deployment.CLOUD:
            offer = cloud.offer_for(self.catalog.clouds[cand.server], cand.pricing or "on_demand")
            return CloudSystem(cand, offer.usd_per_s, offer)
        shape = pricing.fabric_shape(cand, self.catalog, self.facility)
        th = self.task.thresholds
        sizes = [self.ideal_gpus(w, cand, th, best=False) for w in self.workloads]
        ref = max([math.ceil(g / cand.gpus_per_node) for g in sizes if g is not None] or [1])
        costs = pricing.unit_costs(cand, self.catalog, self.facility, min(ref, shape.max_nodes),
                                   owned=self.task.owned, storage=self.task.storage,
                                   networks=self.task.networks)
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

    def closed_form_cost(self, system: OnPremSystem, nodes: int, fixed_ru: int = 0) -> float:
        """Total cost over the horizon of ``nodes`` nodes of ``system`` from the program's closed
        forms: the topology's switch and link counts at that size, racks = ceil(n / servers per rack
        + (switches x switch RU + ``fixed_ru``) / rack RU), the networks at the baseline storage need."""
        nodes = min(max(nodes, 1), system.shape.max_nodes)
        s = topology.summarize(pricing.fabric_request(system.candidate, self.catalog, nodes, self.facility))
        uc = system.costs
        switches = s.leaves + s.spines + s.cores
        racks = math.ceil(nodes / uc.servers_per_rack + (switches * uc.switch_ru + fixed_ru) / uc.rack_units - 1e-9)
        sx = s.spine_core_links if s.tiers == 3 else 0
        net = None
        if uc.networks is not None:
            units = ownership.storage_units_needed(uc, nodes, {}) if uc.storage is not None else 0.0
            net = network_costs.closed_form_terms(uc.networks, self.economics, nodes=nodes,
                                                  storage_units=network_costs.whole_units(units),
                                                  compute_switches=switches)
        return ownership.onprem_cost_usd(system, self.economics, nodes=nodes, switches=switches,
                                         ls_links=s.leaf_spine_links, sx_links=sx, racks=racks, networks=net)

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
        total = self.closed_form_cost(system, nodes)
        self._cost_cache[cache_key] = total
        return total

    # ---------------------------------------------------------------- the program's data

    def problem(self, keys: Iterable[str], th: Thresholds, *, limits: Limits | None = None,
                objective: str | None = None) -> Problem:
        """The program's data over the (prepared) candidates ``keys``."""
        objective = objective or self.task.objective
        keep_time = objective == "min_time"
        onprem, cloud = [], []
        options: dict[tuple[str, str], tuple[Option, ...]] = {}
        for key in sorted(set(keys)):
            system = self.systems.get(key)
            if system is None:
                continue
            found = False
            for w in self.workloads:
                evals = self.evaluations.get((w.name, key), ())
                opts = [Option(e.gpus, e.time_s, e.utilization, i, self.held(system.candidate, e.gpus))
                        for i, e in enumerate(evals) if th.admits(w.name, e.time_s, e.utilization)]
                if opts:
                    options[(w.name, key)] = pareto(opts, keep_time, _bill(system))
                    found = True
            # A system no workload can use would only ever be built empty, which no objective
            # prefers: it stays out of the program.
            if found:
                (onprem if isinstance(system, OnPremSystem) else cloud).append(system)
        if not keep_time:
            cloud = _cheapest_cloud(cloud, options, self.workloads, self.credits)
        return Problem(
            workloads=tuple(w.name for w in self.workloads), deadlines_s=th.deadlines_s,
            tokens=MappingProxyType({w.name: w.tokens for w in self.workloads}),
            onprem=tuple(onprem), cloud=tuple(cloud), options=MappingProxyType(options), economics=self.economics,
            limits=limits if limits is not None else self.limits(), objective=objective,
            fixed_nodes=self.fixed_nodes, ranks=self._ranks, energy=tuple(sorted(self.energy)) if onprem else (),
            credits=MappingProxyType({s.key: self.credits[s.key] for s in (*onprem, *cloud) if s.key in self.credits}),
        )


def _bill(system: OnPremSystem | CloudSystem) -> Callable[[Option], float] | None:
    """What a cloud system bills for an option (:meth:`CloudSystem.cost_usd`), for the options'
    dominance; None on-prem, where GPU-time is what costs."""
    if not isinstance(system, CloudSystem):
        return None
    gpn = system.candidate.gpus_per_node
    return lambda o: system.cost_usd(o.gpus / gpn, o.time_s)


def _cheapest_cloud(cloud: list[CloudSystem], options: dict[tuple[str, str], tuple[Option, ...]],
                    workloads: Iterable[Workload],
                    credits: Mapping[str, tuple[float, float]] | None = None) -> list[CloudSystem]:
    """Keep, per workload, only its cheapest cloud option (ties: the first system in key order,
    then the fewest GPUs). A workload's cloud bill is its own (its offer's billing) and
    uses no capex, power or racks, so every other cloud option costs more and saves nothing:
    no objective but ``min_time`` can prefer it. This keeps the program's size independent of
    the number of instance types. With soft preferences, "cheapest" is after each system's credit
    (``credits``: key -> (dollars per design, cost share)), as the objective counts it. ``options``
    is changed in place; returns the systems still used."""
    used: set[str] = set()
    workloads = list(workloads)
    credits = credits or {}
    for w in workloads:
        best = None
        for system in cloud:
            gpn = system.candidate.gpus_per_node
            for o in options.get((w.name, system.key), ()):
                cost = system.cost_usd(o.gpus / gpn, o.time_s)
                usd, share = credits.get(system.key, (0.0, 0.0))
                if usd or share:
                    cost = cost * (1 - share) - usd / len(workloads)
                rank = (cost, system.key, o.gpus, o.index)
                if best is None or rank < best[0]:
                    best = (rank, system.key, o)
        for system in cloud:
            options.pop((w.name, system.key), None)
        if best is not None:
            options[(w.name, best[1])] = (best[2],)
            used.add(best[1])
    return [system for system in cloud if system.key in used]
