"""Floor layout: racks, cable runs and the media class of every link tier.

Assumption (an estimate, stated once here and in ``docs/topology.md``):

* Servers fill racks in order, ``servers_per_rack`` each.
* A leaf goes top-of-rack, in its servers' rack, when its whole leaf group fits one rack
  (``su_nodes <= servers_per_rack`` and the group never straddles two racks). Its NIC links are
  then in-rack copper (DAC, < 3 m).
* Otherwise leaves sit in network racks in their servers' row. Rail designs put one SU per row
  (as in the DGX SuperPOD SU layout); other designs fill rows of :data:`ROW_SERVER_RACKS` server
  racks with whole leaf groups. A NIC link runs at most half a row plus the two vertical drops.
* Spines and cores sit in central network racks. The hall is taken as square, with the central
  racks in the middle, so an inter-switch link runs at most the hall's side (half of it along each
  axis, Manhattan routing in overhead trays) plus the two drops.
* Out-of-rack runs up to :data:`MULTIMODE_REACH_M` use multimode optics (NVIDIA's SuperPOD practice:
  "all networking components are multimode fiber", network.md 1.1); longer ones single-mode.
"""

from __future__ import annotations

__all__ = [
    "Layout",
    "layout_for",
    "classify",
    "RACK_WIDTH_M",
    "ROW_PITCH_M",
    "DROP_M",
    "IN_RACK_M",
    "COPPER_REACH_M",
    "MULTIMODE_REACH_M",
    "ROW_SERVER_RACKS",
    "switches_per_rack",
    "is_top_of_rack",
    "groups_per_row",
]

import math
from dataclasses import dataclass

from designer.topology.schema import MediaClass, TopologyKind
from designer.topology.sizing import Plan

# Standard 600 mm wide cabinet for 19-inch equipment (EIA-310 racks in 600 mm enclosures).
RACK_WIDTH_M = 0.6
# Row pitch: a 1.2 m deep cabinet plus a 1.2 m aisle (estimate; common hot/cold-aisle practice).
ROW_PITCH_M = 2.4
# Vertical run at each end, from the port to the overhead tray (estimate).
DROP_M = 2.0
# A cable inside one rack (estimate; under the DAC reach below).
IN_RACK_M = 2.0
# DAC < 3 m, AOC < 30 m, fiber transceivers 100 m+ (losslessnetwork.com BOM page, network.md 5.4).
COPPER_REACH_M = 3.0
# NVIDIA MMA4Z00-NS 800G twin-port multimode OSFP: 50 m (network.md 5.4).
MULTIMODE_REACH_M = 50.0
# Server racks per row for non-rail designs (estimate; data-centre rows are typically 10-20 racks).
ROW_SERVER_RACKS = 16


@dataclass(frozen=True, slots=True)
class Layout:
    """Racks and cable runs of one fabric.

    Attributes:
        server_racks: Racks holding servers (and top-of-rack leaves).
        leaf_racks: Network racks for leaves in the rows (0 when leaves are top-of-rack).
        central_racks: Network racks for spines and cores.
        rows: Rows of server racks.
        groups_per_row: Leaf groups (SUs) per row.
        top_of_rack: Whether leaves sit in their servers' rack.
        node_leaf_m: Worst-case NIC-to-leaf cable run, m.
        inter_switch_m: Worst-case leaf-spine and spine-core run, m (0 in one tier).
        node_leaf_media: Media class of NIC links.
        inter_switch_media: Media class of switch-to-switch links.
        appliance_racks: Network racks holding only management appliances (UFM), where the
            switches' racks have no free units for them (top-of-rack leaves: no network rack).
    """

    server_racks: int
    leaf_racks: int
    central_racks: int
    rows: int
    groups_per_row: int
    top_of_rack: bool
    node_leaf_m: float
    inter_switch_m: float
    node_leaf_media: MediaClass
    inter_switch_media: MediaClass
    appliance_racks: int = 0

    @property
    def switch_racks(self) -> int:
        """Network racks: those of the switches and those holding only appliances."""
        return self.leaf_racks + self.central_racks + self.appliance_racks

    @property
    def racks(self) -> int:
        """All racks of the fabric."""
        return self.server_racks + self.switch_racks


