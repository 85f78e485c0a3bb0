"""Candidate systems: every (deployment, server or instance, fabric, topology, switch, ratio) the spec allows.

The list is finite, deterministic and sorted; the integer program chooses among these and sizes
the chosen one. Combinations that cannot work (an InfiniBand NIC on an Ethernet switch, a switch
that cannot run the NIC's rate) are dropped here, each with a reason kept for the explanation.
"""

from __future__ import annotations

__all__ = ["Candidate", "Rejection", "enumerate_candidates", "ETHERNET_FABRICS", "fabric_protocol"]

from dataclasses import dataclass, field

from designer.catalog_types import Catalog, Protocol
from designer.spec import Deployment, Spec

ETHERNET_FABRICS = ("ethernet", "roce")
ON_PREM_FABRICS = ("ethernet", "roce", "infiniband")


def fabric_protocol(fabric: str) -> Protocol:
    """The wire protocol a fabric technology runs on (RoCE and TCP both run on Ethernet)."""
    return Protocol.INFINIBAND if fabric == "infiniband" else Protocol.ETHERNET


@dataclass(frozen=True, slots=True)
class Candidate:
    """One system the optimizer may choose. Cloud candidates have no switch and topology ``cloud``."""

    deployment: Deployment
    server: str  # server or cloud-instance catalog name
    gpu: str
    gpus_per_node: int
    fabric: str
    topology: str
    switch: str | None
    oversubscription: float
    link_rate_Bps: float = 0.0  # rate the NICs run at when below their native rate (0: native)
    # Stable, readable identifier (also used in MILP variable names); derived, set once.
    key: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        parts = [self.deployment.value, self.server, self.fabric, self.topology]
        if self.switch:
            parts.append(self.switch)
        parts.append(f"os{self.oversubscription:g}")
        if self.link_rate_Bps:
            parts.append(f"{self.link_rate_Bps * 8 / 1e9:g}g")
        # The key is read in every inner loop of the optimizer: computed once, not per access.
        object.__setattr__(self, "key", "__".join(parts))


@dataclass(frozen=True, slots=True)
class Rejection:
    """A combination that was not considered, and why."""

    what: str
    reason: str


def _allowed(value: str | None, pinned: str | None) -> bool:
    return pinned is None or value == pinned


def enumerate_candidates(spec: Spec, catalog: Catalog) -> tuple[tuple[Candidate, ...], tuple[Rejection, ...]]:
    """All candidate systems the spec and catalog allow, sorted by key, and the rejected ones.

    Rules: a server's compute NIC must speak the fabric's protocol (InfiniBand or Ethernet; RoCE
    and TCP need an Ethernet NIC, RoCE also RDMA); the switch must speak the same protocol and run
    the NIC's rate natively or by breakout; ``single_switch`` and ``rail_only`` are considered only
    at oversubscription 1 (they have no leaf uplinks to thin out). Cloud instances come with their
    provider's network, which is their fabric.
    """
    c = spec.constraints
    pin = spec.system
    out: list[Candidate] = []
    rejected: list[Rejection] = []
    allowed_gpus = set(c.gpus)
    deployments = [d for d in c.deployments if pin.deployment is None or d is pin.deployment]
    ratios = (pin.oversubscription,) if pin.oversubscription is not None else c.oversubscription

    if Deployment.ON_PREM in deployments:
        for server in sorted(catalog.servers.values(), key=lambda s: s.name):
            if not _allowed(server.name, pin.server):
                continue
            if allowed_gpus and server.gpu not in allowed_gpus:
                continue
            nic = catalog.nics[server.nic]
            for fabric in ON_PREM_FABRICS:
                if fabric not in c.fabrics or not _allowed(fabric, pin.fabric):
                    continue
                proto = fabric_protocol(fabric)
                if proto not in nic.protocols:
                    rejected.append(Rejection(f"{server.name} on {fabric}", f"its NIC {nic.name} does not speak {proto.value}"))
                    continue
                if fabric == "roce" and not nic.rdma:
                    rejected.append(Rejection(f"{server.name} on roce", f"its NIC {nic.name} has no RDMA"))
                    continue
                for switch in sorted(catalog.switches.values(), key=lambda s: s.name):
                    if not _allowed(switch.name, pin.switch):
                        continue
                    if switch.protocol is not proto:
                        continue
                    # The fastest rate both ends run: the NIC's own, or a lower one it supports
                    # (a 400G NIC on a 100GbE switch runs at 100G).
                    rate = next((r for r in nic.rates() if switch.ports_at(r) > 0), None)
                    if rate is None:
                        rejected.append(Rejection(f"{server.name} with {switch.name}",
                                                  "the switch cannot run any rate of the NIC"))
                        continue
                    link = 0.0 if rate == nic.rate_Bps else rate
                    for topology in c.topologies:
                        if not _allowed(topology, pin.topology):
                            continue
                        for ratio in ratios:
                            if topology in ("single_switch", "rail_only") and ratio != 1.0:
                                continue
                            out.append(Candidate(Deployment.ON_PREM, server.name, server.gpu, server.gpus,
                                                 fabric, topology, switch.name, float(ratio), link))

    if Deployment.CLOUD in deployments and pin.switch is None and pin.topology in (None, "cloud"):
        for inst in sorted(catalog.clouds.values(), key=lambda s: s.name):
            if not _allowed(inst.name, pin.server):
                continue
            if allowed_gpus and inst.gpu not in allowed_gpus:
                continue
            fabric = inst.network.value
            if pin.fabric is not None and fabric != pin.fabric:
                continue
            # A provider network of an on-prem kind (Azure's InfiniBand, OCI's RoCE) must be allowed by
            # name; provider-only kinds (EFA, GPUDirect-TCPX) are allowed unless the spec lists some
            # provider kinds and not this one.
            listed_cloud_kinds = [f for f in c.fabrics if f not in ON_PREM_FABRICS]
            if (fabric in ON_PREM_FABRICS and fabric not in c.fabrics) or (
                    fabric not in ON_PREM_FABRICS and listed_cloud_kinds and fabric not in listed_cloud_kinds):
                rejected.append(Rejection(inst.name, f"its network ({fabric}) is not among the allowed fabrics"))
                continue
            out.append(Candidate(Deployment.CLOUD, inst.name, inst.gpu, inst.gpus, fabric, "cloud", None, 1.0))

    out.sort(key=lambda cand: cand.key)
    return tuple(out), tuple(rejected)

