"""The review page's workloads: predictions per workload, where step time goes, the schedule, the model's band.

Time to train comes with the range the performance model's error against published runs gives
(:class:`~designer.report.html.band.ErrorBand`); a deadline inside that range is flagged as at
risk, because a run as far off as the worst published comparison would miss it.
"""

from __future__ import annotations

__all__ = ["KNOWN_WORKLOAD_FIELDS", "workload_table", "step_chart", "schedule", "workload_extras", "model_assumptions", "band_items",
           "band_sources"]

from designer.design import bom
from designer.design.model import Design, WorkloadResult
from designer.report import fmt as f
from designer.report.html.band import ErrorBand
from designer.report.html.charts import PALETTE, Bar, Segment, Span, schedule_chart, stacked_bars
from designer.report.html.view import Cell, Figure, Header, Item, Row, Table, extra_fields, num
from designer.report.summary import utilization_target

KNOWN_WORKLOAD_FIELDS = ("name", "deployment", "server", "gpus", "tp", "pp", "dp", "ep", "cp", "microbatch", "zero",
                         "step_time_s", "utilization", "mfu", "tflops_per_gpu", "tokens_per_s", "time_to_train_days",
                         "deadline_days", "memory_gb_per_gpu", "breakdown", "cost_usd", "software", "start_day",
                         "end_day", "recompute", "assumptions")
# Step-time parts that add up to the step (the per-dimension communication times are totals
# before overlap, shown in the extras, not parts of the step).
_STEP_PARTS = (("compute_s", "compute", PALETTE[2]), ("exposed_comm_s", "exposed communication", PALETTE[1]),
               ("bubble_s", "pipeline bubble", PALETTE[3]), ("checkpoint_s", "checkpoint stall", PALETTE[4]))


def _plan(w: WorkloadResult) -> str:
    parts = [f"tp{w.tp}", f"pp{w.pp}", f"dp{w.dp}"] + [f"{k}{v}" for k, v in (("ep", w.ep), ("cp", w.cp)) if v > 1]
    recompute = getattr(w, "recompute", "")
    return " ".join(parts) + f" mb{w.microbatch} zero{w.zero}" + (f", recompute {recompute}" if recompute else "")


def _at_risk(w: WorkloadResult, band: ErrorBand | None) -> bool:
    if band is None or w.deadline_days is None:
        return False
    return band.time_range(w.time_to_train_days)[1] > w.deadline_days


def workload_table(design: Design, band: ErrorBand | None) -> Table:
    """One row per workload: where it runs, plan, step, utilization against the target, MFU, time to train."""
    headers = (Header("workload", note="and where it runs"), Header("GPUs", True), Header("plan"), Header("step", True),
               Header("utilization", True, "compute time over step time; the spec's minimum in brackets"),
               Header("MFU", True), Header("TFLOP/s/GPU", True), Header("tokens/s", True),
               Header("time to train", True), Header("model band", False, "real times the central 80% of the "
                                                                           "model's errors against published runs give"),
               Header("deadline", True), Header("margin", True), Header("memory/GPU", True),
               Header("cloud cost", True))
    cloud = any(w.cost_usd for w in design.workloads)
    if not cloud:
        headers = headers[:-1]
    rows = []
    for w in design.workloads:
        target = utilization_target(design, w.name)
        low_util = target is not None and bom.round_sig(w.utilization) < bom.round_sig(target)
        margin = None if w.deadline_days is None else w.deadline_days - w.time_to_train_days
        late = margin is not None and bom.round_sig(w.time_to_train_days) > bom.round_sig(w.deadline_days or 0)
        risk = _at_risk(w, band)
        if band is None:
            band_text = "-"
        else:
            lo, hi = band.time_range(w.time_to_train_days)
            band_text = f"{lo:,.1f} to {hi:,.1f} days"
        rows.append(Row((
            Cell(w.name, sub=f"{w.deployment}, {w.server}"), Cell(f"{w.gpus:,}", num(w.gpus), "n"),
            Cell(_plan(w), cls="nowrap"), Cell(f"{f.num(w.step_time_s)} s", num(w.step_time_s), "n"),
            Cell(f.pct(w.utilization) + ("" if target is None else f" (min {f.pct(target)})"), num(w.utilization),
                 "n bad" if low_util else "n"),
            Cell(f.pct(w.mfu), num(w.mfu), "n"), Cell(f.num(w.tflops_per_gpu), num(w.tflops_per_gpu), "n"),
            Cell(f.num(w.tokens_per_s), num(w.tokens_per_s), "n"),
            Cell(f.days(w.time_to_train_days), num(w.time_to_train_days), "n"),
            Cell(band_text, cls="bad" if risk else "", marks=("at risk",) if risk else ()),
            Cell(f.days(w.deadline_days), num(w.deadline_days or 0.0), "n"),
            Cell(f.days(margin), num(margin or 0.0), "n bad" if late else "n", ("late",) if late else ()),
            Cell(f"{f.num(w.memory_gb_per_gpu)} GB", num(w.memory_gb_per_gpu), "n"),
            Cell(f.usd(w.cost_usd), num(w.cost_usd), "n"))[: len(headers)], key=f"workload|{w.name}",
            cls="late" if late else ("risk" if risk else "")))
    return Table("workloads", headers, tuple(rows))


