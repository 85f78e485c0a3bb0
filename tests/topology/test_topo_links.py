"""Links matched end to end (designer.topology.links): both cages filled by parts that fit them,
the same protocol and lanes x lane rate at both ends, media by reach, splitters where one end
breaks out; what no part builds is refused with the reason."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, strategies as st

from designer import catalog
from designer.catalog.types import Connector, MediaKind, Protocol
from designer.errors import CatalogError
from designer.topology.links import build_link, link_problem
from designer.topology.ports import Port, fits, nic_port, server_port, switch_port
from designer.topology.schema import MediaClass
from topo_factories import assert_link_agrees

CAT = catalog.load_builtin()
G = 1e9 / 8
IB, ETH = Protocol.INFINIBAND, Protocol.ETHERNET


def dgx(name="dgx-h100", protocol=IB, rate=None):
    server = CAT.servers[name]
    return server_port(server, CAT.nics[server.nic], protocol, rate)


def sw(name, rate=None):
    return switch_port(CAT.switches[name], rate)


def names(lp):
    return (lp.cable.name, lp.links_per_cable, lp.optic_a and lp.optic_a.name, lp.links_per_optic_a,
            lp.optic_b and lp.optic_b.name, lp.links_per_optic_b)


def test_dgx_h100_to_quantum2_is_twin_port_multimode_at_both_ends():
    """RA-11333 Table 8: twin-port OSFP at the DGX and the switch, one NDR multimode cord per link."""
    lp = build_link(CAT, dgx(), sw("nvidia-qm9700"), 30, media=MediaClass.MULTIMODE)
    assert names(lp) == ("mpo-fiber-400g", 1, "osfp-800g-2xsr4", 2, "osfp-800g-2xsr4", 2)
    assert (lp.lanes, lp.lane_Bps, lp.protocol) == (4, 100 * G, IB)
    assert lp.usd_per_link == pytest.approx(100 + 1000 / 2 + 1000 / 2)


def test_long_switch_links_take_single_mode_dr4():
    lp = build_link(CAT, sw("nvidia-qm9700"), sw("nvidia-qm9700"), 120, media=MediaClass.SINGLE_MODE)
    assert names(lp) == ("smf-fiber-400g", 1, "osfp-800g-2xdr4", 2, "osfp-800g-2xdr4", 2)


def test_an_adapter_card_takes_a_single_port_optic_or_a_splitter_dac():
    hgx = dgx("hgx-h200")
    assert names(build_link(CAT, hgx, sw("nvidia-qm9700"), 30, media=MediaClass.MULTIMODE)) == (
        "mpo-fiber-400g", 1, "osfp-400g-sr4", 1, "osfp-800g-2xsr4", 2)
    # In the rack: NVIDIA's MCP7Y00 splits one switch cage into two ConnectX-7/OSFP ends.
    assert names(build_link(CAT, hgx, sw("nvidia-qm9700"), 2, media=MediaClass.COPPER)) == (
        "dac-800g-osfp-2x400g-osfp", 2, None, 1, None, 1)


def test_aligned_twin_cages_share_one_wide_dac():
    assert names(build_link(CAT, dgx(), sw("nvidia-qm9700"), 2, media=MediaClass.COPPER, bundle=2)) == (
        "dac-800g-osfp", 2, None, 1, None, 1)


def test_ndr200_runs_two_lanes_over_a_splitter_fiber():
    """MMA4Z00-NS400: 200G mode on 2 channels over MFP7E20 1:2 splitters from a twin-port port."""
    nic = nic_port(CAT.nics["connectx7-ndr-400g"], IB, 200 * G)
    lp = build_link(CAT, nic, sw("nvidia-qm9700", 200 * G), 30, media=MediaClass.MULTIMODE)
    assert names(lp) == ("mpo-splitter-mm-2x200g", 2, "osfp-400g-sr4", 1, "osfp-800g-2xsr4", 4)
    assert (lp.lanes, lp.lane_Bps) == (2, 100 * G)


def test_the_bluefield3_qsfp112_cage_never_gets_an_osfp_optic():
    lp = build_link(CAT, nic_port(CAT.nics["bluefield3-b3140h"], ETH), sw("nvidia-sn5600", 400 * G), 30,
                    media=MediaClass.MULTIMODE)
    assert lp.optic_a.name == "qsfp112-400g-sr4" and lp.optic_a.connector is Connector.QSFP112
    assert not fits(Connector.OSFP, Connector.QSFP112)


def test_hdr_and_ndr200_lanes_never_meet():
    """A 200GBASE-SR4 / HDR end (4 x 50G) and an NDR200 splitter end (2 x 100G) cannot link
    (NVIDIA: 'HDR transceivers based on 50G-PAM4 cannot be directly linked to 100G-PAM4')."""
    why = link_problem(CAT, nic_port(CAT.nics["connectx6-hdr-200g"], IB), sw("nvidia-qm9700", 200 * G), 30)
    assert "no common lanes x lane rate (4 x 50G vs 2 x 100G)" in why


def test_an_ethernet_optic_never_goes_into_an_infiniband_link():
    """The issue's QSFP-DD 400GBASE-SR8 in DGX OSFP cages on HDR InfiniBand: refused."""
    with pytest.raises(CatalogError) as info:
        build_link(CAT, dgx("dgx-h100", IB, 200 * G), sw("nvidia-qm8700"), 30)
    assert "dgx-h100 OSFP cage" in info.value.message and "nvidia-qm8700 QSFP56 cage" in info.value.message
    assert link_problem(CAT, dgx(), sw("nvidia-sn4600c"), 30) == (
        "no link from dgx-h100 OSFP cage (8 x 100G infiniband, 2 links of 400G) to nvidia-sn4600c QSFP28 cage "
        "(4 x 25G ethernet, 1 link of 100G) over 30.0 m: one end runs infiniband, the other ethernet")


