"""Renderers of catalogs for ``designer catalog list|show``: tables, key specifications and JSON (pure).

Catalog in, text out; the command (:mod:`designer.cli.catalog`) only loads, prints and sets the
exit code.
"""

from __future__ import annotations

__all__ = [
    "STALE_MONTHS",
    "entry_to_dict",
    "entry_specs",
    "entry_price",
    "render_list",
    "render_list_json",
    "render_entry",
    "render_entry_json",
    "render_stale_warning",
]

from dataclasses import fields
from enum import Enum
from typing import Any, Callable, Mapping

from tabulate import tabulate

from designer.catalog import filters, query
from designer.catalog.types import KINDS, Catalog
from designer.report import jsondoc
from designer.spec import rates, units

STALE_MONTHS = 18  # a price older than this gets a warning (see designer.catalog.query.stale_entries)
_SOURCE_WIDTH = 48  # list view truncates sources; `show` prints them whole
# Memory, NVLink and storage bandwidths are quoted in bytes/s (as their datasheets give them).
_BYTE_RATES = ("hbm_Bps", "scaleup_Bps", "read_Bps", "write_Bps", "storage_read_Bps", "storage_write_Bps")
_TEXT_WIDTH = 90  # `show` wraps long sources and notes at this width


def _json_value(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, frozenset):
        return sorted(_json_value(v) for v in value)
    if isinstance(value, Mapping) and all(isinstance(k, float) for k in value):
        # a switch's breakout: rate_Bps -> logical ports
        return [{"rate_Bps": rate, "ports": count} for rate, count in value.items()]
    if isinstance(value, Mapping):  # a facility's spares: BOM category -> fraction
        return dict(value)
    return value


def entry_to_dict(kind: str, entry: Any) -> dict[str, Any]:
    """One entry as JSON-ready data: SI values under unit-carrying names, plus kind and provenance.

    A switch's breakout becomes a list of ``{"rate_Bps", "ports"}``; a fabric profile's technology
    is ``fabric_kind`` (``kind`` is always the catalog kind).
    """
    out: dict[str, Any] = {"kind": kind}
    for f in fields(entry):
        value = getattr(entry, f.name)
        if f.name == "provenance":
            out["provenance"] = {p.name: getattr(value, p.name) for p in fields(value)}
        elif f.name == "kind":  # a fabric profile's own kind must not replace the entry's kind
            out["fabric_kind"] = _json_value(value)
        else:
            out[f.name] = _json_value(value)
    return out


def _tflops(flops: float) -> str:
    return f"{flops / 1e12:g} TFLOPS"


def _hourly(usd_per_s: float | None) -> str:
    return "-" if usd_per_s is None else f"${usd_per_s * units.SECONDS_PER_HOUR:,.2f}/h"


def _breakout_text(breakout: Mapping[float, int]) -> str:
    return ", ".join(f"{count}x {units.format_bandwidth(rate)}" for rate, count in breakout.items())


