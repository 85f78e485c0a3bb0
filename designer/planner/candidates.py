"""Candidate systems from a spec and catalog: every combination the spec allows, and why others were dropped.

The list is finite, deterministic and sorted by key. Combinations that cannot work (an
InfiniBand NIC on an Ethernet switch, a switch that cannot run the NIC's rate) are dropped here,
each with a reason kept for the explanation.
"""

from __future__ import annotations

__all__ = ["MAX_CANDIDATES", "UNBUILDABLE", "enumerate_candidates", "link_speed", "unbuildable_alternatives"]

from designer.catalog.media import GBPS, gbps_name
from designer.catalog.types import Catalog, Protocol
from designer.design.model import Alternative
from designer.errors import CatalogError, SpecError
from designer.topology.layout import IN_RACK_M
from designer.topology.links import link_problem
from designer.topology.ports import server_port, switch_port
from designer.optimize.candidates import ON_PREM_FABRICS, Candidate, Rejection, fabric_protocol
from designer.spec.choices import Deployment
from designer.spec.models import Spec


# The most candidate systems one spec may ask the optimizer to weigh. The built-in catalogs give a
# few hundred; 40,000 (a user catalog of 490 switches) took half a minute to solve here, so more is
# refused up front instead of searched for minutes (docs/reliability.md).
MAX_CANDIDATES = 50_000


def _too_many(spec: Spec) -> SpecError:
    return SpecError(f"the spec and its catalogs allow more than {MAX_CANDIDATES:,} candidate systems; narrow "
                     "constraints (deployments, fabrics, topologies, gpus, oversubscription), pin part of the "
                     "system, or use a smaller catalog", spec.locate(("constraints",)))


def _link_problem(catalog: Catalog, server: str, switch: str, protocol: Protocol, rate: float) -> str | None:
    """Why no catalog part links a server's compute cage to a switch cage, or two switch cages,
    at ``rate`` (designer.topology.links), or None.

    Any media at an in-rack run: whether some catalog part joins the two cages at all (the floor
    layout's runs are known only once the size is; a longer run without parts is refused when the
    design is priced).
    """
    s, sw = catalog.servers[server], catalog.switches[switch]
    try:
        node = server_port(s, catalog.nics[s.nic], protocol, rate)
        cage = switch_port(sw, rate)
    except CatalogError as exc:
        return exc.message
    return link_problem(catalog, node, cage, IN_RACK_M) or link_problem(catalog, cage, cage, IN_RACK_M)


# Label prefix of a server and switch pair no catalog part links (designer.topology.links).
UNBUILDABLE = "unbuildable"


def unbuildable_alternatives(rejected: tuple[Rejection, ...]) -> tuple[Alternative, ...]:
    """The rejected server and switch pairs that no catalog part links, as alternatives labelled
    ``unbuildable: <server> with <switch>`` whose reason names the missing link (both cages,
    protocol, lanes x lane rate, run): no placeholder part stands in for them. One per pair, the
    first reason (the fastest rate tried), in the candidates' order."""
    out: dict[str, Alternative] = {}
    for r in rejected:
        if not r.reason.startswith("no link from ") or " with " not in r.what:
            continue
        label = f"{UNBUILDABLE}: {r.what}"
        if label not in out:
            out[label] = Alternative(label, "on_prem", "", "", r.what.split(" with ", 1)[0], 0, None, None, False,
                                     r.reason)
    return tuple(out.values())


def _allowed(value: str | None, pinned: str | None) -> bool:
    return pinned is None or value == pinned


