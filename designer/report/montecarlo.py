"""Renderers of a Monte Carlo study: the terminal table and the JSON document (pure).

The JSON's top-level keys (``format_version``, first, as in every document of
:mod:`designer.report.jsondoc`; ``study``, ``base``, ``designs``,
``robust_choice``, ``no_design_share``, ``failed_share``, ``scenarios``) are part of the
command-line contract. Money is in US dollars rounded to cents, factors to 9 significant digits;
nothing depends on the machine or the workers that ran the study, so the same study gives the
same bytes anywhere. The cost plot is :func:`designer.pictures.montecarlo.render_study`.
"""

from __future__ import annotations

__all__ = ["study_to_json_dict", "render_study_table", "design_id", "failed_scenarios"]

from typing import Any

from tabulate import tabulate

from designer.design.montecarlo import MonteCarlo, Scenario
from designer.report import jsondoc
from designer.spec import units


def design_id(index: int | None) -> int | None:
    """A design's number in the study's output (1-based, by share): ``D1`` is the most often cheapest."""
    return None if index is None else index + 1


def _money(x: float | None) -> float | None:
    return None if x is None else round(x, 2)


def _factor(x: float) -> float:
    return float(f"{x:.9g}")


def failed_scenarios(result: MonteCarlo) -> list[Scenario]:
    """Scenarios whose full solve failed or timed out, with their inputs."""
    return [s for s in result.scenarios if s.status in ("error", "timeout")]


def study_to_json_dict(result: MonteCarlo) -> dict[str, Any]:
    """The study as JSON-ready data (see the module docstring for the keys)."""
    designs = []
    for i, s in enumerate(result.designs):
        d = s.design
        designs.append({
            "id": design_id(i), "label": d.label, "deployment": d.deployment, "server": d.server, "gpu": d.gpu,
            "nodes": d.nodes, "fabric": d.fabric, "topology": d.topology, "switch": d.switch,
            "oversubscription": d.oversubscription, "rented": list(d.rented),
            "share": s.share, "scenarios_cheapest": s.cheapest, "feasible": s.feasible, "infeasible": s.infeasible,
            "unknown": s.unknown, "infeasible_share": s.infeasible_share,
            "cost_p10_usd": _money(s.cost_p10_usd), "cost_p50_usd": _money(s.cost_p50_usd),
            "cost_p90_usd": _money(s.cost_p90_usd), "cost_mean_usd": _money(s.cost_mean_usd),
            "regret_mean_usd": _money(s.regret_mean_usd), "base": s.base, "robust": s.robust,
        })
    robust = None
    if result.robust is not None:
        s = result.designs[result.robust]
        robust = {"design": design_id(result.robust), "label": s.design.label, "cost_p90_usd": _money(s.cost_p90_usd),
                  "feasible_share": 1.0 - s.infeasible_share, "min_feasible_share": result.min_feasible_share}
    return jsondoc.document({
        "study": {
            "spec": result.spec_name, "samples": result.samples, "seed": result.seed,
            "min_feasible_share": result.min_feasible_share,
            "inputs": [{"name": u.name, "distribution": u.distribution.text, "default": u.default}
                       for u in result.uncertainties],
        },
        "base": {"status": result.base_status, "design": design_id(result.base), "total_usd": _money(result.base_total_usd),
                 "reason": result.base_reason or None},
        "designs": designs,
        "robust_choice": robust,
        "no_design_share": result.no_design_share,
        "failed_share": result.failed_share,
        "scenarios": [{
            "index": s.index, "inputs": {name: _factor(f) for name, f in s.factors}, "status": s.status,
            "chosen": design_id(s.chosen), "cheapest": design_id(s.cheapest), "reason": s.reason or None,
            "designs": [{"id": design_id(j), "status": c.status, "total_usd": _money(c.total_usd),
                         "reason": c.reason or None} for j, c in enumerate(s.cells)],
        } for s in result.scenarios],
    })


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def render_study_table(result: MonteCarlo) -> str:
    """The study as text: what varied, each distinct design's share and cost percentiles, the robust
    choice, and the scenarios with no design or a failed solve."""
    out = [f"Study {result.spec_name}: {result.samples} scenario{'s' if result.samples != 1 else ''}, "
           f"seed {result.seed}"]
    for u in result.uncertainties:
        note = " (the model's error spread, docs/validation.md)" if u.default else ""
        out.append(f"  {u.name} = {u.distribution.text}{note}")
    if not result.uncertainties:
        out.append("  nothing varies: every scenario is the base")
    if result.base is not None:
        out.append(f"on the point estimates: D{design_id(result.base)} {result.designs[result.base].design.label}, "
                   f"{units.format_money_short(result.base_total_usd)}")
    else:
        out.append(f"on the point estimates: {result.base_status} ({result.base_reason})")
    out.append("")
    if result.designs:
        rows = []
        for i, s in enumerate(result.designs):
            mark = "".join(m for m, on in (("*", s.robust), ("b", s.base)) if on)
            rows.append([f"D{design_id(i)}{mark}", s.design.label, _pct(s.share), _pct(s.infeasible_share),
                         units.format_money_short(s.cost_p10_usd), units.format_money_short(s.cost_p50_usd),
                         units.format_money_short(s.cost_p90_usd), units.format_money_short(s.regret_mean_usd)])
        out.append(tabulate(rows, headers=["", "design", "cheapest", "infeasible", "cost p10", "p50", "p90",
                                           "mean regret"], tablefmt="simple", disable_numparse=True))
        out.append("* robust choice   b chosen on the point estimates   cheapest: share of scenarios where it "
                   "costs least; infeasible: share where it misses a constraint")
    else:
        out.append("no scenario has a design that meets the constraints")
    out.append("")
    if result.robust is not None:
        s = result.designs[result.robust]
        out.append(f"robust choice: D{design_id(result.robust)} {s.design.label}, "
                   f"{units.format_money_short(s.cost_p90_usd)} at the 90th percentile, meets the constraints in "
                   f"{1.0 - s.infeasible_share:.1%} of scenarios (at least {result.min_feasible_share:.0%} asked)")
    else:
        out.append(f"robust choice: none; no design meets the constraints in at least "
                   f"{result.min_feasible_share:.0%} of scenarios (lower --min-feasible to compare the others)")
    if result.no_design_share:
        out.append(f"no design meets the constraints in {result.no_design_share:.1%} of scenarios")
    failed = failed_scenarios(result)
    if failed:
        out.append(f"{len(failed)} scenario{'s' if len(failed) != 1 else ''} failed "
                   f"({result.failed_share:.1%}); their inputs:")
        for s in failed[:10]:
            inputs = ", ".join(f"{n}={f:.4g}" for n, f in s.factors) or "none"
            out.append(f"  #{s.index} ({inputs}): {s.status}: {s.reason}")
        if len(failed) > 10:
            out.append(f"  ... and {len(failed) - 10} more (see --format json)")
    return "\n".join(out) + "\n"