def classify(length_m: float, in_rack: bool) -> MediaClass:
    """Media class of a run: copper inside a rack, multimode up to 50 m, single-mode beyond."""
    if in_rack:
        return MediaClass.COPPER
    return MediaClass.MULTIMODE if length_m <= MULTIMODE_REACH_M else MediaClass.SINGLE_MODE


def switches_per_rack(plan: Plan) -> int:
    """Switches one network rack holds."""
    return plan.request.rack_units // plan.request.switch_rack_units


def is_top_of_rack(plan: Plan) -> bool:
    """Leaves go in their servers' rack when each leaf group fits, unsplit, in one rack."""
    spr, n = plan.request.servers_per_rack, plan.request.nodes
    if plan.sus == 1:
        return n <= spr
    return plan.su_nodes <= spr and spr % plan.su_nodes == 0


def groups_per_row(plan: Plan) -> int:
    """Leaf groups per row: one SU for rail designs, else as many as fill ROW_SERVER_RACKS racks."""
    if plan.request.topology in (TopologyKind.RAIL_OPTIMIZED, TopologyKind.RAIL_ONLY):
        return 1
    return max(1, ROW_SERVER_RACKS * plan.request.servers_per_rack // plan.su_nodes)


def _appliance_racks(plan: Plan, racks: int, switches: int) -> int:
    """Network racks added for the management appliances: none where the free units of the
    ``racks`` network racks holding ``switches`` switches take them, else enough for the rest."""
    req = plan.request
    if not req.appliance_units:
        return 0
    free = racks * req.rack_units - switches * req.switch_rack_units
    return math.ceil(max(0, req.appliance_units - free) / req.rack_units)


def layout_for(plan: Plan) -> Layout:
    """Racks, runs and media of ``plan`` under the module's floor-layout assumption."""
    req = plan.request
    if plan.tiers == 0:
        return Layout(0, 0, 0, 0, 0, False, 0.0, 0.0, MediaClass.PROVIDER, MediaClass.PROVIDER)
    spr = req.servers_per_rack
    server_racks = math.ceil(req.nodes / spr)
    tor = is_top_of_rack(plan)
    gpr = groups_per_row(plan)
    rows = math.ceil(plan.sus / gpr)
    per_rack = switches_per_rack(plan)
    leaves_per_group = plan.leaves // plan.sus
    if tor:
        leaf_racks, row_leaf_racks = 0, 0
    else:
        last_row = plan.sus - (rows - 1) * gpr
        row_leaf_racks = math.ceil(gpr * leaves_per_group / per_rack)
        leaf_racks = (rows - 1) * row_leaf_racks + math.ceil(last_row * leaves_per_group / per_rack)
    central = math.ceil((plan.spines + plan.cores) / per_rack)
    appliance_racks = _appliance_racks(plan, leaf_racks + central, (0 if tor else plan.leaves) + plan.spines + plan.cores)
    if tor:
        node_leaf = IN_RACK_M
    else:
        row_servers = min(gpr * plan.su_nodes, req.nodes)
        row_racks = math.ceil(row_servers / spr) + row_leaf_racks
        node_leaf = row_racks / 2 * RACK_WIDTH_M + 2 * DROP_M
    total = server_racks + leaf_racks + central
    inter = math.sqrt(total * RACK_WIDTH_M * ROW_PITCH_M) + 2 * DROP_M if plan.tiers >= 2 else 0.0
    return Layout(
        server_racks=server_racks,
        leaf_racks=leaf_racks,
        central_racks=central,
        rows=rows,
        groups_per_row=gpr,
        top_of_rack=tor,
        node_leaf_m=round(node_leaf, 2),
        inter_switch_m=round(inter, 2),
        node_leaf_media=classify(round(node_leaf, 2), tor),
        inter_switch_media=classify(round(inter, 2), False),
        appliance_racks=appliance_racks,
    )
