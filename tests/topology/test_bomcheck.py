"""What fits where on BOM lines, and `bom --check` (designer.topology.bomcheck): the fabric BOM of
real built-in parts passes; each kind of hand edit is caught at its line and key."""

from __future__ import annotations

import dataclasses

import pytest

from designer.catalog import load_builtin
from designer.catalog.types import Protocol
from designer.design.bom import BomLine
from designer.design.bomjson import line_to_json
from designer.topology import fabric_bom, request_for, server_port, summarize
from designer.topology.bomcheck import check_bom

CAT = load_builtin()


def _design_lines(server: str, switch: str, topology: str, nodes: int, protocol=Protocol.INFINIBAND,
                  **kw) -> tuple[BomLine, ...]:
    s, sw = CAT.servers[server], CAT.switches[switch]
    nic = CAT.nics[s.nic]
    summary = summarize(request_for(s, nic, sw, topology, nodes, **kw))
    devices = (BomLine("server", s.name, s.description, "compute", float(nodes), s.price_usd, s.power_w, "t"),)
    return devices + fabric_bom(summary, sw, CAT, server_port(s, nic, protocol))


SUPERPOD = _design_lines("dgx-h100", "nvidia-qm9700", "rail_optimized", 127, reserved_leaf_ports=4)
ONE_SWITCH = _design_lines("dgx-a100-80g", "nvidia-qm8700", "single_switch", 4)


def _index(lines, category, role):
    return next(i for i, l in enumerate(lines) if l.category == category and l.role == role)


def _edit(lines, i, **changes):
    return lines[:i] + (dataclasses.replace(lines[i], **changes),) + lines[i + 1:]


def test_the_superpod_lines_say_what_fits_where_and_pass():
    by = {(l.category, l.role): l for l in SUPERPOD}
    node, switch = by["transceiver", "node-side"], by["transceiver", "switch-side"]
    assert (node.sku, node.connector, node.protocol, node.lanes, node.lane_gbps, node.media, node.plugs_into) == (
        "osfp-800g-2xsr4", "osfp", "infiniband", 8, 100.0, "multimode", "dgx-h100")
    assert switch.plugs_into == "nvidia-qm9700" and switch.quantity == 1536 and node.quantity == 508
    cord = by["cable", "node-leaf"]
    assert (cord.connector, cord.lanes, cord.media, cord.ends) == ("mpo-12", 4, "multimode",
                                                                  ("osfp-800g-2xsr4@dgx-h100",
                                                                   "osfp-800g-2xsr4@nvidia-qm9700"))
    found = check_bom(SUPERPOD, CAT)
    assert (found.checked, found.unstated, found.mismatches) == (4, 0, ())


def test_a_dac_names_both_devices_and_passes():
    dac = ONE_SWITCH[_index(ONE_SWITCH, "cable", "node-leaf")]
    assert dac.media == "dac" and dac.ends == ("connectx6-hdr-200g", "nvidia-qm8700")
    # The NIC is a line of the design where the server's NIC cage is the adapter's own.
    nic = BomLine("nic", "connectx6-hdr-200g", "ConnectX-6", "compute", 32.0, 0.0, 0.0, "t")
    assert check_bom(ONE_SWITCH + (nic,), CAT).mismatches == ()
    j = line_to_json(dac)
    assert {k: j[k] for k in ("connector", "protocol", "lanes", "lane_gbps", "media", "ends")} == {
        "connector": "qsfp56", "protocol": "infiniband", "lanes": 4, "lane_gbps": 50, "media": "dac",
        "ends": ["connectx6-hdr-200g", "nvidia-qm8700"]}
    assert "plugs_into" not in j


