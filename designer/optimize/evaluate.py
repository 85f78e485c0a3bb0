"""Evaluate workloads on candidate systems: the network each job sees and its options.

For a workload on a candidate system, an *option* is a GPU count with the fastest valid plan
there (from :func:`designer.perf.search_plans`), its step time, utilization and time to train.
The job is assumed placed compactly: its network is the fabric built for its own node count
(its hops and tapering are those of a fabric that size), on the candidate's NICs and switch.
"""

from __future__ import annotations

__all__ = [
    "Evaluation",
    "Evaluator",
    "network_view",
    "gpu_count_grid",
    "ideal_view",
    "best_view",
    "scaled",
    "scaleup_domain",
    "view_is_rack",
]

import math
from dataclasses import dataclass, field, replace

from designer import perf, topology
from designer.perf import transport
from designer.catalog import domain
from designer.catalog.types import Catalog, Facility
from designer.errors import PerfError, TopologyError
from designer.optimize.candidates import Candidate
from designer.optimize.pricing import fabric_request
from designer.optimize.task import Workload
from designer.spec.choices import Deployment


@dataclass(frozen=True, slots=True)
class Evaluation:
    """A workload at one GPU count on one system: the estimate, or why there is none."""

    gpus: int
    estimate: perf.StepEstimate | None
    reason: str | None = None

    @property
    def time_s(self) -> float:
        return self.estimate.time_to_train_s if self.estimate else math.inf

    @property
    def utilization(self) -> float:
        return self.estimate.utilization if self.estimate else 0.0


def network_view(candidate: Candidate, catalog: Catalog, facility: Facility, nodes: int) -> perf.NetworkView:
    """The network a job on ``nodes`` nodes of ``candidate`` sees (fabric profile + topology).

    Model: bandwidth per GPU is the NIC line rate share (topology ``injection_Bps``) times the
    fabric profile's measured efficiency; latency is the profile's host latency plus the switch
    port-to-port latency per hop; tapering is the leaf oversubscription that cross-leaf traffic
    meets; bisection bounds all-to-all; SHARP needs both an InfiniBand profile and a switch
    that reduces in the network.
    """
    if candidate.deployment is Deployment.CLOUD:
        inst = catalog.clouds[candidate.server]
        summary = topology.summarize(topology.request_for_cloud(inst, nodes))
        profile = catalog.fabrics[inst.network.value]
        switch_latency = 0.0
        switch_sharp = False
        gpu = catalog.gpus[inst.gpu]
        nics = 1
        line = inst.network_Bps
    else:
        summary = topology.summarize(fabric_request(candidate, catalog, nodes, facility))
        profile = catalog.fabrics[candidate.fabric]
        switch = catalog.switches[candidate.switch]
        switch_latency = switch.latency_s
        switch_sharp = switch.in_network_reduction
        server = catalog.servers[candidate.server]
        gpu = catalog.gpus[server.gpu]
        nics = server.nics // server.compute_trays  # the NICs one host (tray) drives
        # the rate the links run at (a NIC on a slower switch runs at the switch's rate)
        line = candidate.link_rate_Bps or catalog.nics[server.nic].rate_Bps
    hops_any = summary.hops_max
    hops_rail = summary.hops_same_rail_su if summary.hops_same_rail_su is not None else hops_any
    # A rail-aligned ring over servers of several SUs crosses the spine (or core) between SUs, and
    # every ring step waits for its slowest link: the same-rail hop count is then the cross-SU one.
    if summary.hops_cross_su is not None:
        hops_rail = max(hops_rail, summary.hops_cross_su)
    gpus = max(summary.gpus, 1)
    su = scaleup_domain(candidate, catalog)
    return perf.NetworkView(
        gpus_per_node=su.gpus,
        inter_Bps_per_gpu=summary.injection_Bps,
        efficiency=_efficiency(profile, line, nics),
        host_latency_s=profile.host_latency_s,
        switch_latency_s=switch_latency,
        hops=max(hops_any, 1),
        hops_same_rail=max(hops_rail, 1),
        oversubscription=max(summary.oversub_cross_leaf, 1.0),
        bisection_Bps_per_gpu=summary.bisection_Bps / gpus if summary.bisection_Bps > 0 else None,
        in_network_reduction=profile.in_network_reduction and switch_sharp,
        rail_only=summary.cross_rail_via_nvlink,
        scaleup_Bps=su.bandwidth_Bps,
        scaleup_latency_s=su.latency_s,
        scaleup_reduction_efficiency=None if su.in_switch_reduction in (None, True) else 0.0,
        fabric=candidate.fabric,
    )


def scaleup_domain(candidate: Candidate, catalog: Catalog) -> domain.ScaleUpDomain:
    """The scale-up domain of a candidate's server or instance (:mod:`designer.catalog.domain`)."""
    if candidate.deployment is Deployment.CLOUD:
        inst = catalog.clouds[candidate.server]
        gpu = catalog.gpus[inst.gpu]
        return domain.ScaleUpDomain(domain.domain_gpus(inst), gpu.scaleup_Bps, None, None, gpu.scaleup_kind)
    server = catalog.servers[candidate.server]
    return domain.domain_of(server, catalog.gpus[server.gpu])


