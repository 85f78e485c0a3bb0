"""The page of a diff between two designs: cost, system, workloads, BOM lines and inputs that changed.

Built from the same :class:`~designer.design.diff.DesignDiff` as ``diff --format markdown``, item
by item: every change the Markdown comment lists is one row here with a ``data-key`` naming it
(``bom|switch|leaf|nvidia-qm9700``), and nothing else is.
"""

from __future__ import annotations

__all__ = ["DiffPage", "build_diff_page", "change_keys"]

from dataclasses import dataclass
from typing import Any

from designer.design import bom, sections
from designer.design.diff import ChangeKind, DesignDiff, MoneyChange, WorkloadChange
from designer.report import fmt as f
from designer.report.html.charts import PALETTE, Bar, Segment, stacked_bars
from designer.report.html.view import Cell, Figure, Header, Row, Table, num, value_text
from designer.spec import units



@dataclass(frozen=True, slots=True)
class DiffPage:
    """Everything the diff template shows, formatted."""

    title: str
    headline: str
    is_empty: bool
    cost_chart: Figure | None
    cost: Table | None
    system: Table | None
    workloads: Table | None
    workload_fields: Table | None
    bom: Table | None
    bom_title: str
    bom_categories: tuple[str, ...]
    inputs: Table | None


def _pct(m: MoneyChange) -> str:
    pct = m.delta_pct
    return "n/a" if pct is None else f"{pct:+.1f}%"


def _delta_cls(x: float) -> str:
    return "n delta-up" if x > 0 else ("n delta-down" if x < 0 else "n")


def _headline(diff: DesignDiff) -> str:
    t = diff.total
    if diff.is_empty:
        return "No change to cost, system, workloads or bill of materials"
    if not t.changed:
        return f"Total cost unchanged at {f.usd(t.new_usd)}"
    word = "up" if t.delta_usd > 0 else "down"
    return f"Total cost {word} {f.usd(abs(t.delta_usd))} ({_pct(t)}), {f.usd(t.old_usd)} → {f.usd(t.new_usd)}"


def _cost(diff: DesignDiff) -> tuple[Figure, Table]:
    rows, bars = [], []
    for name in diff.money_rows():
        label = name
        m: MoneyChange = getattr(diff, name)
        rows.append(Row((Cell(label), Cell(f.usd(m.old_usd), num(m.old_usd), "n"),
                         Cell(f.usd(m.new_usd), num(m.new_usd), "n"),
                         Cell(f.usd_delta(m.delta_usd), num(m.delta_usd), _delta_cls(m.delta_usd)),
                         Cell(_pct(m), num(m.delta_pct or 0.0), "n")), key=f"cost|{name}",
                        cls="subtotal" if name == "total" else ""))
        if name == "residual":  # a credit: in the table, not a bar of its own
            continue
        for side, value, color in (("old", m.old_usd, PALETTE[7]), ("new", m.new_usd, PALETTE[0])):
            bars.append(Bar(f"{label} {side}", (Segment(f"{side} design", value, units.format_money_short(value),
                                                        color),), units.format_money_short(value)))
    table = Table("cost", (Header("cost"), Header("old", True), Header("new", True), Header("change", True),
                           Header("%", True)), tuple(rows), sortable=False)
    svg = stacked_bars(tuple(bars), title="Cost before and after", cls="diff-cost-chart")
    return Figure("diff-cost-chart", svg, "Each cost before (grey) and after (blue), on one scale."), table


def _fields_table(table_id: str, prefix: str, changes: tuple[Any, ...]) -> Table:
    rows = tuple(Row((Cell(c.field), Cell(value_text(c.old)), Cell(value_text(c.new))), key=f"{prefix}|{c.field}")
                 for c in changes)
    return Table(table_id, (Header("field"), Header("old"), Header("new")), rows, sortable=False)


def _plan(w: Any) -> str:
    extra = "".join(f" {k}{v}" for k, v in (("ep", w.ep), ("cp", w.cp)) if v > 1)
    return f"{w.gpus:,} GPUs, tp{w.tp} pp{w.pp} dp{w.dp}{extra}"


def _workload_row(w: WorkloadChange) -> Row:
    if w.old is not None and w.new is not None:
        plan = _plan(w.old) if _plan(w.old) == _plan(w.new) else f"{_plan(w.old)} → {_plan(w.new)}"
        util = (f"{f.pct(w.old.utilization)} → {f.pct(w.new.utilization)} "
                f"({f.signed(100 * (w.utilization_delta or 0.0), 1)} pts)")
        days = (f"{f.days(w.old.time_to_train_days)} → {f.days(w.new.time_to_train_days)} "
                f"({f.signed(w.days_delta or 0.0, 1)})")
    else:
        side = w.new if w.new is not None else w.old
        assert side is not None
        plan, util, days = _plan(side), f.pct(side.utilization), f.days(side.time_to_train_days)
    return Row((Cell(w.name), Cell(w.kind.value, cls=f"kind-{w.kind.value}"), Cell(plan), Cell(util), Cell(days)),
               key=f"workload|{w.name}")