def entry_specs(kind: str, e: Any) -> str:
    """The key specifications of an entry on one line (the list view's SPECS column)."""
    bw = units.format_bandwidth
    if kind == "gpu":
        return (f"{_tflops(e.bf16_flops)} bf16, {units.format_data_size(e.hbm_bytes)} @ "
                f"{bw(e.hbm_Bps, bits=False)}, {e.scaleup_kind}, {units.format_power(e.power_w)}")
    if kind == "nic":
        protos = "+".join(sorted(p.value for p in e.protocols))
        return f"{e.ports}x {bw(e.rate_Bps)}, {protos}{', RDMA' if e.rdma else ''}"
    if kind == "switch":
        extra = f" ({_breakout_text(e.breakout)})" if e.breakout else ""
        sharp = ", in-network reduction" if e.in_network_reduction else ""
        return (f"{e.ports}x {bw(e.port_rate_Bps)}{extra} {e.protocol.value}, "
                f"{units.format_duration(e.latency_s)}{sharp}")
    if kind == "cable":
        return f"{e.media.value.upper()} {bw(e.rate_Bps)}, {e.reach_m:g} m"
    if kind == "transceiver":
        return f"{e.logical_ports}x {bw(e.rate_Bps)}, {e.reach_m:g} m, {units.format_power(e.power_w)}"
    if kind == "server":
        return (f"{e.gpus}x {e.gpu}, {e.nics}x {e.nic}, {units.format_power(e.power_w)}, {e.rack_units}U")
    if kind == "cloud":
        return f"{e.provider} {e.region}: {e.gpus}x {e.gpu}, {e.network.value} {bw(e.network_Bps)}"
    if kind == "fabric":
        return (f"host {units.format_duration(e.host_latency_s)}, efficiency {e.efficiency:.0%}"
                f"{', in-network reduction' if e.in_network_reduction else ''}{', lossless' if e.lossless else ''}")
    if kind == "support":
        return f"{e.fraction_per_year:.1%} of the purchase price per year"
    if kind == "licence":
        return e.description
    if kind == "price_book":
        off = ", ".join(f"{vendor} -{share:.1%}" for vendor, share in e.discounts.items()) or "no discounts"
        return f"{off}; amounts shown in {e.currency} at {e.exchange_rate:g} per USD"
    if kind == "appliance":
        return (f"{e.manages.value} fabric manager, {e.per_fabric} per fabric, {e.fabric_ports}x {e.nic}, "
                f"{units.format_power(e.power_w)}, {e.rack_units}U")
    if kind == "storage":
        return (f"read {bw(e.read_Bps, bits=False)}, write {bw(e.write_Bps, bits=False)}, "
                f"{units.format_data_size(e.capacity_bytes)}, {units.format_power(e.power_w)}, {e.rack_units}U")
    space = (f"colocation {rates.format_capacity_price(e.colocation_usd_per_w_s)}" if e.space == "colocation"
             else f"owned {rates.format_build_price(e.build_usd_per_w)}")
    return (f"{e.electricity_usd_per_j * units.JOULES_PER_KWH:.4g} USD/kWh, PUE {e.pue:g}, "
            f"{units.format_power(e.rack_power_w)}/rack, {e.rack_units}U, {space}")


def entry_price(kind: str, e: Any) -> str:
    """The entry's price for people: money, an hourly rate for clouds, ``-`` where there is none."""
    if kind == "cloud":
        if e.price_on_demand_usd_per_s is None and e.price_capacity_block_usd_per_s is not None:
            return _hourly(e.price_capacity_block_usd_per_s) + " (block)"
        return _hourly(e.price_on_demand_usd_per_s)
    if kind == "fabric":
        return "-"
    if kind == "facility":
        return f"{units.format_money(e.rack_price_usd)}/rack"
    if kind == "support":
        return f"{e.fraction_per_year:.1%}/yr"
    if kind == "licence":
        return f"{units.format_money(e.usd_per_gpu_s * units.SECONDS_PER_YEAR)}/GPU-yr"
    if kind == "price_book":
        return "-"
    return "-" if e.price_usd is None else units.format_money(e.price_usd)


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3].rstrip() + "..."


def _kinds(kind: str | None) -> tuple[str, ...]:
    return KINDS if kind is None else (kind,)


def render_list(catalog: Catalog, kind: str | None = None, flt: filters.EntryFilter | None = None) -> str:
    """A table of entries (all kinds, or one; those ``flt`` keeps): name, key specs, price, date,
    estimate flag, source."""
    rows = []
    for k, name, e in filters.select(catalog, _kinds(kind), flt):
        prov = e.provenance
        rows.append([k, name, entry_specs(k, e), entry_price(k, e), prov.price_basis or "-", prov.as_of,
                     "yes" if prov.estimate else "", _short(prov.source, _SOURCE_WIDTH)])
    if not rows:
        return f"no {kind or 'catalog'} entries" + (" match the filters" if flt is not None else "") + "\n"
    headers = ["kind", "name", "specs", "price", "basis", "as_of", "estimate", "source"]
    return tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True) + "\n"


def render_list_json(catalog: Catalog, kind: str | None = None, flt: filters.EntryFilter | None = None) -> str:
    """``{"digest", "dates", "filters", "entries": [...]}`` with every entry ``flt`` keeps as in
    :func:`entry_to_dict`; ``filters`` holds the filters that are set (SI units: ``rate_Bps``)."""
    entries = [entry_to_dict(k, e) for k, _, e in filters.select(catalog, _kinds(kind), flt)]
    used = {} if flt is None else {f.name: getattr(flt, f.name) for f in fields(flt) if getattr(flt, f.name) is not None}
    doc = {"digest": catalog.digest, "dates": dict(catalog.dates), "filters": used, "entries": entries}
    return jsondoc.dumps(doc)


