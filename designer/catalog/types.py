"""Typed, immutable catalog entries: GPUs, servers, NICs, switches, cables, optics, cloud instances.

Every field is in SI units (bytes, bytes/s, seconds, watts, US dollars, US dollars per second).
``designer.catalog.load`` parses the YAML files into these; the rest of the package only sees these.
"""

from __future__ import annotations

__all__ = ["FabricKind", "Protocol", "MediaKind", "Connector", "CAGES", "FIBER_CONNECTORS", "Provenance",
           "Gpu", "Nic", "Switch", "Cable", "Transceiver", "Server", "CloudInstance", "FabricProfile",
           "Facility", "Support", "Licence", "PriceBook", "Storage", "Appliance", "Catalog", "KINDS",
           "PRICE_BASES"]

from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType
from typing import Mapping

# Media and connectors live in their own module (the port model); re-exported here with the rest.
from designer.catalog.media import CAGES, FIBER_CONNECTORS, Connector, MediaKind


class FabricKind(str, Enum):
    """Scale-out network technology. Cloud providers' networks are kinds of their own."""

    ETHERNET = "ethernet"  # Ethernet with the kernel TCP stack
    ROCE = "roce"  # RDMA over Converged Ethernet v2 (lossless Ethernet, PFC/ECN)
    INFINIBAND = "infiniband"
    EFA = "efa"  # AWS Elastic Fabric Adapter (SRD transport)
    TCPX = "gpudirect-tcpx"  # GCP A3 High
    TCPXO = "gpudirect-tcpxo"  # GCP A3 Mega


class Protocol(str, Enum):
    """What a switch or NIC port speaks on the wire."""

    ETHERNET = "ethernet"
    INFINIBAND = "infiniband"


# What a price is: a vendor's published list price, what a buyer pays a reseller for one order
# (street), what a hyperscaler pays in bulk (volume), or a quote the buyer holds; ``owned`` marks
# hardware the buyer already has (sunk cost). Comparing designs only makes sense on one basis.
PRICE_BASES = ("list", "street", "volume", "quote", "owned")


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a catalog figure comes from. ``estimate`` entries say why in ``note``; ``price_basis``
    says what kind of price the entry's price is (one of :data:`PRICE_BASES`, "" when unstated)."""

    source: str
    as_of: str
    estimate: bool = False
    note: str = ""
    price_basis: str = ""


@dataclass(frozen=True, slots=True)
class Gpu:
    """An accelerator. Peak rates are dense (no sparsity)."""

    name: str
    description: str
    vendor: str
    bf16_flops: float  # FLOP/s, dense
    fp8_flops: float | None  # FLOP/s, dense; None where the GPU has no FP8 tensor cores
    hbm_bytes: float
    hbm_Bps: float
    scaleup_Bps: float  # NVLink/Infinity Fabric bandwidth per GPU, one direction
    scaleup_kind: str  # nvlink3 | nvlink4 | nvlink5 | infinity-fabric
    power_w: float  # TDP
    price_usd: float | None
    matmul_efficiency: float  # achievable dense BF16 matmul / peak (measured MAMF where published)
    provenance: Provenance
    # The GPU's own link to host memory, one direction (NVLink-C2C on Grace superchips); None: none
    # of its own (PCIe, shared with the NICs): activations are not offloaded (designer.perf.offload)
    host_Bps: float | None = None
    host_memory_bytes: float | None = None  # host memory a GPU may offload into (its share of its CPU's)


@dataclass(frozen=True, slots=True)
class Nic:
    """A network adapter. ``rate_Bps`` is per port."""

    name: str
    description: str
    rate_Bps: float
    ports: int
    protocols: frozenset[Protocol]
    rdma: bool  # RoCE / InfiniBand verbs capable
    price_usd: float
    power_w: float
    provenance: Provenance
    speeds_Bps: tuple[float, ...] = ()  # lower per-port rates the NIC can also run at (e.g. 400G NIC at 100GbE)
    vendor: str = ""  # whose support contract covers it (a ``support`` entry's name)
    # The port's cage, its electrical lanes and their fastest rate (ConnectX-7 OSFP: 4 x 100G);
    # filled from the rate by the catalog loader where a user entry omits them (docs/catalogs.md).
    cage: Connector | None = None
    lanes: int = 0
    lane_Bps: float = 0.0

    def rates(self) -> tuple[float, ...]:
        """Every per-port rate the NIC runs at, fastest first."""
        return tuple(sorted({self.rate_Bps, *self.speeds_Bps}, reverse=True))