def step_chart(design: Design) -> Figure | None:
    """Each workload's step as shares of compute, exposed communication, bubble and checkpoint stall."""
    if not design.workloads:
        return None
    bars = []
    for w in design.workloads:
        b = w.breakdown
        step = w.step_time_s or 1.0
        segs = [Segment(label, getattr(b, name) / step, f.pct(getattr(b, name) / step), color)
                for name, label, color in _STEP_PARTS]
        rest = step - sum(getattr(b, name) for name, _, _ in _STEP_PARTS)
        if rest / step > 1e-3:
            segs.append(Segment("other", rest / step, f.pct(rest / step), PALETTE[7]))
        bars.append(Bar(w.name, tuple(segs), f"{f.num(w.step_time_s)} s"))
    svg = stacked_bars(tuple(bars), title="Where each step's time goes", scale=1.0, cls="step-chart")
    return Figure("step-chart", svg, "Share of each step: compute (the utilization), communication the "
                                     "GPUs wait for, pipeline bubble and checkpoint stalls; the step time at the end.")


def schedule(design: Design, band: ErrorBand | None) -> tuple[Figure | None, str]:
    """The schedule as bars on a day axis, with deadlines and the model's band; and a note on what it shows.

    When every workload records ``start_day`` and ``end_day`` the bars are the schedule; else
    each bar runs from day 0 for its time to train (the design file records no start days).
    """
    if not design.workloads:
        return None, "No workloads."
    planned = all(getattr(w, "start_day", None) is not None and getattr(w, "end_day", None) is not None
                  for w in design.workloads)
    spans = []
    for i, w in enumerate(design.workloads):
        start = float(getattr(w, "start_day")) if planned else 0.0
        end = float(getattr(w, "end_day")) if planned else w.time_to_train_days
        low = high = None
        if band is not None:
            lo, hi = band.time_range(end - start)
            low, high = start + lo, start + hi
        text = f"{f.days(end - start)} on {w.gpus:,} GPUs"
        spans.append(Span(w.name, start, end, w.deadline_days, low, high, text, PALETTE[i % len(PALETTE)]))
    svg = schedule_chart(tuple(spans), title="Schedule: each workload's run against its deadline",
                         horizon=design.horizon_days)
    note = ("Each bar is a workload's run from its start day to its end day"
            if planned else "The design file records no start days: each bar is a workload's time to train from "
                            "day 0, not a schedule")
    if band is not None:
        note += ("; the whiskers are the range the central 80% of the model's errors against published runs "
                 "gives")
    note += (f"; the red tick is the deadline; the horizon (day {f.num(design.horizon_days)}) is the dashed line "
             "when it falls near the runs.")
    return Figure("schedule", svg, note), note


def workload_extras(design: Design) -> tuple[tuple[str, tuple[Item, ...]], ...]:
    """Per workload: the communication totals before overlap and every field the table has no column for."""
    out = []
    for w in design.workloads:
        b = w.breakdown
        comm = (Item("communication before overlap",
                     f"tp {f.num(b.tp_comm_s)} s · pp {f.num(b.pp_comm_s)} s · dp {f.num(b.dp_comm_s)} s · "
                     f"ep {f.num(b.ep_comm_s)} s", "per step; the exposed part is in the chart"),)
        extra = extra_fields(b, [name for name in ("compute_s", "tp_comm_s", "pp_comm_s", "dp_comm_s", "ep_comm_s",
                                                   "bubble_s", "exposed_comm_s", "checkpoint_s")])
        more = tuple(i for i in extra_fields(w, KNOWN_WORKLOAD_FIELDS))
        days = tuple(Item(name.replace("_", " "), f.num(getattr(w, name)))
                     for name in ("start_day", "end_day") if getattr(w, name, None) is not None)
        out.append((w.name, comm + extra + days + more))
    return tuple(out)


def model_assumptions(design: Design) -> tuple[Item, ...]:
    """The figures the performance model filled in for each workload (``ffn`` and ``vocab`` defaults, ...)."""
    items = tuple(Item(w.name, "; ".join(getattr(w, "assumptions", ()) or ())) for w in design.workloads
                  if getattr(w, "assumptions", ()))
    return items or (Item("workloads", "no figure filled in by default"),)


def band_items(band: ErrorBand | None) -> tuple[Item, ...]:
    """What the performance model's error band is and where it comes from."""
    if band is None:
        return (Item("error band", "not available"),)
    items = [
        Item("published runs compared", f"{band.runs}", f"{band.left_out} could not be scored; see {band.document}"),
        Item("median error", f.pct(band.median_abs_error), "absolute, of the predicted step time"),
        Item("central 80% of errors", f"{band.p10_signed_error * 100:+.1f}% to {band.p90_signed_error * 100:+.1f}%",
             "predicted over published step time - 1; a predicted time t stands for a run of t / (1 + error)"),
        Item("extremes", f"{band.min_signed_error * 100:+.1f}% to {band.max_signed_error * 100:+.1f}%",
             "the runs furthest off"),
    ]
    return tuple(items)


def band_sources(band: ErrorBand | None) -> Table | None:
    """The model's error per published source."""
    if band is None:
        return None
    rows = tuple(Row((Cell(s.name), Cell(str(s.runs), num(s.runs), "n"),
                      Cell(f.pct(s.median_abs_error), num(s.median_abs_error), "n"),
                      Cell(f.pct(s.max_abs_error), num(s.max_abs_error), "n")), key=f"source|{s.name}")
                 for s in band.sources)
    return Table("model-error", (Header("published source"), Header("runs", True), Header("median error", True),
                                 Header("worst error", True)), rows, sortable=False)
