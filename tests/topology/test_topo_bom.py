"""Network BOM lines: switches by role, transceivers by side, cables by tier, cheapest fitting part."""

import pytest

from designer.catalog.types import CloudInstance, FabricKind
from designer.design.bom import total_capex
from designer.errors import CatalogError
from designer.topology import fabric_bom, request_for, request_for_cloud, summarize
from topo_factories import TEST, catalog, cx7, dgx_h100, dgx_node, dgx_request, qm9700


def lines_by_key(lines):
    return {(l.category, l.role, l.sku): l.quantity for l in lines}


def test_superpod_4_su_bom():
    """RA-11333-001 Tables 7 and 8: 32 leaf + 16 spine QM9700, 1536 switch and 508 DGX twin-port
    multimode OSFP, 2040 NDR cables plus the UFM links."""
    req = request_for(dgx_h100(), cx7(), qm9700(), "rail_optimized", 127, reserved_leaf_ports=4)
    lines = fabric_bom(summarize(req), qm9700(), catalog(), dgx_node())
    assert lines_by_key(lines) == {
        ("switch", "leaf", "qm9700"): 32,
        ("switch", "spine", "qm9700"): 16,
        ("transceiver", "node-side", "osfp-2x400g-sr8"): 508,
        ("transceiver", "switch-side", "osfp-2x400g-sr8"): 1536,
        ("cable", "leaf-spine", "fiber-mm-400g"): 1024,
        ("cable", "node-leaf", "fiber-mm-400g"): 1016 + 4,
    }
    expected = 48 * 36000 + (1536 + 508) * 1000 + 2044 * 100
    assert total_capex(lines) == pytest.approx(expected)
    assert [l.category for l in lines] == ["switch", "switch", "transceiver", "transceiver", "cable", "cable"]


def test_long_runs_take_single_mode_optics():
    """One server per rack spreads 4,096 DGX over a hall whose runs pass 50 m of multimode reach."""
    s = summarize(dgx_request("rail_optimized", 4096, servers_per_rack=1))
    assert s.tier_links[1].length_m > 50
    got = lines_by_key(fabric_bom(s, qm9700(), catalog(), dgx_node()))
    assert got[("cable", "leaf-spine", "fiber-sm-400g")] == 32768
    assert got[("cable", "spine-core", "fiber-sm-400g")] == 32768
    assert got[("cable", "node-leaf", "fiber-mm-400g")] == 32768
    side = {k: v for k, v in got.items() if k[:2] == ("transceiver", "switch-side")}
    # Leaf downlink cages multimode, every other cage single-mode.
    # 1,024 leaves (16 cages each way), 1,024 spines and 512 cores (32 cages each).
    assert (s.leaves, s.spines, s.cores) == (1024, 1024, 512)
    assert side == {("transceiver", "switch-side", "osfp-2x400g-sr8"): 1024 * 16,
                    ("transceiver", "switch-side", "osfp-2x400g-dr8"): 1024 * 16 + 1024 * 32 + 512 * 32}
    assert sum(side.values()) == s.switch_transceivers


def test_top_of_rack_fat_tree_uses_twin_dac_per_cage():
    """4 DGX per rack under their own leaf: in-rack copper, one 2x400G DAC per cage pair."""
    s = summarize(dgx_request("fat_tree", 64))
    got = lines_by_key(fabric_bom(s, qm9700(), catalog(), dgx_node()))
    assert got[("cable", "node-leaf", "dac-2x400g")] == 512 / 2
    assert ("transceiver", "node-side", "osfp-2x400g-sr8") not in got
    assert got[("transceiver", "switch-side", "osfp-2x400g-sr8")] == s.switch_transceivers == 16 * 16 + 8 * 32


def test_copper_falls_back_to_aoc():
    s = summarize(dgx_request("fat_tree", 64))
    got = lines_by_key(fabric_bom(s, qm9700(), catalog(drop=("dac-400g", "dac-2x400g")), dgx_node()))
    assert got[("cable", "node-leaf", "aoc-2x400g")] == 512 / 2


def test_single_switch_is_a_leaf_line():
    s = summarize(dgx_request("single_switch", 4))
    got = lines_by_key(fabric_bom(s, qm9700(), catalog(), dgx_node()))
    assert got[("switch", "leaf", "qm9700")] == 1
    assert got[("cable", "node-leaf", "dac-2x400g")] == 16


def test_missing_parts_raise_catalog_error():
    s = summarize(dgx_request("rail_optimized", 64))
    with pytest.raises(CatalogError, match="no link from dgx-h100 OSFP cage .* no catalog cable or transceiver"):
        fabric_bom(s, qm9700(), catalog(drop=("osfp-2x400g-sr8", "osfp-2x400g-sr8-dear", "osfp-2x400g-dr8")), dgx_node())
    with pytest.raises(CatalogError, match="4 x 100G infiniband between those cages"):
        fabric_bom(s, qm9700(), catalog(drop=("fiber-mm-400g", "fiber-sm-400g")), dgx_node())
    with pytest.raises(CatalogError, match="needs a switch"):
        fabric_bom(s, None, catalog())


def test_cloud_has_no_network_lines():
    p5 = CloudInstance("aws-p5.48xlarge", "p5", "aws", "h100", 8, FabricKind.EFA, 3200e9 / 8, 1.0,
                       None, None, "us-east-1", TEST)
    s = summarize(request_for_cloud(p5, 16))
    assert s.injection_Bps == pytest.approx(50e9)
    assert fabric_bom(s, None, catalog()) == ()