@dataclass(frozen=True, slots=True)
class Switch:
    """A fabric switch. ``ports`` at ``port_rate_Bps``; ``breakout`` maps a lower rate to its port count."""

    name: str
    description: str
    protocol: Protocol
    ports: int
    port_rate_Bps: float
    cages: int  # physical cages (a 64-port NDR switch has 32 twin-port OSFP cages)
    breakout: Mapping[float, int]  # rate_Bps -> logical ports at that rate (e.g. 400G -> 128 on SN5600)
    latency_s: float  # port-to-port
    in_network_reduction: bool  # SHARP-class in-switch reduction
    price_usd: float | None  # None: no known price (counted as unpriced, never as $0)
    power_w: float
    rack_units: int
    provenance: Provenance
    vendor: str = ""  # whose support contract covers it (a ``support`` entry's name)
    # One cage: its form, electrical lanes and their fastest rate (QM9700: OSFP, 8 x 100G, two
    # 400G ports); filled from the rate by the catalog loader where a user entry omits them.
    cage: Connector | None = None
    lanes: int = 0
    lane_Bps: float = 0.0
    # Uplink ports of another form than the data cages (SN2201: 4 x 100G QSFP28 beside its 48
    # RJ45 ports): their count, cage, lanes and fastest lane rate (0 / None: none).
    uplinks: int = 0
    uplink_cage: Connector | None = None
    uplink_lanes: int = 0
    uplink_lane_Bps: float | None = None

    def ports_at(self, rate_Bps: float) -> int:
        """Logical ports when every port runs at ``rate_Bps`` (native or broken out); 0 if impossible."""
        if abs(rate_Bps - self.port_rate_Bps) < 1.0:
            return self.ports
        for rate, count in self.breakout.items():
            if abs(rate - rate_Bps) < 1.0:
                return count
        return 0


@dataclass(frozen=True, slots=True)
class Cable:
    """A cable: DAC, ACC or AOC (ends included), a fiber patch cord (needs transceivers) or Cat6.

    ``connector`` is the end that fills a cage (DAC/ACC/AOC, Cat6) or takes an optic's optical
    connector (fiber cords); ``far_connector`` the other end(s). A breakout cable has ``breakout``
    far ends of ``lanes / breakout`` lanes each (an OSFP 2x400G to two 400G cages: breakout 2);
    ``lanes`` and ``lane_Bps`` are those of the near end. ``rate_Bps`` is the near end's whole rate.
    """

    name: str
    description: str
    media: MediaKind
    rate_Bps: float
    reach_m: float
    price_usd: float
    power_w: float
    provenance: Provenance
    connector: Connector = Connector.OSFP
    far_connector: Connector | None = None  # None: as ``connector``
    protocols: frozenset[Protocol] = frozenset({Protocol.INFINIBAND, Protocol.ETHERNET})
    lanes: int = 1
    lane_Bps: float = 0.0
    breakout: int = 1

    @property
    def far(self) -> Connector:
        """The connector of each far end."""
        return self.far_connector or self.connector


@dataclass(frozen=True, slots=True)
class Transceiver:
    """A pluggable optic. ``logical_ports`` is 2 for twin-port OSFP (2x400G in one cage).

    Port model: it fills a ``connector`` cage with ``lanes`` electrical lanes at ``lane_Bps``,
    drives ``media`` fiber through ``optical_ports`` optical connectors of kind ``fiber`` (a
    twin-port OSFP has two MPO-12), each carrying ``lanes / optical_ports`` lanes; ``split`` is 2
    where one optical port may run half its lanes (NVIDIA's 200G mode over 1:2 splitter fibers).
    ``optical_lanes`` / ``optical_lane_Bps`` describe the fiber side where a gearbox makes it differ."""

    name: str
    description: str
    rate_Bps: float  # per logical port
    logical_ports: int
    reach_m: float
    price_usd: float
    power_w: float
    provenance: Provenance
    connector: Connector = Connector.OSFP
    protocols: frozenset[Protocol] = frozenset({Protocol.INFINIBAND, Protocol.ETHERNET})
    lanes: int = 1
    lane_Bps: float = 0.0
    media: MediaKind = MediaKind.MULTIMODE
    fiber: Connector = Connector.MPO_12
    optical_ports: int = 1
    split: int = 1
    # The fiber side where a gearbox changes it (a QSFP-DD 400G-DR4: 8 x 50G in, 4 x 100G out);
    # 0: as the electrical side.
    optical_lanes: int = 0
    optical_lane_Bps: float = 0.0


