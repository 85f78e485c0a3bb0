"""Diff renderers: a terminal table, a Markdown pull-request comment, or JSON."""

from __future__ import annotations

__all__ = ["DIFF_FORMATS", "render_diff", "diff_to_json_dict", "summary_line"]

import json
from typing import Any

from designer.design import bom
from designer.design.diff import BomChange, DesignDiff, MoneyChange, WorkloadChange
from designer.design.model import WorkloadResult
from designer.report import fmt as f
from designer.report import jsondoc

DIFF_FORMATS = ("table", "markdown", "json")


def _money_json(m: MoneyChange) -> dict[str, Any]:
    pct = m.delta_pct
    return {"old_usd": bom.round_money(m.old_usd), "new_usd": bom.round_money(m.new_usd),
            "delta_usd": m.delta_usd, "delta_pct": None if pct is None else round(pct, 4) + 0.0}


def _workload_json(w: WorkloadChange) -> dict[str, Any]:
    def side(attr: str) -> dict[str, Any]:
        old = None if w.old is None else getattr(w.old, attr)
        new = None if w.new is None else getattr(w.new, attr)
        return {"old": None if old is None else bom.round_sig(old),
                "new": None if new is None else bom.round_sig(new)}

    util, days = side("utilization"), side("time_to_train_days")
    util["delta"] = None if w.utilization_delta is None else bom.round_sig(w.utilization_delta)
    days["delta"] = None if w.days_delta is None else bom.round_sig(w.days_delta)
    return {"name": w.name, "status": w.kind.value, "symbol": w.kind.symbol, "utilization": util, "time_to_train_days": days,
            "changes": [{"field": c.field, "old": c.old, "new": c.new} for c in w.fields]}


def _bom_json(c: BomChange) -> dict[str, Any]:
    return {"status": c.kind.value, "symbol": c.kind.symbol, "category": c.category, "role": c.role, "sku": c.sku,
            "old_quantity": c.old_quantity, "new_quantity": c.new_quantity, "quantity_delta": c.quantity_delta,
            "old_unit_price_usd": c.old_unit_price_usd, "new_unit_price_usd": c.new_unit_price_usd,
            "old_total_usd": c.old_total_usd, "new_total_usd": c.new_total_usd, "delta_usd": c.delta_usd}


def diff_to_json_dict(diff: DesignDiff) -> dict[str, Any]:
    """The diff as JSON-ready data.

    ``{"is_empty", "old_name", "new_name", "cost": {"total"|"capex"|"opex"|"cloud"|"residual": {"old_usd",
    "new_usd", "delta_usd", "delta_pct"}}, "system": [{"field", "old", "new"}], "workloads":
    [{"name", "status", "utilization": {"old", "new", "delta"}, "time_to_train_days": {...},
    "changes": [...]}], "bom": [{"status", "category", "role", "sku", "old_quantity", "new_quantity",
    "quantity_delta", "old_unit_price_usd", "new_unit_price_usd", "old_total_usd", "new_total_usd",
    "delta_usd"}], "bom_delta_usd", "inputs": [{"field", "old", "new"}]}``; ``summary`` counts the
    BOM lines ``added``, ``changed`` and ``removed`` and the changed ``system_fields`` and
    ``workloads``; every item has its ``status`` and its ``symbol`` (``+``, ``~``, ``-``).
    """
    return {
        "is_empty": diff.is_empty,
        "summary": diff.counts(),
        "old_name": diff.old_name,
        "new_name": diff.new_name,
        "cost": {name: _money_json(getattr(diff, name)) for name in ("total", "capex", "opex", "cloud", "residual")},
        "system": [{"field": c.field, "old": c.old, "new": c.new} for c in diff.system],
        "workloads": [_workload_json(w) for w in diff.workloads],
        "bom": [_bom_json(c) for c in diff.bom],
        "bom_delta_usd": diff.bom_delta_usd,
        "inputs": [{"field": c.field, "old": c.old, "new": c.new} for c in diff.inputs],
    }


def _pct(m: MoneyChange) -> str:
    pct = m.delta_pct
    return "n/a" if pct is None else f"{pct:+.1f}%"


