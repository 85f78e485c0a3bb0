"""Storage, in-band and out-of-band networks: RA-11333's 4-SU counts, closed-form invariants, BOM lines."""

import math

import pytest
from hypothesis import given, strategies as st

from designer.catalog import load
from designer.catalog.types import Protocol
from designer.errors import CatalogError
from designer.topology import network_bom as nb
from designer.topology import networks as nw
from designer.topology.ports import fits

CATALOG = load.load_builtin()
DDN = CATALOG.storage["ddn-ai400x2t"]


def parts(server="dgx-h100", networks=nw.Networks(), storage=DDN, catalog=CATALOG):
    return nw.network_parts(catalog.servers[server], catalog, storage, networks)


def sizes_by_role(sizes):
    return {s.role: s for s in sizes}


def test_ra_11333_four_su_pod():
    """RA-11333-001 Table 7: 16 storage (QM9700), 8 in-band (SN4600C) and 8 out-of-band (SN2201)
    switches for 127 DGX H100 with 48 compute switches. Storage: Table 8's 48 2x200G storage
    cables are 96 appliance ports, 12 AI400X2T of 8 ports. In-band, Table 8: 24 leaf-core links,
    6 peer links, 254 DGX links and 16 out-of-band uplinks."""
    p = parts()
    got = sizes_by_role(nw.size_networks(p, 127, 12, 48))
    assert (p.storage_switch.name, p.inband_switch.name, p.oob_switch.name) == (
        "nvidia-qm9700", "nvidia-sn4600c", "nvidia-sn2201")
    assert got["storage"].switches == 16
    assert (got["storage"].leaves, got["storage"].spines) == (8 + 3, 5)
    assert got["inband"].switches == 8 and (got["inband"].leaves, got["inband"].spines) == (6, 2)
    assert (got["inband"].uplinks, got["inband"].isl, got["inband"].node_links) == (24, 6, 254)
    assert got["oob"].switches == 8 and got["oob"].uplinks == 16
    # Every BMC and every switch of the four networks has an out-of-band port.
    assert got["oob"].node_links + got["oob"].device_links == 127 + 48 + 16 + 8


def _total(lines, category=None):
    """Quantities summed by (role, SKU) for one category (lines of one part differ by their fit),
    else by (category, SKU, role)."""
    out = {}
    for l in lines:
        if category is None or l.category == category:
            key = (l.role, l.sku) if category else (l.category, l.sku, l.role)
            out[key] = out.get(key, 0) + l.quantity
    return out


def test_ra_bom_lines_have_the_network_roles():
    p = parts()
    lines = nb.network_bom(p, nw.size_networks(p, 127, 12, 48))
    assert {l.role for l in lines} == {"storage", "inband", "oob"}
    switches = _total(lines, "switch")
    assert switches == {("storage", "nvidia-qm9700"): 16, ("inband", "nvidia-sn4600c"): 8,
                        ("oob", "nvidia-sn2201"): 8}
    cables = _total(lines, "cable")
    # 254 DGX + 24 leaf-spine AOC (Table 8: 254 DGX AOC, 24 leaf-core AOC); 6 copper peer links.
    assert cables[("inband", "aoc-100g-qsfp28")] == 278
    assert cables[("inband", "dac-100g-qsfp28")] == 6
    assert cables[("oob", "cat6-1g-rj45")] == 199
    optics = _total(lines, "transceiver")
    # Table 8: 254 DGX QSFP112 optics and 48 NDR 2x200G splitters to the file system (96 ports);
    # a QSFP112 optic at each server and appliance port, twin-port OSFP in the switch cages.
    assert optics[("storage", "qsfp112-400g-sr4")] == 254 + 96
    assert cables[("storage", "mpo-splitter-mm-2x200g")] == 48
    # switch cages: 127 for the server links, 96 / 4 for the split file-system links, both ends of
    # the 287 leaf-spine links (2 per cage)
    assert optics[("storage", "osfp-800g-2xsr4")] == 127 + 24 + 2 * 144
    assert cables[("storage", "mpo-fiber-400g")] == 254 + 287
    storage_switch = next(l for l in lines if l.role == "storage" and l.category == "switch")
    assert "11 leaves, 5 spines" in storage_switch.description