def _efficiency(profile, line_Bps: float, nics_per_host: int) -> float:
    """The profile's share of line rate, under its host-stack ceilings (kernel TCP is bound by
    the host's copies; :mod:`designer.perf.transport`)."""
    return transport.achieved_efficiency(line_Bps, nics_per_host, profile.efficiency,
                                         profile.nic_cap_Bps, profile.host_cap_Bps)


def gpu_count_grid(gpus_per_node: int, max_nodes: int, parts: tuple[int, ...] = ()) -> tuple[int, ...]:
    """GPU counts tried for a workload: whole nodes, about 12% apart, plus every power of two.

    Whole nodes keep jobs from sharing a node's NVLink domain; the ~12% spacing bounds how far the
    chosen size can be above the smallest that works. ``parts`` are GPUs per node a job may use
    instead of all (64 of an NVL72's 72, :func:`designer.catalog.domain.placements`): the same
    node counts at that many GPUs each are tried too.
    """
    nodes: set[int] = set()
    n = 1
    while n <= max_nodes:
        nodes.add(n)
        n = max(n + 1, int(n * 1.125))
    p = 1
    while p <= max_nodes:
        nodes.add(p)
        p *= 2
    per_node = {gpus_per_node, *parts}
    return tuple(sorted({m * g for m in nodes if m <= max_nodes for g in per_node}))


def scaled(est: perf.StepEstimate, tokens: float) -> perf.StepEstimate:
    """``est`` (a plan's step on one step's tokens) for a run of ``tokens``: only the time to
    train changes, ``tokens / tokens_per_s`` (:func:`designer.perf.estimate_step`)."""
    return replace(est, time_to_train_s=tokens / est.tokens_per_s)


@dataclass
class Evaluator:
    """Evaluates (workload, candidate, GPU count), caching by the network the job sees.

    Candidates that differ only in things the job cannot see (two switches with the same latency
    and radix class) share results, and so do workloads that differ only in tokens or deadline
    (their :attr:`~designer.optimize.task.Workload.shape`): a plan's step does not depend on how
    many steps are run. The best plan of a job at a size on one network is the first one the
    search times on the next (:func:`designer.perf.search_plans`' ``hint``): networks of one GPU
    differ little, so it usually wins again and prunes the rest.
    """

    catalog: Catalog
    facility: Facility
    efficiency: perf.ModelEfficiency = field(default_factory=perf.ModelEfficiency)  # multipliers on the model's rates
    # GPUs a job uses of each scale-up domain (system.gpus_per_domain_used); None: placement_for's
    gpus_per_domain_used: int | None = None
    _views: dict = field(default_factory=dict)
    _results: dict = field(default_factory=dict)
    _steps: dict = field(default_factory=dict)
    _hints: dict = field(default_factory=dict)
    _shapes: dict = field(default_factory=dict)  # shape -> its number
    _shape_of: dict = field(default_factory=dict)  # workload name -> (workload, its shape's number)
    calls: int = 0

    def view(self, candidate: Candidate, nodes: int) -> perf.NetworkView | None:
        key = (candidate.key, nodes)
        if key not in self._views:
            try:
                self._views[key] = network_view(candidate, self.catalog, self.facility, nodes)
            except TopologyError:
                self._views[key] = None
        return self._views[key]

    def gpus_used_per_node(self, candidate: Candidate) -> int:
        """GPUs a job uses of each node of ``candidate``: the pinned share of its scale-up domain
        (``gpus_per_domain_used``) where given, else all of them."""
        return min(self.gpus_per_domain_used or candidate.gpus_per_node, candidate.gpus_per_node)

    def placement(self, candidate: Candidate, gpus: int) -> tuple[int, int]:
        """(nodes, GPUs used per scale-up domain) of a job on ``gpus`` GPUs of ``candidate``: the
        pinned share of each domain (``gpus_per_domain_used``) where given, else
        :func:`designer.catalog.domain.placement_for`."""
        gpn = candidate.gpus_per_node
        size = scaleup_domain(candidate, self.catalog).gpus
        if size != gpn:
            return math.ceil(gpus / gpn), size
        used = self.gpus_per_domain_used
        if used is not None:
            return domain.pinned_placement(gpus, used)
        return domain.placement_for(gpus, size)

    def shape_id(self, w: Workload) -> int:
        """A small number naming ``w``'s shape, equal for workloads of equal shape (hashing the
        shape's job in every lookup would cost more than the lookups save)."""
        found = self._shape_of.get(w.name)
        if found is None or found[0] is not w:
            found = (w, self._shapes.setdefault(w.shape, len(self._shapes)))
            self._shape_of[w.name] = found
        return found[1]

    def step(self, w: Workload, cluster: perf.Cluster, gpus: int) -> perf.StepEstimate | str:
        """The fastest plan's step for ``w``'s shape on ``gpus`` GPUs of ``cluster`` (its time to
        train is one step), or why no plan fits. Searched once per shape, network and size,
        started from the best plan found for the same shape, GPU and size on another network."""
        shape = self.shape_id(w)
        key = (shape, cluster.gpu.name, cluster.network, gpus)
        if key not in self._steps:
            self.calls += 1
            hint_key = (shape, cluster.gpu.name, gpus)
            try:
                est = perf.search_plans(w.step_job, cluster, gpus, w.plan, hint=self._hints.get(hint_key))
            except PerfError as exc:
                self._steps[key] = str(exc)
            else:
                self._hints[hint_key] = est.plan
                self._steps[key] = est
        return self._steps[key]

    def evaluate(self, w: Workload, candidate: Candidate, gpus: int) -> Evaluation:
        """The fastest plan for ``w`` on ``gpus`` GPUs of ``candidate`` (or why none fits)."""
        nodes, used = self.placement(candidate, gpus)
        view = self.view(candidate, nodes)
        if view is None:
            return Evaluation(gpus, None, f"{candidate.topology} with {candidate.switch} cannot hold {nodes} "
                                          f"{'racks' if view_is_rack(candidate, self.catalog) else 'nodes'}")
        if nodes > 1 and used < view.gpus_per_node:
            view = replace(view, gpus_per_node=used)  # whole groups in each domain, the rest idle
        gpu = self.catalog.gpus[candidate.gpu]
        key = (w.name, w.tokens, gpu.name, view, gpus)
        if key not in self._results:
            found = self.step(w, perf.Cluster(gpu=gpu, network=view, efficiency=self.efficiency), gpus)
            self._results[key] = (Evaluation(gpus, None, found) if isinstance(found, str)
                                  else Evaluation(gpus, scaled(found, w.tokens)))
        return self._results[key]


