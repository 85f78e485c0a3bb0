"""The integer program sizes fabrics exactly as the topology's closed form does.

For a pinned node count the program must choose the same leaf, spine and core counts and the
same link counts as :func:`designer.topology.summarize`: the program prices the fabric through
its own port constraints, and this is what proves they describe the same fabric.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from designer import topology
from designer.catalog import load_builtin
from designer.optimize import pricing
from designer.optimize.candidates import Candidate
from designer.optimize.milp import solve_problem
from designer.optimize.problem import Economics, Limits, OnPremSystem, Option, Problem
from designer.spec.choices import Deployment

CATALOG = load_builtin()
FACILITY = CATALOG.facilities["default"]
ECON = Economics(horizon_s=3 * 365 * 86400.0, pue=1.3, electricity_usd_per_j=0.08 / 3.6e6,
                 installation_fraction=0.05, maintenance_fraction_per_year=0.1)

# (server, fabric, switch) combinations of the built-in catalog with different radices and rails.
COMBOS = [
    ("dgx-h100", "infiniband", "nvidia-qm9700"),  # 64 ports, twin-port cages, 8 rails
    ("dgx-a100-80g", "infiniband", "nvidia-qm8700"),  # 40 ports, 8 rails
    ("hgx-h100-400gbe", "roce", "nvidia-sn5600"),  # 800G ports broken out to 128 x 400G
]
TOPOLOGIES = ["single_switch", "fat_tree", "rail_optimized", "rail_only"]


def _system(server: str, fabric: str, switch: str, topo: str, ratio: float = 1.0) -> OnPremSystem:
    cand = Candidate(Deployment.ON_PREM, server, CATALOG.servers[server].gpu, CATALOG.servers[server].gpus,
                     fabric, topo, switch, ratio)
    shape = pricing.fabric_shape(cand, CATALOG, FACILITY)
    return OnPremSystem(cand, shape, pricing.unit_costs(cand, CATALOG, FACILITY, 8))


def _solve_pinned(system: OnPremSystem, nodes: int):
    gpn = system.candidate.gpus_per_node
    problem = Problem(
        workloads=("w",), deadlines_s={"w": 1e9}, tokens={"w": 1e12}, onprem=(system,), cloud=(),
        options={("w", system.key): (Option(gpus=gpn, time_s=1e6, utilization=0.9, index=0),)},
        economics=ECON, limits=Limits(), fixed_nodes=nodes,
    )
    return solve_problem(problem)


def _expected(system: OnPremSystem, nodes: int) -> topology.FabricSummary:
    return topology.summarize(pricing.fabric_request(system.candidate, CATALOG, nodes, FACILITY))


def _check(system: OnPremSystem, nodes: int) -> None:
    sol = _solve_pinned(system, nodes)
    s = _expected(system, nodes)
    got = (sol.counts["leaf"], sol.counts["spine"], sol.counts["core"], sol.counts["leaf_spine_links"])
    assert got == (s.leaves, s.spines, s.cores, s.leaf_spine_links), (system.key, nodes, s.tiers)
    assert sol.counts["tiers"] == s.tiers
    if s.tiers == 3 and s.pods == 1 or s.tiers == 3 and s.leaves % (s.leaves // s.pods or 1) == 0:
        assert sol.counts["spine_core_links"] >= s.spine_core_links


@pytest.mark.parametrize("server,fabric,switch", COMBOS)
@pytest.mark.parametrize("topo", TOPOLOGIES)
def test_small_and_published_sizes_match_the_closed_form(server, fabric, switch, topo):
    system = _system(server, fabric, switch, topo)
    for nodes in (1, 2, 3, 5, 8, 16, 31, 32, 33, 64, 95, 127, 128, 256):
        if nodes <= system.shape.max_nodes:
            _check(system, nodes)


def test_superpod_sizes_reproduce_table_3_and_4():
    # NVIDIA RA-11333-001 Table 3/4 (network.md 1.1): 2-tier and 3-tier rail-optimized QM9700 fabrics.
    system = _system("dgx-h100", "infiniband", "nvidia-qm9700", "rail_optimized")
    for nodes, leaves, spines, cores in ((32, 8, 4, 0), (96, 24, 16, 0), (128, 32, 16, 0), (256, 64, 32, 0),
                                         (512, 128, 128, 64), (1024, 256, 256, 128)):
        sol = _solve_pinned(system, nodes)
        assert (sol.counts["leaf"], sol.counts["spine"], sol.counts["core"]) == (leaves, spines, cores)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(combo=st.sampled_from(COMBOS), topo=st.sampled_from(TOPOLOGIES[1:]), ratio=st.sampled_from([1.0, 2.0, 3.0]),
       frac=st.floats(0.0, 1.0))
def test_any_two_tier_size_matches_the_closed_form(combo, topo, ratio, frac):
    if topo == "rail_only":
        ratio = 1.0
    system = _system(*combo, topo, ratio)
    nodes = max(1, int(frac * system.shape.max_nodes_2tier))
    _check(system, nodes)
