"""The catalog schema: per kind, each YAML key, the dataclass attribute it fills, its parser and
default; the value parsers (raw YAML value -> SI value, or ValueError with a message for people);
and the references checked once every file is merged. :mod:`designer.catalog.merge` applies it.
"""

from __future__ import annotations

__all__ = ["KINDS", "PLURALS", "REFERENCES", "REQUIRED", "Parser", "price_date", "hint", "text", "name_ref", "flag",
           "as_of", "price_basis", "SPARE_CATEGORIES"]

import difflib
import re
from dataclasses import dataclass
from datetime import date
from types import MappingProxyType
from typing import Any, Callable, Iterable

from designer.catalog.types import (
    CAGES, FIBER_CONNECTORS, KINDS as KIND_NAMES, PRICE_BASES, Cable, CloudInstance, Connector, FabricKind,
    Appliance, FabricProfile, Facility, Gpu, MediaKind, Licence, Nic, PriceBook, Protocol, Server, Storage, Support, Switch,
    Transceiver,
)
from designer.spec import rates, units
from designer.spec.yamlio import shown

_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
_AS_OF = re.compile(r"(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?")
_SCALEUP_KINDS = ("nvlink3", "nvlink4", "nvlink5", "infinity-fabric")
_COOLING = ("air", "liquid", "hybrid")


# --- value parsers: raw YAML value -> SI value, or ValueError with a message for people ---------

Parser = Callable[[Any], Any]


def hint(word: str, options: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest option, else ``""``.

    A name the word begins (``h100`` -> ``h100-sxm``) beats difflib's closest match (ratio >= 0.6).
    """
    word, names = str(word), sorted(set(map(str, options)))
    longer = sorted((n for n in names if word and n.startswith(word) and n != word), key=len)
    close = longer[:1] or difflib.get_close_matches(word, names, n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"expected non-empty text, got {shown(value)}")
    return value.strip()


def name_ref(value: Any) -> str:
    name = text(value)
    if not _NAME.fullmatch(name):
        raise ValueError(f"'{name}' is not a catalog name (lower case letters, digits, '.', '_', '-')")
    return name


def integer(minimum: int) -> Parser:
    def parse(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"expected a whole number, got {shown(value)}")
        if value < minimum:
            raise ValueError(f"must be at least {minimum}, got {value}")
        return value
    return parse


def positive(parse_unit: Parser) -> Parser:
    def parse(value: Any) -> float:
        number = parse_unit(value)
        if number <= 0:
            raise ValueError(f"must be positive, got {shown(value)}")
        return number
    return parse


def optional(parse: Parser) -> Parser:
    return lambda value: None if value is None else parse(value)


def flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false, got {shown(value)}")
    return value


def _pue(value: Any) -> float:
    # PUE = facility power / IT power, so it cannot be below 1 (The Green Grid definition).
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 1.0 <= value <= 5.0:
        raise ValueError(f"a PUE is a number between 1 and 5, got {shown(value)}")
    return float(value)


_LENGTH = {"m": 1.0, "cm": 0.01, "km": 1000.0}


def _length_m(value: Any) -> float:
    # designer.spec.units has no length parser; reach is the only length in the catalogs.
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-z]+)\s*", value) if isinstance(value, str) else None
    if not m or m.group(2) not in _LENGTH or float(m.group(1)) <= 0:
        raise ValueError(f"expected a positive length such as '30 m', got {shown(value)}")
    return float(m.group(1)) * _LENGTH[m.group(2)]


def _choice(options: Iterable[str], convert: Callable[[str], Any] = str) -> Parser:
    allowed = tuple(options)

    def parse(value: Any) -> Any:
        if value not in allowed:
            raise ValueError(f"unknown value {shown(value)}{hint(str(value), allowed)}; use one of {', '.join(allowed)}")
        return convert(value)
    return parse


def _protocols(value: Any) -> frozenset[Protocol]:
    if not isinstance(value, list) or not value:
        raise ValueError("expected a non-empty list such as [infiniband, ethernet]")
    pick = _choice([p.value for p in Protocol], Protocol)
    return frozenset(pick(v) for v in value)


def _media(value: Any) -> MediaKind:
    # ``fiber`` was the one fiber kind before cords said which fiber they are; an optic only
    # works over its own kind, so the catalog must say.
    if value == "fiber":
        raise ValueError("say which fiber: multimode or singlemode")
    return _choice([m.value for m in MediaKind], MediaKind)(value)


_CAGE = _choice([c.value for c in CAGES], Connector)
_FIBER = _choice([c.value for c in FIBER_CONNECTORS], Connector)
_CONNECTOR = _choice([c.value for c in Connector], Connector)


def _speeds(value: Any) -> tuple[float, ...]:
    """Lower per-port rates a NIC also runs at: a list of bandwidths (``[200 Gbps, 100 Gbps]``)."""
    if not isinstance(value, list) or not value:
        raise ValueError("expected a non-empty list of rates such as [200 Gbps, 100 Gbps]")
    return tuple(sorted({_BW(v) for v in value}, reverse=True))


def _breakout(value: Any) -> MappingProxyType:
    if not isinstance(value, dict):
        raise ValueError("expected a mapping of rate to port count, such as {200 Gbps: 128}")
    out = {_BW(rate): integer(1)(count) for rate, count in value.items()}
    return MappingProxyType(dict(sorted(out.items(), reverse=True)))


def price_basis(value: Any) -> str:
    """What kind of price an entry's price is: one of :data:`~designer.catalog.types.PRICE_BASES`."""
    return _choice(PRICE_BASES)(value)


# BOM categories a spares share may name (designer.design.bom.CATEGORIES less cloud and service).
SPARE_CATEGORIES = ("server", "gpu", "nic", "switch", "transceiver", "cable", "rack", "storage")


def _spares(value: Any) -> MappingProxyType:
    """Spare parts kept per BOM category, as a fraction of the parts bought: ``{transceiver: 3%}``."""
    if not isinstance(value, dict):
        raise ValueError("expected a mapping of BOM category to fraction, such as {transceiver: 3%}")
    pick = _choice(SPARE_CATEGORIES)
    return MappingProxyType({pick(k): units.parse_fraction(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))})


