"""The integer program finds the same optimum as an exhaustive enumeration.

The oracle enumerates every on-prem system (or none), every node count, and every assignment of
workloads to options, prices each with the closed-form fabric of :func:`designer.topology.summarize`
and keeps the cheapest that meets every constraint. Problems are generated at random, small
enough to enumerate.
"""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from designer import topology
from designer.catalog import load_builtin
from designer.errors import InfeasibleError
from designer.optimize import pricing
from designer.optimize.candidates import Candidate
from designer.optimize.milp import solve_problem
from designer.optimize.problem import CloudSystem, Economics, Limits, OnPremSystem, Option, Problem
from designer.spec.choices import Deployment
from designer.spec.units import SECONDS_PER_YEAR

CATALOG = load_builtin()
FACILITY = CATALOG.facilities["default"]
# Every line of the cost of ownership is on: colocation at $195/kW-month, draw at 82% training and
# 20% idle, 40% residual value, support by vendor and spares from the built-in catalog.
ECON = Economics(horizon_s=2 * SECONDS_PER_YEAR, pue=1.25, electricity_usd_per_j=0.08 / 3.6e6,
                 installation_fraction=0.05, maintenance_fraction_per_year=0.1,
                 facility_usd_per_w_s=195.0 / 1e3 / (SECONDS_PER_YEAR / 12), training_power_fraction=0.82,
                 idle_power_fraction=0.2, residual_fraction=0.4)
SYSTEMS = [
    ("dgx-h100", "infiniband", "nvidia-qm9700", "fat_tree"),
    ("dgx-h100", "infiniband", "nvidia-qm9700", "rail_only"),
    ("dgx-a100-80g", "infiniband", "nvidia-qm8700", "rail_optimized"),
    ("hgx-h100-400gbe", "roce", "nvidia-sn5600", "single_switch"),
]
MAX_NODES = 12
DAY = 86400.0


def _onprem(server, fabric, switch, topo) -> OnPremSystem:
    cand = Candidate(Deployment.ON_PREM, server, CATALOG.servers[server].gpu, CATALOG.servers[server].gpus,
                     fabric, topo, switch, 1.0)
    shape = pricing.fabric_shape(cand, CATALOG, FACILITY)
    shape = type(shape)(**{**{f: getattr(shape, f) for f in shape.__slots__}, "max_nodes": min(shape.max_nodes, MAX_NODES)})
    return OnPremSystem(cand, shape, pricing.unit_costs(cand, CATALOG, FACILITY, 8))


def _cloud(name: str, usd_per_h: float) -> CloudSystem:
    inst = CATALOG.clouds[name]
    cand = Candidate(Deployment.CLOUD, name, inst.gpu, inst.gpus, inst.network.value, "cloud", None, 1.0)
    return CloudSystem(cand, usd_per_h / 3600.0)


def _capex_opex_power(system: OnPremSystem, n: int) -> tuple[float, float, float]:
    """Capex, opex (before the jobs' own energy) and rated power of n nodes, written out line by line."""
    s = topology.summarize(pricing.fabric_request(system.candidate, CATALOG, n, FACILITY))
    uc, R, e = system.costs, system.shape.rails, ECON
    years = e.horizon_s / SECONDS_PER_YEAR
    switches = s.leaves + s.spines + s.cores
    racks = math.ceil(n / uc.servers_per_rack + switches * uc.switch_ru / uc.rack_units - 1e-9)
    sx = s.spine_core_links if s.tiers == 3 else 0
    links = uc.node_link_usd * R * n + uc.leaf_spine_link_usd * s.leaf_spine_links + uc.spine_core_link_usd * sx
    links_w = uc.node_link_w * R * n + uc.leaf_spine_link_w * s.leaf_spine_links + uc.spine_core_link_w * sx
    a = e.installation_fraction
    # The fabric manager's appliances (InfiniBand): once per system, bought and supported as switches.
    fixed, fixed_w = uc.fixed_usd, uc.fixed_w
    capex = (uc.node_usd * n * (1 + a + uc.node_spares) + links * (1 + a + uc.link_spares)
             + (uc.switch_usd * switches + fixed) * (1 + a + uc.switch_spares) + uc.rack_usd * racks * (1 + a))
    support = years * (uc.node_usd * n * uc.node_support + (uc.switch_usd * switches + fixed) * uc.switch_support)
    residual = e.residual_fraction * (uc.node_usd * n + links + uc.switch_usd * switches + fixed)
    rated = uc.node_w * n + links_w + uc.switch_w * switches + fixed_w
    idle = uc.node_w * e.idle_power_fraction * n + links_w + uc.switch_w * switches + fixed_w
    opex = (support - residual + rated * e.facility_usd_per_w_s * e.horizon_s
            + idle * e.horizon_s * e.pue * e.electricity_usd_per_j)
    return capex, opex, rated