def view_is_rack(candidate: Candidate, catalog: Catalog) -> bool:
    """Whether a candidate's node is a rack-scale system (its count is in racks)."""
    return (candidate.deployment is not Deployment.CLOUD
            and domain.is_rack_scale(catalog.servers[candidate.server]))


def ideal_view(catalog: Catalog, cand: Candidate) -> tuple[tuple, perf.NetworkView]:
    """An ideal network for this GPU (1 PB/s per GPU, no latency, no taper), and a cache key."""
    gpu = catalog.gpus[cand.gpu]
    su = scaleup_domain(cand, catalog)
    view = perf.NetworkView(gpus_per_node=su.gpus, inter_Bps_per_gpu=1e15, efficiency=1.0,
                            host_latency_s=0.0, switch_latency_s=0.0, hops=1, oversubscription=1.0,
                            bisection_Bps_per_gpu=1e15, in_network_reduction=True, scaleup_Bps=su.bandwidth_Bps,
                            scaleup_latency_s=su.latency_s, fabric="ideal")
    return (gpu.name, su.gpus, su.bandwidth_Bps, su.latency_s, "ideal"), view


def best_view(catalog: Catalog, cand: Candidate) -> tuple[tuple, perf.NetworkView]:
    """The best network any topology of this candidate's kind can give its GPUs, and a cache key.

    Same NIC rate per GPU and the same fabric profile (efficiency, host latency, in-network
    reduction) as the candidate, but one switch hop, no taper, full bisection and no rail-only
    detour: every real topology of that kind is at most as good, and the performance model never
    predicts a faster step on a worse network (more bandwidth, less latency, fewer hops and less
    taper never slow a step; a tested property).
    """
    gpu = catalog.gpus[cand.gpu]
    if cand.deployment is Deployment.CLOUD:
        inst = catalog.clouds[cand.server]
        per_gpu = inst.network_Bps / inst.gpus
        profile = catalog.fabrics[inst.network.value]
        switch_latency = 0.0
    else:
        server = catalog.servers[cand.server]
        rate = cand.link_rate_Bps or catalog.nics[server.nic].rate_Bps
        per_gpu = rate * server.nics / server.gpus
        profile = catalog.fabrics[cand.fabric]
        switch_latency = min(sw.latency_s for sw in catalog.switches.values())
    efficiency = profile.efficiency
    if cand.deployment is not Deployment.CLOUD:
        efficiency = _efficiency(profile, rate, server.nics // server.compute_trays)
    su = scaleup_domain(cand, catalog)
    key = (gpu.name, su.gpus, su.bandwidth_Bps, su.latency_s, round(per_gpu), profile.name, efficiency)
    view = perf.NetworkView(gpus_per_node=su.gpus, inter_Bps_per_gpu=per_gpu,
                            efficiency=efficiency, host_latency_s=profile.host_latency_s,
                            switch_latency_s=switch_latency, hops=1, oversubscription=1.0,
                            in_network_reduction=profile.in_network_reduction, scaleup_Bps=su.bandwidth_Bps,
                            scaleup_latency_s=su.latency_s, fabric=f"best {profile.name}")
    return key, view
