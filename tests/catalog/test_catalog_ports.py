"""Ports as data in the catalogs: every device cage, optic and cable states its connector, protocol
and lanes; user entries get the documented default or a located error."""

from __future__ import annotations

from pathlib import Path

import pytest

from designer import catalog
from designer.catalog.ports import default_cage, port_problem
from designer.catalog.types import Connector, MediaKind, Protocol
from designer.errors import CatalogError

BUILTIN = catalog.load_builtin()
G = 1e9 / 8


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "user.yaml"
    path.write_text(text)
    return path


def test_every_builtin_device_port_optic_and_cable_is_described():
    entries = [*BUILTIN.nics.values(), *BUILTIN.switches.values(), *BUILTIN.transceivers.values(),
               *BUILTIN.cables.values()]
    assert [(e.name, port_problem(e)) for e in entries if port_problem(e)] == []
    for e in [*BUILTIN.nics.values(), *BUILTIN.switches.values()]:
        assert e.cage in Connector and e.cage.is_cage and e.lanes >= 1 and e.lane_Bps > 0, e.name
    for t in BUILTIN.transceivers.values():
        assert t.connector.is_cage and t.media.is_fiber and not t.fiber.is_cage and t.protocols, t.name
    for c in BUILTIN.cables.values():
        assert c.connector.is_cage != c.media.is_fiber, c.name


def test_reference_parts_have_their_published_cages():
    """RA-11333 / NVIDIA LinkX: QM9700 twin-port OSFP (8 x 100G, two NDR ports), ConnectX-7 single-port
    OSFP (4 x 100G), BlueField-3 QSFP112, QM8700 QSFP56 HDR (4 x 50G), SN4600C QSFP28 (4 x 25G)."""
    sw, nic = BUILTIN.switches, BUILTIN.nics
    assert (sw["nvidia-qm9700"].cage, sw["nvidia-qm9700"].lanes, sw["nvidia-qm9700"].lane_Bps) == (Connector.OSFP, 8, 100 * G)
    assert (nic["connectx7-ndr-400g"].cage, nic["connectx7-ndr-400g"].lanes) == (Connector.OSFP, 4)
    assert nic["bluefield3-b3140h"].cage is Connector.QSFP112
    assert (sw["nvidia-qm8700"].cage, sw["nvidia-qm8700"].lane_Bps) == (Connector.QSFP56, 50 * G)
    assert (sw["nvidia-sn4600c"].cage, sw["nvidia-sn4600c"].lane_Bps) == (Connector.QSFP28, 25 * G)
    twin = BUILTIN.transceivers["osfp-800g-2xsr4"]
    assert (twin.connector, twin.lanes, twin.optical_ports, twin.fiber, twin.media) == (
        Connector.OSFP, 8, 2, Connector.MPO_12, MediaKind.MULTIMODE)
    assert BUILTIN.transceivers["qsfp-dd-400g-sr8-2x200g"].protocols == frozenset({Protocol.ETHERNET})


def test_a_user_switch_without_ports_gets_the_cage_of_its_rate(tmp_path):
    text = ("schema_version: 1\nkind: switch\nitems:\n  - name: edge-tor-100g\n    description: lab\n"
            "    protocol: ethernet\n    ports: 32\n    port_rate: 100 Gbps\n    cages: 32\n    latency: 600 ns\n"
            "    price: $9,000\n    power: 350 W\n    rack_units: 1\n    source: datasheet\n    as_of: 2026-09\n")
    tor = catalog.load_catalog([write(tmp_path, text)]).switches["edge-tor-100g"]
    assert (tor.cage, tor.lanes, tor.lane_Bps) == (Connector.QSFP28, 4, 25 * G)
    assert default_cage(400 * G) is None


def test_a_user_400g_nic_without_a_cage_is_refused_where_it_is_written(tmp_path):
    text = ("schema_version: 1\nkind: nic\nitems:\n  - name: my-nic\n    description: x\n    rate: 400 Gbps\n"
            "    ports: 1\n    protocols: [ethernet]\n    rdma: true\n    price: $1,000\n    power: 20 W\n"
            "    source: test\n    as_of: 2024\n")
    with pytest.raises(CatalogError) as info:
        catalog.load_catalog([write(tmp_path, text)])
    assert "give cage, lanes and lane_rate" in info.value.message
    assert info.value.location.line == 4


def test_lanes_that_do_not_make_the_rate_are_refused(tmp_path):
    text = ("schema_version: 1\nkind: nic\nitems:\n  - name: connectx7-ndr-400g\n    lanes: 2\n"
            "    source: test\n    as_of: 2024\n")
    with pytest.raises(CatalogError) as info:
        catalog.load_catalog([write(tmp_path, text)])
    assert "2 lanes x 100G is not the 400G of a port" in info.value.message
    assert (info.value.location.line, info.value.location.col) == (5, 12)


def test_a_cable_of_media_fiber_must_say_which_fiber(tmp_path):
    text = ("schema_version: 1\nkind: cable\nitems:\n  - name: mpo-fiber-400g\n    media: fiber\n"
            "    source: test\n    as_of: 2024\n")
    with pytest.raises(CatalogError, match="say which fiber: multimode or singlemode") as info:
        catalog.load_catalog([write(tmp_path, text)])
    assert info.value.location.line == 5


def test_a_new_transceiver_must_give_its_port_fields(tmp_path):
    text = ("schema_version: 1\nkind: transceiver\nitems:\n  - name: my-optic\n    description: x\n"
            "    rate: 400 Gbps\n    reach: 50 m\n    price: $500\n    power: 9 W\n    source: t\n    as_of: 2025\n")
    with pytest.raises(CatalogError, match="missing connector, protocols, lanes, lane_rate, media, fiber"):
        catalog.load_catalog([write(tmp_path, text)])


def test_no_placeholder_part_is_in_the_catalogs():
    """Every optic and cable is a real, sourced part: a link none of them builds is refused."""
    parts = [*BUILTIN.transceivers.values(), *BUILTIN.cables.values()]
    assert [p.name for p in parts if "placeholder" in (p.name + p.description + p.provenance.note).lower()] == []
    assert all(p.provenance.source for p in parts)