@dataclass(frozen=True, slots=True)
class Server:
    """A GPU server. ``price_usd`` is the complete system as quoted (GPUs and NICs included)."""

    name: str
    description: str
    gpu: str  # Gpu name
    gpus: int
    nic: str  # compute (scale-out) Nic name
    nics: int  # compute NIC ports, one per rail
    nic_cages: int  # physical compute cages on the chassis (DGX H100: 4 twin-port OSFP for 8 NICs)
    storage_nic: str | None
    storage_nics: int  # storage / in-band adapters: half their ports on the storage fabric, half in-band
    power_w: float  # maximum system power
    rack_units: int
    price_usd: float | None  # None: no known price (counted as unpriced, never as $0)
    provenance: Provenance
    vendor: str = ""  # whose support contract covers it (a ``support`` entry's name)
    # Measured draw while training, and idle; None: the facility's fractions of ``power_w``.
    training_power_w: float | None = None
    idle_power_w: float | None = None
    # The scale-up (NVLink) domain and how it is packaged (designer.catalog.domain). Defaults
    # describe an 8-GPU server: one domain of all its GPUs in one chassis, at the GPU's own
    # scale-up bandwidth. A rack-scale system (GB200 NVL72) is one rack of ``compute_trays``
    # trays joined by ``switch_trays`` NVLink switch trays into one domain.
    domain_gpus: int = 0  # GPUs per scale-up domain (0: all the server's GPUs)
    scaleup_Bps: float | None = None  # per GPU, one direction (None: the GPU's)
    scaleup_latency_s: float | None = None  # one NVLink step (None: the GPU's scale-up kind's)
    in_switch_reduction: bool | None = None  # NVLS in the domain's switches (None: the kind's default)
    compute_trays: int = 1  # units the fabric's NICs hang off: trays of a rack, or the one chassis
    switch_trays: int = 0  # NVLink switch trays (0: switches inside the chassis)
    cpus: int = 0  # host CPUs (0: not stated)
    cooling: str = "air"  # air | liquid | hybrid (liquid needs coolant distribution capacity)
    # What the storage fabric of the server's reference architecture runs (RA-11333: InfiniBand
    # for DGX H100; the B200 / GB200 RAs: Ethernet); designer.topology.networks sizes it.
    storage_protocol: Protocol = Protocol.ETHERNET


@dataclass(frozen=True, slots=True)
class CloudInstance:
    """A rentable GPU instance with its provider's network."""

    name: str
    description: str
    provider: str
    gpu: str  # Gpu name
    gpus: int
    network: FabricKind
    network_Bps: float  # scale-out bandwidth per instance
    price_on_demand_usd_per_s: float | None  # None: not sold on demand (capacity blocks only, or unknown)
    price_reserved_1y_usd_per_s: float | None  # per instance-hour, committed for a whole year
    price_reserved_3y_usd_per_s: float | None  # per instance-hour, committed for three years
    region: str
    provenance: Provenance
    price_capacity_block_usd_per_s: float | None = None  # a block reserved for fixed dates, paid up front
    max_instances: int | None = None  # instances one buyer can get on demand or reserved (None: no cap known)
    capacity_block_max_instances: int | None = None  # instances across capacity blocks
    capacity_block_max_s: float | None = None  # longest capacity block
    domain_gpus: int = 0  # GPUs per scale-up domain (0: the instance's GPUs; UltraServers span more)

    def price_usd_per_s(self, pricing: str) -> float | None:
        """The price per instance-second under a pricing model (``on_demand``, ``reserved_1y``,
        ``reserved_3y``, ``capacity_block``); None when the catalog has none."""
        return {"on_demand": self.price_on_demand_usd_per_s, "reserved_1y": self.price_reserved_1y_usd_per_s,
                "reserved_3y": self.price_reserved_3y_usd_per_s,
                "capacity_block": self.price_capacity_block_usd_per_s}[pricing]

    def pricing_models(self) -> tuple[str, ...]:
        """The pricing models this instance has a price for."""
        return tuple(p for p in ("on_demand", "reserved_1y", "reserved_3y", "capacity_block")
                     if self.price_usd_per_s(p) is not None)


