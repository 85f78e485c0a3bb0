"""A design moved from one candidate of a server to another (designer.optimize.transfer).

Every design on member B of n nodes and A file-system units costs at least P0 - fabric_gap, P0
the bound of the reference R's program without its management networks: so the cost of the
design moved to R without them, less B's own, never exceeds the gap, at any A at or above the
baseline need. The management networks are where that needs care: the out-of-band network
manages the compute and storage switches, so the two members' in-band and out-of-band
counts differ by amounts that change with A; the old transfer read both at the baseline A.
"""

from __future__ import annotations

import math

from designer import topology
from designer.optimize import networks as network_costs
from designer.optimize import ownership, pricing, transfer
from designer.optimize.workspace import Workspace
from designer.planner.compile import compile_task
from designer.planner.inputs import load_inputs
from designer.spec.choices import Deployment

_SPEC = """\
version: 1
name: transfer
horizon: 3 years
workloads:
  - {name: w0, model: {preset: llama3-8b}, tokens: 400B, global_batch: 512, deadline: 30 days}
constraints:
  min_utilization: 0.4
  deployments: [on_prem]
  fabrics: [infiniband, roce]
  topologies: [single_switch, fat_tree, rail_optimized]
  gpus: [h100-sxm]
  max_nodes: 64
"""


def _workspace(tmp_path) -> Workspace:
    path = tmp_path / "spec.yaml"
    path.write_text(_SPEC)
    spec, catalog = load_inputs(path)
    return Workspace(compile_task(spec, catalog))


_SUMMARY: dict = {}


def _cost(ws: Workspace, key: str, nodes: int, units: int, management: bool = True) -> float:
    """What the program prices ``nodes`` nodes of ``key`` with ``units`` file-system units at
    (the closed forms; constraint 11's racks), less the servers alone."""
    system = ws.system(key)
    if not management:
        system = transfer.without_management(system)
    if (key, nodes) not in _SUMMARY:
        _SUMMARY[key, nodes] = topology.summarize(pricing.fabric_request(system.candidate, ws.catalog, nodes,
                                                                         ws.facility))
    s = _SUMMARY[key, nodes]
    uc = system.costs
    switches = s.leaves + s.spines + s.cores
    racks = math.ceil(nodes / uc.servers_per_rack + (switches * uc.switch_ru + uc.fixed_ru) / uc.rack_units - 1e-9)
    net = None if uc.networks is None else network_costs.closed_form_terms(
        uc.networks, ws.economics, nodes=nodes, storage_units=units, compute_switches=switches)
    terms = ownership.onprem_terms(uc, ws.economics, system.shape.node_ports, system.candidate.gpus_per_node,
                                   nodes=nodes, switches=switches, ls_links=s.leaf_spine_links,
                                   sx_links=s.spine_core_links if s.tiers == 3 else 0, racks=racks,
                                   storage_units=units, networks=net)
    return float(terms.capex_total + terms.opex_total) - transfer.servers_cost(ws, key, nodes)


def test_a_design_moved_to_the_reference_costs_no_more_than_the_gap_at_any_file_system(tmp_path):
    ws = _workspace(tmp_path)
    onprem = sorted(c.key for c in ws.candidates if c.deployment is Deployment.ON_PREM and ws.system(c.key))
    members = [k for k in onprem if ws.by_key[k].server == ws.by_key[onprem[0]].server]
    assert len(members) >= 10
    base = {n: network_costs.whole_units(ownership.storage_units_needed(ws.system(members[0]).costs, n, {}))
            for n in range(1, 65)}
    checked = shifted = pairs = 0
    for ref in members[::4]:
        for key in members:
            gap = transfer.fabric_gap(ws, ref, key, math.inf)
            if ws.max_nodes(ws.by_key[key]) > ws.max_nodes(ws.by_key[ref]):
                assert gap is None  # sizes the reference cannot build: no transfer
                continue
            assert gap is not None
            pairs += 1
            for n in (1, 5, 16, 47):
                if n > ws.max_nodes(ws.by_key[key]):
                    continue
                at_base = _cost(ws, ref, n, base[n]) - _cost(ws, key, n, base[n])
                # up to many storage switches: the out-of-band ports then bind before its density
                for units in range(base[n], base[n] + 160, 3):
                    moved = _cost(ws, ref, n, units, management=False) - _cost(ws, key, n, units)
                    assert moved <= gap + 1e-6, (ref, key, n, units, moved, gap)
                    checked += 1
                    # The whole difference, management networks included, is not the one at the
                    # baseline file system: the reason the transfer leaves them out of R.
                    shifted += _cost(ws, ref, n, units) - _cost(ws, key, n, units) > at_base + 1.0
    assert pairs > 20 and checked > 1000
    assert shifted > 0


def test_the_reference_without_management_networks_keeps_its_storage_fabric(tmp_path):
    ws = _workspace(tmp_path)
    key = next(c.key for c in ws.candidates if c.deployment is Deployment.ON_PREM and ws.system(c.key))
    system = ws.system(key)
    bare = transfer.without_management(system)
    plan = bare.costs.networks
    assert plan.parts.storage_switch == system.costs.networks.parts.storage_switch is not None
    assert plan.parts.inband_switch is None and plan.parts.oob_switch is None
    assert {i.role for i in plan.items} == {"storage"}
    # U(n) is the full cost less exactly the in-band and out-of-band networks at the baseline
    n = 16
    units = network_costs.whole_units(ownership.storage_units_needed(system.costs, n, {}))
    assert transfer.fabric_above(ws, key, n) == _cost(ws, key, n, units, management=False)
    assert _cost(ws, key, n, units) - _cost(ws, key, n, units, management=False) > 10_000
