"""The explanations share a budget of work of their own inside the command's limit, and one cut
short is listed as not explored, never with a design its search did not finish."""

from __future__ import annotations

from pathlib import Path

from designer.optimize import alternatives, batches
from designer.optimize.clock import Deadline, WorkBudget
from designer.optimize.workspace import Workspace
from designer.planner.compile import compile_task
from designer.planner.inputs import load_inputs
from test_deadline import HYBRID, _Clock


def test_a_budget_of_work_ends_at_the_sooner_of_its_own_end_and_the_limit():
    clock, work = _Clock(), [100]
    unlimited = WorkBudget(Deadline(None, clock), 2_000, lambda: work[0], "explanation budget")
    assert unlimited.limit_s is None and unlimited.solver_limit() is None  # searches run as without a limit
    work[0] = 2_099
    assert not unlimited.expired()
    work[0] = 2_100  # 2,000 more than when it began
    assert unlimited.expired() and unlimited.budget_spent()
    assert unlimited.reason() == "explanation budget of 2,000 plan searches spent"
    work[0] = 0
    limited = WorkBudget(Deadline(4.0, clock), 2_000, lambda: work[0], "explanation budget")
    assert limited.limit_s == 4.0 and limited.remaining() == 4.0
    clock.now = 5.0
    assert limited.expired() and not limited.budget_spent()
    assert limited.reason() == "time limit reached"


def test_a_budget_reads_its_parents_clock_through_the_public_property():
    clock = _Clock()
    parent = Deadline(4.0, clock)
    assert parent.clock is clock
    budget = WorkBudget(parent, 10, lambda: 0.0)
    assert budget.clock is clock  # one time source for the command and its phases
    clock.now = 3.0
    assert budget.remaining() == parent.remaining() == 1.0


def test_classes_the_budget_does_not_reach_are_listed_as_not_explored(tmp_path):
    path = Path(tmp_path) / "spec.yaml"
    path.write_text(HYBRID)
    spec, catalog = load_inputs(path)
    full = Workspace(compile_task(spec, catalog))
    th = full.task.thresholds
    sol = batches.solve(full, th)
    every = alternatives.alternatives(full, th, sol, solver="highs", time_limit_s=None)
    assert not [a for a in every if a.reason.startswith(alternatives.NOT_EXPLORED)]

    ws = Workspace(compile_task(spec, catalog))
    chosen = batches.solve(ws, th)
    spent = [0]
    ws.deadline = WorkBudget(Deadline(None), 10, lambda: spent[0], "explanation budget")
    solves = []

    def spend(evaluated: int, programs: int, best) -> None:
        solves.append(programs)
        if len(solves) == 2:
            spent[0] = 10  # the budget runs out in the second class's search

    ws.progress = spend
    cut = alternatives.alternatives(ws, th, chosen, solver="highs", time_limit_s=None)
    assert [a.label for a in cut] == [a.label for a in every]
    done = [a for a in cut if not a.reason.startswith(alternatives.NOT_EXPLORED)]
    left = [a for a in cut if a.reason.startswith(alternatives.NOT_EXPLORED)]
    assert done and left
    # What was explored is what the whole search finds; the rest say why they are not.
    assert done == every[:len(done)]
    assert all(a.reason == "not explored: explanation budget of 10 plan searches spent" and a.total_usd is None
               and not a.feasible for a in left)


def test_only_portfolios_past_the_exact_search_have_an_explanation_budget():
    from designer.optimize import explain

    assert explain.budget(batches.EXACT_UP_TO) is None  # complete, as the search is
    assert explain.budget(batches.EXACT_UP_TO + 1) == explain.BUDGET == 2_000
    assert batches.search_budget(batches.EXACT_UP_TO) is None
    assert [batches.search_budget(w) for w in (11, 20, 50, 100)] == [9, 5, 2, 2]


def test_the_designs_own_search_spends_its_budget_only_once_it_holds_a_design(tmp_path):
    # On-prem only, so no design is in hand before an on-prem candidate is searched: a budget of
    # none finds nothing for an explanation, but the design's own search goes on until it has one.
    import pytest

    from designer.errors import SolverTimeoutError

    path = Path(tmp_path) / "spec.yaml"
    path.write_text(HYBRID.replace("deployments: [on_prem, cloud]", "deployments: [on_prem]")
                    .replace("fabrics: [infiniband, efa]", "fabrics: [infiniband]"))
    spec, catalog = load_inputs(path)
    ws = Workspace(compile_task(spec, catalog))
    th = ws.task.thresholds
    with pytest.raises(SolverTimeoutError, match=batches.NONE_IN_BUDGET):
        batches.solve(ws, th, evaluations=0)
    full = batches.solve(Workspace(compile_task(spec, catalog)), th)
    found = batches.solve(Workspace(compile_task(spec, catalog)), th, evaluations=0, until_found=True)
    assert found.onprem_key is not None and found.objective >= full.objective * (1 - 1e-9)
    assert found.status == "optimal" or (found.status == "feasible" and found.gap > 0)