@pytest.mark.parametrize("flag", ["storage", "inband", "oob"])
def test_turning_a_network_off_removes_exactly_its_lines(flag):
    everything = parts()
    fewer = parts(networks=nw.Networks(**{flag: False}))
    full = nb.network_bom(everything, nw.size_networks(everything, 127, 12, 48))
    cut = nb.network_bom(fewer, nw.size_networks(fewer, 127, 12, 48))
    assert {l.role for l in cut} == {"storage", "inband", "oob"} - {flag}
    kept = _total([l for l in full if l.role != flag])
    got = _total(cut)
    if flag == "storage":
        # the storage switches leave the out-of-band network: 16 fewer management ports
        kept[("cable", "cat6-1g-rj45", "oob")] -= 16
    if flag == "inband":
        # the out-of-band network loses its uplinks and the in-band switches' ports
        del kept[("cable", "aoc-100g-qsfp28", "oob")]
        kept[("cable", "cat6-1g-rj45", "oob")] -= 8
    # without out-of-band uplinks the in-band network still needs its 3 leaf pairs: same lines
    assert got == kept


def test_no_file_system_no_storage_fabric():
    p = parts(storage=None)
    assert p.storage_switch is None
    assert [s.role for s in nw.size_networks(p, 127, 0, 48)] == ["inband", "oob"]


def test_each_server_gets_its_ra_storage_protocol():
    """RA-11333: DGX H100 storage on InfiniBand; the B200 RA: Ethernet (SN5600) over BlueField-3."""
    assert CATALOG.servers["dgx-h100"].storage_protocol is Protocol.INFINIBAND
    b200 = parts("dgx-b200")
    assert b200.storage_switch.name == "nvidia-sn5600" and b200.storage_switch.protocol is Protocol.ETHERNET
    assert b200.storage_k == 128  # 400GbE broken out of the 64 800G cages
    assert b200.inband_switch.name == "nvidia-sn5600"  # BlueField-3 runs no 100 GbE
    h100 = parts()
    assert (h100.storage_ports, h100.inband_ports, h100.bmc_ports) == (2, 2, 1)
    assert h100.storage_k == 64  # one NDR200 DGX link per 400G port (RA-11333 Table 8)


def test_rack_scale_bmcs_count_every_tray():
    p = parts("gb200-nvl72")
    assert p.bmc_ports == 18 + 9
    assert p.storage_ports == 18


def test_a_catalog_without_an_oob_switch_is_refused_by_name():
    from dataclasses import replace
    from types import MappingProxyType
    ethernet = {n: s for n, s in CATALOG.switches.items() if s.protocol is not Protocol.ETHERNET}
    cat = replace(CATALOG, switches=MappingProxyType(ethernet))
    with pytest.raises(CatalogError, match="out-of-band|oob|inband"):
        parts(catalog=cat, networks=nw.Networks(storage=False))
    assert parts(catalog=cat, networks=nw.Networks(storage=False, inband=False, oob=False)).oob_switch is None


@given(st.integers(0, 5000), st.integers(0, 400), st.sampled_from([40, 64, 128, 48]))
def test_storage_fabric_holds_every_port(node_ports, appliance_ports, k):
    s = nw.storage_size(node_ports, appliance_ports, k)
    total = node_ports + appliance_ports
    if total == 0:
        assert s.switches == 0
        return
    assert s.switches * k >= total + 2 * s.uplinks  # every port end has a switch port
    assert s.spines * k >= s.uplinks
    if s.spines:
        # server leaves near 4:3 and storage leaves 1:1
        assert s.uplinks == math.ceil(3 * node_ports / 4) + appliance_ports
        assert total > k
    else:
        assert s.switches == 1 and total <= k


