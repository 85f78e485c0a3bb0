"""Renderers of what-if studies: the frontier and the sweep as text tables and JSON-ready data (pure).

The frontier's plot is :func:`designer.pictures.plot.render_frontier`.
"""

from __future__ import annotations

__all__ = ["render_frontier_table", "render_sweep_table", "frontier_to_json_dict", "sweep_to_json_dict"]

from typing import Any

from tabulate import tabulate

from designer.design.study import Frontier, Outcome, Sweep
from designer.spec import units


def _pct(change: float) -> str:
    return f"{change:+.1%}" if change else "0%"


def _status(o: Outcome) -> str:
    return units.format_money_short(o.total_usd) if o.status == "ok" else o.status


def _target_text(target: str, value: float) -> str:
    if target == "budget":
        return units.format_money_short(value)
    if target == "utilization":
        return f"{value:.0%}" if round(value * 100, 6).is_integer() else f"{value:.1%}"
    return f"{value:g}x"


def render_frontier_table(frontier: Frontier) -> str:
    """The frontier as a text table: one row per value, the optimum, then every class's best."""
    # Class headers without their "fabric=" / "deployment=" prefix: the values do not overlap.
    headers = [frontier.target, "optimum", "chosen system", *(c.partition("=")[2] or c for c in frontier.classes)]
    rows = []
    for p in frontier.points:
        o = p.outcome
        classes = dict(o.classes)
        rows.append([_target_text(frontier.target, p.value), _status(o), o.system or o.reason,
                     *(units.format_money_short(classes.get(c)) for c in frontier.classes)])
    text = tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True) + "\n"
    for s in frontier.switchovers:
        text += (f"optimum switches between {_target_text(frontier.target, s.low)} and "
                 f"{_target_text(frontier.target, s.high)}: {s.before} -> {s.after}\n")
    return text


def render_sweep_table(result: Sweep) -> str:
    """The sweep as text: the base decision, a table per variable, then where the decision changes."""
    base = result.base
    out = [f"base: {base.system or base.status} ({_status(base)})"]
    for var in result.variations:
        rows = [[_pct(p.change), _status(p.outcome), p.outcome.system or p.outcome.reason,
                 "" if p.outcome.key == base.key else "changed"]
                for p in result.points if p.variable == var.name]
        out.append("")
        out.append(tabulate(rows, headers=[var.name, "total", "chosen system", "vs base"], tablefmt="simple",
                            disable_numparse=True))
    out.append("")
    if not result.crossovers:
        out.append("the chosen design does not change over the ranges swept")
    for x in result.crossovers:
        out.append(f"{x.variable}: the design changes between {_pct(x.low)} and {_pct(x.high)}: "
                   f"{x.before.system or x.before.status} ({_status(x.before)}) -> "
                   f"{x.after.system or x.after.status} ({_status(x.after)})")
    return "\n".join(out) + "\n"


def _outcome_json(o: Outcome) -> dict[str, Any]:
    return {"status": o.status, "system": o.system or None, "technology": o.technology or None,
            "total_usd": None if o.total_usd is None else round(o.total_usd, 2), "reason": o.reason or None}


def frontier_to_json_dict(frontier: Frontier) -> dict[str, Any]:
    """The frontier as JSON-ready data (money in dollars, rounded to cents)."""
    return {
        "target": frontier.target,
        "classes": list(frontier.classes),
        "points": [{"value": p.value, **_outcome_json(p.outcome),
                    "classes": {k: None if v is None else round(v, 2) for k, v in p.outcome.classes}}
                   for p in frontier.points],
        "switchovers": [{"low": s.low, "high": s.high, "from": s.before, "to": s.after} for s in frontier.switchovers],
    }


def sweep_to_json_dict(result: Sweep) -> dict[str, Any]:
    """The sweep as JSON-ready data: base, then per variable its points and located changes."""
    return {
        "base": _outcome_json(result.base),
        "tolerance": result.tolerance,
        "variables": [{
            "name": var.name, "low": var.low, "high": var.high,
            "points": [{"change": p.change, **_outcome_json(p.outcome)}
                       for p in result.points if p.variable == var.name],
            "changes": [{"low": x.low, "high": x.high, "at": round(x.at, 6), "from": _outcome_json(x.before),
                         "to": _outcome_json(x.after)} for x in result.crossovers if x.variable == var.name],
        } for var in result.variations],
    }
