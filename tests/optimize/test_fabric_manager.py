"""The fabric manager on the optimizer's path (designer.optimize.pricing): an InfiniBand compute
fabric reserves the UFM's leaf ports as RA-11333 does, Ethernet fabrics reserve none."""

from __future__ import annotations

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
    # Table 4: 32 leaf, 16 spine; compute + UFM cables 8 x 127 + 4 = 1,020; spine-leaf 1,024.
    assert (_qty(lines, "switch", "leaf"), _qty(lines, "switch", "spine")) == (32, 16)
    assert summary.reserved_links == 4
    assert _qty(lines, "cable", "node-leaf") == 1020 and _qty(lines, "cable", "leaf-spine") == 1024
    # Table 8: 2,040 NDR cables DGX-leaf and leaf-spine, 1,536 switch and 508 system OSFP optics,
    # 4 UFM system transceivers.
    dgx = sum(l.quantity for l in lines if l.role == "node-leaf" and "osfp-800g-2xsr4@dgx-h100" in l.ends)
    assert dgx == 1016
    assert dgx + _qty(lines, "cable", "leaf-spine") == 2040
    assert _qty(lines, "transceiver", "switch-side") == 1536 and _qty(lines, "transceiver", "node-side") == 508
    assert _qty(lines, "transceiver", "fabric-manager") == 4
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
    assert pricing.manager_ports(SUPERPOD, CAT) == 4


def test_the_optimizer_limits_stay_those_of_the_bare_fabric():
    shape = pricing.fabric_shape(SUPERPOD, CAT, FACILITY)
    assert (shape.max_nodes_2tier, shape.max_nodes) == (256, 8192)
    # An explicit reservation lowers every limit to the nodes that leave the ports free.
    reserved = capacity(pricing.fabric_request(SUPERPOD, CAT, 1, FACILITY, reserved_leaf_ports=4))
    assert (reserved.max_nodes_2tier, reserved.max_nodes) == (255, 8191)