def _field_text(name: str, value: Any) -> str:
    # Field names carry their unit (STYLE 7.5), so the suffix says how to print the value.
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, frozenset):
        return ", ".join(sorted(_field_text(name, v) for v in value))
    if isinstance(value, (tuple, list)):  # a NIC's lower speeds: each value in the field's unit
        return ", ".join(_field_text("each" + name[name.find("_"):], v) for v in value) or "-"
    if name == "breakout" and isinstance(value, Mapping):  # a switch's; a cable's is a count
        return _breakout_text(value) or "-"
    if name in ("spares", "discounts"):
        return ", ".join(f"{k} {v:.1%}" for k, v in value.items()) or "-"
    if name == "exchange_rate":
        return f"{value:g} per USD"
    if name == "usd_per_gpu_s":
        return f"{units.format_money(value * units.SECONDS_PER_YEAR)}/GPU-year"
    if name.endswith("_usd_per_w_s"):
        return rates.format_capacity_price(value)
    if name.endswith("_usd_per_w"):
        return rates.format_build_price(value)
    if name.endswith("_usd_per_s"):
        return _hourly(value)
    if name.endswith("_usd_per_j"):
        return f"{value * units.JOULES_PER_KWH:.4g} USD/kWh"
    suffixes: list[tuple[str, Callable[[float], str]]] = [
        # Memory and NVLink bandwidths are quoted in bytes/s, network rates in bits/s.
        ("_flops", _tflops), ("_Bps", lambda v: units.format_bandwidth(v, bits=name not in _BYTE_RATES)),
        ("_bytes", units.format_data_size), ("_usd", units.format_money), ("_w", units.format_power),
        ("_s", units.format_duration), ("_m", lambda v: f"{v:g} m")]
    for suffix, fmt in suffixes:
        if name.endswith(suffix):
            return fmt(value)
    if name == "rack_units":
        return f"{value}U"
    if "_per_" in name and isinstance(value, (int, float)):  # a quantity per thing: storage_read_Bps_per_node
        head, per = name.rsplit("_per_", 1)
        text = _field_text(head, value)
        if text != str(value):
            return f"{text} per {per.replace('_', ' ')}"
    if name.endswith(("efficiency", "_fraction", "_fraction_per_year")):
        return f"{value:.2%}"
    return str(value)


def render_entry(kind: str, entry: Any) -> str:
    """Every field of one entry in human units, then its provenance (full source and note)."""
    rows = [["kind", kind], ["name", entry.name]]
    if hasattr(entry, "description"):
        rows.append(["description", entry.description])
    # Label rows with the catalog file's keys (what a user writes to override them).
    for key, attr in query.field_keys(kind):
        if attr != "description":
            rows.append([key, _field_text(attr, getattr(entry, attr))])
    prov = entry.provenance
    if prov.price_basis:
        rows.append(["price_basis", prov.price_basis])
    rows += [["source", prov.source], ["as_of", prov.as_of], ["estimate", "yes" if prov.estimate else "no"]]
    if prov.note:
        rows.append(["note", prov.note])
    return tabulate(rows, tablefmt="plain", disable_numparse=True, maxcolwidths=[None, _TEXT_WIDTH]) + "\n"


def render_entry_json(kind: str, entry: Any) -> str:
    """One entry as JSON (see :func:`entry_to_dict`)."""
    return jsondoc.dumps(entry_to_dict(kind, entry))


def render_stale_warning(stale: tuple[query.StaleEntry, ...], months: int = STALE_MONTHS) -> str:
    """One warning line naming the entries whose price is older than ``months``; ``""`` if none."""
    if not stale:
        return ""
    names = ", ".join(f"{s.name} ({s.as_of})" for s in stale)
    what = "price is" if len(stale) == 1 else f"{len(stale)} prices are"
    return (f"warning: {what} older than {months} months: {names}; "
            f"newer figures can be given in a user catalog (--catalog FILE)\n")
