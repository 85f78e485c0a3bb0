"""FabricRequest validation and request_for from catalog entries."""

import dataclasses
import doctest

import pytest

from designer.catalog.types import Nic, Protocol
from designer.errors import TopologyError
from designer.topology import FabricRequest, TopologyKind, build, request_for, schema, summary
from topo_factories import TEST, G, cx7, dgx_h100, dgx_request, qm9700, sn5600


def test_request_from_catalog_entries():
    req = request_for(dgx_h100(), cx7(), qm9700(), "rail_optimized", 127, reserved_leaf_ports=4)
    assert req.topology is TopologyKind.RAIL_OPTIMIZED
    assert (req.switch_ports, req.ports_per_cage, req.node_cages) == (64, 2, 4)
    assert (req.nics_per_node, req.gpus_per_node, req.gpus, req.endpoints) == (8, 8, 1016, 1016)
    assert req.node_ports_per_cage == 2
    assert req.servers_per_rack == 4


def test_breakout_doubles_ports_at_the_nic_rate():
    """SN5600: 64 x 800G cages run 128 x 400G, two logical ports per cage."""
    req = request_for(dgx_h100(), cx7(), sn5600(), "rail_optimized", 256)
    assert (req.switch_ports, req.ports_per_cage) == (128, 2)
    assert req.switch_rack_units == 2


def test_servers_per_rack_from_rack_power():
    """40 kW racks hold three 10.2 kW DGX H100; 8U each fits 5 in 42U."""
    req = request_for(dgx_h100(), cx7(), qm9700(), "fat_tree", 64, rack_power_w=40e3)
    assert req.servers_per_rack == 3
    with pytest.raises(TopologyError, match="does not fit a rack"):
        request_for(dgx_h100(), cx7(), qm9700(), "fat_tree", 64, rack_power_w=5e3)


def test_switch_must_run_the_nic():
    slow = Nic("cx6-100g", "100G NIC", 100 * G, 1, frozenset({Protocol.INFINIBAND}), True, 800.0, 15.0, TEST)
    server = dataclasses.replace(dgx_h100(), nic="cx6-100g")
    with pytest.raises(TopologyError, match="cannot run ports at 100 Gb/s"):
        request_for(server, slow, qm9700(), "fat_tree", 8)
    with pytest.raises(TopologyError, match="speaks ethernet"):
        request_for(server, slow, sn5600(), "fat_tree", 8)
    with pytest.raises(TopologyError, match="compute NIC"):
        request_for(dgx_h100(), slow, qm9700(), "fat_tree", 8)
    with pytest.raises(TopologyError, match="request_for_cloud"):
        request_for(dgx_h100(), cx7(), qm9700(), "cloud", 8)


@pytest.mark.parametrize("change, message", [
    ({"nodes": 0}, "nodes must be an integer >= 1"),
    ({"nodes": 2.5}, "nodes must be an integer"),
    ({"oversubscription": 0.5}, "oversubscription must be a ratio r >= 1"),
    ({"oversubscription": float("nan")}, "oversubscription"),
    ({"node_cages": 3}, "do not split evenly"),
    ({"switch_ports": 63}, "whole cages"),
    ({"switch_port_rate_Bps": 800 * G}, "after breakout"),
    ({"su_nodes": 40}, "cannot take 40 NIC downlinks"),
    ({"reserved_leaf_ports": 1, "nodes": 64}, "reserved leaf ports do not fit"),
    ({"nodes": 8193}, "more than three tiers"),
    ({"topology": "torus"}, "unknown topology"),
    ({"servers_per_rack": 0}, "servers_per_rack"),
    ({"switch_rack_units": 50}, "does not fit"),
])
def test_bad_requests_raise_topology_error(change, message):
    with pytest.raises(TopologyError, match=message):
        dgx_request("rail_optimized", **{"nodes": 64, **change})


def test_capacity_limits_follow_the_radix():
    """Rail-optimized on 64-port switches at 1:1: 64 pods of 4 SU of 32 DGX = 8192 nodes (k^3/4 GPUs)."""
    assert dgx_request("rail_optimized", 8192).nodes == 8192
    with pytest.raises(TopologyError, match="at most 8192 nodes"):
        dgx_request("rail_optimized", 8193)
    with pytest.raises(TopologyError, match="one server's 8 NICs"):
        dgx_request("fat_tree", 4, switch_ports=8)


def test_topology_given_as_string_is_normalised():
    req = FabricRequest("fat_tree", 2, 8, 8, 50e9, 64, 50e9)
    assert req.topology is TopologyKind.FAT_TREE
    assert hash(req) == hash(FabricRequest(TopologyKind.FAT_TREE, 2, 8, 8, 50e9, 64, 50e9))


@pytest.mark.parametrize("module", [schema, summary, build])
def test_docstring_examples_run(module):
    result = doctest.testmod(module)
    assert result.failed == 0 and result.attempted > 0
