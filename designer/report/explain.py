"""Why this design: the constraints that bind it, the slack on the others, and why the alternatives lost."""

from __future__ import annotations

__all__ = ["EXPLAIN_FORMATS", "best_alternatives", "render_explain"]

from designer.design.model import Alternative, ConstraintStatus, Design, PreferenceCredit
from designer.report import fmt as f
from designer.report.summary import quantity_text, system_line

EXPLAIN_FORMATS = ("text", "markdown")
# Alternative labels are "<class>=<value>"; these classes get their own section, in this order.
_CLASSES = (("fabric", "Best alternative per fabric"), ("deployment", "Best alternative per deployment"))


def best_alternatives(alternatives: tuple[Alternative, ...]) -> dict[str, Alternative]:
    """The best alternative per label (``fabric=roce``): feasible before infeasible, then cheapest.

    Ties keep the design's order. Labels keep the order of their first appearance.
    """
    best: dict[str, Alternative] = {}
    for alt in alternatives:
        cur = best.get(alt.label)
        if cur is None or _rank(alt) < _rank(cur):
            best[alt.label] = alt
    return best


def _rank(a: Alternative) -> tuple[bool, float]:
    return (not a.feasible, float("inf") if a.total_usd is None else a.total_usd)


def _constraint(c: ConstraintStatus) -> str:
    return (f"{c.name}: {quantity_text(c.value, c.unit)} against a limit of {quantity_text(c.limit, c.unit)} "
            f"(slack {quantity_text(c.slack, c.unit)})")


def _alternative(a: Alternative) -> str:
    system = system_line(a.deployment, a.nodes, a.server, a.fabric, a.topology)
    if a.total_usd is None:
        return f"{a.label}: no design ({a.reason})"
    cost = f.usd(a.total_usd) + ("" if a.delta_usd is None else f", {f.usd_delta(a.delta_usd)} vs chosen")
    verdict = a.reason if a.feasible else f"infeasible: {a.reason}"
    return f"{a.label}: {system}; {cost}; {verdict}"


# The preference keys an alternative records (its GPU, switch and vendor are not in the design file).
_RECORDED = ("fabric", "topology", "deployment", "server")


def _has(a: Alternative, p: PreferenceCredit) -> bool | None:
    """Whether alternative ``a`` has the preferred property; None when the design file cannot tell."""
    return getattr(a, p.key) == p.value if p.key in _RECORDED else None


def _preference_effect(design: Design) -> str:
    """One sentence on whether the soft preferences changed the choice, which did, and at what cost.

    Model: the objective is cost - credit (:mod:`designer.optimize.preferences`), so a design dearer
    than a feasible alternative was chosen for its credit: the preferences it earns and that
    alternative lacks moved the choice, and the price paid for them is the cost difference.
    """
    cheaper = [a for a in design.alternatives if a.feasible and a.delta_usd is not None and a.delta_usd < -0.005]
    earned = [p for p in design.preferences if p.credit_usd > 0]
    if not earned:
        return "The preferences did not change the choice: the design earns no credit from them."
    if not cheaper:
        return "The preferences did not change the choice: no feasible alternative costs less than the chosen design."
    alt = min(cheaper, key=lambda a: (a.delta_usd, a.label))
    movers = [p for p in earned if _has(alt, p) is not True] or earned
    credit = sum(p.credit_usd for p in movers)
    named = ", ".join(f"{p.key} {p.value} (weight {p.weight}, credit {f.usd(p.credit_usd)})" for p in movers)
    system = system_line(alt.deployment, alt.nodes, alt.server, alt.fabric, alt.topology)
    return (f"The preferences changed the choice: without them the cheapest design is {alt.label} ({system}, "
            f"{f.usd(alt.total_usd)}). The chosen design costs {f.usd(-alt.delta_usd)} more for "
            f"{'the preference' if len(movers) == 1 else 'the preferences'} {named}: a credit of "
            f"{f.usd(credit)} in the choice against {f.usd(-alt.delta_usd)} more cost.")


def _section(title: str, items: list[str], fmt: str, empty: str) -> str:
    head = f"### {title}\n\n" if fmt == "markdown" else f"{title}\n"
    bullet = "- " if fmt == "markdown" else "  - "
    return head + ("\n".join(bullet + i for i in items) if items else (bullet + empty))


def render_explain(design: Design, fmt: str = "text") -> str:
    """Why ``design`` was chosen.

    Sections: the chosen system and its total; the binding constraints (``design.constraints`` with
    ``binding``), which are what keeps a cheaper design out; the slack on every other constraint;
    the best alternative per fabric and per deployment (from ``design.alternatives``, labelled
    ``fabric=...`` / ``deployment=...``) with its cost difference and the reason it lost; then any
    other alternatives. With soft preferences, whether they changed the choice: which preference
    and weight moved it off the cheapest feasible alternative, and what that costs.

    Args:
        design: the design.
        fmt: ``text`` for a terminal or ``markdown``.

    Raises:
        InputError: an unknown format.
    """
    f.check_format(fmt, EXPLAIN_FORMATS, "explain")
    s = design.system
    chosen = (f"{system_line(s.deployment, s.nodes, s.server, s.fabric, s.topology)}; total "
              f"{f.usd(design.cost.total_usd)} over {f.num(design.horizon_days)} days ({design.objective})")
    title = f"Why this design: {f.text(design.spec_name, fmt)}"
    parts = [f"## {title}\n\nChosen: {chosen}." if fmt == "markdown" else f"{title}\n\nChosen: {chosen}."]
    if design.preferences:
        total = sum(p.credit_usd for p in design.preferences)
        items = [f"{p.key} {p.value} ({p.weight}): {p.workloads} of {len(design.workloads)} workloads on it, "
                 f"credit {f.usd(p.credit_usd)}" for p in design.preferences]
        parts.append(_section(f"Soft preferences (a credit of {f.usd(total)} in the choice, not in the cost)",
                              items, fmt, "none") + ("\n\n" if fmt == "markdown" else "\n") + _preference_effect(design))
    binding = [_constraint(c) for c in design.constraints if c.binding]
    slack = [_constraint(c) for c in design.constraints if not c.binding]
    parts.append(_section("Binding constraints (what rules out a cheaper design)", binding, fmt,
                          "none: no constraint is binding; the design is the cheapest candidate outright"))
    parts.append(_section("Slack on the other constraints", slack, fmt, "none"))
    best = best_alternatives(design.alternatives)
    shown: set[str] = set()
    for cls, heading in _CLASSES:
        labels = [label for label in best if label.split("=", 1)[0] == cls]
        shown.update(labels)
        parts.append(_section(heading, [_alternative(best[label]) for label in labels], fmt, "none recorded"))
    others = [_alternative(best[label]) for label in best if label not in shown]
    if others:
        parts.append(_section("Other alternatives", others, fmt, "none"))
    return "\n\n".join(parts) + "\n"
