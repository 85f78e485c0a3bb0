"""The review page of one design, as data: the decision, system, cost, workloads, fabric, BOM, alternatives.

:func:`build_review` turns a design (and, when given, the catalog it was made with, for the fabric
drawing and the price marks) into a :class:`ReviewPage` that the template lays out. Sections the
design has no data for say so instead of showing nothing; fields the page has no section for
appear under "Also recorded" (:func:`~designer.report.html.view.extra_fields`).
"""

from __future__ import annotations

__all__ = ["ReviewPage", "build_review"]

from dataclasses import dataclass

from designer.catalog.types import Catalog
from designer.design import bom, sections
from designer.design.model import Design
from designer.errors import DesignerError
from designer.report import fmt as f
from designer.report.html import bomtable, costs, workloads
from designer.report.html.band import ErrorBand
from designer.report.html.view import Cell, Figure, Header, Item, Row, Table, extra_fields, num, value_text
from designer.report.summary import quantity_text, system_line

_KNOWN_DESIGN = ("software", "catalog_files", "tool_version", "spec_name", "spec_digest", "catalog_digest", "catalog_dates", "objective",
                 "horizon_days", "system", "cost", "workloads", "bom", "alternatives", "constraints", "solver",
                 "warnings", "facility", "schema_version")
_KNOWN_SYSTEM = ("deployment", "server", "gpu", "nodes", "gpus", "fabric", "topology", "oversubscription",
                 "switch", "tiers", "racks", "power_kw", "pricing")


@dataclass(frozen=True, slots=True)
class ReviewPage:
    """Everything the review template shows, formatted."""

    title: str
    decision: str
    status: tuple[Item, ...]  # solver status, warnings, soft prices: the badges under the decision
    meta: tuple[Item, ...]
    figures: tuple[Item, ...]  # headline numbers
    system: tuple[Item, ...]
    cost_chart: Figure
    cost_table: Table
    workloads: Table
    step_chart: Figure | None
    schedule: Figure | None
    schedule_note: str
    workload_extra: tuple[tuple[str, tuple[Item, ...]], ...]
    fabric: Figure | None
    fabric_note: str
    bom: Table
    bom_categories: tuple[str, ...]
    bom_note: str
    alternatives: Table
    constraints: Table
    assumptions: tuple[tuple[str, tuple[Item, ...]], ...]
    catalog_dates: Table
    model_error: Table | None
    warnings: tuple[str, ...]
    extra: tuple[Item, ...]
    generator: str


def _decision(design: Design, band: ErrorBand | None) -> str:
    """One sentence: what is bought or rented, for how much, and whether every workload is on time."""
    s, c = design.system, design.cost
    years = design.horizon_days / 365.0
    horizon = f"{f.num(years)} years" if abs(years - round(years)) < 1e-9 else f"{f.num(design.horizon_days)} days"
    if s.deployment == "cloud":
        what = f"Rent up to {s.nodes:,} x {s.server} ({s.gpus:,} {s.gpu} GPUs, {s.pricing or 'on_demand'} pricing)"
    else:
        article = "an" if s.fabric[:1].lower() in "aeiou" else "a"
        what = (f"Buy {s.nodes:,} x {s.server} ({s.gpus:,} {s.gpu} GPUs) on {article} {s.fabric} "
                f"{s.topology.replace('_', '-')} "
                f"fabric ({s.tiers} switch tier{'s' if s.tiers != 1 else ''}, {s.racks:,} racks)")
        if s.deployment == "hybrid":
            rented = sorted({w.server for w in design.workloads if w.deployment == "cloud"})
            what += f" and rent {', '.join(rented)}"
    late = [w.name for w in design.workloads
            if w.deadline_days is not None and bom.round_sig(w.time_to_train_days) > bom.round_sig(w.deadline_days)]
    n = len(design.workloads)
    if late:
        timing = f"{', '.join(late)} miss{'es' if len(late) == 1 else ''} the deadline"
    else:
        timing = "the workload finishes by its deadline" if n == 1 else f"all {n} workloads finish by their deadlines"
    residual = getattr(c, "residual_usd", 0.0)
    credit = f", less {f.usd(residual)} residual value" if residual else ""
    return (f"{what} for {f.usd(c.total_usd)} over {horizon} "
            f"(capex {f.usd(c.capex_usd)}, opex {f.usd(c.opex_usd)}, cloud {f.usd(c.cloud_usd)}{credit}); {timing}.")