def enumerate_candidates(spec: Spec, catalog: Catalog, *, links: bool = True
                         ) -> tuple[tuple[Candidate, ...], tuple[Rejection, ...]]:
    """All candidate systems the spec and catalog allow, sorted by key, and the rejected ones.

    Rules: a server's compute NIC must speak the fabric's protocol (InfiniBand or Ethernet; RoCE
    and TCP need an Ethernet NIC, RoCE also RDMA); the switch must speak the same protocol and run
    the NIC's rate natively or by breakout, and the catalog must hold parts that link the server's
    compute cage to a switch cage, and two switch cages, at that rate (both cages filled, the same
    lanes x lane rate at both ends; :mod:`designer.topology.links`), else the reason is kept and
    the next lower rate is tried. A rate below the NIC's native one is a candidate only when the
    spec allows it (``constraints.allow_nic_downrate``) or pins the switch: a server's NICs are
    bought with it, so by default the switch is chosen to run them at their rate. ``single_switch`` and ``rail_only`` are considered only
    at oversubscription 1 (they have no leaf uplinks to thin out). Cloud instances come with their
    provider's network, which is their fabric; each is a candidate once per pricing model of the
    spec that the catalog prices it under (never under another model's price). Servers and switches
    without a price are left out unless the spec pins them: an unpriced part cannot be compared.

    ``links=False`` keeps a server and switch that no catalog part links (at the fastest rate
    both run, the reason still among the rejections): for predictions on a pinned system, whose
    step time does not depend on which optics exist, never for a design that is priced.

    Raises:
        SpecError: a pinned cloud instance has no price under any of the spec's pricing models
            (located at ``constraints.pricing``, naming the instance), or more than
            :data:`MAX_CANDIDATES` candidates (located at the spec's constraints).
    """
    c = spec.constraints
    pin = spec.system
    out: list[Candidate] = []
    rejected: list[Rejection] = []
    allowed_gpus = set(c.gpus)
    deployments = [d for d in c.deployments if pin.deployment is None or d is pin.deployment]
    ratios = (pin.oversubscription,) if pin.oversubscription is not None else c.oversubscription
    problems: dict[tuple, str | None] = {}  # (server, switch, protocol, rate) -> why no link, or None

    if Deployment.ON_PREM in deployments:
        for server in sorted(catalog.servers.values(), key=lambda s: s.name):
            if not _allowed(server.name, pin.server):
                continue
            if allowed_gpus and server.gpu not in allowed_gpus:
                continue
            if server.price_usd is None and pin.server is None:
                rejected.append(Rejection(server.name, "no price in the catalog (pin it to price the rest)"))
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
                    if switch.price_usd is None and pin.switch is None:
                        rejected.append(Rejection(switch.name, "no price in the catalog (pin it to price the rest)"))
                        continue
                    # The fastest rate both ends run and the catalog's parts can link: the NIC's
                    # own, or a lower one it supports (a 400G NIC on a 100GbE switch runs at 100G).
                    rates = [r for r in nic.rates() if switch.ports_at(r) > 0]
                    if not rates:
                        rejected.append(Rejection(f"{server.name} with {switch.name}",
                                                  "the switch cannot run any rate of the NIC"))
                        continue
                    why = []
                    for r in rates:
                        key = (server.name, switch.name, proto, r)
                        if key not in problems:
                            problems[key] = _link_problem(catalog, server.name, switch.name, proto, r)
                        why.append(problems[key])
                    rate = next((r for r, w in zip(rates, why) if w is None), None)
                    if rate is None:
                        rejected.append(Rejection(f"{server.name} with {switch.name}", why[0]))
                        if links:
                            continue
                        rate = rates[0]
                    if rate < nic.rate_Bps and not c.allow_nic_downrate and pin.switch is None:
                        # A server's NICs are part of it: bought at 400G, run at 400G unless the
                        # buyer says otherwise (a pinned switch says so too, with a warning).
                        rejected.append(Rejection(
                            f"{server.name} with {switch.name}",
                            f"runs its NIC {nic.name} at {gbps_name(rate)} below its native "
                            f"{gbps_name(nic.rate_Bps)} (allow it with constraints.allow_nic_downrate: true)"))
                        continue
                    link = 0.0 if rate == nic.rate_Bps else rate
                    for topology in c.topologies:
                        if not _allowed(topology, pin.topology):
                            continue
                        if topology == "single_switch" and server.nics > switch.ports_at(rate):
                            # a rack-scale system's 72 NICs do not fit one 64-port switch
                            rejected.append(Rejection(f"{server.name} on one {switch.name}",
                                                      f"one switch has {switch.ports_at(rate)} ports for its "
                                                      f"{server.nics} NICs"))
                            continue
                        for ratio in ratios:
                            if topology in ("single_switch", "rail_only") and ratio != 1.0:
                                continue
                            out.append(Candidate(Deployment.ON_PREM, server.name, server.gpu, server.gpus,
                                                 fabric, topology, switch.name, float(ratio), link))
                            if len(out) > MAX_CANDIDATES:
                                raise _too_many(spec)

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
            priced = [p for p in c.pricing if inst.price_usd_per_s(p.value) is not None]
            for p in c.pricing:
                if p not in priced:
                    rejected.append(Rejection(f"{inst.name} {p.value}", f"the catalog has no {p.value} price for it"))
            if not priced and pin.server == inst.name:
                has = ", ".join(inst.pricing_models()) or "none"
                raise SpecError(f"cloud instance {inst.name} has no {' or '.join(p.value for p in c.pricing)} price "
                                f"in the catalog (it has: {has}); choose a pricing model it has, or give the price "
                                f"in a user catalog", spec.locate(("constraints", "pricing")))
            for p in priced:
                out.append(Candidate(Deployment.CLOUD, inst.name, inst.gpu, inst.gpus, fabric, "cloud", None, 1.0,
                                     pricing=p.value))
                if len(out) > MAX_CANDIDATES:
                    raise _too_many(spec)

    out.sort(key=lambda cand: cand.key)
    return tuple(out), tuple(rejected)


def link_speed(catalog: Catalog, cand: Candidate | None) -> tuple[float, float]:
    """(scale-out Gb/s per GPU as the compute NICs run, their native Gb/s when they run below it, else 0).

    Model: nics x rate / gpus per server, at the candidate's link rate where it runs the NICs
    below their own (``Candidate.link_rate_Bps``), else at the NIC's; 0, 0 for no on-prem system.
    """
    if cand is None or cand.deployment is not Deployment.ON_PREM:
        return 0.0, 0.0
    server = catalog.servers[cand.server]
    nic = catalog.nics[server.nic]
    rate = cand.link_rate_Bps or nic.rate_Bps
    below = cand.link_rate_Bps and cand.link_rate_Bps < nic.rate_Bps - 1.0
    return server.nics * rate / server.gpus / GBPS, (nic.rate_Bps / GBPS if below else 0.0)
