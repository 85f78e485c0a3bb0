"""Floor layout: racks, cable runs and media classes."""

import pytest

from designer.topology import summarize
from designer.topology.layout import COPPER_REACH_M, MULTIMODE_REACH_M
from designer.topology.schema import MediaClass
from topo_factories import dgx_request


def test_superpod_racks():
    """4 SU at 4 DGX per rack: 32 server racks; one leaf rack per SU row and one spine rack.
    (RA-11333-001 Table 7 lists 38 racks including storage and management, not modelled here.)"""
    s = summarize(dgx_request("rail_optimized", 127, reserved_leaf_ports=4))
    assert s.server_racks == 32
    assert s.switch_racks == 4 + 1


def test_top_of_rack_leaves_use_copper():
    s = summarize(dgx_request("fat_tree", 64))
    assert s.node_media is MediaClass.COPPER
    assert s.tier_links[0].length_m <= COPPER_REACH_M
    assert s.node_transceivers == 0
    assert s.switch_racks == 1  # leaves sit in the server racks; only the spines need a rack


def test_single_switch_in_the_rack_when_the_servers_fit():
    assert summarize(dgx_request("single_switch", 4)).node_media is MediaClass.COPPER
    assert summarize(dgx_request("single_switch", 5)).node_media is MediaClass.MULTIMODE


def test_superpod_is_all_multimode():
    """RA-11333-001 Table 8: all compute links multimode fiber at 4 SU; the model keeps multimode
    up to 128 SU of 4-DGX racks (runs of about 45 m) and needs single-mode at 256 SU."""
    big = summarize(dgx_request("rail_optimized", 8192))
    assert big.tier_links[1].media is MediaClass.SINGLE_MODE
    for nodes in (127, 1024, 4096):
        s = summarize(dgx_request("rail_optimized", nodes))
        assert {t.media for t in s.tier_links} == {MediaClass.MULTIMODE}
        assert max(t.length_m for t in s.tier_links) <= MULTIMODE_REACH_M


@pytest.mark.parametrize("spr", [1, 2, 4])
def test_runs_grow_with_the_hall(spr):
    lengths = [summarize(dgx_request("rail_optimized", n, servers_per_rack=spr)).tier_links[1].length_m
               for n in (64, 256, 1024, 4096)]
    assert lengths == sorted(lengths) and lengths[0] < lengths[-1]


def test_sparse_racks_push_runs_past_multimode_reach():
    s = summarize(dgx_request("rail_optimized", 4096, servers_per_rack=1))
    assert s.tier_links[0].media is MediaClass.MULTIMODE
    assert s.tier_links[1].media is MediaClass.SINGLE_MODE


def test_fabric_manager_appliances_take_network_rack_units():
    """The SuperPOD's 4 1U UFM appliances fit the free units of its 5 network racks (48 1U
    switches in 5 x 42U); beside top-of-rack leaves with no network rack of free units they take
    a rack of their own, which the rack count includes."""
    pod = summarize(dgx_request("rail_optimized", 127, reserved_leaf_ports=4, appliance_units=4))
    assert (pod.switch_racks, pod.appliance_racks) == (5, 0)
    # One switch in the servers' rack: no network rack, so the appliances get one.
    tor = summarize(dgx_request("single_switch", 4, appliance_units=4))
    assert (tor.server_racks, tor.switch_racks, tor.appliance_racks) == (1, 1, 1)
    assert summarize(dgx_request("single_switch", 4)).switch_racks == 0
    assert summarize(dgx_request("fat_tree", 64, appliance_units=4)).appliance_racks == 0  # the spine rack has room
