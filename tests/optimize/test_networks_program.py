"""The program prices the storage, in-band and out-of-band networks exactly as the design builds them.

For generated systems, sizes, file systems and network switches the program's counts of every
network item equal the design's BOM lines (the closed forms of designer.topology.networks at the
chosen nodes, the file system's whole units and the compute fabric's switches), so the program's
network cost is the design's.
"""

from __future__ import annotations

import math
from types import MappingProxyType

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from designer import topology
from designer.catalog import load_builtin
from designer.optimize import costing, networks as network_costs, ownership, pricing
from designer.optimize.candidates import Candidate
from designer.optimize.milp import solve_problem
from designer.optimize.problem import Economics, Limits, OnPremSystem, Option, Problem, StorageNeeds
from designer.spec.choices import Deployment
from designer.topology import network_bom, networks as nw

CATALOG = load_builtin()
FACILITY = CATALOG.facilities["default"]
ECON = Economics(horizon_s=3 * 365 * 86400.0, pue=1.3, electricity_usd_per_j=0.08 / 3.6e6,
                 installation_fraction=0.05, maintenance_fraction_per_year=0.1, residual_fraction=0.2)
COMBOS = [
    ("dgx-h100", "infiniband", "nvidia-qm9700", "rail_optimized"),
    ("dgx-b200", "infiniband", "nvidia-qm9700", "fat_tree"),
    ("dgx-a100-80g", "infiniband", "nvidia-qm8700", "rail_only"),
    ("hgx-h100-400gbe", "roce", "nvidia-sn5600", "single_switch"),
]


def _system(combo, networks: nw.Networks, read_per_node: float) -> OnPremSystem:
    server, fabric, switch, topo = combo
    cand = Candidate(Deployment.ON_PREM, server, CATALOG.servers[server].gpu, CATALOG.servers[server].gpus,
                     fabric, topo, switch, 1.0)
    needs = StorageNeeds(read_Bps_per_node=read_per_node, write_Bps_per_node=read_per_node / 2,
                         checkpoint_Bps_per_node=MappingProxyType({}), capacity_bytes_of=MappingProxyType({}))
    shape = pricing.fabric_shape(cand, CATALOG, FACILITY)
    costs = pricing.unit_costs(cand, CATALOG, FACILITY, 8, storage=needs, networks=networks)
    return OnPremSystem(cand, shape, costs)


def _solve(system: OnPremSystem, nodes: int):
    gpn = system.candidate.gpus_per_node
    problem = Problem(
        workloads=("w",), deadlines_s={"w": 1e9}, tokens={"w": 1e12}, onprem=(system,), cloud=(),
        options={("w", system.key): (Option(gpus=gpn, time_s=1e6, utilization=0.9, index=0),)},
        economics=ECON, limits=Limits(), fixed_nodes=nodes)
    return solve_problem(problem)


def _design_lines(system: OnPremSystem, nodes: int):
    lines, summary = costing.design_bom(system, CATALOG, FACILITY, nodes, {"w": 1}, {})
    return [l for l in lines if l.role in nw.NETWORK_ROLES and l.category in ("switch", "transceiver", "cable")]


def _program_lines(system: OnPremSystem, counts) -> dict[tuple[str, str, str], int]:
    """The network BOM quantities the program's counts make (category, sku, role)."""
    out: dict[tuple[str, str, str], int] = {}
    if system.costs.networks is None:
        return out
    for i, item in enumerate(network_bom.network_items(system.costs.networks.parts)):
        qty = counts.get(("part", i), sum(counts.get((item.role, f), 0) for f in item.fields))
        if item.per > 1 and ("part", i) not in counts:
            qty = math.ceil(qty / item.per)
        if qty:
            key = (item.category, item.part.name, item.role)
            out[key] = out.get(key, 0) + qty
    return out


FLAGS = st.builds(nw.Networks, st.booleans(), st.booleans(), st.booleans())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(COMBOS), st.integers(1, 300), FLAGS, st.sampled_from([0.0, 1.25e9, 40e9]))
def test_program_networks_are_the_designs(combo, nodes, networks, read_per_node):
    system = _system(combo, networks, read_per_node)
    nodes = min(nodes, system.shape.max_nodes)
    sol = _solve(system, nodes)
    lines = _design_lines(system, nodes)
    want: dict[tuple[str, str, str], int] = {}
    for l in lines:  # lines of one part differ by what they plug into: summed per part
        want[(l.category, l.sku, l.role)] = want.get((l.category, l.sku, l.role), 0) + int(l.quantity)
    assert _program_lines(system, sol.network_counts) == want
    assert {l.role for l in lines} == {r for r in nw.NETWORK_ROLES if getattr(networks, r)}
    if system.costs.networks is None:
        return
    # Priced alike: the program's network capex is the lines' price with installation and spares.
    capex, *_ = network_costs.network_terms(system.costs.networks, ECON, sol.network_counts)
    spares = FACILITY.spares
    design = sum(l.total_usd * ownership.capex_per_usd(ECON, spares.get(l.category, 0.0)) for l in lines)
    assert capex == pytest.approx(design, rel=1e-9, abs=1e-6)


def test_ra_11333_pod_in_the_program():
    """127 DGX H100 with 12 AI400X2T (RA-11333 Tables 7 and 8): the program builds 16 storage, 8
    in-band and 8 out-of-band switches."""
    system = _system(COMBOS[0], nw.Networks(), 0.0)
    fixed = StorageNeeds(read_Bps_per_node=0.0, write_Bps_per_node=0.0, checkpoint_Bps_per_node=MappingProxyType({}),
                         capacity_bytes_of=MappingProxyType({}), read_Bps=960e9)
    cand = system.candidate
    costs = pricing.unit_costs(cand, CATALOG, FACILITY, 127, storage=fixed, networks=nw.Networks())
    assert costs.storage.fixed_units == 12
    sol = _solve(OnPremSystem(cand, system.shape, costs), 127)
    c = sol.network_counts
    assert c[("storage", "leaves")] + c[("storage", "spines")] == 16
    assert c[("inband", "leaves")] + c[("inband", "spines")] == 8
    assert c[("oob", "leaves")] == 8


def test_no_networks_no_variables():
    system = _system(COMBOS[0], nw.Networks(False, False, False), 1e9)
    assert system.costs.networks is None
    assert _solve(system, 16).network_counts == {}


def test_bound_never_above_the_program():
    """The candidate's cost bound counts the networks at the baseline file system: a lower bound."""
    from designer.optimize.workspace import Workspace  # noqa: F401 - the bound's home
    system = _system(COMBOS[0], nw.Networks(), 1.25e9)
    for nodes in (1, 31, 127, 300):
        s = topology.summarize(pricing.fabric_request(system.candidate, CATALOG, nodes, FACILITY))
        units = network_costs.whole_units(ownership.storage_units_needed(system.costs, nodes, {}))
        net = network_costs.closed_form_terms(system.costs.networks, ECON, nodes=nodes, storage_units=units,
                                              compute_switches=s.leaves + s.spines + s.cores)
        sol = _solve(system, nodes)
        program = network_costs.network_terms(system.costs.networks, ECON, sol.network_counts)
        assert net[0] == pytest.approx(program[0]) and math.isfinite(net[0])