def _status(design: Design, catalog: Catalog | None) -> tuple[Item, ...]:
    sol = design.solver
    out = [Item("solver", f"{sol.status}" + (f", gap {f.pct(sol.gap, 2)}" if sol.gap else ""),
                "ok" if sol.status == "optimal" else "warn")]
    est, unpriced = bomtable.mark_counts(design, catalog)
    out.append(Item("prices", f"{est} estimated, {unpriced} unpriced of {len(design.bom)} lines",
                    "warn" if est or unpriced else "ok"))
    out.append(Item("warnings", str(len(design.warnings)), "warn" if design.warnings else "ok"))
    return tuple(out)


def _system(design: Design) -> tuple[Item, ...]:
    s = design.system
    items = [
        Item("deployment", s.deployment + (f" ({s.pricing} pricing)" if s.pricing else "")),
        Item("servers", f"{s.nodes:,} x {s.server}", f"{s.gpus:,} x {s.gpu} GPUs"),
        Item("fabric", f"{s.fabric}, {s.topology}", f.fabric_shape(s.tiers, s.oversubscription)),
        Item("switch", s.switch or "-"),
        Item("racks", f"{s.racks:,}"),
        Item("IT power", f"{f.num(s.power_kw)} kW", "before PUE"),
    ]
    return tuple(items) + extra_fields(s, _KNOWN_SYSTEM)


def _alternatives(design: Design) -> Table:
    headers = (Header("option"), Header("system"), Header("total", True), Header("vs chosen", True),
               Header("feasible"), Header("reason"))
    rows = []
    for a in design.alternatives:
        chosen = a.reason == "chosen"
        rows.append(Row((
            Cell(a.label), Cell(system_line(a.deployment, a.nodes, a.server, a.fabric, a.topology)),
            Cell("-" if a.total_usd is None else f.usd(a.total_usd), num(a.total_usd or 0.0), "n"),
            Cell("-" if a.delta_usd is None else f.usd_delta(a.delta_usd), num(a.delta_usd or 0.0), "n"),
            Cell("yes" if a.feasible else "no", cls="" if a.feasible else "bad"), Cell(a.reason)),
            key=f"alt|{a.label}", cls="chosen" if chosen else ""))
    return Table("alternatives", headers, tuple(rows))


def _constraints(design: Design) -> Table:
    headers = (Header("constraint"), Header("value", True), Header("limit", True), Header("slack", True),
               Header("slack %", True, "slack over the limit"), Header("binding"))
    rows = []
    for c in design.constraints:
        share = c.slack / abs(c.limit) if c.limit else None
        rows.append(Row((
            Cell(c.name), Cell(quantity_text(c.value, c.unit), num(c.value), "n"),
            Cell(quantity_text(c.limit, c.unit), num(c.limit), "n"),
            Cell(quantity_text(c.slack, c.unit), num(c.slack), "n"),
            Cell(f.pct(share), num(share or 0.0), "n"),
            Cell("binding" if c.binding else "slack", cls="bad" if c.binding else "",
                 marks=("binding",) if c.binding else ())), key=f"constraint|{c.name}",
            cls="binding" if c.binding else ""))
    return Table("constraints", headers, tuple(rows))