@given(st.integers(1, 3000), st.integers(0, 3000))
def test_storage_fabric_grows_with_its_ports(a, b):
    small = nw.storage_size(a, 8, 64)
    big = nw.storage_size(a + b, 8, 64)
    assert big.switches >= small.switches and big.uplinks >= small.uplinks


@given(st.integers(0, 6000), st.integers(0, 200), st.sampled_from([64, 128, 48]))
def test_inband_pairs_hold_every_port(node_ports, other, k):
    s = nw.inband_size(node_ports, other, k)
    ports = node_ports + other
    if ports == 0:
        assert s.switches == 0
        return
    assert s.leaves % 2 == 0 and s.isl == s.leaves  # pairs, 2 peer links each
    free = s.leaves * k - 2 * s.isl - s.uplinks
    assert free >= ports
    assert s.spines * k >= s.uplinks and s.spines % 2 == 0
    assert (s.spines == 0) == (s.leaves == 2)


@given(st.integers(1, 4000), st.integers(0, 2000), st.booleans(), st.sampled_from(["dgx-h100", "dgx-b200", "gb200-nvl72"]))
def test_oob_manages_every_switch(nodes, compute_switches, with_inband, server):
    p = parts(server, networks=nw.Networks(inband=with_inband))
    got = sizes_by_role(nw.size_networks(p, nodes, 4, compute_switches))
    oob = got["oob"]
    managed = compute_switches + got["storage"].switches + (got["inband"].switches if with_inband else 0)
    assert oob.device_links == managed and oob.node_links == p.bmc_ports * nodes
    assert oob.switches * p.oob_k >= oob.node_links + oob.device_links
    assert oob.switches >= math.ceil(oob.node_links / nw.BMC_PER_OOB_SWITCH)
    # a fixed point: the in-band network was sized with the out-of-band uplinks it takes
    if with_inband and p.oob_uplink is not None:
        assert got["inband"].device_links == oob.uplinks == nw.OOB_UPLINKS * oob.switches
    else:
        assert oob.uplinks == 0
    if with_inband:
        assert got["inband"] == nw.inband_size(p.inband_ports * nodes, oob.uplinks, p.inband_k)
    else:
        assert oob.uplinks == 0


SERVERS = sorted(CATALOG.servers)


@pytest.mark.parametrize("server", SERVERS)
def test_every_network_link_fits_both_cages(server):
    """Every link of every network is built end to end: each optic fills a cage of its own form,
    protocol and lane rate, each direct cable's ends fill both cages, both ends run one rate."""
    p = parts(server)
    links = [p.storage_node_link, p.storage_appliance_link, p.storage_uplink, p.inband_node_link,
             p.inband_uplink, p.inband_isl, p.oob_port_link, p.oob_uplink]
    assert p.storage_node_link is not None and p.oob_port_link is not None
    for link in (l for l in links if l is not None):
        assert link.a.protocol is link.b.protocol and link.a.rate_Bps == pytest.approx(link.b.rate_Bps)
        for optic, port in ((link.optic_a, link.a), (link.optic_b, link.b)):
            if optic is not None:
                assert fits(optic.connector, port.cage) and port.protocol in optic.protocols
                assert optic.lane_Bps == pytest.approx(link.lane_Bps)
        if link.optic_a is None:
            assert link.cable.protocols >= {link.a.protocol}
            assert {fits(link.cable.connector, link.a.cage), fits(link.cable.far, link.b.cage)} == {True} or \
                {fits(link.cable.connector, link.b.cage), fits(link.cable.far, link.a.cage)} == {True}