def _discounts(value: Any) -> MappingProxyType:
    """Per-vendor discounts off catalog prices: ``{nvidia: 18%, oem: 8%}``; each at least 0 and below 100%."""
    if not isinstance(value, dict) or not value:
        raise ValueError("expected a mapping of vendor to discount, such as {nvidia: 18%, arista: 30%}")
    out = {}
    for vendor, share in sorted(value.items(), key=lambda kv: str(kv[0])):
        fraction = units.parse_fraction(share)
        if fraction >= 1.0:
            raise ValueError(f"a discount of {shown(share)} leaves nothing to pay; it must be below 100%")
        out[name_ref(vendor)] = fraction
    return MappingProxyType(out)


def _currency(value: Any) -> str:
    code = text(value)
    if not re.fullmatch(r"[A-Z]{3}", code):
        raise ValueError(f"expected an ISO 4217 currency code such as EUR or GBP, got {shown(value)}")
    return code


def _exchange_rate(value: Any) -> float:
    """Units of the book's currency per US dollar: a plain positive number (``0.86``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1e6:
        raise ValueError(f"expected units of the currency per US dollar as a positive number such as 0.86, "
                         f"got {shown(value)}")
    return float(value)


def _rate(parse: Callable[[Any], float]) -> Parser:
    def convert(value: Any) -> float:
        try:
            return parse(value)
        except units.UnitError as exc:
            raise ValueError(str(exc)) from None
    return convert


def as_of(value: Any) -> str:
    text = str(value).strip() if isinstance(value, (str, int)) and not isinstance(value, bool) else ""
    if not _AS_OF.fullmatch(text):
        raise ValueError(f"expected a date YYYY, YYYY-MM or YYYY-MM-DD, got {shown(value)}")
    if price_date(text) > date.today():  # also rejects month 13 and the like
        # A figure cannot be known after today; a date in the future would also silence the
        # stale-price warning for ever (as_of: 9999-12-31).
        raise ValueError(f"{text} is in the future: as_of is the date the figure was known (today is "
                         f"{date.today().isoformat()})")
    return text


def price_date(as_of: str) -> date:
    """The first day of the period an ``as_of`` names: ``2024`` -> 2024-01-01, ``2024-08`` -> 2024-08-01.

    Taking the start of the period errs towards calling a price old, never new.
    """
    m = _AS_OF.fullmatch(as_of)
    if not m:
        raise ValueError(f"not a date: {shown(as_of)}")
    try:
        return date(int(m.group(1)), int(m.group(2) or 1), int(m.group(3) or 1))
    except ValueError as exc:
        raise ValueError(f"not a date: {shown(as_of)} ({exc})") from None


# --- the schema: YAML key -> (dataclass attribute, parser, default) per kind -----------------------

REQUIRED = object()


@dataclass(frozen=True, slots=True)
class _Field:
    key: str
    attr: str
    parse: Parser
    default: Any = REQUIRED


@dataclass(frozen=True, slots=True)
class _Kind:
    cls: type
    attr: str  # Catalog attribute
    fields: tuple[_Field, ...]


_BW = positive(units.parse_bandwidth)
_efficiency = positive(units.parse_fraction)  # in (0, 1]
_MONEY = units.parse_money
_POWER = units.parse_power
_DESC = _Field("description", "description", text)
# Whose support contract covers a part: the name of a ``support`` entry (``other-vendors`` when none matches).
_VENDOR = _Field("vendor", "vendor", name_ref, "")
_HOURLY = optional(positive(units.parse_hourly_price))

# A device's cage (NICs, switches): optional; the loader fills what a user entry omits from its rate
# (designer.catalog.ports.default_cage, documented in docs/catalogs.md).
_PORT_FIELDS = (_Field("cage", "cage", optional(_CAGE), None), _Field("lanes", "lanes", integer(1), 0),
                _Field("lane_rate", "lane_Bps", _BW, 0.0))

KINDS: dict[str, _Kind] = {
    "gpu": _Kind(Gpu, "gpus", (
        _DESC, _Field("vendor", "vendor", text), _Field("bf16", "bf16_flops", positive(units.parse_flops)),
        _Field("fp8", "fp8_flops", optional(positive(units.parse_flops)), None),
        _Field("hbm", "hbm_bytes", positive(units.parse_data_size)), _Field("hbm_bandwidth", "hbm_Bps", _BW),
        _Field("scaleup_bandwidth", "scaleup_Bps", _BW),
        _Field("scaleup_kind", "scaleup_kind", _choice(_SCALEUP_KINDS)),
        _Field("power", "power_w", positive(_POWER)), _Field("price", "price_usd", optional(_MONEY), None),
        _Field("matmul_efficiency", "matmul_efficiency", _efficiency),
        _Field("host_bandwidth", "host_Bps", optional(_BW), None),
        _Field("host_memory", "host_memory_bytes", optional(positive(units.parse_data_size)), None))),
    "nic": _Kind(Nic, "nics", (
        _DESC, _Field("rate", "rate_Bps", _BW), _Field("ports", "ports", integer(1)),
        _Field("protocols", "protocols", _protocols), _Field("rdma", "rdma", flag),
        _Field("price", "price_usd", _MONEY), _Field("power", "power_w", _POWER),
        _Field("speeds", "speeds_Bps", _speeds, ()), _VENDOR, *_PORT_FIELDS)),
    "switch": _Kind(Switch, "switches", (
        _DESC, _Field("protocol", "protocol", _choice([p.value for p in Protocol], Protocol)),
        _Field("ports", "ports", integer(1)), _Field("port_rate", "port_rate_Bps", _BW),
        _Field("cages", "cages", integer(1)), _Field("breakout", "breakout", _breakout, MappingProxyType({})),
        _Field("latency", "latency_s", positive(units.parse_duration)),
        _Field("in_network_reduction", "in_network_reduction", flag, False),
        _Field("price", "price_usd", optional(_MONEY)), _Field("power", "power_w", _POWER),
        _Field("rack_units", "rack_units", integer(1)), _VENDOR, *_PORT_FIELDS,
        _Field("uplinks", "uplinks", integer(0), 0), _Field("uplink_cage", "uplink_cage", optional(_CAGE), None),
        _Field("uplink_lanes", "uplink_lanes", integer(0), 0),
        _Field("uplink_lane_rate", "uplink_lane_Bps", optional(_BW), None))),
    "cable": _Kind(Cable, "cables", (
        _DESC, _Field("media", "media", _media),
        _Field("rate", "rate_Bps", _BW), _Field("reach", "reach_m", _length_m),
        _Field("price", "price_usd", _MONEY), _Field("power", "power_w", _POWER, 0.0),
        _Field("connector", "connector", _CONNECTOR), _Field("far_connector", "far_connector", optional(_CONNECTOR), None),
        _Field("protocols", "protocols", _protocols), _Field("lanes", "lanes", integer(1)),
        _Field("lane_rate", "lane_Bps", _BW), _Field("breakout", "breakout", integer(1), 1))),
    "transceiver": _Kind(Transceiver, "transceivers", (
        _DESC, _Field("rate", "rate_Bps", _BW), _Field("logical_ports", "logical_ports", integer(1), 1),
        _Field("reach", "reach_m", _length_m), _Field("price", "price_usd", _MONEY),
        _Field("power", "power_w", _POWER), _Field("connector", "connector", _CAGE),
        _Field("protocols", "protocols", _protocols), _Field("lanes", "lanes", integer(1)),
        _Field("lane_rate", "lane_Bps", _BW), _Field("media", "media", _media), _Field("fiber", "fiber", _FIBER),
        _Field("optical_ports", "optical_ports", integer(1), 1), _Field("split", "split", integer(1), 1),
        _Field("optical_lanes", "optical_lanes", integer(1), 0),
        _Field("optical_lane_rate", "optical_lane_Bps", _BW, 0.0))),
    "server": _Kind(Server, "servers", (
        _DESC, _Field("gpu", "gpu", name_ref), _Field("gpus", "gpus", integer(1)),
        _Field("nic", "nic", name_ref), _Field("nics", "nics", integer(1)),
        _Field("nic_cages", "nic_cages", integer(1)),
        _Field("storage_nic", "storage_nic", optional(name_ref), None),
        _Field("storage_nics", "storage_nics", integer(0), 0), _Field("power", "power_w", positive(_POWER)),
        _Field("rack_units", "rack_units", integer(1)), _Field("price", "price_usd", optional(_MONEY)), _VENDOR,
        _Field("training_power", "training_power_w", optional(positive(_POWER)), None),
        _Field("idle_power", "idle_power_w", optional(positive(_POWER)), None),
        _Field("domain_gpus", "domain_gpus", integer(1), 0),
        _Field("scaleup_bandwidth", "scaleup_Bps", optional(_BW), None),
        _Field("scaleup_latency", "scaleup_latency_s", optional(positive(units.parse_duration)), None),
        _Field("in_switch_reduction", "in_switch_reduction", optional(flag), None),
        _Field("compute_trays", "compute_trays", integer(1), 1),
        _Field("switch_trays", "switch_trays", integer(0), 0), _Field("cpus", "cpus", integer(0), 0),
        _Field("cooling", "cooling", _choice(_COOLING), "air"),
        _Field("storage_protocol", "storage_protocol", _choice([p.value for p in Protocol], Protocol),
               Protocol.ETHERNET))),
    "cloud": _Kind(CloudInstance, "clouds", (
        _DESC, _Field("provider", "provider", text), _Field("gpu", "gpu", name_ref),
        _Field("gpus", "gpus", integer(1)),
        _Field("network", "network", _choice([k.value for k in FabricKind], FabricKind)),
        _Field("network_bandwidth", "network_Bps", _BW),
        _Field("price_on_demand", "price_on_demand_usd_per_s", _HOURLY),
        _Field("price_reserved_1y", "price_reserved_1y_usd_per_s", _HOURLY, None),
        _Field("price_reserved_3y", "price_reserved_3y_usd_per_s", _HOURLY, None),
        _Field("region", "region", text),
        _Field("price_capacity_block", "price_capacity_block_usd_per_s", _HOURLY, None),
        _Field("max_instances", "max_instances", optional(integer(1)), None),
        _Field("capacity_block_max_instances", "capacity_block_max_instances", optional(integer(1)), None),
        _Field("capacity_block_max_duration", "capacity_block_max_s", optional(positive(units.parse_duration)),
               None),
        _Field("domain_gpus", "domain_gpus", integer(1), 0))),
    "fabric": _Kind(FabricProfile, "fabrics", (
        _Field("host_latency", "host_latency_s", positive(units.parse_duration)),
        _Field("efficiency", "efficiency", _efficiency),
        _Field("in_network_reduction", "in_network_reduction", flag, False),
        _Field("lossless", "lossless", flag),
        _Field("nic_cap", "nic_cap_Bps", optional(_BW), None),
        _Field("host_cap", "host_cap_Bps", optional(_BW), None))),
    "facility": _Kind(Facility, "facilities", (
        _Field("electricity", "electricity_usd_per_j", positive(units.parse_energy_price)),
        _Field("pue", "pue", _pue), _Field("rack_power", "rack_power_w", positive(_POWER)),
        _Field("rack_units", "rack_units", integer(1)), _Field("rack_price", "rack_price_usd", _MONEY),
        _Field("installation_fraction", "installation_fraction", units.parse_fraction),
        _Field("maintenance_fraction_per_year", "maintenance_fraction_per_year", optional(units.parse_fraction),
               None),
        _Field("space", "space", _choice(("colocation", "owned")), "colocation"),
        _Field("colocation_price", "colocation_usd_per_w_s", _rate(rates.parse_capacity_price), 0.0),
        _Field("build_cost", "build_usd_per_w", _rate(rates.parse_build_price), 0.0),
        _Field("build_life", "build_life_s", positive(units.parse_duration), 15 * units.SECONDS_PER_YEAR),
        _Field("training_power_fraction", "training_power_fraction", _efficiency, 1.0),
        _Field("idle_power_fraction", "idle_power_fraction", units.parse_fraction, 1.0),
        _Field("useful_life", "useful_life_s", units.parse_duration, 0.0),
        _Field("spares", "spares", _spares, MappingProxyType({})),
        _Field("storage_bytes_per_token", "storage_bytes_per_token", positive(units.parse_data_size), 4.0),
        _Field("storage_checkpoints_kept", "storage_checkpoints_kept", integer(1), 2),
        _Field("storage_read_per_node", "storage_read_Bps_per_node", units.parse_bandwidth, 0.0),
        _Field("storage_write_per_node", "storage_write_Bps_per_node", units.parse_bandwidth, 0.0),
        _Field("liquid_cooling_price", "liquid_cooling_usd_per_w", _rate(rates.parse_build_price), 0.0))),
    "support": _Kind(Support, "supports", (
        _DESC, _Field("fraction_per_year", "fraction_per_year", _rate(rates.parse_yearly_fraction)))),
    "licence": _Kind(Licence, "licences", (
        _DESC, _Field("price", "usd_per_gpu_s", _rate(rates.parse_licence_price)))),
    "storage": _Kind(Storage, "storage", (
        _DESC, _Field("read", "read_Bps", _BW), _Field("write", "write_Bps", _BW),
        _Field("capacity", "capacity_bytes", positive(units.parse_data_size)),
        _Field("power", "power_w", positive(_POWER)), _Field("rack_units", "rack_units", integer(1)),
        _Field("price", "price_usd", optional(_MONEY)), _VENDOR,
        _Field("ports", "ports", integer(0), 0), _Field("port_rate", "port_rate_Bps", _BW, 0.0),
        *_PORT_FIELDS)),
    "appliance": _Kind(Appliance, "appliances", (
        _DESC, _Field("manages", "manages", _choice([p.value for p in Protocol], Protocol)),
        _Field("per_fabric", "per_fabric", integer(1)), _Field("nic", "nic", name_ref),
        _Field("fabric_ports", "fabric_ports", integer(1)), _Field("power", "power_w", positive(_POWER)),
        _Field("rack_units", "rack_units", integer(1)), _Field("price", "price_usd", optional(_MONEY)), _VENDOR,
        _Field("port_rate", "port_rate_Bps", _BW, 0.0))),
    "price_book": _Kind(PriceBook, "price_books", (
        _DESC, _Field("currency", "currency", _currency, "USD"),
        _Field("exchange_rate", "exchange_rate", _exchange_rate, 1.0),
        _Field("discounts", "discounts", _discounts, MappingProxyType({})))),
}
assert tuple(KINDS) == KIND_NAMES  # one schema per kind, in the documented order

# Kinds by their plural (built-in file names, `--kind switches`).
PLURALS = {"gpus": "gpu", "nics": "nic", "switches": "switch", "cables": "cable", "transceivers": "transceiver",
           "servers": "server", "clouds": "cloud", "fabrics": "fabric", "facilities": "facility",
           "supports": "support", "licences": "licence", "storages": "storage", "appliances": "appliance",
           "price_books": "price_book"}

# References checked once all files are merged: (kind, attribute, kind it names).
REFERENCES = (("server", "gpu", "gpu"), ("server", "nic", "nic"), ("server", "storage_nic", "nic"),
               ("cloud", "gpu", "gpu"), ("appliance", "nic", "nic"))