def _facility(design: Design) -> tuple[Item, ...]:
    fa = design.facility
    if fa is None:
        return (Item("facility", "not recorded in this design file",
                     "written by an older designer; solve again to record it"),)
    spec = set(fa.from_spec)

    def origin(key: str) -> str:
        return "from the spec" if key in spec else f"catalog facility '{fa.name}'"
    items = [
        Item("electricity", f"${fa.electricity_usd_per_kwh:.4g}/kWh", origin("electricity")),
        Item("PUE", f.num(fa.pue), origin("pue")),
        Item("rack", f"{f.num(fa.rack_power_kw)} kW, {fa.rack_units}U", origin("rack_power")),
        Item("installation", f.pct(fa.installation_fraction), "of equipment, once"),
    ]
    if fa.maintenance_fraction_per_year is not None:
        items.append(Item("maintenance", f.pct(fa.maintenance_fraction_per_year), "of equipment per year"))
    else:
        items.append(Item("support", "by vendor", "contracts per vendor, in the cost lines"))
    space = getattr(fa, "space", "")
    if space == "colocation" and getattr(fa, "colocation_usd_per_kw_month", 0.0):
        items.append(Item("space", f"colocation at ${fa.colocation_usd_per_kw_month:,.2f} per kW-month"))
    elif space == "owned" and getattr(fa, "build_usd_per_mw", 0.0):
        items.append(Item("space", f"owned: {f.usd(fa.build_usd_per_mw)} per MW built",
                          f"over {f.num(fa.build_life_years)} years"))
    known = ("name", "electricity_usd_per_kwh", "pue", "rack_power_kw", "rack_units", "installation_fraction",
             "maintenance_fraction_per_year", "from_spec", "source", "as_of", "space", "colocation_usd_per_kw_month",
             "build_usd_per_mw", "build_life_years")
    items += extra_fields(fa, known)
    items.append(Item("source", fa.source, f"as of {fa.as_of}"))
    return tuple(items)


def _prices(design: Design, catalog: Catalog | None) -> tuple[Item, ...]:
    marks = [bomtable.line_marks(line, design, catalog) for line in design.bom]
    bases: dict[str, int] = {}
    for m in marks:
        bases[m.basis or "not stated"] = bases.get(m.basis or "not stated", 0) + 1
    dates = sorted({m.as_of for m in marks if m.as_of})
    origin = {m.origin for m in marks} - {""}
    items = [Item("price basis", ", ".join(f"{k}: {v} lines" for k, v in sorted(bases.items())) or "-"),
             Item("price dates", f"{dates[0]} to {dates[-1]}" if len(dates) > 1 else (dates[0] if dates else "-"),
                  "of the BOM lines' prices")]
    est, unpriced = sum(m.estimate for m in marks), sum(m.unpriced for m in marks)
    items.append(Item("soft prices", f"{est} estimated, {unpriced} unpriced",
                      "marked in the bill of materials"))
    if origin == {"catalog"} or not origin:
        where = ("the catalog this page was rendered with" if catalog is not None else "no catalog was given")
        if catalog is not None and design.catalog_digest and catalog.digest != design.catalog_digest:
            where += ", which differs from the one the design was made with"
        items.append(Item("marks from", where))
    items.append(Item("catalog digest", design.catalog_digest[:16] or "-", "sha256 of the catalog files"))
    return tuple(items)


def _software(design: Design) -> tuple[Item, ...]:
    """The software stack the predictions assume, wherever the design records it."""
    items = []
    top = getattr(design, "software", None)
    if top is not None:
        items.append(Item("all workloads", value_text(top)))
    for w in design.workloads:
        stack = getattr(w, "software", None)
        if stack is not None:
            items.append(Item(w.name, value_text(stack)))
    return tuple(items) or (Item("software stack", "not recorded in this design file",
                                 "the performance model's default; see docs/model.md"),)


def _catalog_dates(design: Design) -> Table:
    """Each catalog file the design was made with: its newest ``as_of`` and its sha256 when recorded."""
    digests = getattr(design, "catalog_files", {}) or {}
    names = sorted(set(design.catalog_dates) | set(digests))
    rows = tuple(Row((Cell(name), Cell(design.catalog_dates.get(name, "-")), Cell(digests.get(name, "-"), cls="sku")),
                     key=f"catalog|{name}") for name in names)
    return Table("catalog-dates", (Header("catalog file"), Header("newest as_of"), Header("sha256")), rows,
                 sortable=False)


def _fabric(design: Design, catalog: Catalog | None) -> tuple[Figure | None, str, tuple[str, ...]]:
    """The fabric drawing, or why there is none (the page says it; the command warns)."""
    if catalog is None:
        return None, "No catalog was given, so the fabric could not be rebuilt and drawn.", ()
    from designer.pictures import draw, svg  # networkx and the topology load only for a drawing

    try:
        drawing = draw.draw_design(design, catalog)
    except DesignerError as exc:
        return None, f"The fabric could not be drawn: {exc.message}", (f"fabric not drawn: {exc.message}",)
    note = drawing.subtitle + ("; devices are grouped where a tier is large" if drawing.aggregated else "")
    if drawing.warnings:
        note += ". Drawing warnings: " + "; ".join(drawing.warnings)
    return Figure("fabric", svg.render_svg(drawing), note), "", drawing.warnings


