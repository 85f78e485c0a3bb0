"""Sane ranges of every quantity a spec or a catalog may give, checked once at the edge.

A value outside its range is refused, located, by ``validate`` like any other bad input, so no
value that validates can overflow or underflow later (``deadline: 1e13 years``, ``bf16: 1e-300
FLOPS`` and ``budget: $1e308B`` once ended in internal errors). Each range is wide: it spans every
real figure by orders of magnitude and refuses only the absurd. docs/reliability.md lists them.

Spec ranges are keyed by field name (:data:`SPEC`; :mod:`designer.spec.schema` attaches them);
catalog ranges by the unit suffix every catalog field name carries (``_usd``, ``_Bps``, ``_w``,
..., STYLE 7.5) and, for counts, by name (:data:`CATALOG_SUFFIXES`, :data:`CATALOG_COUNTS`;
:mod:`designer.catalog.merge` checks them).
"""

from __future__ import annotations

__all__ = ["MAX_NODES", "MAX_GPUS_PER_WORKLOAD", "Range", "SPEC", "CATALOG_SUFFIXES", "CATALOG_COUNTS", "MAX_CATALOG_ENTRIES", "catalog_range",
           "within", "ranges_markdown"]

from dataclasses import dataclass
from typing import Callable

from designer.spec import units

_DAY, _YEAR, _HOUR = units.SECONDS_PER_DAY, units.SECONDS_PER_YEAR, units.SECONDS_PER_HOUR


MAX_NODES = 100_000  # 800k GPUs: beyond any cluster built; larger asks are refused, not attempted
MAX_GPUS_PER_WORKLOAD = 1_000_000


