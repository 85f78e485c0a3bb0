"""Small catalog entries and requests for the topology tests (figures from network.md, prices made up).

Hardware shapes are the real ones (DGX H100: 8 x 400G ConnectX-7 in 4 twin-port OSFP cages;
QM9700: 64 x NDR 400G in 32 OSFP cages; SN5600: 64 x 800G, 128 x 400G by breakout). Prices are
test values, chosen so that the cheapest-part rules have something to choose between.
"""

from __future__ import annotations

from types import MappingProxyType

from designer.catalog.types import (
    Cable, Catalog, Connector, MediaKind, Nic, Protocol, Provenance, Server, Switch, Transceiver,
)
from designer.topology import FabricRequest, TopologyKind, server_port
from designer.topology.ports import fits

G = 1e9 / 8  # bytes/s per Gb/s
TEST = Provenance(source="test fixture", as_of="2025")


def qm9700() -> Switch:
    """NVIDIA Quantum-2 QM9700: 64 NDR ports in 32 twin-port OSFP cages (network.md 1.1)."""
    return Switch("qm9700", "Quantum-2 QM9700 NDR", Protocol.INFINIBAND, 64, 400 * G, 32,
                  MappingProxyType({200 * G: 128}), 150e-9, True, 36000.0, 1100.0, 1, TEST,
                  cage=Connector.OSFP, lanes=8, lane_Bps=100 * G)


def sn5600() -> Switch:
    """NVIDIA Spectrum-4 SN5600: 64 x 800GbE OSFP, 128 x 400G or 256 x 200G by breakout."""
    return Switch("sn5600", "Spectrum-4 SN5600", Protocol.ETHERNET, 64, 800 * G, 64,
                  MappingProxyType({400 * G: 128, 200 * G: 256}), 500e-9, False, 60000.0, 1500.0, 2, TEST,
                  cage=Connector.OSFP, lanes=8, lane_Bps=100 * G)


def cx7() -> Nic:
    return Nic("cx7-400g", "ConnectX-7 400G", 400 * G, 1,
               frozenset({Protocol.INFINIBAND, Protocol.ETHERNET}), True, 1200.0, 20.0, TEST,
               cage=Connector.OSFP, lanes=4, lane_Bps=100 * G)


def dgx_h100() -> Server:
    """DGX H100: 8 GPUs, 8 x 400G compute NICs behind 4 twin-port OSFP cages, 10.2 kW, 8U."""
    return Server("dgx-h100", "DGX H100", "h100", 8, "cx7-400g", 8, 4, None, 0, 10200.0, 8, 310000.0, TEST)


def dgx_node(protocol: Protocol = Protocol.INFINIBAND):
    """A DGX H100 compute cage: OSFP holding two ConnectX-7 ports (8 lanes of 100G)."""
    return server_port(dgx_h100(), cx7(), protocol)


def _t(name: str, gbps: float, ports: int, reach: float, price: float, watts: float,
       media: MediaKind = MediaKind.MULTIMODE) -> Transceiver:
    """An NVIDIA-style OSFP optic of ``ports`` logical ports of 4 x 100G (or a 200G QSFP56 SR4)."""
    lanes, lane = (4, 50 * G) if gbps == 200 else (4 * ports, 100 * G)
    cage = Connector.QSFP56 if gbps == 200 else Connector.OSFP
    protocols = frozenset({Protocol.ETHERNET}) if gbps == 200 else frozenset(Protocol)
    return Transceiver(name, name, gbps * G, ports, reach, price, watts, TEST, connector=cage, protocols=protocols,
                       lanes=lanes, lane_Bps=lane, media=media, fiber=Connector.MPO_12, optical_ports=ports, split=2)