def _value(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return f.num(v)
    if isinstance(v, (list, dict)):
        return json.dumps(v, sort_keys=True)
    return str(v)


def _arrow(fmt: str) -> str:
    return " → " if fmt == "markdown" else " -> "


def _headline(diff: DesignDiff, fmt: str) -> str:
    t = diff.total
    if diff.is_empty:
        return "designer: no change to cost, system, workloads or bill of materials"
    if not t.changed:
        return f"designer: total cost unchanged at {f.usd(t.new_usd)}"
    word = "up" if t.delta_usd > 0 else "down"
    return (f"designer: total cost {word} {f.usd(abs(t.delta_usd))} ({_pct(t)}), "
            f"{f.usd(t.old_usd)}{_arrow(fmt)}{f.usd(t.new_usd)}")


def summary_line(diff: DesignDiff) -> str:
    """One line counting what changed: ``+2 ~1 -0 line items; 2 system fields, 1 workload changed``
    (``+`` added, ``~`` changed, ``-`` removed, as in the tables below it)."""
    c = diff.counts()

    def n(count: int, word: str) -> str:
        return f"{count} {word}{'' if count == 1 else 's'}"

    return (f"Summary: +{c['added']} added, ~{c['changed']} changed, -{c['removed']} removed "
            f"bill-of-materials lines; {n(c['system_fields'], 'system field')} and "
            f"{n(c['workloads'], 'workload')} changed.")


def _section(title: str, body: str, fmt: str) -> str:
    return f"### {title}\n\n{body}\n" if fmt == "markdown" else f"{title}\n\n{body}\n"


def _cost_table(diff: DesignDiff, fmt: str) -> str:
    rows = []
    for name in diff.money_rows():
        m: MoneyChange = getattr(diff, name)
        cells = [name, f.usd(m.old_usd), f.usd(m.new_usd), f.usd_delta(m.delta_usd), _pct(m)]
        rows.append([f.bold(c, fmt) for c in cells] if name == "total" else cells)
    return f.table(rows, ("cost", "old", "new", "change", "%"), fmt, "lrrrr")


def _plan(w: WorkloadResult) -> str:
    extra = "".join(f" {k}{v}" for k, v in (("ep", w.ep), ("cp", w.cp)) if v > 1)
    return f"{w.gpus:,} GPUs, tp{w.tp} pp{w.pp} dp{w.dp}{extra}"


def _workload_rows(diff: DesignDiff, fmt: str) -> list[list[str]]:
    a = _arrow(fmt)
    rows = []
    for w in diff.workloads:
        if w.old is not None and w.new is not None:
            plan = _plan(w.old) if _plan(w.old) == _plan(w.new) else f"{_plan(w.old)}{a}{_plan(w.new)}"
            util = (f"{f.pct(w.old.utilization)}{a}{f.pct(w.new.utilization)} "
                    f"({f.signed(100 * w.utilization_delta, 1)} pts)")
            days = (f"{f.days(w.old.time_to_train_days)}{a}{f.days(w.new.time_to_train_days)} "
                    f"({f.signed(w.days_delta, 1)})")
        else:
            side = w.new if w.new is not None else w.old
            plan, util, days = _plan(side), f.pct(side.utilization), f.days(side.time_to_train_days)
        rows.append([w.kind.symbol, w.name, plan, util, days])
    return rows


def _workload_details(diff: DesignDiff) -> list[list[str]]:
    return [[w.name, c.field, _value(c.old), _value(c.new)] for w in diff.workloads for c in w.fields]


def _price(c: BomChange, fmt: str) -> str:
    a, b = c.old_unit_price_usd, c.new_unit_price_usd
    if a is not None and b is not None and a != b:
        return f"{f.usd(a)}{_arrow(fmt)}{f.usd(b)}"
    price = b if a is None else a
    return "-" if price is None else f.usd(price)


def _bom_rows(diff: DesignDiff, fmt: str) -> list[list[str]]:
    return [[c.kind.symbol, c.category, c.role, c.sku, f"{f.qty(c.old_quantity)}{_arrow(fmt)}{f.qty(c.new_quantity)}",
             _price(c, fmt), f.usd_delta(c.delta_usd)] for c in diff.bom]


def render_diff(diff: DesignDiff, fmt: str = "table") -> str:
    """Render a :class:`~designer.design.diff.DesignDiff`.

    ``markdown`` is ready to paste as a pull-request comment (after Infracost's comment layout): a
    headline with the total cost change, then sections for cost, system, workloads, bill of
    materials and inputs, each present only when something in it changed. ``table`` is the same
    for a terminal. ``json`` is :func:`diff_to_json_dict`.

    Raises:
        InputError: an unknown format.
    """
    f.check_format(fmt, DIFF_FORMATS, "diff")
    if fmt == "json":
        return jsondoc.dumps(diff_to_json_dict(diff))
    head = _headline(diff, fmt)
    parts = [f"## {head}\n" if fmt == "markdown" else f"{head}\n"]
    if not diff.is_empty:
        parts.append(summary_line(diff) + "\n")
    if diff.is_empty:
        parts.append("The two designs have the same cost, system, workload plans and predictions, and bill "
                     "of materials.\n")
    else:
        parts.append(_section("Cost over the horizon", _cost_table(diff, fmt), fmt))
    if diff.system:
        rows = [[c.field, _value(c.old), _value(c.new)] for c in diff.system]
        parts.append(_section("System", f.table(rows, ("field", "old", "new"), fmt), fmt))
    if diff.workloads:
        body = f.table(_workload_rows(diff, fmt), ("", "workload", "plan", "utilization", "time to train"), fmt)
        details = _workload_details(diff)
        if details:
            body += "\n\n" + f.table(details, ("workload", "field", "old", "new"), fmt, "llrr")
        parts.append(_section("Workloads", body, fmt))
    if diff.bom:
        counts = diff.counts()
        title = (f"Bill of materials (+{counts['added']} added, ~{counts['changed']} changed, "
                 f"-{counts['removed']} removed; {f.usd_delta(diff.bom_delta_usd)})")
        headers = ("", "category", "role", "SKU", "quantity", "unit price", "cost change")
        body = f.table(_bom_rows(diff, fmt), headers, fmt, "llllrrr")
        parts.append(_section(title, body, fmt))
    if diff.inputs:
        rows = [[c.field, _value(c.old), _value(c.new)] for c in diff.inputs]
        parts.append(_section("Inputs (for information)", f.table(rows, ("field", "old", "new"), fmt), fmt))
    return "\n".join(parts)