def _plain(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() and abs(value) < 1e15 else f"{value:.3g}"


def _years(seconds: float) -> str:
    """A duration in the unit a spec would use: ``1 h``, ``1 day``, ``45 days``, ``30 years``."""
    for size, one, many in ((_YEAR, "year", "years"), (_DAY, "day", "days"), (_HOUR, "h", "h"), (60.0, "min", "min")):
        if seconds >= size:
            n = seconds / size
            return f"{n:.3g} {one if n == 1 else many}"
    return f"{seconds:.3g} s"


def _money(usd: float) -> str:
    """``$60M``, ``$10T``, ``$1e+20``: short, for a range's ends."""
    for size, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(usd) >= size and abs(usd) < size * 1e3:
            return f"${usd / size:.3g}{suffix}"
    return f"${usd:.3g}" if abs(usd) >= 1e15 or usd == 0 else f"${usd:,.2f}"


def _per_kw_month(usd_per_w_s: float) -> str:
    return f"${usd_per_w_s * 1e3 * 30 * _DAY:,.4g}/kW-month"


def _per_mw(usd_per_w: float) -> str:
    return f"${usd_per_w:,.4g}M/MW"


def _per_gpu_year(usd_per_gpu_s: float) -> str:
    return f"${usd_per_gpu_s * _YEAR:,.2f}/GPU-year"


def _per_kwh(usd_per_j: float) -> str:
    return f"{usd_per_j * units.JOULES_PER_KWH:.3g} USD/kWh"


def _per_hour(usd_per_s: float) -> str:
    return f"${usd_per_s * _HOUR:,.2f}/h"


def _flops(value: float) -> str:
    return f"{value:.3g} FLOPS"


def _metres(value: float) -> str:
    return f"{value:g} m"


@dataclass(frozen=True, slots=True)
class Range:
    """``lo <= value <= hi`` (in SI units); ``show`` prints a value as people write it."""

    lo: float
    hi: float
    show: Callable[[float], str] = _plain
    why: str = ""

    def check(self, value: float) -> float:
        """``value`` if it lies in the range, else ``ValueError`` saying the range in people's units."""
        if not self.lo <= value <= self.hi:
            raise ValueError(f"must lie between {self.show(self.lo)} and {self.show(self.hi)}, got {self.show(value)}")
        return value


def within(rng: Range) -> Callable[[float], float]:
    """A validator (for pydantic's ``AfterValidator``) that checks ``rng``; ``None`` passes."""
    def check(value):
        return value if value is None or isinstance(value, str) else rng.check(value)
    check.range = rng  # type: ignore[attr-defined] - read by the test that every number has one
    return check


# --- the spec ------------------------------------------------------------------------------------

SPEC: dict[str, Range] = {
    "horizon": Range(_DAY, 30 * _YEAR, _years, "a plan of less than a day prices nothing"),
    "deadline": Range(_HOUR, 30 * _YEAR, _years, "no training run is planned in minutes or centuries"),
    "checkpoint_interval": Range(60.0, _YEAR, _years, "shorter would stall on checkpoints all the time"),
    "tokens": Range(1.0, 1e15, _plain, "the largest runs train on tens of trillions (1e13)"),
    "global_batch": Range(1, 10_000_000, _plain, "sequences per step; real runs use up to tens of thousands"),
    "params": Range(1.0, 1e15, _plain),
    "layers": Range(1, 10_000), "hidden": Range(1, 1_000_000), "heads": Range(1, 100_000),
    "kv_heads": Range(1, 100_000), "ffn": Range(1, 10_000_000), "seq_len": Range(1, 10_000_000),
    "vocab": Range(1, 10_000_000), "experts": Range(1, 100_000), "top_k": Range(1, 100_000),
    "shared_experts": Range(0, 100_000), "expert_ffn": Range(1, 10_000_000), "dense_layers": Range(0, 10_000),
    "groups": Range(1, 100_000), "group_top_k": Range(1, 100_000), "mtp_layers": Range(0, 100),
    "q_lora_rank": Range(0, 1_000_000), "kv_lora_rank": Range(1, 1_000_000), "qk_nope_head_dim": Range(1, 100_000),
    "qk_rope_head_dim": Range(1, 100_000), "v_head_dim": Range(1, 100_000),
    "microbatch": Range(1, 10_000_000), "virtual_stages": Range(1, 10_000),
    "first_stage_layers": Range(1, 10_000), "last_stage_layers": Range(1, 10_000),
    "budget": Range(0.0, 1e13, _money, "ten trillion dollars, beyond any purchase"),
    "max_power": Range(1e3, 1e11, units.format_power, "100 GW; the largest sites planned draw a few GW"),
    "max_racks": Range(1, 1_000_000),
    "electricity": Range(0.0, 10.0 / units.JOULES_PER_KWH, _per_kwh, "retail prices are a few tenths of a dollar"),
    "rack_power": Range(100.0, 1e7, units.format_power, "racks draw tens to hundreds of kW"),
    "rack_units": Range(1, 100), "rack_price": Range(0.0, 1e7, _money, "one rack with its PDUs"),
    "colocation_price": Range(0.0, 1e4 / (1e3 * 30 * _DAY), _per_kw_month, "colocation costs ~$100-300/kW-month"),
    "build_cost": Range(0.0, 1e3, _per_mw, "construction costs ~$10M/MW"),
    "build_life": Range(_YEAR, 100 * _YEAR, _years), "useful_life": Range(_YEAR / 12, 30 * _YEAR, _years),
    "storage_bytes_per_token": Range(1e-3, 1e6, units.format_data_size),
    "storage_checkpoints_kept": Range(1, 10_000),
    "storage_per_node": Range(1e5, 1e12, units.format_bandwidth), "storage_capacity": Range(1e6, 1e20, units.format_data_size),
    "storage_bandwidth": Range(1e5, 1e15, units.format_bandwidth), "owned_count": Range(1, 1_000_000),
}

# --- catalogs ------------------------------------------------------------------------------------

# By the unit suffix of the field's name (the longest suffix that matches applies).
CATALOG_SUFFIXES: dict[str, Range] = {
    "_usd": Range(0.0, 1e9, _money, "one item; a rack-scale system costs a few $M"),
    "_usd_per_s": Range(0.0, 1e5 / _HOUR, _per_hour, "one instance; the largest cost ~$100/h"),
    "_usd_per_j": Range(0.0, 10.0 / units.JOULES_PER_KWH, _per_kwh),
    "_usd_per_w_s": Range(0.0, 1e4 / (1e3 * 30 * _DAY), _per_kw_month, "colocation costs ~$100-300/kW-month"),
    "_usd_per_w": Range(0.0, 1e3, _per_mw, "construction costs ~$10M/MW"),
    "_usd_per_gpu_s": Range(0.0, 1e6 / _YEAR, _per_gpu_year, "licences cost thousands per GPU-year"),
    "_flops": Range(1e9, 1e18, _flops, "one GPU: a GFLOPS to an EFLOPS"),
    "hbm_bytes": Range(1e6, 1e14, units.format_data_size, "one GPU's memory"),
    "_bytes": Range(1e3, 1e20, units.format_data_size, "a storage system's capacity"),
    "_per_token": Range(1e-3, 1e6, units.format_data_size, "data-set bytes per training token"),
    "_Bps": Range(1e5, 1e14, units.format_bandwidth, "a port, a link or a GPU's memory; NVLink 5 is 14.4 Tb/s"),
    "_Bps_per_node": Range(1e5, 1e12, units.format_bandwidth),
    "_w": Range(0.0, 1e7, units.format_power, "one item; a rack-scale system draws ~130 kW"),
    "latency_s": Range(1e-10, 1.0, units.format_duration, "a latency; switches take ~0.1-1 us"),
    "_s": Range(1e-10, 100 * _YEAR, _years, "a duration or a life"),
    "_m": Range(0.01, 1e6, _metres, "a cable's or an optic's reach"),
    "_fraction": Range(0.0, 1.0, _plain), "fraction_per_year": Range(0.0, 1.0, _plain),
    "efficiency": Range(0.0, 1.0, _plain),
    "pue": Range(1.0, 5.0, _plain),
}
# By field name: whole numbers (the breakout's port counts are checked as "breakout_ports") and a
# price book's exchange rate.
CATALOG_COUNTS: dict[str, Range] = {
    "ports": Range(1, 4096, _plain, "the largest switches have hundreds of ports, chassis a few thousand"),
    "cages": Range(1, 4096), "logical_ports": Range(1, 64), "breakout_ports": Range(1, 16_384),
    "lanes": Range(1, 64, _plain, "electrical lanes of one cage; OSFP and QSFP-DD have 8"),
    "optical_lanes": Range(1, 64), "optical_ports": Range(1, 16), "split": Range(1, 8), "breakout": Range(1, 16),
    "gpus": Range(1, 1024, _plain, "GPUs in one server or instance (an NVL72 rack counts 72)"),
    "nics": Range(1, 256), "nic_cages": Range(1, 256), "storage_nics": Range(0, 256),
    "rack_units": Range(1, 100), "max_instances": Range(1, 1_000_000),
    "capacity_block_max_instances": Range(1, 1_000_000), "storage_checkpoints_kept": Range(1, 10_000),
    "domain_gpus": Range(0, 10_000, _plain, "GPUs in one NVLink domain (0: the whole server); NVL576 is the largest announced"),
    "compute_trays": Range(1, 1024), "switch_trays": Range(0, 1024), "cpus": Range(0, 1024),
    "uplinks": Range(0, 4096), "uplink_lanes": Range(0, 64), "per_fabric": Range(1, 64), "fabric_ports": Range(1, 64),
    "exchange_rate": Range(1e-6, 1e6, _plain, "units of a currency per US dollar: about 0.3 to a few 10,000"),
}
# Entries per kind once every catalog is merged: built-in kinds hold tens; each entry multiplies
# the candidates the optimizer weighs, so a 10,000-switch catalog is refused rather than searched.
MAX_CATALOG_ENTRIES = 500


def catalog_range(attr: str) -> Range | None:
    """The range of a catalog field (its dataclass attribute name), or None if it has none."""
    if attr in CATALOG_COUNTS:
        return CATALOG_COUNTS[attr]
    best = max((s for s in CATALOG_SUFFIXES if attr.endswith(s)), key=len, default=None)
    return CATALOG_SUFFIXES[best] if best is not None else None


def ranges_markdown() -> str:
    """The ranges as the Markdown table docs/reliability.md shows (a test keeps the two equal)."""
    rows = ["| where | quantity | range | why |", "| --- | --- | --- | --- |"]
    for key, rng in SPEC.items():
        rows.append(f"| spec | `{key}` | {rng.show(rng.lo)} to {rng.show(rng.hi)} | {rng.why} |")
    for suffix, rng in CATALOG_SUFFIXES.items():
        rows.append(f"| catalog | fields ending `{suffix}` | {rng.show(rng.lo)} to {rng.show(rng.hi)} | {rng.why} |")
    for name, rng in CATALOG_COUNTS.items():
        rows.append(f"| catalog | `{name}` | {rng.show(rng.lo)} to {rng.show(rng.hi)} | {rng.why} |")
    rows.append(f"| catalog | entries per kind, merged (and items per file) | at most {MAX_CATALOG_ENTRIES:,} | "
                "each entry multiplies the designs weighed |")
    return "\n".join(rows) + "\n"
