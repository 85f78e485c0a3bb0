"""The fabric manager on the optimizer's path (designer.optimize.pricing): an InfiniBand compute
fabric reserves the UFM's leaf ports as RA-11333 does, Ethernet fabrics reserve none."""

from __future__ import annotations

import pytest

from designer.catalog import load_builtin
from designer.optimize import pricing
from designer.optimize.candidates import Candidate
from designer.spec.choices import Deployment
from designer.topology import capacity
from designer.topology.bomcheck import check_bom

CAT = load_builtin()
FACILITY = CAT.facilities["default"]
SUPERPOD = Candidate(Deployment.ON_PREM, "dgx-h100", "h100-sxm", 8, "infiniband", "rail_optimized", "nvidia-qm9700",
                     1.0)


def _qty(lines, category, role, sku=None):
    return sum(l.quantity for l in lines if l.category == category and l.role == role and (sku is None or l.sku == sku))


def test_the_127_node_superpod_gives_tables_4_7_and_8_from_the_optimizer_path():
    lines, summary = pricing.onprem_bom(SUPERPOD, CAT, FACILITY, 127, 0.0)
    # Table 4: 32 leaf, 16 spine; compute + UFM links 8 x 127 + 4 = 1,020; spine-leaf 1,024.
    assert (_qty(lines, "switch", "leaf"), _qty(lines, "switch", "spine")) == (32, 16)
    assert _qty(lines, "cable", "leaf-spine") == 1024
    # Table 8: 2,040 NDR cables DGX-leaf and leaf-spine, 1,536 switch and 508 system OSFP optics;
    # the 4 UFM links as 2 NDR200 cables (1:2 splitters from 2 NDR leaf ports) to 4 UFM system
    # transceivers.
    dgx = sum(l.quantity for l in lines if l.role == "node-leaf" and "osfp-800g-2xsr4@dgx-h100" in l.ends)
    assert dgx == 1016
    assert dgx + _qty(lines, "cable", "leaf-spine") == 2040
    assert _qty(lines, "transceiver", "switch-side") == 1536 and _qty(lines, "transceiver", "node-side") == 508
    assert _qty(lines, "transceiver", "fabric-manager") == 4
    ufm_cords = [l for l in lines if l.category == "cable" and any("@nvidia-ufm-appliance-3.1" in e for e in l.ends)]
    assert [(l.sku, l.quantity, l.lanes, l.lane_gbps) for l in ufm_cords] == [("mpo-splitter-mm-2x200g", 2.0, 4, 100.0)]
    assert summary.reserved_links == 2 and dgx + 2 * 2 == 1020  # 4 NDR200 ports on 2 NDR leaf ports
    # Table 7: 4 UFM appliances, unpriced (never $0).
    ufm = [l for l in lines if l.category == "appliance"]
    assert [(l.sku, l.quantity, l.unit_price_usd) for l in ufm] == [("nvidia-ufm-appliance-3.1", 4.0, None)]
    optic = next(l for l in lines if l.role == "fabric-manager" and l.category == "transceiver")
    assert optic.plugs_into == "nvidia-ufm-appliance-3.1"
    found = check_bom(lines, CAT)
    assert found.mismatches == () and found.unstated == 0
    assert pricing.manager_note(SUPERPOD, CAT, summary) is None


def test_full_scalable_units_leave_no_leaf_port_and_say_so():
    # Table 3's 4-SU row is 128 nodes and 1,024 node-leaf cables: no UFM leaf port is free.
    lines, summary = pricing.onprem_bom(SUPERPOD, CAT, FACILITY, 128, 0.0)
    assert summary.reserved_links == 0 and _qty(lines, "cable", "node-leaf") == 1024
    assert _qty(lines, "appliance", "fabric-manager") == 4
    note = pricing.manager_note(SUPERPOD, CAT, summary)
    assert note is not None and "no free compute leaf port" in note and "RA-11333 Table 4" in note


def test_ethernet_fabrics_reserve_nothing():
    roce = Candidate(Deployment.ON_PREM, "dgx-h100", "h100-sxm", 8, "roce", "rail_optimized", "nvidia-sn5600", 1.0)
    assert pricing.fabric_manager(roce, CAT) is None and pricing.manager_ports(roce, CAT) == 0
    lines, summary = pricing.onprem_bom(roce, CAT, FACILITY, 127, 0.0)
    assert summary.reserved_links == 0 and not [l for l in lines if l.category == "appliance"]
    assert pricing.manager_ports(SUPERPOD, CAT) == 2  # NDR leaf ports for the 4 NDR200 UFM ports


def test_the_optimizer_limits_stay_those_of_the_bare_fabric():
    shape = pricing.fabric_shape(SUPERPOD, CAT, FACILITY)
    assert (shape.max_nodes_2tier, shape.max_nodes) == (256, 8192)
    # An explicit reservation lowers every limit to the nodes that leave the ports free.
    reserved = capacity(pricing.fabric_request(SUPERPOD, CAT, 1, FACILITY, reserved_leaf_ports=4))
    assert (reserved.max_nodes_2tier, reserved.max_nodes) == (255, 8191)


def test_the_per_token_charge_sees_the_fabric_managers_appliances():
    """min_cost_per_token's first phase (what a GPU-second costs, the network included) charges a
    built InfiniBand system its UFM appliances once: bought, powered, housed, supported and resold
    as the full cost counts them (ownership.fixed_cost_usd); an Ethernet system has none."""
    from dataclasses import replace

    from designer.optimize import ownership
    from designer.optimize.milp import solve_problem
    from designer.optimize.problem import Economics, Limits, OnPremSystem, Option, Problem

    econ = Economics(horizon_s=3 * 365 * 86400.0, pue=1.3, electricity_usd_per_j=0.08 / 3.6e6,
                     installation_fraction=0.05, maintenance_fraction_per_year=0.1)
    shape = pricing.fabric_shape(SUPERPOD, CAT, FACILITY)
    ib = OnPremSystem(SUPERPOD, shape, pricing.unit_costs(SUPERPOD, CAT, FACILITY, 16))
    assert (ib.costs.fixed_w, ib.costs.fixed_ru) == (4 * 600.0, 4)
    fixed = ownership.fixed_cost_usd(ib, econ)
    kw = dict(nodes=16.0, switches=12.0, ls_links=256.0, sx_links=0.0, racks=6.0, storage_units=0.0)
    with_it = ownership.onprem_terms(ib.costs, econ, 8, 8, built=1.0, **kw)
    without = ownership.onprem_terms(ib.costs, econ, 8, 8, built=0.0, **kw)
    assert fixed > 0 and fixed == pytest.approx(with_it.capex_total + with_it.opex_total
                                                - without.capex_total - without.opex_total)
    bare = replace(ib, costs=replace(ib.costs, fixed_usd=0.0, fixed_w=0.0, fixed_ru=0))
    assert ownership.fixed_cost_usd(bare, econ) == 0.0

    def charge(system):
        problem = Problem(workloads=("w",), deadlines_s={"w": 1e9}, tokens={"w": 1e12}, onprem=(system,), cloud=(),
                          options={("w", system.key): (Option(gpus=128, time_s=1e6, utilization=0.9, index=0),)},
                          economics=econ, limits=Limits(), objective="min_cost_per_token")
        return solve_problem(problem).objective

    assert charge(ib) - charge(bare) == pytest.approx(fixed, rel=1e-6)