def build_review(design: Design, catalog: Catalog | None = None, band: ErrorBand | None = None,
                 generator: str = "") -> tuple[ReviewPage, tuple[str, ...]]:
    """The review page of ``design``.

    Args:
        design: a design (freshly solved or loaded from its file).
        catalog: the catalog the design was made with: the fabric is redrawn from it
            (:func:`designer.pictures.draw.draw_design`) and BOM lines without price marks of
            their own are marked from its entries' provenance. ``None`` leaves both out, said so.
        band: the performance model's error against published runs, for the time-to-train band.
        generator: the program and version that renders the page (shown in its footer).

    Returns:
        The page and the warnings a command should print (a drawing that failed or disagrees).
    """
    fabric, fabric_note, warnings = _fabric(design, catalog)
    s = design.system
    title = f"Design review: {design.spec_name}"
    meta = (Item("objective", design.objective), Item("horizon", f.days(design.horizon_days)),
            Item("designed by", f"designer {design.tool_version}"),
            Item("spec digest", design.spec_digest[:16] or "-", "sha256 of the spec"),
            Item("schema version", str(design.schema_version)))
    figures = (Item("total", f.usd(design.cost.total_usd)), Item("capex", f.usd(design.cost.capex_usd)),
               Item("opex", f.usd(design.cost.opex_usd)), Item("cloud", f.usd(design.cost.cloud_usd)),
               Item("GPUs", f"{s.gpus:,}", s.gpu), Item("IT power", f"{f.num(s.power_kw)} kW"))
    if getattr(design.cost, "residual_usd", 0.0):
        figures = figures[:4] + (Item("residual", f.usd_delta(-design.cost.residual_usd), "credit at the horizon"),) \
            + figures[4:]
    sched, sched_note = workloads.schedule(design, band)
    est, unpriced = bomtable.mark_counts(design, catalog)
    bom_note = (f"{len(design.bom)} lines; {est} estimated and {unpriced} unpriced (marked). Click a heading to "
                "sort; type to filter; the total follows the lines shown.")
    page = ReviewPage(
        title=title, decision=_decision(design, band), status=_status(design, catalog), meta=meta, figures=figures,
        system=_system(design), cost_chart=costs.cost_chart(design), cost_table=costs.cost_table(design),
        workloads=workloads.workload_table(design, band), step_chart=workloads.step_chart(design),
        schedule=sched, schedule_note=sched_note, workload_extra=workloads.workload_extras(design),
        fabric=fabric, fabric_note=fabric_note, bom=bomtable.bom_table(design, catalog),
        bom_categories=tuple(sections.section_label(s) for s in sections.sections_in_order(sections.section_of(l) for l in design.bom)),
        bom_note=bom_note,
        alternatives=_alternatives(design), constraints=_constraints(design),
        assumptions=(("Facility", _facility(design)), ("Prices", _prices(design, catalog)),
                     ("Software stack", _software(design)),
                     ("Workload figures assumed", workloads.model_assumptions(design)),
                     ("Performance model", workloads.band_items(band)),
                     ("Solver", _solver(design))),
        catalog_dates=_catalog_dates(design), model_error=workloads.band_sources(band), warnings=design.warnings,
        extra=extra_fields(design, _KNOWN_DESIGN), generator=generator,
    )
    return page, warnings


def _solver(design: Design) -> tuple[Item, ...]:
    sol = design.solver
    return (Item("solver", sol.name, sol.status), Item("gap", f.pct(sol.gap, 2)),
            Item("candidates", f"{sol.candidates:,}", "candidate systems evaluated"),
            Item("program", f"{sol.variables:,} variables, {sol.constraints:,} constraints")) + extra_fields(
        sol, ("name", "status", "gap", "candidates", "variables", "constraints"))
