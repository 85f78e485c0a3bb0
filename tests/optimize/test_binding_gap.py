"""A design reported within a gap of the optimum: a constraint binds only when its relaxation beats that bound."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from designer.optimize import batches, explain
from designer.optimize.workspace import Workspace
from designer.planner.compile import compile_task
from designer.planner.inputs import load_inputs
from tiny_spec import TWO_WORKLOADS


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    path = Path(tmp_path_factory.mktemp("spec")) / "spec.yaml"
    path.write_text(TWO_WORKLOADS)
    spec, catalog = load_inputs(path)
    ws = Workspace(compile_task(spec, catalog))
    return ws, batches.solve(ws, ws.task.thresholds)


def _deadlines_bind(monkeypatch, ws, sol, relaxed_share: float) -> list[bool]:
    """Which deadlines bind when every relaxation finds a design at ``relaxed_share`` of ``sol``'s objective."""
    def found(*_, **__):
        return replace(sol, objective=sol.objective * relaxed_share)

    monkeypatch.setattr(explain, "_try", found)
    rows = explain.constraint_status(ws, ws.task.thresholds, sol, solver="highs", time_limit_s=None)
    return [c.binding for c in rows if c.name.startswith("deadline[")]


def test_a_cheaper_design_binds_against_an_optimal_one(monkeypatch, solved):
    ws, sol = solved
    assert sol.status == "optimal"
    binding = _deadlines_bind(monkeypatch, ws, sol, 0.95)
    assert binding and all(binding)


def test_a_design_within_the_gap_of_a_feasible_one_does_not_bind(monkeypatch, solved):
    ws, sol = solved
    within = replace(sol, status="feasible", gap=0.10)
    binding = _deadlines_bind(monkeypatch, ws, within, 0.95)  # above the bound, 90% of the objective
    assert binding and not any(binding)


def test_a_design_below_the_bound_of_a_feasible_one_binds(monkeypatch, solved):
    ws, sol = solved
    within = replace(sol, status="feasible", gap=0.10)
    binding = _deadlines_bind(monkeypatch, ws, within, 0.85)
    assert binding and all(binding)
