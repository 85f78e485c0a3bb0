"""What fabric to build: a catalog-independent request, and helpers that fill it from catalog entries."""

from __future__ import annotations

__all__ = [
    "FabricRequest",
    "request_for",
    "request_for_cloud",
    "DEFAULT_SERVERS_PER_RACK",
    "DEFAULT_RACK_UNITS",
]

import math
from dataclasses import dataclass

from designer.catalog.types import CloudInstance, Nic, Server, Switch
from designer.errors import TopologyError
from designer.topology import sizing
from designer.topology.schema import TopologyKind

# NVIDIA DGX SuperPOD H100 RA (RA-11333-001): "A rack holds 1, 2 or 4 DGX H100"; the example SU
# layout puts 4 per rack (network.md 1.1). Used only when neither a count nor a rack power is given.
DEFAULT_SERVERS_PER_RACK = 4
# EIA-310 full-height rack; all 42U taken as usable for switches (an estimate: PDUs mount at the
# back, patch panels are not modelled).
DEFAULT_RACK_UNITS = 42
_RATE_TOLERANCE_BPS = 1.0


@dataclass(frozen=True, slots=True)
class FabricRequest:
    """A fabric to size: topology, server side, switch side, and floor-layout inputs.

    Construction validates every field and that the fabric fits in at most three tiers; it raises
    :class:`~designer.errors.TopologyError` otherwise.

    Attributes:
        topology: How the NICs are wired (:class:`TopologyKind`).
        nodes: Servers (count).
        gpus_per_node: GPUs per server (count).
        nics_per_node: Compute NIC ports per server, one per rail (count).
        nic_rate_Bps: Rate of one NIC port, bytes/s, one direction.
        switch_ports: Logical switch ports at the link rate, after breakout (count). Unused (0)
            for ``cloud``.
        switch_port_rate_Bps: Rate of one logical switch port, bytes/s. Every link of the fabric
            runs at this rate, so it must equal ``nic_rate_Bps`` (mixed-rate fabrics are not
            modelled); kept so each side states its rate.
        ports_per_cage: Logical switch ports per physical cage (2 for twin-port OSFP: a 64-port
            NDR switch has 32 cages). ``switch_ports`` must be a multiple of it.
        node_cages: Cages on the server for the compute NICs (DGX H100: 4 twin-port OSFP for 8
            NICs); ``None`` means one cage per NIC port. Must divide ``nics_per_node``.
        oversubscription: Leaf downlink-to-uplink ratio r of r:1 (>= 1; 1 is non-blocking). The
            built ratio is at most this one (uplinks are rounded up).
        su_nodes: Servers per scalable unit, i.e. per leaf group: rail designs put one NIC of
            each of these servers on the leaf of its rail; the fat tree puts all NICs of this many
            servers on one leaf. ``None`` takes the largest a leaf's downlinks allow (SuperPOD's
            32 for 64-port switches).
        servers_per_rack: Servers per rack (count).
        reserved_leaf_ports: Leaf ports reserved for management appliances across the whole fabric
            (the SuperPOD's 4 UFM ports); they take free leaf downlink ports.
        switch_rack_units: Height of one switch (rack units).
        rack_units: Usable rack units of a network rack.
        nodes_per_domain: Nodes (compute trays) per scale-up domain: 18 for an NVL72 rack, 1
            when the node is the whole domain (an 8-GPU server). Drawings group by it.
        appliance_units: Rack units of the management appliances (the SuperPOD's 4 1U UFM
            appliances), placed in the network racks' free units.
    """

    topology: TopologyKind
    nodes: int
    gpus_per_node: int
    nics_per_node: int
    nic_rate_Bps: float
    switch_ports: int
    switch_port_rate_Bps: float
    ports_per_cage: int = 1
    node_cages: int | None = None
    oversubscription: float = 1.0
    su_nodes: int | None = None
    servers_per_rack: int = DEFAULT_SERVERS_PER_RACK
    reserved_leaf_ports: int = 0
    switch_rack_units: int = 1
    rack_units: int = DEFAULT_RACK_UNITS
    nodes_per_domain: int = 1
    appliance_units: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.topology, TopologyKind):
            try:
                object.__setattr__(self, "topology", TopologyKind(self.topology))
            except ValueError:
                known = ", ".join(k.value for k in TopologyKind)
                raise TopologyError(f"unknown topology {self.topology!r}; expected one of {known}") from None
        _check_int(self.nodes, "nodes", 1)
        _check_int(self.gpus_per_node, "gpus_per_node", 1)
        _check_int(self.nics_per_node, "nics_per_node", 1)
        if not (math.isfinite(self.nic_rate_Bps) and self.nic_rate_Bps > 0):
            raise TopologyError(f"nic_rate_Bps must be a positive rate, got {self.nic_rate_Bps!r}")
        if abs(self.switch_port_rate_Bps - self.nic_rate_Bps) >= _RATE_TOLERANCE_BPS:
            raise TopologyError(
                f"switch ports run at {self.switch_port_rate_Bps * 8 / 1e9:g} Gb/s but the NICs at "
                f"{self.nic_rate_Bps * 8 / 1e9:g} Gb/s; give the switch's port count at the NIC rate "
                "(after breakout)"
            )
        _check_int(self.ports_per_cage, "ports_per_cage", 1)
        if self.node_cages is not None:
            _check_int(self.node_cages, "node_cages", 1)
            if self.nics_per_node % self.node_cages:
                raise TopologyError(
                    f"{self.nics_per_node} NIC ports do not split evenly over {self.node_cages} server cages"
                )
        r = self.oversubscription
        if isinstance(r, bool) or not isinstance(r, (int, float)) or not math.isfinite(r) or r < 1.0:
            raise TopologyError(f"oversubscription must be a ratio r >= 1 (r:1 at the leaf), got {r!r}")
        if self.su_nodes is not None:
            _check_int(self.su_nodes, "su_nodes", 1)
        _check_int(self.servers_per_rack, "servers_per_rack", 1)
        _check_int(self.reserved_leaf_ports, "reserved_leaf_ports", 0)
        _check_int(self.switch_rack_units, "switch_rack_units", 1)
        _check_int(self.rack_units, "rack_units", 1)
        _check_int(self.appliance_units, "appliance_units", 0)
        if self.switch_rack_units > self.rack_units:
            raise TopologyError(f"a {self.switch_rack_units}U switch does not fit a {self.rack_units}U rack")
        if self.topology is TopologyKind.CLOUD:
            return
        _check_int(self.switch_ports, "switch_ports", 2)
        if self.switch_ports % self.ports_per_cage:
            raise TopologyError(
                f"{self.switch_ports} switch ports do not fill whole cages of {self.ports_per_cage} ports"
            )
        # Sizing raises TopologyError when the fabric cannot be built (too many nodes, leaf too small).
        sizing.plan_fabric(self)

    @property
    def gpus(self) -> int:
        """GPUs in the fabric."""
        return self.nodes * self.gpus_per_node

    @property
    def endpoints(self) -> int:
        """Compute NIC ports in the fabric."""
        return self.nodes * self.nics_per_node

    @property
    def node_ports_per_cage(self) -> int:
        """NIC ports per server cage (2 on DGX H100)."""
        return self.nics_per_node // (self.node_cages or self.nics_per_node)

    @property
    def cages_per_node(self) -> int:
        """Compute cages per server."""
        return self.node_cages or self.nics_per_node


