"""The DGX SuperPOD reference architectures with the built-in catalog's own parts: switch counts,
optics and cables as RA-11333 (DGX H100), the DGX B200 RA Table 4 and the DGX B300-XDR RA Table 3
list them, every link built end to end."""

from __future__ import annotations

import pytest

from designer import catalog
from designer.catalog.types import Protocol
from designer.topology import fabric_bom, request_for, server_port, summarize

CAT = catalog.load_builtin()


def bom(server: str, switch: str, nodes: int, reserved: int = 0):
    s, sw = CAT.servers[server], CAT.switches[switch]
    nic = CAT.nics[s.nic]
    summary = summarize(request_for(s, nic, sw, "rail_optimized", nodes, reserved_leaf_ports=reserved))
    lines = fabric_bom(summary, sw, CAT, server_port(s, nic, Protocol.INFINIBAND))
    return summary, {(l.category, l.role, l.sku): l.quantity for l in lines}


def test_dgx_h100_superpod_4_su_is_ra_11333_tables_7_and_8():
    """32 leaf + 16 spine QM9700; 1,536 switch and 508 system twin-port multimode OSFP; 2,040 NDR
    cables (1,016 DGX-leaf + 1,024 leaf-spine) plus the 4 UFM links."""
    _, got = bom("dgx-h100", "nvidia-qm9700", 127, reserved=4)
    assert got == {
        ("switch", "leaf", "nvidia-qm9700"): 32,
        ("switch", "spine", "nvidia-qm9700"): 16,
        ("transceiver", "switch-side", "osfp-800g-2xsr4"): 1536,
        ("transceiver", "node-side", "osfp-800g-2xsr4"): 508,
        ("cable", "node-leaf", "mpo-fiber-400g"): 1016 + 4,
        ("cable", "leaf-spine", "mpo-fiber-400g"): 1024,
    }


@pytest.mark.parametrize("sus, leaves, spines", [(1, 8, 4), (2, 16, 8), (3, 24, 16), (4, 32, 16)])
def test_dgx_b200_superpod_table_4(sus, leaves, spines):
    """DGX B200 RA Table 4: 31/63/95/127 nodes (one DGX per SU gives way to UFM), 8·SU leaves,
    spines 4/8/16/16, 8·nodes + 4 compute and UFM cables, 256·SU leaf-spine cables; the B200's
    four twin-port OSFP cages take the same twin-port optics as the switch."""
    nodes = 32 * sus - 1
    s, got = bom("dgx-b200", "nvidia-qm9700", nodes, reserved=4)
    assert (s.leaves, s.spines) == (leaves, spines)
    assert got[("cable", "node-leaf", "mpo-fiber-400g")] == 8 * nodes + 4
    assert got[("cable", "leaf-spine", "mpo-fiber-400g")] == 256 * sus
    assert got[("transceiver", "node-side", "osfp-800g-2xsr4")] == 4 * nodes
    # Every leaf cage is in use; each spine uses a cage per two leaf uplinks (3 SU: 24 of 32).
    assert got[("transceiver", "switch-side", "osfp-800g-2xsr4")] == s.switch_transceivers == \
        32 * leaves + spines * (32 * leaves // spines // 2)


@pytest.mark.parametrize("sus, leaves, spines", [(1, 8, 4), (2, 16, 8), (4, 32, 18), (8, 64, 36)])
def test_dgx_b300_xdr_superpod_table_3(sus, leaves, spines):
    """DGX B300-XDR RA Table 3: 72 DGX B300 per SU on Quantum-X800 Q3400, leaves 8·SU, spines
    4/8/18/36, node-leaf = leaf-spine = 576·SU cables; XDR runs single-mode only (NVIDIA: no
    multimode, AOC or DAC at 200G-PAM4), so every link is DR4 over MPO-12 single-mode fiber."""
    nodes = 72 * sus
    s, got = bom("dgx-b300", "nvidia-q3400", nodes)
    assert (s.leaves, s.spines) == (leaves, spines)
    assert got[("cable", "node-leaf", "smf-fiber-800g")] == 576 * sus
    assert got[("cable", "leaf-spine", "smf-fiber-800g")] == 576 * sus
    assert got[("transceiver", "node-side", "osfp-800g-dr4-xdr")] == 8 * nodes
    assert got[("transceiver", "switch-side", "osfp-1.6t-2xdr4-xdr")] == s.switch_transceivers
