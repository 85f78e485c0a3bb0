"""The N best distinct designs (``solve --top N``): the chosen one, then the best that builds another system.

Two designs are distinct when their on-prem systems differ in server, fabric or topology (the
best switch and ratio of each such kind is ranked), or when one builds none (the cloud alone). The k-th design is
the optimum of the same search as the chosen one (:func:`designer.optimize.batches.solve`, so
it is proven the best of what is left, or reported with its gap) over the candidates not built by
the k - 1 before it; once the cloud alone has been ranked, the next must build an on-prem system.
The list is in order of the objective, so each design's delta to the chosen one is >= 0 as the
program counts it (SkyPilot's "considered resources" table, ranked by cost).
"""

from __future__ import annotations

__all__ = ["ranked"]

from typing import Callable

from designer.design.model import Alternative
from designer.errors import InfeasibleError, SolverTimeoutError
from designer.optimize import batches
from designer.optimize.clock import OutOfTime
from designer.optimize.explain import Measures, program_measures
from designer.optimize.milp import Solution
from designer.optimize.task import Thresholds
from designer.optimize.workspace import Workspace
from designer.spec.choices import Deployment
from designer.spec.units import format_money

RANK = "rank="  # the label of a ranked design: "rank=2"


def _summary(ws: Workspace, sol: Solution) -> tuple[str, str, str, str, int]:
    """(deployment, fabric, topology, server, nodes) of a design: its on-prem system, or its
    largest cloud reservation."""
    if sol.onprem_key is not None:
        c = ws.by_key[sol.onprem_key]
        return c.deployment.value, c.fabric, c.topology, c.server, sol.nodes
    w, (key, o) = max(sol.assignment.items(), key=lambda kv: (kv[1][1].gpus, kv[0]))
    c = ws.by_key[key]
    return c.deployment.value, c.fabric, c.topology, c.server, -(-o.gpus // c.gpus_per_node)


def _kind(ws: Workspace, key: str | None) -> tuple[str, str, str] | None:
    """What makes designs distinct: the on-prem system's server, fabric and topology (None: the
    cloud alone). Switch models and ratios of one kind rank as one: the best of them."""
    if key is None:
        return None
    c = ws.by_key[key]
    return c.server, c.fabric, c.topology


def ranked(ws: Workspace, th: Thresholds, sol: Solution, n: int, *, solver: str, time_limit_s: float | None,
           measure: Callable[[Solution], Measures] = program_measures) -> list[Alternative]:
    """The ``n`` best distinct designs (module docstring), ``sol`` first, each labelled
    ``rank=k`` with its total as ``measure`` counts it (the design's bill of materials when the
    planner passes it) and its delta to ``sol``'s. Fewer when fewer exist.

    Raises:
        OutOfTime: the command's deadline passed before the ranking was complete.
    """
    chosen = measure(sol)
    found = [sol]
    built = {_kind(ws, sol.onprem_key)}
    while len(found) < n:
        if ws.deadline.expired():
            raise OutOfTime
        left = {k for k in ws.by_key if ws.by_key[k].deployment is Deployment.CLOUD or _kind(ws, k) not in built}
        if not any(ws.by_key[k].deployment is Deployment.ON_PREM for k in left):
            break
        try:
            nxt = batches.solve(ws, th, keys=left, solver=solver, time_limit_s=time_limit_s,
                                require_onprem=None in built)
        except (InfeasibleError, SolverTimeoutError):
            break
        if ws.deadline.expired():
            raise OutOfTime
        if _kind(ws, nxt.onprem_key) in built:
            break  # the search can only repeat a kind of design already ranked
        found.append(nxt)
        built.add(_kind(ws, nxt.onprem_key))
    out = []
    for rank, s in enumerate(found, start=1):
        deployment, fabric, topology, server, nodes = _summary(ws, s)
        total = chosen.total_usd if s is sol else measure(s).total_usd
        delta = total - chosen.total_usd
        if s is sol:
            reason = "chosen"
        else:
            if delta >= 0:
                reason = f"costs {format_money(delta)} more"
            elif ws.task.objective == "min_total_cost":
                # Ranked by the program's count of racks and links, which its bill of materials refines.
                reason = (f"costs {format_money(-delta)} less in its bill of materials, more as the program "
                          "counts racks and links")
            else:
                reason = f"costs {format_money(-delta)} less but loses on {ws.task.objective}"
            if s.status != "optimal":
                reason += f"; best found, within {s.gap:.1%} of its bound"
        budget = ws.limits().total_usd
        fits = budget is None or total <= budget
        if not fits:  # within the budget as the program counts racks, not once laid out by row
            reason = f"over budget once laid out: {format_money(total)} > {format_money(budget)}"
        out.append(Alternative(f"{RANK}{rank}", deployment, fabric, topology, server, nodes, total, delta, fits,
                               reason))
    return out