def test_an_sfp28_dac_never_fills_an_osfp_cage():
    """The issue's 25G SFP28 DACs in DGX OSFP cages: a 25G link from an OSFP cage needs an optic there."""
    port = Port("dgx-h100", Connector.OSFP, ETH, 8, 100 * G, 2, 25 * G)
    assert (1, 25 * G) in port.modes()
    try:
        lp = build_link(CAT, port, sw("nvidia-sn3420"), 2, media=MediaClass.COPPER)
    except CatalogError as exc:
        assert "no catalog cable or transceiver pair" in exc.message
    else:
        assert lp.optic_a is not None and lp.optic_a.connector is Connector.OSFP


def test_qsfp_dd_sr8_breaks_out_to_two_200g_sr4_ends():
    lp = build_link(CAT, nic_port(CAT.nics["connectx6-dx-200g"], ETH), sw("arista-7060dx5-64s", 200 * G), 30,
                    media=MediaClass.MULTIMODE)
    assert names(lp) == ("mpo16-breakout-mm-2x200g", 2, "qsfp56-200g-sr4", 1, "qsfp-dd-400g-sr8-2x200g", 2)


# --- property: over every device port of the catalogs, a built link fits at both ends ------------

def _ports() -> list[Port]:
    out = []
    for s in CAT.switches.values():
        for rate in (s.port_rate_Bps, *s.breakout):
            try:
                out.append(switch_port(s, rate))
            except CatalogError:
                pass
    for server in CAT.servers.values():
        nic = CAT.nics[server.nic]
        for proto in sorted(nic.protocols):
            for rate in nic.rates():
                out.append(server_port(server, nic, proto, rate))
    for nic in CAT.nics.values():
        for proto in sorted(nic.protocols):
            for rate in nic.rates():
                out.append(nic_port(nic, proto, rate))
    return sorted(set(out), key=lambda p: (p.device, p.protocol.value, p.rate_Bps, p.links))


PORTS = _ports()


@given(st.sampled_from(PORTS), st.sampled_from(PORTS), st.sampled_from([1.0, 2.5, 20.0, 45.0, 90.0, 400.0]),
       st.sampled_from([None, *MediaClass.__members__.values()][:4]), st.sampled_from([1, 2]))
def test_every_built_link_fits_both_cages_and_agrees_end_to_end(a, b, reach, media, bundle):
    try:
        lp = build_link(CAT, a, b, reach, media=media, bundle=bundle)
    except CatalogError as exc:
        assert exc.message.startswith(f"no link from {a.describe()} to {b.describe()}")
        return
    assert_link_agrees(lp, a, b, reach)


def test_the_property_covers_links_of_every_media():
    built = set()
    for a in PORTS:
        for b in PORTS:
            for reach, media in ((2.0, MediaClass.COPPER), (30.0, MediaClass.MULTIMODE), (300.0, MediaClass.SINGLE_MODE)):
                if link_problem(CAT, a, b, reach, media=media) is None:
                    built.add(build_link(CAT, a, b, reach, media=media).media)
    assert {MediaKind.DAC, MediaKind.MULTIMODE, MediaKind.SINGLEMODE} <= built