def _busy_usd(system: OnPremSystem, o: Option) -> float:
    e, uc = ECON, system.costs
    extra_w = uc.node_w * (e.training_power_fraction - e.idle_power_fraction)
    return extra_w * o.utilization * o.gpus / system.candidate.gpus_per_node * o.time_s * e.pue * e.electricity_usd_per_j


def _oracle(p: Problem) -> float | None:
    best = None
    choices = [None, *p.onprem]
    for system in choices:
        sizes = [0] if system is None else range(1, system.shape.max_nodes + 1)
        for n in sizes:
            if system is None:
                fixed = 0.0
                capex = 0.0
                power = 0.0
            else:
                capex, opex, power = _capex_opex_power(system, n)
                fixed = capex + opex
            per_w = []
            for w in p.workloads:
                opts = []
                if system is not None:
                    opts += [("onprem", o, _busy_usd(system, o)) for o in p.options.get((w, system.key), ())]
                for c in p.cloud:
                    gpn = c.candidate.gpus_per_node
                    opts += [("cloud", o, o.gpus / gpn * o.time_s * c.usd_per_node_s) for o in p.options.get((w, c.key), ())]
                per_w.append(opts)
            for combo in itertools.product(*per_w):
                onprem_used = [(w, o) for w, (kind, o, _) in zip(p.workloads, combo) if kind == "onprem"]
                if system is not None and not onprem_used:
                    continue  # building an unused system is never cheapest
                gpn = system.candidate.gpus_per_node if system else 1
                if any(o.gpus > gpn * n for _, o in onprem_used):
                    continue
                ok = True
                for d in sorted(set(p.deadlines_s.values())):
                    used = sum(o.gpus * o.time_s for w, o in onprem_used if p.deadlines_s[w] <= d)
                    if used > gpn * d * n * (1 + 1e-9):
                        ok = False
                if not ok:
                    continue
                usage = sum(c for _, _, c in combo)  # the cloud bills and the on-prem jobs' energy
                total = fixed + usage
                if p.limits.total_usd is not None and total > p.limits.total_usd:
                    continue
                if p.limits.capex_usd is not None and capex > p.limits.capex_usd:
                    continue
                if p.limits.power_w is not None and power > p.limits.power_w:
                    continue
                if best is None or total < best:
                    best = total
    return best


option_st = st.builds(lambda nodes, days, util: (nodes, days, util),
                      st.integers(1, 6), st.floats(5, 120), st.floats(0.5, 1.0))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    systems=st.lists(st.sampled_from(SYSTEMS), min_size=1, max_size=2, unique=True),
    workloads=st.integers(1, 3),
    options=st.lists(st.lists(option_st, min_size=1, max_size=3), min_size=3, max_size=3),
    deadlines=st.lists(st.sampled_from([30.0, 60.0, 200.0]), min_size=3, max_size=3),
    cloud_price=st.floats(20, 400),
    budget=st.one_of(st.none(), st.floats(2e5, 5e7)),
)
def test_milp_matches_exhaustive_enumeration(systems, workloads, options, deadlines, cloud_price, budget):
    onprem = tuple(_onprem(*s) for s in systems)
    cloud = (_cloud("aws-p5.48xlarge", cloud_price),)
    names = tuple(f"w{i}" for i in range(workloads))
    opts = {}
    for i, w in enumerate(names):
        for system in (*onprem, *cloud):
            gpn = system.candidate.gpus_per_node
            opts[(w, system.key)] = tuple(
                Option(gpus=nodes * gpn, time_s=days * DAY, utilization=util, index=j)
                for j, (nodes, days, util) in enumerate(options[i]) if days <= deadlines[i])
    opts = {k: v for k, v in opts.items() if v}
    problem = Problem(workloads=names, deadlines_s={w: deadlines[i] * DAY for i, w in enumerate(names)},
                      tokens={w: 1e12 for w in names}, onprem=onprem, cloud=cloud, options=opts, economics=ECON,
                      limits=Limits(total_usd=budget))
    expected = _oracle(problem)
    try:
        sol = solve_problem(problem)
    except InfeasibleError:
        assert expected is None
        return
    assert expected is not None
    total = sol.capex_usd + sol.opex_usd + sol.cloud_usd
    assert total == pytest.approx(expected, rel=1e-6, abs=0.05)