def test_dgx_h100_storage_runs_ndr_on_qsfp112_and_oob_is_rj45():
    """RA-11333 Table 8: the DGX's storage ports take QSFP112 optics on NDR 400G links; the file
    system's run NDR200 on 2x200G splitters; out-of-band is 1 GbE RJ45 (Cat6) at every port."""
    p = parts()
    node = p.storage_node_link
    assert (node.a.cage.value, node.b.cage.value, node.a.rate_Bps * 8 / 1e9) == ("qsfp112", "osfp", 400)
    assert (node.optic_a.name, node.optic_b.name, node.links_per_optic_b) == ("qsfp112-400g-sr4", "osfp-800g-2xsr4", 2)
    assert p.storage_appliance_link.cable.breakout == 2 and p.storage_appliance_link.b.rate_Bps * 8 / 1e9 == 200
    assert p.oob_port_link.cable.name == "cat6-1g-rj45" and p.oob_port_link.a.cage.value == "rj45"
    assert p.inband_node_link.cable.name == "aoc-100g-qsfp28"


def test_oob_uplinks_the_inband_switch_cannot_take_are_named():
    """SN5600 in-band leaves (BlueField-3 runs no 100 GbE) have no port for the SN2201's 100G
    QSFP28 uplinks: the out-of-band network has none and its switch line says why."""
    p = parts("dgx-b200")
    assert p.oob_uplink is None and "nvidia-sn5600" in p.oob_uplink_problem
    sizes = sizes_by_role(nw.size_networks(p, 127, 12, 48))
    assert sizes["oob"].uplinks == 0 and sizes["inband"].device_links == 0
    line = next(l for l in nb.network_bom(p, tuple(sizes.values())) if l.role == "oob" and l.category == "switch")
    assert "no uplinks to in-band" in line.description


def test_every_network_line_says_what_fits_where_and_checks():
    """The 4-SU pod's storage, in-band and out-of-band lines all carry connector, protocol, lanes,
    media and plugs_into / ends, and bom --check finds every one right (none unchecked)."""
    from designer.design.bom import BomLine
    from designer.topology.bomcheck import check_bom

    p = parts()
    lines = nb.network_bom(p, nw.size_networks(p, 127, 12, 48), "nvidia-qm9700")
    fit = [l for l in lines if l.category in ("transceiver", "cable")]
    assert all(l.connector and l.protocol and l.lanes and l.media for l in fit)
    assert all(l.plugs_into for l in fit if l.category == "transceiver")
    assert all(len(l.ends) == 2 for l in fit if l.category == "cable")
    # Both ends of a storage leaf-spine cord use the same optic: each end names its device.
    cords = {l.ends for l in fit if l.role == "storage" and l.sku == "mpo-fiber-400g"}
    assert cords == {("osfp-800g-2xsr4@nvidia-qm9700", "osfp-800g-2xsr4@nvidia-qm9700"),
                     ("qsfp112-400g-sr4@connectx7-2p-400g", "osfp-800g-2xsr4@nvidia-qm9700")}
    # The out-of-band Cat6: a cord per BMC (127) and per managed switch, by kind of switch
    # (48 compute + 16 storage QM9700, 8 SN4600C).
    cat6 = {l.ends: l.quantity for l in fit if l.sku == "cat6-1g-rj45"}
    assert cat6 == {("dgx-h100", "nvidia-sn2201"): 127, ("nvidia-qm9700", "nvidia-sn2201"): 64,
                    ("nvidia-sn4600c", "nvidia-sn2201"): 8}
    devices = (BomLine("server", "dgx-h100", "", "compute", 127.0, 1.0, 0.0, ""),
               BomLine("switch", "nvidia-qm9700", "", "leaf", 32.0, 1.0, 0.0, ""),
               BomLine("storage", "ddn-ai400x2t", "", "storage", 12.0, 1.0, 0.0, ""))
    found = check_bom(devices + lines, CATALOG)
    assert (found.checked, found.unstated, found.mismatches) == (len(fit), 0, ())