def test_dr4_optics_join_4x100g_and_8x50g_cages():
    """IEEE 802.3bs 400GBASE-DR4 is 4 x 100G-PAM4 on four fiber pairs whatever the host side: a
    ConnectX-7 OSFP (4 x 100G electrical) and a QSFP-DD DR4 in an 8 x 50G Arista 7060DX5 cage
    interoperate optically; the DGX's twin-port 2xDR4 likewise. No cable joins them directly."""
    arista = sw("arista-7060dx5-64s")
    cx7 = nic_port(CAT.nics["connectx7-ndr-400g"], ETH)
    lp = build_link(CAT, cx7, arista, 2.0, media=MediaClass.COPPER)
    assert (lp.optic_a.name, lp.optic_b.name, lp.cable.media) == ("osfp-400g-dr4", "qsfp-dd-400g-dr4",
                                                                  MediaKind.SINGLEMODE)
    assert (lp.optic_a.lanes, lp.optic_a.lane_Bps, lp.optic_b.lanes, lp.optic_b.lane_Bps) == (4, 100 * G, 8, 50 * G)
    assert lp.optic_a.optical_lanes == lp.optic_b.optical_lanes == 4
    twin = build_link(CAT, dgx("dgx-h100", ETH), arista, 2.0, media=MediaClass.COPPER)
    assert (twin.optic_a.name, twin.optic_b.name) == ("osfp-800g-2xdr4", "qsfp-dd-400g-dr4")
    # The BlueField-3's QSFP112 cage (4 x 100G) takes a third-party QSFP112 DR4 to the same end.
    bf3 = build_link(CAT, nic_port(CAT.nics["bluefield3-b3140h"], ETH), arista, 30.0)
    assert (bf3.optic_a.name, bf3.optic_b.name, bf3.cable.media) == ("qsfp112-400g-dr4", "qsfp-dd-400g-dr4",
                                                                     MediaKind.SINGLEMODE)
    assert (bf3.lanes, bf3.lane_Bps, bf3.optic_b.lane_Bps) == (4, 100 * G, 50 * G)
    assert_link_agrees(bf3, bf3.a, bf3.b, 30.0)
    # An SR4 (4 x 100G optical) never faces an SR8 (8 x 50G optical): without single-mode parts
    # the two cages have no link.
    mm_only = replace(CAT, transceivers={k: t for k, t in CAT.transceivers.items() if t.media is not MediaKind.SINGLEMODE})
    with pytest.raises(CatalogError, match="no pair of optics with the same optical lanes"):
        build_link(mm_only, nic_port(CAT.nics["bluefield3-b3140h"], ETH), arista, 30.0)


@pytest.mark.parametrize("a, b", [
    (("nic", "bluefield3-b3140h", ETH, None), ("arista-7060dx5-64s", None)),
    (("nic", "connectx7-ndr-400g", ETH, None), ("arista-7060dx5-64s", None)),
    (("server", "dgx-h100", ETH, None), ("arista-7060dx5-64s", None)),
    (("server", "dgx-b200", ETH, None), ("arista-7060dx5-64s", None)),
])
@pytest.mark.parametrize("reach, media", [(2.0, MediaClass.COPPER), (30.0, MediaClass.MULTIMODE),
                                          (90.0, MediaClass.SINGLE_MODE)])
def test_lane_converting_links_agree_at_both_ends(a, b, reach, media):
    """Every lane-converting link (4 x 100G QSFP112 / OSFP host side to an 8 x 50G QSFP-DD cage):
    each end's optic runs its own cage's electrical lane rate, both optics and the cord are of
    one fiber media with the same optical lane rate, at any run the catalog builds."""
    kind, name, proto, rate = a
    end_a = nic_port(CAT.nics[name], proto, rate) if kind == "nic" else dgx(name, proto, rate)
    end_b = sw(*b)
    assert not {m for m in end_a.modes()} & {m for m in end_b.modes()}  # no common electrical mode
    lp = build_link(CAT, end_a, end_b, reach, media=media)
    assert lp.optic_a is not None and lp.optic_b is not None
    assert abs(lp.optic_a.lane_Bps - 100 * G) < 1 and abs(lp.optic_b.lane_Bps - 50 * G) < 1
    assert lp.optic_a.media is lp.optic_b.media is lp.cable.media is MediaKind.SINGLEMODE
    assert_link_agrees(lp, end_a, end_b, reach)