def _c(name: str, media: MediaKind, gbps: float, reach: float, price: float) -> Cable:
    connector = Connector.MPO_12 if media.is_fiber else Connector.OSFP
    lanes = 4 if media.is_fiber else int(gbps // 100)
    return Cable(name, name, media, gbps * G, reach, price, 0.0, TEST, connector=connector, lanes=lanes,
                 lane_Bps=100 * G)


def catalog(*, drop: tuple[str, ...] = ()) -> Catalog:
    """Cables and optics at 400G (and a 2x400G DAC), some dearer twins to be passed over."""
    parts = [
        _t("osfp-2x400g-sr8", 400, 2, 50, 1000.0, 15.0),
        _t("osfp-2x400g-sr8-dear", 400, 2, 50, 1400.0, 15.0),
        _t("osfp-2x400g-dr8", 400, 2, 500, 1300.0, 17.0, MediaKind.SINGLEMODE),
        _t("osfp-400g-sr4", 400, 1, 50, 700.0, 8.0),
        _t("qsfp-200g-sr4", 200, 1, 100, 400.0, 5.0),
        _c("fiber-mm-400g", MediaKind.MULTIMODE, 400, 50, 100.0),
        _c("fiber-sm-400g", MediaKind.SINGLEMODE, 400, 500, 150.0),
        _c("dac-400g", MediaKind.DAC, 400, 3, 150.0),
        _c("dac-2x400g", MediaKind.DAC, 800, 3, 250.0),
        _c("aoc-2x400g", MediaKind.AOC, 800, 30, 1100.0),
    ]
    parts = [p for p in parts if p.name not in drop]
    return Catalog(
        switches=MappingProxyType({s.name: s for s in (qm9700(), sn5600())}),
        nics=MappingProxyType({"cx7-400g": cx7()}),
        servers=MappingProxyType({"dgx-h100": dgx_h100()}),
        transceivers=MappingProxyType({p.name: p for p in parts if isinstance(p, Transceiver)}),
        cables=MappingProxyType({p.name: p for p in parts if isinstance(p, Cable)}),
    )


def dgx_request(kind: str | TopologyKind, nodes: int, **kw) -> FabricRequest:
    """DGX H100 on 64-port NDR switches (the SuperPOD compute fabric), without a catalog."""
    base = dict(topology=TopologyKind(kind), nodes=nodes, gpus_per_node=8, nics_per_node=8,
                nic_rate_Bps=400 * G, switch_ports=64, switch_port_rate_Bps=400 * G,
                ports_per_cage=2, node_cages=4)
    base.update(kw)
    return FabricRequest(**base)


def one_nic_request(kind: str | TopologyKind, nodes: int, k: int, **kw) -> FabricRequest:
    """Single-NIC hosts on k-port switches (the textbook fat tree)."""
    base = dict(topology=TopologyKind(kind), nodes=nodes, gpus_per_node=1, nics_per_node=1,
                nic_rate_Bps=100 * G, switch_ports=k, switch_port_rate_Bps=100 * G)
    base.update(kw)
    return FabricRequest(**base)


def assert_link_agrees(lp, a, b, reach):
    """Both ends of ``lp`` agree: the same protocol and link rate; a direct cable runs one
    lanes x lane rate both cages run; an optic in each cage at a lanes x lane rate of that cage
    (a lane-converting pair: 8 x 50G on one side, 4 x 100G on the other), the two optics' fiber
    sides alike (media and optical lane rate) and the cord theirs; every part
    reaches the run."""
    assert a.protocol is b.protocol is lp.protocol
    assert abs(a.rate_Bps - b.rate_Bps) < 1 and abs(lp.lanes * lp.lane_Bps - a.rate_Bps) < 1
    assert (lp.lanes, lp.lane_Bps) in a.modes()
    assert lp.cable.reach_m >= reach and lp.protocol in lp.cable.protocols
    if lp.cable.media.is_fiber:
        for port, optic in ((a, lp.optic_a), (b, lp.optic_b)):
            assert fits(optic.connector, port.cage) and port.protocol in optic.protocols
            assert any(abs(optic.lane_Bps - lane) < 1 for _, lane in port.modes()), (optic.name, port.describe())
            assert optic.reach_m >= reach and optic.media is lp.cable.media
        # The fiber sides are one PMD: the same optical lane rate (4 x 100G-PAM4 DR4 on both).
        assert abs(lp.optic_a.optical_lane_Bps - lp.optic_b.optical_lane_Bps) < 1, (lp.optic_a.name, lp.optic_b.name)
        assert {lp.cable.connector, lp.cable.far} == {lp.optic_a.fiber, lp.optic_b.fiber}
    else:
        assert lp.optic_a is None and lp.optic_b is None
        ends = {(lp.cable.connector, lp.cable.far), (lp.cable.far, lp.cable.connector)}
        assert any(fits(near, a.cage) and fits(far, b.cage) for near, far in ends)
        assert abs(lp.cable.lane_Bps - lp.lane_Bps) < 1
        assert lp.cable.lanes == lp.lanes * lp.links_per_cable
