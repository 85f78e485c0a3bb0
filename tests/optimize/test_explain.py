"""Explanations priced as the design is: an alternative that the program fits under the budget
but whose bill of materials does not is reported as over budget, not as a cheaper option."""

from __future__ import annotations

import textwrap
from dataclasses import replace
from pathlib import Path

from designer.optimize import alternatives, batches, explain
from designer.optimize.workspace import Workspace
from designer.planner.compile import compile_task
from designer.planner.inputs import load_inputs

SPEC = """
    version: 1
    name: alts
    horizon: 2 years
    budget: {total: $50M}
    workloads:
      - {name: w, model: {preset: llama3-8b}, tokens: 300B, global_batch: 512, deadline: 30 days}
    constraints:
      min_utilization: 0.6
      deployments: [on_prem, cloud]
      gpus: [h100-sxm]
    """


def _workspace(tmp_path: Path) -> Workspace:
    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent(SPEC))
    spec, catalog = load_inputs(path)
    return Workspace(compile_task(spec, catalog))


def test_an_alternative_over_budget_once_priced_exactly_is_not_offered(tmp_path):
    ws = _workspace(tmp_path)
    th = ws.task.thresholds
    sol = batches.solve(ws, th)
    chosen = explain._total(sol)

    def inflated(x):  # every other design lays out $60M dearer than the program counts it
        m = explain.program_measures(x)
        same = x.onprem_key == sol.onprem_key and x.assignment == sol.assignment
        return m if same else replace(m, total_usd=m.total_usd + 60e6)

    alts = alternatives.alternatives(ws, th, sol, solver="highs", time_limit_s=None, measure=inflated)
    others = [a for a in alts if a.reason != "chosen" and a.total_usd is not None]
    assert others, "the spec should offer alternatives in other classes"
    for a in others:
        assert not a.feasible and a.reason.startswith("over budget once laid out: $"), a
    honest = alternatives.alternatives(ws, th, sol, solver="highs", time_limit_s=None)
    assert any(a.feasible and a.reason.startswith("costs") for a in honest if a.reason != "chosen")
    assert chosen <= 50e6