@dataclass(frozen=True, slots=True)
class FabricProfile:
    """Per-technology constants for the communication model."""

    name: str  # a FabricKind value
    kind: FabricKind
    host_latency_s: float  # NIC + host stack, one way, small message
    efficiency: float  # achieved collective bus bandwidth / line rate, large messages
    in_network_reduction: bool  # SHARP-class reduction available
    lossless: bool
    provenance: Provenance
    # Host-stack ceilings of transports whose data pass through the CPU (kernel TCP): the most one
    # NIC and one host carry, whatever the line rate (None: no ceiling; designer.perf.transport).
    nic_cap_Bps: float | None = None
    host_cap_Bps: float | None = None


@dataclass(frozen=True, slots=True)
class Facility:
    """Site and ownership defaults: electricity, PUE, racks, the data-centre space and how owned
    hardware is kept (installation, spares, power under load, useful life). A spec's ``facility:``
    block overrides any of them. Defaults here reproduce a bare model (nameplate power, no space
    charge, no spares, no residual value) for entries that give only the first fields."""

    name: str
    electricity_usd_per_j: float
    pue: float
    rack_power_w: float
    rack_units: int
    rack_price_usd: float
    installation_fraction: float  # of equipment, once
    maintenance_fraction_per_year: float | None  # flat support share of equipment per year; None: per vendor
    provenance: Provenance
    space: str = "colocation"  # colocation (rented per kW) | owned (built per MW, amortised)
    colocation_usd_per_w_s: float = 0.0  # colocation fee per watt of IT capacity per second
    build_usd_per_w: float = 0.0  # owned: construction cost per watt of IT (critical) capacity
    build_life_s: float = 15 * 365 * 86400.0  # owned: life over which the build is amortised
    training_power_fraction: float = 1.0  # server draw while training at full utilization / rated power
    idle_power_fraction: float = 1.0  # server draw when idle / rated power
    useful_life_s: float = 0.0  # hardware's book life: residual value falls linearly to 0 over it (0: none)
    spares: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))  # BOM category -> fraction
    storage_bytes_per_token: float = 4.0  # dataset bytes per training token kept on the file system
    storage_checkpoints_kept: int = 2  # checkpoints kept on the file system per workload
    storage_read_Bps_per_node: float = 0.0  # baseline file-system read bandwidth per node
    storage_write_Bps_per_node: float = 0.0  # baseline write bandwidth per node (checkpoints may need more)
    liquid_cooling_usd_per_w: float = 0.0  # coolant distribution (CDU) capacity per W of liquid-cooled IT load


@dataclass(frozen=True, slots=True)
class Support:
    """A hardware support contract: a share of the purchase price per year, for one vendor's parts."""

    name: str  # a vendor (``nvidia``, ``oem``, ``arista``, ...) or ``other-vendors``
    description: str
    fraction_per_year: float
    provenance: Provenance


@dataclass(frozen=True, slots=True)
class Licence:
    """A software licence charged per GPU per year (optional: a spec's ``licences:`` names it)."""

    name: str
    description: str
    usd_per_gpu_s: float  # price per GPU per second of the horizon
    provenance: Provenance


@dataclass(frozen=True, slots=True)
class Storage:
    """A parallel file-system building block: bandwidth, usable capacity, power and price of one."""

    name: str
    description: str
    read_Bps: float
    write_Bps: float
    capacity_bytes: float  # usable
    power_w: float
    rack_units: int
    price_usd: float | None
    provenance: Provenance
    vendor: str = ""
    ports: int = 0  # network ports of one block on the storage fabric (0: not stated)
    port_rate_Bps: float = 0.0  # per port
    # One port's cage, lanes and their fastest rate (None / 0: the common form of port_rate).
    cage: Connector | None = None
    lanes: int = 0
    lane_Bps: float = 0.0