def test_each_hand_edit_is_caught_at_its_line_and_key():
    node = _index(SUPERPOD, "transceiver", "node-side")
    switch = _index(SUPERPOD, "transceiver", "switch-side")
    cord = _index(SUPERPOD, "cable", "node-leaf")
    cases = [
        # A QSFP112 optic stated truthfully still does not go into the DGX's OSFP cage.
        (_edit(SUPERPOD, node, sku="qsfp112-400g-sr4", connector="qsfp112", lanes=4),
         (node, "plugs_into", "a QSFP112 end does not go into dgx-h100's OSFP cage")),
        (_edit(SUPERPOD, node, lanes=4), (node, "lanes", "osfp-800g-2xsr4 has lanes 8, the line says 4")),
        (_edit(SUPERPOD, switch, protocol="ethernet"), (switch, "plugs_into", "nvidia-qm9700 does not speak ethernet")),
        (_edit(SUPERPOD, switch, plugs_into="nvidia-qm8700"),
         (switch, "plugs_into", "nvidia-qm8700 is not a server, NIC, switch or appliance line of this design")),
        (_edit(SUPERPOD, cord, ends=("dgx-h100", "osfp-800g-2xsr4")),
         (cord, "ends", "dgx-h100 is not a transceiver line of this design (a fiber cord joins two optics)")),
        (_edit(SUPERPOD, cord, ends=("osfp-800g-2xsr4",)), (cord, "ends", "a cable has two ends; the line names 1")),
        # A cord's end names the device its optic is in: an optic of that SKU elsewhere is not it.
        (_edit(SUPERPOD, cord, ends=("osfp-800g-2xsr4@dgx-h100", "osfp-800g-2xsr4@nvidia-qm8700")),
         (cord, "ends", "osfp-800g-2xsr4 in nvidia-qm8700 is not a transceiver line of this design (a fiber cord "
                        "joins two optics)")),
        (_edit(SUPERPOD, cord, sku="no-such-cord"), (cord, "sku", "no-such-cord is not a cable in the catalogs")),
    ]
    for lines, (index, key, message) in cases:
        got = [(m.index, m.key, m.message) for m in check_bom(lines, CAT).mismatches]
        assert (index, key, message) in got, got


def test_a_dac_into_the_wrong_device_is_caught():
    i = _index(ONE_SWITCH, "cable", "node-leaf")
    lines = _edit(ONE_SWITCH, i, ends=("dgx-a100-80g", "dgx-a100-80g")) + (
        BomLine("switch", "nvidia-qm9700", "QM9700", "leaf", 1.0, 0.0, 0.0, "t"),)
    assert check_bom(lines, CAT).mismatches == ()  # the A100's QSFP56 cages take the DAC at both ends
    lines = _edit(ONE_SWITCH, i, ends=("dgx-a100-80g", "nvidia-qm9700")) + (
        BomLine("switch", "nvidia-qm9700", "QM9700", "leaf", 1.0, 0.0, 0.0, "t"),)
    (m,) = check_bom(lines, CAT).mismatches
    assert (m.index, m.key, m.message) == (i, "ends", "a QSFP56 end does not go into nvidia-qm9700's OSFP cage")


def test_lines_that_state_nothing_are_counted_not_checked():
    bare = BomLine("cable", "cat6-1g-rj45", "Cat6", "oob", 10.0, 5.0, 0.0, "t")
    found = check_bom(SUPERPOD + (bare,), CAT)
    assert (found.checked, found.unstated, found.mismatches) == (4, 1, ())
    j = line_to_json(bare)
    assert j["connector"] is None and j["ends"] is None


@pytest.mark.parametrize("server,switch,topology,nodes", [
    ("dgx-b200", "nvidia-qm9700", "rail_optimized", 127),
    ("dgx-b300", "nvidia-q3400", "rail_optimized", 576),
    ("dgx-a100-80g", "nvidia-qm8700", "fat_tree", 140),
])
def test_reference_fabrics_pass(server, switch, topology, nodes):
    lines = _design_lines(server, switch, topology, nodes)
    found = check_bom(lines, CAT)
    assert found.checked >= 2 and found.mismatches == ()
