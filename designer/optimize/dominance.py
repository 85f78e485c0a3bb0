"""Candidates no objective can prefer: the same fabric on a switch or protocol that is no better and costs no less.

Two on-prem candidates with the same server, topology, oversubscription and link rate, on
switches with the same logical ports and cages, build the same fabric at every size: the same
switch, link and rack counts. If one has a switch no dearer, no hungrier and no slower (latency,
in-network reduction), owning it no dearer (support, spares, switches already owned) and a
fabric profile no worse (collective efficiency, host latency, in-network reduction), every design that builds the other is matched by the same design on it,
at no more cost and, because the performance model never predicts a slower step on a better
network (a tested property), no longer times. The other is dominated and need not be evaluated.
Ties keep the candidate first in key order, as the program's tie-break does.

This is what makes RoCE candidates hide their TCP twins (the same NICs and switches, a better
protocol), and two switch models of equal ports and price share one evaluation.
"""

from __future__ import annotations

__all__ = ["undominated"]

from typing import Iterable

from designer.optimize.candidates import Candidate
from designer.optimize.workspace import Workspace
from designer.spec.choices import Deployment

_REL = 1e-12  # relative float noise forgiven when comparing prices and powers


def _no_more(a: float, b: float) -> bool:
    return a <= b * (1 + _REL) + 1e-12


def _twin_key(ws: Workspace, cand: Candidate) -> tuple:
    """What must be equal for two candidates to build the same fabric at every size, with the
    same optics and cables (chosen by port rate, cage and reach): the server, topology, ratio and
    link rate, and the switch's protocol, ports, rates, cages and height."""
    switch = ws.catalog.switches[cand.switch]
    # A soft preference's credit is part of what the program minimises: twins earn the same one.
    return (cand.server, cand.topology, cand.oversubscription, cand.link_rate_Bps, switch.protocol,
            switch.ports, switch.port_rate_Bps, tuple(sorted(switch.breakout.items())), switch.cages,
            switch.rack_units, ws.credits.get(cand.key))


def _at_least_as_good(ws: Workspace, a: Candidate, b: Candidate) -> bool:
    """Whether ``a`` is no dearer and no slower than ``b`` at every size (same fabric shape)."""
    sa, sb = ws.catalog.switches[a.switch], ws.catalog.switches[b.switch]
    pa, pb = ws.catalog.fabrics[a.fabric], ws.catalog.fabrics[b.fabric]
    if not (_no_more(sa.price_usd, sb.price_usd) and _no_more(sa.power_w, sb.power_w)
            and sa.latency_s <= sb.latency_s and pa.efficiency >= pb.efficiency
            and pa.host_latency_s <= pb.host_latency_s):
        return False
    sharp_a = pa.in_network_reduction and sa.in_network_reduction
    sharp_b = pb.in_network_reduction and sb.in_network_reduction
    if sharp_b and not sharp_a:
        return False
    # What owning each costs, as the program prices it (support by vendor, spares, owned units).
    ua, ub = ws.system(a.key), ws.system(b.key)
    if ua is None or ub is None or ua.shape != ub.shape:
        return False
    ca, cb = ua.costs, ub.costs
    flat = ws.economics.maintenance_fraction_per_year
    for name in _CHEAPER:
        va, vb = getattr(ca, name), getattr(cb, name)
        if name.endswith("_support"):
            va, vb = (flat if va is None else va), (flat if vb is None else vb)
        if not _no_more(va, vb):
            return False
    return ca.owned_switches >= cb.owned_switches and all(getattr(ca, n) == getattr(cb, n) for n in _EQUAL)


# Unit costs a dominating candidate has no more of, and those that must be equal (the server's).
_CHEAPER = ("node_link_usd", "node_link_w", "leaf_spine_link_usd", "leaf_spine_link_w", "spine_core_link_usd",
            "spine_core_link_w", "switch_usd", "switch_w", "switch_support", "switch_spares", "link_spares")
_EQUAL = ("node_usd", "node_w", "node_ru", "switch_ru", "servers_per_rack", "rack_units", "rack_usd",
          "node_support", "node_spares", "node_training_w", "node_idle_w", "owned_nodes", "storage")


def undominated(ws: Workspace, keys: Iterable[str]) -> list[str]:
    """The on-prem candidates among ``keys`` that no other among ``keys`` dominates (see the
    module docstring), in the order given; cloud keys pass through."""
    keys = list(keys)
    memo = ("undominated", tuple(keys))
    if memo in ws.floors:
        return list(ws.floors[memo])  # every search over the same candidates asks again
    groups: dict[tuple, list[Candidate]] = {}
    for key in keys:
        cand = ws.by_key[key]
        if cand.deployment is Deployment.ON_PREM:
            groups.setdefault(_twin_key(ws, cand), []).append(cand)
    dominated: set[str] = set()
    for members in groups.values():
        if len(members) < 2 or ws.deadline.expired():
            continue  # out of time: the rest stay (skipping twins only saves work)
        members.sort(key=lambda c: c.key)
        for b in members:
            for a in members:
                if a is b or a.key in dominated:
                    continue
                if _at_least_as_good(ws, a, b) and (a.key < b.key or not _at_least_as_good(ws, b, a)):
                    dominated.add(b.key)
                    break
    kept = [k for k in keys if k not in dominated]
    if not ws.deadline.expired():  # a search cut short may have left dominated twins in
        ws.floors[memo] = tuple(kept)
    return kept
