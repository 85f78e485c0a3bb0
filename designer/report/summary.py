"""The design summary: chosen system, cost, per-workload plan and predictions, top BOM lines, alternatives.

Laid out the way SkyPilot's optimizer prints its plan: what was chosen, what it costs, and the
runners-up with their cost difference and the reason they lost.
"""

from __future__ import annotations

__all__ = ["SUMMARY_FORMATS", "TOP_BOM_LINES", "render_summary", "key_values", "utilization_target",
           "system_line", "quantity_text"]

from typing import Sequence

from designer.design import bom
from designer.design.io import design_to_json_dict, dump_design
from designer.design.model import Alternative, CostBreakdown, Design, PriceBookUsed, WorkloadResult
from designer.report import fmt as f
from designer.report import jsondoc
from designer.spec import units

SUMMARY_FORMATS = ("table", "markdown", "yaml", "json")
# The summary lists the costliest BOM lines only; `render_bom` lists them all.
TOP_BOM_LINES = 5


def key_values(rows: Sequence[tuple[str, str]], fmt: str) -> str:
    """Name/value lines: a bullet list in Markdown, aligned columns in text."""
    if f.is_markdown(fmt):
        return "\n".join(f"- **{k}**: {v}" for k, v in rows)
    width = max((len(k) for k, _ in rows), default=0)
    return "\n".join(f"  {k.ljust(width)}  {v}" for k, v in rows)


def quantity_text(x: float, unit: str) -> str:
    """A constraint value in its unit: dollars, days, a fraction, watts, else the number and its unit."""
    u = unit.strip().lower()
    if u in ("usd", "$", "dollars"):
        return f.usd(x)
    if u in ("days", "day"):
        return f.days(x)
    if u == "fraction":
        return f.fraction(x)
    if u == "w":
        return units.format_power(bom.round_sig(x))
    if u in ("", "ratio"):
        return f.num(x)
    return f"{f.num(x)} {unit}"


def system_line(deployment: str, nodes: int, server: str, fabric: str, topology: str) -> str:
    """One-line description of a system: ``on_prem, 128x dgx-h100, infiniband rail_optimized``.

    An alternative class in which no design was found has no size (``nodes`` 0): its server is
    named without a count.

    >>> system_line("on_prem", 128, "dgx-h100", "infiniband", "rail_optimized")
    'on_prem, 128x dgx-h100, infiniband rail_optimized'
    >>> system_line("on_prem", 0, "gb200-nvl72", "ethernet", "fat_tree")
    'on_prem, gb200-nvl72, ethernet fat_tree'
    """
    count = f"{nodes}x " if nodes > 0 else ""
    return f"{deployment}, {count}{server}, {fabric} {topology}"


def utilization_target(design: Design, workload: str) -> float | None:
    """The minimum utilization the spec asks of ``workload``, from the design's constraints.

    Looks for ``min_utilization[<workload>]`` first, then a global ``min_utilization``.
    """
    by_name = {c.name: c.limit for c in design.constraints}
    return by_name.get(f"min_utilization[{workload}]", by_name.get("min_utilization"))


def _heading(text: str, fmt: str) -> str:
    return f"### {text}\n\n" if f.is_markdown(fmt) else f"{text}\n"


def _system(design: Design, fmt: str) -> str:
    s = design.system
    rows = [
        ("deployment", s.deployment + (f" ({s.pricing} pricing)" if s.pricing else "")),
        ("servers", f"{s.nodes:,} x {s.server} ({s.gpus:,} x {s.gpu} GPUs)"),
        ("fabric", f"{s.fabric}, {s.topology}, {f.fabric_shape(s.tiers, s.oversubscription)}"),
        ("switch", s.switch or "-"),
        *([("link per GPU", f"{f.num(s.link_gbps_per_gpu)} Gb/s" + (
            f" (NICs run below their {f.num(s.nic_native_gbps)} Gb/s)" if s.nic_native_gbps else ""))]
          if s.link_gbps_per_gpu else []),
        ("racks", f"{s.racks:,}"),
        ("IT power", f"{f.num(s.power_kw)} kW before PUE"),
    ]
    return _heading("System", fmt) + key_values(rows, fmt)


def _cost(design: Design, fmt: str) -> str:
    c = design.cost
    head = _heading(f"Cost over {f.num(design.horizon_days)} days", fmt)
    gap = "\n\n" if f.is_markdown(fmt) else "\n"
    body = ""
    if c.lines:
        rows = [[l.kind, l.name, f.usd(-l.amount_usd if l.kind == "residual" else l.amount_usd),
                 l.basis + (" (estimate)" if l.estimate else "")] for l in c.lines]
        body = f.table(rows, ("kind", "line", "amount", "how"), _tfmt(fmt), "llrl") + gap
    rows = [("capex", f.usd(c.capex_usd)), ("opex", f.usd(c.opex_usd))]
    if c.residual_usd:
        rows.append(("residual", f"{f.usd(-c.residual_usd)} (value of the bought hardware at the horizon)"))
    rows += [("cloud", f.usd(c.cloud_usd)), ("total", f.bold(f.usd(c.total_usd), fmt))]
    book = design.price_book
    if book is not None:
        rows.append(("price book", _book_text(book, c)))
    counts = bom.price_counts(design.bom)
    rows.append(("prices", bom.price_footer(counts)))
    assumed = [l.name for l in c.lines if l.estimate and l.kind != "cloud"]
    if assumed:
        rows.append(("estimated lines", ", ".join(dict.fromkeys(assumed))))
    return head + body + key_values(rows, fmt)