@dataclass(frozen=True, slots=True)
class Appliance:
    """A management appliance attached to a fabric's leaves: the InfiniBand fabric manager (UFM)
    of the DGX SuperPOD (RA-11333 Table 7), with the adapter its fabric ports are on."""

    name: str
    description: str
    manages: Protocol  # the fabrics it serves (UFM: InfiniBand)
    per_fabric: int  # appliances one fabric gets (an HA pair: 2)
    nic: str  # Nic name of its fabric ports
    fabric_ports: int  # leaf ports one appliance takes
    power_w: float
    rack_units: int
    price_usd: float | None  # None: no known price (counted as unpriced, never as $0)
    provenance: Provenance
    vendor: str = ""
    port_rate_Bps: float = 0.0  # rate each fabric port runs (RA-11333 Table 8: NDR200); 0: the fabric's


@dataclass(frozen=True, slots=True)
class PriceBook:
    """A buyer's price book: per-vendor discounts off the catalog's prices and the currency reports
    show amounts in (``exchange_rate`` units of ``currency`` per US dollar). A spec's ``price_book:``
    names one; the model itself stays in US dollars."""

    name: str
    description: str
    currency: str  # ISO 4217 code, ``USD`` when only discounts are given
    exchange_rate: float  # units of currency per US dollar
    discounts: Mapping[str, float]  # vendor (or cloud provider, or ``other-vendors``) -> share off
    provenance: Provenance


KINDS = ("gpu", "nic", "switch", "cable", "transceiver", "server", "cloud", "fabric", "facility", "support",
         "licence", "storage", "appliance", "price_book")


@dataclass(frozen=True, slots=True)
class Catalog:
    """All known entries by kind, then by name. Immutable; build a new one to change it."""

    gpus: Mapping[str, Gpu] = field(default_factory=lambda: MappingProxyType({}))
    nics: Mapping[str, Nic] = field(default_factory=lambda: MappingProxyType({}))
    switches: Mapping[str, Switch] = field(default_factory=lambda: MappingProxyType({}))
    cables: Mapping[str, Cable] = field(default_factory=lambda: MappingProxyType({}))
    transceivers: Mapping[str, Transceiver] = field(default_factory=lambda: MappingProxyType({}))
    servers: Mapping[str, Server] = field(default_factory=lambda: MappingProxyType({}))
    clouds: Mapping[str, CloudInstance] = field(default_factory=lambda: MappingProxyType({}))
    fabrics: Mapping[str, FabricProfile] = field(default_factory=lambda: MappingProxyType({}))
    facilities: Mapping[str, Facility] = field(default_factory=lambda: MappingProxyType({}))
    supports: Mapping[str, Support] = field(default_factory=lambda: MappingProxyType({}))
    licences: Mapping[str, Licence] = field(default_factory=lambda: MappingProxyType({}))
    storage: Mapping[str, Storage] = field(default_factory=lambda: MappingProxyType({}))
    appliances: Mapping[str, Appliance] = field(default_factory=lambda: MappingProxyType({}))
    price_books: Mapping[str, PriceBook] = field(default_factory=lambda: MappingProxyType({}))
    digest: str = ""  # sha256 over the catalog files that were loaded, in load order
    dates: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))  # file -> newest as_of
    files: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))  # file -> sha256 of its bytes

    def by_kind(self, kind: str) -> Mapping[str, object]:
        """The mapping of entries of one kind (one of :data:`KINDS`)."""
        return {
            "gpu": self.gpus, "nic": self.nics, "switch": self.switches, "cable": self.cables,
            "transceiver": self.transceivers, "server": self.servers, "cloud": self.clouds,
            "fabric": self.fabrics, "facility": self.facilities, "support": self.supports,
            "licence": self.licences, "storage": self.storage, "appliance": self.appliances,
            "price_book": self.price_books,
        }[kind]