def _bom(diff: DesignDiff) -> tuple[Table, str]:
    rows = []
    for c in diff.bom:
        a, b = c.old_unit_price_usd, c.new_unit_price_usd
        if a is not None and b is not None and a != b:
            price = f"{f.usd(a)} → {f.usd(b)}"
        else:
            p = b if a is None else a
            price = "-" if p is None else f.usd(p)
        rows.append(Row((
            Cell(c.kind.value, cls=f"kind-{c.kind.value}"), Cell(c.category), Cell(c.role), Cell(c.sku, cls="sku"),
            Cell(f"{f.qty(c.old_quantity)} → {f.qty(c.new_quantity)}", num(c.quantity_delta), "n"),
            Cell(price, num(b if b is not None else (a or 0.0)), "n"),
            Cell(f.usd_delta(c.delta_usd), num(c.delta_usd), _delta_cls(c.delta_usd) + " total")),
            key=f"bom|{c.category}|{c.role}|{c.sku}",
            category=sections.section_label(sections.section_of(category=c.category, role=c.role))))
    counts = {k: sum(c.kind is k for c in diff.bom) for k in ChangeKind}
    title = (f"Bill of materials: {counts[ChangeKind.ADDED]} added, {counts[ChangeKind.REMOVED]} removed, "
             f"{counts[ChangeKind.CHANGED]} changed; {f.usd_delta(diff.bom_delta_usd)}")
    headers = (Header("change"), Header("category"), Header("role"), Header("SKU"), Header("quantity", True),
               Header("unit price", True), Header("cost change", True))
    foot = (Cell("net"), Cell(""), Cell(""), Cell(f"{len(rows)} lines", cls="count"), Cell(""), Cell(""),
            Cell(f.usd_delta(diff.bom_delta_usd), num(diff.bom_delta_usd), "n total"))
    return Table("bom-changes", headers, tuple(rows), foot), title


def build_diff_page(diff: DesignDiff) -> DiffPage:
    """The diff page's data: a section per kind of change, present only when something in it changed.

    The same sections and items as :func:`designer.report.diff.render_diff` in Markdown: cost
    (when anything changed), system fields, workloads (with every changed field), BOM lines keyed
    by ``(category, role, sku)`` and the inputs, for information.
    """
    chart, cost = _cost(diff) if not diff.is_empty else (None, None)
    bom_table, bom_title = _bom(diff) if diff.bom else (None, "")
    workloads = (Table("workload-changes", (Header("workload"), Header("change"), Header("plan"),
                                            Header("utilization"), Header("time to train")),
                       tuple(_workload_row(w) for w in diff.workloads), sortable=False) if diff.workloads else None)
    detail_rows = tuple(Row((Cell(w.name), Cell(c.field), Cell(value_text(c.old)), Cell(value_text(c.new))),
                            key=f"workload-field|{w.name}|{c.field}") for w in diff.workloads for c in w.fields)
    details = (Table("workload-fields", (Header("workload"), Header("field"), Header("old"), Header("new")),
                     detail_rows, sortable=False) if detail_rows else None)
    title = (f"Design diff: {diff.old_name}" if diff.old_name == diff.new_name
             else f"Design diff: {diff.old_name} → {diff.new_name}")
    return DiffPage(
        title=title, headline=_headline(diff), is_empty=diff.is_empty, cost_chart=chart, cost=cost,
        system=_fields_table("system-changes", "system", diff.system) if diff.system else None,
        workloads=workloads, workload_fields=details, bom=bom_table, bom_title=bom_title,
        bom_categories=tuple(sections.section_label(s) for s in sections.sections_in_order(
            sections.section_of(category=c.category, role=c.role) for c in diff.bom)),
        inputs=_fields_table("input-changes", "input", diff.inputs) if diff.inputs else None,
    )


def change_keys(diff: DesignDiff) -> tuple[str, ...]:
    """The key of every change the diff holds, as the page's rows name them (for tests and scripts)."""
    keys = [f"cost|{name}" for name in diff.money_rows()] if not diff.is_empty else []
    keys += [f"system|{c.field}" for c in diff.system]
    keys += [f"workload|{w.name}" for w in diff.workloads]
    keys += [f"workload-field|{w.name}|{c.field}" for w in diff.workloads for c in w.fields]
    keys += [f"bom|{c.category}|{c.role}|{c.sku}" for c in diff.bom]
    keys += [f"input|{c.field}" for c in diff.inputs]
    return tuple(keys)