def _book_text(book: PriceBookUsed, c: CostBreakdown) -> str:
    """The totals in the book's currency and the discounts the prices carry."""
    off = ", ".join(f"{vendor} {share:.1%}" for vendor, share in book.discounts.items()) or "none"
    amounts = ""
    if book.currency != "USD":
        def money(usd: float) -> str:
            return f"{book.currency} {usd * book.exchange_rate:,.2f}"
        amounts = (f"total {money(c.total_usd)} (capex {money(c.capex_usd)}, opex {money(c.opex_usd)}, "
                   f"cloud {money(c.cloud_usd)}) at {book.exchange_rate:g} {book.currency} per USD; ")
    return f"{book.name}: {amounts}discounts {off} ({book.source}, {book.as_of})"


def _plan(w: WorkloadResult) -> str:
    extra = "".join(f" {k}{v}" for k, v in (("ep", w.ep), ("cp", w.cp), ("v", w.virtual_stages)) if v > 1)
    extra += f" etp{w.etp}" if w.etp is not None else ""
    extra += " dualpipe" if w.schedule == "dualpipe" else ""
    return f"tp{w.tp} pp{w.pp} dp{w.dp}{extra}"


def _meets(w: WorkloadResult) -> str:
    if w.deadline_days is None:
        return "-"
    return "yes" if bom.round_sig(w.time_to_train_days) <= bom.round_sig(w.deadline_days) else "NO"


def _workloads(design: Design, fmt: str) -> str:
    rows = []
    for w in design.workloads:
        target = utilization_target(design, w.name)
        util = f.pct(w.utilization) + ("" if target is None else f" (min {f.pct(target)})")
        rows.append([w.name, f"{w.gpus:,}", _plan(w), f"{f.num(w.step_time_s)} s", util, f.pct(w.mfu),
                     f.num(w.tflops_per_gpu), f.days(w.time_to_train_days), f.days(w.deadline_days), _meets(w)])
    headers = ("workload", "GPUs", "plan", "step", "utilization", "MFU", "TFLOP/s/GPU", "time to train",
               "deadline", "on time")
    return _heading("Workloads", fmt) + f.table(rows, headers, _tfmt(fmt), "lrlrrrrrrl")


def _top_bom(design: Design, fmt: str) -> str:
    lines = bom.sort_lines(design.bom)
    if not lines:
        return _heading("Bill of materials", fmt) + "(empty)"
    total = bom.bom_totals(lines).total_usd
    # Costliest first; sort_lines order breaks ties so the selection is stable.
    top = sorted(lines, key=lambda l: -bom.line_total_usd(l))[:TOP_BOM_LINES]
    rows = [[l.category, l.sku, l.role, f.qty(l.quantity), f.usd(bom.line_total_usd(l)),
             f.pct(bom.line_total_usd(l) / total if total else None)] for l in top]
    body = f.table(rows, ("category", "SKU", "role", "quantity", "total", "share"), _tfmt(fmt), "lllrrr")
    note = (f"{len(top)} costliest of {len(lines)} lines; BOM total {f.usd(total)}; "
            f"{bom.price_footer(bom.price_counts(lines))}")
    gap = "\n\n" if f.is_markdown(fmt) else "\n"
    return _heading("Bill of materials (costliest lines)", fmt) + body + gap + note


def _alt_row(a: Alternative) -> list[str]:
    return [a.label, system_line(a.deployment, a.nodes, a.server, a.fabric, a.topology),
            "-" if a.total_usd is None else f.usd(a.total_usd),
            "-" if a.delta_usd is None else f.usd_delta(a.delta_usd), a.reason]


def _alternatives(design: Design, fmt: str) -> str:
    if not design.alternatives:
        return _heading("Alternatives", fmt) + "(none recorded)"
    rows = [_alt_row(a) for a in design.alternatives]
    body = f.table(rows, ("option", "system", "total", "vs chosen", "reason"), _tfmt(fmt), "llrrl")
    return _heading("Alternatives", fmt) + body


def _tfmt(fmt: str) -> str:
    return "markdown" if f.is_markdown(fmt) else "table"


def render_summary(design: Design, fmt: str = "table") -> str:
    """A summary of ``design`` for people.

    ``table`` (terminal) and ``markdown``: a title line, then System, Cost over the horizon,
    Workloads (plan, step time, predicted utilization against the spec's minimum, MFU, time to train
    against the deadline), the costliest BOM lines, Alternatives (option, system, total, difference
    from the chosen design, reason) and warnings. ``yaml`` is the design file
    (:func:`designer.design.io.dump_design`); ``json`` is :func:`designer.design.io.design_to_json_dict`.

    Raises:
        InputError: an unknown format.
    """
    f.check_format(fmt, SUMMARY_FORMATS, "summary")
    if fmt == "yaml":
        return dump_design(design)
    if fmt == "json":
        return jsondoc.dumps(design_to_json_dict(design))
    s = design.system
    title = (f"Design {f.text(design.spec_name, fmt)}: {system_line(s.deployment, s.nodes, s.server, s.fabric, s.topology)}, "
             f"total {f.usd(design.cost.total_usd)}")
    meta = (f"objective {design.objective}, horizon {f.num(design.horizon_days)} days, "
            f"solver {design.solver.name} ({design.solver.status}, {design.solver.candidates:,} candidates), "
            f"designer {design.tool_version}")
    parts = [f"## {title}\n\n{meta}" if fmt == "markdown" else f"{title}\n{meta}",
             _system(design, fmt), _cost(design, fmt), _workloads(design, fmt), _top_bom(design, fmt),
             _alternatives(design, fmt)]
    if design.warnings:
        parts.append(_heading("Warnings", fmt) + "\n".join(f"- {f.text(w, fmt)}" for w in design.warnings))
    return "\n\n".join(parts) + "\n"