def _check_int(value: object, name: str, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise TopologyError(f"{name} must be an integer >= {minimum}, got {value!r}")


def _servers_per_rack(server: Server, servers_per_rack: int | None, rack_power_w: float | None,
                      rack_units: int) -> int:
    if servers_per_rack is not None:
        return servers_per_rack
    if rack_power_w is None:
        return DEFAULT_SERVERS_PER_RACK
    by_power = int(rack_power_w // server.power_w) if server.power_w > 0 else rack_units
    by_space = rack_units // max(server.rack_units, 1)
    fit = min(by_power, by_space)
    if fit < 1:
        raise TopologyError(
            f"one {server.name} ({server.power_w / 1e3:g} kW, {server.rack_units}U) does not fit a rack of "
            f"{rack_power_w / 1e3:g} kW and {rack_units}U"
        )
    return fit


def request_for(
    server: Server,
    nic: Nic,
    switch: Switch,
    topology: TopologyKind | str,
    nodes: int,
    oversubscription: float = 1.0,
    *,
    su_nodes: int | None = None,
    servers_per_rack: int | None = None,
    rack_power_w: float | None = None,
    reserved_leaf_ports: int = 0,
    rack_units: int = DEFAULT_RACK_UNITS,
    appliance_units: int = 0,
) -> FabricRequest:
    """Fill a :class:`FabricRequest` from catalog entries.

    The switch's logical port count at the NIC rate comes from ``switch.ports_at`` (breakout, e.g.
    128x400G on a 64x800G SN5600), and the ports per cage from that count over ``switch.cages``.
    Servers per rack: ``servers_per_rack`` if given, else as many as ``rack_power_w`` and the rack's
    units allow, else :data:`DEFAULT_SERVERS_PER_RACK`.

    Args:
        server: The GPU server; its ``nics`` are the rails, ``nic_cages`` its compute cages. A
            rack-scale system (``compute_trays`` > 1) is sized by its trays: ``nodes`` systems
            are ``nodes * compute_trays`` fabric nodes, each with its share of GPUs, NICs and cages.
        nic: The server's compute NIC (must be ``server.nic``).
        switch: The fabric switch.
        topology: Topology kind (not ``cloud``; see :func:`request_for_cloud`).
        nodes: Servers (rack-scale systems: racks).
        oversubscription: r of r:1 at the leaf.
        su_nodes: Servers per scalable unit (``None``: the largest a leaf allows).
        servers_per_rack: Servers per rack.
        rack_power_w: Rack power budget, W, used when ``servers_per_rack`` is not given.
        reserved_leaf_ports: Leaf ports for management appliances (UFM).
        rack_units: Usable rack units per rack.
        appliance_units: Rack units of those appliances (in the network racks).

    Returns:
        The validated request.

    Raises:
        TopologyError: The switch cannot run the NIC's rate or protocol, or the fabric cannot be
            built as asked.
    """
    kind = TopologyKind(topology)
    if kind is TopologyKind.CLOUD:
        raise TopologyError("a cloud fabric comes with its instance; use request_for_cloud")
    if nic.name != server.nic:
        raise TopologyError(f"server {server.name} has compute NIC {server.nic!r}, not {nic.name!r}")
    if switch.protocol not in nic.protocols:
        speaks = ", ".join(sorted(p.value for p in nic.protocols))
        raise TopologyError(f"switch {switch.name} speaks {switch.protocol.value}; NIC {nic.name} speaks {speaks}")
    ports = switch.ports_at(nic.rate_Bps)
    if ports == 0:
        rates = sorted({switch.port_rate_Bps, *switch.breakout})
        listed = ", ".join(f"{r * 8 / 1e9:g}" for r in rates)
        raise TopologyError(
            f"switch {switch.name} cannot run ports at {nic.rate_Bps * 8 / 1e9:g} Gb/s (it runs {listed} Gb/s)"
        )
    per_cage = max(1, ports // switch.cages) if switch.cages > 0 else 1
    # The fabric connects what carries the NICs: the server, or each compute tray of a rack-scale
    # system (an NVL72's 18 trays of 4 GPUs and 4 NICs), whose trays fill its own rack whatever the
    # facility's rack power (the rack is the system: 120-140 kW, not a 40 kW budget).
    trays = server.compute_trays
    if trays > 1:
        per_rack = trays
    else:
        per_rack = _servers_per_rack(server, servers_per_rack, rack_power_w, rack_units)
    return FabricRequest(
        topology=kind,
        nodes=nodes * trays,
        gpus_per_node=server.gpus // trays,
        nics_per_node=server.nics // trays,
        nic_rate_Bps=nic.rate_Bps,
        switch_ports=ports,
        switch_port_rate_Bps=nic.rate_Bps,
        ports_per_cage=per_cage,
        node_cages=server.nic_cages // trays if server.nic_cages > 0 else None,
        oversubscription=float(oversubscription),
        su_nodes=su_nodes,
        servers_per_rack=per_rack,
        reserved_leaf_ports=reserved_leaf_ports,
        switch_rack_units=max(switch.rack_units, 1),
        rack_units=rack_units,
        nodes_per_domain=trays,
        appliance_units=appliance_units,
    )


def request_for_cloud(instance: CloudInstance, nodes: int) -> FabricRequest:
    """A ``cloud`` request: ``nodes`` instances on their provider's network.

    The instance's scale-out bandwidth is split into one rail per GPU (P5: 3,200 Gb/s as 8 x
    400 Gb/s), which is how the providers attach them (one NIC group per GPU).

    Raises:
        TopologyError: ``nodes`` is not a positive integer.
    """
    return FabricRequest(
        topology=TopologyKind.CLOUD,
        nodes=nodes,
        gpus_per_node=instance.gpus,
        nics_per_node=instance.gpus,
        nic_rate_Bps=instance.network_Bps / instance.gpus,
        switch_ports=0,
        switch_port_rate_Bps=instance.network_Bps / instance.gpus,
    )
