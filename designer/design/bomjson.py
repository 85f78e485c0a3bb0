"""A bill-of-materials line as JSON: the keys of docs/contract.md's ``bom --format json`` contract,
with what fits where on transceiver and cable lines."""

from __future__ import annotations

__all__ = ["FIT_CATEGORIES", "line_to_json"]

from typing import Any

from designer.design.bom import QUANTITY_SIG_DIGITS, SIG_DIGITS, BomLine, line_total_usd, round_money, round_sig


def line_to_json(line: BomLine) -> dict[str, Any]:
    """One BOM line as a JSON object with the keys of docs/contract.md's ``bom --format json`` contract.

    Contract keys first (``category, sku, role, quantity, unit_price_usd, total_usd, source``),
    then ``description, unit_power_w, power_w, price_basis, as_of, estimate, unpriced``, and on
    transceiver and cable lines what fits where (``connector, protocol, lanes, lane_gbps, media``,
    ``plugs_into`` or ``ends``). Money is in
    dollars rounded to cents; an unpriced line has ``unit_price_usd`` and ``total_usd`` null.
    """
    unpriced = line.unit_price_usd is None
    return {
        "category": line.category,
        "sku": line.sku,
        "role": line.role,
        "quantity": _number(line.quantity, QUANTITY_SIG_DIGITS),
        "unit_price_usd": None if unpriced else round_money(line.unit_price_usd),
        "total_usd": None if unpriced else line_total_usd(line),
        "source": line.source,
        "description": line.description,
        "unit_power_w": _number(line.unit_power_w),
        "power_w": _number(line.power_w),
        "price_basis": line.price_basis,
        "as_of": line.as_of,
        "estimate": line.estimate,
        "unpriced": unpriced,
    } | (_fit_json(line) if line.category in FIT_CATEGORIES else {})


# Categories whose lines say what fits where (docs/contract.md, "bom --format json").
FIT_CATEGORIES = ("transceiver", "cable")


def _fit_json(line: BomLine) -> dict[str, Any]:
    """``connector, protocol, lanes, lane_gbps, media`` and ``plugs_into`` (optics) or ``ends``
    (cables); null where the line does not state it."""
    out: dict[str, Any] = {"connector": line.connector or None, "protocol": line.protocol or None,
                           "lanes": line.lanes or None, "lane_gbps": _number(line.lane_gbps) if line.lane_gbps else None,
                           "media": line.media or None}
    if line.category == "transceiver":
        out["plugs_into"] = line.plugs_into or None
    else:
        out["ends"] = list(line.ends) if line.ends else None
    return out


def _number(x: float, digits: int = SIG_DIGITS) -> int | float:
    """A rounded number, as an int when it is whole (``128`` rather than ``128.0``)."""
    r = round_sig(float(x), digits)
    return int(r) if r.is_integer() and abs(r) < 1e15 else r
